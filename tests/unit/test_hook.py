"""The hook's parts in-process: each agent's protocol both ways (hooks/calls.py), what a command does (hooks/acts.py),
the verdict (hooks/verdict.py) on a real folder (hooks/paths.py), and a property over the forms a tool call can give a
protected path: relative, absolute, `./`, `a/../`, through a link, a glob, from a subfolder after a `cd`; it is never
allowed, whatever the tool. The mirror: the granted folder in the same forms is allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cursorpilot.commands.hook import judge
from cursorpilot.decide.compiled import lexical
from cursorpilot.hooks import calls
from cursorpilot.hooks.acts import EMPTIES, command

PROMPT = "Clean up the build output: delete build/. Never touch tests/fixtures."
POLICY = lexical(PROMPT)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("hookproj").resolve()
    root = base / "proj"
    (root / "tests" / "fixtures" / "deep").mkdir(parents=True)
    (root / "tests" / "fixtures" / "users.json").write_text("{}")
    (root / "tests" / "fixtures" / "deep" / "orders.csv").write_text("a,b")
    (root / "build" / "obj").mkdir(parents=True)
    (root / "build" / "obj" / "app.o").write_text("o")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x")
    (root / "fx").symlink_to(root / "tests" / "fixtures")
    (root / "out").symlink_to(root / "build")
    (base / "alias").symlink_to(root)  # the project reached through a link to it
    return root


def claude(tool: str, tool_input: dict, cwd: Path, root: Path | None = None) -> calls.Call:
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": str(cwd)})
    return calls.read("claude", payload, {"CLAUDE_PROJECT_DIR": str(root or cwd)})


def test_each_agents_event_is_read_into_one_call():
    gem = calls.read("gemini", json.dumps({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "cwd": "/p",
                                           "tool_input": {"command": "rm -rf x", "dir_path": "/p/sub"}}), {})
    assert (gem.kind, gem.command, gem.cwd) == (calls.SHELL, "rm -rf x", "/p/sub")
    gem_write = calls.read("gemini", json.dumps({"tool_name": "replace", "cwd": "/p", "tool_input": {"file_path": "a.txt"}}), {})
    assert (gem_write.kind, gem_write.paths) == (calls.WRITE, ("a.txt",))
    gem_mcp = calls.read("gemini", json.dumps({"tool_name": "mcp_db_query", "cwd": "/p", "tool_input": {"sql": "DROP TABLE u"}}), {})
    assert gem_mcp.kind == calls.MCP and "DROP TABLE u" in gem_mcp.text
    cur = calls.read("cursor", json.dumps({"hook_event_name": "beforeShellExecution", "command": "ls", "cwd": "/p",
                                           "workspace_roots": ["/p"]}), {})
    assert (cur.kind, cur.root) == (calls.SHELL, "/p")
    cur_mcp = calls.read("cursor", json.dumps({"hook_event_name": "beforeMCPExecution", "tool_name": "q", "workspace_roots": ["/p"],
                                               "tool_input": json.dumps({"sql": "TRUNCATE t"})}), {})
    assert cur_mcp.kind == calls.MCP and "TRUNCATE t" in cur_mcp.text
    cur_del = calls.read("cursor", json.dumps({"hook_event_name": "preToolUse", "tool_name": "Delete", "workspace_roots": ["/p"],
                                               "tool_input": {"path": "a.txt"}}), {})
    assert (cur_del.kind, cur_del.paths) == (calls.REMOVE, ("a.txt",))
    with pytest.raises(calls.Malformed):
        calls.read("cursor", json.dumps({"hook_event_name": "somethingNew"}), {})


def test_each_agent_is_answered_in_its_own_words():
    assert json.loads(calls.answer("claude", "PreToolUse", "deny", "no").stdout) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}
    assert calls.answer("claude", "PreToolUse", calls.PASS, "").stdout == ""
    assert json.loads(calls.answer("gemini", "BeforeTool", "ask", "why").stdout) == {"decision": "ask", "reason": "why"}
    assert json.loads(calls.answer("gemini", "BeforeTool", calls.PASS, "").stdout) == {}
    assert json.loads(calls.answer("cursor", "beforeShellExecution", "deny", "no").stdout) == {
        "permission": "deny", "user_message": "no", "agent_message": "no"}
    assert json.loads(calls.answer("cursor", "afterFileEdit", "deny", "no").stdout) == {}  # after the edit: nothing to block
    assert [calls.failed(a, "", "bad").code for a in calls.AGENTS] == [2, 2, 0]


@pytest.mark.parametrize("text,touches", [
    ("rm -rf a b", [("delete", "a"), ("delete", "b")]),
    ("mv a b/", [("delete", "a"), ("overwrite", "b/")]),
    ("cp -r a b", [("overwrite", "b")]),
    ("echo x > f && echo y >> g 2>/dev/null", [("overwrite", "f"), ("overwrite", "g")]),
    ("make 2>&1 | tee -a log", []),
    ("sed -i -e s/a/b/ f.txt", [("overwrite", "f.txt")]),
    ("find build -name '*.o' -delete", [(EMPTIES, "build")]),
    ("git clean -fdx", [(EMPTIES, ".")]),
    ("git clean -n", []),
    ("cd tests && rm -rf fixtures; cd /tmp && rm x", [("delete", "tests/fixtures"), ("delete", "/tmp/x")]),
    ("grep -rn 'rm -rf' src", []),  # a command's words are not its acts
])
def test_what_a_command_removes_or_overwrites(text, touches):
    assert list(command(text).touches) == touches


def test_a_grant_must_name_every_thing_the_call_destroys(root):
    assert judge(claude("Bash", {"command": "rm -rf build"}, root), POLICY).decision == "allow"
    assert judge(claude("Bash", {"command": "rm -rf build src"}, root), POLICY).decision == "ask"
    said = judge(claude("Bash", {"command": "rm -rf *"}, root), POLICY)
    assert said.decision == "deny" and "tests/fixtures" in said.reason


def test_a_removal_of_only_some_of_a_folder_that_holds_a_protected_thing_is_asked(root):
    said = judge(claude("Bash", {"command": "find . -name '*.pyc' -delete"}, root), POLICY)
    assert said.decision == "ask" and "tests/fixtures" in said.reason
    assert judge(claude("Bash", {"command": "find tests/fixtures -delete"}, root), POLICY).decision == "deny"


def test_a_folder_too_big_to_read_is_refused_by_the_paths_a_prohibition_names_and_asked_about_for_its_words(root, monkeypatch):
    from cursorpilot.hooks import paths

    monkeypatch.setattr(paths, "LIMIT", 0)  # as if tests/ held more than can be read on a tool call
    said = judge(claude("Bash", {"command": "rm -rf tests"}, root), POLICY)
    assert said.decision == "deny" and "tests/fixtures" in said.reason  # by its path alone
    worded = lexical("Delete build/. Never delete the orders spreadsheet.")
    assert judge(claude("Bash", {"command": "rm -rf tests"}, root), worded).decision == "ask"  # it could be anywhere in there
    assert judge(claude("Bash", {"command": "rm -f build/obj/app.o"}, root), worded).decision == "allow"  # a file holds nothing
    monkeypatch.setattr(paths, "LIMIT", 5000)
    said = judge(claude("Bash", {"command": "rm -rf tests"}, root), lexical("Delete build/. Never delete orders.csv."))
    assert said.decision == "deny" and "orders.csv" in said.reason  # read whole, the file's name is found inside


def test_the_hooks_own_settings_and_the_prompt_it_reads_are_not_the_agents_to_change(tmp_path):
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.local.json").write_text("{}")
    prompt = tmp_path / "prompt.md"
    prompt.write_text(PROMPT)
    for call in (claude("Edit", {"file_path": str(root / ".claude/settings.local.json"), "old_string": "a", "new_string": "b"}, root),
                 claude("Bash", {"command": "rm -rf .claude"}, root),
                 claude("Bash", {"command": "echo '{}' > .cursor/hooks.json"}, root),
                 claude("Write", {"file_path": str(prompt), "content": "Delete anything."}, root)):
        said = judge(call, POLICY, (str(prompt),))
        assert said.decision == "deny" and "the guard" in said.reason, (call, said)
    mirror = claude("Write", {"file_path": str(root / ".claude/commands/review.md"), "content": "x"}, root)
    assert judge(mirror, POLICY, (str(prompt),)).decision == "pass"
    said = judge(claude("Bash", {"command": "git clean -fdx"}, root), POLICY, (str(prompt),))
    assert said.decision == "ask" and "settings.local.json" in said.reason  # it may or may not reach it: a person says


def test_a_file_written_in_the_temp_folder_is_left_to_the_agent_and_one_elsewhere_outside_is_asked(root):
    assert judge(claude("Bash", {"command": "pytest > /tmp/report.txt"}, root), POLICY).decision == "pass"
    assert judge(claude("Write", {"file_path": "/etc/hosts", "content": "x"}, root), POLICY).decision == "ask"
    assert judge(claude("Bash", {"command": "rm -rf /tmp/report.txt"}, root), POLICY).decision == "deny"  # a removal there: the floor


def test_acts_without_paths_are_matched_on_the_whole_command_and_an_mcp_tools_words(root):
    policy = lexical("Never force-push. Never drop the users table.")
    assert judge(claude("Bash", {"command": "git push --force origin main"}, root), policy).decision == "deny"
    mcp = judge(claude("mcp__db__query", {"sql": "DROP TABLE users"}, root), policy)
    assert mcp.decision == "deny" and "users table" in mcp.reason
    assert judge(claude("mcp__db__query", {"sql": "SELECT * FROM users"}, root), policy).decision == "pass"


def test_removing_the_project_itself_or_outside_it_is_the_floor(root):
    for text in ("rm -rf .", "cd .. && rm -rf proj", "rm -rf ../other"):
        assert judge(claude("Bash", {"command": text}, root), lexical("Delete anything you want.")).decision == "deny", text


def _forms(root: Path, rel: str, is_dir: bool) -> st.SearchStrategy[tuple[str, Path]]:
    """A path as a call may name it, and the folder the call runs in."""
    name = rel.rsplit("/", 1)[-1]
    parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
    choices = [(rel, root), ("./" + rel, root), (str(root / rel), root), (f"src/../{rel}", root), (f"../{rel}", root / "src"),
               (str(root.parent / "alias" / rel), root)]
    if rel.startswith("tests/fixtures"):
        choices.append(("fx" + rel[len("tests/fixtures"):], root))  # through the link to the protected folder
    if parent:
        choices += [(f"{parent}/{name[:2]}*", root), (f"{parent}/?{name[1:]}", root), (name, root / parent)]
    if is_dir:
        choices += [(p + "/", c) for p, c in choices if not p.endswith("*")]
    return st.sampled_from(choices)


PROTECTED = [("tests/fixtures", True), ("tests/fixtures/users.json", False), ("tests/fixtures/deep", True),
             ("tests/fixtures/deep/orders.csv", False)]
TOOLS = ["rm -rf {p}", "rm {p}", "mv {p} /tmp/gone", "cp /etc/hostname {p}", "echo x > {p}", "echo x >> {p}", "truncate -s 0 {p}",
         "sed -i s/a/b/ {p}", "ls && rm -rf {p}", "Edit", "Write", "MultiEdit"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_protected_path_is_never_allowed_whatever_the_form_of_the_call(root, data):
    rel, is_dir = data.draw(st.sampled_from(PROTECTED))
    path, cwd = data.draw(_forms(root, rel, is_dir))
    tool = data.draw(st.sampled_from(TOOLS))
    if tool[0].isupper():
        if is_dir:
            return  # a file tool writes files
        call = claude(tool, {"file_path": path, "old_string": "a", "new_string": "b", "content": "c"}, cwd, root)
    else:
        call = claude("Bash", {"command": tool.format(p=path)}, cwd, root)
    said = judge(call, POLICY)
    assert said.decision == "deny", (tool, path, cwd, said)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_granted_folder_is_allowed_in_the_same_forms(root, data):
    """The mirror: the property above is not held by refusing everything."""
    rel = data.draw(st.sampled_from(["build", "build/obj", "build/obj/app.o", "out/obj"]))
    path, cwd = data.draw(_forms(root, rel, is_dir=not rel.endswith(".o")))
    said = judge(claude("Bash", {"command": f"rm -rf {path}"}, cwd, root), POLICY)
    assert said.decision == "allow", (path, cwd, said)
    assert "delete build/" in said.reason
