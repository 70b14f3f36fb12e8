"""Raw session recording: every byte to session.raw, and an asciicast v2 file.

``asciinema play <log>/session.cast`` replays the session; input events ("i") show
what cursor-pilot typed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cursorpilot.clock import Clock


_PLAIN = bytes(range(0x20, 0x7F)) + b"\r\n"
CAST_BATCH_S = 0.02
CAST_BATCH_CHARS = 256 * 1024


class SessionRecorder:
    def __init__(self, log_dir: Path, clock: Clock, cols: int, rows: int, command: list[str], step: int = 1):
        """Step 1 writes session.raw/.cast; later steps of a plan write session-NN.raw/.cast."""
        self._clock = clock
        self._t0 = clock.monotonic()
        suffix = "" if step == 1 else f"-{step:02d}"
        self.raw_path = log_dir / f"session{suffix}.raw"
        self.cast_path = log_dir / f"session{suffix}.cast"
        self._raw = open(self.raw_path, "wb", buffering=CAST_BATCH_CHARS)  # flushed with the cast: within CAST_BATCH_S
        self._cast = open(self.cast_path, "wb", buffering=0)  # whole lines only: a killed run leaves a valid cast
        header = {
            "version": 2,
            "width": cols,
            "height": rows,
            "timestamp": int(clock.utcnow().timestamp()),
            "command": " ".join(command),
            "env": {"TERM": "xterm-256color", "SHELL": os.environ.get("SHELL", "/bin/sh")},
        }
        self._cast.write(json.dumps(header).encode() + b"\n")
        self.bytes_out = 0
        self._pending: list[str] = []  # output text not yet in the cast, its bytes, and when it started
        self._pending_raw: list[bytes] = []
        self._pending_at = 0.0
        self._pending_chars = 0

    def _event(self, t: float, code: str, text: str, raw: bytes = b"") -> None:
        head = f"[{round(t - self._t0, 6)}, {json.dumps(code)}, ".encode()
        if raw and not raw.translate(None, _PLAIN):
            # Printable ASCII and line ends (most floods): the JSON string built with a few byte replaces,
            # about twice as fast as json.dumps and the same text.
            if b"\\" in raw:
                raw = raw.replace(b"\\", b"\\\\")
            if b'"' in raw:
                raw = raw.replace(b'"', b'\\"')
            body = b'"' + raw.replace(b"\r", b"\\r").replace(b"\n", b"\\n") + b'"'
        else:
            body = json.dumps(text, ensure_ascii=False).encode()
        self._cast.write(head + body + b"]\n")

    def output(self, raw: bytes, text: str) -> None:
        """Record what the program wrote: raw bytes exactly, decoded text for the cast.

        Output that streams in is joined into one cast event per CAST_BATCH_S (a flood
        would otherwise cost one JSON line per read); its time is that of its first byte.
        """
        self._raw.write(raw)
        self.bytes_out += len(raw)
        if not text:
            return
        now = self._clock.monotonic()
        if not self._pending:
            self._pending_at = now
        self._pending.append(text)
        self._pending_raw.append(raw)
        self._pending_chars += len(text)
        if now - self._pending_at >= CAST_BATCH_S or self._pending_chars >= CAST_BATCH_CHARS:
            self.flush()

    def input(self, data: bytes) -> None:
        self.flush()
        self._event(self._clock.monotonic(), "i", data.decode("utf-8", errors="replace"))

    def flush(self) -> None:
        """Write pending output to the cast and the raw file; called when output pauses, before input, and at the end."""
        self._raw.flush()
        if self._pending:
            self._event(self._pending_at, "o", "".join(self._pending), b"".join(self._pending_raw))
            self._pending.clear()
            self._pending_raw.clear()
            self._pending_chars = 0

    def close(self) -> None:
        if not self._cast.closed:
            self.flush()
        for fh in (self._raw, self._cast):
            if not fh.closed:
                fh.flush()
                fh.close()
