"""The programs the benchmarks drive. Real processes: run as ``python bench/children.py KIND ...``.

flood MB [LINE_LEN]      write MB megabytes of numbered lines, then ask one y/N question.
lines N OUT [READER]     ask N line-mode prompts no rule knows, each followed by a busy partial line (a trap);
                         READER: stdin (default), devtty (read from /dev/tty) or thread (a worker thread reads).
menus N OUT              N full-screen menus read by a poll() loop in raw mode, the choice in reverse video (newt).
prompts N OUT            ask N numbered y/N questions; for each, record in OUT (JSON lines) the
                         monotonic time the prompt's last byte was written and the time the
                         reply's first byte arrived (stdin in cbreak mode, so no line buffering).
tui SECONDS RATE OUT     redraw an Ink-style bottom block (erase-line + cursor-up) with a spinner
                         at about RATE bytes/s for SECONDS, then ask; write own CPU time to OUT.
"""

from __future__ import annotations

import json
import os
import resource
import select
import sys
import termios
import threading
import time
import tty

QUESTION = "Continue? [y/N] "


def _write(data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def _ask(question: str = QUESTION) -> str:
    _write(question.encode())
    answer = sys.stdin.readline().strip()
    _write(f"got:{answer}\n".encode())
    return answer


def flood(mb: float, line_len: int = 100) -> None:
    n = int(mb * 1024 * 1024) // line_len
    pad = b"x" * (line_len - 12)
    batch = 2000
    for start in range(0, n, batch):
        _write(b"".join(b"L%09d %s\n" % (i, pad) for i in range(start, min(n, start + batch))))
    _ask()


def _timed_prompts(n: int, out: str, prompt, after=None, reader: str = "stdin") -> None:
    """Ask n prompts in cbreak mode (the reply's first byte is readable as soon as it is typed); for each, write to OUT
    the time the prompt's last byte was written and the time the reply's first byte arrived.

    reader: stdin, devtty (the prompt written to and the reply read from /dev/tty, as getpass and ssh do) or thread
    (a worker thread reads while the main thread only waits for it)."""
    fd = os.open("/dev/tty", os.O_RDWR) if reader == "devtty" else sys.stdin.fileno()
    write = (lambda data: os.write(fd, data)) if reader == "devtty" else _write
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)

    def read_reply() -> tuple[float, bytes]:
        rest = os.read(fd, 1)
        answered = time.monotonic()
        while not rest.endswith((b"\r", b"\n")):
            rest += os.read(fd, 1)
        return answered, rest

    try:
        with open(out, "w") as log:
            for i in range(n):
                write(prompt(i).encode())
                asked = time.monotonic()
                if reader == "thread":
                    got: list = []
                    worker = threading.Thread(target=lambda: got.append(read_reply()))
                    worker.start()
                    worker.join()
                    answered, rest = got[0]
                else:
                    answered, rest = read_reply()
                if after is not None:
                    after(i)
                log.write(json.dumps({"i": i, "asked": asked, "first_byte": answered, "reply": rest.decode().strip()}) + "\n")
                log.flush()
                write(b"\r\n")
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def menus(n: int, out: str) -> None:
    """N full-screen menus the way newt and dialog draw them: the alternate screen, the chosen item in reverse video,
    keys read in raw mode by a poll() loop with a timeout (no read() to tell the kernel it waits). For each, OUT gets
    the time the menu's last byte was written and the time the first key arrived."""
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    items = ["alpha", "beta", "gamma"]
    _write(b"\x1b[?1049h\x1b[?1h")
    try:
        with open(out, "w") as log:
            for i in range(n):
                at = 0
                asked = answered = None
                while True:
                    rows = [f"\x1b[2J\x1b[3;5HMenu {i}: choose an item:\x1b[4;5H"]
                    for k, item in enumerate(items):
                        rows.append(f"\x1b[{5 + k};7H" + (f"\x1b[7m {item} \x1b[0m" if k == at else f" {item} "))
                    rows.append(f"\x1b[9;5H<Ok>   <Cancel>\x1b[{5 + at};8H")
                    _write("".join(rows).encode())
                    asked = asked or time.monotonic()
                    p = select.poll()
                    p.register(fd, select.POLLIN)
                    while not p.poll(100):
                        pass
                    key = os.read(fd, 16)
                    answered = answered or time.monotonic()
                    if key in (b"\x1bOB", b"\x1b[B"):
                        at = min(at + 1, len(items) - 1)
                    elif key in (b"\x1bOA", b"\x1b[A"):
                        at = max(at - 1, 0)
                    elif key in (b"\r", b"\n"):
                        break
                log.write(json.dumps({"i": i, "asked": asked, "first_byte": answered, "reply": items[at]}) + "\n")
                log.flush()
    finally:
        _write(b"\x1b[?1l\x1b[?1049l")
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def lines(n: int, out: str, reader: str = "stdin") -> None:
    """N line-mode prompts no specific rule knows ("Item 3 name> "), each followed by a trap: a partial line while
    the program is busy (sleeping, not reading), which must get no keystroke."""
    def busy(i: int) -> None:
        _write(f"\r\nWaiting for the server to accept item {i}? ".encode())
        time.sleep(2.0 if i % 10 == 0 else 0.2)

    _timed_prompts(n, out, lambda i: f"Item {i} name> ", busy, reader)


def prompts(n: int, out: str) -> None:
    _timed_prompts(n, out, lambda i: f"step {i} done\nQuestion {i}: {QUESTION}")


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def tui(seconds: float, rate: float, out: str) -> None:
    """An Ink log-update loop: each frame erases the previous block line by line, then draws the new one."""
    block, frame_s = 10, 0.05
    width = min(100, max(10, int(rate * frame_s / block) - 24))  # about rate bytes/s, each line inside 120 columns
    end = time.monotonic() + seconds
    i = prev = 0
    _write(b"\x1b[?25l")
    while time.monotonic() < end:
        erase = "\x1b[2K\x1b[1A" * prev + "\x1b[2K\x1b[G" if prev else ""
        logs = [f"  \x1b[2mlog {i:06d}.{k} {'-' * width}\x1b[22m" for k in range(block - 1)]
        status = f"\x1b[36m{SPINNER[i % len(SPINNER)]}\x1b[39m Generating… ({i * frame_s:.1f}s · esc to interrupt)"
        _write((erase + "\n".join([*logs, status])).encode())
        prev = block - 1
        i += 1
        time.sleep(frame_s)
    _write(("\x1b[2K\x1b[1A" * prev + "\x1b[2K\x1b[G\x1b[?25h").encode() + b"Done generating.\n")
    _ask()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(out, "w") as fh:
        json.dump({"cpu_s": usage.ru_utime + usage.ru_stime, "frames": i, **pilot_seen()}, fh)


def pilot_seen() -> dict:
    """The process that drives this program (its parent: the pilot, wherever it runs) and its CPU time so far, read
    from /proc here: a reading of the pilot's process independent of the bench's own measure."""
    pid = os.getppid()
    try:
        data = open(f"/proc/{pid}/stat", "rb").read()
    except OSError:
        return {"pilot_pid": pid}
    fields = data[data.rindex(b")") + 2 :].split()
    return {"pilot_pid": pid, "pilot_cpu_at_end_s": (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")}


def main(argv: list[str]) -> None:
    kind, args = argv[0], argv[1:]
    if kind == "flood":
        flood(float(args[0]), int(args[1]) if len(args) > 1 else 100)
    elif kind == "prompts":
        prompts(int(args[0]), args[1])
    elif kind == "lines":
        lines(int(args[0]), args[1], *args[2:3])
    elif kind == "menus":
        menus(int(args[0]), args[1])
    elif kind == "tui":
        tui(float(args[0]), float(args[1]), args[2])
    else:
        raise SystemExit(f"unknown child kind {kind!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
