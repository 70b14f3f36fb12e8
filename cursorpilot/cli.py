"""The command line: wiring only. The commands, their options and their help; each command's body is in
cursorpilot/commands/ (imported when it runs), and commands/guard.py maps its errors to exit codes."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from cursorpilot import __version__, completion
from cursorpilot.commands.learning import LEARN_OUT

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


def _flags_show_no_type() -> None:
    """typer's help shows a flag as `--quiet <bool>`, which reads as an option that takes a value (`--version true`, and
    `run --quiet true` would run /bin/true): a flag shows no type."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_show_no_type()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cursor-pilot {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """cursor-pilot."""


PROGRAM, ANSWERS, LIMITS, OUTPUT, PLANS, ACP = "Program", "Answers", "Limits", "Output", "Plans and runs", "ACP"
PEOPLE = "When a person is needed"
TURNS = "Turn ends and the goal"
LOG_HELP = ("Where the run's records go (default: $XDG_STATE_HOME/cursor-pilot/runs/<run-id>/, or $CURSORPILOT_RUNS/<run-id>/); "
            "a folder that holds a run is refused.")
QUIET_HELP = "Show only the final summary: no live screen, no answers, no program output."
DEBUG_HELP = "Diagnostics on stderr as well, and a traceback on errors."


class RunOptions:
    """`run`'s options, as `run --help` shows them (by panel): declared here, apart from the command, so that it reads as
    wiring."""

    command = typer.Argument(None, metavar="-- COMMAND [ARGS]",
                             help="The program to drive and its arguments (after -- or after the options).")
    cwd = typer.Option(None, "--cwd", help="The program's working directory.", rich_help_panel=PROGRAM)
    cols = typer.Option(120, "--cols", min=20, max=1000, help="The program's terminal width (the live view is cropped to yours).",
                        rich_help_panel=PROGRAM)
    rows = typer.Option(40, "--rows", min=5, max=1000, help="The program's terminal height.", rich_help_panel=PROGRAM)
    profile = typer.Option("auto", "--profile", autocompletion=completion.profiles, rich_help_panel=PROGRAM,
                           help="How its screens are read: a detector profile (cursor-pilot profiles), a profile file, or auto.")
    detectors = typer.Option(None, "--detectors", help="A YAML/JSON file adding or overriding detector rules.",
                             rich_help_panel=PROGRAM)
    keep_ci_env = typer.Option(False, "--keep-ci-env", rich_help_panel=PROGRAM,
                               help="Pass CI=true and the like on to the program (by default hidden: it has a user, the pilot).")
    no_native_deny = typer.Option(False, "--no-native-deny", rich_help_panel=PROGRAM,
                                  help="Leave the agent's own deny list alone (docs/headless.md): the policy still judges what the pilot is asked.")
    prompt = typer.Option(None, "--prompt", rich_help_panel=ANSWERS,
                          help="The governing prompt: a file, or its text (more than one word).")
    rules = typer.Option(None, "--rules", rich_help_panel=ANSWERS,
                         help="A rules file: a YAML list of {match, reply} (docs/rules.md); the script's replies.")
    learn = typer.Option(None, "--learn", metavar="FILE", rich_help_panel=ANSWERS,
                         help="You answer every question at the terminal; your answers become the rules in FILE "
                              "(docs/rules.md#learning-from-a-person).")
    answer = typer.Option(None, "--answer", rich_help_panel=ANSWERS,
                          help="A rule in one line, 'REGEX=REPLY' (repeatable; checked before --rules).")
    secret = typer.Option(None, "--secret", metavar="NAME=ENVVAR", rich_help_panel=ANSWERS,
                          help="A secret read from the environment, typed where a reply says <secret:NAME> "
                               "and never shown or written down (repeatable).")
    provider = typer.Option(None, "--provider", autocompletion=completion.providers, rich_help_panel=ANSWERS,
                            help="rules | script | openai | anthropic (default: from the API key that is set).")
    model = typer.Option(None, "--model", rich_help_panel=ANSWERS,
                         help="The model (openai: gpt-4o-mini, anthropic: claude-haiku-4-5).")
    base_url = typer.Option(None, "--base-url", help="The model's server, e.g. an OpenAI-compatible one.",
                            rich_help_panel=ANSWERS)
    llm_retries = typer.Option(4, "--llm-retries", min=0, help="Retries on 429, a 5xx that may pass, timeouts, connection errors.",
                               rich_help_panel=ANSWERS)
    llm_timeout = typer.Option("60s", "--llm-timeout", help="The timeout of each model call.", rich_help_panel=ANSWERS)
    context_tokens = typer.Option(3000, "--context-tokens", min=200, help="The token budget of each prompt to the model.",
                                  rich_help_panel=ANSWERS)
    no_upload = typer.Option(False, "--no-upload", help="Send the model only terminal text: no git snapshot.",
                             rich_help_panel=ANSWERS)
    prices = typer.Option(None, "--prices", rich_help_panel=ANSWERS,
                          help="YAML {model: \\[usd_per_1M_in, usd_per_1M_out, optional usd_per_1M_cached_in]} for the cost estimate.")
    max_steps = typer.Option(None, "--max-steps", min=1, help="Answer at most N prompts (then exit 4).",
                             rich_help_panel=LIMITS)
    max_model_calls = typer.Option("1000/20", "--max-model-calls", metavar="N[/Q]", rich_help_panel=LIMITS,
                                   help="Call the model at most N times in the run and Q times for one question (then "
                                        "exit 4); 'off': no cap.")
    timeout = typer.Option(None, "--timeout", help="Cap the whole run: 90s, 45m, 1h30m (then exit 4).",
                           rich_help_panel=LIMITS)
    done_when = typer.Option(None, "--done-when", metavar="CMD", rich_help_panel=TURNS,
                             help="A shell command run at each turn end: exit 0 means the goal is met (docs/turns.md).")
    max_turns = typer.Option(None, "--max-turns", min=1, rich_help_panel=TURNS,
                             help="Give an agent at most N turns per step (default 10; then exit 4).")
    max_wall = typer.Option(None, "--max-wall", rich_help_panel=TURNS,
                            help="Start no new turn after this long: 30m, 2h (then exit 4; --timeout cuts).")
    max_cost = typer.Option(None, "--max-cost", min=0.0, metavar="USD", rich_help_panel=TURNS,
                            help="Start no new turn once the model has cost this much (needs its price).")
    on_limit = typer.Option("wait", "--on-limit", metavar="wait|stop|switch-model", rich_help_panel=TURNS,
                            help="At an agent's usage limit: wait for its reset and continue the session (within --max-wall), "
                                 "stop (exit 4), or switch to the model it offers (docs/turns.md).")
    stuck_after = typer.Option(None, "--stuck-after", metavar="DURATION", rich_help_panel=TURNS,
                               help="An agent at work with no progress sign this long is interrupted and told to continue "
                                    "(default: its profile's, 10m).")
    notify = typer.Option(None, "--notify", metavar="URL", envvar="CURSOR_PILOT_NOTIFY", rich_help_panel=PEOPLE,
                          help="When a person is needed, send a notice with the decision page's link to this "
                               "Apprise URL: ntfy, Slack, Telegram, mailto, json://host:port/... (repeatable; "
                               "docs/human.md).")
    listen = typer.Option(None, "--listen", metavar="HOST:PORT", rich_help_panel=PEOPLE,
                          help="Serve the decision page here (default with --notify: 127.0.0.1, any port). "
                               "Beyond loopback anyone who gets a question's link can answer it: it warns.")
    human_timeout = typer.Option(None, "--human-timeout", metavar="DURATION", rich_help_panel=PEOPLE,
                                 help="Wait at most this long for a person's answer (then exit 3), e.g. 30m.")
    on_human_timeout = typer.Option("exit", "--on-human-timeout", metavar="exit|no", rich_help_panel=PEOPLE,
                                    help="When --human-timeout passes: exit 3, or answer the question's own no "
                                         "(its reject option, n; exit 3 where it has none).")
    log = typer.Option(None, "--log", help=LOG_HELP, rich_help_panel=OUTPUT)
    quiet = typer.Option(False, "--quiet", help=QUIET_HELP, rich_help_panel=OUTPUT)
    report = typer.Option(False, "--report", help=REPORT_HELP, rich_help_panel=OUTPUT)
    debug = typer.Option(False, "--debug", help=DEBUG_HELP, rich_help_panel=OUTPUT)
    version = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit.",
                           rich_help_panel=OUTPUT)
    plan = typer.Option(None, "--plan", autocompletion=completion.plans, rich_help_panel=PLANS,
                        help="A YAML plan of steps, or a bundled one by name (cursor-pilot plans).")
    cursor = typer.Option("cursor-agent", "--cursor", help="The Cursor binary for a plan's cursor: steps.", rich_help_panel=PLANS)
    dry_run = typer.Option(False, "--dry-run", rich_help_panel=PLANS,
                           help="Preview: start each step's program, stop it at its first question, type nothing "
                                "(what it does before asking, it does).")
    resume = typer.Option(None, "--resume", help="Continue a run: its manifest.json, its folder or its id.",
                          rich_help_panel=PLANS)
    force = typer.Option(False, "--force", help="Resume even if the plan or the governing prompt changed.", rich_help_panel=PLANS)
    acp = typer.Option(False, "--acp", help="Drive the agent over the Agent Client Protocol (JSON-RPC on stdio), not a screen.",
                       rich_help_panel=ACP)
    agent = typer.Option(None, "--agent", autocompletion=completion.agents, rich_help_panel=ACP,
                         help="A known ACP agent: cursor, gemini, claude, codex (implies --acp; with --headless: claude, cursor).")
    headless = typer.Option(False, "--headless", rich_help_panel=ACP,
                            help="Drive the agent's print mode (claude -p, cursor-agent -p) through its event stream (docs/headless.md).")
    task = typer.Option(None, "--task", help="The task, sent as the first prompt.", rich_help_panel=ACP)


Opt = RunOptions


# Options end at `--` or at the first word that is not an option: that word is the program, and everything after it
# is the program's own (`run --rules r.yaml bash -c 'read x'`). Before it, an unknown option is a typo (--timout),
# refused with a suggestion, never taken for the program's name.
@app.command(context_settings={"allow_interspersed_args": False})
def run(
    ctx: typer.Context, command: list[str] | None = Opt.command, cwd: Path | None = Opt.cwd, cols: int = Opt.cols,
    rows: int = Opt.rows, profile: str = Opt.profile, detectors: Path | None = Opt.detectors,
    keep_ci_env: bool = Opt.keep_ci_env, no_native_deny: bool = Opt.no_native_deny, prompt: str | None = Opt.prompt,
    rules: Path | None = Opt.rules, learn: Path | None = Opt.learn, answer: list[str] | None = Opt.answer,
    secret: list[str] | None = Opt.secret, provider: str | None = Opt.provider, model: str | None = Opt.model,
    base_url: str | None = Opt.base_url, llm_retries: int = Opt.llm_retries, llm_timeout: str = Opt.llm_timeout,
    context_tokens: int = Opt.context_tokens, no_upload: bool = Opt.no_upload, prices: Path | None = Opt.prices,
    max_steps: int | None = Opt.max_steps, max_model_calls: str = Opt.max_model_calls, timeout: str | None = Opt.timeout,
    done_when: str | None = Opt.done_when,
    max_turns: int | None = Opt.max_turns, max_wall: str | None = Opt.max_wall,
    max_cost: float | None = Opt.max_cost, on_limit: str = Opt.on_limit, stuck_after: str | None = Opt.stuck_after,
    notify: list[str] | None = Opt.notify, listen: str | None = Opt.listen,
    human_timeout: str | None = Opt.human_timeout, on_human_timeout: str = Opt.on_human_timeout,
    log: Path | None = Opt.log, quiet: bool = Opt.quiet, report: bool = Opt.report, debug: bool = Opt.debug,
    version: bool = Opt.version, plan: Path | None = Opt.plan, cursor: str = Opt.cursor, dry_run: bool = Opt.dry_run,
    resume: Path | None = Opt.resume, force: bool = Opt.force, acp: bool = Opt.acp, agent: str | None = Opt.agent,
    headless: bool = Opt.headless, task: str | None = Opt.task,
) -> None:
    """Drive a program (or a --plan of steps) unattended: cursor-pilot run [OPTIONS] [--] COMMAND [ARGS]...

    It watches what the program asks, decides (deny policy, then your rules, then a model) and types the answer.
    """
    from cursorpilot.commands.guard import guard
    from cursorpilot.commands.run import run as run_body

    argv = ["cursor-pilot", *sys.argv[1:]]
    values = {k: v for k, v in ctx.params.items() if k not in ("ctx", "version")}
    # by name: typer vendors its own click now, and the enum's home moved with it
    given = {k for k in values if getattr(ctx.get_parameter_source(k), "name", "") == "COMMANDLINE"}
    if command:
        given.add("command")
    guard(debug, lambda: run_body(argv=argv, given=given, **values))


@app.command()
def demo(
    log: Path | None = typer.Option(None, "--log", help=LOG_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    report: bool = typer.Option(False, "--report", help=REPORT_HELP),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Run the bundled demo: the Cursor simulator driven offline by rules under a demo governing prompt."""
    from cursorpilot.commands.guard import guard
    from cursorpilot.commands.run import demo as demo_body

    argv = ["cursor-pilot", *sys.argv[1:]]
    guard(debug, lambda: demo_body(log, quiet, report, debug, argv, PACKAGE))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False})
def learn(
    ctx: typer.Context,
    out: Path = typer.Option(LEARN_OUT, "--out", "-o", metavar="FILE", help="The rules file to write (added to, when it exists)."),
) -> None:
    """Run a program with you answering every question at the terminal; your answers become a rules file that answers
    them with nobody there: cursor-pilot learn [--out FILE] [RUN OPTIONS] -- COMMAND [ARGS]...

    Every option of `run` works here too (--cwd, --secret, --rules, --timeout, ...). Then: cursor-pilot run --rules FILE -- COMMAND.
    """
    from typer.main import get_command

    from cursorpilot.commands.learning import run_args

    args = sys.argv[sys.argv.index("learn") + 1:] if "learn" in sys.argv else list(ctx.args)
    _main(get_command(app), run_args(args, out))


@app.command()
def report(
    run_dir: Path = typer.Argument(..., metavar="RUN", help="A run's id (or its unique beginning), its folder, or its transcript.jsonl."),
    out: Path | None = typer.Option(None, "--out", metavar="DIR", help="Write the report here (default: the run's folder)."),
    debug: bool = typer.Option(False, "--debug", help="Tracebacks on errors."),
) -> None:
    """Write report.html (verdict, decisions, files changed, terminal replay), report.json and report.md for a run."""
    from cursorpilot.commands import past
    from cursorpilot.commands.guard import guard

    guard(debug, lambda: past.report(Path(run_dir), Path(out) if out else None))


@app.command()
def watch(
    run: str | None = typer.Argument(None, metavar="RUN", autocompletion=lambda ctx, incomplete: _complete_run(ctx, incomplete),
                                     help="A running run's id (or its unique beginning) or folder (default: the newest running one)."),
    take: bool = typer.Option(False, "--take", help="Take the keyboard: the pilot pauses and your keys go to the program; "
                                                   "Ctrl-] hands it back, and the pilot judges the screen afresh."),
) -> None:
    """Look in on a running run from another terminal: its live screen and decisions (read-only; Ctrl-C leaves)."""
    from cursorpilot.commands import watching
    from cursorpilot.commands.guard import guard

    guard(False, lambda: watching.watch(run, take))


@app.command()
def detect(
    recording: Path = typer.Argument(..., help="session.cast, session.raw, or a screen text file (tmux capture-pane -p)."),
    profile: str = typer.Option("auto", "--profile", help="Detector profile name (detectors/), or auto (from the cast's command)."),
    detectors: Path | None = typer.Option(None, "--detectors", help="YAML/JSON file adding or overriding rules."),
    cols: int = typer.Option(120, "--cols", min=20, max=1000, help="Screen width when the file does not say."),
    rows: int = typer.Option(40, "--rows", min=5, max=1000, help="Screen height when the file does not say."),
    debug: bool = typer.Option(False, "--debug", help="Tracebacks on errors."),
) -> None:
    """Replay a recording through the screen and classifier; print each decision point (time, state, rule, prompt)."""
    from cursorpilot.commands import past
    from cursorpilot.commands.guard import guard

    guard(debug, lambda: past.detect(Path(recording), profile, Path(detectors) if detectors else None, cols, rows))


@app.command()
def profiles() -> None:
    """List the bundled detector profiles and the files they are read from."""
    from cursorpilot.commands import past

    past.profiles()


@app.command()
def plans() -> None:
    """List the bundled example plans, what each does, and its file (run one with: cursor-pilot run --plan NAME)."""
    from cursorpilot.commands import past

    past.plans()


runs_app = typer.Typer(help="List past runs (from anywhere; or those in --dir), or show one: cursor-pilot runs show ID.",
                       invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(runs_app, name="runs")
RUNS_DIR_HELP = "Only the runs in this folder (a folder of run folders, or one run's folder)."


def _complete_run(ctx: typer.Context, incomplete: str) -> list[str]:
    from cursorpilot.commands.past import complete_run

    return complete_run(ctx.params.get("dir"), incomplete)


@runs_app.callback()
def runs(ctx: typer.Context, dir: Path | None = typer.Option(None, "--dir", help=RUNS_DIR_HELP)) -> None:
    """List past runs: id, start, status, exit code, answers, escalations, program, folder (cursor-pilot runs show ID for one)."""
    if ctx.invoked_subcommand is not None:
        return
    from cursorpilot.commands import past

    past.runs_list(dir)


@runs_app.command("show")
def runs_show(
    run: str = typer.Argument(..., help="A run id (or its unique beginning), or a run folder.", autocompletion=_complete_run),
    dir: Path | None = typer.Option(None, "--dir", help=RUNS_DIR_HELP),
) -> None:
    """Show one run's summary: what ran, how it ended, each step, the counters, and where its records are."""
    from cursorpilot.commands import past
    from cursorpilot.commands.guard import guard

    guard(False, lambda: past.runs_show(run, dir))


from cursorpilot.commands.fleet import app as fleet_app  # noqa: E402 - typer alone at import: its bodies import the fleet

app.add_typer(fleet_app, name="fleet")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, add_help_option=False)
def sim(ctx: typer.Context) -> None:
    """The bundled simulators: cursor-pilot sim {cursor|line|menu|acp} SCENARIO [TASK...] (--help lists the scenarios)."""
    from cursorpilot.sim.__main__ import main as sim_main

    raise typer.Exit(sim_main(list(ctx.args), prog="cursor-pilot sim"))


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--version"] and len(args) > 1:  # a flag takes no value: `--version true` is a mistake, said so
        _usage_error(f"--version takes no value and no command (got {args[1]!r}): cursor-pilot --version", 2)
    from typer.main import get_command

    _main(get_command(app), args)


def _main(command, args: list[str]) -> None:
    """Run a command line; a mistake in it (an option typo, a value out of range, a missing argument) is one line on
    stderr and exit 2, like every other error (commands/guard.py), not typer's boxed panel."""
    try:
        code = command.main(args, prog_name="cursor-pilot", standalone_mode=False)
    except typer.Abort:
        _usage_error("aborted", 1)
    except typer.TyperException as exc:  # click's errors (typer's own click): their message and exit code
        code = getattr(exc, "exit_code", 2)
        if type(exc).__name__ != "NoArgsIsHelpError":  # (that one has shown the help already, as typer tells it)
            ctx = getattr(exc, "ctx", None)
            where = f" ({ctx.command_path} -h for help)" if ctx is not None else ""
            _usage_error(f"{getattr(exc, 'format_message', exc.__str__)()}{where}", code)
    raise SystemExit(code if isinstance(code, int) else 0)


def _usage_error(message: str, code: int) -> None:
    from cursorpilot.ui import error_line

    error_line(message)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
