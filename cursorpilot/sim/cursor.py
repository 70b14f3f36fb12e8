"""A cursor-agent simulator that follows shared/CURSOR_CLI.md.

Rendering is Ink-style and inline: finished output goes to "static" scrollback, and
the live block (spinner, prompt box, footer) is redrawn by erasing its previous lines
with ESC[2K ESC[1A ... ESC[G, never with absolute positioning. The cursor is hidden
and parked below the live block, as Ink does.
"""

from __future__ import annotations

import os
import sys
import time

from cursorpilot.sim.common import KeyReader, Recorder, restore, set_raw

SPIN = ("⬡", "⬢")
COMPOSER_EMPTY = "Plan, search, build anything"
COMPOSER_FOLLOW = "Add a follow-up"
REASON = "Reason for rejection: Enter to submit, Ctrl+C to skip"


class Quit(Exception):
    def __init__(self, code: int):
        self.code = code


class Ink:
    """log-update: erase the previous frame line by line, then write the new one."""

    def __init__(self, out) -> None:
        self.out = out
        self.count = 0  # lines of the previous frame, plus the empty line after it

    def _erase(self) -> str:
        if not self.count:
            return ""
        s = "".join("\x1b[2K" + ("\x1b[1A" if i < self.count - 1 else "") for i in range(self.count))
        return s + "\x1b[G"

    def render(self, lines: list[str]) -> None:
        frame = "\n".join(lines) + "\n"
        self.out.write(self._erase() + frame)
        self.out.flush()
        self.count = len(lines) + 1

    def static(self, lines: list[str], live: list[str]) -> None:
        """Write finished output above the live block (Ink <Static>), then redraw the block."""
        self.out.write(self._erase() + "".join(line + "\n" for line in lines))
        self.count = 0
        self.render(live)


class CursorSim:
    def __init__(self, scenario: dict, task: str, record: Recorder, width: int):
        self.sc = scenario
        self.task = task
        self.record = record
        self.width = min(width, 120)
        self.ink = Ink(sys.stdout)
        self.keys = KeyReader(0)
        self.turns = 0
        self.autorun = False
        self.footer_note = ""

    # -- frames -----------------------------------------------------------------
    def footer(self) -> list[str]:
        model = self.sc.get("model", "Composer 2 Fast")
        lines = [f"  {model} · 3.7%" + (f" · {self.footer_note}" if self.footer_note else "")]
        lines.append(f"  {self.sc.get('cwd_label', '~/proj · main')}")
        return lines

    def composer(self, text: str = "", busy: bool = False, placeholder: str | None = None) -> list[str]:
        ph = placeholder or (COMPOSER_FOLLOW if self.turns else COMPOSER_EMPTY)
        body = f" → {text}" if text else f" → {ph}"
        if busy:
            body = body.ljust(self.width - 16) + "ctrl+c to stop"
        bar = "▄" * (self.width - 2)
        return [" " + bar, body, " " + "▀" * (self.width - 2)]

    def idle_frame(self, text: str = "", placeholder: str | None = None) -> list[str]:
        return [""] + self.composer(text, placeholder=placeholder) + self.footer()

    def header(self) -> list[str]:
        return ["", "  Cursor Agent", f"  v{self.sc.get('version', '2026.04.17-787b533')}", "  hint: /auto-run to skip all approvals", ""]

    # -- input ------------------------------------------------------------------
    def read_line(self, frame) -> str:
        """Composer-style line input: echo in the live block, Enter submits, paste supported."""
        text = ""
        self.ink.render(frame(text))
        while True:
            key = self.keys.next(None)
            if key is None:
                raise Quit(0)
            if key == "enter":
                return text
            if key == "ctrl-c":
                raise KeyboardInterrupt
            if key == "backspace":
                text = text[:-1]
            elif key.startswith("char:"):
                text += key[5:]
            elif key.startswith("paste:"):
                text += key[6:]
            self.ink.render(frame(text))

    # -- steps --------------------------------------------------------------------
    def trust(self, step: dict) -> None:
        w = self.width - 4
        options = [("a", "Trust this workspace"), ("q", "Quit")]
        sel = 0

        def frame() -> list[str]:
            rows = [
                "⚠ Workspace Trust Required",
                "Cursor Agent can execute code and access files in this directory.",
                "Do you trust the contents of this directory?",
                os.getcwd(),
                *[("▶ " if i == sel else "  ") + f"[{k}] {label}" for i, (k, label) in enumerate(options)],
                "Use arrow keys to navigate, Enter to select, or press the key shown",
            ]
            return [" ╭" + "─" * w + "╮", *[f" │ {r[: w - 2].ljust(w - 2)} │" for r in rows], " ╰" + "─" * w + "╯"]

        self.ink.render(frame())
        for _ in range(int(step.get("repaint", 0))):
            time.sleep(0.12)
            self.ink.render(frame())
        while True:
            key = self.keys.next(None)
            if key is None:
                raise Quit(0)
            choice = None
            if key in ("up", "down"):
                sel = (sel + (1 if key == "down" else -1)) % len(options)
                self.ink.render(frame())
                continue
            if key == "enter":
                choice = options[sel][0]
            elif key in ("esc", "ctrl-c"):
                choice = "q"
            elif key.startswith("char:") and key[5:].lower() in ("a", "q"):
                choice = key[5:].lower()
            if choice is None:
                continue
            self.record("trust", choice=choice)
            if choice == "q":
                raise Quit(0)
            self.ink.static(self.header(), self.idle_frame())
            return

    def work(self, step: dict) -> None:
        verb = step.get("verb", "Generating")
        seconds = float(step.get("seconds", 1.0))
        logs = list(step.get("log", []))
        t0 = time.monotonic()
        i = 0
        while time.monotonic() - t0 < seconds:
            dots = "." * (1 + i % 3)
            live = [f"  {SPIN[i % 2]} {verb}{dots} {120 + 37 * i} tokens"] + self.composer(busy=True) + self.footer()
            if logs and time.monotonic() - t0 > seconds / 3:
                self.ink.static([logs.pop(0)], live)
            else:
                self.ink.render(live)
            i += 1
            key = self.keys.next(0.21)
            if key == "ctrl-c":
                raise KeyboardInterrupt

    def say(self, step) -> None:
        text = step if isinstance(step, str) else step["text"]
        self.ink.static(["", *[f"  {line}" for line in text.splitlines()]], self.idle_frame())

    def approve(self, step: dict) -> None:
        op = step.get("op", "run")
        target = step.get("command") or step.get("path", "")
        if self.autorun and op != "delete":
            self.record("approval", op=op, target=target, result="auto")
            self.ink.static([f"  ✓ {target} (auto-run)"], self.idle_frame())
            return
        title, box, options = self._approval_shape(op, target)
        sel = 0
        w = self.width - 4

        def frame() -> list[str]:
            rows = [" ┌" + "─" * w + "┐", *[f" │ {b[: w - 2].ljust(w - 2)} │" for b in box], " └" + "─" * w + "┘", f" {title}"]
            if op == "run":
                rows.append(f" Not in allowlist: {target}")
            rows += [(" → " if i == sel else "   ") + label for i, (label, _) in enumerate(options)]
            rows.append(" ctrl+r to review changed files")
            return rows + self.footer()

        self.ink.render(frame())
        for _ in range(int(step.get("repaint", 0))):
            time.sleep(0.1)
            self.ink.render(frame())
        action: str | None = None
        while action is None:
            key = self.keys.next(None)
            if key is None:
                raise Quit(0)
            if key in ("up", "down") or key in ("char:k", "char:j"):
                sel = (sel + (1 if key in ("down", "char:j") else -1)) % len(options)
                self.ink.render(frame())
            elif key == "enter":
                action = options[sel][1]
            elif key in ("char:y", "char:Y"):
                action = "approve"
            elif key in ("char:n", "char:p", "esc"):
                action = "reject_reason"
            elif key in ("char:q", "ctrl-c"):
                action = "reject"
            elif key == "tab" and op != "delete":
                action = "allowlist"
            elif key == "shift-tab" and op != "delete":
                action = "autorun"
        reason = None
        if action == "reject_reason":
            try:
                reason = self.read_line(lambda t: [f" {title}"] + [""] + self.composer(t, placeholder=REASON) + self.footer())
            except KeyboardInterrupt:
                reason = ""
            action = "reject"
        if action == "autorun":
            self.autorun = True
        result = {"approve": "approved", "allowlist": "allowlisted", "autorun": "approved_all", "reject": "rejected"}[action]
        self.record("approval", op=op, target=target, result=result, reason=reason)
        note = f"  ✓ {title[:-1]}: {target}" if result != "rejected" else f"  ✗ Rejected: {target}" + (f" ({reason})" if reason else "")
        self.ink.static([note], self.idle_frame())

    def _approval_shape(self, op: str, target: str) -> tuple[str, list[str], list[tuple[str, str]]]:
        """The box's title, its lines, and its options as (label, action)."""
        if op == "run":
            return "Run this command?", [f"$ {target} in ."], [
                ("Run (once) (y)", "approve"),
                (f"Add Shell({target.split()[0]}) to allowlist? (tab)", "allowlist"),
                ("Auto-run everything (shift+tab)", "autorun"),
                ("Skip (esc or n)", "reject_reason"),
            ]
        if op == "write":
            return "Write to this file?", [f"in {target}"], [
                ("Proceed (y)", "approve"),
                ("Reject & propose changes (esc or n or p)", "reject_reason"),
                (f"Add Write({target}) to allowlist? (tab)", "allowlist"),
                ("Run Everything (shift+tab)", "autorun"),
            ]
        return "Delete this file?", [f"in {target}"], [("Delete (y)", "approve"), ("Keep (n)", "reject_reason")]

    def ask(self, step) -> None:
        """The agent ends its turn with a question in prose and waits at the composer."""
        text = step if isinstance(step, str) else step["text"]
        self.turns += 1
        self.ink.static(["", *[f"  {line}" for line in text.splitlines()]], self.idle_frame())
        answer = self.read_line(lambda t: self.idle_frame(t))
        self.record("answer", question=text, text=answer)
        self.ink.static(["", f"  > {answer}"], self.idle_frame())

    def fail(self, step) -> None:
        kind = step if isinstance(step, str) else step.get("kind", "usage_limit")
        if kind == "login":
            banner = ["", "  ░█▀▀░█░█░█▀▄░█▀▀░█▀█░█▀▄░░░█▀█░█▀▀░█▀▀░█▀█░▀█▀", "", "  Press any key to sign in..."]
            self.ink.render(banner)
            if self.keys.next(None) in ("ctrl-c", None):
                raise KeyboardInterrupt  # Ink exits on Ctrl+C; no sign-in attempt
            self.record("login_prompt_key")
            sys.stdout.write("\nAuthentication required to use Cursor Agent. Please run 'cursor-agent login' to authenticate.\n")
            raise Quit(1)
        lines = {
            "usage_limit": ["  Error: You've hit your usage limit", "    Get Cursor Pro for more Agent usage, unlimited Tab, and more.",
                            "    spendLimitHit: false"],
            "connection": ["  Error: Connection failed"],
        }[kind]
        self.turns += 1
        self.ink.static(["", *lines], self.idle_frame())

    # -- main -----------------------------------------------------------------------
    def run(self) -> int:
        sys.stdout.write("\x1b[?25l")
        steps = list(self.sc.get("steps", []))
        if not steps or not (steps[0] == "trust" or (isinstance(steps[0], dict) and "trust" in steps[0])):
            if not (steps and isinstance(steps[0], dict) and "fail" in steps[0]):
                self.ink.static(self.header(), self.idle_frame())
        if self.task:
            self.turns += 1
        for step in steps:
            name, arg = (step, {}) if isinstance(step, str) else next(iter(step.items()))
            if name == "trust":
                self.trust(arg or {})
                if self.task:
                    self.ink.static([f"  > {self.task}"], self.idle_frame())
            else:
                getattr(self, name)(arg)
        return self.idle_until_exit()

    def idle_until_exit(self) -> int:
        presses = 0
        while True:
            self.ink.render(self.idle_frame())
            key = self.keys.next(None)
            if key is None:
                return 0
            if key == "ctrl-c":
                presses += 1
                if presses >= 2:
                    self.record("exit", code=0)
                    return 0
                self.footer_note = "Press Ctrl+C again to exit"
                continue
            presses = 0
            self.footer_note = ""
            if key.startswith(("char:", "paste:")):
                self.keys.queue.insert(0, key)
                text = self.read_line(lambda t: self.idle_frame(t))
                self.record("followup", text=text)
                self.ink.static(["", f"  > {text}"], self.idle_frame())
                self.work({"verb": "Thinking", "seconds": 0.6})
                self.say("Noted.")


def main(scenario: dict, task: str, record: Recorder) -> int:
    old = set_raw(0)
    try:
        width = os.get_terminal_size(1).columns
    except OSError:
        width = 120
    sim = CursorSim(scenario, task, record, width)
    code = 0
    try:
        code = sim.run()
    except Quit as q:
        code = q.code
    except KeyboardInterrupt:
        record("interrupted")
        code = 130
    finally:
        sys.stdout.write("\x1b[?25h")
        sys.stdout.flush()
        restore(0, old)
    return code
