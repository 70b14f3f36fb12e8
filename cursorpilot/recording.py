"""Raw session recording: every byte to session.raw, and an asciicast v2 file.

``asciinema play <log>/session.cast`` replays the session; input events ("i") show
what cursor-pilot typed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cursorpilot.clock import Clock


class SessionRecorder:
    def __init__(self, log_dir: Path, clock: Clock, cols: int, rows: int, command: list[str], step: int = 1):
        """Step 1 writes session.raw/.cast; later steps of a plan write session-NN.raw/.cast."""
        self._clock = clock
        self._t0 = clock.monotonic()
        suffix = "" if step == 1 else f"-{step:02d}"
        self.raw_path = log_dir / f"session{suffix}.raw"
        self.cast_path = log_dir / f"session{suffix}.cast"
        self._raw = open(self.raw_path, "wb", buffering=0)
        self._cast = open(self.cast_path, "w", encoding="utf-8", buffering=1)
        header = {
            "version": 2,
            "width": cols,
            "height": rows,
            "timestamp": int(clock.utcnow().timestamp()),
            "command": " ".join(command),
            "env": {"TERM": "xterm-256color", "SHELL": os.environ.get("SHELL", "/bin/sh")},
        }
        self._cast.write(json.dumps(header) + "\n")
        self.bytes_out = 0

    def _event(self, code: str, text: str) -> None:
        t = round(self._clock.monotonic() - self._t0, 6)
        self._cast.write(json.dumps([t, code, text], ensure_ascii=False) + "\n")

    def output(self, raw: bytes, text: str) -> None:
        """Record what the program wrote: raw bytes exactly, decoded text for the cast."""
        self._raw.write(raw)
        self.bytes_out += len(raw)
        if text:
            self._event("o", text)

    def input(self, data: bytes) -> None:
        self._event("i", data.decode("utf-8", errors="replace"))

    def flush(self) -> None:
        self._cast.flush()

    def close(self) -> None:
        for fh in (self._raw, self._cast):
            if not fh.closed:
                fh.flush()
                fh.close()
