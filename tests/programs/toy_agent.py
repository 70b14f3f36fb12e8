"""A toy coding agent drawn like Claude Code: messages scroll up, an idle composer waits at the bottom (❯ between two
rules, '? for shortcuts'), 'esc to interrupt' while it works. Each instruction gets the next of its messages.

    python toy_agent.py [--no-echo] TASK

--no-echo   the agent does not show the instruction it was given above its answer (some do not)

Every instruction received is appended to $TOY_AGENT_LOG when set, one per line.
"""

from __future__ import annotations

import os
import sys
import time

MESSAGES = ["● First message: I read the code.", "● Second message: I added the test.", "● Third message: all tests pass.",
            "● Fourth message: nothing more to do."]


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def work() -> None:
    out("✻ Thinking… (esc to interrupt)\r\n")
    time.sleep(0.6)
    out("\x1b[1A\r\x1b[K")


def composer() -> None:
    out("─" * 60 + "\r\n❯ \r\n" + "─" * 60 + "\r\n  ? for shortcuts\r\n\x1b[3A\x1b[2C")


def main() -> int:
    echo = "--no-echo" not in sys.argv
    out("Toy agent 1.0\r\n\r\n")
    work()
    out(MESSAGES[0] + "\r\n\r\n")
    composer()
    n = 1
    for line in sys.stdin:
        if os.environ.get("TOY_AGENT_LOG"):
            with open(os.environ["TOY_AGENT_LOG"], "a", encoding="utf-8") as log:
                log.write(line.strip() + "\n")
        out("\x1b[2A\r\x1b[J")  # back over the rule above the composer; the box goes
        if echo:
            out(f"> {line.strip()}\r\n")
        work()
        out(MESSAGES[min(n, len(MESSAGES) - 1)] + "\r\n\r\n")
        n += 1
        composer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
