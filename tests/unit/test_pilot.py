"""The rules of a PTY step, driven with made-up facts and a fake clock: no PTY, no sleeps, milliseconds."""

import pytest

from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.decide.turns import CheckGoal, TurnFacts
from cursorpilot.detect.classifier import READING_SETTLE, Classification
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.detect.menu import numbered, parse
from cursorpilot.detect.profiles import load_profile
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.machine import State
from cursorpilot.decide.deliver import Record, RunCounts
from cursorpilot.channels.pty.facts import Ask, AskHuman, Close, Decided, GoalChecked, PilotConfig, Screen, ScreenFacts, Started, Type, Typed
from cursorpilot.channels.pty.pilot import Pilot


def screen(p, now, c, f):
    """A classified screen, as the loop hands it to the pilot."""
    return p.handle(now, Screen(c, f))

GENERIC = load_profile("generic")
CLAUDE = load_profile("claude")
YN = Classification(state="question", rule_id="generic.yes_no", block="Continue? [y/n]", key="generic.yes_no@3:Continue? [y/n]",
                    anchor_row=3)


def pilot(profile=GENERIC, **kw) -> Pilot:
    counts = RunCounts(interactive=kw.pop("interactive", False), dry_run=kw.pop("dry_run", False), max_answers=kw.pop("max_answers", None))
    p = Pilot(PilotConfig(profile, **kw), counts)
    p.handle(0.0, Started())
    return p


def facts(quiet=1.0, content=1, tty=None, judged=None, text="", modes=None):
    return ScreenFacts(text=text, content=content, quiet_for=quiet, tty=tty, modes=modes or Modes(), judged=judged)


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def records(effects, type_):
    return [e.fields for e in effects if isinstance(e, Record) and e.type == type_]


def answer(text, source="rules:1", **kw):
    return Decision(Verdict.ANSWER, text=text, source=source, **kw)


def test_a_question_is_asked_once_and_its_answer_typed_then_enter():
    p = pilot()
    out = screen(p, 0.0, YN, facts())
    (ask,) = of(out, Ask)
    assert p.state == State.ASKING_QUESTION
    assert screen(p, 0.1, YN, facts()) == []  # asking: the same prompt is not asked again
    out = p.handle(0.2, Decided(ask.token, answer("y"), 1, Modes(), YN))
    (typed,) = of(out, Type)
    assert [w.data for w in typed.writes] == [b"y", b"\r"]
    assert records(out, "answer")[0]["reply"] == "y" and p.answers == 1


def test_enter_is_re_sent_twice_on_an_unchanged_screen_then_it_is_judged_again_told_what_was_typed():
    p = pilot()
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    p.handle(0.0, Decided(ask.token, answer("y"), 1, Modes(), YN))
    p.handle(1.0, Typed(1))
    assert not of(screen(p, 1.5, YN, facts(tty="reading")), Type)  # before the first gap: wait
    retry = screen(p, 1.9, YN, facts(tty="reading"))
    assert records(retry, "enter_retry") and [w.data for w in of(retry, Type)[0].writes] == [b"\r"]
    p.handle(1.9, Typed(1))
    screen(p, 3.6, YN, facts(tty="reading"))
    p.handle(3.6, Typed(1))
    out = screen(p, 7.0, YN, facts(tty="reading"))
    assert not records(out, "escalation") and records(out, "not_taken")[0]["typed"] == "y"
    (again,) = of(out, Ask)
    assert "'y' was typed here already" in again.notes[0] and p.exit_code == ExitCode.OK


def test_a_program_that_takes_the_answer_and_works_silently_is_left_to_work():
    """dialog's menu answered, then a long silent install: the still screen was taken for 'did not react' and the
    program got SIGINT within a second (exit 3)."""
    p = pilot()
    menu = Classification(state="menu", rule_id="generic.menu", block="Board:\n❯ cm4\n  pi4", key="m@1:board", anchor_row=1,
                          submit=False, menu=parse("Board:\n❯ cm4\n  pi4"))
    (ask,) = of(screen(p, 0.0, menu, facts()), Ask)
    p.handle(0.1, Decided(ask.token, answer("cm4"), 1, Modes(), menu))
    p.handle(0.2, Typed(1))
    unknown = Classification(state=ScreenKind.UNKNOWN)
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Board:", key="u@1:board")
    now, seen = 0.5, []
    while now < 300.0:
        out = screen(p, now, menu if now < 1.0 else unknown, facts(quiet=now - 0.2, tty="busy", judged=judged))
        seen += out
        now = p.wake_at()
    assert not of(seen, (Type, Ask, AskHuman, Close)) and not records(seen, "escalation") and not records(seen, "enter_retry")
    assert [r["rule_id"] for r in records(seen, "screen_state")][-1] == "kernel.busy" and p.state == State.RUNNING


def test_a_new_dialog_whose_row_looks_like_the_answered_one_gets_no_enter_of_its_own():
    """dialog's checklist, drawn after its menu, was taken for the menu still there (the same border row), and Enter was
    pressed on it: its preset accepted with no decision."""
    p = pilot()
    row = Classification(state="input", rule_id="generic.waiting_input", block="│   <", key="w@16:│ <", anchor_row=16)
    (ask,) = of(screen(p, 0.0, row, facts(content=1)), Ask)
    p.handle(0.1, Decided(ask.token, answer("<down><down><enter>", submit=False), 1, Modes(), row))
    p.handle(0.2, Typed(1))
    now, seen = 0.3, []
    while now < 10.0:
        out = screen(p, now, row, facts(quiet=now - 0.3, content=2, tty="polling"))
        seen += out
        if of(out, Ask):
            break
        now = p.wake_at()
    assert not of(seen, Type) and not records(seen, "enter_retry")  # a new screen: no key without a decision
    # the same question (its words, its row) on a changed screen, the keys read: not taken, judged again, not pressed
    assert of(seen, Ask) and records(seen, "not_taken")


def test_a_reply_for_a_prompt_that_changed_meanwhile_is_discarded():
    p = pilot()
    (ask,) = of(screen(p, 0.0, YN, facts(content=1)), Ask)
    other = Classification(state="input", rule_id="generic.waiting_input", block="Name:", key="x@4:Name:", anchor_row=4)
    out = p.handle(0.5, Decided(ask.token, answer("y"), 2, Modes(), other))
    assert records(out, "reply_discarded") and not of(out, Type) and p.state == State.RUNNING


def test_a_reply_for_a_prompt_whose_clock_ticked_meanwhile_is_typed():
    """Issue 48: a curses prompt under a clock got its model reply dropped at every tick, asked again ten times."""
    from dataclasses import replace
    p = pilot()
    asked = replace(YN, key="generic.yes_no@3:12:00:01 ⠋ Continue? [y/n]")
    (ask,) = of(screen(p, 0.0, asked, facts(content=1)), Ask)
    ticked = replace(YN, key="generic.yes_no@3:12:00:03 ⠹ Continue? [y/n]")
    out = p.handle(2.0, Decided(ask.token, answer("y"), 3, Modes(), ticked))
    assert not records(out, "reply_discarded") and of(out, Type)


def test_a_quiet_unknown_screen_is_judged_after_undecided_after():
    p = pilot()
    unknown = Classification(state=ScreenKind.UNKNOWN)
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="sqlite>", key="generic.undecided@5:sqlite>")
    assert not of(screen(p, 10.0, unknown, facts(quiet=1.0, judged=judged)), Ask)
    assert p.wake_at() == 12.0  # quiet since 9.0, judged at 9.0 + 3 s
    (ask,) = of(screen(p, 12.0, unknown, facts(quiet=3.0, judged=judged)), Ask)
    assert ask.kind == "undecided" and ask.c.block == "sqlite>"


def test_wait_is_recorded_and_the_same_screen_is_judged_again_only_after_the_backoff():
    p = pilot()
    unknown = Classification(state=ScreenKind.UNKNOWN)
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Downloading", key="u@1:Downloading")
    (ask,) = of(screen(p, 3.0, unknown, facts(quiet=3.0, judged=judged)), Ask)
    out = p.handle(3.1, Decided(ask.token, Decision(Verdict.WAIT, source="openai:m", why="downloading"), 1, Modes(), unknown))
    assert records(out, "wait")[0]["waits_in_a_row"] == 1 and not of(out, Type)
    assert not of(screen(p, 8.0, unknown, facts(quiet=8.0, judged=judged)), Ask)  # backoff: 6 s after the WAIT
    assert p.wake_at() == 9.1
    (again,) = of(screen(p, 9.1, unknown, facts(quiet=9.1, judged=judged)), Ask)  # never silent: judged again
    changed = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Downloading 50%", key="u@1:Downloading 50%")
    p.handle(9.2, Decided(again.token, Decision(Verdict.WAIT, source="openai:m", why="still"), 1, Modes(), unknown))
    assert not of(screen(p, 19.0, unknown, facts(quiet=9.0, content=2, judged=changed)), Ask)  # 2 WAITs: 12 s
    assert of(screen(p, 22.0, unknown, facts(quiet=12.0, content=2, judged=changed)), Ask)


def test_a_screen_judged_wait_that_never_changes_goes_to_a_human_after_stuck_after():
    p = pilot()
    unknown = Classification(state=ScreenKind.UNKNOWN)
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Downloading", key="u@1:Downloading")
    now = 3.0
    for _ in range(40):
        effects = screen(p, now, unknown, facts(quiet=now, judged=judged))
        if records(effects, "escalation"):
            break
        asks = of(effects, Ask)
        if asks:
            p.handle(now, Decided(asks[0].token, Decision(Verdict.WAIT, source="openai:m", why="busy"), 1, Modes(), unknown))
        now = p.wake_at()
    assert "stuck" in records(effects, "escalation")[0]["why"] and now >= GENERIC.stuck_after_s


def test_a_quiet_program_the_kernel_sees_busy_is_left_to_work_until_stuck_after():
    """`echo building; sleep 10; echo built` with rules only ended after 7 s with exit 3: 'is it waiting for someone?'."""
    p = pilot()
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="building", key="u@1:building")
    out = screen(p, 5.0, Classification(state=ScreenKind.UNKNOWN), facts(quiet=5.0, tty="busy", judged=judged))
    assert not of(out, Ask) and records(out, "screen_state")[-1]["rule_id"] == "kernel.busy" and p.wake_at() == 5.25
    assert not records(screen(p, 5.25, Classification(state=ScreenKind.UNKNOWN), facts(quiet=5.25, tty="busy", judged=judged)),
                       "screen_state")  # said once
    assert of(screen(p, 5.5, Classification(state=ScreenKind.UNKNOWN), facts(quiet=5.5, tty="reading", judged=judged)), Ask)
    p = pilot()  # at stuck_after, judged whatever one look said (issue 39): a model may say WAIT, once; then a human
    stuck = GENERIC.stuck_after_s
    (ask,) = of(screen(p, stuck, Classification(state=ScreenKind.UNKNOWN), facts(quiet=stuck, tty="busy", judged=judged)), Ask)
    assert ask.kind == "undecided" and "the kernel sees the program busy" in ask.notes[0]
    p.handle(stuck, Decided(ask.token, Decision(Verdict.WAIT, source="openai:m", why="building"), 1, Modes(), None))
    out = screen(p, stuck + 0.3, Classification(state=ScreenKind.UNKNOWN), facts(quiet=stuck + 0.3, tty="busy", judged=judged))
    assert "busy and not waiting on its terminal" in records(out, "escalation")[0]["why"]


def test_a_reading_program_whose_last_words_are_the_question_answered_last_is_not_judged_at_once():
    """ssh-first-connect: after its passphrase, ssh reads its terminal (stdin goes to the remote command) while it
    connects; its screen ends with the passphrase prompt answered a moment ago. Judged at once, that prompt was taken
    for a new question and the passphrase typed again. The kernel's "reading" shows no new question there: judged after
    undecided_after, told it was answered. Mirror: something written below it is judged at once."""
    last = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Enter passphrase for key:", key="u@3:pass",
                          answered_last=True)
    p = pilot()
    assert not of(screen(p, 0.3, Classification(state=ScreenKind.UNKNOWN), facts(quiet=0.3, tty="reading", judged=last)), Ask)
    assert p.wake_at() == 3.0
    (ask,) = of(screen(p, 3.0, Classification(state=ScreenKind.UNKNOWN), facts(quiet=3.0, tty="reading", judged=last)), Ask)
    assert "answered already" in ask.notes[0]
    new = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Retype it:", key="u@4:retype")
    p = pilot()
    (ask,) = of(screen(p, 0.3, Classification(state=ScreenKind.UNKNOWN), facts(quiet=0.3, tty="reading", judged=new)), Ask)
    assert not ask.notes


def test_a_program_reading_its_terminal_is_judged_at_once_and_a_poller_when_it_shows_a_question():
    blank = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="", key="u@0:")
    p = pilot()
    assert of(screen(p, 0.3, Classification(state=ScreenKind.UNKNOWN), facts(quiet=0.3, tty="reading", judged=blank)), Ask)
    menu = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Pick\n<Ok>", key="u@0:Pick <Ok>", asks=True)
    p = pilot()
    assert of(screen(p, 0.3, Classification(state=ScreenKind.UNKNOWN), facts(quiet=0.3, tty="polling", judged=menu)), Ask)
    log = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="12:00 tick", key="u@0:tick")
    p = pilot()
    assert not of(screen(p, 0.3, Classification(state=ScreenKind.UNKNOWN), facts(quiet=0.3, tty="polling", judged=log)), Ask)
    assert p.wake_at() == 3.0


def test_a_stale_screen_is_never_asked_about_after_typing():
    """A confirm that takes `y` without echoing it looked as before; 3 ms after Enter that stale screen went to the
    model as a new question. Until the screen changes, the answered prompt is still the question."""
    p = pilot()
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    p.handle(0.0, Decided(ask.token, answer("y"), 1, Modes(), YN))
    p.handle(1.5, Typed(7))
    unknown = Classification(state=ScreenKind.UNKNOWN)
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Continue? [y/n]", key="u@3:Continue? [y/n]")
    assert not of(screen(p, 1.503, unknown, facts(quiet=5.0, content=7, judged=judged)), Ask)
    retry = screen(p, 2.3, unknown, facts(quiet=5.8, content=7, judged=judged))
    assert records(retry, "enter_retry") and not of(retry, Ask)
    p.handle(2.3, Typed(7))
    out = screen(p, 2.6, unknown, facts(quiet=0.2, content=8, tty="reading", judged=judged))  # it reacted
    assert not records(out, "enter_retry")


def test_an_undecided_screen_shown_again_after_its_answer_is_judged_again_told_what_was_typed():
    p = pilot()
    unknown = Classification(state=ScreenKind.UNKNOWN)
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="> ", key="u@1:>")
    (ask,) = of(screen(p, 3.0, unknown, facts(quiet=3.0, judged=judged)), Ask)
    p.handle(3.1, Decided(ask.token, answer("help"), 1, Modes(), unknown))
    p.handle(3.2, Typed(1))
    out = screen(p, 7.0, unknown, facts(quiet=3.8, content=2, judged=judged))  # redrawn, still the same
    (again,) = of(out, Ask)
    assert not records(out, "escalation") and "'help' was typed here already" in again.notes[0]


def test_the_model_may_press_a_single_key_without_enter_on_an_undecided_screen():
    p = pilot()
    judged = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="(END)", key="u@1:(END)")
    (ask,) = of(screen(p, 3.0, Classification(state=ScreenKind.UNKNOWN), facts(quiet=3.0, judged=judged)), Ask)
    out = p.handle(3.1, Decided(ask.token, answer("q", submit=False), 1, Modes(), Classification(state=ScreenKind.UNKNOWN)))
    assert [w.data for w in of(out, Type)[0].writes] == [b"q"]


IDLE = Classification(state="idle", rule_id="claude.idle", block="❯", key="claude.idle@30:❯", anchor_row=30)
WORKING = Classification(state="working", rule_id="claude.working", block="esc to interrupt")


def judged_done_by_nobody(p, out, now=2.0):
    """A turn end with rules only, no rule for it and no goal check (the decision path says PASS): done, as always."""
    (check,) = of(out, CheckGoal)
    (ask,) = of(p.handle(now, GoalChecked(check.token, TurnFacts(None), "❯")), Ask)
    assert ask.kind == "turn_end" and ask.question.kind == "turn_end"
    return p.handle(now, Decided(ask.token, Decision(Verdict.PASS, source="rules", why="no rule of kind turn_end matches"), 1, Modes(), IDLE))


def test_an_agent_given_its_task_is_starting_until_it_works_then_done_at_its_composer():
    p = pilot(CLAUDE, started_with_task=True)
    out = screen(p, 0.0, IDLE, facts())
    assert not of(out, Ask) and records(out, "screen_state")[0]["state"] == "starting"
    out = screen(p, 1.0, WORKING, facts(quiet=0.0))
    assert records(out, "agent_started")
    out = screen(p, 2.0, IDLE, facts())
    assert not of(out, Close) and p.state == State.ASKING_QUESTION  # a turn end: judged first
    out = judged_done_by_nobody(p, out)
    assert p.state == State.COMPLETED and of(out, Close) and records(out, "turn_end")[0]["verdict"] == "done"


def test_an_agent_that_finished_its_task_unseen_completes_after_the_grace():
    p = pilot(CLAUDE, started_with_task=True)
    screen(p, 0.0, IDLE, facts())
    assert p.wake_at() == 20.0
    out = screen(p, 20.0, IDLE, facts(quiet=20.0))
    assert records(out, "agent_started")[0]["unseen"] is True and of(out, CheckGoal)  # its turn ended unseen: judged
    judged_done_by_nobody(p, out, 20.0)
    assert p.state == State.COMPLETED


def test_without_a_task_the_idle_composer_takes_the_plan_send():
    p = pilot(CLAUDE, send="add a test")
    out = screen(p, 0.0, IDLE, facts())
    assert [w.data for w in of(out, Type)[0].writes] == [b"add a test", b"\r"]


def test_the_plan_send_is_typed_in_the_terminals_modes():
    p = pilot(CLAUDE, send="<up>")
    out = screen(p, 0.0, IDLE, facts(modes=Modes(app_cursor=True)))
    assert [w.data for w in of(out, Type)[0].writes] == [b"\x1bOA"]  # SS3, as the program asked for


def test_max_answers_stops_the_run_before_typing():
    p = pilot(max_answers=0)
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    out = p.handle(0.1, Decided(ask.token, answer("y"), 1, Modes(), YN))
    assert not of(out, Type) and p.exit_code == ExitCode.LIMIT


def test_a_dry_run_previews_and_types_nothing():
    p = pilot(dry_run=True)
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    out = p.handle(0.1, Decided(ask.token, answer("y"), 1, Modes(), YN))
    assert not of(out, Type) and records(out, "would_send")[0]["keys"] == ["y", "<enter>"]
    assert p.preview["would_send"] == "y" and p.exit_code == ExitCode.OK


def test_an_interactive_escalation_asks_a_human_and_types_the_reply():
    p = pilot(interactive=True)
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    out = p.handle(0.1, Decided(ask.token, Decision.escalate("no rule"), 1, Modes(), YN))
    (human,) = of(out, AskHuman)
    assert p.state == State.AWAITING_INPUT
    out = p.handle(5.0, Decided(human.token, answer("n", source="human"), 1, Modes(), YN))
    assert [w.data for w in of(out, Type)[0].writes] == [b"n", b"\r"]


def test_menu_answer_moves_the_highlight_and_checks_it_before_enter():
    block = "? Pick one\n❯ Alpha\n  Beta\n  Gamma"
    c = Classification(state="menu", rule_id="prompts.menu", block=block, key="m@1:pick", anchor_row=1, submit=False, menu=parse(block))
    p = pilot()
    (ask,) = of(screen(p, 0.0, c, facts()), Ask)
    out = p.handle(0.1, Decided(ask.token, answer("Gamma"), 1, Modes(app_cursor=True), c))
    writes = of(out, Type)[0].writes
    assert [w.data for w in writes] == [b"\x1bOB", b"\x1bOB", b"\r"]  # application cursor mode: SS3 arrows
    assert writes[-1].check == "Gamma" and records(out, "menu_choice")[0]["keys"] == "<down><down><enter>"


def test_a_numbered_option_on_a_line_prompt_is_typed_text_its_enter_waits_for_the_number_not_a_key_delay():
    """cookiecutter's `Choose from [1/2/3] (1):` reads a line: the option's number is text, and its Enter goes as soon
    as the number shows (the profile's enter_delay), as after any typed answer; it went key_delay_ms (60) later."""
    block = "[3/4] Select license\n    1 - MIT\n    2 - BSD-3\n    3 - GNU GPL v3.0\n    Choose from [1/2/3] (1): "
    c = Classification(state="menu", rule_id="generic.choose", block=block, key="c@1:license", anchor_row=1,
                       menu=numbered(block))
    p = pilot(echo_check=True)
    (ask,) = of(screen(p, 0.0, c, facts()), Ask)
    out = p.handle(0.1, Decided(ask.token, answer("BSD-3"), 1, Modes(), c))
    writes = of(out, Type)[0].writes
    assert [w.data for w in writes] == [b"2", b"\r"]
    assert writes[-1].echo == "2" and writes[-1].delay == GENERIC.enter_delay_ms / 1000 < GENERIC.key_delay_ms / 1000
    assert records(out, "menu_choice")[0]["keys"] == "2<enter>"


def test_settling_screens_change_nothing():
    p = pilot()
    assert screen(p, 0.0, Classification(state=ScreenKind.SETTLING, recheck_after=0.3), facts(quiet=0.1)) == []
    assert p.wake_at() == 0.3


def test_a_prompt_re_asked_in_place_is_asked_again_not_left_silent():
    """A program that clears its line and asks the same question at the same row: its key was answered already."""
    p = pilot()
    (ask,) = of(screen(p, 0.0, YN, facts()), Ask)
    p.handle(0.0, Decided(ask.token, answer("maybe"), 1, Modes(), YN))
    p.handle(0.1, Typed(1))
    other = Classification(state="working", rule_id="generic.spinner", block="checking")
    screen(p, 0.5, other, facts(quiet=0.0, content=2))  # the answer was taken: the watch ends
    assert not of(screen(p, 1.0, YN, facts(quiet=0.2, content=2)), Ask)
    assert p.wake_at() == 3.8
    out = screen(p, 3.8, YN, facts(quiet=3.0, content=2))
    assert records(out, "asked_again") and of(out, Ask)


def test_a_prompt_printed_by_a_program_that_is_not_reading_waits_until_it_reads():
    """Waiting is not working, and working is not waiting: `Deploy now? [y/N]` printed by a script that then sleeps got
    a `y` typed into its input, for whatever reads next."""
    p = pilot()
    out = screen(p, 1.0, YN, facts(tty="busy"))
    assert not of(out, Ask) and records(out, "screen_state")[-1]["rule_id"] == "kernel.busy" and p.wake_at() == 1.25
    assert of(screen(p, 1.25, YN, facts(tty="reading")), Ask)


def test_a_screen_no_rule_explains_is_judged_as_soon_as_a_reader_s_prompt_is_complete():
    """dialog's input box and whiptail's yes/no (blocked on their terminal) waited 0.3 s of quiet before they were
    judged, after every answer: a program blocked reading its terminal has shown all it shows before the key, so the
    quiet a prompt of a reader needs (READING_SETTLE) is all a screen needs too."""
    box = Classification(state=ScreenKind.UNKNOWN, rule_id="generic.undecided", block="Days to keep\n7\n<OK>", key="u@0:Days", asks=True)
    p = pilot()
    assert of(screen(p, 1.0, Classification(state=ScreenKind.UNKNOWN), facts(quiet=READING_SETTLE, tty="reading", judged=box)), Ask)
    p = pilot()  # the mirror: a poller may draw more before it listens; it keeps its quick judgement
    assert not of(screen(p, 1.0, Classification(state=ScreenKind.UNKNOWN), facts(quiet=READING_SETTLE, tty="polling", judged=box)), Ask)
    assert p.wake_at() == 1.0 - READING_SETTLE + GENERIC.quick_judge_s


def idle_facts(quiet, idle_for, raw=True, tty="busy", content=1):
    return ScreenFacts(text="", content=content, quiet_for=quiet, tty=tty, raw=raw, idle_for=idle_for)


def test_a_still_raw_mode_screen_of_a_program_idle_for_seconds_is_judged_whatever_the_kernel_says():
    """Never silent (issue 48): a TUI the kernel takes for busy (its polls never block) sat silent until --timeout.
    Busy but idle in raw mode for IDLE_AFTER, its question goes the way of a waiting one, said once (`kernel.idle`)."""
    from cursorpilot.channels.pty.quiet import IDLE_AFTER
    p = pilot()
    assert not of(screen(p, 1.0, YN, idle_facts(quiet=1.0, idle_for=1.0)), Ask)
    out = screen(p, IDLE_AFTER, YN, idle_facts(quiet=IDLE_AFTER, idle_for=IDLE_AFTER))
    assert of(out, Ask) and [r["rule_id"] for r in records(out, "screen_state")] == ["kernel.idle"]


@pytest.mark.parametrize("raw, idle_for, quiet", [(False, 60.0, 60.0), (True, 1.0, 60.0), (True, 60.0, 1.0), (True, None, 60.0)])
def test_a_busy_program_in_line_mode_or_at_work_or_just_drawn_is_still_left_to_work(raw, idle_for, quiet):
    """The mirrors: `sleep 60` in a script (line mode), a raw-mode program that used CPU a second ago, a screen that
    changed a second ago, a group whose CPU can't be read: the kernel's `busy` stands."""
    p = pilot()
    out = screen(p, 60.0, YN, idle_facts(quiet=quiet, idle_for=idle_for, raw=raw))
    assert not of(out, Ask) and records(out, "screen_state")[-1]["rule_id"] == "kernel.busy"


def test_a_stopped_program_is_said_after_stopped_after_and_the_run_ends_for_a_person():
    """Issue 48: a program stopped by SIGSTOP sat silent until --timeout. Its question is not answered meanwhile (the
    keys would wait in its input queue), and a stop shorter than STOPPED_AFTER (continued by its parent) is no stop."""
    from dataclasses import replace
    from cursorpilot.channels.pty.quiet import STOPPED_AFTER
    p = pilot()
    stopped = replace(facts(tty="reading"), stopped="pid 9, bash")
    out = screen(p, 1.0, YN, stopped)
    assert not of(out, Ask) and not records(out, "screen_state") and p.wake_at() == 1.0 + STOPPED_AFTER
    assert of(screen(p, 1.5, YN, facts(tty="reading")), Ask)  # continued: its question is asked
    p = pilot()
    screen(p, 1.0, YN, stopped)
    out = screen(p, 1.0 + STOPPED_AFTER, YN, stopped)
    assert [r["rule_id"] for r in records(out, "screen_state")] == ["kernel.stopped"] and of(out, Close)
    assert p.exit_code == ExitCode.HUMAN_NEEDED and "stopped by a signal (pid 9, bash" in p.reason
