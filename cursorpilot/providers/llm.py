"""What the LLM providers share: retries with backoff, reply cleaning, prices.

Vendor SDKs are not imported here; each provider module passes in how to recognise
its SDK's retryable errors.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from cursorpilot.providers.base import Attempt

BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 60.0

# USD per 1M tokens (input, output); overridable with --prices FILE. Unknown models get no cost.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "claude-3-5-haiku-latest": (0.80, 4.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
}


class SdkImport:
    """A vendor SDK imported on a background thread from the moment its provider is chosen. Importing openai takes
    1-2 s and anthropic 2-3 s (their pydantic types): on the main thread that delayed the program's start, on the
    first call the first answer; in the background it overlaps the program's start-up and its first prompt."""

    def __init__(self, load: Callable[[], ModuleType]):
        self._module: ModuleType | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, args=(load,), name="sdk-import", daemon=True)
        self._thread.start()

    def _load(self, load: Callable[[], ModuleType]) -> None:
        try:
            self._module = load()
        except BaseException as exc:  # noqa: BLE001 - raised where the SDK is used, as a provider error
            self._error = exc

    def get(self) -> ModuleType:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._module is not None
        return self._module


class SdkClient:
    """A provider's SDK client, made on first use from the SDK imported in the background (SdkImport)."""

    def __init__(self, load: Callable[[], ModuleType], make: Callable[[ModuleType], object]):
        self._import = SdkImport(load)
        self._make = make
        self._client: object | None = None

    @property
    def sdk(self) -> ModuleType:
        return self._import.get()

    def get(self):
        if self._client is None:
            self._client = self._make(self.sdk)
        return self._client


@dataclass(slots=True, frozen=True)
class Failure:
    """An SDK error, classified by the provider module."""

    message: str
    retryable: bool
    retry_after: float | None = None


class GiveUp(Exception):
    def __init__(self, message: str, attempts: tuple[Attempt, ...], calls: int):
        super().__init__(message)
        self.attempts = attempts
        self.calls = calls


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), RETRY_AFTER_CAP)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(when.timestamp() - time.time(), 0.0), RETRY_AFTER_CAP)


def backoff(attempt: int, rng: random.Random) -> float:
    """Exponential with full jitter in [50%, 100%] of the step."""
    step = min(BACKOFF_CAP, BACKOFF_BASE * (2**attempt))
    return step * (0.5 + rng.random() / 2)


def with_retries(
    call: Callable[[], object],
    classify: Callable[[Exception], Failure | None],
    retries: int,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> tuple[object, tuple[Attempt, ...], int]:
    """Run call(); retry retryable failures up to ``retries`` times. Returns (result, attempts, calls)."""
    rng = rng or random.Random()
    attempts: list[Attempt] = []
    for n in range(retries + 1):
        try:
            return call(), tuple(attempts), n + 1
        except Exception as exc:  # noqa: BLE001 - classified below; unknown errors are not retried
            failure = classify(exc) or Failure(f"{type(exc).__name__}: {exc}", retryable=False)
            if not failure.retryable or n == retries:
                attempts.append(Attempt(failure.message, None))
                why = "retries exhausted" if failure.retryable else "not retryable"
                raise GiveUp(f"{failure.message} ({why} after {n + 1} call(s))", tuple(attempts), n + 1) from exc
            wait = failure.retry_after if failure.retry_after is not None else backoff(n, rng)
            attempts.append(Attempt(failure.message, round(wait, 3)))
            sleep(wait)
    raise AssertionError("unreachable")


_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|\Z)", re.S | re.I)
_FENCED = re.compile(r"\A```[\w-]*\n?(.*?)\n?```\Z", re.S)

# The structured reply: what to do, the exact text, whether Enter follows. Sent as a JSON schema (OpenAI-compatible
# servers) or as the one tool the model must call (Anthropic). Servers that can't do either get the one-line grammar.
REPLY_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["type", "wait", "human"]},
        "text": {"type": "string"},
        "submit": {"type": "boolean"},
    },
    "required": ["action", "text", "submit"],
    "additionalProperties": False,
}
# A turn end's structured reply (kind turn_end): the verdict, the next message for the agent (continue), and why.
TURN_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["done", "continue", "blocked", "impossible"]},
        "message": {"type": "string"},
        "why": {"type": "string"},
    },
    "required": ["verdict", "message", "why"],
    "additionalProperties": False,
}


# A yes weighed (kind weigh, decide/weigh.py): allow or refuse, the governing prompt's words that ask for it, and why.
WEIGH_SCHEMA = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["allow", "refuse"]},
        "quote": {"type": "string"},
        "why": {"type": "string"},
    },
    "required": ["decision", "quote", "why"],
    "additionalProperties": False,
}


def schema_for(kind: str) -> tuple[str, dict]:
    """The structured reply a question of this kind asks for: its name (the Anthropic tool's) and its JSON schema."""
    if kind == "weigh":
        return "weigh_yes", WEIGH_SCHEMA
    return ("judge_turn", TURN_SCHEMA) if kind == "turn_end" else ("answer", REPLY_SCHEMA)


@dataclass(slots=True, frozen=True)
class Cleaned:
    text: str | None  # None: nothing typeable remains
    removed: tuple[str, ...]
    reason: str = ""
    wait: bool = False
    submit: bool | None = None
    turn: str | None = None  # a turn end's verdict (TURN_SCHEMA)
    judged: str | None = None  # a yes weighed (WEIGH_SCHEMA): allow | refuse; text: the quote, reason: why


def clean_reply(raw: str, multiline_ok: bool = False) -> Cleaned:
    """Never type reasoning; unwrap a code fence around the whole reply; refuse several lines.

    The answer's own characters are never changed: quotes, spaces and punctuation belong to it ('active' is a
    Python string, active a NameError). Everything removed is returned, for the transcript.
    """
    removed: list[str] = []

    def drop(m: re.Match[str]) -> str:
        removed.append(m.group(0))
        return ""

    text = _THINK.sub(drop, raw)
    if removed:
        text = text.strip("\n")
    m = _FENCED.match(text.strip())
    if m:
        removed.append("code fence")
        text = m.group(1)
    structured = _structured(text)
    if structured is not None:
        return _from_structured(structured, tuple(removed), multiline_ok)
    text = text.strip("\r\n")
    if not text:
        return Cleaned(None, tuple(removed), "the reply was empty after removing reasoning")
    if "\n" in text and not multiline_ok:
        return Cleaned(None, tuple(removed), "multi-line reply refused: the prompt asked for one line")
    return Cleaned(text, tuple(removed))


def _structured(text: str) -> dict | None:
    t = text.strip()
    if not (t.startswith("{") and t.endswith("}")):
        return None
    try:
        data = json.loads(t)
    except ValueError:
        return None
    return data if isinstance(data, dict) and ("action" in data or "verdict" in data or "decision" in data) else None


def _from_structured(data: dict, removed: tuple[str, ...], multiline_ok: bool) -> Cleaned:
    if "verdict" in data:
        return _turn_verdict(data, removed, multiline_ok)
    if "decision" in data:
        decision, quote, why = data.get("decision"), data.get("quote"), data.get("why")
        if decision not in ("allow", "refuse"):
            return Cleaned(None, removed, f"malformed structured reply: decision {decision!r}")
        return Cleaned(quote if isinstance(quote, str) else "", removed, why if isinstance(why, str) else "", judged=decision)
    action, text, submit = data.get("action"), data.get("text"), data.get("submit")
    if not isinstance(text, str):
        text = ""
    if action == "wait":
        return Cleaned(None, removed, "the answerer says nobody is being asked", wait=True)
    if action == "human":
        return Cleaned(None, removed, f"the answerer asks for a human: {text or 'no question given'}")
    if action != "type":
        return Cleaned(None, removed, f"malformed structured reply: action {action!r}")
    if ("\n" in text or "\r" in text) and not multiline_ok:
        return Cleaned(None, removed, "multi-line reply refused: the prompt asked for one line")
    return Cleaned(text, removed, submit=submit if isinstance(submit, bool) else None)


def _turn_verdict(data: dict, removed: tuple[str, ...], multiline_ok: bool) -> Cleaned:
    """A turn end's verdict; its message is the agent's next instruction, delivered as given (one line unless the
    channel takes several). What is not a verdict is left for the decision path to refuse."""
    verdict, message, why = data.get("verdict"), data.get("message"), data.get("why")
    why = why if isinstance(why, str) else ""
    if not isinstance(verdict, str):
        return Cleaned(None, removed, f"malformed structured reply: verdict {verdict!r}")
    message = message if isinstance(message, str) and verdict == "continue" else None
    if message is not None and ("\n" in message.strip() or "\r" in message.strip()) and not multiline_ok:
        return Cleaned(None, removed, "multi-line reply refused: the agent's composer takes one line")
    return Cleaned(message, removed, why, turn=verdict)


def load_prices(path) -> dict[str, tuple[float, float]] | None:
    """--prices FILE: {model: [usd per 1M input tokens, usd per 1M output tokens]}."""
    if path is None:
        return None
    import yaml

    from cursorpilot.errors import BadInput

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return {str(k): (float(v[0]), float(v[1])) for k, v in data.items()}
    except (yaml.YAMLError, AttributeError, TypeError, ValueError, IndexError, KeyError):
        raise BadInput(f"{path}: prices must map model -> [usd_per_1M_in, usd_per_1M_out]") from None


def cost(model: str, tokens_in: int, tokens_out: int, prices: dict[str, tuple[float, float]] | None) -> float | None:
    table = {**DEFAULT_PRICES, **(prices or {})}
    price = table.get(model)
    if price is None:
        return None
    return round(tokens_in / 1e6 * price[0] + tokens_out / 1e6 * price[1], 8)


class ChatProvider:
    """One request per question; retries, cleaning, usage and cost are handled here."""

    name = "llm"
    needs_prompt = True
    key_env = ""

    def __init__(self, model: str, retries: int, timeout: float, prices=None, sleep: Callable[[float], None] = time.sleep):
        self.model = model
        self.retries = retries
        self.timeout = timeout
        self.prices = prices
        self._sleep = sleep

    structured = True  # ask for the structured reply; off for good once the server refuses it

    # provider modules implement these two
    def _send(self, system: str, user: str, kind: str = "input") -> tuple[str, tuple[str, ...], int, int]:
        """Returns (text, removed reasoning, input tokens, output tokens); raises SDK errors.
        With self.structured, asks for the structured reply of the question's kind (schema_for) and returns the
        object as JSON text."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> Failure | None:
        raise NotImplementedError

    def answer(self, request):  # -> Reply
        from cursorpilot.providers.base import Reply, Usage

        t0 = time.monotonic()
        source = f"{self.name}:{self.model}"
        spent = 0
        while True:
            try:
                result, attempts, calls = with_retries(
                    lambda: self._send(request.system, request.user, request.kind), self._classify, self.retries, self._sleep
                )
                break
            except GiveUp as exc:
                if self.structured and _refused_structured(exc):  # a server without structured output: the grammar, for good
                    self.structured = False
                    spent += exc.calls
                    continue
                usage = Usage(latency_s=round(time.monotonic() - t0, 3), calls=spent + exc.calls)
                return Reply(text=None, source=source, reason=f"provider error: {exc}", usage=usage, attempts=exc.attempts)
        text, reasoning, tin, tout = result  # type: ignore[misc]
        cleaned = clean_reply(text, multiline_ok=request.multiline)
        usage = Usage(tin, tout, round(time.monotonic() - t0, 3), cost(self.model, tin, tout, self.prices), spent + calls)
        return Reply(
            text=cleaned.text, source=source, reason=cleaned.reason, usage=usage, raw=text,
            removed=(*reasoning, *cleaned.removed), attempts=attempts, wait=cleaned.wait, submit=cleaned.submit, turn=cleaned.turn,
            judged=cleaned.judged,
        )


def status_failure(status: int, message: str, retry_after: str | None) -> Failure:
    retryable = status == 429 or status >= 500 or status == 408
    return Failure(f"HTTP {status}: {message}"[:300], retryable, parse_retry_after(retry_after) if retryable else None)


def _refused_structured(exc: GiveUp) -> bool:
    """A 400/422 that names the structured-output parameters: the server does not support them."""
    text = str(exc).lower()
    return ("http 400" in text or "http 422" in text) and any(
        w in text for w in ("response_format", "json_schema", "tool_choice", "tools", "structured"))
