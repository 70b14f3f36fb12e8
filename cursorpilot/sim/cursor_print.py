"""The Cursor simulator's print mode: `cursor-agent -p --output-format stream-json` as shared/CURSOR_CLI.md §3–4 says
it behaves, so that the headless channel meets Cursor's side through a real process.

One process is one turn. It writes the documented NDJSON events (`system/init`, `user`, `assistant`,
`tool_call` started/completed, `result`) and, where a tool call needs approval:
- a newer build (`build: new`) writes an `interaction_query` request and waits for the answer on stdin (closed stdin:
  rejected);
- an older build (`build: old`) rejects by itself (`{"rejected": {"reason": "User Rejected"}}`), unless `--force`.
Approved commands really run, in the workspace. The permissions of `$CURSOR_CONFIG_DIR/cli-config.json` are honoured
(`Shell(base)` in `deny` refuses without asking, even with --force), as Cursor documents, and so are the workspace's
hooks (`.cursor/hooks.json`: `beforeShellExecution` before a command, `preToolUse` before a `write` step's file edit;
`permission` deny/ask/allow, exit 2 blocks), as Cursor documents them (not checked against a real Cursor). The failures it knows:
no login, an unknown `--model` (with the list), a workspace not trusted (2026 builds, without --trust/--force), the
usage limit and a lost connection. `--resume ID` goes on with the session's next turn (its state lives in the temp dir).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from cursorpilot.sim.common import Recorder

FAILURES = {
    "auth": "Error: Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY environment variable.",
    "usage_limit": "Error: You've hit your usage limit\n  Get Cursor Pro for more Agent usage, unlimited Tab, and more.\n  spendLimitHit: false",
    "connection": "Error: Connection failed",
}
TRUST = ("Workspace Trust Required\nCursor Agent can execute code and access files in this directory.\n"
         "Pass --trust, --yolo, or -f to trust the current workspace.")


class PrintSim:
    def __init__(self, scenario: dict, args: argparse.Namespace, record: Recorder):
        self.sc, self.args, self.record = scenario, args, record
        self.workspace = os.path.abspath(args.workspace or os.getcwd())
        self.session = args.resume or str(uuid.uuid4())
        self.state_path = Path(tempfile.gettempdir()) / "cursor-sim-chats" / f"{self.session}.json"
        self.queries = 0
        self.calls = 0
        self.said: list[str] = []

    def send(self, event: dict) -> None:
        sys.stdout.write(json.dumps({**event, "session_id": self.session}) + "\n")
        sys.stdout.flush()

    # -- the run ------------------------------------------------------------------------------------------------------
    def run(self, prompt: str) -> int:
        failed = self._before(prompt)
        if failed is not None:
            return failed
        turn = self._turn()
        turns = self.sc.get("turns") or [[{"say": "Done."}]]
        self.record("print_turn", turn=turn, prompt=prompt, resume=self.args.resume, force=self.args.force)
        self.send({"type": "system", "subtype": "init", "apiKeySource": "env", "cwd": self.workspace, "model": self.sc.get("model", "Auto"),
                   "permissionMode": "default"})
        self.send({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}})
        if self.sc.get("noise"):  # what a real stream may hold besides its documented events
            sys.stdout.write('{"type": "assistant", "message": {"role": "assi\n')
            sys.stdout.write("[warn] telemetry disabled\n")
            self.send({"type": "status", "subtype": "heartbeat", "timestamp_ms": int(time.time() * 1000)})
        for step in turns[min(turn, len(turns) - 1)]:
            (name, arg), = step.items() if isinstance(step, dict) else ((step, None),)
            if name == "say":
                self.said.append(str(arg))
                self.send({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": str(arg)}]}})
            elif name == "shell":
                self._shell(str(arg))
            elif name == "write" and isinstance(arg, dict):
                self._write(str(arg["path"]), str(arg["content"]))
            elif name == "fail":
                sys.stderr.write(FAILURES[str(arg)] + "\n")
                return 1
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        self.state_path.write_text(json.dumps({"turn": turn + 1}))
        self.send({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1200, "duration_api_ms": 1100,
                   "result": "".join(self.said), "request_id": str(uuid.uuid4())})
        return 0

    def _before(self, prompt: str) -> int | None:
        """What fails before any model call: login, the model's name, the workspace's trust, an empty prompt."""
        fail = self.sc.get("fail")
        models = self.sc.get("models") or ["auto", "composer-1", "claude-4-sonnet", "gpt-5"]
        if fail == "auth":
            sys.stderr.write(FAILURES["auth"] + "\n")
            return 1
        if self.args.model and self.args.model not in models:
            sys.stderr.write(f"Cannot use this model: {self.args.model}. Available models: {', '.join(models)}\n")
            return 1
        if self.sc.get("trust_required") and not (self.args.trust or self.args.force):
            sys.stderr.write(TRUST + "\n")
            return 1
        if not prompt.strip():
            sys.stderr.write("Error: No prompt provided for print mode\n")
            return 1
        if fail in ("usage_limit", "connection"):
            self.send({"type": "system", "subtype": "init", "apiKeySource": "env", "cwd": self.workspace, "model": "Auto",
                       "permissionMode": "default"})
            sys.stderr.write(FAILURES[fail] + "\n")
            return 1
        return None

    def _turn(self) -> int:
        if not self.args.resume:
            return 0
        try:
            return int(json.loads(self.state_path.read_text())["turn"])
        except (OSError, ValueError, KeyError):
            return 0

    # -- a shell tool call ----------------------------------------------------------------------------------------------
    def _shell(self, command: str) -> None:
        self.calls += 1
        call_id = f"call_{self.calls}\n"  # call ids can hold a literal newline (CURSOR_CLI.md §4)
        args = {"command": command, "workingDirectory": self.workspace, "timeout": 30000}
        self.send({"type": "tool_call", "subtype": "started", "call_id": call_id, "tool_call": {"shellToolCall": {"args": args}}})
        verdict = self._approval(command)
        self.record("approval", command=command, **verdict)
        if "rejected" in verdict:
            result = {"rejected": {"reason": verdict["rejected"]}}
        else:
            done = subprocess.run(command, shell=True, cwd=self.workspace, capture_output=True, text=True, timeout=30)
            result = {"success": {"exitCode": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "executionTime": 10}}
        self.send({"type": "tool_call", "subtype": "completed", "call_id": call_id,
                   "tool_call": {"shellToolCall": {"args": args, "result": result}}})

    def _approval(self, command: str) -> dict:
        base = (shlex.split(command) or [""])[0]
        if f"Shell({base})" in self._denied():
            return {"rejected": f"Denied by permissions: Shell({base})", "by": "deny_list"}
        hooked = self._hooks("beforeShellExecution", {"command": command, "cwd": self.workspace})
        if hooked is not None and hooked.get("permission") == "deny":
            return {"rejected": str(hooked.get("agent_message") or "Blocked by hook"), "by": "hook"}
        if hooked is not None and hooked.get("permission") == "allow":
            return {"approved": True, "by": "hook"}
        if self.args.force and not (hooked and hooked.get("permission") == "ask"):
            return {"approved": True, "by": "force"}
        if self.sc.get("build", "new") == "old":
            return {"rejected": "User Rejected", "by": "no_force"}
        self.queries += 1
        self.send({"type": "interaction_query", "subtype": "request", "query_type": "shellRequestQuery",
                   "query": {"id": self.queries, "shellRequestQuery": {"args": {"command": command}, "skipApproval": False}}})
        line = sys.stdin.readline()
        try:
            answer = json.loads(line)["response"]
            assert answer["id"] == self.queries
            decision = answer["shellRequestResponse"]
        except (ValueError, KeyError, TypeError, AssertionError):
            return {"rejected": "User Rejected", "by": "stdin closed" if not line else f"unreadable answer: {line[:200]!r}"}
        if "approved" in decision:
            return {"approved": True, "by": "interaction_query"}
        return {"rejected": str((decision.get("rejected") or {}).get("reason") or "User Rejected"), "by": "interaction_query"}

    def _hooks(self, event: str, fields: dict) -> dict | None:
        """The workspace's `.cursor/hooks.json` commands for this event, run as Cursor runs them (the event's JSON on
        stdin, one JSON answer on stdout; exit 2 blocks): the first that denies, else the first that asks or allows."""
        try:
            hooks = json.loads((Path(self.workspace) / ".cursor" / "hooks.json").read_text()).get("hooks") or {}
        except (OSError, ValueError, AttributeError):
            return None
        said: dict | None = None
        for entry in hooks.get(event) or []:
            payload = {"hook_event_name": event, "conversation_id": self.session, "generation_id": str(uuid.uuid4()),
                       "workspace_roots": [self.workspace], **fields}
            done = subprocess.run(entry["command"], shell=True, input=json.dumps(payload), capture_output=True, text=True,
                                  cwd=self.workspace, timeout=30)
            try:
                answer = json.loads(done.stdout) if done.stdout.strip() else {}
            except ValueError:
                answer = {}
            if done.returncode == 2:
                answer = {"permission": "deny", "agent_message": answer.get("agent_message") or done.stderr.strip()}
            self.record("hook", hook_event=event, command=entry["command"], exit=done.returncode, answer=answer)
            if answer.get("permission") == "deny":
                return answer
            said = said or (answer if answer.get("permission") in ("ask", "allow") else None)
        return said

    def _write(self, path: str, content: str) -> None:
        """A file edit, as Cursor's agent applies it unasked, unless a preToolUse hook denies it."""
        self.calls += 1
        call_id = f"call_{self.calls}\n"
        full = os.path.join(self.workspace, path)
        args = {"path": full, "fileText": content}
        self.send({"type": "tool_call", "subtype": "started", "call_id": call_id, "tool_call": {"editToolCall": {"args": args}}})
        hooked = self._hooks("preToolUse", {"tool_name": "Write", "tool_input": {"path": full, "contents": content},
                                            "cwd": self.workspace})
        if hooked is not None and hooked.get("permission") == "deny":
            result: dict = {"rejected": {"reason": str(hooked.get("agent_message") or "Blocked by hook")}}
        else:
            Path(full).write_text(content)
            result = {"success": {"path": full, "linesAdded": content.count("\n")}}
        self.record("write", path=path, **result)
        self.send({"type": "tool_call", "subtype": "completed", "call_id": call_id, "tool_call": {"editToolCall": {"args": args, "result": result}}})

    def _denied(self) -> list[str]:
        folder = os.environ.get("CURSOR_CONFIG_DIR")
        if not folder:
            return []
        try:
            config = json.loads((Path(folder) / "cli-config.json").read_text())
        except (OSError, ValueError):
            return []
        return list((config.get("permissions") or {}).get("deny") or [])


def main(scenario: dict, argv: list[str], record: Recorder) -> int:
    ap = argparse.ArgumentParser(prog="cursor-sim -p")
    ap.add_argument("-p", "--print", action="store_true")
    ap.add_argument("--output-format", default="text")
    ap.add_argument("--workspace")
    ap.add_argument("--resume")
    ap.add_argument("--model")
    ap.add_argument("--trust", action="store_true")
    ap.add_argument("-f", "--force", "--yolo", action="store_true", dest="force")
    ap.add_argument("prompt", nargs="*")
    args = ap.parse_args(argv)
    if args.output_format != "stream-json":
        sys.stderr.write("cursor-sim: only --output-format stream-json is simulated\n")
        return 2
    prompt = " ".join(args.prompt) if args.prompt else ("" if sys.stdin.isatty() else sys.stdin.read())
    return PrintSim(scenario, args, record).run(prompt)
