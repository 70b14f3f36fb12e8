"""What the program has not read yet of what was typed to it: its terminal's input queue (Linux, any POSIX with FIONREAD
on a terminal).

The fact that tells "not taken" from "not read yet" (pty/answering.py): keys still waiting in the queue have not
reached the program, so whatever it shows meanwhile (a clock beside its prompt repainted every 0.6 s) is no answer to
them, and the question it still shows is the same question, not a new one to answer again. Asked of the slave, opened
for the moment of one ioctl (never kept: a slave held open would keep the master from seeing the program's end).
In canonical mode the kernel counts only complete lines: a line being typed is not yet readable.
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios


def unread(slave: str | None) -> int | None:
    """Bytes in the terminal's input queue that no read() has taken yet; None where it can't be asked."""
    if slave is None:
        return None
    try:
        fd = os.open(slave, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return None
    finally:
        os.close(fd)
