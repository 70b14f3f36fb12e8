"""Secrets typed into a program: how one is shown, how a prompt that asks for one is told, how a reply names one.

Pure (text in, text out), so that the pilots, the transcript and the report mask alike: a secret is shown as
`•••••• (7 chars, hmac:1a2b3c4d)`, its length and a tag keyed with a random key that lives only in this process (one
run) and is never written anywhere. Equal tags within a run mean the same value was typed (a passphrase asked twice);
nobody holding the transcript can test a guessed password against a tag, as they could against a plain hash. What a
mask reveals: the value's length, and within one run whether two masked values were equal.

A reply names a secret given with `--secret NAME=ENVVAR` as `<secret:NAME>`: the value replaces the token only in the
bytes written to the program; everything shown or stored has the mask.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets as _random
from collections.abc import Mapping
from typing import Any

MASK = "••••••"
_KEY = _random.token_bytes(32)  # this run's: never written, so a tag can't be checked against a guess
# words of a prompt that asks for something not to be shown (a TUI that draws `****` itself turns no echo off)
_WORDS = (r"(?i)\b(pass(word|phrase|code)?|passwd|pin|secret|token|api[ _-]?key|otp|one[- ]time (code|password)|2fa|mfa"
          r"|verification code)\b")
_ASKS_SECRET = re.compile(_WORDS)
_FIELD = re.compile(_WORDS + r"\s*:")  # a field's label inside a dialog: "Passphrase: ____" (pinentry-curses)
REFERENCE = re.compile(r"<secret:([A-Za-z_][\w.-]*)>")
NAME = re.compile(r"[A-Za-z_][\w.-]*")


def masked(value: str) -> str:
    """How a secret is shown: its length and a tag keyed with this run's key. A mask is shown as it is."""
    if value.startswith(MASK):
        return value
    return f"{MASK} ({len(value)} chars, hmac:{hmac.new(_KEY, value.encode(), hashlib.sha256).hexdigest()[:8]})"


def is_masked(value: str) -> bool:
    return value.startswith(MASK)


SECRET_FIELDS = ("reply", "data", "hex", "keys", "text", "raw")
_KEY_TOKENS = re.compile(r"(<[a-z0-9:+\-]+>|<secret:[\w.-]+>)+")  # keys, and the names of secrets, are no secret


def mask_secrets(obj: dict[str, Any]) -> dict[str, Any]:
    """A transcript record flagged `secret: true` with its text masked: the transcript masks so as it writes, and
    every reader (records_read.parse, the report) again, whatever an older writer left in clear. Key names alone
    (`<enter>`) are no secret and stay; `hex` is masked as the text it encodes: the same length and hash as `data`."""
    if obj.get("secret") is not True:
        return obj
    out = dict(obj)
    for key in SECRET_FIELDS:
        value = out.get(key)
        if key == "hex" and isinstance(value, str) and not is_masked(value):
            try:
                value = bytes.fromhex(value).decode("utf-8", "replace")
            except ValueError:
                pass
        if isinstance(value, str) and value and not _KEY_TOKENS.fullmatch(value):
            out[key] = masked(value)
        elif isinstance(value, list):
            out[key] = [masked(v) if isinstance(v, str) and not _KEY_TOKENS.fullmatch(v) else v for v in value]
    return out


def asks_secret(prompt: str, dialog: bool = False) -> bool:
    """The prompt's last lines ask for a password, a passphrase, a token, a PIN…; in a dialog (a screen no rule
    explains, whose field may sit above its buttons), a row labels a field so ("Passphrase: ____")."""
    if dialog:
        return bool(_FIELD.search(prompt))
    return bool(_ASKS_SECRET.search("\n".join(prompt.rstrip().splitlines()[-2:])))


def names(text: str) -> list[str]:
    """The secrets a reply names."""
    return REFERENCE.findall(text)


def resolve(text: str, values: Mapping[str, str]) -> str:
    """The reply with each `<secret:NAME>` replaced by its value; KeyError names a secret that was not given."""
    return REFERENCE.sub(lambda m: values[m.group(1)], text)


def given(specs: list[str], env: Mapping[str, str]) -> dict[str, str]:
    """--secret NAME=ENVVAR (repeatable): each secret's value, read from the environment (a value on the command line
    would be in the shell's history and the process list)."""
    from cursorpilot.errors import BadInput

    out: dict[str, str] = {}
    for spec in specs:
        name, sep, var = spec.partition("=")
        if not sep or not NAME.fullmatch(name) or not var:
            raise BadInput(f"--secret {spec!r}: expected NAME=ENVVAR, e.g. --secret db=DB_PASSWORD (the value is read from that "
                           "environment variable; a reply types it as <secret:db>)")
        if name in out:
            raise BadInput(f"--secret {spec!r}: the secret {name!r} is given twice")
        if not env.get(var):
            raise BadInput(f"--secret {spec!r}: the environment variable {var} is not set (or empty)")
        out[name] = env[var]
    return out
