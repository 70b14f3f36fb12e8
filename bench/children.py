"""The programs the benchmarks drive. Real processes: run as ``python bench/children.py KIND ...``.

flood MB [LINE_LEN]      write MB megabytes of numbered lines, then ask one y/N question.
lines N OUT              ask N line-mode prompts no rule knows, each followed by a busy partial line (a trap).
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
import sys
import termios
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


def _timed_prompts(n: int, out: str, prompt, after=None) -> None:
    """Ask n prompts in cbreak mode (the reply's first byte is readable as soon as it is typed); for each, write to OUT
    the time the prompt's last byte was written and the time the reply's first byte arrived."""
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        with open(out, "w") as log:
            for i in range(n):
                _write(prompt(i).encode())
                asked = time.monotonic()
                rest = os.read(fd, 1)
                answered = time.monotonic()
                while not rest.endswith((b"\r", b"\n")):
                    rest += os.read(fd, 1)
                if after is not None:
                    after(i)
                log.write(json.dumps({"i": i, "asked": asked, "first_byte": answered, "reply": rest.decode().strip()}) + "\n")
                log.flush()
                _write(b"\r\n")
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def lines(n: int, out: str) -> None:
    """N line-mode prompts no specific rule knows ("Item 3 name> "), each followed by a trap: a partial line while
    the program is busy (sleeping, not reading), which must get no keystroke."""
    def busy(i: int) -> None:
        _write(f"\r\nWaiting for the server to accept item {i}? ".encode())
        time.sleep(2.0 if i % 10 == 0 else 0.2)

    _timed_prompts(n, out, lambda i: f"Item {i} name> ", busy)


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
        json.dump({"cpu_s": usage.ru_utime + usage.ru_stime, "frames": i}, fh)


def main(argv: list[str]) -> None:
    kind, args = argv[0], argv[1:]
    if kind == "flood":
        flood(float(args[0]), int(args[1]) if len(args) > 1 else 100)
    elif kind == "prompts":
        prompts(int(args[0]), args[1])
    elif kind == "lines":
        lines(int(args[0]), args[1])
    elif kind == "tui":
        tui(float(args[0]), float(args[1]), args[2])
    else:
        raise SystemExit(f"unknown child kind {kind!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
