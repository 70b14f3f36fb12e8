"""Raw session recording: every byte to session.raw, and an asciicast v2 file.

``asciinema play <log>/session.cast`` replays the session; input events ("i") show
what cursor-pilot typed (a secret as its mask: its length and a keyed tag).

The cast is what people share (the report embeds it), so its output events are redacted like the transcript:
a `--secret` value, a provider key, a secret typed during the run that the program echoes or prints back. Each
unfinished line waits for the next event (redact.Stream), so a value split between two writes is found too.
session.raw keeps every byte as the program wrote it.

Reading the pty must never wait for the cast. A pty buffers about 18 KB, so every
microsecond spent per read stalls the program once that is full. While output streams,
only session.raw is written (a buffered copy) and the cast keeps an index: for each
CAST_BATCH_S of output, its first byte's time and where it ends in session.raw. The
JSON events are written from session.raw once output has paused for CAST_QUIET_S, a
slice at a time, before anything is typed, and at the end.
"""

from __future__ import annotations

import codecs
import json
import os
from collections import deque
from pathlib import Path

from cursorpilot.clock import Clock
from cursorpilot.records.redact import Redactor, Stream
from cursorpilot.records.secret import masked


_PLAIN = bytes(range(0x20, 0x7F)) + b"\r\n"
CAST_BATCH_S = 0.02  # output within this long of an event's first byte joins that event
CAST_BATCH_BYTES = 256 * 1024  # the most one cast event holds
CAST_QUIET_S = 0.02  # output paused this long: the cast catches up
CAST_SLICE_BYTES = 1024 * 1024  # the most one catch-up converts, so reading resumes within a few ms
CAST_MAX_LAG = 1024  # pending events beyond this are converted even while output streams (bounded memory)


class SessionRecorder:
    def __init__(self, log_dir: Path, clock: Clock, cols: int, rows: int, command: list[str], step: int = 1,
                 redactor: Redactor | None = None):
        """Step 1 writes session.raw/.cast; later steps of a plan write session-NN.raw/.cast."""
        self._redactor = redactor
        self._stream = Stream(redactor.text, lambda: redactor.longest) if redactor is not None else None
        self._clock = clock
        self._t0 = clock.monotonic()
        suffix = "" if step == 1 else f"-{step:02d}"
        self.raw_path = log_dir / f"session{suffix}.raw"
        self.cast_path = log_dir / f"session{suffix}.cast"
        self._raw = open(self.raw_path, "wb", buffering=CAST_BATCH_BYTES)  # flushed per event: within CAST_BATCH_S
        self._raw_in = open(self.raw_path, "rb", buffering=0)  # the cast reads its text back from here
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
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.bytes_out = 0  # bytes in session.raw
        self._cast_at = 0  # bytes of session.raw already in the cast
        self._events: deque[list] = deque()  # [first byte time, end offset in session.raw], not yet in the cast
        self._last_output = 0.0

    def output(self, raw: bytes) -> None:
        """Record what the program wrote: the bytes now, the cast event's index entry."""
        if not raw:
            return
        now = self._clock.monotonic()
        self._raw.write(raw)
        self.bytes_out += len(raw)
        self._last_output = now
        events = self._events
        if events and now - events[-1][0] < CAST_BATCH_S and self.bytes_out - self._event_start() <= CAST_BATCH_BYTES:
            events[-1][1] = self.bytes_out
            return
        self._raw.flush()  # a new event starts: session.raw is never more than one event behind
        events.append([now, self.bytes_out])
        if len(events) > CAST_MAX_LAG:
            self._convert(CAST_SLICE_BYTES)

    def _event_start(self) -> int:
        return self._events[-2][1] if len(self._events) > 1 else self._cast_at

    @property
    def due(self) -> float | None:
        """When idle() has cast events to write: once output has been quiet for CAST_QUIET_S."""
        return self._last_output + CAST_QUIET_S if self._events else None

    def idle(self) -> None:
        """Output paused (a read found nothing): write a slice of the pending cast events, if it paused long enough."""
        if self._events and self._clock.monotonic() - self._last_output >= CAST_QUIET_S:
            self._convert(CAST_SLICE_BYTES)

    def input(self, data: bytes, secret: bool = False) -> None:
        """What was typed, as an input event; a secret as its mask (its length and hash), never in clear."""
        self.flush()
        text = data.decode("utf-8", errors="replace")
        if secret and self._redactor is not None:
            self._redactor.add(text.rstrip("\r\n"))  # the program may show it again: its echo, a summary
        self._event(self._clock.monotonic(), "i", masked(text) if secret else text)

    def flush(self) -> None:
        """Everything recorded so far into session.raw and the cast; before typing, and at the end."""
        self._convert(None)
        for t, text in self._stream.flush() if self._stream is not None else ():
            self._event(t, "o", text)
        self._raw.flush()

    def _convert(self, budget: int | None) -> None:
        """Write pending output events to the cast, reading their bytes back from session.raw."""
        if not self._events:
            return
        self._raw.flush()
        done = 0
        while self._events and (budget is None or done < budget):
            t, end = self._events[0]
            size = min(end - self._cast_at, CAST_BATCH_BYTES if budget is None else min(CAST_BATCH_BYTES, budget - done))
            self._raw_in.seek(self._cast_at)
            raw = self._raw_in.read(size)
            self._cast_at += len(raw)
            done += len(raw)
            text = self._decoder.decode(raw)
            if text and self._stream is not None:
                for at, piece in self._stream.feed(t, text):
                    self._event(at, "o", piece, raw if piece == text else b"")
            elif text:
                self._event(t, "o", text, raw)
            if self._cast_at >= end or not raw:
                self._events.popleft()

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

    def close(self) -> None:
        if not self._cast.closed:
            self.flush()
        for fh in (self._raw, self._cast, self._raw_in):
            if not fh.closed:
                fh.close()
