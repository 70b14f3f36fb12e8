"""The real Codex CLI and Gemini CLI, offline: approvals, task on the command line, trust, a prose question."""

GOVERNING = "Work only inside the project. Approve commands the task needs; never delete anything."


def test_codex_task_on_the_command_line_and_its_escalated_command_approval(agent):
    script = [{"text": "I'll create the file.", "tool_use": {"name": "auto_shell", "input": {
        "cmd": "touch approved.txt", "escalate": True, "justification": "Create the file the task asks for"}}},
        {"text": "Created approved.txt."}]
    r = agent("codex", script, "--prompt", GOVERNING, args=("create approved.txt",),
              rules="- {id: run, match: 'touch approved.txt', reply: 'Yes'}\n")
    assert r.code == 0, r.explain()
    assert (r.work / "approved.txt").exists() and r.health["done"]
    assert r.answers() == [("codex.approval", "Yes")]
    starting = [s for s in r.of("screen_state") if s["state"] == "starting"]
    assert starting and r.of("agent_started")  # Codex shows its idle composer before the task is submitted


def test_codex_destructive_command_denied_and_the_turn_ends_cleanly(agent):
    """Codex 0.169 takes "No, and tell Codex what to do differently" as an interrupt: the turn ends at the composer,
    with no question to answer. The folder stays, the denial is recorded, the run ends cleanly."""
    script = [{"text": "Cleaning.", "tool_use": {"name": "auto_shell", "input": {
        "cmd": "rm -rf build", "escalate": True, "justification": "Remove the build folder"}}},
        {"text": "Understood, build/ stays."}]
    r = agent("codex", script, "--prompt", GOVERNING, args=("clean the project",),
              prepare=lambda work: (work / "build").mkdir())
    assert r.code == 0, r.explain()
    assert (r.work / "build").is_dir() and r.health["turn"] == 1
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    assert r.answers() == [("codex.approval", "No")] and r.of("menu_choice")[0]["options"] == ["No, and tell Codex what to do differently (esc)"]


def test_codex_prose_question_answered(agent):
    script = [{"text": "Which name should the file have?"}, {"text": "Using {{last_user}}."}]
    r = agent("codex", script, args=("make a file",), rules="- {id: name, match: 'Which name', reply: 'notes.txt'}\n")
    assert r.code == 0, r.explain()
    assert r.health["done"] and r.answers() == [("codex.idle.prose_question", "notes.txt")]


def test_gemini_shell_approval_task_given_with_i(agent):
    script = [{"text": "I'll create the file.", "tool_use": {"name": "run_shell_command", "input": {
        "command": "touch g.txt", "description": "Create g.txt"}}},
        {"text": "Created g.txt. Which port should the server use?"}, {"text": "Using {{last_user}}."}]
    r = agent("gemini", script, "--prompt", GOVERNING, args=("-i", "create g.txt"),
              rules="- {id: run, match: 'touch g.txt', reply: 'Yes'}\n- {id: port, match: 'Which port', reply: '8080'}\n")
    assert r.code == 0, r.explain()
    assert (r.work / "g.txt").exists() and r.health["done"]
    assert r.answers() == [("gemini.approval", "Yes"), ("gemini.idle.prose_question", "8080")]
    assert [c["options"] for c in r.of("menu_choice")] == [["Allow once"]]  # "Yes" means once, not for the session


TRUST = "- {id: trust, match: 'Do you trust the files in this folder', reply: 'Trust folder'}\n"
IN_CI = {"CI": "true", "GITHUB_ACTIONS": "true"}  # as a CI service sets them: Gemini then calls itself headless


def test_gemini_folder_trust_menu_even_when_run_in_ci(agent):
    r = agent("gemini", [{"text": "Hello."}], args=("-i", "say hello"), trust=False, rules=TRUST, env=IN_CI)
    assert r.code == 0, r.explain()
    assert r.answers()[0][0] == "gemini.trust" and r.health["done"]
    assert r.of("program_started")[0]["hidden_env"] == ["CI", "GITHUB_ACTIONS"]


def test_gemini_told_it_is_in_ci_refuses_the_folder_and_the_summary_says_why(agent):
    r = agent("gemini", [{"text": "Hello."}], "--keep-ci-env", args=("-i", "say hello"), trust=False, rules=TRUST, env=IN_CI)
    assert r.code == 1 and "exit code 55; it last showed: Gemini CLI is not running in a trusted directory" in r.stdout, r.explain()
    assert r.health["main_calls"] == 0

