"""The `cursor-pilot` command's entry point: the program a run drives starts first.

A pilot that sits between a user and a fast program should be no slower than the program. Reading the options through
typer, building the run's models, opening its records and loading the console took 0.6 s before the program was
started, and every short program (a config wizard, `git add -p`, `rm -ri`) paid it. So a run whose options are plain
ones (commands/runargs.py) is read without typer, and its program is started (pty/driver.py `prestart`) before anything else is
imported: the run then claims that very program when it reaches it. What can refuse the run is checked first, as far as
it is cheap (the files named exist, the folder, the log folder, the durations, the answerer's key, the program itself);
what is left (a rules file that does not parse, say) refuses the run as before, with one line and its exit code, and the
program started early is killed before anything is typed into it.

Such a run is run by a warm child of the resident pilot when there is one (warmstart.py, pilotd.py), else here.
`--version` is answered here too, and so is `hook AGENT` (an agent's tool call, commands/hook.py); everything else is
cli.py's (typer).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cursorpilot.commands.runargs import RunArgs


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        from cursorpilot import __version__

        print(f"cursor-pilot {__version__}")
        return
    if _hook_call(args):
        _exit_now(_hook(args))
    if _plain_run(args):
        from cursorpilot.startup import warmstart

        code = warmstart.served()  # by a warm child of the resident pilot (warmstart.py), else here
        if code is None:
            code = run_here(args)
            warmstart.start_for_next()
        _exit_now(code)
    from cursorpilot.cli import main as cli_main

    cli_main()


def _hook_call(args: list[str]) -> bool:
    """`hook AGENT ...`: an agent's tool call, answered on every call it makes, so read without typer (commands/hook.py);
    its --help, `install` and `uninstall` are typer's."""
    return args[:1] == ["hook"] and args[1:2] in (["claude"], ["gemini"], ["cursor"]) and not {"-h", "--help"} & set(args)


def _hook(args: list[str]) -> int:
    """A hook call, answered by a warm child of the resident pilot when there is one (its imports done: the call then
    costs what Python's start does), else here, starting one for the calls after it: an agent calls it on every tool
    call."""
    from cursorpilot.startup import warmstart

    code = warmstart.served()
    if code is None:
        code = in_child(args)
        warmstart.start_for_next()
    return code


def in_child(args: list[str]) -> int:
    """What the resident pilot's child runs for the process that handed it over (pilotd.py): a hook call, or a plain run."""
    if _hook_call(args):
        from cursorpilot.commands.hook import serve

        return serve(args[1:])
    return run_here(args)


def _plain_run(args: list[str]) -> bool:
    """`run` with plain options only (commands/runargs.py), none of them from the environment."""
    if args[:1] != ["run"] or any(os.environ.get(name) for name in _env_options()):
        return False
    from cursorpilot.startup.fastpath import parse

    return parse(args[1:]) is not None


def run_here(args: list[str]) -> int:
    """A plain run, in this process: its exit code."""
    from cursorpilot.commands.runargs import RunArgs
    from cursorpilot.startup.fastpath import parse

    parsed = parse(args[1:])
    assert parsed is not None
    values, given = parsed
    return _run(RunArgs.from_values(values), frozenset(given))


def _env_options() -> tuple[str, ...]:
    from cursorpilot.startup.fastpath import ENV_OPTIONS

    return ENV_OPTIONS


def _run(args: RunArgs, given: frozenset[str]) -> int:
    """The run, its program started before the rest of the run is imported (when nothing cheap to check refuses it)."""
    run = run_id()
    try:
        if _startable(args):
            _prestart(args, run)
        from cursorpilot.commands.exits import as_exit_code
        from cursorpilot.commands.run import run as run_body
    except KeyboardInterrupt:  # Ctrl-C before the run counts its own: it ends as it would a moment later, its program too
        from cursorpilot.channels.pty.driver import discard_prestarted

        discard_prestarted()
        return 130

    argv = ["cursor-pilot", *sys.argv[1:]]
    try:
        as_exit_code(args.debug, lambda: run_body(args, given, argv=argv, run_id=run))
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 1
    except KeyboardInterrupt:  # before as_exit_code's own catch is in place (it imports the console first)
        return 130
    return 0


def _exit_now(code: int) -> None:
    """The run is over: its exit handlers run, its streams are flushed, and the process ends without the interpreter's
    teardown of its 600 modules (0.2 s after the run had ended, for nothing of the run's: its records are written line
    by line and closed, its diagnostics handlers closed by the exit handlers)."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def run_id() -> str:
    """A run's id: when it started (UTC) and six random hex digits (runner/run.py's default_run_id says the same)."""
    import secrets
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def _startable(o: RunArgs) -> bool:
    """Whether nothing cheap to check would refuse this run: then its program may start before the rest is checked."""
    from cursorpilot.commands.run import load_governing_prompt
    from cursorpilot.durations import parse_duration
    from cursorpilot.errors import BadInput
    from cursorpilot.records.secret import given as given_secrets

    try:
        load_governing_prompt(o.prompt)
        for duration in (o.timeout, o.llm_timeout):
            if duration is not None:
                parse_duration(duration)
        secrets = given_secrets(list(o.secret or []), os.environ)
    except BadInput:
        return False
    if o.rules is not None and not o.rules.is_file():
        return False
    if not _secrets_given(o, secrets):
        return False
    if o.cwd is not None and not o.cwd.is_dir():
        return False
    log = o.log
    if log is not None and ((log / "manifest.json").exists() or (log / "transcript.jsonl").exists()):
        return False
    return _answers_read(o.answer or ()) and _profile_known(o.profile) and _answerer_ready(o.provider, o.base_url)


def _secrets_given(o: RunArgs, secrets: dict[str, str]) -> bool:
    """Every <secret:NAME> the rules' text names was given: a rule that would type one that was not is refused before
    its program starts (preflight.check_secrets_given says which), not after the program worked up to its question."""
    from cursorpilot.records.secret import names

    try:
        written = o.rules.read_text(encoding="utf-8", errors="replace").splitlines() if o.rules else []
    except OSError:
        return False
    text = "\n".join([*(o.answer or ()), *(line for line in written if not line.lstrip().startswith("#"))])
    return all(name in secrets for name in names(text))


def _answers_read(answers: tuple[str, ...]) -> bool:
    import re

    for value in answers:
        pattern = next((value[:i] for i, ch in enumerate(value)
                        if ch == "=" and not value[:i].endswith(("\\", "(?", "(?<", "(?<!", "(?!"))), None)
        try:
            if pattern is None:
                return False
            re.compile(pattern)
        except re.error:
            return False
    return True


def _profile_known(profile: str) -> bool:
    from cursorpilot import resources

    return profile == "auto" or resources.find("detectors", profile) is not None or os.path.isfile(profile)


def _answerer_ready(provider: str | None, base_url: str | None) -> bool:
    """The answerer the run will have can be made: openai and anthropic have their keys (or a server of one's own)."""
    from cursorpilot.providers import ALIASES, REGISTRY
    from cursorpilot.providers.local import is_local

    env = os.environ
    name = ALIASES.get(provider or "", provider or "") or ("openai" if env.get("OPENAI_API_KEY") else
                                                           "anthropic" if env.get("ANTHROPIC_API_KEY") else "rules")
    if name not in REGISTRY:
        return False
    if name == "openai":
        return bool(env.get("OPENAI_API_KEY")) or is_local(base_url or env.get("OPENAI_BASE_URL") or None)
    return name != "anthropic" or bool(env.get("ANTHROPIC_API_KEY"))


def _prestart(o: RunArgs, run: str) -> None:
    """The program, as the run's first step will start it: the same command, folder, environment and terminal."""
    from cursorpilot import resources
    from cursorpilot.envsnap import remember_head
    from cursorpilot.channels.program_env import program_env
    from cursorpilot.channels.pty.driver import prestart

    cwd = str(o.cwd) if o.cwd is not None else None
    remember_head(cwd)  # before the program can move it (the report says so)
    command = resources.self_command(list(o.command or ()))
    env, _ = program_env({}, f"{run}-1", o.keep_ci_env)
    prestart(command, cwd=cwd, env=env, cols=o.cols, rows=o.rows)
