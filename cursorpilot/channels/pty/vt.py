"""What a terminal answers, and the sequences pyte can't parse: handled on the text before pyte sees it.

Modern TUIs probe the terminal at start-up (Gemini CLI, Codex, Claude Code do): secondary device attributes
(``CSI > c``), the terminal's name and version (XTVERSION, ``CSI > q``), the kitty keyboard protocol
(``CSI ? u``), mode reports (DECRQM, ``CSI ? Ps $ p``), the default colours (``OSC 10/11 ; ?``). pyte drops the
``>`` of such a sequence and hands the rest to the wrong handler, so they are answered and taken out here.
The answers are xterm's, in the pilot's own name, and consistent with what the pilot renders: no kitty keyboard
protocol (xterm sends no reply to ``CSI ? u``; a program learns that from the DA1 answer that follows), light
text on a black background.

The application keypad (DECKPAM ``ESC =`` / DECKPNM ``ESC >``) is tracked here too: pyte ignores it, and the
keys the pilot types depend on it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from cursorpilot import __version__

# CSI with a <, =, > prefix; OSC colour queries; DECRQM; string sequences (DCS, APC, PM, SOS); ESC = / ESC >.
_SEQ = re.compile(
    r"\x1b\[(?P<pfx>[<=>])(?P<args>[0-9;:]*)(?P<inter>[ -/]*)(?P<final>[@-~])"
    r"|\x1b\](?P<osc>1[0-2]);\?(?P<term>\x07|\x1b\\)"
    r"|\x1b\[(?P<q>\??)(?P<mode>[0-9]+)\$p"
    r"|\x1b(?P<string>[P_^X])(?P<body>.*?)\x1b\\"
    r"|\x1b(?P<keypad>[=>])",
    re.S,
)
_MARKER = re.compile(r"\x1b(?:\[[<=>]|\]1|[=>P_^X])|\$p")  # one pass over the text: is any of them there?
_STRINGS = {"P": "DCS", "_": "APC", "^": "PM", "X": "SOS"}  # pyte draws their bodies as text (kitty graphics: "Gi=31,s=1,...")
STRING_HOLD = 65536  # an unterminated string sequence is held back at most this long
_OSC_COLOURS = {"10": "rgb:ffff/ffff/ffff", "11": "rgb:0000/0000/0000", "12": "rgb:ffff/ffff/ffff"}
DA2 = "\x1b[>41;0;0c"  # a VT420-class terminal, like xterm, firmware 0
XTVERSION = f"\x1bP>|cursor-pilot({__version__})\x1b\\"


@dataclass
class Filtered:
    text: str
    replies: list[str] = field(default_factory=list)
    keypad: bool | None = None  # the last DECKPAM (True) / DECKPNM (False) seen, if any
    ignored: Counter = field(default_factory=Counter)


def needs_filter(text: str) -> bool:
    return "\x1b" in text and _MARKER.search(text) is not None


def filter_text(text: str, private_modes: set[int]) -> Filtered:
    """Answer and remove what pyte would misparse. private_modes: the DEC modes set now (for DECRQM)."""
    out = Filtered(text)
    if not needs_filter(text):
        return out

    def handle(m: re.Match[str]) -> str:
        if m.group("keypad"):
            out.keypad = m.group("keypad") == "="
            return ""
        if m.group("string"):
            kind, body = _STRINGS[m.group("string")], m.group("body")
            if kind == "DCS" and body[:2] in ("+q", "$q"):  # XTGETTCAP, DECRQSS: "not recognised", as xterm says it
                out.replies.append(f"\x1bP0{body[0]}r\x1b\\")
            else:
                out.ignored[f"{kind} {body[:1]}"] += 1  # kitty graphics (APC G…), sixel (DCS …q): nothing drawn
            return ""
        if m.group("osc"):
            out.replies.append(f"\x1b]{m.group('osc')};{_OSC_COLOURS[m.group('osc')]}{m.group('term')}")
            return ""
        if m.group("mode") is not None:
            mode = int(m.group("mode"))
            if m.group("q"):
                now = _modes_at(text, m.start(), private_modes)
                state = 1 if mode in now else 2 if mode in KNOWN_PRIVATE_MODES else 0
            else:
                state = 0
            out.replies.append(f"\x1b[{m.group('q')}{mode};{state}$y")
            return ""
        pfx, final, args = m.group("pfx"), m.group("final"), m.group("args")
        if pfx == ">" and final == "c" and not m.group("inter"):
            out.replies.append(DA2)
        elif pfx == ">" and final == "q" and args in ("", "0") and not m.group("inter"):
            out.replies.append(XTVERSION)
        else:
            out.ignored[f"CSI {pfx}{'…' if args else ''}{m.group('inter')}{final}"] += 1
        return ""

    out.text = _SEQ.sub(handle, text)
    return out


_SET_RESET = re.compile(r"\x1b\[\?([0-9;]+)([hl])")


def _modes_at(text: str, end: int, modes: set[int]) -> set[int]:
    """The private modes in force at text[end]: those set before the text, then its own sets and resets."""
    now = set(modes)
    for m in _SET_RESET.finditer(text, 0, end):
        for p in m.group(1).split(";"):
            if p:
                (now.add if m.group(2) == "h" else now.discard)(int(p))
    return now


KNOWN_PRIVATE_MODES = {1, 7, 25, 47, 1000, 1002, 1003, 1004, 1006, 1049, 2004, 2026}


def incomplete_tail(text: str) -> int:
    """Where an escape sequence that the filter must see whole starts but is not finished yet (else len(text)).

    Only sequences that could become one the filter handles are held back; pyte keeps its own state
    across feeds for everything else.
    """
    floor = max(0, len(text) - STRING_HOLD)  # only the tail can hold one not finished yet: a flood is not searched whole
    start = max(text.rfind("\x1bP", floor), text.rfind("\x1b_", floor), text.rfind("\x1b^", floor), text.rfind("\x1bX", floor))
    if start >= 0 and "\x1b\\" not in text[start:]:
        return start  # a string sequence not terminated yet
    at = text.rfind("\x1b", max(0, len(text) - 64))
    if at < 0:
        return len(text)
    tail = text[at:]
    if tail in ("\x1b", "\x1b[", "\x1b]", "\x1b]1"):
        return at
    if re.fullmatch(r"\x1b\[[<=>?]?[0-9;:]*[ -/$]*", tail) or re.fullmatch(r"\x1b\]1[0-2]?(;\??)?\x1b?", tail):
        return at
    return len(text)
