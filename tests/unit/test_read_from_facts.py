"""What the screen asks is read from facts (issue 39), driven with made-up screens and a fake clock: a styled row in a
program that reads a line is emphasis, an uncertain reading never narrows the answer, half a prompt is not a
question, and a question repainted, or whose answer still sits unread, is not answered again."""

from dataclasses import replace

from cursorpilot.decide.accepts import accepted
from cursorpilot.decide.deliver import Record, RunCounts
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.detect.classifier import Classification, Timing, classify, undecided
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.detect.facts import prompt_ended
from cursorpilot.detect.profiles import load_profile
from cursorpilot.detect.snapshot import Snapshot
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.ask import question
from cursorpilot.channels.pty.facts import Ask, AskHuman, Decided, PilotConfig, Screen, ScreenFacts, Started, Type, Typed
from cursorpilot.channels.pty.pilot import Pilot

GENERIC = load_profile("generic")
WIZARD = ["Project name: proj", "", "Licensing:", "",
          "Do you want to license your code permissively under the MIT license?",
          "This means that any other developer or company will be legally allowed to use your code",
          "for free as long as they admit you created it.",
          "Do you want to license your code permissively under the MIT license? y/(n): "]


def wizard(cursor_visible=True) -> Snapshot:
    """bundle gem's question in bold cyan (one colour on the whole row: `styled`), its explanation above it."""
    lines = [*WIZARD, *[""] * (24 - len(WIZARD))]
    last = len(WIZARD) - 1
    return Snapshot(tuple(line.rstrip() for line in lines), len(WIZARD[last]), last, 0, 1, styled=frozenset({last}),
                    cursor_visible=cursor_visible, cols=100)


def test_a_bold_question_in_a_program_that_reads_a_line_is_emphasis_not_a_menu():
    c = classify(GENERIC, wizard(), Timing(quiet_for=1.0, tty="reading", canonical=True))
    assert c.state == "input" and c.menu is None
    assert "canonical mode (reads a line)" in c.facts and "cursor shown, after a complete prompt" in c.facts
    judged = undecided(GENERIC, wizard(), canonical=True)
    assert judged.menu is None and judged.asks


def test_its_mirror_a_styled_row_in_a_program_that_reads_keys_is_the_highlight():
    c = classify(GENERIC, wizard(), Timing(quiet_for=1.0, tty="reading", canonical=False))
    assert c.state == "menu" and c.menu is not None and c.menu.by == "style" and c.options_certain
    assert "the program reads keys (out of canonical mode)" in c.facts
    hidden = classify(GENERIC, wizard(cursor_visible=False), Timing(quiet_for=1.0, tty="reading", canonical=True))
    assert hidden.menu is not None and "the cursor is hidden" in hidden.facts


def test_options_read_from_style_alone_never_narrow_the_answer():
    """The terminal's mode unknown: the styled row may be a highlight or emphasis. The model may type a line, is told
    both readings, and its schema holds no enum of the paragraphs."""
    c = classify(GENERIC, wizard(), Timing(quiet_for=1.0, tty="reading"))
    assert c.state == "menu" and not c.options_certain
    q = question(GENERIC, c, wizard(), [])
    assert q.choices and not q.options_from_facts and q.free_text
    assert accepted(q) == () and any("read from the rows' styling alone" in n for n in q.notes)
    certain = question(GENERIC, classify(GENERIC, wizard(), Timing(quiet_for=1.0, tty="reading", canonical=False)), wizard(), [])
    assert accepted(certain)  # the mirror: options read from facts still narrow it


def test_a_line_that_ends_mid_word_is_no_prompt_while_the_program_polls():
    """`Overwrite the exis`, then 0.3 s of a timer beside the terminal: judged at 80 ms (poll_settle), escalated."""
    half = Snapshot(("Overwrite the exis",) + ("",) * 23, 18, 0, 0, 1, cols=100)
    c = classify(GENERIC, half, Timing(quiet_for=0.1, tty="polling", canonical=True))
    assert c.state == ScreenKind.UNKNOWN and c.recheck_after is not None  # the guess waits its full quiet
    assert not undecided(GENERIC, half, canonical=True).asks  # judged at the never-silent deadline, not the quick one
    whole = Snapshot(("Overwrite the existing config? [y/N] ",) + ("",) * 23, 37, 0, 0, 1, cols=100)
    assert classify(GENERIC, whole, Timing(quiet_for=0.1, tty="polling", canonical=True)).rule_id == "generic.yes_no"
    reading = classify(GENERIC, half, Timing(quiet_for=0.1, tty="reading", canonical=True))
    assert reading.state == "input"  # the mirror: blocked reading it, the program waits on that very line
    assert prompt_ended("Name: ") and prompt_ended("Continue? [y/n] ") and not prompt_ended("Overwrite the exis")


# -- the pilot ----------------------------------------------------------------------------------------------------------
YN = Classification(state="question", rule_id="generic.yes_no", block="Proceed? [y/n]", key="generic.yes_no@3:Proceed? [y/n]",
                    anchor_row=3)


def pilot() -> Pilot:
    p = Pilot(PilotConfig(GENERIC), RunCounts(interactive=False))
    p.handle(0.0, Started())
    return p


def facts(quiet=1.0, content=1, tty="reading", unread=0, text="Proceed? [y/n]"):
    return ScreenFacts(text=text, content=content, quiet_for=quiet, tty=tty, modes=Modes(), unread=unread)


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def records(effects, type_):
    return [e.fields for e in effects if isinstance(e, Record) and e.type == type_]


def answered(p: Pilot) -> None:
    (ask,) = of(p.handle(0.0, Screen(YN, facts())), Ask)
    p.handle(0.0, Decided(ask.token, Decision(Verdict.ANSWER, text="y", source="rules:1"), 1, Modes(), YN))
    p.handle(0.1, Typed(1))


def test_the_same_question_repainted_every_0_6_s_gets_one_answer():
    """A clock beside `Proceed? [y/n]` repainted the screen: taken for the program's answer, and answered again."""
    p = pilot()
    answered(p)
    seen, now, content = [], 0.1, 1
    while now < 3.0:
        content += 1  # the clock moved: the screen's content changed, the question did not
        seen += p.handle(now, Screen(YN, facts(quiet=0.0, content=content, unread=2 if now < 0.7 else 0, tty="busy" if now < 0.7 else "reading")))
        now += 0.6
    assert not of(seen, Type) and not records(seen, "asked_again")
    assert len(of(seen, Ask)) <= 1 and all("was typed here already" in a.notes[0] for a in of(seen, Ask))  # not taken: told


def test_keys_still_unread_are_no_answer_yet_whatever_the_screen_shows():
    p = pilot()
    answered(p)
    out = p.handle(1.0, Screen(YN, facts(content=5, tty="busy", unread=2)))
    assert out == [] and p.wake_at() is not None and p.wake_at() <= 1.1
    taken = p.handle(1.5, Screen(replace(YN, key="other", block="Continue? [y/n]"), facts(content=6, unread=0)))
    assert of(taken, Ask)  # read, and a new question: taken, the next one asked


def test_a_rules_only_miss_escalates_only_once_the_screen_has_settled():
    p = pilot()
    field = Classification(state="input", rule_id="generic.waiting_input", block="Overwrite the exis", key="w@0:exis")
    (ask,) = of(p.handle(1.0, Screen(field, facts(quiet=0.05, text="Overwrite the exis"))), Ask)
    out = p.handle(1.0, Decided(ask.token, Decision.escalate("no rule", "rules"), 1, Modes(), None))
    assert not of(out, AskHuman) and not records(out, "escalation") and p.wake_at() == 1.35  # quiet since 0.95: settled at 0.95 + 0.4
    assert p.handle(1.2, Screen(field, facts(quiet=0.25, text="Overwrite the exis"))) == []
    (again,) = of(p.handle(1.35, Screen(field, facts(quiet=0.4, text="Overwrite the exis"))), Ask)
    assert records(p.handle(1.35, Decided(again.token, Decision.escalate("no rule", "rules"), 1, Modes(), None)), "escalation")


def test_every_question_record_says_which_facts_classified_it():
    p = pilot()
    c = replace(YN, facts=("canonical mode (reads a line)", "cursor shown, after a complete prompt"))
    out = p.handle(0.0, Screen(c, facts(quiet=0.06)))
    (state,) = records(out, "screen_state")
    assert state["facts"] == ["kernel: reading", "quiet 0.06 s", "canonical mode (reads a line)", "cursor shown, after a complete prompt"]
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="sqlite>", key="u@5:sqlite>", asks=True)
    p2 = pilot()
    out = p2.handle(5.0, Screen(Classification(state=ScreenKind.UNKNOWN), ScreenFacts("sqlite>", 1, 5.0, "reading", Modes(), judged)))
    assert of(out, Ask) and [r["facts"] for r in records(out, "screen_state") if r["rule_id"] == "generic.undecided"][0][0] == "kernel: reading"
    assert ScreenKind.SETTLING  # (the settling screen is never recorded: nothing is asked of it)
