"""The program a run drives starts first (cursorpilot/startup/start.py): `run`'s options read without typer say what typer would
say, nothing but what the start needs is imported before the program is, and the program started early is the run's
own, or, when the run is refused, killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.main import get_command

from cursorpilot.cli import app
from cursorpilot.commands import runargs
from cursorpilot.startup import fastpath

ROOT = Path(__file__).resolve().parents[2]


def _run_command():
    return get_command(app).commands["run"]  # type: ignore[attr-defined]


def test_typers_options_are_runargs_field_by_field():
    """RunArgs is the one declaration of `run`'s options: typer's option table is built from it, name, flag, default,
    range and environment variable; nothing else declares an option (a field added there is an option here)."""
    seen = set()
    for param in _run_command().params:
        if param.name in ("command", "version"):
            continue
        seen.add(param.name)
        spec = runargs.FIELDS[param.name]
        assert "--" + param.name.replace("_", "-") in param.opts, param.opts  # the spelling fastpath.parse reads
        assert bool(getattr(param, "is_flag", False)) == (spec.kind == "flag"), param.name
        assert (spec.kind == "list") == bool(param.multiple), param.name
        assert param.default == spec.default, param.name
        bounds = param if hasattr(param, "min") else getattr(param, "type", None)  # typer 0.29 / click's IntRange
        assert (getattr(bounds, "min", None), getattr(bounds, "max", None)) == (spec.min, spec.max), param.name
        assert param.envvar == spec.envvar, param.name
        assert param.envvar is None or param.envvar in fastpath.ENV_OPTIONS, param.name
    assert seen | {"command"} == set(runargs.FIELDS)


def test_the_quick_parser_and_the_resumable_options_are_read_off_runargs():
    """The tables startup/start.py reads a plain run with, and the options a resumed run keeps, are RunArgs' own."""
    assert fastpath.QUICK == {name for name, spec in runargs.FIELDS.items() if spec.quick}
    assert set(runargs.RESUMABLE) == set(runargs.FIELDS) - {"learn", "notify", "listen", "log", "quiet", "report", "debug", "dry_run",
                                                             "resume", "force"}
    parsed = fastpath.parse(["--cols", "30", "--answer", "a=b", "--", "x"])
    assert parsed is not None
    args = runargs.RunArgs.from_values(parsed[0])
    assert args == runargs.RunArgs(cols=30, answer=("a=b",), command=("x",))
    assert args.replace(cols=31).cols == 31 and args.cols == 30  # frozen: a change is a new RunArgs
    with pytest.raises(AttributeError):
        args.cols = 31  # type: ignore[misc]
    with pytest.raises(TypeError):
        runargs.RunArgs(colls=30)  # type: ignore[call-arg]


def test_the_demo_is_a_run_typer_would_read_from_its_command_line(tmp_path):
    """The demo's RunArgs differ from `run`'s defaults only in what the demo says, and typer reads its command line to
    the same RunArgs: the demo can't drift from `run`'s options."""
    from cursorpilot.commands.run import demo_args

    demo = demo_args(tmp_path / "pkg", tmp_path / "log")
    differs = {k: v for k, v in demo.values().items() if v != runargs.FIELDS[k].default}
    assert set(differs) == {"command", "prompt", "log", "provider", "llm_retries", "no_upload", "rules", "profile", "max_steps", "timeout"}
    line: list[str] = []
    for name, value in differs.items():
        if name != "command":
            line += ["--" + name.replace("_", "-")] + ([] if value is True else [str(value)])
    ctx = _run_command().make_context("run", [*line, "--", *demo.command])
    read = {k: v for k, v in ctx.params.items() if k != "version"}
    assert runargs.RunArgs.from_values(read) == demo


def _typer_params(args: list[str]) -> dict:
    ctx = _run_command().make_context("run", list(args))
    return {k: _plain(v) for k, v in ctx.params.items() if k != "version"}


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value] or None
    return str(value) if isinstance(value, Path) else value


@pytest.mark.parametrize("args", [
    ["--", "rm", "-ri", "x"],
    ["rm", "-ri", "x"],
    ["--quiet", "--answer", "Continue\\?=y", "--answer", "a=b", "--log", "/tmp/l", "bash", "-c", "read x"],
    ["--cols=30", "--rows", "10", "--timeout", "90s", "--provider", "openai", "--model", "m", "--base-url", "http://h/v1", "--", "x"],
    ["--prompt", "be careful out there", "--cwd", "/tmp", "--keep-ci-env", "--no-upload", "--max-steps", "3", "--", "prog", "--quiet"],
    ["--secret", "db=DB_PASS", "--rules", "r.yaml", "--profile", "generic", "--context-tokens", "200", "--llm-retries", "0", "x"],
    ["--prompt", "--", "ls"],  # an option takes the next word as its value, even `--`
])
def test_a_command_line_reads_as_typer_reads_it(args):
    parsed = fastpath.parse(args)
    assert parsed is not None
    values, given = parsed
    assert {k: _plain(v) for k, v in values.items() if k != "version"} == _typer_params(args)
    assert "command" in given


@pytest.mark.parametrize("args", [
    ["--help"], ["-h", "x"], ["--plan", "p.yaml"], ["--timout", "5", "x"], ["--cols", "5", "x"], ["--cols", "wide", "x"],
    ["--quiet"], ["--acp", "--agent", "gemini", "--task", "t"], ["--resume", "r"], ["--quiet=yes", "x"], ["--log"],
    ["--learn", "f.yaml", "x"], ["--notify", "json://h", "x"], ["--dry-run", "x"], ["--version"],
])
def test_anything_else_is_left_to_typer(args):
    """Help, plans, agents, typos, values out of range: typer reads them (and says what is wrong), as before."""
    assert fastpath.parse(args) is None


PROBE = textwrap.dedent("""
    import json, os, sys
    from cursorpilot.channels.pty import driver
    spawn, seen = driver._spawn, {}
    def watched(*a, **k):
        seen.setdefault("modules", sorted(sys.modules))
        child = spawn(*a, **k)
        seen.setdefault("pid", child.pid)
        with open(os.environ["PROBE_OUT"], "w") as f:
            json.dump(seen, f)
        return child
    driver._spawn = watched
    sys.argv = ["cursor-pilot", *sys.argv[1:]]
    from cursorpilot.startup.start import main
    main()
""")


def _probe(tmp_path: Path, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "probe.json"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    proc = subprocess.run([sys.executable, "-c", PROBE, "run", "--quiet", "--log", str(tmp_path / "log"), *args],
                          check=False, capture_output=True, text=True, timeout=60, cwd=tmp_path, stdin=subprocess.DEVNULL,
                          env={**base, "PROBE_OUT": str(out), "XDG_STATE_HOME": str(tmp_path / "state"),
                               "CURSORPILOT_RESIDENT": "0", **(env or {})})  # run here: the probe watches this process
    return proc, json.loads(out.read_text())


HEAVY = ("typer", "click", "rich", "structlog", "pydantic", "pyte", "yaml", "openai", "anthropic", "httpx", "jinja2", "asyncio")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("answerer", [["--answer", "Go\\?=y"], ["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1"]],
                         ids=["rules", "model"])
def test_nothing_heavy_is_imported_before_the_program_starts(tmp_path, answerer):
    """Neither typer, the console, the models, the screen nor a provider's SDK is on the way to the program's start;
    and the program started then is the one the run drives (its pid is the transcript's)."""
    proc, seen = _probe(tmp_path, *answerer, "--", "sh", "-c", "exit 0", env={"OPENAI_API_KEY": "sk-test-0123456789"})
    assert proc.returncode == 0, proc.stderr
    loaded = {m.split(".")[0] for m in seen["modules"]}
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    started = [json.loads(line) for line in (tmp_path / "log" / "transcript.jsonl").read_text().splitlines()]
    assert [r["pid"] for r in started if r["type"] == "program_started"] == [seen["pid"]]


@pytest.mark.timeout(60)
def test_a_run_refused_after_its_program_started_leaves_it_not_running(tmp_path):
    """A rules file that does not parse is found after the program was started early: the run is refused as ever (one
    line, exit 2, no traceback), and the program is killed, nothing typed into it."""
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {match: '(', reply: y}\n")
    pidfile = tmp_path / "pid"
    proc, seen = _probe(tmp_path, "--rules", str(rules), "--", "sh", "-c", f"echo $$ > {pidfile}; exec sleep 30")
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "pid" in seen  # it was started early (or this test proves nothing)
    assert not Path(f"/proc/{seen['pid']}").exists()


def test_version_is_answered_without_typer():
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "cursorpilot", "--version"], check=False, capture_output=True, text=True,
                         timeout=30)
    assert out.stdout.startswith("cursor-pilot ")
    assert "typer" not in out.stderr


def test_typer_exit_passes_through_the_guard():
    from cursorpilot.commands.exits import as_exit_code

    def body() -> int:
        raise typer.Exit(5)

    with pytest.raises(typer.Exit):
        as_exit_code(False, body)
