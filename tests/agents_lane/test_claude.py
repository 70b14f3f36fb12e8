"""The real Claude Code, offline: each scenario is checked by what happened (files, the backend's script), not by
what was printed."""

import pytest

GOVERNING = "Work only inside the project. Approve commands and edits the task needs; never delete anything."


def test_task_on_the_command_line_an_allowed_command_is_approved_once(agent):
    script = [{"text": "I'll write the file.", "tool_use": {"name": "Bash", "input": {"command": "echo hello > out.txt",
                                                                                     "description": "Write hello to out.txt"}}},
              {"text": "Done: out.txt holds hello."}]
    r = agent("claude", script, "--prompt", GOVERNING, args=("write hello to out.txt",),
              rules="- {id: run, match: 'echo hello > out.txt', reply: 'Yes'}\n")
    assert r.code == 0, r.explain()
    assert (r.work / "out.txt").read_text() == "hello\n" and r.health["done"]
    assert r.answers() == [("claude.permission", "Yes")]
    assert r.of("agent_started")  # the idle composer before the task ran was not taken for a question


def test_destructive_command_is_denied_and_the_follow_up_question_answered(agent):
    """The screen's own permission prompt, denied by the policy (--no-native-deny: no hook refuses it first; the test
    below is the same run with the hook)."""
    script = [{"text": "Cleaning up.", "tool_use": {"name": "Bash", "input": {"command": "rm -rf build", "description": "Remove build"}}},
              {"text": "Understood: I left build/ in place."}]
    r = agent("claude", script, "--prompt", GOVERNING, "--no-native-deny", args=("clean up the project",),
              rules="- {id: instead, match: 'What should Claude do instead', reply: 'Leave build/ alone and stop.'}\n",
              prepare=lambda work: (work / "build").mkdir() or (work / "build" / "x.o").write_text("x"))
    assert r.code == 0, r.explain()
    assert (r.work / "build" / "x.o").exists() and r.health["done"]
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    assert r.answers() == [("claude.permission", "No"), ("claude.idle.prose_question", "Leave build/ alone and stop.")]
    last_user = [q for q in r.requests if q.get("kind") == "main"][-1]
    assert "Leave build/ alone" in str(last_user["body"]["messages"][-1])


def test_on_the_screen_the_runs_hook_refuses_the_destructive_command_inside_claude_before_any_prompt(agent):
    """By default a screen run of a known agent puts cursor-pilot's hook into a settings file of the run's, given with
    --settings (channels/agent/runhook.py): Claude asks nobody about rm -rf, the hook refuses it in the user's words
    (a hook_decided record), build/ stays, and Claude goes on to the end of its script."""
    script = [{"text": "Cleaning up.", "tool_use": {"name": "Bash", "input": {"command": "rm -rf build", "description": "Remove build"}}},
              {"text": "Understood: I left build/ in place."}]
    r = agent("claude", script, "--prompt", GOVERNING, args=("clean up the project",),
              prepare=lambda work: (work / "build").mkdir() or (work / "build" / "x.o").write_text("x"))
    assert r.code == 0, r.explain()
    assert (r.work / "build" / "x.o").exists() and r.health["done"]
    assert [(d["tool"], d["decision"], d["quote"]) for d in r.of("hook_decided")] == [("Bash", "deny", "never delete anything")]
    assert r.answers() == [] and not r.of("policy_denied")  # no permission prompt: the hook decided inside Claude
    (native,) = r.of("native_deny")
    assert r.of("program_started")[0]["command"][-2:] == ["--settings", native["hook"]]
    assert "cursor-pilot refused" in str([q["body"] for q in r.requests if q.get("kind") == "main"][-1])


def test_folder_trust_and_api_key_menus(agent):
    script = [{"text": "Hello, ready."}]
    rules = """
- {id: trust, match: 'trust this folder', reply: 'Yes, I trust this folder'}
- {id: key, match: 'use this API key', reply: 'Yes'}
"""
    r = agent("claude", script, args=("say hello",), rules=rules, trust=False, approve_key=False)
    assert r.code == 0, r.explain()
    assert [a[0] for a in r.answers()] == ["claude.api_key", "claude.trust"] or [a[0] for a in r.answers()] == ["claude.trust", "claude.api_key"]
    assert r.health["done"]


ASK = {"name": "AskUserQuestion", "input": {"questions": [{"question": "Which database should the project use?", "header": "Database",
                                                         "multiSelect": False, "options": [
                                                             {"label": "PostgreSQL", "description": "Relational, robust"},
                                                             {"label": "SQLite", "description": "File based, zero setup"},
                                                             {"label": "MongoDB", "description": "Document store"}]}]}}
ASK_MULTI = {"name": "AskUserQuestion", "input": {"questions": [{"question": "Which features do you want?", "header": "Features",
                                                               "multiSelect": True, "options": [
                                                                   {"label": "Auth", "description": "Login and sessions"},
                                                                   {"label": "Logging", "description": "Structured logs"},
                                                                   {"label": "Metrics", "description": "Prometheus endpoint"}]}]}}


def test_ask_user_question_picker_single_and_multi_select_by_label(agent):
    script = [{"text": "Let me ask.", "tool_use": ASK}, {"text": "Chose {{answer}}.", "tool_use": ASK_MULTI},
              {"text": "Features: {{answer}}. Done."}]
    rules = """
- {id: submit, match: 'Submit answers', reply: Submit answers}
- {id: db, match: 'Which database', reply: SQLite}
- {id: features, match: 'Which features', reply: 'Auth, Metrics'}
"""
    r = agent("claude", script, args=("set up the project",), rules=rules)
    assert r.code == 0, r.explain()
    assert r.health["done"]
    bodies = " ".join(str(q["body"]) for q in r.requests if q.get("kind") == "main")
    assert '"Which database should the project use?"="SQLite"' in bodies
    assert '"Which features do you want?"="Auth, Metrics"' in bodies
    choices = [(c["rule_id"], c["options"]) for c in r.of("menu_choice")]
    assert ("claude.menu", ["SQLite"]) in choices and ("claude.menu", ["Auth", "Metrics"]) in choices


def test_prose_question_at_the_end_of_a_turn_is_answered_into_the_composer(agent):
    script = [{"text": "Which port should the server use?"}, {"text": "Using {{last_user}}."}]
    r = agent("claude", script, args=("plan the server",), rules="- {id: port, match: 'Which port', reply: '8080'}\n")
    assert r.code == 0, r.explain()
    assert r.health["done"] and r.answers() == [("claude.idle.prose_question", "8080")]
    assert r.of("closing")[0]["how"] == "keys"


def test_three_tool_calls_in_one_turn_with_mixed_verdicts(agent):
    calls = [{"name": "Bash", "input": {"command": "echo one > a.txt", "description": "Write a.txt"}},
             {"name": "Bash", "input": {"command": "rm -rf build", "description": "Remove build"}},
             {"name": "Bash", "input": {"command": "echo two > b.txt", "description": "Write b.txt"}}]
    script = [{"text": "Three things.", "tool_use": calls}, {"text": "Done with what was allowed."}]
    r = agent("claude", script, "--prompt", GOVERNING, "--no-native-deny", args=("do three things",),
              rules="- {id: writes, match: 'echo \\w+ > \\w\\.txt', reply: 'Yes'}\n"
                    "- {id: instead, match: 'What should Claude do instead', reply: 'Skip the deletion and finish.'}\n",
              prepare=lambda work: (work / "build").mkdir())
    assert r.code == 0, r.explain()
    assert (r.work / "build").is_dir() and (r.work / "a.txt").exists()
    assert [d["policy_rule"] for d in r.of("policy_denied")] == ["delete"]
    assert r.health["done"]


@pytest.mark.parametrize("provider", ["openai"])
def test_judgement_by_a_model_a_picker_answered_from_the_governing_prompt(agent, provider):
    """The real SDK against the project's fake LLM server: the model picks the option the governing prompt implies."""
    from tests.fakes.llm_server import FakeLLM
    from tests.helpers import is_turn_end, verdict

    def model(prompt: str) -> str:
        if is_turn_end(prompt):  # the agent stopped after choosing: its work is judged done
            return verdict("done", why="the database is chosen")
        if "Which database" in prompt:
            return '{"action": "type", "text": "PostgreSQL", "submit": true}'
        return '{"action": "wait", "text": "", "submit": false}'

    script = [{"text": "Let me ask.", "tool_use": ASK}, {"text": "Chose {{answer}}."}]
    with FakeLLM(model) as llm:
        r = agent("claude", script, "--no-native-deny", "--prompt", "The project needs a relational database that runs on a server.",
                  args=("set up the database",), llm=llm)
        calls = len(llm.requests)
    assert r.code == 0, r.explain()
    bodies = " ".join(str(q["body"]) for q in r.requests if q.get("kind") == "main")
    assert '"Which database should the project use?"="PostgreSQL"' in bodies
    assert calls == 2  # the picker, then the turn end
    assert [t["verdict"] for t in r.of("turn_end")] == ["done"]
