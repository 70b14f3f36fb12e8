"""The command line as a new user meets it: typos, help, run folders, the list of past runs. Real processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ASK = 'read -p "Continue? [y/n] " a; echo "got:$a"'


def cp(*args: str, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`cursor-pilot ARGS` as a process, stdin closed (nobody at the terminal), no API keys."""
    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    p = subprocess.run([sys.executable, "-m", "cursorpilot", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, env={**base, **(env or {})})
    # the words a person reads: rich colours its help and errors where it knows the log shows colour (GitHub Actions)
    p.stdout, p.stderr = ANSI.sub("", p.stdout), ANSI.sub("", p.stderr)
    return p


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.fixture
def ok_rules(tmp_path) -> Path:
    path = tmp_path / "ok.yaml"
    path.write_text("- {id: go, match: 'Continue', reply: y}\n")
    return path


# -- item 3: options ---------------------------------------------------------------------------------------------------
def test_mistyped_option_before_the_command_is_refused_not_started_as_the_program(tmp_path, ok_rules):
    """`--timout 5s -- sleep 3` said `cannot start '--timout'`: the typo became the program."""
    p = cp("run", "--rules", str(ok_rules), "--timout", "5s", "--", "sleep", "3", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "No such option: --timout" in p.stderr and "--timeout" in p.stderr
    assert "cannot start" not in p.stdout + p.stderr
    assert not (tmp_path / "runs").exists()


def test_bare_command_after_options_takes_everything_after_it(tmp_path, ok_rules):
    """Without `--`, the first word that is not an option is the program; what follows is its own, options included."""
    p = cp("run", "--quiet", "--rules", str(ok_rules), "--log", "log", "--timeout", "30s",
           "bash", "-c", f'echo "args:$*"; {ASK}', "sh", "--timeout", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    raw = (tmp_path / "log" / "session.raw").read_bytes()
    assert b"args:--timeout --quiet" in raw and b"got:y" in raw


def test_a_log_keeps_each_line_whole_so_grep_finds_the_exit_code(tmp_path):
    """Not on a terminal, lines were hard-wrapped at 140 columns mid-phrase (`… (exit` / `3)`): `grep 'exit 3'` on a CI
    log missed the run's own last word."""
    p = cp("run", "--log", "log", "--", "bash", "-c", ASK, cwd=tmp_path)  # no answerer: the longest reason there is
    assert p.returncode == 3, p.stdout + p.stderr
    ending = [line for line in p.stdout.splitlines() if line.startswith("cursor-pilot: a human is needed")]
    assert len(ending) == 1 and len(ending[0]) > 140 and ending[0].endswith("Continue? [y/n] (exit 3)"), p.stdout
    assert any(line.startswith("needs a human: no answerer was chosen") and line.endswith("(or --provider)")
               for line in p.stdout.splitlines()), p.stdout


# -- item 9: run folders ------------------------------------------------------------------------------------------------
def test_reused_log_folder_is_refused_not_appended_to(tmp_path, ok_rules):
    """A second run into the same --log was appended to the first one's transcript."""
    args = ("run", "--quiet", "--rules", str(ok_rules), "--log", "log", "--", "bash", "-c", ASK)
    assert cp(*args, cwd=tmp_path).returncode == 0
    before = (tmp_path / "log" / "transcript.jsonl").read_text()
    p = cp(*args, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip() == ("cursor-pilot: error: --log log already holds a run: give another folder, "
                                "or continue that run with --resume log/manifest.json")
    assert (tmp_path / "log" / "transcript.jsonl").read_text() == before


# -- item 10: help that teaches -----------------------------------------------------------------------------------------
PANELS = {"Program", "Answers", "Limits", "Turn ends and the goal", "When a person is needed", "Output", "Plans and runs", "ACP"}


def test_every_option_has_help_and_run_options_sit_in_panels():
    """--cols/--rows/--quiet/--debug/--version had no help; thirty options were one list."""
    import typer.main

    from cursorpilot.cli import app

    root = typer.main.get_command(app)
    commands = [*root.commands.items(), *((f"runs {n}", c) for n, c in root.commands["runs"].commands.items())]
    for name, command in commands:
        for param in command.params:
            assert param.param_type_name != "option" or param.help, f"{name} {param.opts} has no help"
    panels = {p.name: getattr(p, "rich_help_panel", None) for p in root.commands["run"].params if p.param_type_name == "option"}
    assert len(panels) > 30 and {n for n, panel in panels.items() if panel not in PANELS} == set()


def test_run_help_shows_the_panels_and_the_prices_brackets(tmp_path):
    p = cp("run", "--help", cwd=tmp_path, env={"COLUMNS": "220"})
    assert p.returncode == 0
    assert all(f"─ {panel} ─" in p.stdout for panel in PANELS)
    assert "{model: [usd_per_1M_in, usd_per_1M_out, optional usd_per_1M_cached_in]}" in p.stdout  # rich markup took [..] for a style tag


def test_help_shows_a_flag_without_a_type_and_version_takes_no_value(tmp_path):
    """`--help` showed `--quiet <bool>`, `--version <bool>`, as if they took a value, and `--version true` was taken."""
    for args in (("run", "--help"), ("--help",), ("demo", "--help")):
        p = cp(*args, cwd=tmp_path, env={"COLUMNS": "220"})
        assert p.returncode == 0 and "<bool>" not in p.stdout and "--help" in p.stdout, p.stdout
    row = next(line for line in cp("run", "--help", cwd=tmp_path, env={"COLUMNS": "220"}).stdout.splitlines() if "--rules " in line)
    assert "<path>" in row  # the mirror: an option that takes a value still says what kind
    p = cp("--version", "true", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.startswith("cursor-pilot: error: --version takes no value") and not p.stdout
    assert cp("--version", cwd=tmp_path).stdout.startswith("cursor-pilot ")


@pytest.mark.parametrize("args, said", [
    (["run", "--rules", "ok.yaml", "--timout", "5s", "--", "sleep", "3"],
     "No such option: --timout (Possible options: --human-timeout, --llm-timeout, --timeout) (cursor-pilot run -h for help)"),
    (["run", "--cols", "5", "--", "true"],
     "Invalid value for '--cols': Input should be greater than or equal to 20 (cursor-pilot run -h for help)"),
    (["learn", "--timout", "3", "--", "true"],
     "No such option: --timout (Possible options: --human-timeout, --llm-timeout, --timeout) (cursor-pilot run -h for help)"),
    (["runs", "--bogus"], "No such option: --bogus (cursor-pilot runs -h for help)"),
    (["runs", "show"], "Missing argument 'run'. (cursor-pilot runs show -h for help)"),
    (["bogus"], "No such command 'bogus'. (cursor-pilot -h for help)"),
])
def test_a_mistake_in_the_command_line_is_one_error_line_not_a_boxed_panel(tmp_path, args, said):
    """An option typo printed a 4-line boxed panel (usage, hint, box) where every other error is one line."""
    p = cp(*args, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "" and p.stderr == f"cursor-pilot: error: {said}\n", p.stderr


@pytest.mark.parametrize("words, expected", [
    ("cursor-pilot run --provider ", ["anthropic", "local", "openai", "rules", "script", "mock"]),
    ("cursor-pilot run --profile c", ["claude", "codex", "cursor"]),
    ("cursor-pilot run --agent ", ["cursor", "gemini", "claude", "codex"]),
    ("cursor-pilot run --plan l", ["line-tools"]),
])
def test_shell_completion_offers_the_known_values(tmp_path, words, expected):
    cword = str(len(words.split()) - (0 if words.endswith(" ") else 1))
    p = cp(cwd=tmp_path, env={"_CURSOR_PILOT_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": cword})
    assert p.returncode == 0 and p.stdout.split() == expected, p.stdout + p.stderr


def test_sim_help_lists_each_scenario_with_what_it_is(tmp_path):
    from cursorpilot.sim.common import SCENARIOS

    p = cp("sim", "--help", cwd=tmp_path)
    assert p.returncode == 0
    rows = {line.split()[0]: line for line in p.stdout.splitlines() if line.startswith("  ") and len(line.split()) > 2}
    for path in SCENARIOS.glob("*.yaml"):
        assert path.stem in rows and len(rows[path.stem].split()) > 3, path.stem
    assert "The README demo" in rows["demo"]


def test_plans_describe_each_plan_as_profiles_do(tmp_path):
    p = cp("plans", cwd=tmp_path)
    first = {line.split()[0]: line for line in p.stdout.splitlines() if not line.startswith(" ")}
    assert set(first) == {"acp-sim", "cursor-sim", "line-tools"}
    assert "Drives the bundled Cursor simulator through several steps" in first["cursor-sim"]


def test_runs_lists_past_runs_and_shows_one(tmp_path, ok_rules):
    assert cp("run", "--quiet", "--rules", str(ok_rules), "--", "bash", "-c", ASK, cwd=tmp_path).returncode == 0
    assert cp("run", "--quiet", "--rules", str(ok_rules), "--", "bash", "-c", 'read -p "Name: " a', cwd=tmp_path).returncode == 3
    p = cp("runs", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = [line.split() for line in p.stdout.splitlines()[2:]]
    assert [(r[3], r[4], r[5]) for r in rows] == [("completed", "0", "1"), ("aborted", "3", "0")]
    first, second = rows[0][0], rows[1][0]
    home = Path(os.environ["XDG_STATE_HOME"]) / "cursor-pilot" / "runs"
    p = cp("runs", "show", second, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert f"run {second}" in p.stdout and "status: aborted, exit 3: a human is needed" in p.stdout
    assert f"continue: cursor-pilot run --resume {home / second / 'manifest.json'}" in p.stdout
    p = cp("runs", "show", first[:-2], cwd=tmp_path)
    assert "answers: 1 · escalations: 0 · rule hits: 1" in p.stdout and "continue:" not in p.stdout
    p = cp("runs", "show", "nope", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip() == "cursor-pilot: error: no run 'nope' in the known runs (cursor-pilot runs lists them)"
    assert cp("runs", "--dir", "elsewhere", cwd=tmp_path).stdout.startswith("no runs in elsewhere/")
    again = cp("run", "--quiet", "--resume", second, cwd=tmp_path / "..")  # by its id, from another directory
    assert again.returncode == 3, again.stdout + again.stderr
    assert '"type": "run_resumed"' in (home / second / "transcript.jsonl").read_text()


def test_runs_show_of_an_interrupted_run_says_it_once(tmp_path):
    """`runs show` printed `step 1 sleep [drive]: interrupted: interrupted`."""
    import signal
    import time

    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    proc = subprocess.Popen([sys.executable, "-m", "cursorpilot", "run", "--log", "log", "--", "sleep", "30"], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=base)
    transcript, deadline = tmp_path / "log" / "transcript.jsonl", time.monotonic() + 30
    while not (transcript.exists() and "program_started" in transcript.read_text()) and time.monotonic() < deadline:
        assert proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 130
    p = cp("runs", "show", "log", cwd=tmp_path)
    assert p.returncode == 0 and "  step 1 sleep [drive]: interrupted\n" in p.stdout and "interrupted: interrupted" not in p.stdout, p.stdout


def test_runs_are_kept_in_one_place_and_listed_from_anywhere(tmp_path, ok_rules):
    """`runs/` appeared in every working directory, and `runs --dir X` said "no runs" where `runs show X` worked. Runs
    go to $XDG_STATE_HOME/cursor-pilot/runs/ (CURSORPILOT_RUNS=runs: the working directory's), a --log run is indexed,
    and `cursor-pilot runs` lists them all from any directory."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir(), (tmp_path / "c").mkdir()
    assert cp("run", "--quiet", "--rules", str(ok_rules), "--", "bash", "-c", ASK, cwd=tmp_path / "a").returncode == 0
    assert cp("run", "--quiet", "--rules", str(ok_rules), "--log", str(tmp_path / "kept" / "mine"), "--", "bash", "-c", ASK,
              cwd=tmp_path / "b").returncode == 0
    assert cp("run", "--quiet", "--rules", str(ok_rules), "--", "bash", "-c", ASK, cwd=tmp_path / "c",
              env={"CURSORPILOT_RUNS": "runs"}).returncode == 0
    assert not (tmp_path / "a" / "runs").exists() and not (tmp_path / "b" / "runs").exists()
    assert len(list((tmp_path / "c" / "runs").iterdir())) == 1  # asked for: the working directory's runs/
    home = Path(os.environ["XDG_STATE_HOME"]) / "cursor-pilot"
    assert len(list((home / "runs").iterdir())) == 1
    for where in (tmp_path, tmp_path / "c"):  # every run is indexed: each is listed once, from anywhere
        p = cp("runs", cwd=where)
        rows = [line for line in p.stdout.splitlines()[2:] if line.strip()]
        assert len(rows) == 3, p.stdout
        assert any(line.rstrip().endswith("kept/mine") for line in rows), p.stdout
    mine = cp("runs", "--dir", str(tmp_path / "kept" / "mine"), cwd=tmp_path)  # a run's own folder lists that run
    assert len([line for line in mine.stdout.splitlines()[2:] if line.strip()]) == 1, mine.stdout
    assert "1 " in cp("runs", "--dir", str(tmp_path / "kept"), cwd=tmp_path).stdout  # a folder of run folders
    run_id = json.loads((tmp_path / "kept" / "mine" / "manifest.json").read_text())["run_id"]
    shown = cp("runs", "show", run_id, cwd=tmp_path / "a")
    assert shown.returncode == 0 and str(tmp_path / "kept" / "mine") in shown.stdout
    report = cp("report", run_id[:-1], cwd=tmp_path / "a")  # a run id is enough for the report too
    assert report.returncode == 0 and (tmp_path / "kept" / "mine" / "report.html").is_file(), report.stdout + report.stderr


# -- item 11: the docs --------------------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[2]


def test_every_run_option_is_documented_in_usage():
    import typer.main

    from cursorpilot.cli import app

    usage = (ROOT / "docs" / "usage.md").read_text()
    options = [o for p in typer.main.get_command(app).commands["run"].params if p.param_type_name == "option" for o in p.opts]
    assert [o for o in options if f"`{o}" not in usage and o not in ("-h", "--help")] == []


def test_links_between_the_readme_and_the_docs_lead_somewhere():
    import re

    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.name} links to {target}"
