"""Injected time, so decisions can be tested with a fake clock instead of sleeps."""

from __future__ import annotations

import time
from datetime import datetime, UTC
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def utcnow(self) -> datetime: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def utcnow(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: float = 1000.0):
        self.now = start

    def monotonic(self) -> float:
        return self.now

    def utcnow(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)

    def advance(self, seconds: float) -> None:
        self.now += seconds
