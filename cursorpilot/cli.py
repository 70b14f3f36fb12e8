"""The command line: wiring only. Parses options, builds the run, maps errors to exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from cursorpilot import __version__
from cursorpilot.errors import BadInput, ExitCode, PilotError

REPORT_HELP = "When the run ends (also a failed one), write report.html, report.json and report.md beside the transcript."

app = typer.Typer(
    add_completion=True,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    help="Drive interactive command-line programs (Cursor CLI first) headlessly, under a governing prompt.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

PACKAGE = Path(__file__).resolve().parent
DEMO_TASK = "Add a /health endpoint to the API"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cursor-pilot {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """cursor-pilot."""


def load_governing_prompt(value: str | None) -> str:
    """A path if it exists, else literal text; something that looks like a missing file is an error."""
    if value is None:
        return ""
    path = Path(value).expanduser()
    if path.is_file():
        return path.read_text(encoding="utf-8")
    looks_like_path = not any(c.isspace() for c in value) and ("/" in value or path.suffix in {".md", ".txt", ".prompt"})
    if looks_like_path:
        raise BadInput(f"prompt file not found: {value}")
    return value


def _existing(path: Path | None, what: str) -> Path | None:
    if path is not None and not path.is_file():
        raise BadInput(f"{what} not found: {path}")
    return path


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    command: Optional[list[str]] = typer.Argument(None, help="The program to drive, after --."),
    prompt: Optional[str] = typer.Option(None, "--prompt", help="Governing prompt: a file path if it exists, else literal text."),
    plan: Optional[Path] = typer.Option(None, "--plan", help="YAML plan of steps, or the name of a bundled one (cursor-pilot plans)."),
    cursor: str = typer.Option("cursor-agent", "--cursor", help="Cursor binary for plan cursor: steps."),
    acp: bool = typer.Option(False, "--acp", help="Drive the agent over the Agent Client Protocol (JSON-RPC on stdio), not a screen."),
    agent: Optional[str] = typer.Option(None, "--agent", help="A known ACP agent: cursor, gemini, claude, codex (implies --acp)."),
    task: Optional[str] = typer.Option(None, "--task", help="ACP: the task, sent as the first prompt."),
    cwd: Optional[Path] = typer.Option(None, "--cwd", help="Working directory of the program."),
    log: Optional[Path] = typer.Option(None, "--log", help="Artifacts folder (default runs/<run-id>/)."),
    provider: Optional[str] = typer.Option(None, "--provider", help="rules | mock | openai | anthropic (default: from the API key set)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name (openai: gpt-4o-mini, anthropic: claude-haiku-4-5)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Server URL, e.g. an OpenAI-compatible one."),
    llm_retries: int = typer.Option(4, "--llm-retries", min=0, help="Retries on 429, 5xx, timeouts, connection errors."),
    llm_timeout: str = typer.Option("60s", "--llm-timeout", help="Per-call timeout."),
    context_tokens: int = typer.Option(3000, "--context-tokens", min=200, help="Token budget of each prompt."),
    no_upload: bool = typer.Option(False, "--no-upload", help="Send only terminal text: no environment snapshot."),
    keep_ci_env: bool = typer.Option(False, "--keep-ci-env",
                                     help="Pass CI=true and the like on to the program (by default hidden: it has a user, the pilot)."),
    prices: Optional[Path] = typer.Option(None, "--prices", help="YAML {model: [usd_per_1M_in, usd_per_1M_out]}."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Rules YAML ({match, reply} list); the mock's script."),
    profile: str = typer.Option("auto", "--profile", help="Detector profile name (detectors/), or auto."),
    detectors: Optional[Path] = typer.Option(None, "--detectors", help="YAML/JSON file adding or overriding rules."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Preview: classify each step's first question, type nothing."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Stop (exit 4) before answer N+1."),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="Cap the whole run: 90s, 45m, 1h30m."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Continue a run from its manifest.json."),
    force: bool = typer.Option(False, "--force", help="Resume even if the plan or governing prompt changed."),
    cols: int = typer.Option(120, "--cols", min=20, max=1000),
    rows: int = typer.Option(40, "--rows", min=5, max=1000),
    quiet: bool = typer.Option(False, "--quiet", help="Only the final summary."),
    report: bool = typer.Option(False, "--report", help=REPORT_HELP),
    debug: bool = typer.Option(False, "--debug", help="Diagnostics on stderr; tracebacks on errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True),
) -> None:
    """Drive COMMAND (or a --plan) under a pseudo-terminal: cursor-pilot run [OPTIONS] -- COMMAND [ARGS...]"""
    argv = ["cursor-pilot", *sys.argv[1:]]
    values = {k: v for k, v in ctx.params.items() if k not in ("ctx", "version")}
    # by name: typer vendors its own click now, and the enum's home moved with it
    given = {k for k in values if getattr(ctx.get_parameter_source(k), "name", "") == "COMMANDLINE"}
    if command:
        given.add("command")
    _guard(debug, lambda: _run(argv=argv, given=given, **values))


@app.command()
def demo(
    log: Optional[Path] = typer.Option(None, "--log", help="Artifacts folder (default runs/<run-id>/)."),
    quiet: bool = typer.Option(False, "--quiet"),
    report: bool = typer.Option(False, "--report", help=REPORT_HELP),
    debug: bool = typer.Option(False, "--debug"),
) -> None:
    """Run the bundled demo: the Cursor simulator driven offline by rules under a demo governing prompt."""
    from cursorpilot.runner import default_run_id

    argv = ["cursor-pilot", *sys.argv[1:]]
    run_id = default_run_id()
    log = log or Path("runs") / run_id
    record = str(log / "sim-received.jsonl")
    _guard(debug, lambda: _run(
        argv=argv, given=set(), run_id=run_id,
        command=["cursor-pilot", "sim", "cursor", "demo", DEMO_TASK, "--record", record],
        prompt=str(PACKAGE / "demo" / "prompt.md"), plan=None, cursor="cursor-agent", acp=False, agent=None, task=None, cwd=None, log=log,
        provider="rules", model=None, base_url=None, llm_retries=0, llm_timeout="60s", context_tokens=3000, no_upload=True,
        keep_ci_env=False, prices=None, rules=PACKAGE / "demo" / "rules.yaml", profile="cursor", detectors=None, dry_run=False, max_steps=20,
        timeout="5m", resume=None, force=False, cols=120, rows=40, quiet=quiet, report=report, debug=debug,
    ))


@app.command()
def report(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run's folder (runs/<run-id>/), or its transcript.jsonl."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Write the report here (default: the run's folder)."),
    debug: bool = typer.Option(False, "--debug", help="Tracebacks on errors."),
) -> None:
    """Write report.html (verdict, decisions, files changed, terminal replay), report.json and report.md for a run."""
    _guard(debug, lambda: _report(Path(run_dir), Path(out) if out else None))


@app.command()
def detect(
    recording: Path = typer.Argument(..., help="session.cast, session.raw, or a screen text file (tmux capture-pane -p)."),
    profile: str = typer.Option("auto", "--profile", help="Detector profile name (detectors/), or auto (from the cast's command)."),
    detectors: Optional[Path] = typer.Option(None, "--detectors", help="YAML/JSON file adding or overriding rules."),
    cols: int = typer.Option(120, "--cols", min=20, max=1000, help="Screen width when the file does not say."),
    rows: int = typer.Option(40, "--rows", min=5, max=1000, help="Screen height when the file does not say."),
    debug: bool = typer.Option(False, "--debug", help="Tracebacks on errors."),
) -> None:
    """Replay a recording through the screen and classifier; print each decision point (time, state, rule, prompt)."""
    _guard(debug, lambda: _detect(Path(recording), profile, Path(detectors) if detectors else None, cols, rows))


@app.command()
def profiles() -> None:
    """List the bundled detector profiles and the files they are read from."""
    from cursorpilot.detect.profiles import available, load_profile, where

    names = available()
    if not names:
        typer.echo("no profiles found: the package's detectors folder is missing (a broken install)", err=True)
        raise typer.Exit(int(ExitCode.FAILED))
    for name in names:
        typer.echo(f"{name:10} {load_profile(name).description}\n{'':10} {where(name)}")


@app.command()
def plans() -> None:
    """List the bundled example plans (run one with: cursor-pilot run --plan NAME)."""
    from cursorpilot import resources

    for path in resources.listing("plans"):
        typer.echo(f"{path.stem:14} {path}")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, add_help_option=False)
def sim(ctx: typer.Context) -> None:
    """The bundled simulators: cursor-pilot sim {cursor|line|menu} SCENARIO [TASK...] (--help for theirs)."""
    from cursorpilot.sim.__main__ import main as sim_main

    raise typer.Exit(sim_main(list(ctx.args), prog="cursor-pilot sim"))


def _detect(recording: Path, profile_name: str, detectors: Path | None, cols: int, rows: int) -> int:
    from cursorpilot.detect.profiles import load_profile, resolve_name
    from cursorpilot.replay import decisions, load

    rec = load(recording, cols, rows)
    profile = load_profile(resolve_name(profile_name, rec.command or None), _existing(detectors, "detectors file"))
    typer.echo(f"# {recording} ({rec.kind}, {rec.cols}x{rec.rows}) with profile {profile.name}")
    for d in decisions(rec, profile):
        typer.echo(d.describe())
    return 0


def _report(run_dir: Path, out: Path | None) -> int:
    from cursorpilot.report import write

    written = write(run_dir, out)
    typer.echo(f"report: {written.html}\n        {written.json}\n        {written.md}")
    return 0


def _report_at_exit(log_dir: Path) -> None:
    """--report: written whatever the run's outcome; a report that fails says so and changes no exit code."""
    from cursorpilot.report import write
    from cursorpilot.ui import error_line

    if not (log_dir / "transcript.jsonl").is_file():
        return
    try:
        typer.echo(f"  report: {write(log_dir).html}")
    except Exception as exc:  # noqa: BLE001 - the run's own outcome stands
        error_line(f"the report could not be written: {type(exc).__name__}: {exc} (cursor-pilot report {log_dir} tries again)")


def _guard(debug: bool, fn) -> None:
    from cursorpilot.ui import error_line

    try:
        code = fn()
    except PilotError as exc:
        if debug:
            raise
        error_line(str(exc))
        raise typer.Exit(int(exc.exit_code))
    except KeyboardInterrupt:
        raise typer.Exit(int(ExitCode.INTERRUPTED))
    except (typer.Exit, SystemExit):
        raise
    except OSError as exc:
        import errno

        if debug or exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
            raise
        error_line(f"cannot write the run's records: {exc.strerror} ({exc.filename or 'log directory'}); what was written is kept")
        raise typer.Exit(int(ExitCode.FAILED))
    except Exception as exc:  # noqa: BLE001 - one line for the user; the traceback with --debug
        if debug:
            raise
        error_line(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        raise typer.Exit(int(ExitCode.FAILED))
    raise typer.Exit(code)


PATH_OPTIONS = ("plan", "cwd", "log", "prices", "rules", "detectors", "resume")
RESUMABLE = ("command", "prompt", "plan", "cursor", "acp", "agent", "task", "cwd", "provider", "model", "base_url", "llm_retries", "llm_timeout",
             "context_tokens", "no_upload", "keep_ci_env", "prices", "rules", "profile", "detectors", "max_steps", "timeout", "cols", "rows")


def _run(**o) -> int:
    from rich.console import Console

    from cursorpilot.durations import parse_duration
    from cursorpilot.logs import configure_logging
    from cursorpilot.manifest import read_manifest
    from cursorpilot.plan import load_plan
    from cursorpilot.providers import choose as choose_provider
    from cursorpilot.providers import create as create_provider
    from cursorpilot.providers.base import ProviderConfig
    from cursorpilot.providers.llm import load_prices
    from cursorpilot.providers.rules import RulesProvider, read_entries
    from cursorpilot.runner import Runner, RunSpec, check_resumable, default_run_id, single_command_plan
    from cursorpilot.ui import ConsoleSink

    for key in PATH_OPTIONS:  # some typer releases hand Optional[Path] options over as str
        if o.get(key) is not None:
            o[key] = Path(o[key])
    manifest = None
    if o["resume"]:
        from cursorpilot.runner import check_redacted

        manifest = read_manifest(o["resume"])
        check_redacted(manifest, o["given"])
        saved = manifest.options
        for key in RESUMABLE:  # the run's own options, unless given again now
            if key not in o["given"] and key in saved:
                o[key] = Path(saved[key]) if saved[key] is not None and key in ("plan", "cwd", "prices", "rules", "detectors") else saved[key]
        o["log"] = o["resume"].parent
        o["run_id"] = manifest.run_id
    command: list[str] = o["command"] or []
    acp_task = None
    if o["acp"] or o["agent"]:
        from cursorpilot.acp.launchers import LAUNCHERS, launcher

        if o["agent"] and not command:
            command = launcher(o["agent"]) or []
            if not command:
                raise BadInput(f"unknown agent {o['agent']!r}; known: {', '.join(LAUNCHERS)} (or give its command after --)")
        if not o["task"]:
            raise BadInput("an ACP run needs --task TEXT: the first prompt sent to the agent")
        acp_task = o["task"]
    if o["plan"] is not None:
        o["plan"] = _plan_path(o["plan"])
    if o["plan"] and command:
        raise BadInput("--plan and -- COMMAND can't be combined: put the command in a drive: step")
    if not o["plan"] and not command:
        raise BadInput("nothing to run: give -- COMMAND [ARGS...] or --plan FILE (or try: cursor-pilot demo)")
    plan = load_plan(o["plan"]) if o["plan"] else single_command_plan(command, acp_task)
    timeout = parse_duration(o["timeout"]) if o["timeout"] else None
    governing = load_governing_prompt(o["prompt"])
    if manifest is not None:
        check_resumable(manifest, o["plan"], governing, o["force"])
    rules = _existing(o["rules"], "rules file")
    detectors = _existing(o["detectors"], "detector file")
    interactive_steps = any(step.run is None for step in plan.steps)
    provider_name = choose_provider(o["provider"] or (None if interactive_steps else "rules"), rules is not None or bool(plan.answers),
                                    dict(os.environ))
    pconfig = ProviderConfig(
        rules_file=rules, model=o["model"], base_url=o["base_url"], retries=o["llm_retries"],
        timeout=parse_duration(o["llm_timeout"]), prices=load_prices(_existing(o["prices"], "prices file")),
    )
    if provider_name == "rules" and rules is None:
        provider = RulesProvider([], "plan answers only")  # the plan's answers are consulted first; no match escalates
    else:
        provider = create_provider(provider_name, pconfig)
    cwd = o["cwd"]
    if cwd is not None and not cwd.is_dir():
        raise BadInput(f"--cwd is not a directory: {cwd}")
    run_id = o.get("run_id") or default_run_id()
    log_dir: Path = o["log"] or Path("runs") / run_id
    options = {k: (str(o[k]) if isinstance(o[k], Path) else o[k]) for k in RESUMABLE}
    spec = RunSpec(
        plan=plan, governing_prompt=governing, provider=provider, run_id=run_id, log_dir=log_dir, argv=o["argv"], options=options,
        plan_path=o["plan"], rule_entries=read_entries(rules) if rules is not None and provider.needs_prompt else [],
        profile=o["profile"], detectors=detectors, cursor_bin=o["cursor"], cwd=str(cwd) if cwd else None,
        max_steps=o["max_steps"], timeout=timeout, dry_run=o["dry_run"],
        interactive=is_interactive() and os.environ.get("CI") is None, context_tokens=o["context_tokens"],
        no_upload=o["no_upload"], keep_ci_env=o["keep_ci_env"], cols=o["cols"], rows=o["rows"],
    )
    console = Console() if sys.stdout.isatty() else Console(width=140)  # logs and CI: don't wrap at 80 columns
    runner = Runner(spec, ConsoleSink(console, quiet=o["quiet"]), resume=manifest)
    runner.check_profiles()
    configure_logging(log_dir, debug=o["debug"])
    try:
        return runner.run().exit_code
    finally:
        if o.get("report"):
            _report_at_exit(log_dir)


def _plan_path(value: Path) -> Path:
    """A plan file, or the name of a bundled example plan (cursor-pilot plans)."""
    from cursorpilot import resources

    if value.exists() or value.suffix or len(value.parts) > 1:
        return value
    bundled = resources.find("plans", str(value))
    if bundled is None:
        names = ", ".join(p.stem for p in resources.listing("plans"))
        raise BadInput(f"plan not found: {value} (not a file, nor a bundled plan: {names})")
    return bundled


def is_interactive() -> bool:
    return sys.stdin.isatty()


def main() -> None:
    app(prog_name="cursor-pilot")


if __name__ == "__main__":
    main()
