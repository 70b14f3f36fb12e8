"""The rules of a headless step, PURE: facts and `now` in, effects out (acp/pilot.py's cut; headless/loop.py does the I/O).

An agent's print mode runs one turn per process: the pilot starts it with the task, reads its event stream (facts from
headless/stream.py), decides each permission it asks for through the shared decision path (deny policy, rules, model,
human), and at each `result` judges the turn end as every channel does (decide/turns.py): `continue` starts the next
turn on the same session (`--resume`), `done` ends the step. Here live the rules of a headless run: the first prompt,
which answer a decision makes, the tool-loop guard, what a failed or silent turn means (a usage limit, a stuck turn:
channels/agent/waits.py), when it escalates or stops. A step ends one way only: an `End` effect, after which a permission
still open is denied and a turn still running is stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from cursorpilot.channels.agent.pilot import AgentPilot, headline, ledgers
from cursorpilot.channels.agent.waits import AgentWaits, Waits
from cursorpilot.decide.deliver import Answer, Record, RunCounts, Shared, Tally, deliver, escalate, split, unanswered
from cursorpilot.decide.policy import check as check_policy
from cursorpilot.decide.question import Choice, Decision, Kind, Question, Verdict
from cursorpilot.decide.toolcalls import describe, fingerprint, permission_question, permission_reply, turn_end_question
from cursorpilot.decide.turns import CheckGoal, Turns, gist
from cursorpilot.errors import ExitCode
from cursorpilot.hooks.calls import refused_by_hook
from cursorpilot.channels.headless.facts import (STUCK_AFTER, Ask, AskHuman, ControlAsked, Decided, DenyListWritten, Effect, End, EndInput, Exited, Fact,
                                        GoalChecked, HeadlessPilotConfig, Interrupted, NotJson, Other, PermissionAsked, RateLimited, Reply, Result, Said,
                                        SessionInit, Spawned, SpawnFailed, Started, StartTurn, StopAgent, Tick, ToolDone, ToolUse, Unsupported)
from cursorpilot.channels.headless.stream import classify
from cursorpilot.records import models as R
from cursorpilot.records.answerer import Answerer

TOOL_LOOP_LIMIT = 5  # the same tool call announced more often than this in a step stops it
TOOL_FACTOR = 2.0  # STUCK_AFTER (facts.py), twice as long while a tool call the agent announced has not finished
NOT_JSON_KEPT = 20  # lines on stdout that are not JSON: recorded up to this many, the last ones kept for the failure's words
# Print mode offers a yes or a no, never "always": approving once is all the pilot can do, and all it means to.
OPTIONS = (Choice("allow", "Allow", kind="allow_once"), Choice("deny", "Deny", kind="reject_once"))
_KIND = {"bash": "execute", "shell": "execute", "write": "edit", "edit": "edit", "multiedit": "edit", "notebookedit": "edit",
         "delete": "delete", "read": "read", "webfetch": "fetch", "websearch": "fetch"}

__all__ = ["STUCK_AFTER", "TOOL_FACTOR", "TOOL_LOOP_LIMIT", "HeadlessPilot", "HeadlessPilotConfig", "tool_call"]  # (the config: facts.py)


@dataclass(slots=True)
class _Open:
    kind: str  # permission | turn_end
    question: Question | None
    data: dict = field(default_factory=dict)
    human: str | None = None  # why a human was asked (their answer is the last word)


def tool_call(name: str, data: dict) -> dict:
    """A print-mode tool call in ACP's shape, so that it is described, fingerprinted and judged as over ACP."""
    return {"title": name, "kind": _KIND.get(name.lower(), ""), "rawInput": data}


@dataclass(slots=True)
class HeadlessPilot(AgentPilot[Effect], AgentWaits[Effect]):
    config: HeadlessPilotConfig
    counts: RunCounts  # the run's answers and escalations, shared with its other steps
    tally: Tally = field(init=False)
    turns: Turns = field(init=False)
    done: bool = False
    exit_code: ExitCode = ExitCode.OK
    reason: str = ""
    session_id: str | None = None
    turn_open: bool = False  # a turn runs and its result has not come
    alive: bool = False  # the turn's process runs
    said: list[str] = field(default_factory=list)  # the agent's messages this turn...
    message: list[str] = field(default_factory=list)  # ...and its last one (after its last tool call)
    all_said: list[str] = field(default_factory=list)
    tool_calls: dict[str, int] = field(default_factory=dict)  # fingerprint -> how often announced
    actions: dict[str, str] = field(default_factory=dict)  # call id -> what it does (the text the policy reads)
    running: set[str] = field(default_factory=set)
    last_call: str | None = None  # the call announced last (Cursor's interaction_query does not name its call)
    denied: set[str] = field(default_factory=set)  # call ids the pilot denied
    self_rejected: list[str] = field(default_factory=list)  # this turn: calls the agent rejected by itself, asking nobody
    noise: list[str] = field(default_factory=list)  # the last lines that were not JSON
    not_json: int = 0
    last_fact_at: float = 0.0
    pending: str | None = None  # the next prompt, waiting for the last turn's process to end
    turn_number: int = 0  # turns started: each runs a process of its own
    _open: dict[int, _Open] = field(default_factory=dict)
    _tokens: int = 0
    waits: Waits = field(init=False)  # a usage limit's wait, a stuck turn's interrupt (channels/agent/waits.py)
    reset_at: float | None = None  # this turn, the reset of the limit the agent said it hit (Claude's rate_limit_event)

    def __post_init__(self) -> None:
        self.tally, self.turns, self.waits = ledgers(self.counts, self.config)

    def handle(self, now: float, fact: Fact) -> list[Effect]:
        if not isinstance(fact, Tick):
            self.last_fact_at = now
        match fact:  # every fact has its rule: mypy says so (assert_never), and checks the fact each rule is given
            case DenyListWritten():
                return [Record(R.NativeDeny(agent=fact.agent, file=fact.file, deny=list(fact.deny), hook=fact.hook, no_hook=fact.no_hook))]
            case Started():
                return self._started(now, fact)
            case Spawned():
                return [Record(R.ProgramStarted(pid=fact.pid, command=list(fact.command), channel="headless", turn=self.turn_number,
                                                hidden_env=list(fact.hidden_env) or None))]
            case SessionInit():
                return self._session(now, fact)
            case Said():
                return self._said(now, fact)
            case ToolUse():
                return self._tool_use(now, fact)
            case ToolDone():
                return self._tool_done(now, fact)
            case PermissionAsked():
                return self._permission(now, fact)
            case ControlAsked():
                return self._control(now, fact)
            case Result():
                return self._result(now, fact)
            case Other():
                return self._other(now, fact)
            case NotJson():
                return self._not_json(now, fact)
            case Exited():
                return self._exited(now, fact)
            case SpawnFailed():
                return self._spawn_failed(now, fact)
            case Decided():
                return self._decided(now, fact)
            case GoalChecked():
                return self._goal_checked(now, fact)
            case Tick():
                return self._tick(now, fact)
            case Interrupted():
                return self._interrupted(now, fact)
            case RateLimited():
                self.reset_at = fact.resets_at if fact.status == "rejected" else self.reset_at
                return [Record(R.HeadlessEvent(event={"type": "rate_limit_event", "status": fact.status, "resets_at": fact.resets_at}))]
            case _:
                assert_never(fact)

    # -- turns ------------------------------------------------------------------------------------------------------------
    def _started(self, now: float, f: Started) -> list[Effect]:
        resume = self.config.resume_session
        return self._start_turn(f"Continue the task where you left off: {self.config.task}" if resume else self.config.task, resume)

    def _start_turn(self, prompt: str, resume: str | None) -> list[Effect]:
        self.said, self.message, self.self_rejected, self.noise, self.reset_at = [], [], [], [], None
        self.running.clear()
        self.turn_open = self.alive = True
        self.turn_number += 1
        return [StartTurn(prompt, resume)]

    def _session(self, now: float, f: SessionInit) -> list[Effect]:
        self.session_id = f.session_id or self.session_id
        return [Record(R.HeadlessSession(session_id=f.session_id, model=f.model, cwd=f.cwd))]

    def _said(self, now: float, f: Said) -> list[Effect]:
        """Each message the agent writes is a paragraph of its own, in the turn and in all it said (the log showed
        "Cleaning up first.Making the log folder.Done." as one line)."""
        for said in (self.said, self.message, self.all_said):
            if said and not said[-1].endswith("\n\n"):
                said.append("\n\n")
            said.append(f.text)
        return [Record(R.HeadlessMessage(text=f.text))]

    def _tool_use(self, now: float, f: ToolUse) -> list[Effect]:
        self.message = []  # what the agent says after a tool call is its last message so far
        call = tool_call(f.name, f.input)
        fp = fingerprint(call)
        seen = self.tool_calls[fp] = self.tool_calls.get(fp, 0) + 1
        self.running.add(f.call_id)
        self.last_call = f.call_id
        self.actions[f.call_id] = describe(call).text
        out: list[Effect] = [Record(R.ToolCall(update="started", tool_call_id=f.call_id, title=f.name, kind=call["kind"],
                                               status="in_progress", raw_input=f.input))]
        if seen > TOOL_LOOP_LIMIT and not self.done:
            why = f"tool loop: the agent called {self._said_as(f.call_id)!r} {seen} times"
            effects, halt = split(escalate(self.counts, rule_id="headless.tool_loop", prompt=self.actions[f.call_id], why=why,
                                           headline=why, can_ask=False))
            return [*out, *effects, *self._halt(halt)]
        return out

    def _tool_done(self, now: float, f: ToolDone) -> list[Effect]:
        """A call that ended. One rejected though nobody here denied it was refused by the agent itself: by cursor-pilot's
        hook in its settings (channels/agent/runhook.py: the run's policy, its decision a record of its own), by its own deny
        list, which holds the policy (channels/agent/nativedeny.py), when the policy refuses it too (a denial like the pilot's); else by
        a print mode that asks nobody (an older Cursor build without --force), which leaves the work undone."""
        self.running.discard(f.call_id)
        status = "rejected" if f.rejected is not None else "completed" if f.ok else "failed"
        out: list[Effect] = [Record(R.ToolCall(update="completed", tool_call_id=f.call_id, status=status, raw_input=None))]
        if f.rejected is None or f.call_id in self.denied:
            return out
        if refused_by_hook(f.rejected):  # cursor-pilot's hook in the agent: the run's policy (its hook_decided record is the loop's)
            self.turns.answered(self._said_as(f.call_id), f.rejected, "policy", "hook")
            return out
        denial = check_policy(self.actions.get(f.call_id, ""), self.config.cwd, self.config.allow)
        if denial is None:
            self.self_rejected.append(f"{self._said_as(f.call_id)} ({f.rejected})")
            return out
        self.turns.answered(self._said_as(f.call_id), "refused by the agent's own deny list", "policy", denial.rule)
        return out + [Record(R.PolicyDenied(policy_rule=denial.rule, evidence=denial.evidence, rule_id="headless.native_deny",
                                            reply=f.rejected))]

    def _said_as(self, call_id: str) -> str:
        return " ".join(self.actions.get(call_id, call_id).split())[:200]

    def _result(self, now: float, f: Result) -> list[Effect]:
        self.session_id = f.session_id or self.session_id
        usage = {**(f.usage or {}), **({"cost_usd": f.cost_usd} if f.cost_usd is not None else {})} or None
        if not self.turn_open or self.done:
            return [Record(R.HeadlessEvent(event={"type": "result", "late": True, "subtype": f.subtype}))]
        self.turn_open = False
        out: list[Effect] = [EndInput()]
        if f.is_error:
            failure = classify(f.text)
            if self.reset_at is not None or (failure is not None and failure.kind == "usage_limit"):  # waited out, then resumed
                return [*out, Record(R.TurnEnd(stop_reason=f.subtype or "error", usage=usage)),
                        *self._limit_hit(now, f.text, "headless.limit", self.reset_at)]
            code, why = (failure.code, failure.reason) if failure else (ExitCode.FAILED, f"the agent's turn failed ({f.subtype}): {f.text[:300]}")
            return out + [Record(R.TurnEnd(stop_reason=f.subtype or "error", usage=usage))] + self._end(code, why)
        if self.self_rejected:  # an older print mode rejects what needs approval and asks nobody: the work is not done
            why = (f"the agent rejected {len(self.self_rejected)} tool call(s) by itself and asked nobody: {'; '.join(self.self_rejected)[:400]}"
                   " (a print mode that does not ask: nothing of it was run)")
            effects, halt = split(escalate(self.counts, rule_id="headless.rejected", prompt=gist("".join(self.said)), why=why,
                                           headline=why, can_ask=False))
            return [*out, Record(R.TurnEnd(stop_reason="rejected", usage=usage)), *effects, *self._halt(halt)]
        token = self._token()
        self._open[token] = _Open("turn_end", None, {"stop": {"stop_reason": f.subtype or "success", "usage": usage}})
        return out + [CheckGoal(token)]

    def _goal_checked(self, now: float, f: GoalChecked) -> list[Effect]:
        o = self._open.get(f.token)
        if o is None or self.done:
            return []
        said, message = "".join(self.said), "".join(self.message).strip()
        asked = turn_end_question(said)
        closing = None if asked is None else Question(kind=Kind.INPUT.value, text=asked, key=f"headless.turn_end:{asked}",
                                                      source="headless.turn_end")
        n = self.turns.ended(now, f.facts, message or said, closing is not None)
        self.waits.limits.progressed()
        o.question = self.turns.question(text=message or said[-2000:], source="headless.turn_end", closing=closing,
                                         live=tuple(said.splitlines()[-40:]), multiline=True)
        return [Ask(f.token, o.question)] if n.action == "ask" else self._turn_next(f.token, o, n)

    def _next_turn(self, prompt: str) -> list[Effect]:
        if self.alive:  # the last turn's process is still ending: the next one starts when it has
            self.pending = prompt
            return []
        return self._start_turn(prompt, self.session_id)

    def _exited(self, now: float, f: Exited) -> list[Effect]:
        """The turn's process ended: recorded, with the last it said on stderr; what it means for the turn follows."""
        self.alive = False
        return [Record(R.ProgramExited(code=f.code, signal=None, last_words=f.last_words or None, describe=f.describe)),
                *self._process_ended(now, f)]

    def _process_ended(self, now: float, f: Exited) -> list[Effect]:
        if self.done:
            return []
        if (nudged := self._nudged()) is not None:  # a stuck turn's process was ended: the session goes on
            return nudged
        if self.turn_open:  # it ended without a result: the turn failed; its own words say why, where they can
            self.turn_open = False
            words = "\n".join([f.last_words, *self.noise[-5:], "".join(self.said)[-500:]])
            failure = classify(words)
            if failure is not None and failure.kind == "usage_limit":
                return self._limit_hit(now, words, "headless.limit", self.reset_at)
            if failure is not None:
                return self._end(failure.code, failure.reason)
            tail = f": {f.last_words}" if f.last_words else ""
            return self._end(ExitCode.FAILED, f"the agent ended without a result (exit code {f.code}){tail}")
        if self.pending is not None:
            prompt, self.pending = self.pending, None
            return self._start_turn(prompt, self.session_id)
        return []

    # -- permissions ------------------------------------------------------------------------------------------------------
    def _permission(self, now: float, f: PermissionAsked) -> list[Effect]:
        call = tool_call(f.tool, f.input)
        q = permission_question(call, [{"optionId": c.key, "name": c.label, "kind": c.kind} for c in OPTIONS], source="headless.permission")
        token = self._token()
        call_id = f.call_id or (self.last_call if self.last_call in self.running else None)
        self._open[token] = _Open("permission", q, {"key": f.key, "call_id": call_id, "described": describe(call).says_what})
        out: list[Effect] = [Record(R.PermissionRequest(tool_call={"name": f.tool, "input": f.input, "id": f.call_id},
                                                        options=[{"optionId": c.key, "name": c.label, "kind": c.kind} for c in OPTIONS],
                                                        fingerprint=fingerprint(call)))]
        if self.done:
            return out + self._deny_open()
        return out + [Ask(token, q)]

    def _control(self, now: float, f: ControlAsked) -> list[Effect]:
        message = f"cursor-pilot does not serve {f.subtype or 'this request'}"
        return [Record(R.HeadlessEvent(event={"type": "control_request", "subtype": f.subtype}, answered=message)),
                Unsupported(f.key, message)]

    def _decided(self, now: float, f: Decided) -> list[Effect]:
        o = self._open.get(f.token)
        if o is None or self.done:
            return []
        d = f.decision
        if d is None or d.by.kind is Answerer.NOBODY:  # the people asked gave no answer
            return self._halt(unanswered(o.human or "escalated", d.why if d is not None else ""))
        if d.verdict == Verdict.FAIL:
            return self._end(ExitCode.LIMIT if d.limit else ExitCode.FAILED, d.why)
        if o.kind == "turn_end":
            return self._judge_decided(f.token, o, d)
        return self._permission_decided(f.token, o, d)

    def _permission_decided(self, token: int, o: _Open, d: Decision) -> list[Effect]:
        assert o.question is not None
        outcome = permission_reply(o.question, d, False, o.data["described"])
        if outcome.reply is None or outcome.choice is None:
            return self._need_human(token, o, outcome.why)
        allow = (outcome.choice.kind or "").startswith("allow")
        effects = self._deliver(token, o, d, outcome.choice.label, {"option_id": outcome.choice.key, "option_kind": outcome.choice.kind,
                                                                    "policy_rule": d.denied})
        if self.done:
            return effects
        if not allow and o.data["call_id"]:
            self.denied.add(o.data["call_id"])
        message = "" if allow else (f"cursor-pilot's deny policy refuses this ({d.denied}): do not try it another way." if d.denied
                                    else "cursor-pilot denied this tool call.")
        del self._open[token]
        return [*effects, Reply(o.data["key"], allow, message)]

    def _deliver(self, token: int, o: _Open, d: Decision, sent: str, extra: dict | None = None) -> list[Effect]:
        q = o.question
        assert q is not None
        effects, halt = split(deliver(self.tally, Answer(prompt=q.text, reply=sent, source=d.source, rule_id=q.source, kind=q.kind,
                                                         headline=headline(q), counted=d.text or sent,
                                                         extra={"channel": "headless", **(extra or {})})))
        if halt is not None:
            return [*effects, *self._halt(halt)]
        if o.kind != "turn_end":
            self.turns.answered(headline(q), sent, d.source, d.denied)
        return [*effects]

    # -- the rest of the stream, and time -------------------------------------------------------------------------------
    def _other(self, now: float, f: Other) -> list[Effect]:
        return [Record(R.HeadlessEvent(event=f.event))]

    def _not_json(self, now: float, f: NotJson) -> list[Effect]:
        self.not_json += 1
        self.noise = [*self.noise, f.line][-NOT_JSON_KEPT:]
        return [Record(R.HeadlessNotJson(line=f.line[:500]))] if self.not_json <= NOT_JSON_KEPT else []

    def _spawn_failed(self, now: float, f: SpawnFailed) -> list[Effect]:
        self.alive = self.turn_open = False
        return self._end(ExitCode.USAGE, f.message)

    def _tick(self, now: float, f: Tick) -> list[Effect]:
        if self.done:
            return []
        if self.config.deadline is not None and now >= self.config.deadline:
            return self._end(ExitCode.LIMIT, self.config.deadline_reason)
        if (waited := self._wait_due(now, f.wall)) is not None:  # a usage limit's wait (channels/agent/waits.py)
            return waited
        limit = self.config.stuck_after * (TOOL_FACTOR if self.running else 1.0)
        if self.turn_open and not self._open and now - self.last_fact_at >= limit:
            quiet = now - self.last_fact_at
            return self._stuck_turn(quiet, f"stuck: the agent said nothing for {quiet:.0f}s in the middle of its turn", "".join(self.said), "headless.stuck")
        return []

    def _interrupted(self, now: float, f: Interrupted) -> list[Effect]:
        return self._end(ExitCode.INTERRUPTED, "interrupted")

    # -- what channels/agent/pilot.py asks of this pilot ------------------------------------------------------------------------
    def _shared(self, effects: list[Shared]) -> list[Effect]:
        return [*effects]

    def _ask_human(self, token: int, q: Question, why: str) -> Effect:
        return AskHuman(token, q, why)

    def _next_prompt(self, message: str) -> list[Effect]:
        return self._next_turn(message)

    def _interrupt(self) -> list[Effect]:  # (a stuck turn: its process ends, and the next one resumes the session)
        self.turn_open = False
        return [StopAgent()]

    # -- the end ----------------------------------------------------------------------------------------------------------
    def _end(self, code: ExitCode, reason: str) -> list[Effect]:
        """The one way a step ends: a permission still open is denied, a turn still running is stopped."""
        if self.done:
            return []
        self.done, self.exit_code, self.reason = True, code, reason
        return [*self._deny_open(), *([StopAgent()] if self.alive else []), End(code, reason)]

    def _deny_open(self) -> list[Effect]:
        out: list[Effect] = [Reply(o.data["key"], False, "cursor-pilot stopped") for o in self._open.values() if o.kind == "permission"]
        self._open.clear()
        return out

    def _token(self) -> int:
        self._tokens += 1
        return self._tokens


