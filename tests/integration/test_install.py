"""The product as installed: bundled files found through the package, no undeclared imports, plans by name.

The full user's install (a built wheel in a fresh venv, used from outside the checkout) is `.ci/wheel-lane`;
these tests pin the pieces that make it work, in the developer's install.
"""

import fnmatch
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cursorpilot import resources

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", resources.KINDS)
def test_bundled_files_are_the_top_level_source(kind):
    """cursorpilot/<kind> is the top-level folder (one copy), and the package sees every file in it."""
    source = sorted(p.name for p in (ROOT / kind).iterdir() if p.is_file())
    assert (ROOT / "cursorpilot" / kind).resolve() == (ROOT / kind).resolve()
    assert [p.name for p in resources.listing(kind, tuple({Path(n).suffix for n in source}))] == source


def test_package_data_globs_cover_every_bundled_file():
    """A file the build's globs miss is missing from the wheel, and only from the wheel."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["cursorpilot"]
    shipped = [f"{kind}/{p.name}" for kind in resources.KINDS for p in (ROOT / kind).iterdir() if p.is_file()]
    shipped += [f"sim/scenarios/{p.name}" for p in (ROOT / "cursorpilot/sim/scenarios").iterdir()]
    shipped += [f"demo/{p.name}" for p in (ROOT / "cursorpilot/demo").iterdir() if p.is_file() and p.suffix != ".py"]
    assert [f for f in shipped if not any(fnmatch.fnmatch(f, g) for g in globs)] == []


def cli(*args, cwd, extra_code="pass"):
    code = f"import sys; {extra_code}; from cursorpilot.cli import main; sys.argv = ['cursor-pilot', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_run_needs_no_click_module(tmp_path):
    """Typer vendors its own click; `run` once imported click and died with ModuleNotFoundError without it."""
    (tmp_path / "r.yaml").write_text("- {match: 'Continue', reply: y}\n")
    p = cli("run", "--quiet", "--rules", "r.yaml", "--log", "log", "--", "bash", "-c", 'read -p "Continue? [y/n] " a; echo "got:$a"',
            cwd=tmp_path, extra_code="sys.modules['click'] = None")
    assert p.returncode == 0, p.stdout + p.stderr
    assert b"got:y" in (tmp_path / "log" / "session.raw").read_bytes()


def test_profiles_lists_each_bundled_profile_with_its_file(tmp_path):
    p = cli("profiles", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    for path in (ROOT / "detectors").glob("*.yaml"):
        assert f"{path.stem} " in p.stdout and f"detectors/{path.name}" in p.stdout


def test_bundled_plan_runs_by_name_from_any_folder(tmp_path):
    """`--plan line-tools` is the bundled example; its simulator step runs as `cursor-pilot sim`, not `python3 -m`."""
    p = cli("plans", cwd=tmp_path)
    assert "line-tools" in p.stdout and "cursor-sim" in p.stdout
    p = cli("run", "--quiet", "--plan", "line-tools", "--provider", "rules", "--log", "log", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    started = [line for line in (tmp_path / "log" / "transcript.jsonl").read_text().splitlines() if '"program_started"' in line]
    assert sys.executable in started[0] and '"sim"' in started[0]


def test_unknown_plan_name_is_one_line_and_exit_2(tmp_path):
    p = cli("run", "--plan", "no-such-plan", cwd=tmp_path)
    assert p.returncode == 2
    assert "plan not found: no-such-plan" in p.stderr + p.stdout and "line-tools" in p.stderr + p.stdout
    assert "Traceback" not in p.stderr


def test_self_command_runs_this_installation():
    assert resources.self_command(["cursor-pilot", "sim", "line", "x"]) == [sys.executable, "-m", "cursorpilot", "sim", "line", "x"]
    assert resources.self_command(["/usr/bin/cursor-pilot", "x"]) == ["/usr/bin/cursor-pilot", "x"]
