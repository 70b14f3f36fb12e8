"""The reply grammar: turn an answer into the exact writes sent to the program, the way xterm would send them.

Grammar (also in the README):
- Plain text is typed as one write, exactly as given: quotes, spaces and all.
- ``<name>`` tokens are keys, each sent as its own write after a short gap, because
  some TUIs recognise an arrow only as an exact 3-byte read and drop the rest of a burst.
- ``<key:X>`` presses the one printable key X and nothing else: no Enter follows (``(Y/n)`` confirms that act
  on the key, pagers' ``q``, hotkeys).
- If the reply holds text and does not end with a key token, Enter follows as a separate
  write after ``enter_delay`` (fast text+Enter is taken as a paste by some TUIs).
  Prompts that take a single key (``submit: none`` in the profile) get no Enter.
- A reply of only key tokens gets no extra Enter. An empty reply means "press Enter".
- A reply starting with ``? `` means the answerer needs a human.

Keys follow the terminal's modes, as xterm encodes them: in application cursor mode (DECCKM, ``CSI ? 1 h``,
which ncurses' ``keypad()`` turns on) the arrows, Home and End are ``ESC O A`` …, not ``ESC [ A`` (a program
reading ``ESC [`` there sees a lone Esc: in a dialog box, Cancel). The keypad tokens (``<kp-0>`` … ``<kp-enter>``)
send digits in numeric keypad mode and ``ESC O p`` … in application keypad mode (DECKPAM, ``ESC =``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAMED_KEYS: dict[str, bytes] = {
    "enter": b"\r",
    "tab": b"\t",
    "shift-tab": b"\x1b[Z",
    "esc": b"\x1b",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
    "right": b"\x1b[C",
    "left": b"\x1b[D",
    "home": b"\x1b[H",
    "end": b"\x1b[F",
    "pgup": b"\x1b[5~",
    "pgdn": b"\x1b[6~",
    "insert": b"\x1b[2~",
    "delete": b"\x1b[3~",
    "space": b" ",
    "backspace": b"\x7f",
    "f1": b"\x1bOP", "f2": b"\x1bOQ", "f3": b"\x1bOR", "f4": b"\x1bOS",
    "f5": b"\x1b[15~", "f6": b"\x1b[17~", "f7": b"\x1b[18~", "f8": b"\x1b[19~",
    "f9": b"\x1b[20~", "f10": b"\x1b[21~", "f11": b"\x1b[23~", "f12": b"\x1b[24~",
}
# DECCKM: the cursor keys (and Home/End) as SS3 sequences
APP_CURSOR: dict[str, bytes] = {"up": b"\x1bOA", "down": b"\x1bOB", "right": b"\x1bOC", "left": b"\x1bOD", "home": b"\x1bOH", "end": b"\x1bOF"}
# the numeric keypad: (numeric mode, application mode DECKPAM)
KEYPAD: dict[str, tuple[bytes, bytes]] = {
    **{f"kp-{d}": (str(d).encode(), b"\x1bO" + bytes([ord("p") + d])) for d in range(10)},
    "kp-enter": (b"\r", b"\x1bOM"), "kp-plus": (b"+", b"\x1bOk"), "kp-minus": (b"-", b"\x1bOm"),
    "kp-star": (b"*", b"\x1bOj"), "kp-slash": (b"/", b"\x1bOo"), "kp-dot": (b".", b"\x1bOn"),
}

_TOKEN = re.compile(r"<(key:[^\s<>]|[a-z]+\d*(?:-[a-z0-9]+)?)>", re.IGNORECASE)
HUMAN_PREFIX = "? "


class ReplyError(ValueError):
    """A reply that must not be typed (e.g. multi-line text)."""


@dataclass(slots=True, frozen=True)
class Modes:
    """The terminal modes that change what a key sends (read off the program's output)."""

    app_cursor: bool = False
    app_keypad: bool = False
    bracketed_paste: bool = False


@dataclass(slots=True, frozen=True)
class Write:
    data: bytes
    delay: float  # seconds to wait before this write
    label: str  # what it is, for the transcript and the screen
    check: str | None = None  # a menu option that must be highlighted on screen before this write goes
    check_from: int = 0  # the absolute screen row where that menu's question starts
    echo: str | None = None  # text that must show on screen before this write (Enter) goes
    prompt: str | None = None  # with echo: the question's line; once it is gone, the program took the answer without Enter
    secret: bool = False  # a secret's text: its label is masked, and so is the write wherever it is recorded or printed

    def __repr__(self) -> str:
        data = b"***" if self.secret else self.data
        return (f"Write(data={data!r}, delay={self.delay!r}, label={self.label!r}, check={self.check!r}, check_from={self.check_from!r}, "
                f"echo={self.echo!r}, prompt={self.prompt!r}, secret={self.secret!r})")


def key_bytes(name: str, modes: Modes = Modes()) -> bytes | None:
    if name[:4].lower() == "key:" and len(name) == 5:
        return name[4].encode("utf-8")
    name = name.lower()
    if modes.app_cursor and name in APP_CURSOR:
        return APP_CURSOR[name]
    if name in NAMED_KEYS:
        return NAMED_KEYS[name]
    if name in KEYPAD:
        return KEYPAD[name][1 if modes.app_keypad else 0]
    m = re.fullmatch(r"ctrl-([a-z])", name)
    if m:
        return bytes([ord(m.group(1)) - ord("a") + 1])
    return None


def needs_human(reply: str) -> bool:
    return reply.startswith(HUMAN_PREFIX) or reply.strip() == "?"


def only_keys(reply: str) -> bool:
    """Key tokens, or a single character (a key the prompt offers: [a], (y)): not the name of a menu option."""
    if any(key_bytes(m.group(1)) is not None for m in _TOKEN.finditer(reply)):
        return True
    w = reply.strip()
    return len(w) == 1 and not w.isdigit()


def to_writes(
    reply: str,
    *,
    submit: bool = True,
    key_delay: float = 0.05,
    enter_delay: float = 0.15,
    multiline: bool = False,
    modes: Modes = Modes(),
    echo_check: bool = False,
) -> list[Write]:
    """Translate a reply into writes. Raises ReplyError for text that must not be typed.

    Several lines go only to a prompt that takes them (multiline) in a program that enabled
    bracketed paste: one pasted write, then Enter. Typed line by line, each newline would submit.
    echo_check: the Enter after typed text waits until the screen shows that text (the caller checks).
    """
    reply = reply.rstrip("\r\n")  # a trailing newline (a YAML block scalar) is not a second line; spaces are kept
    if reply == "":
        return [Write(b"\r", 0.0, "<enter>")]
    if "\n" in reply or "\r" in reply:
        if not multiline:
            raise ReplyError("multi-line reply refused: the prompt asked for one line")
        if not modes.bracketed_paste:
            raise ReplyError("multi-line reply refused: the program has not enabled bracketed paste, so each line would be submitted")
        text = reply.replace("\r\n", "\n")
        return [Write(b"\x1b[200~" + text.encode("utf-8") + b"\x1b[201~", 0.0, f"<paste {len(text.splitlines())} lines>"),
                *([Write(b"\r", enter_delay, "<enter>")] if submit else [])]
    writes: list[Write] = []
    pos = 0
    ends_with_key = False
    last_text: str | None = None
    for m in _TOKEN.finditer(reply):
        data = key_bytes(m.group(1), modes)
        if data is None:
            continue  # not a key name: typed literally as part of the text
        if m.start() > pos:
            last_text = reply[pos : m.start()]
            writes.append(_text(last_text, writes, key_delay))
        label = m.group(1) if m.group(1)[:4].lower() == "key:" else m.group(1).lower()
        writes.append(Write(data, key_delay if writes else 0.0, f"<{label}>"))
        pos = m.end()
        ends_with_key = True
    if pos < len(reply):
        last_text = reply[pos:]
        writes.append(_text(last_text, writes, key_delay))
        ends_with_key = False
    if last_text is not None and not ends_with_key and submit:
        echo = last_text.strip() if echo_check and last_text.strip() else None
        writes.append(Write(b"\r", enter_delay, "<enter>", echo=echo))
    return writes


def _text(text: str, writes: list[Write], key_delay: float) -> Write:
    if "\n" in text or "\r" in text:
        raise ReplyError("multi-line reply refused: the prompt asked for one line")
    return Write(text.encode("utf-8"), key_delay if writes else 0.0, text)
