"""An agent's usage or rate limit, PURE and shared by the three channels, so that a limit at 1 a.m. means the same wait
whether Claude Code shows it on its screen, Gemini CLI answers an ACP prompt with it or Claude's print mode reports it.

A limit is not a failure: the work waits for the reset. Each channel's pilot tells `Limits` what the agent said (its
words, and the reset time when its stream gives one exactly) and when (`now`, monotonic; `wall`, the wall clock the
agent's own times are read against); `Limits` answers with what to do (`Hit`): wait until a monotonic time and then
continue the same session, switch model, or stop. The reset time is read from the agent's own words (`read_reset`:
"resets 3pm", "try again at 3:04 PM", "Access resets at 11:59 PM UTC", "retry in 37.5s", "resets in 2h 30m"); a limit
with no readable time, or one whose time has passed and still holds, backs off (BACKOFF, capped), never spins. No wait
goes past the step's deadline (--timeout, --max-wall) or MAX_WAIT: then the step stops (exit 4), saying when the limit
resets. Dates come from the times given here (`datetime.fromtimestamp`), never from a clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, UTC

from cursorpilot.errors import ExitCode

LIMIT_ERRORS = frozenset({"usage_limit", "rate_limit"})  # a detector rule's `error` that is a limit, not a failure
ON_LIMIT = ("wait", "stop", "switch-model")
CONTINUE = "continue"  # what the agent is told once its limit has reset (or once it was interrupted, stuck)
BACKOFF = (30.0, 60.0, 120.0, 300.0, 600.0, 900.0)  # a limit with no readable reset: the waits in a row, then the last
MAX_WAIT = 24 * 3600.0  # the longest one wait may be, whatever the deadlines
MARGIN = 2.0  # past the end of the reset the agent showed: its clock and ours may differ by a second

_WORDS = re.compile(r"usage limit|rate.?limit|\b429\b|quota|RESOURCE_EXHAUSTED|hit your\b.{0,20}\blimit|limit reached"
                    r"|too many requests|overloaded", re.I)


def is_limit(text: str) -> bool:
    """Do an agent's own words (an error it answered with, its failed turn's result) say it hit a usage or rate limit?"""
    return bool(_WORDS.search(text or ""))


# -- reading the reset ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ResetReading:
    """A reset time read from an agent's words: `at` (when its shown time begins) and `resolution` (how coarse it is:
    "3:04 PM" is any time in that minute), and the words read."""

    at: datetime
    resolution: float
    phrase: str

    @property
    def ends(self) -> datetime:
        """The latest the reset can be, given how it was shown."""
        return self.at + timedelta(seconds=self.resolution)


_UNIT = {"ms": 0.001, "millisecond": 0.001, "s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60,
         "h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400}
_AMOUNT = r"\d+(?:\.\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b"
_RELATIVE = re.compile(rf"(?:reset|retry|try again|available|again|wait|continu)\w*\W{{0,3}}(?:in|after)\s+((?:{_AMOUNT}[\s,]*(?:and\s+)?)+)", re.I)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_CLOCK = re.compile(
    r"(?:reset|retry|try again|available|again|continu)\w*(?:\s+automatically)?\W{0,3}(?:at|on|after)?\s*"
    r"(?:(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s*(?:at\s+)?)?"
    r"(?:(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?\s?m\.?)?(?![\d:])"
    r"\s*(?:\(?(?P<tz>UTC|GMT|Z\b)\)?)?)?", re.I)
_ISO = re.compile(r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)")


def _seconds(amounts: str) -> float:
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", amounts, re.I):
        unit = unit.lower()
        total += float(number) * _UNIT.get(unit, _UNIT.get(unit.rstrip("s"), 0))
    return total


def _relative(m: re.Match[str], wall: datetime) -> ResetReading | None:
    seconds = _seconds(m.group(1))
    if seconds <= 0:
        return None
    finest = min(_UNIT.get(u.lower(), _UNIT.get(u.lower().rstrip("s"), 1)) for u in re.findall(r"[a-z]+", m.group(1), re.I))
    return ResetReading(wall + timedelta(seconds=seconds), max(1.0, min(finest, 60.0)), m.group(0).strip())


def _clock(m: re.Match[str], wall: datetime) -> ResetReading | None:
    """A time of day (and maybe a date) the agent shows, in its zone: UTC when it says so, else the local one (the
    agent runs beside the pilot, in its zone). A time of day already well past is tomorrow's."""
    hour, minute, ampm, month = m.group("hour"), m.group("minute"), m.group("ampm"), m.group("month")
    if hour is None and month is None:
        return None
    if hour is not None and minute is None and not ampm:
        return None  # a bare number ("retry 3 times") is no time
    zone = UTC if m.group("tz") else wall.tzinfo or UTC
    local = wall.astimezone(zone)
    h = int(hour) if hour is not None else 0
    if ampm:
        if h > 12:
            return None
        h = h % 12 + (12 if ampm.lower().startswith("p") else 0)
    if h > 23 or (minute is not None and int(minute) > 59):
        return None
    day = local
    if month is not None:
        try:
            day = local.replace(month=_MONTHS.index(month.lower()[:3]) + 1, day=int(m.group("day")))
        except ValueError:
            return None
        if day.date() < local.date() - timedelta(days=1):
            day = day.replace(year=day.year + 1)
    at = day.replace(hour=h, minute=int(minute or 0), second=0, microsecond=0)
    resolution = 60.0 if hour is not None else 86400.0
    if month is None and at + timedelta(seconds=resolution) < local - timedelta(hours=1):
        at += timedelta(days=1)  # "resets 12:49am" seen at 11:50pm
    return ResetReading(at, resolution, m.group(0).strip())


def read_reset(text: str, wall: datetime) -> ResetReading | None:
    """The reset time an agent's words give, read against `wall` (an aware datetime: the agent's times of day are in its
    zone). The last one said counts: a screen may still show an older limit above the new one."""
    found: list[tuple[int, ResetReading]] = []
    for m in _RELATIVE.finditer(text):
        r = _relative(m, wall)
        if r is not None:
            found.append((m.start(), r))
    for m in _CLOCK.finditer(text):
        r = _clock(m, wall)
        if r is not None:
            found.append((m.start(), r))
    for m in _ISO.finditer(text):
        try:
            at = datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
        except ValueError:
            continue
        found.append((m.start(), ResetReading(at if at.tzinfo else at.replace(tzinfo=wall.tzinfo), 1.0, m.group(1))))
    return max(found, key=lambda f: f[0])[1] if found else None


def from_epoch(epoch: float, wall: datetime, phrase: str) -> ResetReading:
    """An exact reset an agent's stream gives (Claude's rate_limit_event: resetsAt)."""
    return ResetReading(datetime.fromtimestamp(epoch, wall.tzinfo or UTC), 1.0, phrase)


# -- what a limit leads to -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LimitConfig:
    """How a step meets a limit: --on-limit, and the latest it may wait to (the earlier of --timeout and --max-wall)."""

    on_limit: str = "wait"  # wait | stop | switch-model
    deadline: float | None = None  # monotonic
    deadline_reason: str = ""  # "--timeout 2h", "--max-wall 8h"
    max_wait: float = MAX_WAIT


def within(config: LimitConfig, deadline: float | None, reason: str) -> LimitConfig:
    """The config bounded by the step's own deadline too: the earlier one wins."""
    if deadline is None or (config.deadline is not None and config.deadline <= deadline):
        return config
    return replace(config, deadline=deadline, deadline_reason=reason)


@dataclass(frozen=True, slots=True)
class Hit:
    """What a limit leads to: `wait` until `until` (monotonic), then continue; `switch` to the model the agent offers;
    `stop` with `code`. `why` says it in words for the person watching, the record and the run's reason."""

    action: str  # wait | switch | stop
    why: str
    until: float | None = None
    wait: float = 0.0
    reset: str | None = None  # the reset as read (ISO 8601), if it was
    phrase: str | None = None  # the agent's words it was read from
    code: ExitCode = ExitCode.OK


def _span(seconds: float) -> str:
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


@dataclass(slots=True)
class Limits:
    """One step's limits: the hits in a row (a limit that holds after its reset backs off further), the wait under way."""

    config: LimitConfig
    hits: int = 0  # in a row, since the agent last got on with its work
    started: float | None = None  # the wait under way began then (monotonic)
    until: float | None = None

    @property
    def waiting(self) -> bool:
        return self.until is not None

    def hit(self, now: float, wall: datetime, words: str, *, reading: ResetReading | None = None, can_switch: bool = False) -> Hit:
        """The agent hit a limit (its `words`; `reading`: an exact reset its stream gave): what to do now."""
        self.hits += 1
        reading = reading or read_reset(words, wall)
        reset = reading.ends.isoformat(timespec="seconds") if reading else None
        phrase = reading.phrase if reading else None
        told = f"the limit resets {reading.phrase!r}" if reading else "it gives no reset time"
        if self.config.on_limit == "stop":
            return Hit("stop", f"usage limit: {told}; --on-limit stop", reset=reset, phrase=phrase, code=ExitCode.LIMIT)
        if self.config.on_limit == "switch-model" and can_switch:
            return Hit("switch", f"usage limit: {told}; switching to the model the agent offers (--on-limit switch-model)",
                       reset=reset, phrase=phrase)
        wait = (reading.ends - wall).total_seconds() + MARGIN if reading else 0.0
        if wait <= MARGIN:  # no time, or one that has passed and the limit still holds
            wait = BACKOFF[min(self.hits - 1, len(BACKOFF) - 1)]
            how = f"{told}: backing off {_span(wait)} (limit {self.hits} in a row)"
        else:
            how = f"{told}: waiting {_span(wait)}"
        left = min(self.config.max_wait, self.config.deadline - now if self.config.deadline is not None else self.config.max_wait)
        if wait > left:
            if reading is None and left > MARGIN:
                wait, how = left, f"{told}: backing off {_span(left)}, all the time left"
            else:
                bound = self.config.deadline_reason or f"the longest wait ({_span(self.config.max_wait)})"
                return Hit("stop", f"usage limit: {told}, in {_span(wait)}: later than {bound} allows", reset=reset, phrase=phrase,
                           code=ExitCode.LIMIT)
        self.started, self.until = now, now + wait
        return Hit("wait", f"usage limit: {how}, then the same session continues", until=self.until, wait=wait, reset=reset,
                   phrase=phrase)

    def over(self, now: float) -> float:
        """The wait is over (or the agent went on by itself): how long it lasted."""
        waited = now - self.started if self.started is not None else 0.0
        self.started = self.until = None
        return waited

    def progressed(self) -> None:
        """The agent got on with its work (a turn ended, an answer went in): the next limit is a first one again."""
        self.hits = 0
