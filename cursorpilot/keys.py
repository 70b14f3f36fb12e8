"""The reply grammar: turn an answer into the exact writes sent to the program.

Grammar (also in the README):
- Plain text is typed as one write.
- ``<name>`` tokens are keys, each sent as its own write after a short gap, because
  some TUIs recognise an arrow only as an exact 3-byte read and drop the rest of a burst.
- If the reply holds text and does not end with a key token, Enter follows as a separate
  write after ``enter_delay`` (fast text+Enter is taken as a paste by some TUIs).
  Prompts that take a single key (``submit: none`` in the profile) get no Enter.
- A reply of only key tokens gets no extra Enter. An empty reply means "press Enter".
- A reply starting with ``? `` means the answerer needs a human.
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
    "delete": b"\x1b[3~",
    "space": b" ",
    "backspace": b"\x7f",
}

_TOKEN = re.compile(r"<([a-z]+(?:-[a-z]+)?)>", re.IGNORECASE)
HUMAN_PREFIX = "? "


class ReplyError(ValueError):
    """A reply that must not be typed (e.g. multi-line text)."""


@dataclass(slots=True, frozen=True)
class Write:
    data: bytes
    delay: float  # seconds to wait before this write
    label: str  # what it is, for the transcript and the screen
    check: str | None = None  # a menu option that must be highlighted on screen before this write goes


def key_bytes(name: str) -> bytes | None:
    name = name.lower()
    if name in NAMED_KEYS:
        return NAMED_KEYS[name]
    m = re.fullmatch(r"ctrl-([a-z])", name)
    if m:
        return bytes([ord(m.group(1)) - ord("a") + 1])
    return None


def needs_human(reply: str) -> bool:
    return reply.startswith(HUMAN_PREFIX) or reply.strip() == "?"


def to_writes(
    reply: str,
    *,
    submit: bool = True,
    key_delay: float = 0.05,
    enter_delay: float = 0.15,
    multiline: bool = False,
    bracketed_paste: bool = False,
) -> list[Write]:
    """Translate a reply into writes. Raises ReplyError for text that must not be typed.

    Several lines go only to a prompt that takes them (multiline) in a program that enabled
    bracketed paste: one pasted write, then Enter. Typed line by line, each newline would submit.
    """
    reply = reply.rstrip("\r\n")  # a trailing newline (a YAML block scalar) is not a second line
    if reply == "":
        return [Write(b"\r", 0.0, "<enter>")]
    if "\n" in reply or "\r" in reply:
        if not multiline:
            raise ReplyError("multi-line reply refused: the prompt asked for one line")
        if not bracketed_paste:
            raise ReplyError("multi-line reply refused: the program has not enabled bracketed paste, so each line would be submitted")
        text = reply.replace("\r\n", "\n")
        return [Write(b"\x1b[200~" + text.encode("utf-8") + b"\x1b[201~", 0.0, f"<paste {len(text.splitlines())} lines>"),
                *([Write(b"\r", enter_delay, "<enter>")] if submit else [])]
    writes: list[Write] = []
    pos = 0
    ends_with_key = False
    has_text = False
    for m in _TOKEN.finditer(reply):
        data = key_bytes(m.group(1))
        if data is None:
            continue  # not a key name: typed literally as part of the text
        if m.start() > pos:
            writes.append(_text(reply[pos : m.start()], writes, key_delay))
            has_text = True
        writes.append(Write(data, key_delay if writes else 0.0, f"<{m.group(1).lower()}>"))
        pos = m.end()
        ends_with_key = True
    if pos < len(reply):
        writes.append(_text(reply[pos:], writes, key_delay))
        has_text = True
        ends_with_key = False
    if has_text and not ends_with_key and submit:
        writes.append(Write(b"\r", enter_delay, "<enter>"))
    return writes


def _text(text: str, writes: list[Write], key_delay: float) -> Write:
    if "\n" in text or "\r" in text:
        raise ReplyError("multi-line reply refused: the prompt asked for one line")
    return Write(text.encode("utf-8"), key_delay if writes else 0.0, text)
