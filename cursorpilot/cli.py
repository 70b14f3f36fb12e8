"""The command line: wiring only. The commands, their options and their help; each command's body is in
cursorpilot/commands/ (imported when it runs), and commands/exits.py maps its errors to exit codes."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import typer

from cursorpilot import __version__

from cursorpilot.commands import completion
from cursorpilot.commands.learning import LEARN_OUT
from cursorpilot.commands.runargs import DEBUG_HELP, FIELDS, LOG_HELP, OUTPUT, QUIET_HELP, REPORT_HELP, RunArgs

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


def _run(ctx: typer.Context, **values: object) -> None:
    """Drive a program (or a --plan of steps) unattended: cursor-pilot run [OPTIONS] [--] COMMAND [ARGS]...

    It watches what the program asks, decides (deny policy, then your rules, then a model) and types the answer.
    """
    from cursorpilot.commands.exits import as_exit_code
    from cursorpilot.commands.run import run as run_body

    argv = ["cursor-pilot", *sys.argv[1:]]
    values.pop("version", None)
    # by name: typer vendors its own click now, and the enum's home moved with it
    given = {k for k in values if getattr(ctx.get_parameter_source(k), "name", "") == "COMMANDLINE"}
    if values.get("command"):
        given.add("command")
    args = RunArgs.from_values(values)
    as_exit_code(args.debug, lambda: run_body(args, frozenset(given), argv=argv))


def _run_parameters() -> list[inspect.Parameter]:
    """`run`'s parameters as typer reads them, each built from its RunArgs field (commands/runargs.py): the option's name is the
    field's (`--base-url`), its type the field's kind, its default, range, help and panel the field's own."""
    types: dict[str, object] = {"flag": bool, "int": int, "float": float, "str": str, "path": Path, "list": list[str], "command": list[str]}
    params = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)]
    for name, spec in FIELDS.items():
        kind = types[spec.kind]
        annotation = kind | None if spec.default is None else kind  # type: ignore[operator]
        complete = {"autocompletion": getattr(completion, spec.complete)} if spec.complete else {}
        if spec.kind == "command":
            default = typer.Argument(spec.default, metavar=spec.metavar, help=spec.help)
        else:
            default = typer.Option(spec.default, "--" + name.replace("_", "-"), help=spec.help, rich_help_panel=spec.panel,
                                   metavar=spec.metavar, min=spec.min, max=spec.max, envvar=spec.envvar, **complete)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        if name == "debug":  # (shown beside the other output options)
            version = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit.",
                                   rich_help_panel=OUTPUT)
            params.append(inspect.Parameter("version", inspect.Parameter.KEYWORD_ONLY, default=version, annotation=bool))
    return params


_run.__signature__ = inspect.Signature(_run_parameters())  # type: ignore[attr-defined]
# Options end at `--` or at the first word that is not an option: that word is the program, and everything after it
# is the program's own (`run --rules r.yaml bash -c 'read x'`). Before it, an unknown option is a typo (--timout),
# refused with a suggestion, never taken for the program's name.
app.command("run", context_settings={"allow_interspersed_args": False})(_run)


@app.command()
def demo(
    log: Path | None = typer.Option(None, "--log", help=LOG_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
    report: bool = typer.Option(False, "--report", help=REPORT_HELP),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Run the bundled demo: the Cursor simulator driven offline by rules under a demo governing prompt."""
    from cursorpilot.commands.exits import as_exit_code
    from cursorpilot.commands.run import demo as demo_body

    argv = ["cursor-pilot", *sys.argv[1:]]
    as_exit_code(debug, lambda: demo_body(log, quiet, report, debug, argv, PACKAGE))


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
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(debug, lambda: past.report(Path(run_dir), Path(out) if out else None))


@app.command()
def watch(
    run: str | None = typer.Argument(None, metavar="RUN", autocompletion=lambda ctx, incomplete: _complete_run(ctx, incomplete),
                                     help="A running run's id (or its unique beginning) or folder (default: the newest running one)."),
    take: bool = typer.Option(False, "--take", help="Take the keyboard: the pilot pauses and your keys go to the program; "
                                                   "Ctrl-] hands it back, and the pilot judges the screen afresh."),
) -> None:
    """Look in on a running run from another terminal: its live screen and decisions (read-only; Ctrl-C leaves)."""
    from cursorpilot.commands import watching
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(False, lambda: watching.watch(run, take))


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
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(debug, lambda: past.detect(Path(recording), profile, Path(detectors) if detectors else None, cols, rows))


@app.command()
def policy(
    prompt: str | None = typer.Option(None, "--prompt", help="The governing prompt: a file, or its text (more than one word)."),
    rules: Path | None = typer.Option(None, "--rules", help="A rules file: which of its rules grant an act."),
    answer: list[str] | None = typer.Option(None, "--answer", help="A rule in one line, 'REGEX=REPLY' (repeatable)."),
    plan: Path | None = typer.Option(None, "--plan", help="A plan: its prompt is compiled too, its allow: listed."),
    provider: str | None = typer.Option(None, "--provider", help="The model that compiles it (default: from the API key that is set; "
                                                                "none: the lexical reader)."),
    model: str | None = typer.Option(None, "--model", help="The model."),
    base_url: str | None = typer.Option(None, "--base-url", help="The model's server."),
    as_json: bool = typer.Option(False, "--json", help="Print it as JSON."),
    out: Path | None = typer.Option(None, "-o", "--out", metavar="FILE", help="Write it as YAML, to correct and pin: run --policy FILE."),
    debug: bool = typer.Option(False, "--debug", help="Tracebacks on errors."),
) -> None:
    """Print the deny policy a run would weigh a yes by: your governing prompt compiled into grants and prohibitions."""
    from cursorpilot.commands import policy as policy_command
    from cursorpilot.commands.exits import as_exit_code

    args = RunArgs(prompt=prompt, rules=rules, answer=tuple(answer) if answer else None, plan=plan, provider=provider, model=model,
                   base_url=base_url, debug=debug)
    as_exit_code(debug, lambda: policy_command.show(args, as_json, out))


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
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(False, lambda: past.runs_show(run, dir))


from cursorpilot.commands.fleet import app as fleet_app  # noqa: E402 - typer alone at import: its bodies import the fleet

app.add_typer(fleet_app, name="fleet")


hook_app = typer.Typer(help="The governing prompt's policy on every tool call an agent makes, inside the agent's own hook: "
                            "cursor-pilot hook install claude --prompt FILE (then run the agent as you do).",
                       no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(hook_app, name="hook")
HOOK_PROMPT = "The governing prompt: a file, or its text (more than one word); read without a model."
HOOK_POLICY = "A policy file (cursor-pilot policy -o FILE writes one, to correct and pin)."
HOOK_RECORD = "Append each allow, deny or ask as a JSON line to this file (a run's hook: the run reads it into its transcript)."


def _hook(agent: str) -> None:
    def body(prompt: str | None = typer.Option(None, "--prompt", help=HOOK_PROMPT),
             policy: Path | None = typer.Option(None, "--policy", help=HOOK_POLICY),
             record: Path | None = typer.Option(None, "--record", help=HOOK_RECORD)) -> None:
        from cursorpilot.commands.hook import serve

        raise SystemExit(serve([agent, *(["--prompt", prompt] if prompt is not None else []),
                                *(["--policy", str(policy)] if policy is not None else []),
                                *(["--record", str(record)] if record is not None else [])]))

    body.__doc__ = (f"Answer one {agent} hook event (stdin) with the policy's decision (stdout), in {agent}'s own protocol; "
                    "a payload it cannot read, a policy it cannot load or any failure answers deny.")
    hook_app.command(agent)(body)


for _agent in ("claude", "gemini", "cursor"):
    _hook(_agent)


@hook_app.command("install")
def hook_install(
    agent: str = typer.Argument(..., metavar="AGENT", help="claude, gemini or cursor."),
    prompt: str | None = typer.Option(None, "--prompt", help=HOOK_PROMPT),
    policy: Path | None = typer.Option(None, "--policy", help=HOOK_POLICY),
    project: Path = typer.Option(Path("."), "--project", help="The project whose settings get the hook."),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Write the hook into a project's settings (Claude: .claude/settings.local.json; Gemini: .gemini/settings.json;
    Cursor: .cursor/hooks.json), for work without a run; `hook uninstall` takes exactly that out again."""
    from cursorpilot.commands import hook
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(debug, lambda: hook.install(agent, prompt, str(policy) if policy else None, str(project)))


@hook_app.command("uninstall")
def hook_uninstall(
    agent: str = typer.Argument(..., metavar="AGENT", help="claude, gemini or cursor."),
    project: Path = typer.Option(Path("."), "--project", help="The project whose settings hold the hook."),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Take out exactly what `hook install` wrote (the file as it was, byte for byte, where nobody changed it since)."""
    from cursorpilot.commands import hook
    from cursorpilot.commands.exits import as_exit_code

    as_exit_code(debug, lambda: hook.uninstall(agent, str(project)))


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
    stderr and exit 2, like every other error (commands/exits.py), not typer's boxed panel."""
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
