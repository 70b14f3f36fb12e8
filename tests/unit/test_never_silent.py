"""The invariant of this pilot, as a property: from the moment a screen stops changing, a decision is recorded within
the deadline whenever the program may be waiting on its terminal, whatever the screen shows. A hint (a rule, a WAIT)
may move the deadline; nothing may remove it. Only the kernel's fact that the program is busy (not waiting on its
terminal) holds a judgement back, and then it says so at once (a working record), and a human is asked at stuck_after.
Driven with made-up facts and a fake clock (hypothesis picks them)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.detect.menu import parse
from cursorpilot.detect.profiles import load_profile
from cursorpilot.keys import Modes
from cursorpilot.decide.deliver import Record, RunCounts
from cursorpilot.channels.pty.facts import Ask, AskHuman, Close, Decided, GoalChecked, PilotConfig, Screen, ScreenFacts, Started, Type, Typed
from cursorpilot.channels.pty.pilot import Pilot


def screen(p, now, c, f):
    """A classified screen, as the loop hands it to the pilot."""
    return p.handle(now, Screen(c, f))

PROFILES = {name: load_profile(name) for name in ("generic", "claude")}
MENU = parse("Pick one\n❯ 1. Yes\n  2. No\n")


def shown(kind: str, profile: str) -> tuple[Classification, Classification]:
    """(what the classifier reports, what a judge of the whole screen reads) for a quiet screen of this kind."""
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id=f"{profile}.undecided", block="the screen", key="u@0:the screen",
                            asks=kind != "unknown_log")
    if kind in ("unknown", "unknown_log"):
        return Classification(state=ScreenKind.UNKNOWN), judged
    if kind == "blank":
        return Classification(state=ScreenKind.UNKNOWN), Classification(state=ScreenKind.UNKNOWN, rule_id="u", block="", key="u@0:")
    if kind == "menu":
        return Classification(state="menu", rule_id=f"{profile}.menu", block="Pick one", key="m@0:Pick one", menu=MENU,
                              submit=False), judged
    if kind == "idle":
        return Classification(state="idle", rule_id="claude.idle", block="❯", key="i@9:❯", anchor_row=9), judged
    return Classification(state=kind, rule_id=f"{profile}.{kind}", block=f"a {kind}?", key=f"{kind}@0"), judged


@settings(max_examples=300, deadline=None)
@given(
    profile=st.sampled_from(sorted(PROFILES)),
    kind=st.sampled_from(["unknown", "unknown_log", "blank", "question", "input", "menu", "idle"]),
    ttys=st.lists(st.sampled_from(["reading", "polling", "busy", None]), min_size=1, max_size=30),
    extra_looks=st.lists(st.floats(min_value=0.0, max_value=30.0), max_size=8),
    answered_before=st.booleans(),
    replies=st.lists(st.sampled_from(["wait", "escalate", "answer"]), min_size=1, max_size=6),
)
def test_a_quiet_screen_always_gets_a_decision_within_the_deadline(profile, kind, ttys, extra_looks, answered_before, replies):
    p = Pilot(PilotConfig(PROFILES[profile]), RunCounts())
    p.handle(0.0, Started())
    c, judged = shown(kind, profile)
    if answered_before:  # the same prompt was answered earlier and is on screen again, unchanged
        p.answered[c.key or ""] = 1
        p.answered[judged.key or ""] = 1
    bound = PROFILES[profile].undecided_after_s  # the longest any hint may delay a judgement of a waiting program
    stuck = PROFILES[profile].stuck_after_s
    looks = sorted({0.45, *extra_looks})
    now, i, decided_at, seen, working = 0.45, 0, None, [], False
    while decided_at is None and now <= stuck + 1.0:
        tty = ttys[min(i, len(ttys) - 1)]
        i += 1
        seen.append((now, tty))
        effects = screen(p, now, c, ScreenFacts("", 1, now, tty, Modes(), judged=judged))
        working = working or any(isinstance(e, Record) and e.type == "screen_state" and e.fields["rule_id"] == "kernel.busy"
                                 for e in effects)
        if any(isinstance(e, (Ask, AskHuman, Close)) or (isinstance(e, Record) and e.type in ("escalation", "answer")) for e in effects) \
                or any(isinstance(e, Type) for e in effects):
            decided_at = now
            break
        wake = p.wake_at()
        assert wake is not None and wake > now or [t for t in looks if t > now], f"silent at {now}: nothing will look again"
        now = min([t for t in (wake, *looks) if t is not None and t > now])
    assert decided_at is not None, f"{kind} under {ttys[:i]}: no decision by stuck_after ({stuck}s)"
    late = [(t, tty) for t, tty in seen[:-1] if t >= bound + 1e-9 and tty != "busy"]
    assert not late, f"{kind}: waiting on its terminal at {late[0][0]}s, past the {bound}s deadline, and not decided"
    if decided_at > bound + 1e-9:
        assert working, f"{kind}: held back past the deadline without a record saying it works"


@settings(max_examples=150, deadline=None)
@given(
    ttys=st.lists(st.sampled_from(["reading", "polling", "busy", None]), min_size=1, max_size=40),
    replies=st.lists(st.sampled_from(["wait", "answer"]), min_size=1, max_size=8),
)
def test_after_a_wait_or_an_answer_the_next_decision_still_has_a_deadline(ttys, replies):
    """A WAIT is a decision, and so is an answer; what follows either is judged again, never left alone."""
    p = Pilot(PilotConfig(PROFILES["generic"]), RunCounts())
    p.handle(0.0, Started())
    c, judged = shown("unknown", "generic")
    now, quiet_from, content, decisions, i = 0.45, 0.0, 1, 0, 0
    horizon = (len(replies) + 1) * PROFILES["generic"].stuck_after_s + 10.0  # a program busy throughout: each judged at stuck_after
    while now < horizon and not p.done and decisions < len(replies):
        tty = ttys[i % len(ttys)]
        i += 1
        effects = screen(p, now, c, ScreenFacts("", content, now - quiet_from, tty, Modes(), judged=judged))
        asks = [e for e in effects if isinstance(e, Ask)]
        if asks:
            reply = replies[decisions]
            decisions += 1
            d = Decision(Verdict.WAIT, source="m", why="w") if reply == "wait" else Decision(Verdict.ANSWER, text="x", source="m")
            out = p.handle(now, Decided(asks[0].token, d, content, Modes(), c))
            if any(isinstance(e, Type) for e in out):
                p.handle(now, Typed(content))
                content += 1  # the program reacted with a new screen that looks the same to the classifier
                quiet_from = now
                judged = Classification(state=ScreenKind.UNKNOWN, rule_id="u", block=f"screen {content}", key=f"u@0:{content}")
        wake = p.wake_at()
        assert p.done or wake is not None, f"silent at {now} after {decisions} decision(s)"
        if p.done:
            break
        now = max(wake, now + 1e-3)
    assert p.done or decisions == len(replies), f"only {decisions} decision(s) by {horizon}s"
