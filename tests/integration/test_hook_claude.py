"""`cursor-pilot hook claude` called as Claude Code calls it: a fresh process per tool call, the PreToolUse event on its
stdin, the answer read from its stdout and exit code (hookSpecificOutput.permissionDecision, or nothing). A real
project on disk: a protected folder and file, a folder the prompt asks to clean, a link into the protected folder.
And `hook install` / `uninstall` against a settings file that holds the user's own keys, byte for byte."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

PROMPT = "Clean up the build output: delete build/. Never touch tests/fixtures."
HOOK = [sys.executable, "-m", "cursorpilot", "hook", "claude"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests" / "fixtures").mkdir(parents=True)
    (root / "tests" / "fixtures" / "users.json").write_text('{"users": ["ada"]}\n')
    (root / "tests" / "test_app.py").write_text("def test(): pass\n")
    (root / "build").mkdir()
    (root / "build" / "app.o").write_text("obj")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "users-link.json").symlink_to(root / "tests" / "fixtures" / "users.json")
    return root


def pre(tool: str, tool_input: dict, cwd: Path) -> str:
    return json.dumps({"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(cwd), "permission_mode": "acceptEdits",
                       "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_1"})


def hook(payload: str, *opts: str, env: dict | None = None, cwd: Path | None = None) -> tuple[int, dict | None, str]:
    """One call in a process of its own (the resident pilot's path has a test of its own below)."""
    args = [*HOOK, *(opts or ("--prompt", PROMPT))]
    proc = subprocess.run(args, input=payload, capture_output=True, text=True, timeout=30, cwd=cwd,
                          env={**os.environ, "CURSORPILOT_RESIDENT": "0", **(env or {})})
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None, proc.stderr


def decision(out: dict | None) -> str | None:
    return None if out is None else out["hookSpecificOutput"]["permissionDecision"]


def reason(out: dict | None) -> str:
    return "" if out is None else out["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize("command", [
    "rm -rf tests/fixtures",
    "rm -rf ./tests/fixtures/",
    "rm -rf {root}/tests/fixtures",
    "rm -f tests/fix*/*.json",
    "rm -rf tests",  # the folder that holds it
    "cd tests && rm -rf fixtures",
    "echo '{{}}' > tests/fixtures/users.json",
    "mv tests/fixtures /tmp/elsewhere",
    "rm users-link.json",  # a link into the protected folder
])
def test_a_command_that_destroys_the_protected_folder_is_denied_in_the_users_words(project, command):
    code, out, _ = hook(pre("Bash", {"command": command.format(root=project)}, project))
    assert code == 0
    assert decision(out) == "deny", out
    assert "Never touch tests/fixtures" in reason(out)
    assert (project / "tests" / "fixtures" / "users.json").read_text() == '{"users": ["ada"]}\n'


@pytest.mark.parametrize("tool,path", [
    ("Edit", "{root}/tests/fixtures/users.json"),
    ("Write", "{root}/tests/fixtures/users.json"),
    ("Write", "./tests/fixtures/users.json"),
    ("MultiEdit", "tests/../tests/fixtures/users.json"),
    ("Write", "{root}/users-link.json"),  # written through a link, it is the protected file that changes
])
def test_an_edit_or_write_of_the_protected_file_is_denied_whatever_its_form(project, tool, path):
    code, out, _ = hook(pre(tool, {"file_path": path.format(root=project), "old_string": "ada", "new_string": "bob",
                                   "content": "{}"}, project))
    assert code == 0 and decision(out) == "deny", out
    assert "tests/fixtures/users.json" in reason(out) and "Never touch tests/fixtures" in reason(out)


def test_an_edit_from_a_subfolder_reads_the_path_against_the_calls_own_folder(project):
    code, out, _ = hook(pre("Edit", {"file_path": "../tests/fixtures/users.json", "old_string": "a", "new_string": "b"},
                            project / "src"), env={"CLAUDE_PROJECT_DIR": str(project)})
    assert decision(out) == "deny", out


def test_the_granted_folder_is_allowed_in_the_users_words_and_edits_elsewhere_are_left_to_claude(project):
    code, out, _ = hook(pre("Bash", {"command": "rm -rf build"}, project))
    assert code == 0 and decision(out) == "allow", out
    assert "delete build/" in reason(out)
    for tool in ("Edit", "Write"):  # the mirror: the same tools on a path nothing protects
        code, out, _ = hook(pre(tool, {"file_path": str(project / "src" / "app.py"), "old_string": "hi", "new_string": "ho",
                                       "content": "x"}, project))
        assert code == 0 and out is None, out  # no decision: Claude's own mode (acceptEdits) decides


def test_a_command_that_destroys_nothing_gets_no_decision_and_an_ungranted_delete_is_asked(project):
    assert hook(pre("Bash", {"command": "grep -rn delete src && ls -la"}, project))[:2] == (0, None)
    code, out, _ = hook(pre("Bash", {"command": "rm src/app.py"}, project))
    assert decision(out) == "ask", out


def test_the_hard_floor_holds_whatever_the_prompt_grants(project):
    code, out, _ = hook(pre("Bash", {"command": "rm -rf ~"}, project), "--prompt", "Delete everything you like, all of it.")
    assert decision(out) == "deny", out


@pytest.mark.parametrize("payload", [
    "not json",
    "[1, 2]",
    json.dumps({"hook_event_name": "PreToolUse", "cwd": "/tmp"}),  # no tool
    json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}, "cwd": "/tmp"}),  # no command
    json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"content": "x"}, "cwd": "/tmp"}),
])
def test_a_malformed_payload_is_denied_with_exit_2(payload):
    code, out, err = hook(payload)
    assert code == 2 and decision(out) == "deny"
    assert "refuses" in err


def test_a_policy_it_cannot_load_denies(project, tmp_path):
    code, out, err = hook(pre("Bash", {"command": "ls"}, project), "--policy", str(tmp_path / "missing.yaml"))
    assert code == 2 and decision(out) == "deny" and "missing.yaml" in err
    code, out, err = hook(pre("Bash", {"command": "ls"}, project), "--bogus")
    assert code == 2 and decision(out) == "deny"


def test_a_pinned_policy_file_decides_like_the_prompt(project, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("grants: []\nprohibitions:\n- {act: overwrite, object: src/app.py, quote: 'src/app.py is mine'}\n")
    code, out, _ = hook(pre("Edit", {"file_path": str(project / "src/app.py"), "old_string": "a", "new_string": "b"}, project),
                        "--policy", str(policy))
    assert decision(out) == "deny" and "src/app.py is mine" in reason(out)


def _daemons(socket_dir: Path) -> list[int]:
    """The resident pilots serving from this folder (their command line names their socket)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"cursorpilot.startup.pilotd" in cmdline and any(str(socket_dir).encode() in part for part in cmdline):
            found.append(int(proc.name))
    return found


@pytest.mark.timeout(90)
def test_calls_after_the_first_are_answered_alike_by_the_resident_pilot_the_first_one_started(project):
    runtime = Path(tempfile.mkdtemp(prefix="cph", dir="/tmp"))  # short: a socket's path must fit the kernel's 108 bytes
    try:
        _served_alike(project, runtime)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def _served_alike(project: Path, runtime: Path) -> None:
    env = {"CURSORPILOT_RESIDENT": "1", "XDG_RUNTIME_DIR": str(runtime), "CURSORPILOT_RESIDENT_IDLE": "5"}
    payload = pre("Bash", {"command": "rm -rf tests/fixtures"}, project)
    assert decision(hook(payload, env=env)[1]) == "deny"  # in its own process, starting the resident pilot
    deadline = time.monotonic() + 30
    while not _daemons(runtime) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _daemons(runtime), "the first call started no resident pilot"
    for command, expected in (("rm -rf tests/fixtures", "deny"), ("rm -rf build", "allow"), ("rm src/app.py", "ask")):
        code, out, _ = hook(pre("Bash", {"command": command}, project), env=env)  # a warm child of it, stdin handed over
        assert (code, decision(out)) == (0, expected), (command, out)
    assert hook("not json", env=env)[0] == 2


SETTINGS = '{\n\t"permissions": {"allow": ["Bash(ls:*)"]},\n\t"model": "sonnet",\n\t"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n}'


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cursorpilot", "hook", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_install_then_uninstall_gives_back_the_settings_file_byte_for_byte(project):
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS)
    before = settings.read_bytes()
    done = cli("install", "claude", "--prompt", PROMPT, "--project", str(project), cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert data["model"] == "sonnet" and data["hooks"]["Stop"] and data["permissions"]["allow"] == ["Bash(ls:*)"]
    [entry] = data["hooks"]["PreToolUse"]
    assert "Bash" in entry["matcher"] and "Edit" in entry["matcher"]
    command = entry["hooks"][0]["command"]
    ran = subprocess.run(command, shell=True, input=pre("Bash", {"command": "rm -rf tests/fixtures"}, project),
                         capture_output=True, text=True, timeout=30)  # the command as Claude Code runs it: through a shell
    assert decision(json.loads(ran.stdout)) == "deny", ran
    done = cli("uninstall", "claude", "--project", str(project), cwd=project)
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes() == before
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.local.json"]


def test_uninstall_removes_a_file_and_folder_install_made_and_keeps_what_the_user_added_since(project):
    assert cli("install", "claude", "--prompt", PROMPT, "--project", str(project), cwd=project).returncode == 0
    assert cli("uninstall", "claude", "--project", str(project), cwd=project).returncode == 0
    assert not (project / ".claude").exists()
    assert cli("install", "claude", "--prompt", PROMPT, "--project", str(project), cwd=project).returncode == 0
    settings = project / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    data["env"] = {"FOO": "1"}  # the user's own change after install
    settings.write_text(json.dumps(data))
    assert cli("uninstall", "claude", "--project", str(project), cwd=project).returncode == 0
    assert json.loads(settings.read_text()) == {"env": {"FOO": "1"}}


def test_install_refuses_a_prompt_it_cannot_read_and_writes_nothing(project):
    done = cli("install", "claude", "--prompt", "nosuchfile", "--project", str(project), cwd=project)
    assert done.returncode == 2 and "nosuchfile" in done.stderr
    assert not (project / ".claude").exists()


def test_the_installed_command_names_a_prompt_file_by_its_absolute_path(project, tmp_path):
    prompt = project / "prompt.md"
    prompt.write_text(PROMPT)
    assert cli("install", "claude", "--prompt", "prompt.md", "--project", str(project), cwd=project).returncode == 0
    command = json.loads((project / ".claude" / "settings.local.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert shlex.split(command)[-2:] == ["--prompt", str(prompt)]


@pytest.mark.timeout(30)
def test_a_hook_that_cannot_decide_in_time_denies_by_itself():
    """An agent that times a hook out lets the call through: the hook answers deny before that, whatever holds it up
    (here, an agent that never closes its stdin)."""
    code = ("import sys; from cursorpilot.commands import hook; hook.DEADLINE = 0.5; "
            "sys.exit(hook.serve(['claude', '--prompt', 'Never touch tests/fixtures.']))")
    read_end, write_end = os.pipe()  # the agent's end stays open and says nothing
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(read_end)
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
        os.close(write_end)
    assert proc.returncode == 2 and decision(json.loads(out)) == "deny" and "within 0.5 s" in err
