"""A run: its steps in order, the transcript and manifest they share, dry runs and resumes.

A single ``-- COMMAND`` is a plan of one ``drive`` step. Each step is driven by the channel the registry names for its
kind (channels/registry.py; ``run:`` steps by the shell, channels/shell.py); the runner gives each its Job and keeps the
manifest.
"""

from __future__ import annotations

import os
import platform

from cursorpilot.decide import policyfile
from cursorpilot import __version__, resources
from cursorpilot.channels import goalcheck, reaper
from cursorpilot.channels import registry as channels
from cursorpilot.channels.contract import Job, StepResult
from cursorpilot.clock import Clock, SystemClock
from cursorpilot.decide.turns import DEFAULT_MAX_TURNS, TurnConfig
from cursorpilot.detect.profiles import Profile, load_profile, resolve_name
from cursorpilot.errors import ExitCode, PilotError
from cursorpilot.events import Outcome, Sink
from cursorpilot.human.humans import Humans
from cursorpilot.plan import Step
from cursorpilot.providers.rules import RulesProvider
from cursorpilot.records import models as R
from cursorpilot.records.manifest import Attempt, Manifest, StepRecord, StepStatus, now_iso, write_manifest
from cursorpilot.records.redact import Redactor
from cursorpilot.records.resume import file_hash, prompt_hash
from cursorpilot.records.transcript import Transcript
from cursorpilot.run_context import RunContext
from cursorpilot.runner.atstart import AtStart, snapshot
from cursorpilot.runner.spec import RunSpec

DRY_RUN_NOTE = ("dry run: each step's program is started and runs until its first question, then it is stopped; nothing is "
                "typed and no run: step runs. What a program does before it asks (writes a file, makes a key), it does.")


class Runner:
    def __init__(self, spec: RunSpec, sink: Sink, clock: Clock | None = None, resume: Manifest | None = None):
        self.spec = spec
        self.sink = sink
        self.clock = clock or SystemClock()
        self.resume = resume
        self.preview: list[dict] = []
        self.humans: Humans | None = None  # who is asked when nothing else can answer: the run's, handed to each step

    # -- setup -------------------------------------------------------------------
    def _profile(self, step: Step) -> Profile:
        name = step.profile or self.spec.plan.defaults.profile or self.spec.profile
        if not channels.CHANNELS[step.kind].reads_screen:
            return load_profile("generic")  # no screen to read
        return load_profile(resolve_name(name, self._command(step)), self.spec.detectors)

    def _command(self, step: Step) -> list[str]:
        return resources.self_command(channels.command_line(step, self.spec.cursor_bin))
    def _new_manifest(self, redactor: Redactor, found: AtStart) -> Manifest:
        """The manifest is redacted like the transcript: a token passed in argv never lands on disk (a resume of
        such a run needs the command given again; check_resumable says so)."""
        spec = self.spec
        return Manifest(
            run_id=spec.run_id, argv=redactor.value(spec.argv), options=redactor.value(spec.options),
            plan_path=str(spec.plan_path) if spec.plan_path else None,
            plan_hash=file_hash(spec.plan_path) if spec.plan_path else None,
            prompt_hash=prompt_hash(spec.governing_prompt),
            versions={"cursor_pilot": __version__, "python": platform.python_version(), "cursor": found.cursor},
            git_commit=found.commit, transcript=str(spec.log_dir / "transcript.jsonl"),
            created=now_iso(), updated=now_iso(),
            steps=[StepRecord(name=s.name, kind=s.kind) for s in spec.plan.steps],
        )

    def check_profiles(self) -> None:
        """Resolve every step's profile now: an unknown profile or bad detector file is exit 2 before anything runs."""
        for step in self.spec.plan.steps:
            self._profile(step)
    # -- the run -------------------------------------------------------------------
    def run(self) -> Outcome:
        """The run, start to end: its steps in order from the first unfinished one, then its outcome."""
        spec = self.spec
        spec.log_dir.mkdir(parents=True, exist_ok=True)
        found = AtStart(spec) if self.resume is None else None  # git's word, while the run sets itself up
        redactor = Redactor(cwd=spec.cwd, secrets=spec.secrets.values())
        self.sink.redact_with(redactor.text)  # what the sink prints of the program is redacted like the transcript
        tx = Transcript(spec.log_dir / "transcript.jsonl", spec.run_id, self.clock, redactor)
        self.manifest_path = spec.log_dir / "manifest.json"
        t0 = self.clock.monotonic()
        session = RunContext(
            tx=tx, redactor=redactor, clock=self.clock, log_dir=spec.log_dir, run_id=spec.run_id, provider=spec.provider,
            interactive=spec.interactive, cols=spec.cols, rows=spec.rows,
            context_tokens=spec.context_tokens, no_upload=spec.no_upload, keep_ci_env=spec.keep_ci_env, native_deny=spec.native_deny,
            allow=frozenset(spec.plan.allow),
            max_answers=spec.max_steps or spec.plan.defaults.max_steps, model_calls=spec.model_calls,
            deadline=t0 + spec.timeout if spec.timeout else None, dry_run=spec.dry_run, secrets=spec.secrets,
        )
        session.on_note = self.sink.note
        self.humans = humans = Humans(spec.humans, tx, self.clock, redactor.text, self.sink)
        if found is not None:
            self._start(session, redactor, found.result())
        else:
            self._resume(session)
        if spec.dry_run and any(s.run is None for s in spec.plan.steps):
            self.sink.note(DRY_RUN_NOTE)
            self._show_policy(session)
        self._wall_deadline = t0 + spec.max_wall if spec.max_wall else None
        session.on_turn = self._turn_recorded
        self._save(session)
        session.install_signals()
        humans.start()
        try:
            code, reason = self._steps(session)
        finally:
            session.restore_signals()
            humans.close()
        return self._finish(session, code, reason)

    def _show_policy(self, session: RunContext) -> None:
        """A preview shows the deny policy the run would weigh a yes by: pinned, or the governing prompt compiled now."""
        spec = self.spec
        governing = "\n\n".join(p for p in (spec.governing_prompt, spec.plan.prompt) if p)
        policy = spec.policy or policyfile.compile_now(governing, spec.provider, session.redactor.text)
        session.tx.write(R.PolicyCompiled(source=policy.source, policy=policy.data(), dropped=list(policy.dropped), lines=policy.lines()))
        self.sink.note("the deny policy, your governing prompt compiled:\n" + "\n".join(policy.lines()))

    def _start(self, session: RunContext, redactor: Redactor, found: AtStart) -> None:
        spec = self.spec
        self.manifest = self._new_manifest(redactor, found)
        session.tx.write(R.RunStarted(argv=spec.argv, plan=spec.plan.name, plan_path=str(spec.plan_path) if spec.plan_path else None,
                                      versions={"cursor_pilot": __version__, "python": platform.python_version()},
                                      provider=spec.provider.name, model=getattr(spec.provider, "model", None),
                                      steps=[s.name for s in spec.plan.steps], dry_run=spec.dry_run, governing_prompt=spec.governing_prompt,
                                      cwd=os.path.abspath(spec.cwd or os.getcwd()), git=found.snapshot))

    def _resume(self, session: RunContext) -> None:
        """--resume: the manifest's run goes on; a step left running counts as interrupted, the counters carry over."""
        assert self.resume is not None
        self.manifest = self.resume
        self.manifest.resumes += 1
        self.manifest.status = "running"
        for record in self.manifest.steps:
            if record.status == "running":
                record.status = "interrupted"
                if record.attempts and record.attempts[-1].finished is None:
                    record.attempts[-1].status, record.attempts[-1].finished = "interrupted", now_iso()
        start = self.manifest.first_unfinished()
        session.tx.write(R.RunResumed(argv=self.spec.argv, resumes=self.manifest.resumes, from_step=(start or 0) + 1))
        kept = self.manifest.counters
        if isinstance(answers := kept.get("answers"), int):
            session.answers = answers
        if isinstance(escalations := kept.get("escalations"), int):
            session.escalations = escalations
        for key in list(session.usage):
            value = kept.get(key)
            if isinstance(value, int):
                session.usage[key] = value

    def _steps(self, session: RunContext) -> tuple[ExitCode, str]:
        steps = self.spec.plan.steps
        code, reason = ExitCode.OK, "all steps completed"
        start = self.manifest.first_unfinished()
        for i in range(start if start is not None else len(steps), len(steps)):
            code, reason = self._step(i, steps[i], session)
            if code != ExitCode.OK:
                break
        if code == ExitCode.OK and self.spec.dry_run:
            reason = "dry run: nothing was typed"
        elif code == ExitCode.OK and len(steps) > 1:
            reason = f"all {len(steps)} steps completed"
        return code, reason

    def _step(self, i: int, step: Step, session: RunContext) -> tuple[ExitCode, str]:
        spec, record = self.spec, self.manifest.steps[i]
        n, total = i + 1, len(spec.plan.steps)
        record.status = "running"
        record.attempts.append(Attempt(started=now_iso()))
        self._save(session)
        session.tx.write(R.StepStarted(step=n, name=step.name, kind=step.kind))
        now = self.clock.monotonic()
        step_timeout = step.timeout or spec.plan.defaults.timeout
        deadline, why = session.deadline, f"timeout after {spec.timeout:g}s (--timeout)" if spec.timeout else ""
        if step_timeout and (deadline is None or now + step_timeout < deadline):
            deadline, why = now + step_timeout, f"step {step.name!r} timed out after {step_timeout:g}s"
        cwd = step.cwd or spec.cwd
        if session.interrupts:
            code, reason, child = ExitCode.INTERRUPTED, "interrupted", None
        else:
            try:
                code, reason, child = self._drive(n, total, step, session, cwd, deadline, why)
            except PilotError as exc:  # e.g. the program can't be started: the run ends, recorded
                code, reason, child = exc.exit_code, str(exc), None
        status: StepStatus = "completed" if code == ExitCode.OK else "interrupted" if code == ExitCode.INTERRUPTED else "failed"
        if spec.dry_run and code == ExitCode.OK:
            status = "previewed"
        attempt = record.attempts[-1]
        attempt.finished, attempt.status, attempt.exit_code, attempt.reason = now_iso(), status, child, reason
        record.status = "completed" if status == "previewed" else status
        if spec.dry_run:
            record.status = "pending"  # a preview completes nothing: a real run starts from here
        session.tx.write(R.StepFinished(step=n, name=step.name, status=status, exit_code=int(code), reason=reason))
        self._save(session)
        return code, reason

    def _rules_and_prompt(self, step: Step) -> tuple[RulesProvider | None, str]:
        """A step's rules (its own, the plan's, --rules when an LLM answers) and its governing prompt."""
        spec = self.spec
        entries = [*step.answers, *spec.plan.answers, *spec.rule_entries]
        rules = RulesProvider.from_entries(entries, "plan") if entries else None
        addenda = [p for p in (spec.plan.prompt, step.prompt) if p]
        return rules, "\n\n".join([spec.governing_prompt, *addenda]).strip()

    def _drive(self, n, total, step: Step, session: RunContext, cwd, deadline, why) -> tuple[ExitCode, str, int | None]:
        """A step, driven by the channel its kind names (channels/registry.py). A step that drives a program also has its
        rules and governing prompt, its turn ends, its goal check and its expect; shell commands only their exit codes."""
        if not channels.CHANNELS[step.kind].answers:  # (shell commands: nothing to answer)
            assert step.run is not None
            job = Job(command=list(step.run), governing_prompt="", name=step.name, index=n, total=total, cwd=cwd, env=step.env,
                      deadline=deadline, deadline_reason=why, step=step, ctx=session, sink=self.sink, people=self.humans,
                      policy=self.spec.policy)
            result: StepResult = channels.drive(step.kind, job)
            self.preview += [{"step": step.name, **row} for row in result.listed]
            return ExitCode(result.exit_code), result.reason, result.child
        record = self.manifest.steps[n - 1]
        rules, governing = self._rules_and_prompt(step)
        goal, check_timeout = self._goal(step)
        job = Job(command=self._command(step), governing_prompt=governing, name=step.name, index=n, total=total, cwd=cwd, env=step.env,
                  max_answers=step.max_steps, deadline=deadline, deadline_reason=why, rules=rules, step=step, ctx=session,
                  sink=self.sink, profile=self._profile(step), session_id=record.session_id, done_when=goal,
                  check_timeout=check_timeout, turns=self._turn_config(step, record), people=self.humans,
                  policy=self.spec.policy)
        result = channels.drive(step.kind, job)
        if self.humans is not None:
            self.humans.withdraw(f"step {n} ended: {result.reason}")
        if result.session_id:
            record.session_id = result.session_id
        code, reason, child = self._ended(step, result)
        if code == ExitCode.OK and goal and result.goal != "passed" and not self.spec.dry_run:
            code, reason = self._goal_at_end(n, goal, check_timeout, cwd, step, session, reason)
        return code, reason, child

    # -- turn ends (docs/turns.md) -----------------------------------------------------------------------------------
    def _goal(self, step: Step) -> tuple[str | None, float]:
        if step.done_when is not None:
            return step.done_when.run, step.done_when.timeout or goalcheck.CHECK_TIMEOUT
        return self.spec.done_when, goalcheck.CHECK_TIMEOUT

    def _turn_config(self, step: Step, record: StepRecord) -> TurnConfig:
        """How this step's turn ends are judged and bounded; a resumed step goes on from its ledger."""
        spec = self.spec
        max_turns = spec.max_turns or step.max_turns or spec.plan.defaults.max_turns or DEFAULT_MAX_TURNS
        used = max((t.get("turn") or 0 for t in record.turns), default=0)
        return TurnConfig(max_turns=max_turns, max_wall=spec.max_wall, wall_deadline=self._wall_deadline, max_cost=spec.max_cost,
                          first_turn=used, pending=record.pending, on_limit=spec.on_limit, stuck_after=spec.stuck_after)

    def _turn_recorded(self, step: int, fields: dict) -> None:
        """Each judged turn end goes into the manifest's ledger at once: a resume goes on from there, even after a crash."""
        record = self.manifest.steps[step - 1]
        check = fields.get("check") or {}
        record.turns.append({"turn": fields.get("turn"), "verdict": fields.get("verdict"), "why": fields.get("why"), "sent": fields.get("sent"),
                             "source": fields.get("source"), "check_exit_code": check.get("exit_code")})
        record.pending = fields.get("pending")
        write_manifest(self.manifest_path, self.manifest)

    def _goal_at_end(self, n: int, goal: str, timeout: float, cwd, step: Step, session: RunContext, reason: str) -> tuple[ExitCode, str]:
        """The program ended without a turn end that met the goal (it exited): the check decides whether it succeeded."""
        env = reaper.marked_env({**os.environ, **step.env}, session.run_id)
        check = goalcheck.run_check(goal, cwd, env, session.redactor.text, timeout)
        session.goal = "passed" if check.met else "failed"
        session.tx.write(R.GoalCheck(step=n, check=check.record(), met=check.met))
        if check.met:
            return ExitCode.OK, reason
        return ExitCode.FAILED, f"step {step.name!r}: the goal check {check.summary()} after the program ended"

    def _ended(self, step: Step, result: StepResult) -> tuple[ExitCode, str, int | None]:
        """Either channel's step result: its preview row, and the step's expect checked on what the program showed."""
        self.sink.step_ended(step.name, result.text, result.text_top)
        if result.preview is not None:
            self.preview.append({"step": step.name, **result.preview})
        elif self.spec.dry_run:
            self.preview.append({"step": step.name, "kind": "-", "question": "(nothing asked)", "would_send": "", "source": ""})
        code, reason = ExitCode(result.exit_code), result.reason
        if code == ExitCode.OK and step.expect and not self.spec.dry_run:
            code, reason = _check_expect(step, result.child, result.text, reason)
        return code, reason, result.child

    # -- records ---------------------------------------------------------------------
    def _save(self, session: RunContext) -> None:
        self.manifest.counters = {**session.counters(), "cost_usd": session.cost_usd}
        write_manifest(self.manifest_path, self.manifest)

    def _finish(self, session: RunContext, code: ExitCode, reason: str) -> Outcome:
        changed = session.usage.get("policy_changed", 0)
        if code in (ExitCode.OK, ExitCode.FAILED) and changed and not self.spec.dry_run:  # the task may be undone: said, never 0
            shown = "; ".join(session.overrides[:3]) + ("; …" if len(session.overrides) > 3 else "")
            code, reason = ExitCode.HUMAN_NEEDED, (f"{reason}, {'but' if code == ExitCode.OK else 'after'} the deny policy changed "
                                                   f"{changed} answer(s)" + (f" ({shown})" if shown else "")
                                                   + (": check that the task is done" if code == ExitCode.OK else
                                                      ": the program may have failed because of it"))
        stopped = code in (ExitCode.INTERRUPTED, ExitCode.LIMIT, ExitCode.HUMAN_NEEDED)
        self.manifest.status = "completed" if code == ExitCode.OK else "aborted" if stopped else "failed"
        self.manifest.exit_code, self.manifest.reason = int(code), reason
        self._save(session)
        ended = reaper.end_all(session.run_id)
        if ended:
            session.tx.write(R.DescendantsEnded(step=None, processes=[e.record() for e in ended]))
        session.tx.write(R.RunFinished(exit_code=int(code), reason=reason, counters=session.counters(), cost_usd=session.cost_usd,
                                       goal_check=session.goal, **self._last_child(session), git=snapshot(self.spec)))
        session.tx.close()
        outcome = Outcome(
            exit_code=int(code), reason=reason, answers=session.answers, escalations=session.escalations,
            transcript=str(session.tx.path), log_dir=str(self.spec.log_dir), child=self._child_text,
            counters=session.counters(), cost_usd=session.cost_usd, preview=self.preview if self.spec.dry_run else None,
            manifest=str(self.manifest_path), goal=session.goal,
        )
        self.sink.finished(outcome)
        return outcome

    _child_text = "not started"


    def _last_child(self, session: RunContext) -> dict:
        last = session.tx.latest.get("program_exited")
        if last is None:  # a resumed run whose steps ran before: read it back (only then)
            from cursorpilot.records.transcript import read_transcript

            exited = [r for r in read_transcript(session.tx.path) if r.type == "program_exited"]
            last = exited[-1].model_dump() if exited else None
        if last is None:
            return {"child_exit_code": None, "child_signal": None}
        self._child_text = last.get("describe", "")
        return {"child_exit_code": last.get("code"), "child_signal": last.get("signal")}


def _check_expect(step: Step, child: int | None, text: str, reason: str) -> tuple[ExitCode, str]:
    import re

    assert step.expect is not None
    if step.expect.exit_code is not None and child != step.expect.exit_code:
        return ExitCode.FAILED, f"step {step.name!r}: expected exit code {step.expect.exit_code}, got {child}"
    if step.expect.regex and not re.search(step.expect.regex, text, re.M):
        return ExitCode.FAILED, f"step {step.name!r}: expected {step.expect.regex!r} on screen, not seen"
    return ExitCode.OK, reason
