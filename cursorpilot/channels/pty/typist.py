"""Keys on their way out, PURE: a snapshot and `now` in, what to write and what to record out.

The pilot decides *what* is typed (pty/keystrokes.py makes the bytes); this says *when* each key goes: after its delay,
or, paced by the program (the profile's `key_pace: reaction`), as soon as the program has answered the last key with
output of its own (it read that key: the next one can't be read together with it; so not while the terminal echoes
keys itself, when output is no such sign), the delay then only a bound for a key that changes nothing on screen; Enter
only once the text before it shows near the cursor and, paced by the program, once the kernel no longer sees it at work
on that text (fzf shows a query at once and filters a long list after it: an Enter between took the old first item;
a filter or a completion has caught up; ECHO_WAIT at most),
never when one key alone already took the question away (its Enter would accept the next question's default); a menu's
Enter only once the highlight stands on the option chosen (HIGHLIGHT_WAIT at most, then nothing is pressed and a person
decides). The loop writes what this hands out, and owns no rule of its own.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from cursorpilot.records import models as R
from cursorpilot.decide.deliver import Record
from cursorpilot.detect.menu import buttons, highlighted_row
from cursorpilot.detect.menu import parse as parse_menu
from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.keys import Write

HIGHLIGHT_WAIT = 1.5  # how long the highlight may take to reach the chosen option before Enter
ECHO_WAIT = 1.5  # how long typed text may take to show before Enter goes anyway
RECHECK = 0.01  # how soon a condition on screen is looked at again


@dataclass(frozen=True, slots=True)
class KeyView:
    """What the typist reads when a key falls due: the screen, its version (every byte fed counts), the echo."""

    snap: Snapshot
    version: int
    no_echo: bool  # the terminal reads a line with echo off: typed text never shows
    echo: bool = False  # the terminal echoes what is typed: output after a key is then no sign the program read it
    working: bool = False  # the kernel sees the program at work, not waiting on its terminal (asked for enter_waits())
    keys: bool = False  # the terminal is out of canonical mode: the program reads keys itself, not a line


@dataclass(frozen=True, slots=True)
class Send:
    """Write these bytes now (the loop records them in the cast too; `keys_sent` comes with it)."""

    data: bytes
    secret: bool

    def __repr__(self) -> str:
        return f"Send(data={b'***' if self.secret else self.data!r}, secret={self.secret!r})"


@dataclass(frozen=True, slots=True)
class KeysOut:
    """Every key of the answer is out: the loop renders what the screen shows now and says so (a `Typed` fact)."""


@dataclass(frozen=True, slots=True)
class HighlightMissed:
    """The menu's highlight never reached the chosen option: Enter was not pressed."""

    expected: str
    seen: str
    block: str


Out = Send | KeysOut | HighlightMissed | Record


@dataclass(slots=True)
class Typist:
    queue: deque[Write] = field(default_factory=deque)
    next_at: float = 0.0
    _check_until: float | None = None
    _typed_at: int = -1  # the screen's version when the text before an Enter was written
    _typed_cursor: tuple[int, int] = (0, 0)  # ...and where the cursor was
    _typed_row: int = 0  # ...and its row counted from the start of the session (rows scrolled off included)
    _typed_secret: bool = False  # ...and whether that text was a secret
    paced: bool = False  # the queued keys go as soon as the program answers the last one (schedule's `paced`)
    _sent_at: float = 0.0  # when the last key went out
    _key_version: int | None = None  # ...and the screen's version then, while more keys of the answer wait
    _looked_at: int | None = None  # the screen's version when a condition on it (the echo, the highlight) was last unmet

    def schedule(self, writes: tuple[Write, ...], now: float, paced: bool = False) -> None:
        if not self.queue:
            self.next_at = now + (writes[0].delay if writes else 0.0)
            self.paced, self._key_version = paced, None
        self.queue.extend(writes)

    def clear(self) -> None:
        self.queue.clear()
        self._key_version = None
        self._conditions_done()

    def _conditions_done(self) -> None:
        """The key at the head goes (or is dropped): no condition on screen is waited for any more."""
        self._check_until = self._looked_at = None

    def due_at(self, version: int | None = None) -> float | None:
        """When the next key falls due; with the screen's version, at once when the program has answered the last key,
        or has drawn something since a condition on screen was found unmet (the echo may be there now: RECHECK is
        only the bound)."""
        if not self.queue:
            return None
        return self._sent_at if version is not None and self._early(version) else self.next_at

    def enter_waits(self) -> bool:
        """The next key is an Enter after typed text, paced by the program: it asks whether the program still works."""
        return self.paced and bool(self.queue) and self.queue[0].echo is not None

    def _early(self, version: int) -> bool:
        return self._answered(version) or self._looked_at not in (None, version)

    def _answered(self, version: int) -> bool:
        """Paced keys: the program wrote something since the last key went (every byte fed counts in the version; no
        version is kept for a key the terminal echoed itself). Not the Enter after typed text: its delay
        (enter_delay_ms) is the least gap, kept out of a paste window."""
        return (self.paced and self._check_until is None and self._key_version not in (None, version)
                and bool(self.queue) and self.queue[0].echo is None)

    def step(self, now: float, view: KeyView) -> list[Out]:
        """The key that is due, if its conditions hold: at most one write, with its record."""
        out: list[Out] = []
        while self.queue and (now >= self.next_at or self._early(view.version)):
            w = self.queue[0]
            if w.check is not None and not self._highlight_reached(w.check, w.check_from, now, view, out):
                return out
            if w.echo is not None:
                verdict = self._enter_due(w, now, view, out)
                if verdict == "wait":
                    return out
                if verdict == "skip":
                    self._conditions_done()
                    self.queue.popleft()
                    out.append(Record(R.EnterSkipped(reason="the program took the answer without Enter", prompt=w.prompt)))
                    if not self.queue:
                        out.append(KeysOut())
                    continue
            self._conditions_done()
            self.queue.popleft()
            text = w.data.decode("utf-8", "replace")
            secret = w.secret or (text == w.label and view.no_echo)  # typed while echo is off: a secret, whoever chose it
            out += [Send(w.data, secret), Record(R.KeysSent(keys=w.label, data=text, hex=w.data.hex(), secret=secret or None))]
            self._typed_secret, self._sent_at = secret, now
            if self.queue:
                self.next_at = now + self.queue[0].delay
                self._typed_at, self._typed_cursor = view.version, (view.snap.cursor_x, view.snap.cursor_y)
                self._typed_row = view.snap.scrolled + view.snap.cursor_y
                self._key_version = None if view.echo else view.version  # an echoed key: its echo is no answer
            else:
                out.append(KeysOut())
            return out
        return out

    def _wait_for(self, now: float, wait: float, version: int) -> bool:
        """Keep waiting for a condition on screen (True), or give up (False): its deadline has passed."""
        if self._check_until is None:
            self._check_until = now + wait
        if now < self._check_until:
            self.next_at, self._looked_at = now + RECHECK, version
            return True
        self._check_until = self._looked_at = None
        return False

    def _highlight_reached(self, label: str, anchor_row: int, now: float, view: KeyView, out: list[Out]) -> bool:
        """Is the menu's highlight on `label`? If not yet, wait a little for the redraw; in the end, nothing is pressed."""
        snap = view.snap
        top = max(0, anchor_row - snap.scrolled)
        menu = parse_menu(list(snap.lines[top:]), *snap.rel(top)) or buttons(snap.lines, snap.cursor_x, snap.cursor_y)
        if menu is not None and menu.current.label == label or highlighted_row(snap.lines[top:], label):
            return True
        if self._wait_for(now, HIGHLIGHT_WAIT, view.version):
            return False
        self.clear()
        out.append(HighlightMissed(label, menu.current.label if menu else "no menu", "\n".join(snap.lines[top:]).strip()))
        return False

    def _enter_due(self, w: Write, now: float, view: KeyView, out: list[Out]) -> str:
        """send | wait | skip: Enter goes once the typed text shows near the cursor; it is skipped when a single key made
        the question leave the screen; it goes anyway when nothing shows in time."""
        if self._check_until is None and view.no_echo:  # asked once per Enter, not on every poll of the wait
            return "send"
        snap, shown = view.snap, False
        if view.version != self._typed_at:
            one_key = len((w.echo or "").strip()) == 1  # only a single key can have been an answer by itself (y at a confirm)
            if one_key and w.prompt and " ".join(w.prompt.split()) not in " ".join(snap.text().split()):
                return "skip"
            if one_key and view.echo and snap.scrolled + snap.cursor_y > self._typed_row:
                return "skip"  # the terminal echoes keys, and the program went on to a new line (bash's read -n1): typing
                # the key moved no cursor down, so the key alone answered (the next read's mode may be a line's already)
            echoed_by_tty = one_key and view.echo and view.keys  # a key the program reads itself, shown by the terminal
            tail = " ".join((w.echo or "")[-40:].split())
            rows = snap.lines[max(0, snap.cursor_y - 8) : snap.cursor_y + 2]  # Ink parks the cursor under its input box
            x, y = self._typed_cursor
            shown = any(" ".join(row.rstrip(" │┃║|█▌▋▏_").split()).endswith(tail) for row in rows)  # a drawn cursor after it
            shown = shown or (snap.cursor_y == y and snap.cursor_x - x >= len(w.echo or ""))  # masked: the cursor moved on (****)
            shown = shown and not echoed_by_tty  # (the terminal's echo is no sign: wait for the program to go on)
            if shown and not (self.paced and view.working):
                return "send"
        if self._wait_for(now, ECHO_WAIT, view.version):
            return "wait"
        if shown:  # ...and the program still at work on it
            out.append(Record(R.EnterWhileWorking(waited_s=ECHO_WAIT)))
        else:
            out.append(Record(R.EchoNotSeen(text=w.echo, waited_s=ECHO_WAIT, secret=self._typed_secret or None)))
        return "send"
