"""The ACP channel's loop: an agent driven over the Agent Client Protocol (JSON-RPC on its stdio), with the official SDK.

The agent's requests become Questions for the shared decision path (acp/ask.py); the Decisions go back as the
replies the protocol wants. The pilot also acts as the agent's file system and terminal where the agent asks it to:
every write and command passes the deny policy and lands in the transcript with its diff or output. Everything the
agent streams is recorded. Provider calls and humans are asked off the event loop.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cursorpilot import __version__
from cursorpilot.acp import ask
from cursorpilot.decide.asking import PromptFiler
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.guards import over_cap
from cursorpilot.decide.policy import check as check_policy
from cursorpilot.decide.question import Decision, Kind, Question, Verdict
from cursorpilot.errors import ExitCode
from cursorpilot.events import Sink
from cursorpilot import reaper
from cursorpilot.program_env import last_words, program_env
from cursorpilot.session import RunSession, StepBase, StepResult

TOOL_LOOP_LIMIT = 5  # the same tool call requested more often than this stops the run
INIT_TIMEOUT = 30.0  # an agent that has not answered initialize by then is not an ACP agent (npx may download first)
OUTPUT_LIMIT = 1 << 20  # bytes of a terminal's output kept by default
CANCEL_GRACE = 2.0  # after session/cancel, how long the agent may take to end its turn


@dataclass(slots=True, kw_only=True)
class AcpConfig(StepBase):
    task: str  # the first prompt
    session_id: str | None = None  # resume: the session to load where the agent can


class _Stop(Exception):
    def __init__(self, code: ExitCode, reason: str):
        super().__init__(reason)
        self.code, self.reason = code, reason


class AcpStep:
    def __init__(self, config: AcpConfig, run: RunSession, sink: Sink):
        self.config = config
        self.run_ = run
        self.tx = run.tx
        self.sink = sink
        self.cwd = os.path.abspath(config.cwd or os.getcwd())
        label = f"{config.index}/{config.total}: {config.name}"
        self.decider = Decider(run, config.governing_prompt, self.cwd, config.rules,
                               PromptFiler(run, config.index, label, self.cwd, config.governing_prompt))
        self.standing = ask.grants_standing_permission(config.governing_prompt)
        self.answers = 0
        self.session_id: str | None = None
        self.preview: dict | None = None
        self.said: list[str] = []  # the agent's message text, this turn
        self.all_said: list[str] = []
        self.tool_calls: dict[str, int] = {}
        self.terminals: dict[str, _Terminal] = {}
        self.not_json = 0
        self.err_tail = b""  # the end of the agent's stderr: quoted when it fails
        self.stop: _Stop | None = None
        self._stopped: asyncio.Event | None = None
        self._open_turn: asyncio.Future | None = None
        self._mark = f"{run.run_id}-{config.index}"
        self._conn = None

    # -- public -------------------------------------------------------------------------------------------------------
    def run(self) -> StepResult:
        try:
            code, reason, child = asyncio.run(self._main())
        finally:
            ended = reaper.end_all(self._mark, grace=3.0)
            if ended:
                self.tx.emit("descendants_ended", step=self.config.index, processes=[e.record() for e in ended])
        return StepResult(int(code), reason, child, self.answers, "\n".join(self.all_said), self.preview, self.session_id)

    async def _main(self) -> tuple[ExitCode, str, int | None]:
        from acp import connect_to_agent

        self._stopped = asyncio.Event()
        env, hidden = program_env(self.config.env, self._mark, self.run_.keep_ci_env)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.config.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=self.cwd, env=env, start_new_session=True, limit=16 << 20)
        except OSError as exc:
            return ExitCode.USAGE, f"cannot start {self.config.command[0]!r}: {exc.strerror}", None
        self.tx.emit("program_started", step=self.config.index, pid=proc.pid, command=self.config.command, channel="acp",
                     hidden_env=hidden or None)
        assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
        reader = asyncio.StreamReader(limit=16 << 20)
        pump = asyncio.create_task(self._pump(proc.stdout, reader))
        errors = asyncio.create_task(self._stderr(proc.stderr))
        self._conn = connect_to_agent(_Client(self), proc.stdin, reader, use_unstable_protocol=True)
        try:
            code, reason = await self._session()
        finally:
            child = await self._end(proc)
            pump.cancel()
            try:
                await asyncio.wait_for(errors, 1.0)  # the rest of its stderr, for the last words
            except (asyncio.TimeoutError, asyncio.CancelledError, OSError):  # its log failing changes nothing here
                pass
            for t in self.terminals.values():
                t.kill()
        failed = code == ExitCode.FAILED and child != 0
        last = last_words(self.err_tail.decode("utf-8", "replace").splitlines()) if failed else None
        self.tx.emit("program_exited", step=self.config.index, code=child, signal=None, last_words=last,
                     describe=f"exit code {child}" if child is not None and child >= 0 else f"killed by signal {-(child or 0)}")
        if last:
            reason = self.run_.redactor.text(f"{reason}; its stderr ended: {last}")
        return code, reason, child

    # -- the session ------------------------------------------------------------------------------------------------
    async def _session(self) -> tuple[ExitCode, str]:
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        conn = self._conn
        try:
            init = await asyncio.wait_for(conn.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True),
                client_info=Implementation(name="cursor-pilot", version=__version__)), timeout=self._left(INIT_TIMEOUT))
        except asyncio.TimeoutError:
            why = "the agent never answered initialize" + (f" (it printed {self.not_json} line(s) that are not JSON-RPC)"
                                                            if self.not_json else "")
            code, reason = self._limit_or(ExitCode.FAILED, why)
            return code, reason if reason == why else f"{reason}: {why}"
        except (ConnectionError, OSError) as exc:
            return ExitCode.FAILED, f"the agent ended before initialize ({exc})"
        caps = init.agent_capabilities
        can_load = bool(caps and caps.load_session)
        self.tx.emit("acp_initialized", protocol_version=init.protocol_version, load_session=can_load,
                     agent=(init.agent_info.model_dump(mode="json") if init.agent_info else None))
        prompt = self.config.task
        try:
            if self.config.session_id and can_load:
                await asyncio.wait_for(conn.load_session(cwd=self.cwd, session_id=self.config.session_id, mcp_servers=[]), self._left())
                self.session_id = self.config.session_id
                prompt = f"Continue the task where you left off: {self.config.task}"
            else:
                new = await asyncio.wait_for(conn.new_session(cwd=self.cwd, mcp_servers=[]), self._left())
                self.session_id = new.session_id
            self.tx.emit("acp_session", session_id=self.session_id, loaded=self.session_id == self.config.session_id)
            while True:
                self.said = []
                result = await self._turn(conn.prompt(session_id=self.session_id, prompt=[_text(prompt)]))
                if result is None:  # a rule of the run stopped it mid-turn (escalation, limit, dry run)
                    await self._cancel()
                    assert self.stop is not None
                    return self.stop.code, self.stop.reason
                self.tx.emit("turn_end", stop_reason=result.stop_reason, usage=_dump(getattr(result, "usage", None)))
                if self.stop is not None:
                    return self.stop.code, self.stop.reason
                if result.stop_reason == "cancelled":
                    return ExitCode.HUMAN_NEEDED, "the turn was cancelled"
                asked = ask.turn_end_question("".join(self.said))
                if asked is None:
                    return ExitCode.OK, f"completed (the agent ended its turn: {result.stop_reason})"
                prompt = await self._follow_up(asked)
        except asyncio.TimeoutError:
            await self._cancel()
            return self._limit_or(ExitCode.LIMIT, self.config.deadline_reason)
        except _Stop as stop:
            await self._cancel()
            return stop.code, stop.reason
        except (ConnectionError, OSError, EOFError) as exc:
            if self.stop is not None:
                return self.stop.code, self.stop.reason
            return ExitCode.FAILED, f"the agent ended mid-turn ({exc or 'connection closed'})"
        except Exception as exc:  # noqa: BLE001 - an agent's error reply (RequestError) ends the step, with its words
            if self.stop is not None:
                return self.stop.code, self.stop.reason
            return ExitCode.FAILED, f"the agent answered with an error: {exc}"

    async def _turn(self, prompt_call):
        """The turn's result, or None when the run was stopped while it ran; the deadline raises TimeoutError."""
        assert self._stopped is not None
        turn = asyncio.ensure_future(prompt_call)
        stopped = asyncio.ensure_future(self._stopped.wait())
        done, _ = await asyncio.wait({turn, stopped}, timeout=self._left(), return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if turn in done:
            return turn.result()
        self._open_turn = turn  # session/cancel, then the agent ends it ("cancelled"): _cancel waits for that
        if stopped in done:
            return None
        raise asyncio.TimeoutError

    async def _follow_up(self, asked: str) -> str:
        """The turn ended with a question to the user: it is answered with the next prompt (bounded by --max-steps)."""
        q = Question(kind=Kind.INPUT.value, text=asked, key=f"acp.turn_end:{asked}", source="acp.turn_end",
                     live=tuple("".join(self.said).splitlines()[-40:]))
        d = await self._decide(q)
        if d.verdict != Verdict.ANSWER or d.text is None:
            raise _Stop(*self._escalated(q, d.why or "no answer"))
        self._answered(q, d, d.text)
        if self.run_.dry_run:
            raise _Stop(ExitCode.OK, "previewed (dry run)")
        return d.text

    def _left(self, cap: float | None = None) -> float | None:
        deadline = self.config.deadline
        if deadline is None:
            return cap
        left = max(0.01, deadline - self.run_.clock.monotonic())
        return min(left, cap) if cap is not None else left

    def _limit_or(self, code: ExitCode, reason: str) -> tuple[ExitCode, str]:
        if self.config.deadline is not None and self.run_.clock.monotonic() >= self.config.deadline:
            return ExitCode.LIMIT, self.config.deadline_reason
        return code, reason

    async def _cancel(self) -> None:
        """session/cancel, then a moment for the agent to end the turn as the protocol asks, before it is ended."""
        if self.session_id is not None and self._conn is not None:
            try:
                await asyncio.wait_for(self._conn.cancel(session_id=self.session_id), 2.0)
                self.tx.emit("acp_cancel", session_id=self.session_id)
            except Exception:  # noqa: BLE001 - the agent may be gone already
                pass
        turn, self._open_turn = self._open_turn, None
        if turn is not None:
            try:
                await asyncio.wait_for(asyncio.shield(turn), CANCEL_GRACE)
            except BaseException:  # noqa: BLE001 - it ended, failed, or took too long: the agent is ended next either way
                turn.cancel()

    async def _end(self, proc) -> int | None:
        try:
            if proc.stdin and not proc.stdin.is_closing():
                proc.stdin.close()
            return await asyncio.wait_for(proc.wait(), 3.0)
        except asyncio.TimeoutError:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    return await asyncio.wait_for(proc.wait(), 3.0)
                except asyncio.TimeoutError:
                    continue
        return proc.returncode

    # -- the wire ------------------------------------------------------------------------------------------------------
    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamReader) -> None:
        """Lines from the agent to the SDK: what is not JSON-RPC is recorded and dropped (the SDK would log a traceback);
        Cursor's extension requests (`cursor/…`) are routed the SDK's way for extensions (`_cursor/…`)."""
        try:
            while True:
                line = await source.readline()
                if not line:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                    self.not_json += 1
                    if self.not_json <= 20:
                        self.tx.emit("acp_not_json", line=line.decode("utf-8", "replace").rstrip()[:500])
                    continue
                method = message.get("method")
                if isinstance(method, str) and method.startswith("cursor/"):
                    message["method"] = "_" + method
                    line = (json.dumps(message) + "\n").encode()
                sink.feed_data(line)
        finally:
            sink.feed_eof()

    async def _stderr(self, source: asyncio.StreamReader) -> None:
        path = self.run_.log_dir / (f"agent-stderr-{self.config.index:02d}.log" if self.config.index > 1 else "agent-stderr.log")
        with open(path, "ab") as fh:
            while True:
                chunk = await source.read(65536)
                if not chunk:
                    return
                fh.write(chunk)
                fh.flush()
                self.err_tail = (self.err_tail + chunk)[-8192:]

    # -- deciding ----------------------------------------------------------------------------------------------------
    async def _decide(self, q: Question) -> Decision:
        d = self.decider.first(q)
        if d is None:
            reply = await asyncio.to_thread(self.decider.call, self.decider.request(q))
            d = self.decider.after(q, reply)
        if d.verdict == Verdict.FAIL:
            self._halt(ExitCode.FAILED, d.why)
        return d

    def _limit(self) -> None:
        capped = over_cap(self.run_.answers, self.run_.max_answers, self.answers, self.config.max_answers)
        if capped:
            self._halt(ExitCode.LIMIT, capped)

    def _halt(self, code: ExitCode, reason: str) -> None:
        """End the run: the request being handled gets its "cancelled" reply, the turn is cancelled."""
        self.stop = self.stop or _Stop(code, reason)
        if self._stopped is not None:
            self._stopped.set()
        raise self.stop

    def _escalated(self, q: Question, why: str) -> tuple[ExitCode, str]:
        self.run_.escalations += 1
        self.tx.emit("escalation", rule_id=q.source, prompt=q.text, why=why, interactive=self.run_.interactive)
        self.sink.note(f"needs a human: {why}")
        return ExitCode.HUMAN_NEEDED, f"a human is needed ({why}): {q.text.splitlines()[0][:120]}"

    async def _human(self, q: Question, why: str) -> Decision:
        """Escalate: a human at the terminal answers (off the event loop), or the run stops with exit 3."""
        if not self.run_.interactive or self.run_.dry_run:
            self._halt(*self._escalated(q, why))
        self._escalated(q, why)
        text = await asyncio.to_thread(self.sink.ask_human, q.text + ("\n" + q.describe_choices() if q.choices else ""), why)
        if text is None:
            self._halt(ExitCode.HUMAN_NEEDED, f"a human is needed ({why}); none answered")
        self.tx.emit("human_reply", text=text)
        return self.decider.check(q, Decision(Verdict.ANSWER, text=text, source="human"))

    def _answered(self, q: Question, d: Decision, sent: str, **extra: Any) -> None:
        self._limit()
        if self.run_.dry_run:
            self.preview = {"kind": q.kind, "question": q.text.splitlines()[0][:120], "would_send": sent, "source": d.source,
                            "rule_id": q.source}
            self.tx.emit("would_send", step=self.config.index, rule_id=q.source, prompt=q.text, reply=sent, source=d.source, **extra)
            self._halt(ExitCode.OK, "previewed (dry run)")
        self.answers += 1
        self.run_.answers += 1
        self.decider.delivered(q.text, d.text or sent)
        self.tx.emit("answer", step=self.config.index, rule_id=q.source, prompt=q.text, reply=sent, source=d.source,
                     n=self.run_.answers, kind=q.kind, channel="acp", **extra)
        self.sink.answer(q.text.splitlines()[0][:120], sent, d.source)

    # -- the agent's requests --------------------------------------------------------------------------------------------
    async def permission(self, tool_call: dict, options: list[dict]) -> dict:
        fp = ask.fingerprint(tool_call)
        self.tool_calls[fp] = self.tool_calls.get(fp, 0) + 1
        self.tx.emit("permission_request", tool_call=tool_call, options=options, fingerprint=fp, seen=self.tool_calls[fp])
        q = ask.permission_question(tool_call, options, self.config.governing_prompt)
        if self.tool_calls[fp] > TOOL_LOOP_LIMIT:
            self._halt(*self._escalated(q, f"tool loop: the agent asked for the same call {self.tool_calls[fp]} times"))
        d = await self._decide(q)
        outcome = ask.permission_reply(q, d, tool_call.get("rawInput") is not None, self.standing) \
            if d.verdict == Verdict.ANSWER else ask.Outcome(None, why=d.why)
        if outcome.reply is None:
            d = await self._human(q, outcome.why or "no answer")
            outcome = ask.permission_reply(q, d, True, self.standing)
            if outcome.reply is None:
                self._halt(*self._escalated(q, outcome.why))
        choice = outcome.choice
        assert choice is not None
        self._answered(q, d, choice.label, option_id=choice.key, option_kind=choice.kind, policy_rule=d.denied)
        return outcome.reply

    async def elicitation(self, message: str, mode: dict) -> dict:
        schema = mode.get("requestedSchema") or {}
        self.tx.emit("elicitation", message=message, mode=mode)
        if not schema:
            self._escalated(Question(kind=Kind.FORM.value, text=message, key="acp.elicitation.url", source="acp.elicitation"),
                            "an elicitation the pilot can't fill (a URL to open)")
            return {"action": "decline"}
        q = ask.form_question(message, schema, f"acp.elicitation:{message}")
        d = await self._decide(q)
        content = ask.form_content(schema, d.text) if d.verdict == Verdict.ANSWER and d.text is not None else None
        if content is None:
            d = await self._human(q, d.why or "the answer does not fit the form")
            content = ask.form_content(schema, d.text or "")
            if content is None:
                self._halt(*self._escalated(q, "the answer does not fit the form"))
        self._answered(q, d, json.dumps(content))
        return {"action": "accept", "content": content}

    async def extension(self, method: str, params: dict) -> dict:
        self.tx.emit("acp_extension", method=method, params=params)
        if method == "cursor/ask_question":
            answers = []
            for qid, q in ask.ask_question_questions(params):
                d = await self._decide(q)
                if d.verdict != Verdict.ANSWER:
                    d = await self._human(q, d.why)
                chosen = d.choices or ()
                if q.choices and not chosen:
                    self._halt(*self._escalated(q, f"the reply {d.text!r} names none of the options"))
                self._answered(q, d, d.text or "")
                answers.append({"questionId": qid, "selectedOptionIds": [c.key for c in chosen]} if q.choices
                               else {"questionId": qid, "text": d.text})
            return {"outcome": {"outcome": "answered", "answers": answers}}
        if method == "cursor/create_plan":
            q = ask.plan_question(params)
            d = await self._decide(q)
            if d.verdict != Verdict.ANSWER or not d.choices:
                d = await self._human(q, d.why or "no answer")
            accepted = bool(d.choices) and d.choices[0].key == "accept"
            self._answered(q, d, "Accept" if accepted else "Reject", policy_rule=d.denied)
            return {"outcome": {"outcome": "accepted"}} if accepted else {
                "outcome": {"outcome": "rejected", "reason": d.text if not d.denied else f"refused by the deny policy ({d.denied})"}}
        return {}

    def update(self, update: dict) -> None:
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            text = (update.get("content") or {}).get("text") or ""
            if kind == "agent_message_chunk":
                self.said.append(text)
                self.all_said.append(text)
            self.tx.emit("acp_update", update=kind, text=text)
        elif kind in ("tool_call", "tool_call_update"):
            self.tx.emit("tool_call", update=kind, tool_call_id=update.get("toolCallId"), title=update.get("title"),
                         kind=update.get("kind"), status=update.get("status"), raw_input=update.get("rawInput"))
        elif kind == "plan":
            self.tx.emit("plan", entries=update.get("entries"))
        else:
            self.tx.emit("acp_update", update=kind, data=update)

    # -- the agent's file system and terminal -------------------------------------------------------------------------------
    def _inside(self, path: str) -> Path:
        p = Path(path if os.path.isabs(path) else os.path.join(self.cwd, path)).resolve()
        if os.path.commonpath([str(p), self.cwd]) != self.cwd:
            raise _refused(f"{path} is outside the working directory")
        return p

    def read_file(self, path: str, line: int | None, limit: int | None) -> str:
        denial = check_policy(f"cat {path}", self.cwd, self.run_.allow)
        if denial is not None and denial.rule == "secrets_read":
            self.tx.emit("policy_denied", policy_rule=denial.rule, evidence=denial.evidence, rule_id="acp.fs_read", reply=None)
            raise _refused(f"reading {path} is refused by the deny policy ({denial.rule})")
        text = Path(path if os.path.isabs(path) else os.path.join(self.cwd, path)).read_text(encoding="utf-8", errors="replace")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max(0, (line or 1) - 1)
            text = "".join(lines[start : start + limit if limit else None])
        self.tx.emit("fs_read", path=path, chars=len(text))
        return text

    def write_file(self, path: str, content: str) -> None:
        target = self._inside(path)
        denial = check_policy(f"write {path}", self.cwd, self.run_.allow)
        if denial is not None:
            self.tx.emit("policy_denied", policy_rule=denial.rule, evidence=denial.evidence, rule_id="acp.fs_write", reply=None)
            raise _refused(f"writing {path} is refused by the deny policy ({denial.rule})")
        old = target.read_text(encoding="utf-8", errors="replace") if target.exists() else ""
        diff = "".join(difflib.unified_diff(old.splitlines(keepends=True), content.splitlines(keepends=True), f"a/{path}", f"b/{path}"))
        if self.run_.dry_run:
            self.tx.emit("would_write", path=path, diff=diff)
            raise _refused("dry run: nothing is written")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        self.tx.emit("fs_write", path=path, diff=diff)

    async def terminal_create(self, command: str, args: list[str], env: dict[str, str], cwd: str | None, limit: int | None) -> str:
        line = " ".join([command, *args])
        denial = check_policy(line, self.cwd, self.run_.allow)
        if denial is not None:
            self.tx.emit("policy_denied", policy_rule=denial.rule, evidence=denial.evidence, rule_id="acp.terminal", reply=None)
            raise _refused(f"`{line}` is refused by the deny policy ({denial.rule})")
        if self.run_.dry_run:
            self.tx.emit("would_run", command=line)
            raise _refused("dry run: nothing is run")
        term = _Terminal(str(len(self.terminals) + 1), line, limit or OUTPUT_LIMIT)
        full_env = reaper.marked_env({**os.environ, **self.config.env, **env}, self._mark)
        await term.start([command, *args], cwd or self.cwd, full_env)
        self.terminals[term.id] = term
        self.tx.emit("terminal_started", terminal_id=term.id, command=line)
        return term.id

    def terminal(self, terminal_id: str) -> "_Terminal":
        term = self.terminals.get(terminal_id)
        if term is None:
            raise _refused(f"no terminal {terminal_id}")
        return term

    def terminal_done(self, term: "_Terminal") -> None:
        if not term.recorded and term.exit_code is not None:
            term.recorded = True
            self.tx.emit("terminal_exited", terminal_id=term.id, command=term.line, exit_code=term.exit_code,
                         output=term.output.decode("utf-8", "replace")[-4000:], truncated=term.truncated)


def _refused(message: str) -> Exception:
    from acp import RequestError

    return RequestError.invalid_request({"details": message})


def _text(text: str):
    from acp import text_block

    return text_block(text)


def _dump(obj: Any) -> Any:
    if obj is None:
        return None
    dump = getattr(obj, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if dump else obj


class _Terminal:
    def __init__(self, id_: str, line: str, limit: int):
        self.id, self.line, self.limit = id_, line, limit
        self.output = b""
        self.truncated = False
        self.exit_code: int | None = None
        self.recorded = False
        self.proc = None
        self._reader: asyncio.Task | None = None

    async def start(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                         stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                         start_new_session=True)
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output += chunk
            if len(self.output) > self.limit:
                self.output, self.truncated = self.output[-self.limit :], True
        self.exit_code = await self.proc.wait()

    async def wait(self) -> int | None:
        if self._reader is not None:
            await self._reader
        return self.exit_code

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class _Client:
    """The SDK's Client: each request handed to the step, as plain JSON."""

    def __init__(self, step: AcpStep):
        self.step = step

    def on_connect(self, conn) -> None:
        pass

    async def request_permission(self, session_id: str, tool_call, options, **kwargs):
        from acp.schema import RequestPermissionResponse

        try:
            reply = await self.step.permission(_dump(tool_call), [_dump(o) for o in options])
        except _Stop:
            reply = ask.CANCELLED  # the run ends here (escalation, limit, dry run): nothing is approved
        return RequestPermissionResponse.model_validate(reply)

    async def session_update(self, session_id: str, update, **kwargs) -> None:
        self.step.update(_dump(update))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs):
        self.step.write_file(path, content)
        return None

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs):
        from acp.schema import ReadTextFileResponse

        return ReadTextFileResponse(content=self.step.read_file(path, line, limit))

    async def create_terminal(self, session_id: str, command: str, args=None, env=None, cwd=None, output_byte_limit=None, **kwargs):
        from acp.schema import CreateTerminalResponse

        variables = {e.name: e.value for e in env or []}
        tid = await self.step.terminal_create(command, list(args or []), variables, cwd, output_byte_limit)
        return CreateTerminalResponse(terminal_id=tid)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs):
        from acp.schema import TerminalExitStatus, TerminalOutputResponse

        term = self.step.terminal(terminal_id)
        status = TerminalExitStatus(exit_code=term.exit_code) if term.exit_code is not None else None
        self.step.terminal_done(term)
        return TerminalOutputResponse(output=term.output.decode("utf-8", "replace"), truncated=term.truncated, exit_status=status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs):
        from acp.schema import WaitForTerminalExitResponse

        term = self.step.terminal(terminal_id)
        code = await term.wait()
        self.step.terminal_done(term)
        return WaitForTerminalExitResponse(exit_code=code)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs):
        self.step.terminal(terminal_id).kill()
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs):
        term = self.step.terminals.pop(terminal_id, None)
        if term is not None:
            term.kill()
            self.step.terminal_done(term)
        return None

    async def create_elicitation(self, message: str, mode, **kwargs):
        try:
            return await self.step.elicitation(message, _dump(mode) or {})
        except _Stop:
            return {"action": "cancel"}

    async def complete_elicitation(self, elicitation_id: str, **kwargs) -> None:
        return None

    async def ext_method(self, method: str, params: dict) -> dict:
        try:
            return await self.step.extension(method, params)
        except _Stop:
            return {"outcome": {"outcome": "cancelled"}}

    async def ext_notification(self, method: str, params: dict) -> None:
        self.step.tx.emit("acp_extension", method=method, params=params, notification=True)
