"""No question record without the facts that classified it (issue 39), as a property of the pure PTY pilot: hypothesis
drives it with made-up screens, kernel words, decisions and a fake clock.

Every question handed to the decision path (an Ask, but a turn end's) has a `screen_state` record for that very prompt,
in the same batch or before it, and that record says what classified it: the kernel's word and the quiet it was read
with, then what the reader saw (the terminal's mode, the cursor, a menu's highlight). A wizard's bold question read as
a menu's highlighted row had nothing in its record to say why.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from cursorpilot.decide.deliver import Record, RunCounts
from cursorpilot.decide.question import Decision, Kind, Verdict
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.detect.menu import parse
from cursorpilot.detect.profiles import load_profile
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.facts import Ask, Decided, PilotConfig, Screen, ScreenFacts, Started, Typed
from cursorpilot.channels.pty.pilot import Pilot

GENERIC = load_profile("generic")
MENU = parse("Board:\n❯ cm4\n  pi4")
SCREENS = {
    "yn": Classification(state="question", rule_id="generic.yes_no", block="Go? [y/n]", key="yn@3:Go? [y/n]", anchor_row=3,
                         facts=("canonical mode (reads a line)", "cursor shown, after a complete prompt")),
    "field": Classification(state="input", rule_id="generic.waiting_input", block="Name", key="w@5:Name", anchor_row=5),
    "menu": Classification(state="menu", rule_id="generic.menu", block="Board:\n❯ cm4\n  pi4", key="m@1:board", anchor_row=1,
                           submit=False, menu=MENU, facts=("highlight: a marker in front of the row",)),
    "unknown": Classification(state=ScreenKind.UNKNOWN),
}
JUDGED = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="a screen", key="u@0:a screen", asks=True)

step = st.one_of(
    st.tuples(st.just("screen"), st.sampled_from(sorted(SCREENS)), st.integers(1, 4), st.sampled_from(["reading", "polling", "busy", None]),
              st.floats(0.0, 5.0), st.sampled_from([None, 0, 2])),
    st.tuples(st.just("decide"), st.sampled_from(["answer", "wait", "escalate", "rules-miss"])),
    st.tuples(st.just("typed"), st.integers(1, 4)),
    st.tuples(st.just("later"), st.floats(0.01, 8.0)),
    st.tuples(st.just("wake")),
)


@settings(max_examples=600, deadline=None)
@given(steps=st.lists(step, min_size=1, max_size=40))
def test_every_question_asked_has_a_record_that_says_which_facts_classified_it(steps):
    p = Pilot(PilotConfig(GENERIC), RunCounts(interactive=True))
    p.handle(0.0, Started())
    now, content, asked, recorded = 0.0, 1, [], {}  # recorded: prompt key -> the facts its record gave
    for kind, *args in steps:
        if p.done:
            break
        if kind in ("wake", "later"):  # the clock moves: to when the pilot asked to look again, or by some seconds
            now = max(now, p.wake_at() or now) if kind == "wake" else now + args[0]
            continue
        if kind == "screen":
            name, content, tty, quiet, unread = args
            out = p.handle(now, Screen(SCREENS[name], ScreenFacts("", content, quiet, tty, Modes(), judged=JUDGED, unread=unread)))
        elif kind == "decide":
            if not asked:
                continue
            d = {"answer": Decision(Verdict.ANSWER, text="y", source="m"), "wait": Decision(Verdict.WAIT, source="m", why="w"),
                 "escalate": Decision.escalate("x", "m"), "rules-miss": Decision.escalate("no rule", "rules")}[args[0]]
            out = p.handle(now, Decided(asked.pop(), d, content, Modes(), None))
        else:
            out = p.handle(now, Typed(args[0]))
        for e in out:
            if isinstance(e, Record) and e.type == "screen_state" and e.fields.get("state") in ("question", "input", "menu", ScreenKind.UNKNOWN):
                if e.fields.get("rule_id"):
                    facts = e.fields.get("facts") or []
                    assert any(f.startswith("kernel: ") for f in facts) and any(f.startswith("quiet ") for f in facts), e.fields
                    key = next((c.key for c in [*SCREENS.values(), JUDGED] if c.rule_id == e.fields["rule_id"]), None)
                    recorded[key] = facts
            if isinstance(e, Ask) and e.kind != Kind.TURN_END:
                assert e.c.key in recorded, f"{e.c.key} asked with no record of what classified it"
                assert all(f in recorded[e.c.key] for f in e.c.facts)  # the reader's own facts are in it
        asked += [e.token for e in out if isinstance(e, Ask)]
