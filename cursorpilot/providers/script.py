"""The scripted provider (`--provider script`; `mock` is its old name): replies taken in order from a YAML file.

It answers whatever is asked with the next reply, so a sequence of look-alike prompts (pdb's `(Pdb)`) gets its
answers in order. The file is given with --rules: a list of replies, or {replies: [...]}. When the script runs out
it cannot answer (escalation). Tests use it as a model that says exactly what they want.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import AnswerRequest, ProviderConfig, Reply
from cursorpilot.yamlpos import load_with_positions, where

SHAPE = "; a script is a list of replies, in order, like: [y, 'v1.2', '<down><enter>'] (or replies: [...])"


class ScriptProvider:
    name = "script"
    needs_prompt = False

    def __init__(self, replies: list[str], model: str = "script"):
        self.queue: deque[str] = deque(replies)
        self.model = model
        self.requests: list[AnswerRequest] = []

    def answer(self, request: AnswerRequest) -> Reply:
        self.requests.append(request)
        if not self.queue:
            return Reply(text=None, source=self.model, reason="the script has no replies left")
        return Reply(text=self.queue.popleft(), source=self.model)


def read_script(path: Path) -> list[str]:
    data, positions = load_with_positions(path, hint=SHAPE, text_scalars=True)
    loc: tuple = ()
    if isinstance(data, dict) and "replies" in data:
        data, loc = data["replies"], ("replies",)
    if not isinstance(data, list):
        raise BadInput(f"{path}{where(positions, loc)}: not a list of replies{SHAPE}")
    for i, reply in enumerate(data):
        if not isinstance(reply, str):
            raise BadInput(f"{path}{where(positions, (*loc, i))}: reply {i + 1} is not text{SHAPE}")
    return data


def create(config: ProviderConfig) -> ScriptProvider:
    if config.rules_file is None:
        raise BadInput("--provider script needs --rules FILE holding the scripted replies" + SHAPE)
    return ScriptProvider(read_script(config.rules_file), model=config.model or "script")
