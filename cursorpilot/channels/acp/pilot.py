"""The rules of an ACP step, PURE: facts and `now` in, effects out (pty/pilot.py's cut; acp/loop.py does the I/O).

Facts: the agent started, initialized, opened a session, streamed an update or asked something (a permission, a form,
Cursor's questions, a file to read or write, a command to run), a decision came back, what it asked was done, a turn
ended, a call failed, the clock moved, the agent ended. Effects: record this, decide that question, ask a human, reply
to the agent or refuse it, send the next prompt, cancel the turn, end the step. Here live the rules of an ACP run: the
first prompt, which option a decision selects, when a run escalates or stops, what a turn end leads to, what the agent
may read, write and run (a usage limit and a stuck turn: channels/agent/waits.py). A step ends one way only: an `End`
effect, after which every open request of the agent gets its "cancelled" and an open turn is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import assert_never

from cursorpilot.records import models as R
from cursorpilot.records.answerer import Answerer
from cursorpilot.channels.acp import ask, workspace
from cursorpilot.channels.acp.activity import Activity, texts_of
from cursorpilot.channels.acp.facts import (STUCK_AFTER, AcpPilotConfig, Ask, AskHuman, CallFailed, CancelSent, CancelTurn, CommandAsked,
                                   CommandExited, CommandStarted, Decided, DenyListWritten, Effect, End, Exited, ExtensionAsked, Fact,
                                   FileRead, FileWasRead, FileWrite, FileWritten, FormAsked, GoalChecked, Initialized, Interrupted,
                                   NotJson, OpenSession, PermissionAsked, Reply, SendPrompt, ServeFailed, SessionOpened, Started, Tick,
                                   TurnEnded, Update)
from cursorpilot.channels.acp.requests import Open, form_reply, plan_reply, question_answer
from cursorpilot.channels.agent.pilot import AgentPilot, headline, ledgers
from cursorpilot.channels.agent.waits import AgentWaits, Waits
from cursorpilot.decide.deliver import Answer, Record, RunCounts, Shared, Tally, deliver, escalation, split, unanswered
from cursorpilot.decide.limits import is_limit
from cursorpilot.decide.policy import check as check_policy
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.decide.turns import CheckGoal, Turns
from cursorpilot.errors import ExitCode
from cursorpilot.hooks.calls import refused_by_hook

TOOL_LOOP_LIMIT = 5  # the same tool call requested more often than this stops the run
INIT_TIMEOUT = 30.0  # an agent that has not answered initialize by then is not an ACP agent (npx may download first)
TOOL_FACTOR = 2.0  # STUCK_AFTER (facts.py), twice as long while a tool call the agent announced has not finished (a build, a test run)
NOT_JSON_RECORDED = 20  # lines on the agent's stdout that are not JSON-RPC: recorded up to this many

__all__ = ["INIT_TIMEOUT", "STUCK_AFTER", "TOOL_FACTOR", "TOOL_LOOP_LIMIT", "AcpPilot", "AcpPilotConfig"]  # (the config lives in facts.py)


@dataclass(slots=True)
class AcpPilot(AgentPilot[Effect], AgentWaits[Effect]):
    config: AcpPilotConfig
    counts: RunCounts  # the run's answers and escalations, shared with its other steps
    tally: Tally = field(init=False)
    done: bool = False
    exit_code: ExitCode = ExitCode.OK
    reason: str = ""
    session_id: str | None = None
    initialized: bool = False
    agent_name: str = ""
    turn_open: bool = False
    activity: Activity = field(default_factory=Activity)  # what the agent said and did (acp/activity.py)
    standing: bool = False  # the governing prompt grants standing permission ("allow always" goes through)
    tool_calls: dict[str, int] = field(default_factory=dict)
    not_json: int = 0
    started_at: float = 0.0
    last_fact_at: float = 0.0  # when anything last happened (the agent spoke, a decision came back): the stuck clock
    rejected: str | None = None  # this turn, the last tool call the pilot itself rejected (what it was)
    _open: dict[int, Open] = field(default_factory=dict)
    _own_token: int = 0  # questions the pilot asks itself (a turn end) get negative tokens; the agent's requests are positive
    turns: Turns = field(init=False)
    waits: Waits = field(init=False)  # a usage limit's wait, a stuck turn's interrupt (channels/agent/waits.py)

    def __post_init__(self) -> None:
        self.tally, self.turns, self.waits = ledgers(self.counts, self.config)
        self.standing = ask.grants_standing_permission(self.config.governing_prompt)

    @property
    def all_said(self) -> list[str]:
        return self.activity.all_said

    # -- facts in ----------------------------------------------------------------------------------------------------
    def handle(self, now: float, fact: Fact) -> list[Effect]:
        if not isinstance(fact, Tick):
            self.last_fact_at = now
        match fact:  # every fact has its rule: mypy says so (assert_never), and checks the fact each rule is given
            case DenyListWritten():
                return [Record(R.NativeDeny(agent=fact.agent, file=fact.file, deny=list(fact.deny), hook=fact.hook, no_hook=fact.no_hook))]
            case Started():
                return self._started(now, fact)
            case Exited():
                return self._exited(now, fact)
            case Tick():
                return self._tick(now, fact)
            case Interrupted():
                return self._end(ExitCode.INTERRUPTED, "interrupted")
            case Initialized():
                return self._initialized(now, fact)
            case SessionOpened():
                return self._session_opened(now, fact)
            case Update():
                return self._update(now, fact)
            case NotJson():
                return self._not_json(now, fact)
            case PermissionAsked():
                return self._permission(now, fact)
            case FormAsked():
                return self._form(now, fact)
            case ExtensionAsked():
                return self._extension(now, fact)
            case Decided():
                return self._decided(now, fact)
            case TurnEnded():
                return self._turn_ended(now, fact)
            case GoalChecked():
                return self._goal_checked(now, fact)
            case CallFailed():
                return self._call_failed(now, fact)
            case FileRead() | FileWrite() | CommandAsked():
                return self._asked(fact)
            case FileWasRead() | FileWritten() | CommandStarted() | CommandExited():
                return [workspace.done(fact)]
            case CancelSent():
                return [Record(R.AcpCancel(session_id=fact.session_id))]
            case ServeFailed():
                return [Record(R.AcpClientError(method=fact.method, error=fact.error))]
            case _:
                assert_never(fact)

    def _started(self, now: float, f: Started) -> list[Effect]:
        self.started_at = now
        return [Record(R.ProgramStarted(pid=f.pid, command=list(f.command), channel="acp", hidden_env=list(f.hidden_env) or None))]

    def _exited(self, now: float, f: Exited) -> list[Effect]:
        """The agent's process ended, after the step. When the step failed and so did the agent, the last it said on
        stderr is the likeliest why (not signed in, a missing key): the reason ends with it."""
        last = f.last_words if self.exit_code == ExitCode.FAILED and f.code != 0 and f.last_words else None
        if last:
            self.reason = f"{self.reason}; its stderr ended: {last}"
        return [Record(R.ProgramExited(code=f.code, signal=None, last_words=last, describe=f.describe))]

    def _tick(self, now: float, f: Tick) -> list[Effect]:
        if self.done:
            return []
        if self._past_deadline(now):
            return self._end(ExitCode.LIMIT, self.config.deadline_reason if self.initialized
                             else f"{self.config.deadline_reason}: {self._no_initialize()}")
        if (waited := self._wait_due(now, f.wall)) is not None:  # a usage limit's wait (channels/agent/waits.py)
            return waited
        if not self.initialized and now - self.started_at >= INIT_TIMEOUT:
            return self._end(ExitCode.FAILED, self._no_initialize())
        if self.turn_open and not self._open:
            since = max(self.last_fact_at, f.output_at or 0.0)  # a command run for the agent that writes output is working
            limit = self.config.stuck_after * (TOOL_FACTOR if self.activity.running or f.output_at is not None else 1.0)
            if now - since >= limit:  # no update, no request, no output of a command it waits on, nothing being decided
                said, why = self.activity.stuck_words(now - since)
                return self._stuck_turn(now - since, why, said, "acp.stuck")
        return []

    def _no_initialize(self) -> str:
        noise = f" (it printed {self.not_json} line(s) that are not JSON-RPC)" if self.not_json else ""
        return f"the agent never answered initialize{noise}"

    def _past_deadline(self, now: float) -> bool:
        return self.config.deadline is not None and now >= self.config.deadline

    def _initialized(self, now: float, f: Initialized) -> list[Effect]:
        if self.done:
            return []
        self.initialized = True
        self.agent_name = str((f.agent or {}).get("name") or "")
        resume = self.config.resume_session if f.can_load else None
        return [Record(R.AcpInitialized(protocol_version=f.protocol_version, load_session=f.can_load, agent=f.agent)),
                OpenSession(resume)]

    def _session_opened(self, now: float, f: SessionOpened) -> list[Effect]:
        if self.done:
            return []
        self.session_id = f.session_id
        first = f"Continue the task where you left off: {self.config.task}" if f.loaded else self.config.task
        return [Record(R.AcpSession(session_id=f.session_id, loaded=f.loaded)), *self._prompt(first)]

    def _prompt(self, text: str) -> list[Effect]:
        self.activity.begin()
        self.rejected, self.turn_open, self.waits.prompt = None, True, text
        return [SendPrompt(text)]

    def _update(self, now: float, f: Update) -> list[Effect]:
        effects, failed = self.activity.update(f.update)
        return effects + (self._refused_by_agent(failed, f.update) if failed is not None else [])

    def _refused_by_agent(self, tool_id: str, update: dict) -> list[Effect]:
        """A call that failed without being asked, which the policy refuses, was refused by the agent's own deny list
        (channels/agent/nativedeny.py put it there): the policy's denial, recorded, and told to the turn-end judge.
        One that failed with cursor-pilot's hook's words was refused by the hook (runhook.py; its record is the hook's)."""
        if any(refused_by_hook(text) for text in texts_of(update.get("content"))):
            self.turns.answered(" ".join(self.activity.actions.get(tool_id, tool_id).split())[:160], "refused by cursor-pilot's hook", "policy", "hook")
            return []
        asked = tool_id in self.activity.asked
        denial = check_policy(self.activity.actions.get(tool_id, ""), self.config.cwd, self.config.allow) if self.config.native and not asked else None
        if denial is None:
            return []
        self.turns.answered(" ".join(self.activity.actions[tool_id].split())[:160], "refused by the agent's own deny list", "policy", denial.rule)
        return [Record(R.PolicyDenied(policy_rule=denial.rule, evidence=denial.evidence, rule_id="acp.native_deny", reply=None))]

    def _not_json(self, now: float, f: NotJson) -> list[Effect]:
        self.not_json += 1
        return [Record(R.AcpNotJson(line=f.line[:500]))] if self.not_json <= NOT_JSON_RECORDED else []

    # -- the agent's questions ----------------------------------------------------------------------------------------
    def _permission(self, now: float, f: PermissionAsked) -> list[Effect]:
        self.activity.new_message()  # (Gemini CLI asks for a call it never announced with a tool_call update)
        self.activity.asked.add(str(f.tool_call.get("toolCallId") or ""))
        fp = ask.fingerprint(f.tool_call)
        seen = self.tool_calls[fp] = self.tool_calls.get(fp, 0) + 1
        out: list[Effect] = [Record(R.PermissionRequest(tool_call=f.tool_call, options=f.options, fingerprint=fp, seen=seen))]
        q = ask.permission_question(f.tool_call, f.options)
        self._open[f.token] = Open("permission", [("", q)], {"described": ask.describe(f.tool_call).says_what})
        if self.done:
            return out + self._cancel_open()
        if seen > TOOL_LOOP_LIMIT:
            return out + self._escalate(f.token, f"tool loop: the agent asked for the same call {seen} times", can_ask=False)
        return out + [Ask(f.token, q)]

    def _form(self, now: float, f: FormAsked) -> list[Effect]:
        out: list[Effect] = [Record(R.Elicitation(message=f.message, mode=f.mode))]
        schema = f.mode.get("requestedSchema") or {}
        if not schema:  # a URL to open: declined, said, and the run goes on
            return out + escalation(self.counts, rule_id="acp.elicitation", prompt=f.message,
                                    why="an elicitation the pilot can't fill (a URL to open)") + [Reply(f.token, {"action": "decline"})]
        q = ask.form_question(f.message, schema, f"acp.elicitation:{f.message}")
        self._open[f.token] = Open("form", [("", q)], {"schema": schema})
        return out + (self._cancel_open() if self.done else [Ask(f.token, q)])

    def _extension(self, now: float, f: ExtensionAsked) -> list[Effect]:
        out: list[Effect] = [Record(R.AcpExtension(method=f.method, params=f.params, notification=True if f.notification else R.OMIT))]
        if f.notification:
            return out
        if f.method == "cursor/ask_question":
            questions = ask.ask_question_questions(f.params)
            if not questions:
                return out + [Reply(f.token, {"outcome": {"outcome": "answered", "answers": []}})]
            self._open[f.token] = Open("ask_question", questions)
        elif f.method == "cursor/create_plan":
            self._open[f.token] = Open("plan", [("", ask.plan_question(f.params))])
        else:
            return out + [Reply(f.token, {})]
        return out + (self._cancel_open() if self.done else [Ask(f.token, self._open[f.token].question)])

    # -- decisions ----------------------------------------------------------------------------------------------------
    def _decided(self, now: float, f: Decided) -> list[Effect]:
        o = self._open.get(f.token)
        if o is None or self.done:
            return []  # superseded: the step ended meanwhile
        d = f.decision
        if d is None or d.by.kind is Answerer.NOBODY:  # the people asked gave no answer
            return self._halt(unanswered(o.human or "escalated", d.why if d is not None else ""))
        if d.verdict == Verdict.FAIL:
            return self._end(ExitCode.LIMIT if d.limit else ExitCode.FAILED, d.why)
        return _DECIDED[o.kind](self, f.token, o, d)

    def _permission_decided(self, token: int, o: Open, d: Decision) -> list[Effect]:
        q = o.question
        outcome = ask.permission_reply(q, d, self.standing, o.data["described"])
        if outcome.reply is None:
            return self._need_human(token, o, outcome.why)
        choice = outcome.choice
        assert choice is not None
        if (choice.kind or "").startswith("reject"):
            self.rejected = q.asked or headline(q)
        return self._deliver(token, o, d, choice.label, outcome.reply,
                             {"option_id": choice.key, "option_kind": choice.kind, "policy_rule": d.denied})

    def _form_decided(self, token: int, o: Open, d: Decision) -> list[Effect]:
        filled = form_reply(o.data["schema"], d)
        if filled is None:
            return self._need_human(token, o, d.why if d.verdict != Verdict.ANSWER and d.why else "the answer does not fit the form")
        return self._deliver(token, o, d, *filled)

    def _ask_question_decided(self, token: int, o: Open, d: Decision) -> list[Effect]:
        qid, q = o.questions[o.at]
        if d.verdict != Verdict.ANSWER:
            return self._need_human(token, o, d.why or "no answer")
        if q.choices and not d.choices:
            return self._escalate(token, f"the reply {d.text!r} names none of the options", can_ask=False)
        o.answers.append(question_answer(qid, q, d))
        done = o.at + 1 == len(o.questions)
        out = self._deliver(token, o, d, d.text or "", {"outcome": {"outcome": "answered", "answers": o.answers}} if done else None)
        if done or self.done:
            return out
        o.at, o.human = o.at + 1, None
        return out + [Ask(token, o.question)]

    def _plan_decided(self, token: int, o: Open, d: Decision) -> list[Effect]:
        if d.verdict != Verdict.ANSWER or not d.choices:
            return self._need_human(token, o, d.why or "no answer")
        return self._deliver(token, o, d, *plan_reply(d), {"policy_rule": d.denied})

    def _deliver(self, token: int, o: Open, d: Decision, sent: str, reply: dict | None = None, extra: dict | None = None) -> list[Effect]:
        """Hand the answer over (the shared rules: cap, dry run, counts, records); then the reply, if this was the last
        question of the request."""
        q = o.question
        effects, halt = split(deliver(self.tally, Answer(prompt=q.text, reply=sent, source=d.source, rule_id=q.source, kind=q.kind,
                                                         headline=headline(q), counted=d.text or sent,
                                                         extra={"channel": "acp", **(extra or {})}, changed=d.changed,
                                                         granted=d.granted)))
        if halt is not None:
            return [*effects, *self._halt(halt)]
        if o.kind != "turn_end":
            self.turns.answered(headline(q), sent, d.source, d.denied)
        if reply is None:
            return [*effects]
        del self._open[token]
        return [*effects, Reply(token, reply)]

    # -- the end of a turn (decide/turns.py says what it leads to) ----------------------------------------------------
    def _turn_ended(self, now: float, f: TurnEnded) -> list[Effect]:
        """A turn end is judged. A `cancelled` one is judged too when the pilot itself had just rejected a tool call:
        Codex's only reject option ("No, and tell Codex what to do differently") ends its turn that way, as "Interrupted"
        does on a screen. Any other cancelled turn (nobody here cancelled it) needs a human."""
        self.turn_open = False
        if f.stop_reason == "cancelled" and not self.done and (nudged := self._nudged()) is not None:
            return [Record(R.TurnEnd(stop_reason=f.stop_reason, usage=f.usage)), *nudged]  # a stuck turn, interrupted
        if self.done or (f.stop_reason == "cancelled" and self.rejected is None):
            return [Record(R.TurnEnd(stop_reason=f.stop_reason, usage=f.usage)),
                    *self._end(ExitCode.HUMAN_NEEDED, "the turn was cancelled")]
        self._own_token -= 1  # the goal check and the working tree first (the loop runs them): GoalChecked follows
        self._open[self._own_token] = Open("turn_end", [], {"stop": {"stop_reason": f.stop_reason, "usage": f.usage}})
        return [CheckGoal(self._own_token)]

    def _goal_checked(self, now: float, f: GoalChecked) -> list[Effect]:
        o = self._open.get(f.token)
        if o is None or self.done:
            return []
        said, message = "".join(self.activity.said), "".join(self.activity.message).strip()
        stop = o.data["stop"]["stop_reason"]
        cancelled = f"Turn cancelled: the agent stopped when cursor-pilot rejected {self.rejected}" if stop == "cancelled" else ""
        asked = None if cancelled else ask.turn_end_question(said)
        closing = None if asked is None else Question(kind=Kind.INPUT.value, text=asked, key=f"acp.turn_end:{asked}", source="acp.turn_end")
        n = self.turns.ended(now, f.facts, message or said, closing is not None)
        self.waits.limits.progressed()
        text = "\n\n".join(t for t in (message or said[-2000:], cancelled) if t)  # a turn_end rule can match "cancelled"
        notes: tuple[str, ...] = () if stop == "end_turn" else (f"The agent's turn ended with stop reason {stop!r}.",)
        if cancelled:
            notes += ("It ends its turn on a rejection and waits: tell it what to do instead, or judge the work done.",)
        q = self.turns.question(text=text, source="acp.turn_end", closing=closing, live=tuple(said.splitlines()[-40:]),
                                multiline=True, notes=notes)
        o.questions = [("", q)]
        return [Ask(f.token, q)] if n.action == "ask" else self._turn_next(f.token, o, n)

    def _call_failed(self, now: float, f: CallFailed) -> list[Effect]:
        if self.done:
            return []
        if self._past_deadline(now):
            return self._end(ExitCode.LIMIT, self.config.deadline_reason)
        if f.call == "prompt":
            self.turn_open = False
            if not f.gone and is_limit(f.message):  # a usage limit: waited out, then its prompt sent again
                return self._limit_hit(now, f.message, "acp.limit", resend=self.waits.prompt)
        return self._end(ExitCode.FAILED, f.why)

    # -- the agent's file system and terminal (acp/workspace.py) -------------------------------------------------------
    def _asked(self, f: FileRead | FileWrite | CommandAsked) -> list[Effect]:
        """A write or a command the policy refuses is told to the turn-end judge too."""
        effects, denial = workspace.asked(f, workspace.Bounds(self.config.cwd, self.config.allow, self.counts.dry_run), self.agent_name)
        if denial is not None:
            self.turns.answered(f.line if isinstance(f, CommandAsked) else f"write {f.path}", "refused", "policy", denial.rule)
        return effects

    # -- what channels/agent/pilot.py asks of this pilot ------------------------------------------------------------------------
    def _shared(self, effects: list[Shared]) -> list[Effect]:
        return [*effects]

    def _ask_human(self, token: int, q: Question, why: str) -> Effect:
        return AskHuman(token, q, why)

    def _next_prompt(self, message: str) -> list[Effect]:
        return self._prompt(message)

    def _interrupt(self) -> list[Effect]:  # (a stuck turn: channels/agent/waits.py)
        return [CancelTurn()]

    # -- the end ------------------------------------------------------------------------------------------------------
    def _end(self, code: ExitCode, reason: str) -> list[Effect]:
        """The one way a step ends: every open request of the agent gets its "cancelled", an open turn is cancelled."""
        if self.done:
            return []
        self.done, self.exit_code, self.reason = True, code, reason
        return [*self._cancel_open(), *([CancelTurn()] if self.turn_open else []), End(code, reason)]

    def _cancel_open(self) -> list[Effect]:
        out: list[Effect] = [Reply(token, o.cancelled) for token, o in self._open.items() if token > 0]
        self._open.clear()
        return out


_DECIDED: dict[str, Callable[[AcpPilot, int, Open, Decision], list[Effect]]] = {
    "permission": AcpPilot._permission_decided, "form": AcpPilot._form_decided, "ask_question": AcpPilot._ask_question_decided,
    "plan": AcpPilot._plan_decided, "turn_end": AcpPilot._judge_decided}
