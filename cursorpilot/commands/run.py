"""`cursor-pilot run` (and `demo`, and `learn`, which are runs): the options read, checked and turned into a RunSpec,
the run started, and what is written at its end (the learned rules, the report).

Every check that can refuse the run runs before its folder is made, in the order the user meets them."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from cursorpilot.errors import BadInput

PATH_OPTIONS = ("plan", "cwd", "log", "prices", "rules", "detectors", "resume", "learn")
RESUMABLE = ("command", "prompt", "plan", "cursor", "acp", "agent", "headless", "task", "cwd", "provider", "model", "base_url",
             "llm_retries", "llm_timeout", "context_tokens", "no_upload", "keep_ci_env", "no_native_deny", "prices", "rules", "answer",
             "secret", "profile", "detectors", "max_steps", "max_model_calls", "timeout", "cols", "rows", "done_when", "max_turns", "max_wall",
             "max_cost", "human_timeout", "on_human_timeout", "on_limit", "stuck_after")


def run(**o: Any) -> int:
    """The run the options describe, to its end; its exit code."""
    from rich.console import Console

    from cursorpilot.commands.learning import learned_at_exit
    from cursorpilot.logs import configure_logging
    from cursorpilot.pastruns import register
    from cursorpilot.runner import Runner
    from cursorpilot.ui import ConsoleSink
    from cursorpilot.watch import watched

    for key in PATH_OPTIONS:  # some typer releases hand Optional[Path] options over as str
        if o.get(key) is not None:
            o[key] = Path(o[key])
    manifest = _resumed(o)
    command = _program(o)
    spec = _spec(o, command, manifest)
    # logs and CI: no line is cut in two (`grep 'exit 3'` finds it); a table still fits 140 columns
    console = Console() if sys.stdout.isatty() else Console(width=140, soft_wrap=True)
    runner = Runner(spec, ConsoleSink(console, quiet=o["quiet"]), resume=manifest)
    runner.check_profiles()
    runner.sink = watched(runner.sink, spec.log_dir, spec.run_id)  # cursor-pilot watch looks in from another terminal
    register(spec.log_dir, spec.run_id)  # cursor-pilot runs lists it from anywhere
    configure_logging(spec.log_dir, debug=o["debug"])
    try:
        return runner.run().exit_code
    finally:
        if spec.humans.terminal:  # the offer is a question at the terminal: with nobody there, nobody is asked it
            learned_at_exit(spec.log_dir, o.get("learn"), o["rules"], command or [str(o["plan"])])
        if o.get("report"):
            report_at_exit(spec.log_dir)


def _resumed(o: dict[str, Any]):
    """--resume: the run's manifest, and its own options in `o` unless given again now."""
    if not o["resume"]:
        return None
    from cursorpilot.manifest import read_manifest
    from cursorpilot.pastruns import find_run
    from cursorpilot.resume import check_redacted

    if o["resume"].is_dir() or (not o["resume"].exists() and len(o["resume"].parts) == 1):  # a run's folder, or its id
        o["resume"] = find_run(str(o["resume"])).folder / "manifest.json"
    manifest = read_manifest(o["resume"])
    check_redacted(manifest, o["given"])
    saved = manifest.options
    for key in RESUMABLE:  # the run's own options, unless given again now
        if key not in o["given"] and key in saved:
            o[key] = Path(saved[key]) if saved[key] is not None and key in ("plan", "cwd", "prices", "rules", "detectors") else saved[key]
    o["log"] = o["resume"].parent
    o["run_id"] = manifest.run_id
    return manifest


def _program(o: dict[str, Any]) -> list[str]:
    """The program's command line (a known agent's, with --agent and no command), and, for an agent driven over ACP or
    its print mode, its task (`o["acp_task"]`)."""
    command: list[str] = o["command"] or []
    o["acp_task"] = None
    headless = bool(o.get("headless"))
    if o["acp"] or o["agent"] or headless:
        if headless and o["acp"]:
            raise BadInput("--headless and --acp are two channels: pick one")
        if headless:
            from cursorpilot.headless.launchers import LAUNCHERS, launcher
        else:
            from cursorpilot.acp.launchers import LAUNCHERS, launcher  # type: ignore[no-redef]

        if o["agent"] and not command:
            command = launcher(o["agent"]) or []
            if not command:
                raise BadInput(f"unknown agent {o['agent']!r}; known: {', '.join(LAUNCHERS)} (or give its command after --)")
        if not o["task"]:
            raise BadInput(f"{'a headless' if headless else 'an ACP'} run needs --task TEXT: the first prompt sent to the agent")
        o["acp_task"] = o["task"]
    if o["plan"] is not None:
        o["plan"] = plan_path(o["plan"])
    if o["plan"] and command:
        raise BadInput("--plan and -- COMMAND can't be combined: put the command in a drive: step")
    if not o["plan"] and not command:
        raise BadInput("nothing to run: give -- COMMAND [ARGS...] or --plan FILE (or try: cursor-pilot demo)")
    return command


def _spec(o: dict[str, Any], command: list[str], manifest):
    """The run as the runner takes it, every option checked (a mistake is one line before anything is made)."""
    from cursorpilot.commands.learning import check_learning
    from cursorpilot.durations import parse_duration
    from cursorpilot.human.humans import configure as configure_humans
    from cursorpilot.pastruns import runs_home
    from cursorpilot.plan import load_plan, single_command_plan
    from cursorpilot.preflight import check_new_log_dir, check_secrets_given, check_startable
    from cursorpilot.providers.rules import parse_answer
    from cursorpilot.resume import check_resumable
    from cursorpilot.runner import RunSpec, default_run_id
    from cursorpilot.secret import given as given_secrets

    plan = load_plan(o["plan"]) if o["plan"] else single_command_plan(command, o["acp_task"], bool(o.get("headless")))
    timeout = parse_duration(o["timeout"]) if o["timeout"] else None
    governing = load_governing_prompt(o["prompt"])
    if manifest is not None:
        check_resumable(manifest, o["plan"], governing, o["force"])
    o["rules"] = existing(o["rules"], "rules file")
    answers = [parse_answer(a, i + 1) for i, a in enumerate(o["answer"] or [])]
    secrets = given_secrets(o.get("secret") or [], os.environ)  # names and variables are kept for --resume, values never
    detectors = existing(o["detectors"], "detector file")
    if o.get("learn") is not None:
        check_learning(o, is_interactive())
    provider, rule_entries, read = _answerer(o, answers, interactive_steps=any(step.run is None for step in plan.steps))
    check_secrets_given(_rules_written(o, answers, read, plan), secrets)
    max_wall = parse_duration(o["max_wall"]) if o.get("max_wall") else None
    on_limit, stuck_after = _agent_limits(o)
    _check_max_cost(o.get("max_cost"), provider)
    model_calls = model_call_caps(o.get("max_model_calls") or "1000/20")
    cwd = o["cwd"]
    if cwd is not None and not cwd.is_dir():
        raise BadInput(f"--cwd is not a directory: {cwd}")
    run_id = o.get("run_id") or default_run_id()
    log_dir: Path = o["log"] or runs_home() / run_id
    if manifest is None:
        check_new_log_dir(log_dir)
        check_startable(plan, o["cursor"])
    options = {k: (str(o[k]) if isinstance(o[k], Path) else o[k]) for k in RESUMABLE}
    humans = configure_humans(terminal=is_interactive() and os.environ.get("CI") is None, notify=o.get("notify") or [],
                              listen=o.get("listen"), timeout=parse_duration(o["human_timeout"]) if o.get("human_timeout") else None,
                              on_timeout=o.get("on_human_timeout") or "exit", dry_run=o["dry_run"])
    return RunSpec(
        plan=plan, governing_prompt=governing, provider=provider, run_id=run_id, log_dir=log_dir, argv=o["argv"], options=options,
        plan_path=o["plan"], rule_entries=rule_entries,
        profile=o["profile"], detectors=detectors, cursor_bin=o["cursor"], cwd=str(cwd) if cwd else None,
        max_steps=o["max_steps"], model_calls=model_calls, timeout=timeout, dry_run=o["dry_run"], done_when=o.get("done_when") or None,
        max_turns=o.get("max_turns"), max_wall=max_wall, max_cost=o.get("max_cost"), on_limit=on_limit, stuck_after=stuck_after,
        interactive=humans.reachable, context_tokens=o["context_tokens"], humans=humans,
        no_upload=o["no_upload"], keep_ci_env=o["keep_ci_env"], native_deny=not o.get("no_native_deny"), cols=o["cols"], rows=o["rows"], secrets=secrets,
    )


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


def _agent_limits(o: dict[str, Any]) -> tuple[str, float | None]:
    """--on-limit and --stuck-after, checked."""
    from cursorpilot.decide.limits import ON_LIMIT
    from cursorpilot.durations import parse_duration

    on_limit = o.get("on_limit") or "wait"
    if on_limit not in ON_LIMIT:
        raise BadInput(f"--on-limit {on_limit}: give one of {', '.join(ON_LIMIT)}")
    stuck_after = parse_duration(o["stuck_after"]) if o.get("stuck_after") else None
    if stuck_after is not None and stuck_after <= 0:
        raise BadInput("--stuck-after must be longer than 0s")
    return on_limit, stuck_after


def _answerer(o: dict[str, Any], answers: list, interactive_steps: bool):
    """Who answers (the provider), the rules that go before it, and the rules of --rules as read. No key and no rules: the rules provider with none,
    so a program that asks nothing runs, and each question goes to a person (exit 3 with nobody at the terminal,
    saying how to choose an answerer)."""
    from cursorpilot.durations import parse_duration
    from cursorpilot.learn import LearningRules
    from cursorpilot.providers import choose as choose_provider
    from cursorpilot.providers import create as create_provider
    from cursorpilot.providers.base import Provider, ProviderConfig
    from cursorpilot.providers.llm import load_prices
    from cursorpilot.providers.rules import RuleEntry, RulesProvider, read_entries

    rules = o["rules"]
    provider_name = choose_provider(o["provider"] or (None if interactive_steps else "rules"), True, dict(os.environ))
    pconfig = ProviderConfig(
        rules_file=rules, model=o["model"], base_url=o["base_url"], retries=o["llm_retries"],
        timeout=parse_duration(o["llm_timeout"]), prices=load_prices(existing(o["prices"], "prices file")),
    )
    provider: Provider
    rule_entries: list[RuleEntry]
    if provider_name == "rules":  # --answer first, then --rules; with neither, the plan's answers alone (no match escalates)
        origin = str(rules or ("--answer" if answers else "--learn" if o.get("learn") else "--provider rules" if o["provider"] else ""))
        # (""): nothing was chosen to answer, and a question's escalation says how to choose
        read = read_entries(rules) if rules else []
        provider = (LearningRules if o.get("learn") else RulesProvider)([*answers, *read], origin)
        rule_entries = []
    else:  # an answerer that is not rules: the rules go first, as the step's own (the script's file is its script)
        provider = create_provider(provider_name, pconfig)
        read = read_entries(rules) if rules is not None and provider.needs_prompt else []
        rule_entries = [*answers, *read]
    return provider, rule_entries, read


def _rules_written(o: dict[str, Any], answers: list, read: list, plan):
    """Every rule the run may answer with, and where it is written (for a message that leads to it)."""
    from cursorpilot.providers.rules import rule_id

    yield from ((f"--answer '{a.match}={a.reply}'", a) for a in answers)
    yield from ((f"{o['rules']}: rule {rule_id(e, i)}", e) for i, e in enumerate(read))
    yield from ((f"{o['plan']}: answers: rule {rule_id(e, i)}", e) for i, e in enumerate(plan.answers))
    for step in plan.steps:
        yield from ((f"{o['plan']}: step {step.name!r}: rule {rule_id(e, i)}", e) for i, e in enumerate(step.answers))


def demo(log: Path | None, quiet: bool, report: bool, debug: bool, argv: list[str], package: Path) -> int:
    """The bundled demo: the Cursor simulator driven offline by rules under a demo governing prompt."""
    from cursorpilot.pastruns import runs_home
    from cursorpilot.runner import default_run_id

    run_id = default_run_id()
    log = log or runs_home() / run_id
    record = str(log / "sim-received.jsonl")
    return run(
        argv=argv, given=set(), run_id=run_id,
        command=["cursor-pilot", "sim", "cursor", "demo", DEMO_TASK, "--record", record],
        prompt=str(package / "demo" / "prompt.md"), plan=None, cursor="cursor-agent", acp=False, agent=None, headless=False, task=None,
        cwd=None, log=log,
        provider="rules", model=None, base_url=None, llm_retries=0, llm_timeout="60s", context_tokens=3000, no_upload=True,
        keep_ci_env=False, no_native_deny=False, prices=None, rules=package / "demo" / "rules.yaml", answer=None, secret=None, profile="cursor", detectors=None,
        dry_run=False, max_steps=20, max_model_calls="1000/20", timeout="5m", done_when=None, max_turns=None, max_wall=None,
        max_cost=None, resume=None, force=False,
        cols=120, rows=40, quiet=quiet, report=report, debug=debug, learn=None, notify=None, listen=None, human_timeout=None, on_human_timeout="exit",
        on_limit="wait", stuck_after=None,
    )


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
