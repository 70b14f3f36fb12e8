"""The decision page's links: a token per question, signed with a key that lives only in this run's memory.

A token names its question and when it expires, and carries an HMAC-SHA256 of both: it can't be guessed, forged or
stretched, and it is worth nothing once the run has ended (the key is gone). It is compared in constant time. Being
single-use is the question's business (race.py): a question answered once takes no second answer, whatever the token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import struct
import sys

ID_BYTES = 12
MAC_BYTES = 16  # 128 bits: far beyond guessing over HTTP
_BODY = struct.Struct(f">{ID_BYTES}sQ")  # the question's id, the expiry (Unix seconds; 0: it expires with the question)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    def __init__(self, key: bytes | None = None):
        self._key = key or secrets.token_bytes(32)

    @staticmethod
    def new_id() -> str:
        return secrets.token_hex(ID_BYTES)

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()[:MAC_BYTES]

    def token(self, decision: str, expires: float | None) -> str:
        body = _BODY.pack(bytes.fromhex(decision), int(expires or 0))
        return f"{_b64(body)}.{_b64(self._mac(body))}"

    def read(self, token: str, now: float) -> tuple[str | None, str]:
        """(the question's id, "") for a good token; (None, why) for a forged or malformed one, (id, "expired") for one
        past its time. The MAC is checked first, in constant time, before anything in the token is believed."""
        body_text, dot, mac_text = token.partition(".")
        try:
            body, mac = _unb64(body_text), _unb64(mac_text)
        except ValueError:
            return None, "malformed"
        if _b64(body) != body_text or _b64(mac) != mac_text:  # one spelling per token (base64's spare bits are not free)
            return None, "malformed"
        if not dot or len(body) != _BODY.size or not hmac.compare_digest(mac, self._mac(body)):
            return None, "not a valid link"
        decision, expires = _BODY.unpack(body)
        if expires and now >= expires:
            return decision.hex(), "expired"
        return decision.hex(), ""


def handed_key() -> bytes | None:
    """The key a fleet signs its inbox's links to this run's page with (docs/fleet.md): with CURSORPILOT_PAGE_KEY=stdin,
    one line of hex on stdin, read once. Never the key itself in the environment: the program the run drives inherits
    that, and could answer its own questions."""
    if os.environ.get("CURSORPILOT_PAGE_KEY") != "stdin":
        return None
    from cursorpilot.errors import BadInput

    try:
        key = bytes.fromhex(sys.stdin.readline().strip())
    except (ValueError, OSError):
        key = b""
    if len(key) < 16:
        raise BadInput("CURSORPILOT_PAGE_KEY=stdin: no key of at least 16 bytes (hex) came on stdin")
    return key
