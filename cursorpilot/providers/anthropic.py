"""Anthropic Messages API. The SDK is imported here only, when this provider is chosen (in the background: SdkImport)."""

from __future__ import annotations

import json
import os
from types import ModuleType

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import ProviderConfig
from cursorpilot.providers.llm import (
    ChatProvider,
    Failure,
    MalformedResponse,
    SdkClient,
    status_failure,
    tried_url,
)
from cursorpilot.providers.resident import remote
from cursorpilot.providers.schema import schema_for

DEFAULT_MODEL = "claude-haiku-4-5"
TOOL_WORDS = {"answer": "Give the answer to deliver to the program.",
              "judge_turn": "Judge the agent's turn: is the goal met, and if not, what to tell it next."}


def tool_for(kind: str, accepts: tuple[str, ...] = ()) -> dict:
    """The one tool the model must call: the structured reply of the question's kind (its text one of `accepts`, when
    the question says what it takes)."""
    name, schema = schema_for(kind, accepts)
    return {"name": name, "description": TOOL_WORDS[name], "input_schema": schema}


def _count(usage, name: str) -> int:
    value = getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _import() -> ModuleType:
    import anthropic

    return anthropic


class AnthropicProvider(ChatProvider):
    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    forms = ("tool", "text")  # the forced tool; a server that refuses tools gets the one-line grammar

    def __init__(self, config: ProviderConfig, api_key: str, **kw):
        super().__init__(config.model or DEFAULT_MODEL, config.retries, config.timeout, config.prices, **kw)
        base_url = config.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.base_url = base_url or "https://api.anthropic.com"
        self._remote = remote("anthropic", config, api_key)  # the SDK warm in the resident (resident.py), or imported here
        self._sdk = SdkClient(_import, eager=self._remote is None, make=lambda sdk: sdk.Anthropic(api_key=api_key, base_url=base_url,
                                                                                                 max_retries=0, timeout=config.timeout))

    @property
    def client(self):
        return self._sdk.get()

    def _send(self, system: str, user: str, kind: str = "input", accepts: tuple[str, ...] = ()):
        tool = tool_for(kind, accepts)
        extra = {"tools": [tool], "tool_choice": {"type": "tool", "name": tool["name"]}} if self.structured else {}
        resp = self.client.messages.create(
            model=self.model,
            # the stable prefix (decide/context.py: the instructions and the governing prompt) marked for the prompt cache
            system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": user}],
            max_tokens=800 if kind in ("turn_end", "policy") else 300,  # a verdict carries a message and its why
            **extra,
            # a cascade's second, sampled answer (decide/cascade.py); the SDK's create() no longer names the parameter
            **({"extra_body": {"temperature": self.sampling.temperature}} if self.sampling.temperature else {}),
        )
        try:
            blocks = list(resp.content)
        except TypeError as exc:
            raise MalformedResponse(f"malformed response: {exc}") from None
        texts, reasoning = [], []
        for block in blocks:
            shape = getattr(block, "type", None)
            if shape == "text" and isinstance(getattr(block, "text", None), str):
                texts.append(block.text)
            elif shape == "tool_use" and isinstance(getattr(block, "input", None), dict):
                texts = [json.dumps(block.input, ensure_ascii=False)]  # the structured reply wins over any prose
                break
            elif shape in ("thinking", "redacted_thinking"):
                reasoning.append(str(getattr(block, "thinking", None) or getattr(block, "data", "") or shape))
        if not texts:
            raise MalformedResponse("malformed response: no text block")
        usage = getattr(resp, "usage", None)
        read, written = _count(usage, "cache_read_input_tokens"), _count(usage, "cache_creation_input_tokens")
        # Anthropic's input_tokens leaves out what was read from or written to the cache: the prompt is all three
        tin = _count(usage, "input_tokens") + read + written
        return "".join(texts), tuple(reasoning), tin, _count(usage, "output_tokens"), read, None  # (no log-probabilities)

    def _classify(self, exc: Exception) -> Failure | None:
        if isinstance(exc, MalformedResponse):
            return Failure(str(exc), False)
        anthropic = self._sdk.sdk
        if isinstance(exc, anthropic.APITimeoutError):
            return Failure("timeout", True)
        if isinstance(exc, anthropic.APIConnectionError):
            return Failure(f"connection error: {exc} (tried {tried_url(exc, self.base_url)})", True)
        if isinstance(exc, anthropic.APIStatusError):
            return status_failure(exc.status_code, str(exc.message), exc.response.headers.get("retry-after"))
        return None


def warm() -> None:
    """The SDK and what its first call imports (the client's resource, the message types), imported now: the resident
    does this once for every later run (resident.py)."""
    sdk = _import()
    client = sdk.Anthropic(api_key="warm", base_url="http://127.0.0.1:9", max_retries=0, timeout=2.0)
    try:  # a call to a port nobody listens on: what a request imports (its transport, its types), at once refused
        client.messages.create(model="warm", max_tokens=1, messages=[{"role": "user", "content": "warm"}])
    except sdk.APIError:
        pass


def create(config: ProviderConfig) -> AnthropicProvider:
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise BadInput("--provider anthropic needs an API key: set ANTHROPIC_API_KEY")
    return AnthropicProvider(config, key)
