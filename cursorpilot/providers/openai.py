"""OpenAI Chat Completions (and any OpenAI-compatible server: Ollama, vLLM, LM Studio, llama.cpp, OpenRouter).

The SDK is imported here only, when this provider is chosen (in the background: SdkImport). Its own retries are off:
ours honour Retry-After and are recorded in the transcript.
"""

from __future__ import annotations

import os
from types import ModuleType

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import ProviderConfig
from cursorpilot.providers.confidence import margin
from cursorpilot.providers.llm import (
    ChatProvider,
    Failure,
    MalformedResponse,
    SdkClient,
    status_failure,
    tried_url,
)
from cursorpilot.providers.local import is_local
from cursorpilot.providers.resident import remote
from cursorpilot.providers.schema import enums_for, lean, schema_for

DEFAULT_MODEL = "gpt-4o-mini"
TOP_LOGPROBS = 20  # the likeliest tokens asked for at each token of a reply whose confidence counts (OpenAI allows 0-20): the
# answers a grammar allows must be among them, or a choice looks surer than it was


class OpenAIProvider(ChatProvider):
    name = "openai"
    key_env = "OPENAI_API_KEY"
    # json_schema (OpenAI, vLLM, Ollama, llama.cpp's llama-server); json_object with the schema beside it, which
    # llama-cpp-python's server turns into a grammar (it answers json_schema with HTTP 500); then the one-line grammar.
    forms = ("json_schema", "json_object", "text")

    def __init__(self, config: ProviderConfig, api_key: str, **kw):
        super().__init__(config.model or DEFAULT_MODEL, config.retries, config.timeout, config.prices, **kw)
        base_url = base_url_of(config)
        self.base_url = base_url or "https://api.openai.com/v1"
        self._remote = remote("openai", config, api_key)  # the SDK warm in the resident (resident.py), or imported here
        self._sdk = SdkClient(_import, eager=self._remote is None, make=lambda sdk: sdk.OpenAI(api_key=api_key, base_url=base_url,
                                                                                              max_retries=0, timeout=config.timeout))

    @property
    def client(self):
        return self._sdk.get()

    def _send(self, system: str, user: str, kind: str = "input", accepts: tuple[str, ...] = ()):
        name, schema = schema_for(kind, accepts)
        extra: dict[str, object] = {}
        if self.form == "json_schema":
            extra = {"response_format": {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}}
        elif self.form == "json_object":
            extra = {"response_format": {"type": "json_object", "schema": lean(schema)}}
        if self.sampling.logprobs:  # a cascade's confidence (confidence.py): the likeliest tokens at each of its tokens
            extra |= {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
        resp = self.client.chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            temperature=self.sampling.temperature,
            max_tokens=800 if kind in ("turn_end", "policy") else 300,  # a verdict carries a message and its why; a compile its entries
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
        tin, tout = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
        sure = answer_margin(resp, text, enums_for(kind, accepts)) if self.sampling.logprobs else None
        return text, reasoning, tin, tout, cached_tokens(resp), sure

    def _classify(self, exc: Exception) -> Failure | None:
        if isinstance(exc, MalformedResponse):
            return Failure(str(exc), False)
        openai = self._sdk.sdk
        if isinstance(exc, openai.APITimeoutError):
            return Failure("timeout", True)
        if isinstance(exc, openai.APIConnectionError):
            return Failure(f"connection error: {exc} (tried {tried_url(exc, self.base_url)})", True)
        if isinstance(exc, openai.APIStatusError):
            return status_failure(exc.status_code, str(exc.message), exc.response.headers.get("retry-after"))
        return None


def answer_margin(resp, text: str, enums: dict[str, tuple[str, ...]]) -> float | None:
    """The answer's margin from the reply's token log-probabilities (confidence.py), None where the server gave none."""
    try:
        content = resp.choices[0].logprobs.content
        tokens = [(t.token, float(t.logprob), [(x.token, float(x.logprob)) for x in (t.top_logprobs or ())]) for t in content]
    except (AttributeError, IndexError, TypeError, ValueError):
        return None
    return margin(tokens, text, enums)


def _count(obj, name: str) -> int:
    value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cached_tokens(resp) -> int:
    """The prompt tokens the server read from its cache: OpenAI's (and vLLM's, and llama.cpp's llama-server's)
    usage.prompt_tokens_details.cached_tokens, else llama-server's timings.cache_n (the prompt tokens it did not have to
    evaluate again); 0 when the server says nothing (llama-cpp-python's server keeps the prefix but reports none)."""
    details = getattr(getattr(resp, "usage", None), "prompt_tokens_details", None)
    if (cached := _count(details, "cached_tokens")) or details is not None:
        return cached
    extra = getattr(resp, "model_extra", None) or {}
    return _count(extra.get("timings"), "cache_n")


def _import() -> ModuleType:
    import openai

    return openai


def warm() -> None:
    """The SDK and what its first call imports (the client's resource, the chat types), imported now: the resident does
    this once for every later run (resident.py)."""
    sdk = _import()
    client = sdk.OpenAI(api_key="warm", base_url="http://127.0.0.1:9", max_retries=0, timeout=2.0)
    try:  # a call to a port nobody listens on: what a request imports (its transport, its types), at once refused
        client.chat.completions.create(model="warm", messages=[{"role": "user", "content": "warm"}], max_tokens=1)
    except sdk.APIError:
        pass


def base_url_of(config: ProviderConfig) -> str | None:
    return config.base_url or os.environ.get("OPENAI_BASE_URL") or None


def create(config: ProviderConfig) -> OpenAIProvider:
    """A key from OPENAI_API_KEY; a server on this machine or a private network (Ollama, llama.cpp, vLLM at
    --base-url) needs none, so none is demanded (the SDK still wants a string: it sends a placeholder)."""
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        if not is_local(base_url_of(config)):
            raise BadInput("--provider openai needs an API key: set OPENAI_API_KEY (a server of your own at --base-url needs none)")
        key = "no-key"
    return OpenAIProvider(config, key)
