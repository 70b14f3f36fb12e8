"""`cursor-pilot hook AGENT`: one tool call's event on stdin, the agent's answer on stdout (hooks/). It sits on every
tool call an agent makes, so it is read without typer (startup/start.py hands it here first) and imports only the
decision path's pure parts: no rich, no pydantic, no SDK.

Whatever goes wrong answers deny, in the agent's protocol (hooks/calls.failed): a payload it cannot read, a policy it
cannot load, an exception, and a decision that takes longer than its own deadline (`DEADLINE`, well inside the
timeout `hook install` gives the agent, since an agent that times a hook out lets the call through).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from cursorpilot.hooks import calls

if TYPE_CHECKING:
    from cursorpilot.decide.compiled import Policy
    from cursorpilot.hooks.verdict import HookVerdict

DEADLINE = 8.0  # seconds; install gives the agent 30
USAGE = "cursor-pilot hook {claude|gemini|cursor} [--prompt FILE_OR_TEXT] [--policy FILE] [--record FILE]"


def serve(args: list[str], stdin: TextIO | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None,
          env: Mapping[str, str] | None = None) -> int:
    """Answer one event; the exit code the agent's protocol gives the answer."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    agent = args[0] if args else ""
    event = ""
    options: dict[str, str] = {}

    def write(reply: calls.HookOutput) -> int:
        stdout.write(reply.stdout + ("\n" if reply.stdout else ""))
        stdout.flush()
        if reply.stderr:
            stderr.write(reply.stderr)
            stderr.flush()
        return reply.code

    def late(signum: int, frame: object) -> None:
        os._exit(write(calls.failed(agent if agent in calls.AGENTS else "claude", event, f"no decision within {DEADLINE:g} s")))

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, DEADLINE)
    try:
        if agent not in calls.AGENTS:
            return write(calls.failed("claude", "", f"no such agent {agent!r}: {USAGE}"))
        options = _options(args[1:])
        call = calls.read(agent, stdin.read(), env if env is not None else os.environ)
        event = call.event
        verdict = judge(call, _policy(options), tuple(v for k, v in options.items() if os.path.isfile(v)))
        _record(options.get("record"), call, verdict.decision, verdict.reason, verdict.quote)
        return write(calls.answer(agent, call.event, verdict.decision, verdict.reason))
    except Exception as exc:  # anything at all: the call is refused, and the reason said
        from cursorpilot.errors import PilotError

        said = str(exc) if isinstance(exc, (calls.Malformed, PilotError)) else f"internal error: {type(exc).__name__}: {exc}"
        reply = calls.failed(agent, event, said)
        _record(options.get("record"), None, calls.DENY, reply.stderr.strip(), None, agent)
        return write(reply)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _options(args: list[str]) -> dict[str, str]:
    from cursorpilot.errors import BadInput

    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in ("--prompt", "--policy", "--record"):
            raise BadInput(f"unknown option {args[i]!r}: {USAGE}")
        if not eq:
            if i + 1 >= len(args):
                raise BadInput(f"{name} takes a value: {USAGE}")
            i += 1
            value = args[i]
        out[name[2:]] = value
        i += 1
    return out


def _policy(options: dict[str, str]) -> Policy:
    """The policy as `run` takes it: a pinned file (`--policy`), else the governing prompt read lexically (`--prompt`,
    a file or its text); both given: the file's entries and the prompt's together."""
    from cursorpilot.decide.compiled import lexical, merged

    parts = []
    if "policy" in options:
        from pathlib import Path

        from cursorpilot.decide.policyfile import load

        parts.append(load(Path(options["policy"]).expanduser()))
    if "prompt" in options:
        from cursorpilot.commands.run import load_governing_prompt

        parts.append(lexical(load_governing_prompt(options["prompt"])))
    if not parts:
        from cursorpilot.errors import BadInput

        raise BadInput(f"no policy: give --prompt or --policy ({USAGE})")
    return parts[0] if len(parts) == 1 else merged(parts)


def _record(path: str | None, call: calls.Call | None, decision: str, reason: str, quote: str | None, agent: str = "") -> None:
    """A decision, for the run that installed the hook (`--record`, a file of its log folder; channels/agent/runhook.py
    reads it): one JSON line per call the hook allowed, denied or asked about (a call it had nothing to say about is
    not a decision). One write of one line in append mode, so that hooks running side by side never mix their lines."""
    if not path or decision == calls.PASS:
        return
    import json

    from cursorpilot.hooks import acts

    line = {"agent": call.agent if call else agent, "event": call.event if call else None, "tool": call.tool if call else None,
            "acts": sorted(acts.does(call).acts) if call else [], "target": _target(call), "decision": decision,
            "reason": reason, "quote": quote}
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    except OSError:  # the decision stands; only its record is lost (the run says none came)
        pass


def _target(call: calls.Call | None) -> str | None:
    """What the call names, as a person reads it: its command, its files, or its input."""
    if call is None:
        return None
    return (call.command or " ".join(call.paths) or call.text)[:2000] or None


def judge(call: calls.Call, policy: Policy, guarded: tuple[str, ...] = ()) -> HookVerdict:
    """The call's verdict under the policy: what it does, where, matched (hooks/verdict.py); `guarded`: the prompt or
    policy file the hook reads, which no call may change."""
    from cursorpilot.hooks import acts, paths, verdict

    home = os.path.expanduser("~")
    does = acts.does(call)
    targets = paths.resolve(does.touches, call.cwd, call.root, home, guarded)
    return verdict.decide(policy, does, targets, home)


def install(agent: str, prompt: str | None, policy: str | None, project: str) -> int:
    """`hook install AGENT`: the hook written into the project's settings, its policy checked and shown first."""
    from pathlib import Path

    from cursorpilot.errors import BadInput
    from cursorpilot.hooks import install as settings

    if agent not in calls.AGENTS:
        raise BadInput(f"no hook for {agent!r}: one of {', '.join(calls.AGENTS)}")
    options = {k: v for k, v in (("prompt", prompt), ("policy", policy)) if v is not None}
    compiled = _policy(options)
    folder = Path(project).expanduser().resolve()
    if not folder.is_dir():
        raise BadInput(f"--project {project}: not a folder")
    path = settings.install(agent, folder, settings.command(agent, prompt, Path(policy) if policy else None))
    print(f"cursor-pilot hook installed for {agent}: {path}")
    print("\n".join(compiled.lines()))
    print(f"Take it out again with: cursor-pilot hook uninstall {agent} --project {folder}")
    return 0


def uninstall(agent: str, project: str) -> int:
    """`hook uninstall AGENT`: exactly what install wrote, taken out."""
    from pathlib import Path

    from cursorpilot.errors import BadInput
    from cursorpilot.hooks import install as settings

    if agent not in calls.AGENTS:
        raise BadInput(f"no hook for {agent!r}: one of {', '.join(calls.AGENTS)}")
    path, how = settings.uninstall(agent, Path(project).expanduser().resolve())
    print(f"cursor-pilot hook uninstalled for {agent}: {path} ({how})")
    return 0
