"""What a step's program is started with: CI markers hidden unless kept or set by the step; the reaper's mark."""

from cursorpilot.channels.program_env import last_words, program_env
from cursorpilot.channels.reaper import MARK

BASE = {"PATH": "/bin", "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "42", "CURSORPILOT_MARK": "outer"}


def test_ci_flags_are_hidden_and_data_kept():
    env, hidden = program_env({}, "t1", keep_ci=False, base=BASE)
    assert hidden == ["CI", "GITHUB_ACTIONS"]
    assert "CI" not in env and "GITHUB_ACTIONS" not in env
    assert env["GITHUB_RUN_ID"] == "42" and env["PATH"] == "/bin" and env[MARK] == "outer:t1"


def test_the_steps_own_env_wins_and_keep_passes_everything():
    env, hidden = program_env({"CI": "1"}, "t1", keep_ci=False, base=BASE)
    assert env["CI"] == "1" and hidden == ["GITHUB_ACTIONS"]
    env, hidden = program_env({}, "t1", keep_ci=True, base=BASE)
    assert hidden == [] and env["CI"] == "true" and env["GITHUB_ACTIONS"] == "true"


def test_last_words_are_the_last_paragraph_with_wrapped_rows_joined():
    rows = ["old output", "", "Error: the folder is not trus", "ted. Use --skip-trust.", "", ""]
    assert last_words(rows, width=29) == "Error: the folder is not trusted. Use --skip-trust."
    assert last_words(rows) == "Error: the folder is not trus ted. Use --skip-trust."  # no width: rows are lines
    assert last_words(["", "  "]) is None
    long = last_words(["x" * 500])
    assert long is not None and len(long) == 200 and long.endswith("…")
