"""An Ink-style selection prompt: redrawn in place (erase-line + cursor-up), raw-mode keys.

Scenario steps, each ``select: {...}``:
  question: text                 the line above the options
  options: [labels]              a label may hold "\\n" for an option drawn on two lines
  highlight: 0                   the option highlighted at first (e.g. the "No")
  multi: false                   checkboxes; Space toggles, Enter confirms
  numbered: false                draw "1. " before each label
  digits: false                  digits jump to an option (Ink's select ignores them: false)
  pointer: "❯"                   the highlight marker ("" for none)
  reverse: false                 draw the highlighted row in reverse video
  border: false                  draw the dialog inside a rounded box (Gemini CLI)
  expect: label                  the choice the test wants; another one exits 1
  frozen: false                  arrows are read but the highlight never moves (a hung or mis-keyed TUI)
  header: [lines]                drawn above the question (a tool call being approved)
  plain: false                   the question without the "? " prefix (Claude Code, Codex, Gemini dialogs)
  hint: text                     the line under the options

Arrows and j/k move, Space toggles, Enter submits, Ctrl-C exits 130. Every key and the
final choice are recorded.

A ``compose: {...}`` step is an agent's input box that takes fast input for a paste (Codex):
  prompt: "› "                   the input line
  paste_ms: 120                  an Enter this soon after other input is a newline in the paste, not a submit
  bracketed: false               enable bracketed paste (CSI ? 2004 h); a bracketed paste is taken whole
  expect: text                   the text the test wants submitted; another one exits 1
"""

from __future__ import annotations

import sys
import time

from cursorpilot.sim.common import KeyReader, Recorder, restore, set_raw


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _frame(step: dict, at: int, checked: set[int]) -> list[str]:
    pointer = step.get("pointer", "❯")
    rows = [*step.get("header", []), step["question"] if step.get("plain") else f"? {step['question']}"]
    for i, label in enumerate(step["options"]):
        first, *rest = str(label).split("\n")
        mark = (pointer if i == at else " ") if pointer else ""
        box = ("◉ " if i in checked else "◯ ") if step.get("multi") else ""
        num = f"{i + 1}. " if step.get("numbered") else ""
        indent = " " * int(step.get("indent", 0))
        text = f"{box}{num}{first}"
        if step.get("reverse") and i == at:
            text = f"\x1b[7m{text}\x1b[27m"
        rows.append(f"{indent}{mark} {text}" if pointer else f"{indent}  {text}")
        rows += [indent + " " * (2 + len(box) + len(num)) + more for more in rest]
    rows.append(step.get("hint") or "(Use arrow keys" + (", space to select" if step.get("multi") else "") + ", enter to confirm)")
    if step.get("border"):
        width = 70
        rows = ["╭" + "─" * width + "╮", *(f"│ {r:<{width - 1}}│" for r in rows), "╰" + "─" * width + "╯"]
    return rows


def select(step: dict, keys: KeyReader, record: Recorder) -> int:
    options = [str(o).replace("\n", " ") for o in step["options"]]
    at = int(step.get("highlight", 0))
    checked: set[int] = set(step.get("checked", []))
    drawn = 0
    while True:
        rows = _frame(step, at, checked)
        erase = "\x1b[2K\x1b[1A" * drawn + "\x1b[2K\x1b[G" if drawn else ""
        _out(erase + "\n".join(rows))
        drawn = len(rows) - 1
        key = keys.next(None)
        if key is None:
            return 4
        record("key", key=key)
        if key in ("down", "up", "char:j", "char:k") and step.get("frozen"):
            continue
        if key in ("down", "char:j"):
            at = min(at + 1, len(options) - 1)
        elif key in ("up", "char:k"):
            at = max(at - 1, 0)
        elif key == "char: " and step.get("multi"):
            checked ^= {at}
        elif key.startswith("char:") and key[5:].isdigit() and step.get("digits"):
            at = min(max(int(key[5:]) - 1, 0), len(options) - 1)
        elif key == "ctrl-c":
            return 130
        elif key == "enter":
            chosen = [options[i] for i in sorted(checked)] if step.get("multi") else [options[at]]
            record("select", question=step["question"], chosen=chosen)
            _out("\x1b[2K\x1b[1A" * drawn + "\x1b[2K\x1b[G" + f"✔ {step['question']} {', '.join(chosen)}\n")
            expect = step.get("expect")
            if expect is not None and chosen != ([expect] if isinstance(expect, str) else list(expect)):
                _out(f"unexpected choice: {chosen}\n")
                return 1
            return 0


def compose(step: dict, keys: KeyReader, record: Recorder) -> int:
    window = float(step.get("paste_ms", 120)) / 1000
    if step.get("bracketed"):
        _out("\x1b[?2004h")
    _out("Ask anything (Enter to send)\n" + step.get("prompt", "› "))
    text, last = "", 0.0
    while True:
        key = keys.next(None)
        if key is None:
            return 4
        now = time.monotonic()
        record("key", key=key)
        if key == "ctrl-c":
            return 130
        if key == "enter" and now - last < window:
            text += "\n"  # part of what looked like a paste
            record("paste_newline")
            continue
        if key == "enter":
            break
        if key.startswith("paste:"):
            text += key[6:]
        elif key.startswith("char:"):
            text += key[5:]
            _out(key[5:])
        elif key == "backspace":
            text = text[:-1]
        last = now
    if step.get("bracketed"):
        _out("\x1b[?2004l")
    record("compose", text=text)
    _out(f"\nsent: {text!r}\n")
    expect = step.get("expect")
    if expect is not None and text != expect:
        _out(f"unexpected text: {text!r}\n")
        return 1
    return 0


def _untouched(keys: KeyReader, seconds: float) -> str | None:
    """A key within `seconds`, waited for as an agent at work waits: its spinner's timer wakes it every 0.1 s (Ink's
    frame), so the kernel sees a program that may draw before any key comes (polling), as with the real agent. One wait
    of `seconds` would be a program that nothing but a key can wake for seconds: reading (pty/kernel.py)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        key = keys.next(min(0.1, left))
        if key is not None:
            return key
    return None


def main(scenario: dict, record: Recorder) -> int:
    old = set_raw(0)
    _out("\x1b[?25l")
    try:
        keys = KeyReader(0)
        for step in scenario.get("steps", []):
            name, arg = next(iter(step.items()))
            if name in ("select", "compose"):
                code = (select if name == "select" else compose)(arg, keys, record)
                if code:
                    return code
            elif name == "print":
                _out(str(arg) + "\n")
            elif name == "sleep":
                time.sleep(float(arg))
            elif name == "untouched":  # wait this long; any key at all is a failure (an overlay nobody asked to change)
                key = _untouched(keys, float(arg))
                if key is not None:
                    record("unexpected_key", key=key)
                    _out(f"unexpected key: {key}\n")
                    return 1
        return 0
    finally:
        _out("\x1b[?25h")
        restore(0, old)
