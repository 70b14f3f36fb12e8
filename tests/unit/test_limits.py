"""A usage limit's reset read from each agent's own words (as the real CLIs showed them, offline), and what a limit leads
to (decide/limits.py): wait until the reset, back off when there is none, never past the deadline, never spinning."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from cursorpilot.decide.limits import BACKOFF, MARGIN, LimitConfig, Limits, from_epoch, is_limit, read_reset
from cursorpilot.errors import ExitCode

UTC = timezone.utc
WALL = datetime(2026, 11, 28, 23, 50, 15, tzinfo=UTC)
CLAUDE = ("  ⎿  You've hit your 5-hour limit · resets 11:52pm (UTC)\n● Usage limit reached · set to continue automatically at 11:52pm\n"
          "  ⚠ Usage limit reached · limit resets 11:52pm\n    Continuing automatically at 11:52pm · Esc to cancel")
CODEX = ("■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/\n"
         "usage to purchase more credits or try again at 11:53 PM.")
GEMINI = "│ Usage limit reached for all Pro models.\n│ Access resets at 11:59 PM UTC.\n│ /stats model for usage details"


@pytest.mark.parametrize("words, at, resolution", [
    (CLAUDE, "2026-11-28T23:52:00+00:00", 60),
    (CODEX, "2026-11-28T23:53:00+00:00", 60),
    (GEMINI, "2026-11-28T23:59:00+00:00", 60),
    ("Quota exceeded. Please retry in 45.5s.", "2026-11-28T23:51:00.500000+00:00", 1),
    ("rate limited: resets in 2h 30m", "2026-11-29T02:20:15+00:00", 60),
    ("You've hit your limit · resets 12:49am (UTC)", "2026-11-29T00:49:00+00:00", 60),  # past midnight: tomorrow's
    ("usage limit, resets 3pm", "2026-11-29T15:00:00+00:00", 60),
    ("spend limit reached · resets Aug 8", "2027-08-08T00:00:00+00:00", 86400),
    ("limit; retry after 2026-11-29T01:00:00Z", "2026-11-29T01:00:00+00:00", 1),
])
def test_the_reset_is_read_from_each_agents_words(words, at, resolution):
    r = read_reset(words, WALL)
    assert r is not None and (r.at.isoformat(), r.resolution) == (at, resolution)


@pytest.mark.parametrize("words", ["You have exhausted your daily quota on this model.", "retry 3 times", "at 10 files, 3 failed",
                                   "API Error: Request rejected (429) · Rate limited"])
def test_words_with_no_reset_time_give_none(words):
    assert read_reset(words, WALL) is None


def test_the_last_reset_said_counts_an_older_limit_above_it_does_not():
    assert read_reset("resets 10:00pm (UTC)\n...\nresets 11:55pm (UTC)", WALL).at.minute == 55


def test_a_time_of_day_is_the_agents_local_one_unless_it_says_utc():
    here = WALL.astimezone(timezone(timedelta(hours=-8)))  # 15:50 in the agent's zone
    assert read_reset("try again at 4:10 PM", here).at == datetime(2026, 11, 28, 16, 10, tzinfo=here.tzinfo)
    assert read_reset("Access resets at 11:59 PM UTC", here).at == datetime(2026, 11, 28, 23, 59, tzinfo=UTC)


@pytest.mark.parametrize("words", ["You've hit your usage limit", "API Error: 429 Too Many Requests", "RESOURCE_EXHAUSTED",
                                   "You have exhausted your daily quota on this model.", "This request would exceed your rate limit"])
def test_limit_words(words):
    assert is_limit(words)


@pytest.mark.parametrize("words", ["Error: ENOENT: no such file", "the build failed", "Invalid API key"])
def test_not_limit_words(words):
    assert not is_limit(words)


def test_a_readable_reset_is_waited_for_to_the_end_of_the_minute_shown():
    limits = Limits(LimitConfig())
    hit = limits.hit(100.0, WALL, CODEX)  # 11:53 PM, shown to the minute: the reset is before 11:54
    assert hit.action == "wait" and hit.reset == "2026-11-28T23:54:00+00:00"
    assert hit.wait == pytest.approx(225 + MARGIN) and hit.until == pytest.approx(100 + 225 + MARGIN)
    assert "try again at 11:53 PM" in hit.why and "3m47s" in hit.why and limits.waiting
    assert limits.over(400.0) == 300.0 and not limits.waiting


def test_an_exact_reset_from_the_stream():
    hit = Limits(LimitConfig()).hit(0.0, WALL, "You've hit your 5-hour limit", reading=from_epoch(WALL.timestamp() + 90, WALL, "resetsAt"))
    assert hit.wait == pytest.approx(91 + MARGIN)


def test_no_readable_reset_backs_off_doubling_and_capped_never_spinning():
    limits = Limits(LimitConfig())
    waits = [limits.hit(0.0, WALL, "You have exhausted your daily quota on this model.").wait for _ in range(8)]
    assert waits == [*BACKOFF, BACKOFF[-1], BACKOFF[-1]] and all(w >= BACKOFF[0] for w in waits)
    limits.progressed()
    assert limits.hit(0.0, WALL, "quota").wait == BACKOFF[0]


def test_a_reset_that_has_passed_but_the_limit_holds_backs_off():
    hit = Limits(LimitConfig()).hit(0.0, WALL, "try again at 11:40 PM")
    assert hit.action == "wait" and hit.wait == BACKOFF[0] and "backing off" in hit.why


def test_a_reset_later_than_the_deadline_stops_saying_when_it_resets():
    hit = Limits(LimitConfig(deadline=60.0, deadline_reason="--max-wall 1m")).hit(0.0, WALL, CODEX)
    assert hit.action == "stop" and hit.code == ExitCode.LIMIT and "--max-wall 1m" in hit.why and "11:53 PM" in hit.why


def test_a_backoff_is_cut_to_the_time_left_and_none_left_stops():
    assert Limits(LimitConfig(deadline=20.0)).hit(0.0, WALL, "quota").wait == 20.0
    assert Limits(LimitConfig(deadline=1.0)).hit(0.0, WALL, "quota").action == "stop"


def test_a_reset_beyond_a_day_stops_without_a_deadline():
    assert Limits(LimitConfig()).hit(0.0, WALL, "spend limit reached · resets Aug 8").action == "stop"


def test_on_limit_stop_and_switch_model():
    assert Limits(LimitConfig(on_limit="stop")).hit(0.0, WALL, CODEX).code == ExitCode.LIMIT
    assert Limits(LimitConfig(on_limit="switch-model")).hit(0.0, WALL, GEMINI, can_switch=True).action == "switch"
    assert Limits(LimitConfig(on_limit="switch-model")).hit(0.0, WALL, CODEX).action == "wait"  # nothing to switch to: it waits
