"""A real agent's run, reported: Claude Code offline, a picker answered by a model (the real openai SDK against the
fake LLM server), a write approved by a rule, a deletion refused by the deny policy and the question after it answered;
the report shows each decision with who made it, the file the agent wrote, and a replay that seeks to each one."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.agents_lane.test_claude import ASK, GOVERNING
from tests.browser import Opened, chromium
from tests.fakes.llm_server import FakeLLM
from tests.helpers import is_turn_end, verdict

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "cursorpilot" / "report" / "report.schema.json").read_text())


def test_a_claude_code_runs_report_shows_who_decided_what_and_replays_it(agent, tmp_path):
    calls = [{"name": "Bash", "input": {"command": "echo postgres > db.txt", "description": "Write db.txt"}},
             {"name": "Bash", "input": {"command": "rm -rf build", "description": "Remove build"}}]
    script = [{"text": "Let me ask.", "tool_use": ASK}, {"text": "Chose {{answer}}. Writing it down.", "tool_use": calls},
              {"text": "Done: db.txt names the database; build/ is left alone."}]

    def model(prompt: str) -> str:
        if is_turn_end(prompt):  # the agent stopped for good: judged done
            return verdict("done", why="db.txt names the database")
        if "Which database" in prompt:
            return '{"action": "type", "text": "PostgreSQL", "submit": true}'
        return '{"action": "wait", "text": "", "submit": false}'

    rules = ("- {id: writes, match: 'echo \\w+ > db\\.txt', reply: 'Yes'}\n"
             "- {id: instead, match: 'What should Claude do instead', reply: 'Skip the deletion and finish.'}\n")
    with FakeLLM(model) as llm:
        r = agent("claude", script, "--no-native-deny", "--prompt", GOVERNING + " The project needs a relational database that runs on a server.",
                  "--report", args=("set up the database",), rules=rules, llm=llm, prepare=lambda work: (work / "build").mkdir())
    assert r.code == 0, r.explain()
    assert (r.work / "db.txt").read_text() == "postgres\n" and (r.work / "build").is_dir()
    data = json.loads((r.log / "report.json").read_text())
    jsonschema.validate(data, SCHEMA)
    by = {row["source_kind"]: row for row in data["ledger"] if row["outcome"] == "answered"}
    assert by["model"]["answer"] == "PostgreSQL" and "Which database" in by["model"]["question"]
    assert by["model"]["prompt"] and "Which database" in by["model"]["prompt"]  # the prompt that was sent, shown
    assert by["policy"]["policy_rule"] == "delete" and by["policy"]["answer"] == "No"
    assert {"rules:writes", "rules:instead"} <= {row["source"] for row in data["ledger"]}
    assert [(f["path"], f["status"]) for f in data["changes"]["files"]] == [("db.txt", "added")]
    assert data["verdict"]["outcome"] == "completed" and data["verdict"]["llm_calls"] >= 1 and data["replay"]["available"]
    # its turn ends on the timeline: the question after the denial answered by a rule, then the model's done
    assert [(t["verdict"], t["sent"]) for t in data["turns"]] == [("continue", "Skip the deletion and finish."), ("done", None)]

    with chromium() as browser:
        page = Opened(browser, r.log / "report.html")
        assert page.text("#outcome") == "Completed"
        assert page.page.locator("tr.row").count() == len(data["ledger"])
        model_row = by["model"]["n"]
        page.click_and_wait_for_time(f"#row-{model_row} .seek")
        page.terminal_shows("Which database")
        assert "db.txt" in page.text("#changes")
        page.shot(tmp_path, "claude-report")
        assert page.offline() == [] and page.errors == []
