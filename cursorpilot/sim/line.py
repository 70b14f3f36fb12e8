"""A line-mode simulator: [y/n] confirms, numbered menus, free text, in cooked mode."""

from __future__ import annotations

import os
import select
import sys
import time
from typing import Any

from cursorpilot.sim.common import Recorder, restore, set_raw


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _read_line() -> str | None:
    line = sys.stdin.readline()
    return None if line == "" else line.rstrip("\r\n")


def _cpr(record: Recorder) -> None:
    """Ask the terminal where the cursor is and wait for the answer, like some TUIs do at start."""
    old = set_raw(0)
    try:
        _out("\x1b[6n")
        buf = b""
        deadline = time.monotonic() + 5
        while not buf.endswith(b"R") and time.monotonic() < deadline:
            ready, _, _ = select.select([0], [], [], deadline - time.monotonic())
            if ready:
                buf += os.read(0, 32)
        record("cpr", reply=buf.decode("ascii", "replace"))
        if not buf.endswith(b"R"):
            _out("no cursor position report\n")
            raise SystemExit(5)
    finally:
        restore(0, old)


def _split(step: object) -> tuple[str, Any]:
    """A step is a bare name (`- cpr`) or a one-key mapping (`- confirm: "Proceed? [y/n] "`); its argument is whatever the
    scenario's YAML holds there, a string, a list or a mapping, as each step reads it."""
    if isinstance(step, dict):
        name, arg = next(iter(step.items()))
        return str(name), arg
    return str(step), None


def main(scenario: dict, record: Recorder) -> int:
    for step in scenario.get("steps", []):
        name, arg = _split(step)
        if name == "print":
            for line in [arg] if isinstance(arg, str) else arg:
                _out(line + "\n")
        elif name == "write":
            _out(arg)
        elif name == "sleep":
            time.sleep(float(arg))
        elif name == "cpr":
            _cpr(record)
        elif name == "exit":
            record("exit", code=int(arg))
            return int(arg)
        elif name in ("confirm", "text"):
            prompt = arg if isinstance(arg, str) else arg["prompt"]
            for _ in range(int(arg.get("repaint", 0)) if isinstance(arg, dict) else 0):
                _out("\r\x1b[2K" + prompt)
                time.sleep(0.1)
            _out("\r\x1b[2K" + prompt)
            answer = _read_line()
            if answer is None:
                return 4
            record(name, prompt=prompt.strip(), text=answer)
            if isinstance(arg, dict) and "expect" in arg and answer.strip().lower() != str(arg["expect"]).lower():
                _out(f"unexpected answer: {answer!r}\n")
                return 1
            _out(f"got:{answer}\n")
        elif name == "menu":
            options = arg["options"]
            rows = [f"{i}) {opt}" for i, opt in enumerate(options, 1)]
            half = len(rows) // 2 if arg.get("split_ms") else len(rows)
            _out(arg.get("title", "Options:") + "\n" + "".join(r + "\n" for r in rows[:half]))
            if arg.get("split_ms"):
                time.sleep(arg["split_ms"] / 1000)
            _out("".join(r + "\n" for r in rows[half:]) + arg.get("prompt", f"Choose an option (1-{len(options)}): "))
            answer = _read_line()
            if answer is None:
                return 4
            record("menu", text=answer)
            _out(f"picked:{answer}\n")
    return 0
