"""The rules of an ACP step, driven with made-up facts: no agent, no asyncio, no files, milliseconds."""

from datetime import datetime, timezone

from cursorpilot.channels.acp.facts import (NOT_FOUND, REFUSED, Ask, AskHuman, CallFailed, CancelSent, CancelTurn, CommandAsked, CommandExited,
                                   CommandStarted, Decided, DenyListWritten, End, Exited, ExtensionAsked, FileRead, FileWasRead,
                                   FileWrite, FileWritten, FormAsked, GoalChecked, Initialized, Interrupted, NotJson, OpenSession,
                                   PermissionAsked, Refuse, Reply, SendPrompt, ServeFailed, SessionOpened, Started, Tick, TurnEnded,
                                   Update)
from cursorpilot.channels.acp.pilot import INIT_TIMEOUT, STUCK_AFTER, TOOL_FACTOR, TOOL_LOOP_LIMIT, AcpPilot, AcpPilotConfig
from cursorpilot.channels.acp.workspace import OUTPUT_KEPT
from cursorpilot.records import models as R
from cursorpilot.channels.agent.waits import STUCK_NUDGES
from cursorpilot.decide.limits import BACKOFF
from cursorpilot.decide.deliver import NOBODY, Record, RunCounts
from cursorpilot.decide.question import Decision, Verdict
from cursorpilot.decide.turns import CheckGoal, TurnFacts
from cursorpilot.errors import ExitCode

CWD = "/work/project"
GEMINI = [{"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
          {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
          {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}]
# Gemini CLI 0.61's shell permission: the command is the title, the working directory the content, no rawInput
SHELL = {"toolCallId": "run_shell_command__1", "kind": "execute", "title": "npm test", "status": "pending",
         "content": [{"type": "content", "content": {"type": "text", "text": f"[current working directory {CWD}]"}}]}
BARE = {"toolCallId": "c9", "kind": "execute", "title": "Shell"}  # says nothing of what it runs


def started(task="add a test", agent="gemini-cli", interactive=False, dry_run=False, max_answers=None, step_cap=None,
            deadline=None, governing="Approve what the task needs; never delete anything.", resume=None) -> AcpPilot:
    run = RunCounts(interactive=interactive, dry_run=dry_run, max_answers=max_answers)
    p = AcpPilot(AcpPilotConfig(task=task, governing_prompt=governing, cwd=CWD, resume_session=resume, max_answers=step_cap,
                                deadline=deadline, deadline_reason="timeout after 9s (--timeout)"), run)
    p.handle(0.0, Started())
    p.handle(0.1, Initialized(1, {"name": agent, "version": "0.61.0"}, can_load=resume is not None))
    p.handle(0.2, SessionOpened("s1", loaded=resume is not None))
    return p


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def records(effects, type_):
    return [e.fields for e in effects if isinstance(e, Record) and e.type == type_]


def model(text):
    return Decision(Verdict.ANSWER, text=text, source="openai:gpt-4o-mini")


def decide(p, effects, text, source="openai:gpt-4o-mini"):
    """Answer the one Ask among the effects as the decision path would (the choice named, as Decider.check does)."""
    (ask,) = of(effects, Ask)
    chosen = tuple(c for c in ask.question.choices if c.label == text)
    return p.handle(1.0, Decided(ask.token, Decision(Verdict.ANSWER, text=text, choices=chosen, source=source)))


def test_the_task_is_the_first_prompt_and_a_resumed_session_is_told_to_continue():
    p = AcpPilot(AcpPilotConfig(task="add a test", governing_prompt="", cwd=CWD, resume_session="old"), RunCounts())
    p.handle(0.0, Started())
    assert of(p.handle(0.1, Initialized(1, None, can_load=True)), OpenSession) == [OpenSession("old")]
    out = p.handle(0.2, SessionOpened("old", loaded=True))
    assert of(out, SendPrompt) == [SendPrompt("Continue the task where you left off: add a test")]
    fresh = AcpPilot(AcpPilotConfig(task="t", governing_prompt="", cwd=CWD, resume_session="old"), RunCounts())
    assert of(fresh.handle(0.1, Initialized(1, None, can_load=False)), OpenSession) == [OpenSession(None)]  # it can't load: a new one


def test_a_model_approves_a_shell_command_gemini_describes_by_its_title():
    p = started()
    out = p.handle(1.0, PermissionAsked(1, SHELL, GEMINI))
    (ask,) = of(out, Ask)
    assert "npm test" in ask.question.text and f"[current working directory {CWD}]" in ask.question.text
    assert ask.question.action == ask.question.text.split(": ", 1)[1]  # the policy reads what the model reads
    out = decide(p, out, "Allow for this session")
    assert of(out, Reply) == [Reply(1, {"outcome": {"outcome": "selected", "optionId": "proceed_once"}})]  # no standing permission: once
    [answer] = records(out, "answer")
    assert (answer["reply"], answer["option_kind"], answer["source"]) == ("Allow", "allow_once", "openai:gpt-4o-mini")
    assert p.answers == 1 and p.counts.answers == 1 and not p.done


def test_a_call_that_says_nothing_is_not_approved_by_a_model_and_the_run_stops_without_a_human():
    p = started()
    out = decide(p, p.handle(1.0, PermissionAsked(7, BARE, GEMINI)), "Allow")
    assert records(out, "escalation")[0]["why"].startswith("the agent did not say what it will run or change")
    assert of(out, Reply) == [Reply(7, {"outcome": {"outcome": "cancelled"}})]
    assert of(out, CancelTurn) and of(out, End) == [End(ExitCode.HUMAN_NEEDED, of(out, End)[0].reason)]
    assert p.exit_code == ExitCode.HUMAN_NEEDED and p.counts.escalations == 1


def test_the_users_own_rule_may_approve_a_call_that_says_nothing():
    p = started()
    out = decide(p, p.handle(1.0, PermissionAsked(7, BARE, GEMINI)), "Allow", source="rules:shell")
    assert of(out, Reply)[0].payload["outcome"]["optionId"] == "proceed_once" and not p.done


def test_a_human_is_asked_once_when_someone_is_at_the_terminal():
    p = started(interactive=True)
    out = decide(p, p.handle(1.0, PermissionAsked(7, BARE, GEMINI)), "Allow")
    (human,) = of(out, AskHuman)
    assert human.token == 7 and not p.done and not of(out, Reply)
    chosen = tuple(c for c in human.question.choices if c.label == "Allow")
    out = p.handle(5.0, Decided(7, Decision(Verdict.ANSWER, text="Allow", choices=chosen, source="human")))
    assert of(out, Reply)[0].payload["outcome"]["optionId"] == "proceed_once"


def test_a_human_who_gives_no_answer_ends_the_run():
    p = started(interactive=True)
    decide(p, p.handle(1.0, PermissionAsked(7, BARE, GEMINI)), "Allow")
    out = p.handle(5.0, Decided(7, None))
    assert of(out, End)[0].code == ExitCode.HUMAN_NEEDED and "none answered" in p.reason
    assert of(out, Reply) == [Reply(7, {"outcome": {"outcome": "cancelled"}})]


def test_a_person_who_gave_up_ends_the_run_saying_so_not_that_none_answered():
    p = started(interactive=True)
    decide(p, p.handle(1.0, PermissionAsked(7, BARE, GEMINI)), "Allow")
    out = p.handle(5.0, Decided(7, Decision.escalate("the person at the terminal gave up (Ctrl-D)", NOBODY)))
    assert of(out, End)[0].code == ExitCode.HUMAN_NEEDED and p.counts.escalations == 1
    assert p.reason.startswith("the person at the terminal gave up (Ctrl-D), when a human was needed (") and "none answered" not in p.reason


def test_a_humans_answer_that_names_no_option_escalates_once_more_and_ends():
    p = started(interactive=True)
    decide(p, p.handle(1.0, PermissionAsked(7, BARE, GEMINI)), "Allow")
    out = p.handle(5.0, Decided(7, Decision.escalate("the reply 'maybe' names none of the options", "human")))
    assert not of(out, AskHuman) and of(out, End) and p.counts.escalations == 2


def test_the_tool_loop_guard_stops_the_sixth_identical_call_without_asking():
    p = started()
    for token in range(1, TOOL_LOOP_LIMIT + 1):
        decide(p, p.handle(1.0, PermissionAsked(token, {**SHELL, "toolCallId": f"c{token}"}, GEMINI)), "Allow")
    out = p.handle(2.0, PermissionAsked(99, {**SHELL, "toolCallId": "c99"}, GEMINI))
    assert not of(out, Ask) and "tool loop" in records(out, "escalation")[0]["why"]
    assert of(out, Reply) == [Reply(99, {"outcome": {"outcome": "cancelled"}})] and p.done


def test_a_dry_run_previews_the_first_answer_and_cancels():
    p = started(dry_run=True)
    out = decide(p, p.handle(1.0, PermissionAsked(3, SHELL, GEMINI)), "Allow")
    assert records(out, "would_send")[0]["reply"] == "Allow" and not records(out, "answer")
    assert of(out, Reply) == [Reply(3, {"outcome": {"outcome": "cancelled"}})]
    assert of(out, End) == [End(ExitCode.OK, "previewed (dry run)")] and p.preview["would_send"] == "Allow"


def test_the_answer_cap_stops_the_run_before_the_answer_goes_out():
    p = started(step_cap=1)
    decide(p, p.handle(1.0, PermissionAsked(1, SHELL, GEMINI)), "Allow")
    out = decide(p, p.handle(2.0, PermissionAsked(2, {**SHELL, "title": "npm run build"}, GEMINI)), "Allow")
    assert of(out, End) == [End(ExitCode.LIMIT, "step max_steps reached (1 answers)")]
    assert of(out, Reply) == [Reply(2, {"outcome": {"outcome": "cancelled"}})] and not records(out, "answer")


def test_a_turn_ending_with_a_question_is_a_turn_end_that_carries_it_and_its_answer_is_the_next_prompt():
    p = started()
    p.handle(1.0, Update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Running the tests."}}))
    p.handle(1.1, Update({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "npm test", "kind": "execute"}))
    p.handle(1.2, Update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done. Which port should it use?"}}))
    (goal,) = of(p.handle(2.0, TurnEnded("end_turn")), CheckGoal)  # the goal check and the working tree first
    (ask,) = of(p.handle(2.0, GoalChecked(goal.token, TurnFacts(None))), Ask)
    assert ask.question.kind == "turn_end" and ask.question.text == "Done. Which port should it use?"  # after the tool call
    assert ask.question.closing.text == "Done. Which port should it use?" and ask.question.closing.kind == "input"
    out = p.handle(3.0, Decided(ask.token, Decision(Verdict.ANSWER, text="8080", turn="continue", source="rules:port")))
    assert of(out, SendPrompt) == [SendPrompt("8080")] and records(out, "answer")[0]["kind"] == "turn_end"
    assert records(out, "turn_end")[0] | {"why": ""} == {"stop_reason": "end_turn", "usage": None, "turn": 1, "verdict": "continue",
                                                          "why": "", "check": None, "sent": "8080", "source": "rules:port"}
    (goal,) = of(p.handle(4.0, TurnEnded("end_turn")), CheckGoal)
    (ask,) = of(p.handle(4.0, GoalChecked(goal.token, TurnFacts(None))), Ask)
    out = p.handle(4.1, Decided(ask.token, Decision(Verdict.PASS, source="rules", why="no rule of kind turn_end matches")))
    assert of(out, End) == [End(ExitCode.OK, "completed (the agent stopped, and there is no goal check and no model to judge: done)")]


def test_a_cancelled_turn_needs_a_human():
    p = started()
    assert of(p.handle(2.0, TurnEnded("cancelled")), End) == [End(ExitCode.HUMAN_NEEDED, "the turn was cancelled")]


CODEX = [{"optionId": "approved", "name": "Yes, proceed", "kind": "allow_once"},
         {"optionId": "approved-execpolicy-amendment", "name": "Yes, and don't ask again for commands that start with `rm -rf build`",
          "kind": "allow_always"},
         {"optionId": "abort", "name": "No, and tell Codex what to do differently", "kind": "reject_once"}]
RM = {"toolCallId": "call_1", "kind": "execute", "title": "rm -rf build", "rawInput": {"command": ["/bin/bash", "-lc", "rm -rf build"]}}


def test_codex_cancelling_its_turn_on_the_pilots_own_rejection_is_a_turn_end_to_judge():
    """codex-acp 0.16's only reject option ends the turn with `cancelled`: after the pilot itself rejected, that is the
    agent waiting for what to do instead (as "Interrupted" on a screen), judged like any turn end, not a human's matter."""
    p = started(agent="codex-acp")
    out = decide(p, p.handle(1.0, PermissionAsked(1, RM, CODEX)), "No, and tell Codex what to do differently", source="policy:delete")
    assert of(out, Reply) == [Reply(1, {"outcome": {"outcome": "selected", "optionId": "abort"}})]
    (goal,) = of(p.handle(2.0, TurnEnded("cancelled")), CheckGoal)
    assert not p.done
    (ask,) = of(p.handle(2.1, GoalChecked(goal.token, TurnFacts(None))), Ask)
    assert ask.question.text.endswith("Turn cancelled: the agent stopped when cursor-pilot rejected execute rm -rf build")
    assert any("stop reason 'cancelled'" in n for n in ask.question.notes) and ask.question.closing is None
    out = p.handle(2.2, Decided(ask.token, Decision(Verdict.ANSWER, text="Leave build/ alone and finish.", turn="continue",
                                                   source="rules:after")))
    assert of(out, SendPrompt) == [SendPrompt("Leave build/ alone and finish.")] and not p.done
    assert records(out, "turn_end")[0]["stop_reason"] == "cancelled"
    # the next turn starts afresh: cancelled again, with no rejection of the pilot's in it, is a human's matter
    assert of(p.handle(3.0, TurnEnded("cancelled")), End) == [End(ExitCode.HUMAN_NEEDED, "the turn was cancelled")]


def test_a_turn_cancelled_after_the_pilot_approved_still_needs_a_human():
    p = started(agent="codex-acp")
    decide(p, p.handle(1.0, PermissionAsked(1, {**RM, "title": "touch a"}, CODEX)), "Yes, proceed")
    assert of(p.handle(2.0, TurnEnded("cancelled")), End) == [End(ExitCode.HUMAN_NEEDED, "the turn was cancelled")]


def test_a_missing_file_is_resource_not_found_except_for_agents_that_cannot_take_it():
    claude = started(agent="claude-agent-acp")
    out = claude.handle(1.0, FileRead(4, f"{CWD}/new.txt", inside=True, exists=False))
    assert of(out, Refuse) == [Refuse(4, NOT_FOUND, f"Resource not found: {CWD}/new.txt", f"{CWD}/new.txt")]
    gemini = started(agent="gemini-cli")
    out = gemini.handle(1.0, FileRead(4, f"{CWD}/new.txt", inside=True, exists=False))
    assert of(out, Reply) == [Reply(4, {"content": ""})] and records(out, "fs_read")[0]["missing"] is True
    assert gemini.handle(1.0, FileRead(5, f"{CWD}/old.txt", inside=True, exists=True)) == []  # read it


def test_reads_outside_the_working_directory_and_of_secrets_are_refused_with_a_reason():
    p = started()
    [refused] = of(p.handle(1.0, FileRead(1, "/etc/passwd", inside=False, exists=True)), Refuse)
    assert refused.error == REFUSED and refused.message == f"/etc/passwd is outside the working directory ({CWD})"
    out = p.handle(1.0, FileRead(2, f"{CWD}/.env", inside=True, exists=True))
    assert records(out, "policy_denied")[0]["policy_rule"] == "secrets_read" and of(out, Refuse)[0].error == REFUSED
    assert records(out, "acp_refused")[0]["method"] == "fs/read_text_file"


def test_writes_pass_the_deny_policy_and_a_dry_run_writes_nothing():
    p = started()
    assert of(p.handle(1.0, FileWrite(1, "/tmp/x", inside=False, diff="")), Refuse)[0].error == REFUSED
    assert records(p.handle(1.0, FileWrite(2, f"{CWD}/.env", inside=True, diff="+A=1")), "policy_denied")[0]["rule_id"] == "acp.fs_write"
    assert p.handle(1.0, FileWrite(3, f"{CWD}/a.txt", inside=True, diff="+a")) == []
    dry = started(dry_run=True)
    out = dry.handle(1.0, FileWrite(3, f"{CWD}/a.txt", inside=True, diff="+a"))
    assert records(out, "would_write") == [{"path": f"{CWD}/a.txt", "diff": "+a"}] and of(out, Refuse)[0].message == "dry run: nothing is written"


def test_commands_pass_the_deny_policy():
    p = started()
    out = p.handle(1.0, CommandAsked(1, "rm -rf ~/old", inside=True))
    assert of(out, Refuse)[0].message == "`rm -rf ~/old` is refused by the deny policy (rm_outside)"
    assert p.handle(1.0, CommandAsked(2, "npm test", inside=True)) == []
    assert "outside the working directory" in of(p.handle(1.0, CommandAsked(3, "ls", inside=False)), Refuse)[0].message


def test_the_deadline_cancels_the_open_turn_and_every_open_request():
    p = started(deadline=9.0)
    p.handle(1.0, PermissionAsked(1, SHELL, GEMINI))
    assert p.handle(8.9, Tick()) == []
    out = p.handle(9.0, Tick())
    assert of(out, Reply) == [Reply(1, {"outcome": {"outcome": "cancelled"}})] and of(out, CancelTurn)
    assert of(out, End) == [End(ExitCode.LIMIT, "timeout after 9s (--timeout)")]
    assert p.handle(9.5, Decided(1, model("Allow"))) == []  # a late decision is superseded
    assert of(p.handle(9.6, PermissionAsked(2, SHELL, GEMINI)), Reply) == [Reply(2, {"outcome": {"outcome": "cancelled"}})]


def test_an_agent_that_never_answers_initialize_fails_and_says_what_it_printed():
    p = AcpPilot(AcpPilotConfig(task="t", governing_prompt="", cwd=CWD), RunCounts())
    p.handle(0.0, Started())
    p.handle(1.0, NotJson("DEBUG: loading"))
    assert p.handle(INIT_TIMEOUT - 1, Tick()) == []
    out = p.handle(INIT_TIMEOUT, Tick())
    assert of(out, End) == [End(ExitCode.FAILED, "the agent never answered initialize (it printed 1 line(s) that are not JSON-RPC)")]
    assert not of(out, CancelTurn)


def stuck_once(p: AcpPilot) -> AcpPilot:
    """A pilot whose one interrupt of a stuck turn is used up: the next stuck turn ends the step."""
    p.waits.nudged = STUCK_NUDGES
    return p


def test_a_stuck_turn_is_cancelled_and_the_agent_told_to_continue_once_then_a_human_is_needed():
    p = started(interactive=True)  # deadline None
    p.handle(5.0, Update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Running the build."}}))
    assert p.handle(5.0 + STUCK_AFTER - 1, Tick()) == []
    out = p.handle(5.0 + STUCK_AFTER, Tick())
    assert of(out, CancelTurn) and not of(out, End) and records(out, "stuck")[0] == {"rule_id": "acp.stuck", "still_s": STUCK_AFTER,
                                                                                   "action": "interrupt"}
    out = p.handle(6.0 + STUCK_AFTER, TurnEnded("cancelled"))
    assert of(out, SendPrompt) == [SendPrompt("continue")] and records(out, "stuck")[0]["action"] == "continue" and not of(out, End)
    out = p.handle(6.0 + 2 * STUCK_AFTER, Tick())
    assert of(out, End) == [End(ExitCode.HUMAN_NEEDED, f"a human is needed (stuck: nothing happened for {STUCK_AFTER:.0f}s "
                                                       "in the middle of the agent's turn): (nothing said)")]
    assert records(out, "stuck")[0]["action"] == "escalate" and p.counts.escalations == 1


def test_a_turn_in_which_nothing_happens_has_a_deadline_even_without_timeout():
    """No --timeout: an agent that goes silent mid-turn is not waited on forever; anything it does restarts the clock,
    and a question being decided (by a model, a person) is not the agent's silence."""
    p = stuck_once(started(interactive=True))  # deadline None
    p.handle(5.0, Update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Running the build."}}))
    assert p.handle(5.0 + STUCK_AFTER - 1, Tick()) == []
    out = p.handle(5.0 + STUCK_AFTER, Tick())
    assert of(out, End) == [End(ExitCode.HUMAN_NEEDED, f"a human is needed (stuck: nothing happened for {STUCK_AFTER:.0f}s "
                                                       "in the middle of the agent's turn): Running the build.")]
    assert of(out, CancelTurn) and records(out, "escalation")[0]["rule_id"] == "acp.stuck" and p.counts.escalations == 1
    deciding = stuck_once(started())
    deciding.handle(1.0, PermissionAsked(1, SHELL, GEMINI))
    assert deciding.handle(1.0 + 2 * STUCK_AFTER, Tick()) == []  # the pilot's own question: its deadlines are the decider's
    idle = stuck_once(started())
    decide(idle, idle.handle(1.0, PermissionAsked(1, SHELL, GEMINI)), "Allow")  # decided at 1.0: the agent's move again
    assert of(idle.handle(1.0 + STUCK_AFTER, Tick()), End)[0].code == ExitCode.HUMAN_NEEDED


def test_a_tool_that_runs_or_a_command_that_writes_output_is_work_not_silence():
    """A tool call announced and not finished doubles the stuck deadline; a command the client runs for the agent
    restarts the clock each time it writes output. Neither removes the deadline."""
    p = stuck_once(started())
    p.handle(1.0, Update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "npm run build", "status": "in_progress"}))
    assert p.handle(1.0 + STUCK_AFTER, Tick()) == []
    out = p.handle(1.0 + STUCK_AFTER * TOOL_FACTOR, Tick())
    assert "(its tool call t1 still running)" in of(out, End)[0].reason
    finished = stuck_once(started())
    finished.handle(1.0, Update({"sessionUpdate": "tool_call", "toolCallId": "t1", "status": "pending"}))
    finished.handle(2.0, Update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}))
    assert of(finished.handle(2.0 + STUCK_AFTER, Tick()), End)  # the tool is done: the agent's silence again
    writing = stuck_once(started())
    assert writing.handle(STUCK_AFTER * 3, Tick(output_at=STUCK_AFTER * 3 - 5)) == []  # the build still prints
    assert of(writing.handle(STUCK_AFTER * 5, Tick(output_at=STUCK_AFTER * 3)), End)  # it fell silent too


def test_an_agent_that_dies_mid_turn_fails_and_past_the_deadline_it_is_the_limit():
    p = started()
    out = p.handle(3.0, CallFailed("prompt", "Connection closed", gone=True))
    assert of(out, End) == [End(ExitCode.FAILED, "the agent ended mid-turn (Connection closed)")] and not of(out, CancelTurn)
    late = started(deadline=2.0)
    assert of(late.handle(3.0, CallFailed("prompt", "Connection closed", gone=True)), End)[0].code == ExitCode.LIMIT
    assert of(started().handle(1.0, Interrupted()), End)[0].code == ExitCode.INTERRUPTED


def test_a_form_is_filled_from_its_schema_or_a_human_is_asked():
    p = started(interactive=True)
    mode = {"mode": "form", "requestedSchema": {"type": "object", "properties": {"port": {"type": "integer"}}, "required": ["port"]}}
    out = p.handle(1.0, FormAsked(5, "Which port?", mode))
    (ask,) = of(out, Ask)
    assert of(p.handle(2.0, Decided(5, model("eighty"))), AskHuman)  # does not fit: a human
    out = p.handle(3.0, Decided(5, Decision(Verdict.ANSWER, text="8080", source="human")))
    assert of(out, Reply) == [Reply(5, {"action": "accept", "content": {"port": 8080}})]
    url = p.handle(4.0, FormAsked(6, "Sign in", {"mode": "url", "url": "https://example.invalid"}))
    assert of(url, Reply) == [Reply(6, {"action": "decline"})] and records(url, "escalation") and not p.done


def test_cursor_questions_are_asked_one_by_one_and_answered_together():
    p = started()
    params = {"questions": [{"id": "db", "prompt": "Which database?", "options": [{"id": "pg", "label": "PostgreSQL"}]},
                            {"id": "name", "prompt": "Project name?"}]}
    out = p.handle(1.0, ExtensionAsked(8, "cursor/ask_question", params))
    out = decide(p, out, "PostgreSQL")
    (second,) = of(out, Ask)
    assert second.question.text == "Project name?" and not of(out, Reply)
    out = p.handle(2.0, Decided(8, model("demo")))
    assert of(out, Reply) == [Reply(8, {"outcome": {"outcome": "answered", "answers": [
        {"questionId": "db", "selectedOptionIds": ["pg"]}, {"questionId": "name", "text": "demo"}]}})]
    assert of(p.handle(3.0, ExtensionAsked(9, "cursor/unknown", {})), Reply) == [Reply(9, {})]


def test_a_call_the_agents_own_deny_list_refused_is_the_policys_denial_and_the_judge_hears_of_it():
    """With the policy in the agent's own list (channels/agent/nativedeny.py), the agent refuses rm -rf without asking: the call just
    fails. Claude's adapter describes it first (title, rawInput), so the pilot records the policy's denial."""
    p = AcpPilot(AcpPilotConfig(task="t", governing_prompt="", cwd=CWD, native=True), RunCounts())
    p.handle(0.0, Started())
    p.handle(0.1, Initialized(1, {"name": "@zed-industries/claude-agent-acp"}, can_load=False))
    p.handle(0.2, SessionOpened("s1", loaded=False))
    call = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "rm -rf build", "kind": "execute",
            "rawInput": {"command": "rm -rf build"}}
    assert not records(p.handle(1.0, Update(call)), "policy_denied")
    out = p.handle(1.1, Update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"}))
    assert records(out, "policy_denied") == [{"policy_rule": "delete", "evidence": "rm -rf b", "rule_id": "acp.native_deny", "reply": None}]
    assert "rule delete" in p.turns.happened[0]
    # the mirrors: a call that fails and the policy lets through, and a call the pilot itself was asked about
    p.handle(1.2, Update({**call, "toolCallId": "t2", "title": "make test", "rawInput": {"command": "make test"}}))
    assert not records(p.handle(1.3, Update({"sessionUpdate": "tool_call_update", "toolCallId": "t2", "status": "failed"})), "policy_denied")
    decide(p, p.handle(1.4, PermissionAsked(3, {**call, "toolCallId": "t3"}, CODEX)), "No, and tell Codex what to do differently",
           source="policy:delete")
    assert not records(p.handle(1.5, Update({"sessionUpdate": "tool_call_update", "toolCallId": "t3", "status": "failed"})), "policy_denied")
    # cursor-pilot's hook refused it (channels/agent/runhook.py: its own hook_decided record): not the list's denial, counted once
    p.handle(1.6, Update({**call, "toolCallId": "t4"}))
    said = {"type": "content", "content": {"type": "text", "text": "PreToolUse:Bash hook error: cursor-pilot refused: this call would delete build"}}
    assert not records(p.handle(1.7, Update({"sessionUpdate": "tool_call_update", "toolCallId": "t4", "status": "failed", "content": [said]})),
                       "policy_denied")
    assert "rule hook" in p.turns.happened[-1]


# -- every record of the step is the pilot's: the loop tells what happened, the pilot says what is kept --------------------
def test_the_agents_start_its_deny_list_and_a_cancel_sent_are_recorded_by_the_pilot():
    p = AcpPilot(AcpPilotConfig(task="t", governing_prompt="", cwd=CWD, native=True), RunCounts())
    assert p.handle(0.0, DenyListWritten("claude", None, ("Bash(rm:*)", "Read(./.env)"))) == [
        Record(R.NativeDeny(agent="claude", file=None, deny=["Bash(rm:*)", "Read(./.env)"], hook=None, no_hook=None))]
    assert p.handle(0.0, Started(4242, ("claude-agent-acp",), ("CI", "IS_SANDBOX"))) == [
        Record(R.ProgramStarted(pid=4242, command=["claude-agent-acp"], channel="acp", hidden_env=["CI", "IS_SANDBOX"]))]
    assert records(AcpPilot(AcpPilotConfig(task="t", governing_prompt="", cwd=CWD), RunCounts()).handle(0.0, Started(7, ("a",))),
                   "program_started") == [{"pid": 7, "command": ["a"], "channel": "acp", "hidden_env": None}]  # nothing hidden: null
    assert p.handle(1.0, CancelSent("s9")) == [Record(R.AcpCancel(session_id="s9"))]
    assert p.handle(1.0, ServeFailed("terminal/create", "ValueError: bad")) == [
        Record(R.AcpClientError(method="terminal/create", error="ValueError: bad"))]


def test_what_the_agent_read_wrote_and_ran_is_recorded_with_the_end_of_a_commands_output():
    p = started()
    assert p.handle(1.0, FileWasRead(f"{CWD}/a.ts", 120)) == [Record(R.FsRead(path=f"{CWD}/a.ts", chars=120))]
    assert p.handle(1.0, FileWritten(f"{CWD}/a.ts", "+x\n")) == [Record(R.FsWrite(path=f"{CWD}/a.ts", diff="+x\n"))]
    assert p.handle(1.0, CommandStarted("1", "npm test")) == [Record(R.TerminalStarted(terminal_id="1", command="npm test"))]
    output = "boot\n" + "." * OUTPUT_KEPT + "\nFAIL: 1 test\n"
    [exited] = records(p.handle(2.0, CommandExited("1", "npm test", 1, output, truncated=True)), "terminal_exited")
    assert list(exited) == ["terminal_id", "command", "exit_code", "output", "truncated"]  # the order it is written in
    assert exited["output"] == output[-OUTPUT_KEPT:] and exited["output"].endswith("FAIL: 1 test\n") and exited["truncated"] is True
    assert records(p.handle(2.0, CommandExited("2", "true", 0, "", False)), "terminal_exited")[0]["output"] == ""
    assert not p.done and p.answers == 0  # recorded, nothing more


def test_the_agents_exit_is_recorded_and_its_last_words_end_the_reason_only_when_both_failed():
    p = started()
    p.handle(1.0, CallFailed("prompt", "connection closed", gone=True))
    assert p.handle(2.0, Exited(1, "Error: not signed in. Run: agent login")) == [Record(R.ProgramExited(
        code=1, signal=None, last_words="Error: not signed in. Run: agent login", describe="exit code 1"))]
    assert p.exit_code == ExitCode.FAILED and p.reason.endswith("; its stderr ended: Error: not signed in. Run: agent login")
    # the mirrors: a step that ended well, an agent that exited 0, an agent that said nothing, a signal, no exit status
    ok = started()
    ok.handle(1.0, Interrupted())
    assert records(ok.handle(2.0, Exited(1, "bye")), "program_exited") == [
        {"code": 1, "signal": None, "last_words": None, "describe": "exit code 1"}] and ok.reason == "interrupted"
    for code, words, describe in ((0, "all good", "exit code 0"), (1, "", "exit code 1"), (-9, "x", "killed by signal 9"),
                                  (None, "x", "killed by signal 0")):
        q = started()
        q.handle(1.0, CallFailed("prompt", "boom", gone=False))
        reason = q.reason
        [rec] = records(q.handle(2.0, Exited(code, words)), "program_exited")
        assert rec["describe"] == describe
        told = code != 0 and words  # (an agent without an exit status was ended by the loop: it failed too)
        assert (rec["last_words"], q.reason) == ((words, f"{reason}; its stderr ended: {words}") if told else (None, reason))


def test_an_agent_that_answers_its_prompt_with_a_usage_limit_waits_for_the_reset_and_continues_the_same_session():
    wall = datetime(2026, 11, 29, 0, 0, tzinfo=timezone.utc)
    p = started()
    p.handle(0.5, Tick(wall=wall))
    out = p.handle(1.0, CallFailed("prompt", "Quota exceeded for quota metric. Please retry in 45.5s.", gone=False))
    (hit,) = records(out, "limit_hit")
    assert hit["rule_id"] == "acp.limit" and hit["phrase"] == "retry in 45.5s" and not of(out, End) and not p.turn_open
    assert p.handle(40.0, Tick(wall=wall)) == []
    out = p.handle(1.0 + hit["wait_s"], Tick(wall=wall))
    assert of(out, SendPrompt) == [SendPrompt("add a test")] and records(out, "limit_waited")[0]["sent"] == "add a test" and p.turn_open
    daily = started()
    daily.handle(0.5, Tick(wall=wall))
    assert records(daily.handle(1.0, CallFailed("prompt", "You have exhausted your daily quota on this model.", gone=False)),
                   "limit_hit")[0]["wait_s"] == BACKOFF[0]
    other = started()
    other.handle(0.5, Tick(wall=wall))
    assert of(other.handle(1.0, CallFailed("prompt", "Internal error", gone=False)), End)[0].code == ExitCode.FAILED  # the mirror
