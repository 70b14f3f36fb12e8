"""Every byte typed belongs to a recorded decision, as a property of the pure PTY pilot (hypothesis drives it with
made-up screens, kernel words, decisions and a fake clock).

A Type effect comes with the answer it types (an `answer` record in the same batch: a rule, a model, the policy, a
person, the plan's send), or it is an Enter re-sent on the same, unchanged screen the answer's last key went out on.
dialog's checklist, drawn after its menu with the same extracted row, got an Enter with no decision: the preset was
accepted and the build configured wrongly.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from cursorpilot.decide.deliver import Record, RunCounts
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.detect.menu import parse
from cursorpilot.detect.profiles import load_profile
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.machine import State
from cursorpilot.channels.pty.facts import Ask, AskHuman, Decided, GoalChecked, PilotConfig, Screen, ScreenFacts, Started, Type, Typed
from cursorpilot.channels.pty.pilot import Pilot


def screen(p, now, c, f):
    """A classified screen, as the loop hands it to the pilot."""
    return p.handle(now, Screen(c, f))

GENERIC = load_profile("generic")
MENU = parse("Board:\n❯ cm4\n  pi4")
SCREENS = {
    "yn": Classification(state="question", rule_id="generic.yes_no", block="Go? [y/n]", key="yn@3:Go? [y/n]", anchor_row=3),
    "row": Classification(state="input", rule_id="generic.waiting_input", block="│   <", key="w@16:│ <", anchor_row=16),
    "menu": Classification(state="menu", rule_id="generic.menu", block="Board:\n❯ cm4\n  pi4", key="m@1:board", anchor_row=1,
                           submit=False, menu=MENU),
    "unknown": Classification(state=ScreenKind.UNKNOWN),
}
JUDGED = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="a screen", key="u@0:a screen", asks=True)

step = st.one_of(
    st.tuples(st.just("screen"), st.sampled_from(sorted(SCREENS)), st.integers(1, 4), st.sampled_from(["reading", "polling", "busy", None]),
              st.floats(0.0, 5.0)),
    st.tuples(st.just("decide"), st.sampled_from(["answer", "keys", "empty", "wait", "escalate"])),
    st.tuples(st.just("typed"), st.integers(1, 4)),
    st.tuples(st.just("later"), st.floats(0.01, 8.0)),
    st.tuples(st.just("wake")),  # to when the pilot asked to look again (an Enter falls due, a screen is judged)
)


@settings(max_examples=1000, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=40), interactive=st.booleans())
def test_every_key_belongs_to_a_decision_or_is_an_enter_on_the_unchanged_screen(steps, interactive):
    p = Pilot(PilotConfig(GENERIC), RunCounts(interactive=interactive))
    p.handle(0.0, Started())
    now, content, asked, sent_on = 0.0, 1, [], None  # sent_on: the screen the last key of an answer went out on
    for kind, *args in steps:
        if p.done:
            break
        if kind == "screen":
            name, content, tty, quiet = args
            out = screen(p, now, SCREENS[name], ScreenFacts("", content, quiet, tty, Modes(), judged=JUDGED))
        elif kind == "decide":
            if not asked:
                continue
            token = asked.pop()
            d = {"answer": Decision(Verdict.ANSWER, text="cm4", source="m"),
                 "keys": Decision(Verdict.ANSWER, text="<down><enter>", source="m", submit=False),
                 "empty": Decision(Verdict.ANSWER, text="", source="m"),
                 "wait": Decision(Verdict.WAIT, source="m", why="w"),
                 "escalate": Decision.escalate("x")}[args[0]]
            out = p.handle(now, Decided(token, d, content, Modes(), SCREENS["yn"]))
        elif kind == "typed":  # the loop says so once the last key is out (the pilot is answering then)
            answering = p.state == State.ANSWERING
            out = p.handle(now, Typed(args[0]))
            if answering:
                sent_on = args[0]
        elif kind == "wake":
            now = max(now, p.wake_at() or now)
            continue
        else:
            now += args[0]
            continue
        asked += [e.token for e in out if isinstance(e, (Ask, AskHuman))]
        types = [e for e in out if isinstance(e, Type)]
        if not types:
            continue
        answered = [e for e in out if isinstance(e, Record) and e.type in ("answer", "would_send")]
        retried = [e for e in out if isinstance(e, Record) and e.type == "enter_retry"]
        assert answered or retried, f"keys {types} typed with no decision"
        if retried and not answered:
            assert kind == "screen" and content == sent_on, "Enter re-sent on a screen that changed since the answer"
            assert [w.data for t in types for w in t.writes] == [b"\r"]
