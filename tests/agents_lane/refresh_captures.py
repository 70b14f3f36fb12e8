"""Refresh the golden captures from the real agents: run each one offline, save its screens as text, record versions.

    .venv/bin/python tests/agents_lane/refresh_captures.py [claude codex gemini]

For a new agent version: bump it in tests/agents/package.json, `npm install --prefix tests/agents`, run this, then
`.venv/bin/python tests/data/refresh_expected.py`, and read the diff of tests/data/captures/ before committing: a
changed classification is a profile to fix, or a golden to accept. Screens go to tests/data/captures/<agent>-real-<name>.txt,
the versions to tests/data/captures/versions.yaml.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

import agentlab  # noqa: E402

from cursorpilot.channels import reaper  # noqa: E402
from cursorpilot.keys import to_writes  # noqa: E402
from cursorpilot.channels.pty.driver import PtyDriver  # noqa: E402
from cursorpilot.channels.pty.screen import TerminalScreen  # noqa: E402

CAPTURES = HERE.parents[0] / "data" / "captures"
CURSORS: dict[str, list[int]] = {}  # each screen's cursor, as tests/data/captures/cursors.yaml keeps them


@dataclass
class Shot:
    wait: str  # a regex the screen must show
    name: str | None = None  # capture the screen under this name
    send: str | None = None  # then type this (reply grammar)
    quiet: float = 0.8  # and let it settle this long first


@dataclass
class Scenario:
    agent: str
    script: list
    shots: list[Shot]
    args: tuple[str, ...] = ()
    trust: bool = True
    approve_key: bool = True
    prepare: list[str] = field(default_factory=list)  # folders to make in the working directory
    env: dict[str, str | None] = field(default_factory=dict)  # set in the agent's environment (None: taken out of it)


SLOW = {"delay": 4}
BASH = {"name": "Bash", "input": {"command": "echo hello > out.txt", "description": "Write hello to out.txt"}}
ASK = {"name": "AskUserQuestion", "input": {"questions": [{"question": "Which database should the project use?", "header": "Database",
                                                         "multiSelect": False, "options": [
                                                             {"label": "PostgreSQL", "description": "Relational, robust"},
                                                             {"label": "SQLite", "description": "File based, zero setup"}]}]}}
ASK_MULTI = {"name": "AskUserQuestion", "input": {"questions": [{"question": "Which features do you want?", "header": "Features",
                                                               "multiSelect": True, "options": [
                                                                   {"label": "Auth", "description": "Login and sessions"},
                                                                   {"label": "Metrics", "description": "Prometheus endpoint"}]}]}}

def limited(error: dict, status: int = 429, headers: dict | None = None, **more) -> dict:
    """A usage limit from the vendor's API, answered until the agent is told to continue (tests/fakes/agents/README.md)."""
    return {"error": error, "status": status, "headers": headers or {}, **more}


IN_AN_HOUR = int(time.time()) + 3600  # (the screens show the time of day: a refresh diffs in it)
SUBSCRIPTION = {"CLAUDE_CODE_OAUTH_TOKEN": agentlab.CLAUDE_OAUTH, "ANTHROPIC_API_KEY": None}  # its limits show only on a plan
CLAUDE_LIMIT = limited({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}},
                       headers={"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": str(IN_AN_HOUR),
                                "anthropic-ratelimit-unified-representative-claim": "five_hour", "x-should-retry": "false"})
CLAUDE_429 = limited({"type": "error", "error": {"type": "rate_limit_error", "message": "This request would exceed your account's rate limit."}},
                     headers={"x-should-retry": "false"})
CODEX_LIMIT = limited({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "plus",
                                 "resets_at": IN_AN_HOUR}})
GEMINI_LIMIT = limited({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded.", "details": [
    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]}]}})
STALL = {"text": "Working on it, one small piece of text after another, so that the stream takes a while.", "stall": 30, "stall_after": 4}
PACED = {"text": "Working on it slowly: one small piece of text after another, a token a second, so the stream takes a while.", "pace": 1.0}
AFTER = {"text": "Hello after the limit."}

SCENARIOS = {
    "claude": [
        Scenario("claude", [{"text": "Hi."}], [Shot("Yes, I trust this folder", "trust", "<esc>")], trust=False),
        Scenario("claude", [{"text": "Hi."}], [Shot("Do you want to use this API key", "api-key", "<esc>")], approve_key=False),
        Scenario("claude", [{"text": "I'll write the file.", "tool_use": BASH, **SLOW}, {"text": "Which port should the server use?"}],
                 [Shot(r"\? for shortcuts", "idle", "write the file<enter>"), Shot("esc to interrupt", "working", quiet=0.3),
                  Shot("Do you want to proceed", "permission", "<enter>"), Shot(r"Which port should the server use\?", "prose-question")]),
        Scenario("claude", [{"text": "Let me ask.", "tool_use": ASK}, {"text": "Now features.", "tool_use": ASK_MULTI}, {"text": "Done."}],
                 [Shot(r"\? for shortcuts", None, "set up<enter>"), Shot("Which database", "ask-user-question", "<enter>"),
                  Shot("Which features", "ask-user-question-multi", "<esc>")]),
        Scenario("claude", [CLAUDE_LIMIT], [Shot(r"\? for shortcuts", None, "say hello<enter>"),
                                            Shot("Usage limit reached · limit resets", "usage-limit", quiet=2.0)], env=SUBSCRIPTION),
        Scenario("claude", [CLAUDE_429, AFTER], [Shot(r"\? for shortcuts", None, "say hello<enter>"),
                                                 Shot(r"Request rejected \(429\)", "rate-limited", "continue<enter>", quiet=2.0),
                                                 Shot("Hello after the limit", "after-limit", quiet=3.0)]),
        Scenario("claude", [STALL], [Shot(r"\? for shortcuts", None, "say hello<enter>"), Shot(r"↓ \d+ tokens", "stalled", quiet=1.0),
                                     Shot(r"↓ \d+ tokens", "stalled-later", quiet=3.0)]),
        Scenario("claude", [PACED], [Shot(r"\? for shortcuts", None, "say hello<enter>"), Shot(r"↓ \d+ tokens", "streaming", quiet=1.0),
                                     Shot(r"↓ \d+ tokens", "streaming-later", quiet=3.0)]),
    ],
    "codex": [
        Scenario("codex", [{"text": "Running it.", "tool_use": {"name": "auto_shell", "input": {
            "cmd": "touch a.txt", "escalate": True, "justification": "Create the file"}}, **SLOW}, {"text": "Which name should it have?"}],
                 [Shot("Ask Codex to do anything", "idle", "create the file<enter>", quiet=3.0), Shot("esc to interrupt", "working", quiet=0.3),
                  Shot("Would you like to run the following command", "approval", "<enter>"), Shot(r"Which name should it have\?", "prose-question")]),
        Scenario("codex", [CODEX_LIMIT, AFTER], [Shot("Ask Codex to do anything", None, "say hello<enter>", quiet=3.0),
                                                 Shot("hit your usage limit", "usage-limit", "continue<enter>", quiet=2.0),
                                                 Shot("Hello after the limit", "after-limit", quiet=3.0)]),
    ],
    "gemini": [
        Scenario("gemini", [{"text": "Hello."}], [Shot("Do you trust the files in this folder", "trust", "<esc>")], trust=False),
        Scenario("gemini", [{"text": "Creating it.", "tool_use": {"name": "run_shell_command", "input": {"command": "touch g.txt"}}, **SLOW},
                            {"text": "Which port should the server use?"}],
                 [Shot("Type your message", "idle", "create g.txt<enter>"), Shot(r"esc to cancel, \d", "working", quiet=0.3),
                  Shot("Allow execution of", "approval", "<enter>"), Shot(r"Which port should the server use\?", "prose-question")]),
        Scenario("gemini", [GEMINI_LIMIT], [Shot("Type your message", None, "say hello<enter>"),
                                            Shot("Usage limit reached for", "usage-limit", quiet=2.0)]),
        Scenario("gemini", [{**STALL, "stall_after": 2}], [Shot("Type your message", None, "say hello<enter>"),
                                                           Shot("one small piece", "stalled", quiet=3.0), Shot("one small piece", "stalled-later", quiet=3.0)]),
        Scenario("gemini", [PACED], [Shot("Type your message", None, "say hello<enter>"), Shot("Working on it", "streaming", quiet=1.0),
                                     Shot("Working on it", "streaming-later", quiet=3.0)]),
    ],
}


def run(sc: Scenario, root: Path) -> dict[str, str]:
    """The scenario's screens by name (and each one's cursor in CURSORS: a rule that reads a message as the last one
    above the cursor needs it)."""
    lab = agentlab.Lab(sc.agent, root, trust_folder=sc.trust, approve_key=sc.approve_key)
    for folder in sc.prepare:
        (lab.work / folder).mkdir(parents=True, exist_ok=True)
    backend = lab.backend(sc.script)
    screen = TerminalScreen(120, 40)
    mark = f"captures-{root.name}-{time.monotonic_ns()}"  # Codex leaves an app-server daemon: ended by this mark
    env = {k: v for k, v in {**lab.env(backend), **sc.env}.items() if v is not None}
    driver = PtyDriver(lab.command(*sc.args), cwd=str(lab.work), env=reaper.marked_env(env, mark), cols=120, rows=40)
    shots: dict[str, str] = {}
    try:
        for shot in sc.shots:
            if not _until(driver, screen, shot.wait, 60):
                raise SystemExit(f"{sc.agent}: never saw {shot.wait!r}; the screen:\n{screen.snapshot().text()}")
            _pump(driver, screen, shot.quiet)
            if shot.name:  # the lab's temporary paths as a stable home, so a refresh diffs only what the agent changed
                text = screen.snapshot().text().replace(str(lab.work), "/home/user/work").replace(str(lab.root), "/home/user")
                shots[shot.name] = text + "\n"
                snap = screen.snapshot()
                CURSORS[f"{sc.agent}-real-{shot.name}.txt"] = [snap.cursor_x, snap.cursor_y]
            if shot.send:
                for w in to_writes(shot.send, submit=False):
                    time.sleep(max(w.delay, 0.3))  # a fast burst is a paste to Ink and ratatui, its Enter a newline
                    driver.write(w.data)
    finally:
        driver.terminate(2)
        driver.close()
        reaper.end_all(mark)
        backend.stop()
    return shots


def _pump(driver: PtyDriver, screen: TerminalScreen, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        chunk = driver.read(0.05)
        if chunk is None:
            return False
        if chunk:
            screen.feed(chunk)
            replies = screen.take_replies()
            if replies:
                driver.write(replies)
    return True


def _until(driver: PtyDriver, screen: TerminalScreen, pattern: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pump(driver, screen, 0.1):
            return False
        if re.search(pattern, screen.snapshot().text(), re.M):
            return True
    return False


def save_cursors() -> None:
    path = CAPTURES / "cursors.yaml"
    kept = yaml.safe_load(path.read_text()) if path.exists() else {}
    path.write_text("# Where each capture's cursor was (x, y): the rest are read with it after their last row (tests/helpers.capture).\n"
                    + yaml.safe_dump({**kept, **CURSORS}, sort_keys=True, default_flow_style=None))


def main(agents: list[str]) -> None:
    import tempfile

    versions_path = CAPTURES / "versions.yaml"
    versions = yaml.safe_load(versions_path.read_text()) if versions_path.exists() else {}
    for agent in agents:
        reason = agentlab.missing_reason(agent)
        if reason:
            raise SystemExit(reason)
        with tempfile.TemporaryDirectory(prefix=f"captures-{agent}-") as tmp:
            for i, sc in enumerate(SCENARIOS[agent]):
                for name, text in run(sc, Path(tmp) / str(i)).items():
                    (CAPTURES / f"{agent}-real-{name}.txt").write_text(text)
                    print(f"wrote {agent}-real-{name}.txt")
        save_cursors()
        versions[agent] = {"package": agentlab.PACKAGES[agent], "version": agentlab.version(agent), "captured": time.strftime("%Y-%m-%d")}
    versions_path.write_text("# The agent versions the *-real-*.txt captures were taken from (tests/agents_lane/refresh_captures.py).\n"
                             + yaml.safe_dump(versions, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:] or list(SCENARIOS))
