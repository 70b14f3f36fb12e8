"""`cursor-pilot run` (and `demo`, and `learn`, which are runs): the options read, checked and turned into a RunSpec,
the run started, and what is written at its end (the learned rules, the report).

Every check that can refuse the run runs before its folder is made, in the order the user meets them."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from cursorpilot.errors import BadInput
from cursorpilot.commands.runargs import RESUMABLE, RunArgs

if TYPE_CHECKING:
    from cursorpilot.channels.registry import Channel
    from cursorpilot.human.humans import HumanConfig
    from cursorpilot.records.manifest import Manifest
    from cursorpilot.plan import Plan
    from cursorpilot.providers.base import Provider
    from cursorpilot.providers.rules import RuleEntry
    from cursorpilot.runner.spec import RunSpec


def run(args: RunArgs, given: frozenset[str], *, argv: list[str], run_id: str | None = None) -> int:
    """The run the options describe, to its end; its exit code. `given`: the options given on the command line (a
    resumed run keeps its own for the others); `run_id`: the run's id when it was made before (startup/start.py)."""
    from rich.console import Console

    from cursorpilot.commands.learning import learned_at_exit
    from cursorpilot.logs import configure_logging
    from cursorpilot.records.pastruns import register
    from cursorpilot.runner.run import Runner
    from cursorpilot.ui import ConsoleSink
    from cursorpilot.commands.watched import watched

    args, manifest = _resumed(args, given)
    args, command, task = _program(args)
    spec = _spec(args, command, task, manifest, argv, manifest.run_id if manifest else run_id)
    # logs and CI: no line is cut in two (`grep 'exit 3'` finds it); a table still fits 140 columns
    console = Console() if sys.stdout.isatty() else Console(width=140, soft_wrap=True)
    runner = Runner(spec, ConsoleSink(console, quiet=args.quiet), resume=manifest)
    runner.check_profiles()
    runner.sink = watched(runner.sink, spec.log_dir, spec.run_id)  # cursor-pilot watch looks in from another terminal
    register(spec.log_dir, spec.run_id)  # cursor-pilot runs lists it from anywhere
    configure_logging(spec.log_dir, debug=args.debug)
    try:
        return runner.run().exit_code
    finally:
        if spec.humans.terminal:  # the offer is a question at the terminal: with nobody there, nobody is asked it
            learned_at_exit(spec.log_dir, args.learn, args.rules, command or [str(args.plan)])
        if args.report:
            report_at_exit(spec.log_dir)


def _resumed(args: RunArgs, given: frozenset[str]) -> tuple[RunArgs, Manifest | None]:
    """--resume: the run's own options (those not given again now), in its folder; and its manifest."""
    if not args.resume:
        return args, None
    from cursorpilot.records.manifest import read_manifest
    from cursorpilot.records.pastruns import find_run
    from cursorpilot.records.resume import check_redacted

    where = args.resume
    if where.is_dir() or (not where.exists() and len(where.parts) == 1):  # a run's folder, or its id
        where = find_run(str(where)).folder / "manifest.json"
    manifest = read_manifest(where)
    check_redacted(manifest, given)
    saved = {k: manifest.options[k] for k in RESUMABLE if k not in given and k in manifest.options}
    own = RunArgs.from_values({**args.values(), **saved})
    return own.replace(resume=where, log=where.parent), manifest


def _program(args: RunArgs) -> tuple[RunArgs, list[str], str | None]:
    """The program's command line (a known agent's, with --agent and no command), and, for an agent driven over ACP or
    its print mode, its task; the plan named by its file or a bundled one's name."""
    command = list(args.command or [])
    task = None
    channel = _channel(args)
    if channel is not None:
        if args.agent and not command:
            command = (channel.launcher(args.agent) if channel.launcher else None) or []
            if not command:
                known = ", ".join(channel.agents() if channel.agents else [])
                raise BadInput(f"unknown agent {args.agent!r}; known: {known} (or give its command after --)")
        if not args.task:
            raise BadInput(f"{channel.called} run needs --task TEXT: the first prompt sent to the agent")
        task = args.task
    if args.plan is not None:
        args = args.replace(plan=plan_path(args.plan))
    if args.plan and command:
        raise BadInput("--plan and -- COMMAND can't be combined: put the command in a drive: step")
    if not args.plan and not command:
        raise BadInput("nothing to run: give -- COMMAND [ARGS...] or --plan FILE (or try: cursor-pilot demo)")
    return args, command, task


def _channel(args: RunArgs) -> Channel | None:
    """The channel `-- COMMAND` or `--agent` goes through when not a screen: the one whose flag is given, or the one
    `--agent` alone picks (channels/registry.py declares each flag); None: a program on a terminal."""
    from cursorpilot.channels.registry import flagged

    given = sorted((c for c in flagged() if getattr(args, c.flag or "")), key=lambda c: c.by_agent)
    if len(given) > 1:
        raise BadInput(f"{' and '.join(f'--{c.flag}' for c in given)} are two channels: pick one")
    if given or not args.agent:
        return given[0] if given else None
    return next(c for c in flagged() if c.by_agent)


def _spec(args: RunArgs, command: list[str], task: str | None, manifest: Manifest | None, argv: list[str], run_id: str | None) -> RunSpec:
    """The run as the runner takes it, every option checked (a mistake is one line before anything is made)."""
    from cursorpilot.commands.learning import check_learning
    from cursorpilot.decide import policyfile
    from cursorpilot.durations import parse_duration
    from cursorpilot.records.pastruns import runs_home
    from cursorpilot.plan import load_plan, single_command_plan
    from cursorpilot.commands.preflight import check_new_log_dir, check_secrets_given, check_startable
    from cursorpilot.providers.rules import parse_answer
    from cursorpilot.records.resume import check_resumable
    from cursorpilot.runner.spec import RunSpec, default_run_id
    from cursorpilot.records.secret import given as given_secrets

    through = _channel(args) if task is not None else None
    plan = load_plan(args.plan) if args.plan else single_command_plan(command, task, through.key if through else None)
    timeout = parse_duration(args.timeout) if args.timeout else None
    governing = load_governing_prompt(args.prompt)
    pinned_file = existing(args.policy, "policy file")
    pinned = policyfile.load(pinned_file) if pinned_file is not None else None
    if manifest is not None:
        check_resumable(manifest, args.plan, governing, args.force)
    args = args.replace(rules=existing(args.rules, "rules file"))
    answers = [parse_answer(a, i + 1) for i, a in enumerate(args.answer or [])]
    secrets = given_secrets(list(args.secret or []), os.environ)  # names and variables are kept for --resume, values never
    detectors = existing(args.detectors, "detector file")
    if args.learn is not None:
        args = check_learning(args, is_interactive())
    provider, rule_entries, read = _answerer(args, answers, interactive_steps=any(step.run is None for step in plan.steps))
    check_secrets_given(_rules_written(args, answers, read, plan), secrets)
    max_wall = parse_duration(args.max_wall) if args.max_wall else None
    on_limit, stuck_after = _agent_limits(args)
    _check_max_cost(args.max_cost, provider)
    model_calls = model_call_caps(args.max_model_calls or "1000/20")
    cwd = args.cwd
    if cwd is not None and not cwd.is_dir():
        raise BadInput(f"--cwd is not a directory: {cwd}")
    run_id = run_id or default_run_id()
    log_dir: Path = args.log or runs_home() / run_id
    if manifest is None:
        check_new_log_dir(log_dir)
        check_startable(plan, args.cursor)
    humans = _humans(args)
    return RunSpec(
        plan=plan, governing_prompt=governing, provider=provider, run_id=run_id, log_dir=log_dir, argv=argv, options=args.saved(),
        plan_path=args.plan, rule_entries=rule_entries, policy=pinned,
        profile=args.profile, detectors=detectors, cursor_bin=args.cursor, cwd=str(cwd) if cwd else None,
        max_steps=args.max_steps, model_calls=model_calls, timeout=timeout, dry_run=args.dry_run, done_when=args.done_when or None,
        max_turns=args.max_turns, max_wall=max_wall, max_cost=args.max_cost, on_limit=on_limit, stuck_after=stuck_after,
        interactive=humans.reachable, context_tokens=args.context_tokens, humans=humans,
        no_upload=args.no_upload, keep_ci_env=args.keep_ci_env, native_deny=not args.no_native_deny, cols=args.cols, rows=args.rows,
        secrets=secrets,
    )


def _humans(args: RunArgs) -> HumanConfig:
    """Who is asked when nothing else can answer, and how (docs/human.md)."""
    from cursorpilot.durations import parse_duration
    from cursorpilot.human.humans import configure

    return configure(terminal=is_interactive() and os.environ.get("CI") is None, notify=list(args.notify or []), listen=args.listen,
                     timeout=parse_duration(args.human_timeout) if args.human_timeout else None,
                     on_timeout=args.on_human_timeout or "exit", dry_run=args.dry_run)


def model_call_caps(text: str) -> tuple[int | None, int | None]:
    """--max-model-calls N[/Q]: the model calls a run may make, and one question (Q defaults to 20); 'off': no cap. A
    model that misbehaves (the same question asked again and again) can't spend without bound."""
    if text.strip().lower() == "off":
        return None, None
    run, _, question = text.partition("/")
    try:
        caps = int(run), int(question) if question else 20
    except ValueError:
        raise BadInput(f"--max-model-calls takes N or N/Q (calls in the run / for one question) or 'off', not {text!r}") from None
    if min(caps) < 1:
        raise BadInput(f"--max-model-calls: each cap is at least 1 (or 'off'), not {text!r}")
    return caps


def _agent_limits(args: RunArgs) -> tuple[str, float | None]:
    """--on-limit and --stuck-after, checked."""
    from cursorpilot.decide.limits import ON_LIMIT
    from cursorpilot.durations import parse_duration

    on_limit = args.on_limit or "wait"
    if on_limit not in ON_LIMIT:
        raise BadInput(f"--on-limit {on_limit}: give one of {', '.join(ON_LIMIT)}")
    stuck_after = parse_duration(args.stuck_after) if args.stuck_after else None
    if stuck_after is not None and stuck_after <= 0:
        raise BadInput("--stuck-after must be longer than 0s")
    return on_limit, stuck_after


def _answerer(args: RunArgs, answers: list[RuleEntry], interactive_steps: bool) -> tuple[Provider, list[RuleEntry], list[RuleEntry]]:
    """Who answers (the provider), the rules that go before it, and the rules of --rules as read. No key and no rules: the rules provider with none,
    so a program that asks nothing runs, and each question goes to a person (exit 3 with nobody at the terminal,
    saying how to choose an answerer)."""
    from cursorpilot.durations import parse_duration
    from cursorpilot.commands.learn import LearningRules
    from cursorpilot.providers import choose as choose_provider
    from cursorpilot.providers import create as create_provider
    from cursorpilot.providers.base import ProviderConfig
    from cursorpilot.providers.llm import load_prices
    from cursorpilot.providers.rules import RulesProvider, read_entries

    rules = args.rules
    provider_name = choose_provider(args.provider or (None if interactive_steps else "rules"), True, dict(os.environ))
    pconfig = ProviderConfig(
        rules_file=rules, model=args.model, base_url=args.base_url, retries=args.llm_retries,
        timeout=parse_duration(args.llm_timeout), prices=load_prices(existing(args.prices, "prices file")),
    )
    provider: Provider
    rule_entries: list[RuleEntry]
    if args.escalate_to and provider_name in ("rules", "script"):
        raise BadInput("--escalate-to asks models one after another: --provider must name a model's provider (openai, anthropic, "
                       "local); rules go first anyway with --rules")
    if provider_name == "rules":  # --answer first, then --rules; with neither, the plan's answers alone (no match escalates)
        origin = str(rules or ("--answer" if answers else "--learn" if args.learn else "--provider rules" if args.provider else ""))
        # (""): nothing was chosen to answer, and a question's escalation says how to choose
        read = read_entries(rules) if rules else []
        provider = (LearningRules if args.learn else RulesProvider)([*answers, *read], origin)
        rule_entries = []
    else:  # an answerer that is not rules: the rules go first, as the step's own (the script's file is its script)
        provider = create_provider(provider_name, pconfig)
        if args.escalate_to:
            provider = _cascade(provider, args, pconfig)
        read = read_entries(rules) if rules is not None and provider.needs_prompt else []
        rule_entries = [*answers, *read]
    return provider, rule_entries, read


def _cascade(first: Provider, args: RunArgs, pconfig) -> Provider:
    """--escalate-to: the run's model first, each named model after it (decide/cascade.py)."""
    from dataclasses import replace

    from cursorpilot.decide.cascade import CascadeProvider, parse_escalation
    from cursorpilot.providers import create as create_provider
    from cursorpilot.providers.llm import ChatProvider

    tiers = [first]
    for spec in args.escalate_to or ():
        name, model, base_url = parse_escalation(spec)
        tiers.append(create_provider(name, replace(pconfig, model=model, base_url=base_url)))
    if not all(isinstance(t, ChatProvider) for t in tiers):
        raise BadInput("--escalate-to names models: PROVIDER is openai, anthropic or local")
    return CascadeProvider(tiers, min_margin=args.escalate_margin)  # type: ignore[arg-type]


def _rules_written(args: RunArgs, answers: list[RuleEntry], read: list[RuleEntry], plan: Plan) -> Iterator[tuple[str, RuleEntry]]:
    """Every rule the run may answer with, and where it is written (for a message that leads to it)."""
    from cursorpilot.providers.rules import rule_id

    yield from ((f"--answer '{a.match}={a.reply}'", a) for a in answers)
    yield from ((f"{args.rules}: rule {rule_id(e, i)}", e) for i, e in enumerate(read))
    yield from ((f"{args.plan}: answers: rule {rule_id(e, i)}", e) for i, e in enumerate(plan.answers))
    for step in plan.steps:
        yield from ((f"{args.plan}: step {step.name!r}: rule {rule_id(e, i)}", e) for i, e in enumerate(step.answers))


def demo(log: Path | None, quiet: bool, report: bool, debug: bool, argv: list[str], package: Path) -> int:
    """The bundled demo: the Cursor simulator driven offline by rules under a demo governing prompt."""
    from cursorpilot.records.pastruns import runs_home
    from cursorpilot.runner.spec import default_run_id

    run_id = default_run_id()
    log = log or runs_home() / run_id
    return run(demo_args(package, log).replace(quiet=quiet, report=report, debug=debug), frozenset(), argv=argv, run_id=run_id)


def demo_args(package: Path, log: Path) -> RunArgs:
    """The demo's run: `run`'s defaults but for these (tests/unit/test_start.py reads the same through typer)."""
    record = str(log / "sim-received.jsonl")
    return RunArgs(command=("cursor-pilot", "sim", "cursor", "demo", DEMO_TASK, "--record", record), prompt=str(package / "demo" / "prompt.md"),
                   log=log, provider="rules", llm_retries=0, no_upload=True, rules=package / "demo" / "rules.yaml", profile="cursor",
                   max_steps=20, timeout="5m")


DEMO_TASK = "Add a /health endpoint to the API"


def load_governing_prompt(value: str | None) -> str:
    """A file if that path exists, else literal text. Text has a space in it: one word with no such file is a
    mistyped file name (`--prompt nosuchprompt`), refused, never taken as the governing prompt itself."""
    if value is None:
        return ""
    path = Path(value).expanduser()
    if path.is_file():
        return path.read_text(encoding="utf-8")
    if path.is_dir():
        raise BadInput(f"--prompt {value}: is a directory, not a prompt file")
    if not value.strip():
        raise BadInput("--prompt is empty: give a file, or the governing prompt's text")
    if not any(c.isspace() for c in value.strip()):
        raise BadInput(f"prompt file not found: {value} (--prompt takes a file, or text of more than one word)")
    return value


def existing(path: Path | None, what: str) -> Path | None:
    if path is not None and not path.is_file():
        raise BadInput(f"{what} not found: {path}")
    return path


def plan_path(value: Path) -> Path:
    """A plan file, or the name of a bundled example plan (cursor-pilot plans)."""
    from cursorpilot import resources

    if value.exists() or value.suffix or len(value.parts) > 1:
        return value
    bundled = resources.find("plans", str(value))
    if bundled is None:
        names = ", ".join(p.stem for p in resources.listing("plans"))
        raise BadInput(f"plan not found: {value} (not a file, nor a bundled plan: {names})")
    return bundled


def _check_max_cost(max_cost: float | None, provider) -> None:
    """--max-cost counts what the model costs: a model whose price is not known would never reach it."""
    from cursorpilot.providers.llm import cost

    if max_cost is None or not getattr(provider, "needs_prompt", False):
        return
    model = getattr(provider, "model", "?")
    if cost(model, 1_000_000, 1_000_000, getattr(provider, "prices", None)) is None:
        raise BadInput(f"--max-cost needs the price of {model!r}, which is not in the built-in table: give it with --prices FILE")


def report_at_exit(log_dir: Path) -> None:
    """--report: written whatever the run's outcome; a report that fails says so and changes no exit code."""
    import typer

    from cursorpilot.report import write
    from cursorpilot.ui import error_line

    if not (log_dir / "transcript.jsonl").is_file():
        return
    try:
        typer.echo(f"  report: {write(log_dir).html}")
    except Exception as exc:
        error_line(f"the report could not be written: {type(exc).__name__}: {exc} (cursor-pilot report {log_dir} tries again)")


def is_interactive() -> bool:
    return sys.stdin.isatty()
