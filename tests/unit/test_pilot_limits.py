"""A usage limit and a stuck turn on an agent's screen (pty/goingon.py), driven with the real agents' screens (captured
offline: tests/data/captures/*-real-*.txt), their profiles' rules and a fake clock: no PTY, no sleeps; and the keyboard
a person takes (cursor-pilot watch --take)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from cursorpilot.decide.deliver import Record, RunCounts, Tell
from cursorpilot.decide.limits import BACKOFF, MARGIN, LimitConfig
from cursorpilot.decide.turns import CheckGoal
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.detect.classifier import Classification, Timing, classify
from cursorpilot.detect.profiles import load_profile
from cursorpilot.detect.snapshot import snapshot_from_text
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.machine import State
from cursorpilot.channels.pty.facts import Ask, AskHuman, Close, Decided, HandedBack, PilotConfig, Screen, ScreenFacts, Started, Taken, Type, Typed
from cursorpilot.channels.pty.pilot import Pilot
from tests.helpers import CAPTURES, capture

BEFORE_RESET = datetime(2026, 11, 29, 1, 3, 30, tzinfo=timezone.utc)  # the captures say "try again at 1:06 AM", "resets 1:06am"
UNTIL = (datetime(2026, 11, 29, 1, 7, tzinfo=timezone.utc) - BEFORE_RESET).total_seconds() + MARGIN  # the end of the minute shown


def shown(agent: str, name: str, text: str | None = None):
    """A real screen of the agent, classified by its profile: (classification, screen text)."""
    profile = load_profile(agent)
    snap = capture(CAPTURES / f"{agent}-real-{name}.txt") if text is None else snapshot_from_text(text)
    return classify(profile, snap, Timing(quiet_for=30)), snap.text()


def pilot(agent: str, interactive: bool = False, **limits) -> Pilot:
    p = Pilot(PilotConfig(load_profile(agent), echo_check=True, limits=LimitConfig(**limits)), RunCounts(interactive=interactive))
    p.handle(0.0, Started())
    p.turn_ends.worked = True  # it was given its task and worked: back at its composer, its turn has ended
    return p


def look(p: Pilot, now: float, seen, wall=BEFORE_RESET, still: float | None = None, content: int = 1, quiet: float = 30.0):
    c, text = seen
    return p.handle(now, Screen(c, ScreenFacts(text, content, quiet, "polling", Modes(), None, False,
                                               wall if wall is None else wall.replace(microsecond=0), still)))


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def records(effects, type_):
    return [e.fields for e in effects if isinstance(e, Record) and e.type == type_]


def typed(effects) -> str:
    return "".join(w.label if w.label.startswith("<") else w.data.decode() for t in of(effects, Type) for w in t.writes)


def test_codex_at_its_usage_limit_waits_for_the_reset_it_shows_then_continues_the_same_session():
    p, limit = pilot("codex"), shown("codex", "usage-limit")
    assert limit[0].rule_id == "codex.usage_limit"
    out = look(p, 0.0, limit)
    (hit,) = records(out, "limit_hit")
    assert hit["reset"] == "2026-11-29T01:07:00+00:00" and hit["phrase"] == "try again at 1:06 AM." and hit["action"] == "wait"
    assert hit["wait_s"] == pytest.approx(UNTIL, abs=0.1) and hit["on_limit"] == "wait"
    assert "try again at 1:06 AM" in of(out, Tell)[0].text and not of(out, Type) and p.wake_at() == pytest.approx(UNTIL)
    assert look(p, 100.0, limit) == []  # meanwhile its composer is no turn end, and nothing is typed
    out = look(p, UNTIL, limit)
    assert typed(out) == "continue<enter>" and p.state == State.ANSWERING
    assert records(out, "limit_waited") == [{"waited_s": pytest.approx(UNTIL, abs=0.1), "how": "continued", "sent": "continue"}]
    assert not records(out, "answer") and p.answers == 0  # no answer of a model or a rule: the pilot's own word


def test_after_the_continue_the_old_limit_in_its_history_is_no_new_limit():
    p, limit = pilot("codex"), shown("codex", "usage-limit")
    look(p, 0.0, limit)
    look(p, UNTIL, limit)
    p.handle(UNTIL + 1, Typed(1))
    after = shown("codex", "after-limit")
    assert after[0].state == "idle"  # "■ You’ve hit your usage limit" still shows above: it is history
    out = look(p, UNTIL + 5, after, content=2)
    assert of(out, CheckGoal) and not records(out, "limit_hit")  # its turn ended: judged as ever


def test_claude_at_its_plans_limit_goes_on_by_itself_at_the_reset_and_is_let_go():
    p, limit = pilot("claude"), shown("claude", "usage-limit")
    assert limit[0].rule_id == "claude.usage_limit"
    assert records(look(p, 0.0, limit), "limit_hit")[0]["reset"] == "2026-11-29T01:07:00+00:00"
    out = look(p, 150.0, shown("claude", "streaming"), still=0.0)  # "Continuing automatically at 1:06am": it did
    assert records(out, "limit_waited")[0]["how"] == "went_on" and not of(out, Type)
    assert p.going_on.waiting is None and p.state == State.RUNNING


def test_claude_rate_limited_with_no_reset_backs_off_then_continues():
    p, limit = pilot("claude"), shown("claude", "rate-limited")
    assert limit[0].rule_id == "claude.rate_limited"
    hit = records(look(p, 0.0, limit), "limit_hit")[0]
    assert hit["reset"] is None and hit["wait_s"] == BACKOFF[0]
    assert not of(look(p, BACKOFF[0] - 1, limit), Type)
    assert typed(look(p, BACKOFF[0], limit)) == "continue<enter>"


def test_gemini_quota_dialog_keeps_trying_after_the_backoff():
    p, dialog = pilot("gemini"), shown("gemini", "usage-limit")
    assert dialog[0].rule_id == "gemini.usage_limit" and dialog[0].menu is not None
    assert records(look(p, 0.0, dialog), "limit_hit")[0]["wait_s"] == BACKOFF[0]
    out = look(p, BACKOFF[0], dialog)
    assert typed(out) == "<enter>" and records(out, "menu_choice")[0]["options"] == ["Keep trying"]
    assert records(out, "limit_waited")[0]["sent"] == "Keep trying"


def test_the_dialog_it_was_told_to_go_on_from_still_shown_while_it_works_is_no_new_limit():
    """Gemini CLI reads the Enter of 'Keep trying' and works (the kernel sees it busy) before it paints the dialog away:
    that frame is the answered dialog, not a second limit (a second wait, a second 'Keep trying' into whatever it shows
    next). The mirror: the same dialog back while it waits on its terminal again is a limit again, backed off further."""
    p, dialog = pilot("gemini"), shown("gemini", "usage-limit")
    look(p, 0.0, dialog)
    assert typed(look(p, BACKOFF[0], dialog)) == "<enter>"
    p.handle(BACKOFF[0] + 0.01, Typed(1))
    c, text = dialog
    busy = p.handle(BACKOFF[0] + 0.2, Screen(c, ScreenFacts(text, 1, 0.2, "busy", Modes(), None, False, BEFORE_RESET)))
    assert not records(busy, "limit_hit") and not of(busy, Type)
    again = p.handle(BACKOFF[0] + 0.5, Screen(c, ScreenFacts(text, 1, 0.5, "busy", Modes(), None, False, BEFORE_RESET)))
    assert not records(again, "limit_hit") and not of(again, Type)
    assert not records(look(p, BACKOFF[0] + 1, shown("gemini", "working"), content=2, quiet=0.1), "limit_hit")
    back = look(p, BACKOFF[0] + 3, dialog, content=3)  # the quota hit again: its dialog, waiting on its terminal
    (hit,) = records(back, "limit_hit")
    assert hit["wait_s"] == BACKOFF[1]


def test_a_limit_that_holds_after_its_continue_backs_off_further_never_spinning():
    p, (c, text) = pilot("claude"), shown("claude", "rate-limited")
    waits, now = [], 0.0
    for i in range(4):  # each time: the limit again, a new message on the screen (a row further down: another question)
        limit = (replace(c, key=f"{c.key}#{i}", anchor_row=c.anchor_row + i), text)
        waits.append(records(look(p, now, limit, content=2 * i), "limit_hit")[0]["wait_s"])
        now = p.wake_at()
        assert typed(look(p, now, limit, content=2 * i)) == "continue<enter>"
        p.handle(now + 1, Typed(2 * i))
        now += 2
    assert waits == list(BACKOFF[:4])


def test_gemini_switches_model_when_asked_to_and_its_dialog_offers_one():
    text = (CAPTURES / "gemini-real-usage-limit.txt").read_text().replace("1. Keep trying", "1. Switch to gemini-2.5-flash")
    dialog = shown("gemini", "", text=text)
    out = look(pilot("gemini", on_limit="switch-model"), 0.0, dialog)
    assert records(out, "limit_hit")[0]["action"] == "switch" and typed(out) == "<enter>"
    assert records(out, "limit_waited")[0] == {"waited_s": 0.0, "how": "switched", "sent": "Switch to gemini-2.5-flash"}


def test_on_limit_stop_ends_the_step_with_exit_4_saying_when_it_resets():
    p = pilot("codex", on_limit="stop")
    out = look(p, 0.0, shown("codex", "usage-limit"))
    assert p.exit_code == ExitCode.LIMIT and "try again at 1:06 AM" in p.reason and of(out, Close)


def test_a_reset_after_the_deadline_stops_now_instead_of_waiting_in_vain():
    p = pilot("codex", deadline=60.0, deadline_reason="--max-wall 1m")
    look(p, 0.0, shown("codex", "usage-limit"))
    assert p.exit_code == ExitCode.LIMIT and "--max-wall 1m" in p.reason


STUCK_AFTER = load_profile("claude").stuck_after_s


def test_a_stalled_claude_is_interrupted_once_told_to_continue_then_escalated():
    p, stalled = pilot("claude"), shown("claude", "stalled")
    assert not of(look(p, 0.0, stalled, still=STUCK_AFTER - 1, quiet=0.1), Type)  # its spinner moves: quiet_for is small
    out = look(p, 1.0, stalled, still=STUCK_AFTER, quiet=0.1)
    assert typed(out) == "<esc>" and records(out, "stuck")[0] == {"rule_id": "claude.working", "still_s": STUCK_AFTER,
                                                                  "action": "interrupt", "keys": ["<esc>"]}
    assert not records(look(p, 2.0, stalled, still=STUCK_AFTER + 1, quiet=0.1), "stuck")  # its stuck clock restarted at the Esc
    idle = shown("claude", "after-limit")
    out = look(p, 5.0, idle, content=2)
    assert typed(out) == "continue<enter>" and records(out, "stuck")[0]["action"] == "continue"
    p.handle(6.0, Typed(2))
    out = look(p, 7.0, stalled, still=STUCK_AFTER, quiet=0.1, content=3)
    assert records(out, "stuck")[0]["action"] == "escalate" and p.exit_code == ExitCode.HUMAN_NEEDED


def test_a_claude_streaming_a_token_a_second_is_left_alone_however_long():
    p, streaming = pilot("claude"), shown("claude", "streaming")
    seen = []
    for t in range(0, int(STUCK_AFTER * 3), 5):
        seen += look(p, float(t), streaming, still=1.0, quiet=0.1)  # its token counter moves: still_for stays small
    assert not of(seen, (Type, AskHuman, Close)) and not records(seen, "stuck") and p.state == State.RUNNING


def test_an_agent_with_no_interrupt_keys_is_escalated_when_stuck_as_before():
    p = Pilot(PilotConfig(load_profile("claude").model_copy(update={"interrupt": []}), limits=LimitConfig()), RunCounts())
    p.handle(0.0, Started())
    look(p, 1.0, shown("claude", "stalled"), still=STUCK_AFTER)
    assert p.exit_code == ExitCode.HUMAN_NEEDED and "stuck" in p.reason


# -- a person takes the keyboard (cursor-pilot watch --take) ------------------------------------------------------------
def test_while_a_person_has_the_keyboard_nothing_is_typed_or_asked_and_back_the_screen_is_judged_afresh():
    yn = Classification(state="question", rule_id="generic.yes_no", block="Continue? [y/n]", key="yn@3:Continue? [y/n]", anchor_row=3)
    p = Pilot(PilotConfig(load_profile("generic")), RunCounts())
    p.handle(0.0, Started())
    seen = (yn, "Continue? [y/n]")
    (ask,) = of(look(p, 0.0, seen), Ask)
    out = p.handle(0.1, Taken("pid 42"))
    assert records(out, "take_over") == [{"action": "taken", "by": "pid 42"}] and p.state == State.RUNNING
    assert p.handle(0.2, Decided(ask.token, Decision(Verdict.ANSWER, text="y", source="rules:1"), 1, Modes(), None)) == []  # too late
    assert look(p, 0.3, seen) == [] and not of(look(p, 30.0, seen), (Type, AskHuman, Close))
    out = p.handle(31.0, HandedBack("pid 42", 6))
    assert records(out, "take_over") == [{"action": "handed_back", "by": "pid 42", "keys": 6}] and p.wake_at() == 31.0
    assert of(look(p, 31.0, seen, content=2), Ask)  # the same question, judged afresh


def test_a_question_answered_before_the_take_is_answered_afresh_after_it():
    yn = Classification(state="question", rule_id="generic.yes_no", block="Continue? [y/n]", key="yn@3:Continue? [y/n]", anchor_row=3)
    p = Pilot(PilotConfig(load_profile("generic")), RunCounts())
    p.handle(0.0, Started())
    (ask,) = of(look(p, 0.0, (yn, "Continue? [y/n]")), Ask)
    p.handle(0.1, Decided(ask.token, Decision(Verdict.ANSWER, text="y", source="rules:1"), 1, Modes(), None))
    p.handle(0.2, Typed(1))
    assert "yn@3:Continue? [y/n]" in p.answered
    p.handle(0.3, Taken("pid 7"))
    p.handle(5.0, HandedBack("pid 7", 0))
    assert not p.answered and of(look(p, 5.0, (yn, "Continue? [y/n]"), content=5), Ask)  # not "asked again", told it was typed


def test_a_dry_run_types_nothing_at_a_limit_its_preview_says_what_would_happen():
    p = Pilot(PilotConfig(load_profile("codex"), limits=LimitConfig()), RunCounts(dry_run=True))
    p.handle(0.0, Started())
    out = look(p, 0.0, shown("codex", "usage-limit"))
    assert not of(out, Type) and p.exit_code == ExitCode.OK and p.reason == "previewed (dry run)"
    assert p.preview["kind"] == "usage_limit" and "try again at 1:06 AM" in p.preview["would_send"]
