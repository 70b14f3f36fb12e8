"""OpenAI Chat Completions (and any OpenAI-compatible server: Ollama, vLLM, LM Studio, llama.cpp, OpenRouter).

The SDK is imported here only, when this provider is chosen (in the background: SdkImport). Its own retries are off:
ours honour Retry-After and are recorded in the transcript.
"""

from __future__ import annotations

import os
from types import ModuleType

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import ProviderConfig
from cursorpilot.providers.llm import ChatProvider, Failure, SdkClient, schema_for, status_failure

DEFAULT_MODEL = "gpt-4o-mini"


class OpenAIProvider(ChatProvider):
    name = "openai"
    key_env = "OPENAI_API_KEY"

    def __init__(self, config: ProviderConfig, api_key: str, **kw):
        super().__init__(config.model or DEFAULT_MODEL, config.retries, config.timeout, config.prices, **kw)
        base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._sdk = SdkClient(_import, lambda sdk: sdk.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=config.timeout))

    @property
    def client(self):
        return self._sdk.get()

    def _send(self, system: str, user: str, kind: str = "input"):
        name, schema = schema_for(kind)
        extra = {"response_format": {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}} \
            if self.structured else {}
        resp = self.client.chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            temperature=0,
            max_tokens=800 if kind == "turn_end" else 300,  # a verdict carries a message and its why
            **extra,
        )
        try:
            message = resp.choices[0].message
            text = message.content
        except (AttributeError, IndexError, TypeError) as exc:
            raise MalformedResponse(f"malformed response: {exc}") from None
        if not isinstance(text, str):
            raise MalformedResponse("malformed response: no text content")
        extra = getattr(message, "model_extra", None) or {}
        reasoning = tuple(str(extra[k]) for k in ("reasoning_content", "reasoning") if extra.get(k))
        usage = getattr(resp, "usage", None)
        return text, reasoning, getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0

    def _classify(self, exc: Exception) -> Failure | None:
        if isinstance(exc, MalformedResponse):
            return Failure(str(exc), False)
        openai = self._sdk.sdk
        if isinstance(exc, openai.APITimeoutError):
            return Failure("timeout", True)
        if isinstance(exc, openai.APIConnectionError):
            return Failure(f"connection error: {exc}", True)
        if isinstance(exc, openai.APIStatusError):
            return status_failure(exc.status_code, str(exc.message), exc.response.headers.get("retry-after"))
        return None


class MalformedResponse(Exception):
    pass


def _import() -> ModuleType:
    import openai

    return openai


def create(config: ProviderConfig) -> OpenAIProvider:
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        raise BadInput("--provider openai needs an API key: set OPENAI_API_KEY")
    return OpenAIProvider(config, key)
