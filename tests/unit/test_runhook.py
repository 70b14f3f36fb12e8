"""Where a run puts cursor-pilot's hook for a step (channels/agent/runhook.py, through nativedeny.Guard), with real files:
Claude's in the run's own settings file, Gemini's in a private Gemini home (the user's linked, settings copied), Cursor's in the project's hooks file with its bytes put back; the hook reads the run's pinned
policy and records to the run's folder; no policy (--no-native-deny) writes no hook."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from cursorpilot.channels.agent import runhook
from cursorpilot.channels.agent.nativedeny import Guard
from cursorpilot.decide.compiled import lexical
from cursorpilot.decide.policyfile import load

PROMPT = "Clean up the build output: delete build/. Never touch tests/fixtures."


def the_command(settings: dict, event: str) -> list[str]:
    (entry,) = settings["hooks"][event]
    return shlex.split(entry["hooks"][0]["command"] if "hooks" in entry else entry["command"])


def test_claudes_hook_goes_into_the_runs_own_settings_beside_its_deny_list_with_the_pinned_policy(tmp_path):
    guard = Guard("claude", tmp_path / "native-deny", frozenset(), str(tmp_path))
    written = guard.write(lexical(PROMPT), PROMPT)
    assert written is not None and written.hook is not None and written.hook.where == written.file
    settings = json.loads((tmp_path / "native-deny.claude-settings.json").read_text())
    assert "Bash(rm:*)" in settings["permissions"]["deny"]
    words = the_command(settings, "PreToolUse")
    assert words[words.index("hook") + 1] == "claude"
    policy = load(tmp_path / words[words.index("--policy") + 1])
    assert [p.quote for p in policy.prohibitions] == [p.quote for p in lexical(PROMPT).prohibitions]
    assert words[words.index("--record") + 1] == str(tmp_path / "native-deny.hook-decisions.jsonl")
    (tmp_path / "native-deny.hook-decisions.jsonl").write_text('{"decision": "deny", "tool": "Edit"}\n{"decision": "al')
    assert guard.decisions() == [{"decision": "deny", "tool": "Edit"}] and guard.decisions() == []  # a line half written waits
    with open(tmp_path / "native-deny.hook-decisions.jsonl", "a") as fh:
        fh.write('low"}\n')
    assert guard.decisions() == [{"decision": "allow"}]


def test_no_policy_no_hook_the_deny_list_alone(tmp_path):
    guard = Guard("claude", tmp_path / "native-deny", frozenset(), str(tmp_path))
    written = guard.write()
    assert written is not None and written.hook is None
    assert "hooks" not in json.loads((tmp_path / "native-deny.claude-settings.json").read_text())
    assert not (tmp_path / "native-deny.hook-policy.yaml").exists() and guard.decisions() == []


def test_geminis_hook_goes_into_a_private_gemini_home_linked_to_the_users_with_a_copy_of_its_settings(tmp_path, monkeypatch):
    real = tmp_path / "home" / ".gemini"
    real.mkdir(parents=True)
    mine = json.dumps({"general": {"vimMode": True}, "hooks": {"BeforeTool": [{"matcher": "x", "hooks": []}]}})
    (real / "settings.json").write_text(mine)
    (real / "oauth_creds.json").write_text("{}")
    monkeypatch.setenv(runhook.GEMINI_HOME, str(tmp_path / "home"))
    guard = Guard("gemini", tmp_path / "native-deny", frozenset(), str(tmp_path))
    written = guard.write(lexical(PROMPT), PROMPT)
    assert written is not None and written.hook is not None and written.hook.where is not None
    home = guard.env()[runhook.GEMINI_HOME]
    assert written.hook.where == f"{home}/.gemini/settings.json" and "--policy" in guard.args()
    assert (Path(home) / ".gemini" / "oauth_creds.json").resolve() == real / "oauth_creds.json"  # linked, not copied
    settings = json.loads(Path(written.hook.where).read_text())
    assert settings["general"] == {"vimMode": True} and settings["hooks"]["BeforeTool"][0]["matcher"] == "x"  # the user's kept
    words = the_command({"hooks": {"BeforeTool": settings["hooks"]["BeforeTool"][1:]}}, "BeforeTool")
    assert words[words.index("hook") + 1:words.index("hook") + 3] == ["gemini", "--policy"] and "--record" in words
    guard.remove()
    assert not Path(home).exists() and (real / "settings.json").read_text() == mine and (real / "oauth_creds.json").exists()


def test_cursors_hook_goes_into_the_projects_file_for_the_step_and_its_bytes_come_back(tmp_path):
    project = tmp_path / "work"
    (project / ".cursor").mkdir(parents=True)
    mine = '{"version": 1, "hooks": {"afterFileEdit": [{"command": "fmt"}]}}'  # not as install would write it
    (project / ".cursor" / "hooks.json").write_text(mine)
    guard = Guard("cursor", tmp_path / "native-deny", frozenset(), str(project))
    written = guard.write(lexical(PROMPT), PROMPT)
    assert written is not None and written.hook is not None and written.hook.where == str(project / ".cursor" / "hooks.json")
    during = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert during["hooks"]["afterFileEdit"] == [{"command": "fmt"}] and set(during["hooks"]) >= {"beforeShellExecution", "preToolUse"}
    guard.remove()
    assert (project / ".cursor" / "hooks.json").read_text() == mine and sorted(p.name for p in (project / ".cursor").iterdir()) == ["hooks.json"]


def test_a_project_the_user_guards_with_hook_install_is_left_as_it_is(tmp_path):
    project = tmp_path / "work"
    project.mkdir()
    from cursorpilot.hooks import install

    install.install("cursor", project, "cursor-pilot hook cursor --prompt P")
    before = (project / ".cursor" / "hooks.json").read_text()
    guard = Guard("cursor", tmp_path / "native-deny", frozenset(), str(project))
    written = guard.write(lexical(PROMPT), PROMPT)
    assert written is not None and written.hook is not None and written.hook.where is None and "already guards" in written.hook.why
    guard.remove()
    assert (project / ".cursor" / "hooks.json").read_text() == before


def test_a_hook_a_killed_run_left_in_the_project_is_taken_out_by_the_next_step_and_the_users_bytes_come_back(tmp_path):
    project = tmp_path / "work"
    (project / ".cursor").mkdir(parents=True)
    mine = '{"version": 1, "hooks": {}}'
    (project / ".cursor" / "hooks.json").write_text(mine)
    killed = Guard("cursor", tmp_path / "first", frozenset(), str(project))
    killed.write(lexical(PROMPT), PROMPT)  # ... and never removed
    guard = Guard("cursor", tmp_path / "second", frozenset(), str(project))
    written = guard.write(lexical(PROMPT), PROMPT)
    assert written is not None and written.hook is not None and written.hook.where is not None
    assert "second.hook-policy.yaml" in (project / ".cursor" / "hooks.json").read_text()
    assert "first.hook-policy.yaml" not in (project / ".cursor" / "hooks.json").read_text()
    guard.remove()
    assert (project / ".cursor" / "hooks.json").read_text() == mine
