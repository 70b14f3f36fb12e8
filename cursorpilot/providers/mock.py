"""A scripted provider for tests: replies are taken in order from a YAML file.

The file is given with --rules: either a list of strings or {replies: [...]}.
When the script runs out, the provider cannot answer (escalation).
"""

from __future__ import annotations

from collections import deque

import yaml

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import AnswerRequest, ProviderConfig, Reply


class MockProvider:
    name = "mock"
    needs_prompt = False

    def __init__(self, replies: list[str], model: str = "mock"):
        self.queue: deque[str] = deque(replies)
        self.model = model
        self.requests: list[AnswerRequest] = []

    def answer(self, request: AnswerRequest) -> Reply:
        self.requests.append(request)
        if not self.queue:
            return Reply(text=None, source=self.model, reason="mock script exhausted")
        return Reply(text=self.queue.popleft(), source=self.model)


def create(config: ProviderConfig) -> MockProvider:
    if config.rules_file is None:
        raise BadInput("--provider mock needs --rules FILE holding the scripted replies")
    try:
        data = yaml.safe_load(config.rules_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{config.rules_file}: mock script not found") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{config.rules_file}: invalid YAML: {exc}".splitlines()[0]) from None
    if isinstance(data, dict):
        data = data.get("replies")
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise BadInput(f"{config.rules_file}: a mock script is a list of reply strings (or replies: [...])")
    return MockProvider(data, model=config.model or "mock")
