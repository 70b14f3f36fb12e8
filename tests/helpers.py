"""What tests that drive real programs with a model share: the fake key, the model's view of a prompt, its replies,
and small programs written on the spot."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import yaml

from cursorpilot.detect.snapshot import Snapshot, snapshot_from_text

CAPTURES = Path(__file__).resolve().parent / "data" / "captures"
_CURSORS = yaml.safe_load((CAPTURES / "cursors.yaml").read_text()) if (CAPTURES / "cursors.yaml").exists() else {}
KEY = "sk-test-0123456789abcdefghij"  # for the real SDKs, talking to tests/fakes/llm_server.py on 127.0.0.1


def question_of(prompt: str) -> str:
    """The "The question" section of a prompt the pilot sent the model."""
    return prompt.split("# The question", 1)[1].split("# Answer format", 1)[0]


def typed(text: str, submit: bool = True) -> str:
    """The model's structured reply: type this (then Enter, unless submit is False)."""
    return json.dumps({"action": "type", "text": text, "submit": submit})


def verdict(verdict: str, message: str = "", why: str = "") -> str:
    """The model's structured judgement of an agent's turn end (TURN_SCHEMA): done, continue with the message, ..."""
    return json.dumps({"verdict": verdict, "message": message, "why": why or f"judged {verdict}"})


def is_turn_end(prompt: str) -> bool:
    """The pilot asks the model to judge an agent's turn end (an agent stopped), not to answer a prompt."""
    return "Kind: turn_end" in prompt.rpartition("# The question")[2]


def is_weigh(prompt: str) -> bool:
    """The pilot asks the model for the focused judgment of a yes (decide/weigh.py), not to answer a prompt."""
    return "# The answer about to be given" in prompt


def judged(decision: str, quote: str = "", why: str = "", act: str | None = None, names: str | None = None) -> str:
    """The judge's structured reply on a yes (WEIGH_SCHEMA): allow (quoting a grant of the compiled policy, its act, and
    the question's words that name its object) or refuse."""
    return json.dumps({"decision": decision, "quote": quote, "why": why or f"judged {decision}", **({"act": act} if act else {}),
                       **({"names": names} if names is not None else {})})


def is_policy(prompt: str) -> bool:
    """The pilot asks the model to compile the governing prompt into a policy (decide/policyfile.py)."""
    return "Compile them into the policy." in prompt


def policy(grants: list[tuple[str, str, str]] = (), prohibitions: list[tuple[str, str, str]] = ()) -> str:
    """A model's compile (POLICY_SCHEMA): (act, object, quote) entries."""
    entry = lambda e: {"act": e[0], "object": e[1], "quote": e[2]}  # noqa: E731
    return json.dumps({"grants": [entry(e) for e in grants], "prohibitions": [entry(e) for e in prohibitions]})


def script(tmp_path, name: str, body: str) -> list[str]:
    """A Python program written to tmp_path, as a command line."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def capture(path: Path) -> Snapshot:
    """A golden capture (tests/data/captures) as the screen it was: its cursor where the agent had it, when the refresh
    kept it (cursors.yaml), else on the row after the last with text."""
    cursor = _CURSORS.get(path.name)
    return snapshot_from_text(path.read_text(), cursor=tuple(cursor) if cursor else None)
