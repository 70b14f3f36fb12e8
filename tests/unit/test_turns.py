"""An agent's turn end, judged: the pure rules (decide/turns.py) and both pilots that use them, with made-up facts and a
fake clock. No agent, no process, no model: milliseconds."""

import pytest

from cursorpilot.channels.acp.facts import Ask as AcpAsk
from cursorpilot.channels.acp.facts import AskHuman as AcpAskHuman
from cursorpilot.channels.acp.facts import Decided, End, GoalChecked, Initialized, SendPrompt, SessionOpened, Started, TurnEnded, Update
from cursorpilot.channels.acp.pilot import AcpPilot, AcpPilotConfig
from cursorpilot.decide.deliver import Record, RunCounts
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.decide.turns import CheckGoal, Check, TurnConfig, TurnFacts, Turns, parse, structured
from cursorpilot.detect.classifier import Classification
from cursorpilot.detect.profiles import load_profile
from cursorpilot.errors import ExitCode
from cursorpilot.keys import Modes
from cursorpilot.channels.pty.machine import State
from cursorpilot.channels.pty import facts as ptyf
from cursorpilot.channels.pty.facts import Ask, AskHuman, Close, PilotConfig, Screen, ScreenFacts, Type, Typed
from cursorpilot.channels.pty.pilot import Pilot


def screen(p, now, c, f):
    """A classified screen, as the loop hands it to the pilot."""
    return p.handle(now, Screen(c, f))


CLAUDE = load_profile("claude")
IDLE = Classification(state="idle", rule_id="claude.idle", block="❯", key="claude.idle@30:❯", anchor_row=30)
WORKING = Classification(state="working", rule_id="claude.working", block="esc to interrupt")
APPROVAL = Classification(state="menu", rule_id="claude.permission", block="Bash command\nrm -rf data\nDo you want to proceed?",
                          key="claude.permission@10:rm", anchor_row=10, submit=False)
FAILING = Check("pytest -q", 1, "1 failed, 3 passed in 0.12s")
PASSING = Check("pytest -q", 0, "4 passed in 0.10s")
GOVERNING_SAYS = "Leave the data alone and finish."


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def records(effects, type_):
    return [e.fields for e in effects if isinstance(e, Record) and e.type == type_]


def model(verdict, text=None, why="because"):
    return structured(verdict, text, why, "openai:gpt-4o-mini")


# -- the rules, pure -----------------------------------------------------------------------------------------------------
def test_a_met_check_is_done_whatever_the_model_would_say_and_no_model_is_asked():
    t = Turns()
    n = t.ended(0.0, TurnFacts(PASSING), "I think there is more to do", closing=True)
    assert (n.action, n.verdict, n.source) == ("finish", "done", "check")


def test_a_judge_that_says_done_while_the_check_fails_goes_to_a_human_never_done():
    t = Turns()
    assert t.ended(0.0, TurnFacts(FAILING), "All done!", closing=False).action == "ask"
    n = t.judged(model("done"))
    assert n.action == "human" and "goal check `pytest -q` exited 1: not met" in n.why


@pytest.mark.parametrize("d, why", [
    (Decision.escalate("provider error: HTTP 500", "openai:m"), "provider error"),
    (parse("I'm not sure what you mean", "openai:m", bare_is_continue=False), "not a verdict"),
    (structured("finished", None, "", "openai:m"), "not a verdict"),
    (model("continue", "   "), "no message"),
])
def test_errors_and_garbage_from_the_judge_fail_closed(d, why):
    t = Turns()
    t.ended(0.0, TurnFacts(None), "Done.", closing=False)
    n = t.judged(d)
    assert n.action == "human" and why in n.why


def test_rules_only_the_facts_decide_when_no_rule_of_kind_turn_end_speaks():
    nobody = Decision(Verdict.PASS, source="rules", why="no rule of kind turn_end matches")
    t = Turns()
    t.ended(0.0, TurnFacts(None), "Done.", closing=False)
    assert t.judged(nobody).action == "finish"  # no check: an idle composer is done, as it always was
    t = Turns()
    t.ended(0.0, TurnFacts(FAILING), "Done.", closing=False)
    assert t.judged(nobody).action == "human"  # a failing check and nothing to tell the agent: a human
    t = Turns()
    t.ended(0.0, TurnFacts(None), "Which port?", closing=True)
    assert t.judged(nobody).action == "human"  # a question nobody answers is never "done"


def test_the_one_line_grammar_and_a_rules_bare_reply():
    assert parse("CONTINUE: Fix the failing test.", "m", False).text == "Fix the failing test."
    assert parse("**DONE**", "m", False).turn == "done"
    assert parse("BLOCKED: the deploy key", "m", False).why == "the deploy key"
    assert parse("? Which account?", "m", False).turn == "blocked"
    assert parse("continue with the tests", "m", False).verdict == Verdict.ESCALATE  # a model must say which verdict
    rule = parse("Leave the data alone and finish.", "rules:after_denial", True)
    assert (rule.turn, rule.text) == ("continue", "Leave the data alone and finish.")  # a rule's reply is the message


def test_the_last_allowed_turn_stops_at_max_turns_and_keeps_the_instruction_for_resume():
    t = Turns(TurnConfig(max_turns=2))
    t.ended(0.0, TurnFacts(None), "first", closing=False)
    assert t.judged(model("continue", "Go on.")).action == "send"
    t.ended(1.0, TurnFacts(None), "second", closing=False)
    n = t.judged(model("continue", "Add the test."))
    assert (n.action, n.code, n.why) == ("stop", ExitCode.LIMIT, "max-turns reached (2 turns)")
    assert t.record(n)["pending"] == "Add the test."
    resumed = Turns(TurnConfig(max_turns=5, first_turn=2, pending="Add the test."))
    n = resumed.ended(2.0, TurnFacts(None), "resumed session's first stop", closing=False)
    assert (n.action, n.message, n.source, resumed.turn) == ("send", "Add the test.", "ledger", 3)


def test_a_check_that_still_fails_at_the_last_turn_stops_without_asking_the_model():
    t = Turns(TurnConfig(max_turns=1))
    n = t.ended(0.0, TurnFacts(FAILING), "done?", closing=False)
    assert (n.action, n.code) == ("stop", ExitCode.LIMIT) and "still" not in n.why and "not met" in n.why


def test_no_progress_goes_to_a_human_same_words_same_tree_or_the_same_failure_three_times():
    t = Turns()
    assert t.ended(0.0, TurnFacts(None, tree="abc"), "I can't.", closing=False).action == "ask"
    t.judged(model("continue", "Try again."))
    n = t.ended(1.0, TurnFacts(None, tree="abc"), "I  can't.", closing=False)
    assert (n.action, n.source) == ("human", "breaker") and "nothing changed" in n.why
    t = Turns()
    for i, tree in enumerate(("a", "b")):
        failing = Check("pytest -q", 1, f"1 failed in 0.{i}s")  # the timing differs, the failure does not
        assert t.ended(float(i), TurnFacts(failing, tree=tree), f"attempt {i}", closing=False).action == "ask"
        t.judged(model("continue", "Fix it."))
    n = t.ended(3.0, TurnFacts(Check("pytest -q", 1, "1 failed in 0.9s"), tree="c"), "attempt 3", closing=False)
    assert n.action == "human" and "the same way 3 times" in n.why


def test_wall_and_cost_budgets_stop_before_another_turn():
    t = Turns(TurnConfig(max_wall=60, wall_deadline=100.0, max_cost=0.5))
    assert t.ended(99.0, TurnFacts(None, cost_usd=0.1), "a", closing=False).action == "ask"
    assert t.ended(100.0, TurnFacts(None), "b", closing=False).why == "max-wall reached (60s; no new turn is started)"
    n = t.ended(50.0, TurnFacts(None, cost_usd=0.51), "c", closing=False)
    assert (n.action, n.code) == ("stop", ExitCode.LIMIT) and n.why.startswith("max-cost reached ($0.5100")


def test_the_question_carries_what_happened_the_check_and_the_last_message():
    t = Turns(TurnConfig(max_turns=4))
    t.answered("Bash command rm -rf data", "No", "policy:delete", "delete")
    t.ended(0.0, TurnFacts(FAILING), "Request cancelled.", closing=False)
    q = t.question(text="Request cancelled.", source="claude.idle", live=("screen",))
    assert q.kind == "turn_end" and q.text == "Request cancelled." and q.check == "`pytest -q` exited 1: not met"
    assert q.check_output == ("1 failed, 3 passed in 0.12s",)
    assert any("the deny policy refused 'Bash command rm -rf data' (rule delete" in n for n in q.notes)
    assert any("turn 1; at most 4" in n for n in q.notes)


# -- the PTY pilot -------------------------------------------------------------------------------------------------------
def pty(**turns) -> Pilot:
    p = Pilot(PilotConfig(CLAUDE, started_with_task=True, turns=TurnConfig(**turns)), RunCounts())
    p.handle(0.0, ptyf.Started())
    screen(p, 0.0, WORKING, ScreenFacts("", 1, 0.0))
    return p


def stops(p, now, said="⎿ Request cancelled.", c=IDLE, content=2, check=None):
    """The agent is back at its composer: the pilot asks for the goal check; the loop hands it the facts."""
    out = screen(p, now, c, ScreenFacts("", content, 1.0))
    (goal,) = of(out, CheckGoal)
    return p.handle(now, ptyf.GoalChecked(goal.token, TurnFacts(check), said))


def test_pty_a_denial_then_a_wait_gets_the_governing_prompts_instruction_then_done():
    p = pty()
    (ask,) = of(screen(p, 0.5, APPROVAL, ScreenFacts("", 1, 1.0)), Ask)
    denied = Decision(Verdict.ANSWER, text="No", source="policy:delete", denied="delete")
    p.handle(0.7, ptyf.Decided(ask.token, denied, 1, Modes(), APPROVAL))
    p.handle(0.8, Typed(1))
    screen(p, 1.0, WORKING, ScreenFacts("", 2, 0.0))
    (turn,) = of(stops(p, 2.0), Ask)
    assert turn.question.text == "⎿ Request cancelled." and any("the deny policy refused" in n for n in turn.question.notes)
    out = p.handle(2.1, ptyf.Decided(turn.token, model("continue", GOVERNING_SAYS, "the prompt says what to do after a denial"), 2, Modes(), IDLE))
    (typed,) = of(out, Type)
    assert [w.data for w in typed.writes] == [GOVERNING_SAYS.encode(), b"\r"]
    [rec] = records(out, "turn_end")
    assert (rec["verdict"], rec["sent"], rec["turn"], rec["source"]) == ("continue", GOVERNING_SAYS, 1, "openai:gpt-4o-mini")
    assert records(out, "answer")[0]["kind"] == "turn_end" and records(out, "answer")[0]["prompt"] == "⎿ Request cancelled."
    p.handle(2.5, Typed(2))
    screen(p, 3.0, WORKING, ScreenFacts("", 3, 0.0))
    (turn,) = of(stops(p, 4.0, said="I left data/ alone. Done.", content=4), Ask)
    out = p.handle(4.1, ptyf.Decided(turn.token, model("done"), 4, Modes(), IDLE))
    assert p.state == State.COMPLETED and p.exit_code == ExitCode.OK and of(out, Close)


def test_pty_a_closing_question_in_prose_is_a_turn_end_that_carries_it():
    prose = Classification(state="question", rule_id="claude.idle.prose_question", block="Which port should it use?",
                           key="claude.idle.prose_question@28:Which port should it use?", anchor_row=28, submit=True)
    p = pty()
    (turn,) = of(stops(p, 2.0, said="Done. Which port should it use?", c=prose), Ask)
    assert turn.question.closing.text == "Which port should it use?" and turn.question.closing.kind == "question"
    out = p.handle(2.1, ptyf.Decided(turn.token, model("continue", "8080"), 2, Modes(), prose))
    assert [w.data for w in of(out, Type)[0].writes] == [b"8080", b"\r"]


def test_pty_the_goal_check_decides_and_a_limit_says_which():
    p = pty()
    out = stops(p, 2.0, check=PASSING)
    assert p.state == State.COMPLETED and records(out, "turn_end")[0]["check"]["exit_code"] == 0 and not of(out, Ask)
    p = pty(max_turns=1)
    out = stops(p, 2.0, check=FAILING)
    assert p.exit_code == ExitCode.LIMIT and p.reason.startswith("max-turns reached (1 turns)") and of(out, Close)


def test_pty_blocked_needs_a_human_who_sees_the_agents_message_and_whose_reply_is_typed():
    p = pty()
    (turn,) = of(stops(p, 2.0, said="I need the deploy key."), Ask)
    out = p.handle(2.1, ptyf.Decided(turn.token, model("blocked", why="the deploy key"), 2, Modes(), IDLE))
    assert p.exit_code == ExitCode.HUMAN_NEEDED and records(out, "escalation")[0]["prompt"] == "I need the deploy key."
    p = Pilot(PilotConfig(CLAUDE, started_with_task=True, turns=TurnConfig()), RunCounts(interactive=True))
    p.handle(0.0, ptyf.Started())
    screen(p, 0.0, WORKING, ScreenFacts("", 1, 0.0))
    (turn,) = of(stops(p, 2.0, said="I need the deploy key."), Ask)
    (human,) = of(p.handle(2.1, ptyf.Decided(turn.token, model("blocked", why="the deploy key"), 2, Modes(), IDLE)), AskHuman)
    assert human.prompt == "I need the deploy key." and human.why == "the deploy key"
    out = p.handle(9.0, ptyf.Decided(human.token, Decision(Verdict.ANSWER, text="It is in ~/keys/deploy.", source="human"), 2, Modes(), IDLE))
    assert of(out, Type)[0].writes[0].data == b"It is in ~/keys/deploy."


def test_pty_impossible_stops_with_exit_1_and_says_why():
    p = pty()
    (turn,) = of(stops(p, 2.0), Ask)
    p.handle(2.1, ptyf.Decided(turn.token, model("impossible", why="the goal needs the data deleted; the policy forbids it"), 2, Modes(), IDLE))
    assert p.exit_code == ExitCode.FAILED and p.reason == "the goal can't be met: the goal needs the data deleted; the policy forbids it"


def test_pty_an_agent_that_goes_on_while_its_turn_is_judged_was_not_at_a_turn_end():
    p = pty()
    (turn,) = of(stops(p, 2.0), Ask)
    out = p.handle(2.1, ptyf.Decided(turn.token, model("continue", "Go on."), 3, Modes(), WORKING))
    assert records(out, "reply_discarded") and not of(out, Type) and p.turns.turn == 0 and p.state == State.RUNNING


# -- the ACP pilot -------------------------------------------------------------------------------------------------------
def acp(**turns) -> AcpPilot:
    p = AcpPilot(AcpPilotConfig(task="clean up", governing_prompt="", cwd="/w", turns=TurnConfig(**turns)), RunCounts())
    p.handle(0.0, Started())
    p.handle(0.1, Initialized(1, {"name": "gemini-cli"}, can_load=False))
    p.handle(0.2, SessionOpened("s1", loaded=False))
    return p


def turn(p, now, said, check=None):
    p.handle(now, Update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": said}}))
    (goal,) = of(p.handle(now, TurnEnded("end_turn")), CheckGoal)
    return p.handle(now, GoalChecked(goal.token, TurnFacts(check)))


def test_acp_end_turn_is_judged_and_continue_is_the_next_prompt_then_the_check_decides():
    p = acp()
    (ask,) = of(turn(p, 1.0, "I could not delete data/.", FAILING), AcpAsk)
    assert ask.question.kind == "turn_end" and ask.question.check == "`pytest -q` exited 1: not met"
    out = p.handle(2.0, Decided(ask.token, model("continue", GOVERNING_SAYS)))
    assert of(out, SendPrompt) == [SendPrompt(GOVERNING_SAYS)]
    [rec] = records(out, "turn_end")
    assert (rec["stop_reason"], rec["verdict"], rec["sent"], rec["turn"]) == ("end_turn", "continue", GOVERNING_SAYS, 1)
    out = turn(p, 3.0, "Done, data/ untouched.", PASSING)
    assert of(out, End) == [End(ExitCode.OK, "completed (the goal check `pytest -q` exited 0: met)")]


def test_acp_a_blocked_turn_asks_the_human_whose_words_are_the_next_prompt():
    p = AcpPilot(AcpPilotConfig(task="t", governing_prompt="", cwd="/w", turns=TurnConfig()), RunCounts(interactive=True))
    p.handle(0.0, Started())
    p.handle(0.1, Initialized(1, None, can_load=False))
    p.handle(0.2, SessionOpened("s1", loaded=False))
    (ask,) = of(turn(p, 1.0, "I need the deploy key."), AcpAsk)
    (human,) = of(p.handle(2.0, Decided(ask.token, model("blocked", why="the deploy key"))), AcpAskHuman)
    out = p.handle(5.0, Decided(human.token, Decision(Verdict.ANSWER, text="Use ~/keys/deploy.", source="human")))
    assert of(out, SendPrompt) == [SendPrompt("Use ~/keys/deploy.")]


@pytest.mark.parametrize("verdict, code", [("done", ExitCode.OK), ("blocked", ExitCode.HUMAN_NEEDED),
                                           ("impossible", ExitCode.FAILED), ("garbage", ExitCode.HUMAN_NEEDED)])
def test_a_verdict_ends_a_step_the_same_way_on_both_channels(verdict, code):
    d = parse("what?", "openai:m", False) if verdict == "garbage" else model(verdict)
    p = pty()
    (ask,) = of(stops(p, 2.0), Ask)
    p.handle(2.1, ptyf.Decided(ask.token, d, 2, Modes(), IDLE))
    a = acp()
    (acp_ask,) = of(turn(a, 1.0, "Request cancelled."), AcpAsk)
    a.handle(2.0, Decided(acp_ask.token, d))
    assert p.exit_code == a.exit_code == code
    assert p.reason.removeprefix("a human is needed (").split(")")[0] == a.reason.removeprefix("a human is needed (").split(")")[0]


def test_the_agents_last_message_is_what_it_wrote_below_the_echo_of_its_last_instruction():
    from cursorpilot.detect.snapshot import snapshot_from_text
    from cursorpilot.channels.pty.ask import last_message

    rows = ["Claude Code v2", "", "> tidy up", "", "● Removing data/.", "  ⎿  Interrupted · What should Claude do instead?", "",
            "> Leave the data alone and finish.", "", "● Understood: data/ stays.", "", "─" * 40, "❯ ", "─" * 40, "  ? for shortcuts"]
    snap = snapshot_from_text("\n".join(rows))
    composer = Classification(state="idle", rule_id="claude.idle", block="❯", key="claude.idle@12:❯", anchor_row=12)
    assert last_message(CLAUDE, snap, composer, "Leave the data alone and finish.") == "● Understood: data/ stays."
    first = last_message(CLAUDE, snap, composer, None)  # the task was given on the command line: no echo to start from
    assert first.startswith("Claude Code v2") and first.endswith("● Understood: data/ stays.")
    prose = Classification(state="question", rule_id="claude.idle.prose_question", block="  ⎿  Interrupted · What should Claude do instead?",
                           key="q", anchor_row=5)
    assert last_message(CLAUDE, snap, prose, "tidy up").endswith("What should Claude do instead?")


def test_an_agent_that_does_not_echo_its_instructions_is_judged_by_its_latest_message_not_its_first():
    """A toy agent on a screen: every turn end judged its first message (the echo to start from was not on screen, so
    the message began at the top). Below the message judged last time is where it said more."""
    from cursorpilot.detect.snapshot import snapshot_from_text
    from cursorpilot.channels.pty.ask import last_message

    def screen(*messages):
        rows = ["Toy agent 1.0", "", *[r for m in messages for r in (m, "")], "─" * 40, "❯ ", "─" * 40, "  ? for shortcuts"]
        composer = Classification(state="idle", rule_id="claude.idle", block="❯", key="k", anchor_row=len(rows) - 3)
        return snapshot_from_text("\n".join(rows)), composer

    first = last_message(CLAUDE, *screen("● First: I read the code."), "fix the tests", None)
    assert first.endswith("● First: I read the code.")
    second = last_message(CLAUDE, *screen("● First: I read the code.", "● Second: I added the test."), "Go on.", first)
    assert second == "● Second: I added the test."
    third = last_message(CLAUDE, *screen("● First: I read the code.", "● Second: I added the test.", "● Third: done."), "Go on.", second)
    assert third == "● Third: done."
    same = last_message(CLAUDE, *screen("● First: I read the code.", "● Noted.", "● Noted."), "Go on.", "● Noted.")
    assert same == "● Noted."  # the same words again: said again (the breaker compares them)
    nothing_new = last_message(CLAUDE, *screen("● First: I read the code.", "● Noted."), "Go on.", "● Noted.")
    assert nothing_new == "● Noted."


def test_no_progress_at_the_last_allowed_turn_stops_at_the_limit_and_says_both():
    """With --max-turns 3 the breaker fired first at turn 3: exit 3, not the 4 --max-turns promises."""
    t = Turns(TurnConfig(max_turns=3))
    for i in range(2):
        assert t.ended(float(i), TurnFacts(Check("pytest -q", 1, f"1 failed in 0.{i}s"), tree=str(i)), f"try {i}", closing=False).action == "ask"
        t.judged(model("continue", "Fix it."))
    n = t.ended(3.0, TurnFacts(Check("pytest -q", 1, "1 failed in 0.9s"), tree="x"), "try 3", closing=False)
    assert (n.action, n.code, n.source) == ("stop", ExitCode.LIMIT, "limit")
    assert n.why.startswith("max-turns reached (3 turns); and no progress: the goal check failed the same way 3 times in a row")
    t = Turns(TurnConfig(max_turns=4))  # its mirror: before the last turn, no progress is a human
    for i in range(2):
        t.ended(float(i), TurnFacts(Check("pytest -q", 1, "1 failed"), tree=str(i)), f"try {i}", closing=False)
        t.judged(model("continue", "Fix it."))
    n = t.ended(3.0, TurnFacts(Check("pytest -q", 1, "1 failed"), tree="x"), "try 3", closing=False)
    assert (n.action, n.source) == ("human", "breaker")


def test_an_instruction_the_answer_cap_stops_is_held_for_resume_and_not_recorded_as_sent():
    p = Pilot(PilotConfig(CLAUDE, started_with_task=True), RunCounts(max_answers=0))
    p.handle(0.0, ptyf.Started())
    screen(p, 0.0, WORKING, ScreenFacts("", 1, 0.0))
    (judged,) = of(stops(p, 2.0), Ask)
    out = p.handle(2.1, ptyf.Decided(judged.token, model("continue", "Add the test."), 2, Modes(), IDLE))
    [rec] = records(out, "turn_end")
    assert (rec["sent"], rec["pending"]) == (None, "Add the test.") and not of(out, Type) and p.exit_code == ExitCode.LIMIT
    a = AcpPilot(AcpPilotConfig(task="t", governing_prompt="", cwd="/w"), RunCounts(max_answers=0))
    a.handle(0.0, Started())
    a.handle(0.1, Initialized(1, None, can_load=False))
    a.handle(0.2, SessionOpened("s1", loaded=False))
    (ask,) = of(turn(a, 1.0, "Half done."), AcpAsk)
    out = a.handle(2.0, Decided(ask.token, model("continue", "Add the test.")))
    [rec] = records(out, "turn_end")
    assert (rec["sent"], rec["pending"]) == (None, "Add the test.") and not of(out, SendPrompt) and a.exit_code == ExitCode.LIMIT


def test_acp_the_last_message_starts_after_a_permission_request_the_agent_never_announced():
    """gemini --acp asks permission for a shell command without a tool_call update first: its words before and after the
    denied call ran together as one message ("…removing it.The deletion was refused")."""
    from cursorpilot.channels.acp.facts import PermissionAsked

    p = acp()
    p.handle(1.0, Update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Removing data/."}}))
    options = [{"optionId": "cancel", "name": "Reject", "kind": "reject_once"}]
    (ask,) = of(p.handle(1.1, PermissionAsked(1, {"toolCallId": "c1", "kind": "execute", "title": "rm -rf data"}, options)), AcpAsk)
    p.handle(1.2, Decided(1, Decision(Verdict.ANSWER, text="Reject", choices=ask.question.choices, source="policy:delete",
                                      denied="delete")))
    (judge,) = of(turn(p, 2.0, "The deletion was refused, so I stopped."), AcpAsk)
    assert judge.question.text == "The deletion was refused, so I stopped."
    assert any("the deny policy refused 'Permission for execute: rm -rf data'" in n for n in judge.question.notes)
