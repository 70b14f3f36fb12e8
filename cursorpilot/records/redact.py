"""Secret redaction, applied before anything reaches the disk or leaves the process.

It replaces the value and nothing around it: a match never crosses a line break (the row after `Password:` is the
program's next line, `230 Login successful.`, not a password), never takes a word of prose after a label
(`Password: Remember me? [y/N]`), and never takes the fence that closes a block of terminal text in a model's prompt.
A private key's PEM block is the one value that spans lines: each of its lines is masked, its line breaks kept.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

MASK = "[REDACTED]"
SECRET_MIN = 4  # a --secret value this long or longer is redacted wherever it shows up
PROVIDER_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_API_KEY")

# a PEM private key: the BEGIN line, its base64 (and header) lines, the END line when it is there
_PEM = re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----)((?:\r?\n(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\r\n]*)[ \t]*)+)")
_PATTERNS = [  # (what the lower-cased text must hold for the pattern to be worth running, the pattern)
    ("sk-", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}")),
    ("sk-", re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")),
    ("akia", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("gh", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}")),
    ("xox", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{8,}")),
    ("eyj", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
]
_BEARER = re.compile(r"(?i)(\bbearer[ \t]+)[A-Za-z0-9._~+/\-]{12,}=*")
_NAME = r"(?<!<)\b([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:_[A-Z0-9_]*)?)\b"
# NAME=value: "API_KEY=…", "db_password=…" (no prose looks like that), the value up to a blank
_ASSIGN = re.compile(r"(?i)" + _NAME + r"([ \t]*=[ \t]*)(\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s\"'][^\s]*)")
# NAME: value, where the value is all that is left of its line ("Password: hunter2", "api_key: abc"), so a label
# followed by prose ("Password: Remember me? [y/N]") or by nothing but a line break keeps every word
_LABEL = re.compile(r"(?i)" + _NAME + r"([ \t]*:[ \t]*)(\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s\"'][^\s]*)(?=[ \t]*(?:\r?\n|\r|$))")
_NOT_A_VALUE = re.compile(r"[*•·]+|<[^<>\s]+>|\[REDACTED\]|`+|~+|[-=_]+")  # stars drawn, key and secret names, a fence, a rule

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD", re.I)
_WORD = re.compile(r"key|token|secret|passw")  # on lower-cased text: where a NAME= or NAME: may be


def dotenv_values(path: Path) -> list[str]:
    """Values from a .env file: whatever is in one is treated as secret."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        name, sep, value = line.strip().removeprefix("export ").partition("=")
        if sep and name and not name.startswith("#"):
            out.append(value.strip().strip("'\""))
    return out


def _value(m: re.Match[str]) -> str:
    """A label's or an assignment's value masked, the name and separator kept; what is no value is left alone."""
    if _NOT_A_VALUE.fullmatch(m.group(3)):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{MASK}"


def _named(s: str) -> str:
    """NAME=value and NAME: value masked, each line that holds such a name on its own (the rest is not scanned)."""
    low, out, at = s.lower(), [], 0
    for m in _WORD.finditer(low):
        if m.start() < at:
            continue  # on a line done already
        start = max(s.rfind("\n", 0, m.start()), s.rfind("\r", 0, m.start())) + 1
        ends = [i for i in (s.find("\n", m.end()), s.find("\r", m.end())) if i >= 0]
        end = min(ends) if ends else len(s)
        out += [s[at:start], _LABEL.sub(_value, _ASSIGN.sub(_value, s[start:end]))]
        at = end
    return "".join([*out, s[at:]])


def _pem(m: re.Match[str]) -> str:
    return m.group(1) + re.sub(r"(\r?\n)[^\r\n]+", lambda line: line.group(1) + MASK, m.group(2))


class Redactor:
    """Masks known secret values (provider keys, secret-named env vars, .env values, --secret values, secrets typed
    during the run) and secret shapes.

    A --secret value is searched for from SECRET_MIN characters (a shorter one would mask every `y` and every `12`
    in a transcript; where it is typed it is masked whatever its length)."""

    def __init__(self, extra_values: Iterable[str] = (), env: dict[str, str] | None = None, cwd: str | None = None,
                 secrets: Iterable[str] = ()):
        env = dict(os.environ) if env is None else env
        values = {v for v in extra_values if v and len(v) >= 6} | {v for v in secrets if len(v) >= SECRET_MIN}
        values |= {env[k] for k in PROVIDER_KEY_VARS if len(env.get(k, "")) >= 6}
        values |= {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8 and not v.startswith("/") and " " not in v}
        values |= {v for v in dotenv_values(Path(cwd or ".") / ".env") if len(v) >= 6}
        self._values = sorted(_forms(values), key=len, reverse=True)

    def add(self, value: str) -> None:
        """A secret typed during the run (a no-echo answer, a rule's `secret: true`): redacted from here on wherever
        the program shows it again (its echo, a summary that prints it)."""
        if len(value) >= SECRET_MIN and value not in self._values:
            self._values = sorted({*self._values, *_forms({value})}, key=len, reverse=True)

    @property
    def longest(self) -> int:
        """The longest known value: a stream holds back this much, so a value split between two writes is still found."""
        return len(self._values[0]) if self._values else 0

    def text(self, s: str) -> str:
        if not s:
            return s
        for value in self._values:
            if value in s:
                s = s.replace(value, MASK)
        low = s.lower()  # the patterns run only where their words are: a flood of output costs a few scans
        if "private key-----" in low:
            s = _PEM.sub(_pem, s)
        for word, rx in _PATTERNS:
            if word in low:
                s = rx.sub(MASK, s)
        if "bearer" in low:
            s = _BEARER.sub(lambda m: m.group(1) + MASK, s)
        return _named(s) if _WORD.search(low) else s

    def value(self, obj: object) -> object:
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {k: self.value(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.value(v) for v in obj]
        return obj


def _forms(values: set[str]) -> set[str]:
    """Each value as it is, and as the hex of its bytes (a record of the bytes typed, `keys_sent.hex`, spells them so)."""
    return values | {v.encode("utf-8", "surrogateescape").hex() for v in values}


HOLD = 512  # the most of an unfinished line a stream holds back (a full-screen program may never end a line)


class Stream:
    """Redaction of text that arrives in pieces (a recording's output events): a secret split between two pieces is
    still found. The unfinished last line of each piece (up to HOLD characters, and at least the longest known value)
    is held back and redacted with the next piece; `flush()` gives what is held. A piece goes out at the time it
    arrived, or with the next piece when it was held."""

    def __init__(self, redact: Callable[[str], str], longest: Callable[[], int] = lambda: 0):
        self._redact, self._longest = redact, longest
        self._held, self._held_t = "", 0.0

    def feed(self, t: float, text: str) -> list[tuple[float, str]]:
        """The (time, redacted text) pieces ready to be written now. What is held was redacted already (redacting again
        changes nothing) and may hold the clear start of a value that is not whole yet; it goes out at its own time,
        the new text at its time, unless a value joined the two (then both at the held time)."""
        held, held_t = self._held, self._held_t
        text = self._redact(held + text)
        line_start = max(text.rfind("\n"), text.rfind("\r")) + 1
        keep = min(len(text) - line_start, max(HOLD, self._longest()))
        ready, self._held = (text[:-keep], text[-keep:]) if keep else (text, "")
        if held and ready.startswith(held) and len(ready) > len(held):
            out = [(held_t, held), (t, ready[len(held):])]
        else:
            out = [(held_t if held else t, ready)] if ready else []
        self._held_t = held_t if held and not ready else t
        return out

    def flush(self) -> list[tuple[float, str]]:
        held, at = self._held, self._held_t
        self._held, self._held_t = "", 0.0
        return [(at, self._redact(held))] if held else []
