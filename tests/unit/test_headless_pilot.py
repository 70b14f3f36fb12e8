"""The rules of a headless step, driven with made-up facts: no agent, no asyncio, no files, milliseconds."""

from datetime import datetime, timezone

from cursorpilot.records import models as R
from cursorpilot.decide.limits import LimitConfig
from cursorpilot.decide.deliver import Record, RunCounts
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.decide.turns import CheckGoal, Check, TurnFacts
from cursorpilot.errors import ExitCode
from cursorpilot.channels.headless.facts import (Ask, AskHuman, ControlAsked, Decided, DenyListWritten, End, EndInput, Exited, GoalChecked,
                                        Interrupted, NotJson, Other, PermissionAsked, RateLimited, Reply, Result, Said, SessionInit, Spawned, SpawnFailed,
                                        Started, StartTurn, StopAgent, Tick, ToolDone, ToolUse, Unsupported)
from cursorpilot.channels.headless.pilot import STUCK_AFTER, TOOL_LOOP_LIMIT, HeadlessPilot, HeadlessPilotConfig

CWD = "/work/project"
RM = {"command": "rm -rf build", "description": "Remove build"}
MKDIR = {"command": "mkdir logs", "description": "Make logs"}


def started(interactive=False, dry_run=False, resume=None, deadline=None, allow=frozenset()) -> HeadlessPilot:
    p = HeadlessPilot(HeadlessPilotConfig(task="clean up, then make logs", governing_prompt="Never delete anything.", cwd=CWD,
                                          resume_session=resume, deadline=deadline, allow=allow),
                      RunCounts(interactive=interactive, dry_run=dry_run))
    p.handle(0.0, Started())
    p.handle(0.1, SessionInit("s1", "claude-opus", CWD))
    return p


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def records(effects, type_):
    return [e.fields for e in effects if isinstance(e, Record) and e.type == type_]


def decide(p, effects, label, source="openai:gpt-4o-mini", now=1.0, **kw):
    (ask,) = of(effects, Ask)
    chosen = tuple(c for c in ask.question.choices if c.label == label)
    return p.handle(now, Decided(ask.token, Decision(Verdict.ANSWER, text=label, choices=chosen, source=source, **kw)))


def ended(p, now=3.0, text="Done.", code_after=0):
    """A turn's result, then its process's exit: the goal check effect."""
    out = p.handle(now, Result("s1", text))
    return out + p.handle(now + 0.1, Exited(code_after))


def test_the_task_starts_the_first_turn_and_a_resumed_step_continues_its_session():
    p = HeadlessPilot(HeadlessPilotConfig(task="add a test", governing_prompt="", cwd=CWD), RunCounts())
    assert p.handle(0.0, Started()) == [StartTurn("add a test", None)]
    r = HeadlessPilot(HeadlessPilotConfig(task="add a test", governing_prompt="", cwd=CWD, resume_session="old"), RunCounts())
    assert r.handle(0.0, Started()) == [StartTurn("Continue the task where you left off: add a test", "old")]


def test_a_denied_rm_and_an_allowed_mkdir_are_answered_on_stdin_the_deny_with_a_message_for_the_agents_model():
    p = started()
    p.handle(1.0, ToolUse("t1", "Bash", RM))
    out = p.handle(1.0, PermissionAsked("r1", "Bash", RM, "t1"))
    (ask,) = of(out, Ask)
    assert "$ rm -rf build" in ask.question.action and [c.kind for c in ask.question.choices] == ["allow_once", "reject_once"]
    out = decide(p, out, "Deny", source="policy:delete", denied="delete")
    assert of(out, Reply) == [Reply("r1", False, "cursor-pilot's deny policy refuses this (delete): do not try it another way.")]
    assert records(out, "answer")[0]["option_kind"] == "reject_once" and records(out, "answer")[0]["channel"] == "headless"
    assert not records(p.handle(1.2, ToolDone("t1", False, "refused")), "policy_denied")  # the pilot's own denial: not the agent's
    p.handle(1.3, ToolUse("t2", "Bash", MKDIR))
    out = decide(p, p.handle(1.3, PermissionAsked("r2", "Bash", MKDIR, "t2")), "Allow", source="rules:mkdir")
    assert of(out, Reply) == [Reply("r2", True, "")] and p.answers == 2 and not p.self_rejected


def test_a_result_ends_the_turn_and_continue_resumes_the_session_once_the_process_has_exited():
    p = started()
    p.handle(2.0, Said("Done. Shall I also add a README?"))
    out = p.handle(3.0, Result("s1", "Done. Shall I also add a README?"))
    assert of(out, EndInput) and len(of(out, CheckGoal)) == 1
    (goal,) = of(out, CheckGoal)
    (ask,) = of(p.handle(3.1, GoalChecked(goal.token, TurnFacts(None))), Ask)
    assert ask.question.kind == "turn_end" and ask.question.closing is not None
    out = p.handle(3.2, Decided(ask.token, Decision(Verdict.ANSWER, text="No README.", turn="continue", source="rules:readme")))
    assert not of(out, StartTurn) and p.pending == "No README."  # its process is still ending
    assert records(out, "turn_end")[0]["verdict"] == "continue"
    assert p.handle(3.3, Exited(0)) == [Record(R.ProgramExited(code=0, signal=None, last_words=None, describe="exit code 0")),
                                        StartTurn("No README.", "s1")]  # its exit recorded first, then the next turn
    (goal,) = of(p.handle(4.0, Result("s1", "OK.")), CheckGoal)
    p.handle(4.1, Exited(0))
    (ask,) = of(p.handle(4.2, GoalChecked(goal.token, TurnFacts(None))), Ask)
    out = p.handle(4.3, Decided(ask.token, Decision(Verdict.ANSWER, turn="done", source="openai:gpt-4o-mini", why="all done")))
    assert of(out, End) == [End(ExitCode.OK, "completed (all done)")] and not of(out, StopAgent)


def test_a_met_goal_check_is_done_without_asking():
    p = started()
    (goal,) = of(ended(p), CheckGoal)
    out = p.handle(3.2, GoalChecked(goal.token, TurnFacts(Check("test -d logs", 0))))
    assert of(out, End)[0].code == ExitCode.OK and not of(out, Ask)


def test_the_tool_loop_guard_stops_the_step_at_the_sixth_identical_call():
    p = started()
    for i in range(TOOL_LOOP_LIMIT):
        assert not of(p.handle(1.0, ToolUse(f"t{i}", "Read", {"file_path": "a.txt"})), End)
    out = p.handle(1.0, ToolUse("t9", "Read", {"file_path": "a.txt"}))
    assert of(out, End)[0].code == ExitCode.HUMAN_NEEDED and "tool loop" in p.reason and of(out, StopAgent)
    assert not of(p.handle(1.0, ToolUse("t10", "Read", {"file_path": "b.txt"})), End)  # the mirror: nothing more after the end


def test_the_mirror_of_the_tool_loop_guard_different_calls_go_on():
    p = started()
    for i in range(TOOL_LOOP_LIMIT * 2):
        assert not of(p.handle(1.0, ToolUse(f"t{i}", "Read", {"file_path": f"{i}.txt"})), End)
    assert not p.done


def test_a_rejection_the_agent_made_by_itself_is_reported_not_taken_for_success():
    """An older Cursor build without --force rejects what needs approval and asks nobody: the work was not done."""
    p = started()
    p.handle(1.0, ToolUse("c1", "Shell", {"command": "mkdir logs"}))
    p.handle(1.1, ToolDone("c1", False, "User Rejected"))
    out = p.handle(2.0, Result("s1", "Done."))
    assert of(out, End)[0].code == ExitCode.HUMAN_NEEDED and not of(out, CheckGoal)
    assert "rejected 1 tool call(s) by itself" in p.reason and "mkdir logs" in p.reason
    assert records(out, "escalation")[0]["rule_id"] == "headless.rejected"


def test_a_rejection_by_the_agents_own_deny_list_is_the_policy_at_work():
    """channels/agent/nativedeny.py put the policy into the agent's list: what it refuses by itself, the policy refuses too."""
    p = started()
    p.handle(1.0, ToolUse("c1", "Shell", {"command": "rm -rf build"}))
    out = p.handle(1.1, ToolDone("c1", False, "Denied by permissions: Shell(rm)"))
    assert records(out, "policy_denied") == [{"policy_rule": "delete", "evidence": "rm -rf b", "rule_id": "headless.native_deny",
                                              "reply": "Denied by permissions: Shell(rm)"}]
    assert of(p.handle(2.0, Result("s1", "Done.")), CheckGoal)  # judged as any turn end
    assert "rule delete" in p.turns.happened[0]  # and the judge hears of it


def test_a_refusal_by_cursor_pilots_hook_inside_the_agent_is_the_policy_not_an_agent_that_asked_nobody():
    """channels/agent/runhook.py put the hook in the agent's settings: its deny is the run's policy (a hook_decided record
    the loop writes), told to the judge, and the turn ends as any other; its mirror: a rejection in other words still
    stops the step (the test above), and so does one that only quotes the hook's words further in."""
    p = started()
    p.handle(1.0, ToolUse("c1", "Write", {"path": "tests/fixtures/users.json"}))
    p.handle(1.1, ToolDone("c1", False, "cursor-pilot refused: this call would overwrite tests/fixtures/users.json; your words forbid it"))
    assert not p.self_rejected and "rule hook" in p.turns.happened[0]
    p.handle(1.2, ToolUse("c2", "Edit", {"file_path": "tests/fixtures/users.json"}))
    p.handle(1.3, ToolDone("c2", False, "PreToolUse:Edit hook error: cursor-pilot refused: this call would overwrite it"))  # Claude's words
    assert not p.self_rejected and of(p.handle(2.0, Result("s1", "Done.")), CheckGoal)
    q = started()
    q.handle(1.0, ToolUse("c1", "Shell", {"command": "mkdir logs"}))
    q.handle(1.1, ToolDone("c1", False, "User Rejected (cursor-pilot refused: said the model)"))
    assert of(q.handle(2.0, Result("s1", "Done.")), End)[0].code == ExitCode.HUMAN_NEEDED


def test_cursors_question_names_no_call_its_denial_is_tied_to_the_call_announced_last():
    p = started()
    p.handle(1.0, ToolUse("c1", "Shell", {"command": "rm -rf build"}))
    decide(p, p.handle(1.0, PermissionAsked("shellRequestQuery:1", "Shell", {"command": "rm -rf build"})), "Deny",
           source="policy:delete", denied="delete")
    p.handle(1.2, ToolDone("c1", False, "cursor-pilot's deny policy refuses this"))
    assert not p.self_rejected


def test_an_error_result_is_classified_and_a_silent_death_quotes_its_last_words():
    p = started()
    out = p.handle(1.0, Result("s1", "Invalid API key · Please run /login", is_error=True, subtype="success"))
    assert of(out, End)[0].code == ExitCode.FAILED and p.reason.startswith("authentication: Invalid API key")
    q = started()
    out = q.handle(1.0, Exited(1, "Cannot use this model: gpt-9. Available models: auto, composer-1"))
    assert of(out, End)[0].code == ExitCode.USAGE and "it offers: auto, composer-1" in q.reason
    r = started()
    out = r.handle(1.0, Exited(1, "Segmentation fault"))
    assert of(out, End) == [End(ExitCode.FAILED, "the agent ended without a result (exit code 1): Segmentation fault")]


def test_torn_lines_and_unknown_events_are_kept_and_never_fatal():
    p = started()
    out = p.handle(1.0, NotJson('{"type": "assistant", "mess'))
    assert records(out, "headless_not_json") == [{"line": '{"type": "assistant", "mess'}] and not p.done
    assert records(p.handle(1.0, Other({"type": "status", "x": 1})), "headless_event") == [{"event": {"type": "status", "x": 1}}]
    out = p.handle(1.0, ControlAsked("k9", "mcp_message"))
    assert of(out, Unsupported) == [Unsupported("k9", "cursor-pilot does not serve mcp_message")] and not p.done


def test_a_model_may_not_approve_a_call_that_says_nothing():
    p = started()
    out = decide(p, p.handle(1.0, PermissionAsked("r1", "Bash", {})), "Allow")
    assert of(out, End)[0].code == ExitCode.HUMAN_NEEDED and of(out, Reply) == [Reply("r1", False, "cursor-pilot stopped")]
    q = started(interactive=True)
    out = decide(q, q.handle(1.0, PermissionAsked("r1", "Bash", {})), "Allow")
    assert of(out, AskHuman) and not q.done


def test_a_dry_run_previews_the_first_answer_and_stops_the_agent():
    p = started(dry_run=True)
    out = decide(p, p.handle(1.0, PermissionAsked("r1", "Bash", MKDIR)), "Allow", source="rules:mkdir")
    assert records(out, "would_send") and of(out, End)[0].code == ExitCode.OK and of(out, StopAgent)
    assert of(out, Reply) == [Reply("r1", False, "cursor-pilot stopped")]


def test_deadline_interrupt_stuck_and_a_program_that_cant_start():
    p = started(deadline=5.0)
    assert of(p.handle(5.0, Tick()), End) == [End(ExitCode.LIMIT, "timeout")]
    assert of(started().handle(1.0, Interrupted()), End)[0].code == ExitCode.INTERRUPTED
    assert of(started().handle(0.5, SpawnFailed("cannot start 'claude': No such file")), End)[0].code == ExitCode.USAGE


def test_a_stuck_turn_is_ended_and_the_same_session_told_to_continue_once_then_a_human_is_needed():
    s = started()
    s.handle(0.2, Spawned(41))
    assert not s.handle(STUCK_AFTER - 1, Tick())
    out = s.handle(STUCK_AFTER + 1, Tick())
    assert of(out, StopAgent) and not of(out, End) and records(out, "stuck")[0]["action"] == "interrupt"
    out = s.handle(STUCK_AFTER + 2, Exited(-15))
    assert of(out, StartTurn) == [StartTurn("continue", "s1")] and records(out, "stuck")[-1]["action"] == "continue"
    s.handle(STUCK_AFTER + 3, SessionInit("s1"))
    out = s.handle(2 * STUCK_AFTER + 4, Tick())
    assert of(out, End)[0].code == ExitCode.HUMAN_NEEDED and records(out, "escalation")[0]["rule_id"] == "headless.stuck"


def test_a_usage_limit_the_stream_reports_is_waited_out_to_its_exact_reset_then_the_session_resumed():
    wall = datetime(2026, 11, 29, 0, 0, tzinfo=timezone.utc)
    p = started()
    p.handle(0.2, Spawned(41))
    p.handle(0.5, Tick(wall))
    p.handle(1.0, RateLimited("rejected", wall.timestamp() + 90, "five_hour"))
    out = p.handle(1.0, Result("s1", "You've hit your 5-hour limit · resets 12:01am (UTC)", is_error=True, subtype="success"))
    (hit,) = records(out, "limit_hit")
    assert hit["reset"] == "2026-11-29T00:01:31+00:00" and hit["rule_id"] == "headless.limit" and not of(out, End)
    p.handle(1.1, Exited(1))
    assert not of(p.handle(50.0, Tick(wall)), StartTurn)
    out = p.handle(hit["wait_s"] + 1.0, Tick(wall))
    assert of(out, StartTurn) == [StartTurn("continue", "s1")] and records(out, "limit_waited")[0]["how"] == "continued"


def test_a_usage_limit_with_no_reset_backs_off_and_stops_at_the_deadline():
    wall = datetime(2026, 11, 29, 0, 0, tzinfo=timezone.utc)
    p = started(deadline=20.0)
    p.handle(0.5, Tick(wall))
    out = p.handle(1.0, Result("s1", "API Error: Request rejected (429) · Rate limited", is_error=True))
    assert records(out, "limit_hit")[0]["wait_s"] == 19.0  # the backoff, cut to the time left
    assert of(p.handle(20.0, Tick(wall)), End) == [End(ExitCode.LIMIT, "timeout")]
    early = started()  # no Tick yet, so no wall clock to read a reset against: it backs off
    assert records(early.handle(0.2, Result("s1", "usage limit, try again at 3pm", is_error=True)), "limit_hit")[0]["wait_s"] == 30.0
    stop = HeadlessPilot(HeadlessPilotConfig(task="t", governing_prompt="", cwd=CWD, limits=LimitConfig(on_limit="stop")), RunCounts())
    stop.handle(0.0, Started())
    stop.handle(0.5, Tick(wall))
    assert of(stop.handle(1.0, Result("s1", "You've hit your usage limit", is_error=True)), End)[0].code == ExitCode.LIMIT


# -- every record of the step is the pilot's: the loop tells what happened, the pilot says what is kept --------------------
def test_the_deny_list_and_each_turns_process_are_recorded_by_the_pilot_numbered_by_turn():
    p = HeadlessPilot(HeadlessPilotConfig(task="t", governing_prompt="", cwd=CWD), RunCounts())
    assert p.handle(0.0, DenyListWritten("cursor", None, ("Shell(rm)",), "/w/.cursor/hooks.json")) == [
        Record(R.NativeDeny(agent="cursor", file=None, deny=["Shell(rm)"], hook="/w/.cursor/hooks.json", no_hook=None))]
    p.handle(0.0, Started())
    assert p.handle(0.1, Spawned(41, ("cursor-agent", "-p", "t"), ("CI",))) == [
        Record(R.ProgramStarted(pid=41, command=["cursor-agent", "-p", "t"], channel="headless", turn=1, hidden_env=["CI"]))]
    out = p.handle(1.0, Result("s1", "Done?"))
    (ask,) = of(p.handle(1.1, GoalChecked(of(out, CheckGoal)[0].token, TurnFacts(None))), Ask)
    p.handle(1.2, Decided(ask.token, Decision(Verdict.ANSWER, text="Go on.", turn="continue", source="rules:x")))
    assert of(p.handle(1.3, Exited(0)), StartTurn) == [StartTurn("Go on.", "s1")]
    assert records(p.handle(1.4, Spawned(42, ("cursor-agent",))), "program_started") == [
        {"pid": 42, "command": ["cursor-agent"], "channel": "headless", "turn": 2, "hidden_env": None}]  # nothing hidden: null


def test_a_turns_exit_is_recorded_before_what_it_means_and_after_the_step_ended_too():
    p = started()
    out = p.handle(1.0, Exited(1, "Error: [REDACTED] is not valid"))  # (the loop redacts the words before it tells them)
    assert out[0] == Record(R.ProgramExited(code=1, signal=None, last_words="Error: [REDACTED] is not valid", describe="exit code 1"))
    assert of(out, End) and p.done
    assert records(p.handle(2.0, Exited(-15)), "program_exited") == [
        {"code": -15, "signal": None, "last_words": None, "describe": "killed by signal 15"}]  # the step is over: still recorded
