"""One question, asked the way a class of real programs asks it: the behaviour matrix's program generator.

    python asker.py READER WAIT SCREEN ECHO OUT

READER  stdin   reads the answer from its stdin (input(), read -p)
        devtty  opens /dev/tty and reads there (getpass, ssh, sudo, gpg, fuzzy finders)
        thread  a worker thread reads stdin; the main thread only joins it
WAIT    read    a blocking read (line mode)
        select  select() with a timeout, in a loop (readline, sqlite3, the Python REPL)
        poll    poll() with a timeout, in a loop
        epoll   epoll_wait() with a timeout, in a loop (Node, libuv, asyncio)
        sleep   a non-blocking read, then a sleep, in a loop (no syscall tells it waits)
SCREEN  line    the question ends the cursor's line: "Enter the code word: "
        alt     the alternate screen: a framed question mid-screen, the cursor in a field under it
        blank   nothing at all on screen (bc -q, a REPL without a prompt)
        empty   the question on a line of its own, the cursor on the empty row under it
ECHO    on|off  the terminal's echo while the answer is read (off: a password)

The line read is written to OUT (the answer as received: the test checks it byte for byte).
"""

from __future__ import annotations

import os
import select
import sys
import termios
import threading
import time

QUESTION = "Enter the code word:"


def draw(screen: str, out) -> None:
    if screen == "line":
        out.write(f"Setting things up.\r\n{QUESTION} ")
    elif screen == "alt":
        out.write("\x1b[?1049h\x1b[2J\x1b[H")
        out.write("\x1b[4;10H+------------------------------+")
        out.write(f"\x1b[5;10H| {QUESTION:<28} |")
        out.write("\x1b[6;10H|                              |")
        out.write("\x1b[7;10H+------------------------------+")
        out.write("\x1b[6;12H")
    elif screen == "blank":
        out.write("\x1b[2J\x1b[H")
    elif screen == "empty":
        out.write(f"Setting things up.\r\n{QUESTION}\r\n")
    out.flush()


def read_line(fd: int, wait: str) -> bytes:
    """A line from fd in canonical mode, waiting the way WAIT says."""
    if wait == "read":
        return os.read(fd, 4096)
    if wait == "sleep":
        os.set_blocking(fd, False)
        while True:
            try:
                data = os.read(fd, 4096)
            except BlockingIOError:
                time.sleep(0.1)
                continue
            os.set_blocking(fd, True)
            return data
    if wait == "select":
        while not select.select([fd], [], [], 0.5)[0]:
            pass
    elif wait == "poll":
        p = select.poll()
        p.register(fd, select.POLLIN)
        while not p.poll(500):
            pass
    elif wait == "epoll":
        e = select.epoll()
        e.register(fd, select.EPOLLIN)
        while not e.poll(0.5):
            pass
    return os.read(fd, 4096)


def main(reader: str, wait: str, screen: str, echo: str, out_path: str) -> None:
    tty_out = open("/dev/tty", "w") if reader == "devtty" else sys.stdout
    fd = os.open("/dev/tty", os.O_RDWR) if reader == "devtty" else sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    if echo == "off":
        attrs = termios.tcgetattr(fd)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSADRAIN, attrs)
    draw(screen, tty_out)
    got: list[bytes] = []

    def work() -> None:
        got.append(read_line(fd, wait))

    if reader == "thread":
        t = threading.Thread(target=work)
        t.start()
        t.join()
    else:
        work()
    termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    if screen == "alt":
        tty_out.write("\x1b[?1049l")
    tty_out.write("\r\nthanks\r\n")
    tty_out.flush()
    with open(out_path, "wb") as fh:
        fh.write(got[0].rstrip(b"\r\n"))


if __name__ == "__main__":
    main(*sys.argv[1:6])
