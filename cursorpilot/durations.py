"""Parse human durations such as 90s, 45m, 1h30m, 2.5 (seconds)."""

from __future__ import annotations

import re

from cursorpilot.errors import BadInput

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    raw = text.strip().lower()
    try:
        value = float(raw)
    except ValueError:
        pass
    else:
        if value <= 0:
            raise BadInput(f"invalid duration {text!r}: must be positive")
        return value
    pos, total = 0, 0.0
    for m in _PART.finditer(raw):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    if pos != len(raw) or not raw or total <= 0:
        raise BadInput(f"invalid duration {text!r}: use e.g. 90s, 45m, 1h30m")
    return total
