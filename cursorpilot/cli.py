"""The command line: wiring only. Parses options, builds the run, maps errors to exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from cursorpilot import __version__, completion
from cursorpilot.errors import BadInput, ExitCode, PilotError

REPORT_HELP = "When the run ends (also a failed one), write report.html, report.json and report.md beside the transcript."

app = typer.Typer(
    add_completion=True,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    help="Drive interactive command-line programs (Cursor CLI first) headlessly, under a governing prompt.",
    epilog="Start with: cursor-pilot demo. Then your own program: cursor-pilot run --answer 'Continue=y' -- ./your-program",
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


def _existing(path: Path | None, what: str) -> Path | None:
    if path is not None and not path.is_file():
        raise BadInput(f"{what} not found: {path}")
    return path


PROGRAM, ANSWERS, LIMITS, OUTPUT, PLANS, ACP = "Program", "Answers", "Limits", "Output", "Plans and runs", "ACP"
PEOPLE = "When a person is needed"
TURNS = "Turn ends and the goal"
LOG_HELP = ("Where the run's records go (default: $XDG_STATE_HOME/cursor-pilot/runs/<run-id>/, or $CURSORPILOT_RUNS/<run-id>/); "
            "a folder that holds a run is refused.")
QUIET_HELP = "Show only the final summary: no live screen, no answers, no program output."
DEBUG_HELP = "Diagnostics on stderr as well, and a traceback on errors."


# Options end at `--` or at the first word that is not an option: that word is the program, and everything after it
# is the program's own (`run --rules r.yaml bash -c 'read x'`). Before it, an unknown option is a typo (--timout),
# refused with a suggestion, never taken for the program's name.
@app.command(context_settings={"allow_interspersed_args": False})
def run(
    ctx: typer.Context,
    command: Optional[list[str]] = typer.Argument(None, metavar="-- COMMAND [ARGS]",
                                                  help="The program to drive and its arguments (after -- or after the options)."),
    cwd: Optional[Path] = typer.Option(None, "--cwd", help="The program's working directory.", rich_help_panel=PROGRAM),
    cols: int = typer.Option(120, "--cols", min=20, max=1000, help="The program's terminal width (the live view is cropped to yours).",
                             rich_help_panel=PROGRAM),
    rows: int = typer.Option(40, "--rows", min=5, max=1000, help="The program's terminal height.", rich_help_panel=PROGRAM),
    profile: str = typer.Option("auto", "--profile", autocompletion=completion.profiles, rich_help_panel=PROGRAM,
                                help="How its screens are read: a detector profile (cursor-pilot profiles), a profile file, or auto."),
    detectors: Optional[Path] = typer.Option(None, "--detectors", help="A YAML/JSON file adding or overriding detector rules.",
                                             rich_help_panel=PROGRAM),
    keep_ci_env: bool = typer.Option(False, "--keep-ci-env", rich_help_panel=PROGRAM,
                                     help="Pass CI=true and the like on to the program (by default hidden: it has a user, the pilot)."),
    no_native_deny: bool = typer.Option(False, "--no-native-deny", rich_help_panel=PROGRAM,
                                        help="Leave the agent's own deny list alone (docs/headless.md): the policy still judges what the pilot is asked."),
    prompt: Optional[str] = typer.Option(None, "--prompt", rich_help_panel=ANSWERS,
                                         help="The governing prompt: a file, or its text (more than one word)."),
    rules: Optional[Path] = typer.Option(None, "--rules", rich_help_panel=ANSWERS,
                                         help="A rules file: a YAML list of {match, reply} (docs/rules.md); the script's replies."),
    learn: Optional[Path] = typer.Option(None, "--learn", metavar="FILE", rich_help_panel=ANSWERS,
                                         help="You answer every question at the terminal; your answers become the rules in FILE "
                                              "(docs/rules.md#learning-from-a-person)."),
    answer: Optional[list[str]] = typer.Option(None, "--answer", rich_help_panel=ANSWERS,
                                               help="A rule in one line, 'REGEX=REPLY' (repeatable; checked before --rules)."),
    secret: Optional[list[str]] = typer.Option(None, "--secret", metavar="NAME=ENVVAR", rich_help_panel=ANSWERS,
                                               help="A secret read from the environment, typed where a reply says <secret:NAME> "
                                                    "and never shown or written down (repeatable)."),
    provider: Optional[str] = typer.Option(None, "--provider", autocompletion=completion.providers, rich_help_panel=ANSWERS,
                                           help="rules | script | openai | anthropic (default: from the API key that is set)."),
    model: Optional[str] = typer.Option(None, "--model", rich_help_panel=ANSWERS,
                                        help="The model (openai: gpt-4o-mini, anthropic: claude-haiku-4-5)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="The model's server, e.g. an OpenAI-compatible one.",
                                           rich_help_panel=ANSWERS),
    llm_retries: int = typer.Option(4, "--llm-retries", min=0, help="Retries on 429, 5xx, timeouts, connection errors.",
                                    rich_help_panel=ANSWERS),
    llm_timeout: str = typer.Option("60s", "--llm-timeout", help="The timeout of each model call.", rich_help_panel=ANSWERS),
    context_tokens: int = typer.Option(3000, "--context-tokens", min=200, help="The token budget of each prompt to the model.",
                                       rich_help_panel=ANSWERS),
    no_upload: bool = typer.Option(False, "--no-upload", help="Send the model only terminal text: no git snapshot.",
                                   rich_help_panel=ANSWERS),
    prices: Optional[Path] = typer.Option(None, "--prices", rich_help_panel=ANSWERS,
                                          help="YAML {model: \\[usd_per_1M_in, usd_per_1M_out]} for the cost estimate."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Answer at most N prompts (then exit 4).",
                                            rich_help_panel=LIMITS),
    timeout: Optional[str] = typer.Option(None, "--timeout", help="Cap the whole run: 90s, 45m, 1h30m (then exit 4).",
                                          rich_help_panel=LIMITS),
    done_when: Optional[str] = typer.Option(None, "--done-when", metavar="CMD", rich_help_panel=TURNS,
                                            help="A shell command run at each turn end: exit 0 means the goal is met (docs/turns.md)."),
    max_turns: Optional[int] = typer.Option(None, "--max-turns", min=1, rich_help_panel=TURNS,
                                            help="Give an agent at most N turns per step (default 10; then exit 4)."),
    max_wall: Optional[str] = typer.Option(None, "--max-wall", rich_help_panel=TURNS,
                                           help="Start no new turn after this long: 30m, 2h (then exit 4; --timeout cuts)."),
    max_cost: Optional[float] = typer.Option(None, "--max-cost", min=0.0, metavar="USD", rich_help_panel=TURNS,
                                             help="Start no new turn once the model has cost this much (needs its price)."),
    notify: Optional[list[str]] = typer.Option(None, "--notify", metavar="URL", envvar="CURSOR_PILOT_NOTIFY", rich_help_panel=PEOPLE,
                                               help="When a person is needed, send a notice with the decision page's link to this "
                                                    "Apprise URL: ntfy, Slack, Telegram, mailto, json://host:port/... (repeatable; "
                                                    "docs/human.md)."),
    listen: Optional[str] = typer.Option(None, "--listen", metavar="HOST:PORT", rich_help_panel=PEOPLE,
                                         help="Serve the decision page here (default with --notify: 127.0.0.1, any port). "
                                              "Beyond loopback anyone who gets a question's link can answer it: it warns."),
    human_timeout: Optional[str] = typer.Option(None, "--human-timeout", metavar="DURATION", rich_help_panel=PEOPLE,
                                                help="Wait at most this long for a person's answer (then exit 3), e.g. 30m."),
    on_human_timeout: str = typer.Option("exit", "--on-human-timeout", metavar="exit|no", rich_help_panel=PEOPLE,
                                         help="When --human-timeout passes: exit 3, or answer the question's own no "
                                              "(its reject option, n; exit 3 where it has none)."),
    log: Optional[Path] = typer.Option(None, "--log", help=LOG_HELP, rich_help_panel=OUTPUT),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP, rich_help_panel=OUTPUT),
    report: bool = typer.Option(False, "--report", help=REPORT_HELP, rich_help_panel=OUTPUT),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP, rich_help_panel=OUTPUT),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit.",
                                 rich_help_panel=OUTPUT),
    plan: Optional[Path] = typer.Option(None, "--plan", autocompletion=completion.plans, rich_help_panel=PLANS,
                                        help="A YAML plan of steps, or a bundled one by name (cursor-pilot plans)."),
    cursor: str = typer.Option("cursor-agent", "--cursor", help="The Cursor binary for a plan's cursor: steps.", rich_help_panel=PLANS),
    dry_run: bool = typer.Option(False, "--dry-run", rich_help_panel=PLANS,
                                 help="Preview: start each step's program, stop it at its first question, type nothing "
                                      "(what it does before asking, it does)."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Continue a run: its manifest.json, its folder or its id.",
                                          rich_help_panel=PLANS),
    force: bool = typer.Option(False, "--force", help="Resume even if the plan or the governing prompt changed.", rich_help_panel=PLANS),
    acp: bool = typer.Option(False, "--acp", help="Drive the agent over the Agent Client Protocol (JSON-RPC on stdio), not a screen.",
                             rich_help_panel=ACP),
    agent: Optional[str] = typer.Option(None, "--agent", autocompletion=completion.agents, rich_help_panel=ACP,
                                        help="A known ACP agent: cursor, gemini, claude, codex (implies --acp; with --headless: claude, cursor)."),
    headless: bool = typer.Option(False, "--headless", rich_help_panel=ACP,
                                  help="Drive the agent's print mode (claude -p, cursor-agent -p) through its event stream (docs/headless.md)."),
    task: Optional[str] = typer.Option(None, "--task", help="The task, sent as the first prompt.", rich_help_panel=ACP),
) -> None:
    """Drive a program (or a --plan of steps) unattended: cursor-pilot run [OPTIONS] [--] COMMAND [ARGS]...

    It watches what the program asks, decides (deny policy, then your rules, then a model) and types the answer.
    """
    argv = ["cursor-pilot", *sys.argv[1:]]
    values = {k: v for k, v in ctx.params.items() if k not in ("ctx", "version")}
    # by name: typer vendors its own click now, and the enum's home moved with it
    given = {k for k in values if getattr(ctx.get_parameter_source(k), "name", "") == "COMMANDLINE"}
    if command:
        given.add("command")
    _guard(debug, lambda: _run(argv=argv, given=given, **values))


@app.command()
def demo(
    log: Optional[Path] = typer.Option(None, "--log", help=LOG_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    report: bool = typer.Option(False, "--report", help=REPORT_HELP),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Run the bundled demo: the Cursor simulator driven offline by rules under a demo governing prompt."""
    from cursorpilot.pastruns import runs_home
    from cursorpilot.runner import default_run_id

    argv = ["cursor-pilot", *sys.argv[1:]]
    run_id = default_run_id()
    log = log or runs_home() / run_id
    record = str(log / "sim-received.jsonl")
    _guard(debug, lambda: _run(
        argv=argv, given=set(), run_id=run_id,
        command=["cursor-pilot", "sim", "cursor", "demo", DEMO_TASK, "--record", record],
        prompt=str(PACKAGE / "demo" / "prompt.md"), plan=None, cursor="cursor-agent", acp=False, agent=None, headless=False, task=None,
        cwd=None, log=log,
        provider="rules", model=None, base_url=None, llm_retries=0, llm_timeout="60s", context_tokens=3000, no_upload=True,
        keep_ci_env=False, no_native_deny=False, prices=None, rules=PACKAGE / "demo" / "rules.yaml", answer=None, secret=None, profile="cursor", detectors=None,
        dry_run=False, max_steps=20, timeout="5m", done_when=None, max_turns=None, max_wall=None, max_cost=None, resume=None, force=False,
        cols=120, rows=40, quiet=quiet, report=report, debug=debug, learn=None, notify=None, listen=None, human_timeout=None, on_human_timeout="exit",
    ))


LEARN_OUT = Path("rules.learned.yaml")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False})
def learn(
    ctx: typer.Context,
    out: Path = typer.Option(LEARN_OUT, "--out", "-o", metavar="FILE", help="The rules file to write (added to, when it exists)."),
) -> None:
    """Run a program with you answering every question at the terminal; your answers become a rules file that answers
    them with nobody there: cursor-pilot learn [--out FILE] [RUN OPTIONS] -- COMMAND [ARGS]...

    Every option of `run` works here too (--cwd, --secret, --rules, --timeout, ...). Then: cursor-pilot run --rules FILE -- COMMAND.
    """
    args = sys.argv[sys.argv.index("learn") + 1:] if "learn" in sys.argv else list(ctx.args)
    rest, skip = [], False
    for i, a in enumerate(args):  # everything but --out, as run takes it (the program's own words untouched)
        if a == "--":
            rest += args[i:]
            break
        if skip:
            skip = False
        elif a in ("--out", "-o"):
            skip = True
        elif not a.startswith(("--out=", "-o=")):
            rest.append(a)
    from typer.main import get_command

    get_command(app).main(["run", "--learn", str(out), *rest], prog_name="cursor-pilot")


@app.command()
def report(
    run_dir: Path = typer.Argument(..., metavar="RUN", help="A run's id (or its unique beginning), its folder, or its transcript.jsonl."),
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
    """List the bundled example plans, what each does, and its file (run one with: cursor-pilot run --plan NAME)."""
    from cursorpilot import resources

    for path in resources.listing("plans"):
        typer.echo(f"{path.stem:12} {resources.summary(path)}\n{'':12} {path}")


runs_app = typer.Typer(help="List past runs (from anywhere; or those in --dir), or show one: cursor-pilot runs show ID.",
                       invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(runs_app, name="runs")
RUNS_DIR_HELP = "Only the runs in this folder (a folder of run folders, or one run's folder)."


def _complete_run(ctx: typer.Context, incomplete: str) -> list[str]:
    from cursorpilot.pastruns import known_runs, past_runs

    found = past_runs(Path(ctx.params["dir"])) if ctx.params.get("dir") else known_runs()
    return [r.folder.name for r in found if r.folder.name.startswith(incomplete)]


@runs_app.callback()
def runs(ctx: typer.Context, dir: Optional[Path] = typer.Option(None, "--dir", help=RUNS_DIR_HELP)) -> None:
    """List past runs: id, start, status, exit code, answers, escalations, program, folder (cursor-pilot runs show ID for one)."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.console import Console

    from cursorpilot.pastruns import known_runs, past_runs, where
    from cursorpilot.ui import runs_table

    found = past_runs(Path(dir)) if dir is not None else known_runs()
    place = f"{dir}/" if dir is not None else where(found)
    if not found:
        typer.echo(f"no runs in {place} (cursor-pilot run makes them; --dir DIR looks elsewhere)")
        return
    runs_table(Console(width=None if sys.stdout.isatty() else 200), found, place)


@runs_app.command("show")
def runs_show(
    run: str = typer.Argument(..., help="A run id (or its unique beginning), or a run folder.", autocompletion=_complete_run),
    dir: Optional[Path] = typer.Option(None, "--dir", help=RUNS_DIR_HELP),
) -> None:
    """Show one run's summary: what ran, how it ended, each step, the counters, and where its records are."""
    from rich.console import Console

    from cursorpilot.pastruns import find_run
    from cursorpilot.ui import run_summary

    _guard(False, lambda: run_summary(Console(width=None if sys.stdout.isatty() else 200),
                                      find_run(run, Path(dir) if dir is not None else None)) or 0)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, add_help_option=False)
def sim(ctx: typer.Context) -> None:
    """The bundled simulators: cursor-pilot sim {cursor|line|menu|acp} SCENARIO [TASK...] (--help lists the scenarios)."""
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
    from cursorpilot.pastruns import find_run
    from cursorpilot.report import write

    if not run_dir.exists() and len(run_dir.parts) == 1:  # a run id: from the runs cursor-pilot runs lists
        run_dir = find_run(str(run_dir)).folder
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


PATH_OPTIONS = ("plan", "cwd", "log", "prices", "rules", "detectors", "resume", "learn")
RESUMABLE = ("command", "prompt", "plan", "cursor", "acp", "agent", "headless", "task", "cwd", "provider", "model", "base_url", "llm_retries", "llm_timeout",
             "context_tokens", "no_upload", "keep_ci_env", "no_native_deny", "prices", "rules", "answer", "secret", "profile", "detectors", "max_steps", "timeout",
             "cols", "rows", "done_when", "max_turns", "max_wall", "max_cost", "human_timeout", "on_human_timeout")


def _run(**o) -> int:
    from rich.console import Console

    from cursorpilot.durations import parse_duration
    from cursorpilot.human.humans import configure as configure_humans
    from cursorpilot.logs import configure_logging
    from cursorpilot.manifest import read_manifest
    from cursorpilot.plan import load_plan
    from cursorpilot.providers import choose as choose_provider
    from cursorpilot.providers import create as create_provider
    from cursorpilot.providers.base import ProviderConfig
    from cursorpilot.providers.llm import load_prices
    from cursorpilot.providers.rules import RulesProvider, parse_answer, read_entries
    from cursorpilot.pastruns import register, runs_home
    from cursorpilot.preflight import check_new_log_dir, check_startable
    from cursorpilot.secret import given as given_secrets
    from cursorpilot.plan import single_command_plan
    from cursorpilot.resume import check_resumable
    from cursorpilot.runner import Runner, RunSpec, default_run_id
    from cursorpilot.ui import ConsoleSink

    for key in PATH_OPTIONS:  # some typer releases hand Optional[Path] options over as str
        if o.get(key) is not None:
            o[key] = Path(o[key])
    manifest = None
    if o["resume"]:
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
    command: list[str] = o["command"] or []
    acp_task = None
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
        acp_task = o["task"]
    if o["plan"] is not None:
        o["plan"] = _plan_path(o["plan"])
    if o["plan"] and command:
        raise BadInput("--plan and -- COMMAND can't be combined: put the command in a drive: step")
    if not o["plan"] and not command:
        raise BadInput("nothing to run: give -- COMMAND [ARGS...] or --plan FILE (or try: cursor-pilot demo)")
    plan = load_plan(o["plan"]) if o["plan"] else single_command_plan(command, acp_task, headless)
    timeout = parse_duration(o["timeout"]) if o["timeout"] else None
    governing = load_governing_prompt(o["prompt"])
    if manifest is not None:
        check_resumable(manifest, o["plan"], governing, o["force"])
    rules = _existing(o["rules"], "rules file")
    answers = [parse_answer(a, i + 1) for i, a in enumerate(o["answer"] or [])]
    secrets = given_secrets(o.get("secret") or [], os.environ)  # names and variables are kept for --resume, values never
    detectors = _existing(o["detectors"], "detector file")
    interactive_steps = any(step.run is None for step in plan.steps)
    if o.get("learn") is not None:
        _check_learning(o)
    # no key and no rules: the rules provider with none, so a program that asks nothing runs, and each question goes to
    # a person (exit 3 with nobody at the terminal, saying how to choose an answerer)
    provider_name = choose_provider(o["provider"] or (None if interactive_steps else "rules"), True, dict(os.environ))
    pconfig = ProviderConfig(
        rules_file=rules, model=o["model"], base_url=o["base_url"], retries=o["llm_retries"],
        timeout=parse_duration(o["llm_timeout"]), prices=load_prices(_existing(o["prices"], "prices file")),
    )
    if provider_name == "rules":  # --answer first, then --rules; with neither, the plan's answers alone (no match escalates)
        origin = str(rules or ("--answer" if answers else "--learn" if o.get("learn") else "--provider rules" if o["provider"] else ""))
        # (""): nothing was chosen to answer, and a question's escalation says how to choose
        provider = RulesProvider([*answers, *(read_entries(rules) if rules else [])], origin)
        rule_entries = []
    else:  # an answerer that is not rules: the rules go first, as the step's own (the script's file is its script)
        provider = create_provider(provider_name, pconfig)
        rule_entries = [*answers, *(read_entries(rules) if rules is not None and provider.needs_prompt else [])]
    max_wall = parse_duration(o["max_wall"]) if o.get("max_wall") else None
    _check_max_cost(o.get("max_cost"), provider)
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
    spec = RunSpec(
        plan=plan, governing_prompt=governing, provider=provider, run_id=run_id, log_dir=log_dir, argv=o["argv"], options=options,
        plan_path=o["plan"], rule_entries=rule_entries,
        profile=o["profile"], detectors=detectors, cursor_bin=o["cursor"], cwd=str(cwd) if cwd else None,
        max_steps=o["max_steps"], timeout=timeout, dry_run=o["dry_run"], done_when=o.get("done_when") or None,
        max_turns=o.get("max_turns"), max_wall=max_wall, max_cost=o.get("max_cost"),
        interactive=humans.reachable, context_tokens=o["context_tokens"], humans=humans,
        no_upload=o["no_upload"], keep_ci_env=o["keep_ci_env"], native_deny=not o.get("no_native_deny"), cols=o["cols"], rows=o["rows"], secrets=secrets,
    )
    console = Console() if sys.stdout.isatty() else Console(width=140)  # logs and CI: don't wrap at 80 columns
    runner = Runner(spec, ConsoleSink(console, quiet=o["quiet"]), resume=manifest)
    runner.check_profiles()
    register(log_dir, run_id)  # cursor-pilot runs lists it from anywhere
    configure_logging(log_dir, debug=o["debug"])
    try:
        return runner.run().exit_code
    finally:
        if spec.interactive:
            _learned_at_exit(log_dir, o.get("learn"), rules, command or [str(o["plan"])])
        if o.get("report"):
            _report_at_exit(log_dir)


def _check_learning(o: dict) -> None:
    """--learn: a person answers every question (no model, whatever key is set), so one must be at the terminal."""
    if not (is_interactive() and os.environ.get("CI") is None):
        raise BadInput("--learn needs you at the terminal to answer the program's questions (stdin is not a terminal, or CI is set)")
    if o["provider"] not in (None, "rules"):
        raise BadInput(f"--learn: you answer the questions, not --provider {o['provider']}")
    o["provider"] = "rules"


def _learned_at_exit(log_dir: Path, learn_file: Path | None, rules: Path | None, command: list[str]) -> None:
    """--learn: the person's answers written as rules. A run a person helped: the offer to keep their answers as rules
    (in --rules FILE, else rules.learned.yaml). Nothing here changes the run's exit code."""
    import shlex

    from cursorpilot import learn
    from cursorpilot.ui import error_line

    try:
        learned = learn.learn(learn.answers(log_dir / "transcript.jsonl"))
    except OSError:
        return
    if not learned.rules:
        if learn_file is not None:
            typer.echo("  learned nothing: no question was answered by you")
        return
    target = learn_file or rules or LEARN_OUT
    try:
        if learn_file is None and not typer.confirm(
                f"You answered {learned.asked} question(s) yourself. Save your answers as rules in {target}?", default=False):
            return
    except (typer.Abort, EOFError, KeyboardInterrupt):
        return
    try:
        added = learn.write(target, learned, shlex.join(command))
    except (PilotError, OSError) as exc:
        error_line(f"the rules could not be written: {exc}")
        return
    secrets = "".join(f" --secret {n}=ENVVAR" for n in learned.secrets)
    typer.echo(f"  learned {added} rule(s) from your {learned.asked} answer(s): {target}\n"
               f"  run it with nobody there: cursor-pilot run --rules {target}{secrets} -- {shlex.join(command)}")
    for line in learned.unsure:
        typer.echo(f"  note: these rules may not answer {line!r} as you did (the same question, asked in more ways)")


def _check_max_cost(max_cost: float | None, provider) -> None:
    """--max-cost counts what the model costs: a model whose price is not known would never reach it."""
    from cursorpilot.providers.llm import cost

    if max_cost is None or not getattr(provider, "needs_prompt", False):
        return
    model = getattr(provider, "model", "?")
    if cost(model, 1_000_000, 1_000_000, getattr(provider, "prices", None)) is None:
        raise BadInput(f"--max-cost needs the price of {model!r}, which is not in the built-in table: give it with --prices FILE")


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
