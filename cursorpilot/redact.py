"""Secret redaction, applied before anything reaches the disk or leaves the process."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

MASK = "[REDACTED]"
SECRET_MIN = 4  # a --secret value this long or longer is redacted wherever it shows up
PROVIDER_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_API_KEY")

_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{8,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/\-]{12,}=*"),
]
# NAME=value where NAME ends in (or has a _-part after) KEY/TOKEN/SECRET/PASSWORD: "API_KEY=", "db_password:",
# but not prose such as "tokens: <enter>", nor the key token "<key:q>".
_ASSIGN = re.compile(r"(?i)(?<!<)\b([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:_[A-Z0-9_]*)?)\b(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)")


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD", re.I)


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


class Redactor:
    """Masks known secret values (provider keys, secret-named env vars, .env values, --secret values) and secret shapes.

    A --secret value is searched for from SECRET_MIN characters (a shorter one would mask every `y` and every `12`
    in a transcript; where it is typed it is masked whatever its length)."""

    def __init__(self, extra_values: Iterable[str] = (), env: dict[str, str] | None = None, cwd: str | None = None,
                 secrets: Iterable[str] = ()):
        env = os.environ if env is None else env
        values = {v for v in extra_values if v and len(v) >= 6} | {v for v in secrets if len(v) >= SECRET_MIN}
        values |= {env[k] for k in PROVIDER_KEY_VARS if len(env.get(k, "")) >= 6}
        values |= {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 8 and not v.startswith("/") and " " not in v}
        values |= {v for v in dotenv_values(Path(cwd or ".") / ".env") if len(v) >= 6}
        self._values = sorted(values, key=len, reverse=True)

    def text(self, s: str) -> str:
        if not s:
            return s
        for value in self._values:
            if value in s:
                s = s.replace(value, MASK)
        for rx in _PATTERNS:
            s = rx.sub(lambda m: (m.group(1) if rx.groups and m.group(1) and m.group(1).lower().startswith("bearer") else "") + MASK, s)
        return _ASSIGN.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", s)

    def value(self, obj: object) -> object:
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {k: self.value(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.value(v) for v in obj]
        return obj
