"""What the LLM providers share: retries with backoff, prices, the chat call (its reply is cleaned by cleaning.py).

Vendor SDKs are not imported here; each provider module passes in how to recognise
its SDK's retryable errors.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING

from cursorpilot.providers.base import FailedAttempt, Sampling
from cursorpilot.providers.cleaning import clean_reply
from cursorpilot.providers.schema import names_structured

if TYPE_CHECKING:
    from cursorpilot.providers.resident import Remote

# statuses worth a retry: a timeout, a conflict, too many requests, and a server error that may pass; never one that
# says the server does not do this (501 Not Implemented from a plain web server, 505, 506, 508, 510, 511)
RETRYABLE = (408, 409, 429)
NEVER_PASSES = (501, 505, 506, 508, 510, 511)
NOT_THIS_API = (405, 501)  # a web server that is not the model's API (http.server answers a POST with 501)
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 60.0

# USD per 1M tokens (input, output, cached input: OpenAI's cached prompt tokens, Anthropic's cache reads); overridable
# with --prices FILE. Unknown models get no cost; a price without a cached rate counts cached tokens as input.
DEFAULT_PRICES: dict[str, tuple[float, ...]] = {
    "gpt-4o-mini": (0.15, 0.60, 0.075),
    "gpt-4o": (2.50, 10.00, 1.25),
    "gpt-4.1-mini": (0.40, 1.60, 0.10),
    "gpt-4.1": (2.00, 8.00, 0.50),
    "claude-3-5-haiku-latest": (0.80, 4.00, 0.08),
    "claude-haiku-4-5": (1.00, 5.00, 0.10),
    "claude-sonnet-4-5": (3.00, 15.00, 0.30),
}
# one call's reply text, reasoning removed, tokens in, out, cached, and its answer's margin (confidence.py; None: not asked)
Sent = tuple[str, tuple[str, ...], int, int, int, float | None]


class SdkImport:
    """A vendor SDK imported on a background thread from the moment its provider is chosen. Importing openai takes
    1-2 s and anthropic 2-3 s (their pydantic types): on the main thread that delayed the program's start, on the
    first call the first answer; in the background it overlaps the program's start-up and its first prompt (but
    holds the GIL while it does: the resident, resident.py, imports it in a process of its own instead, and then
    this is only its fallback, started when first needed)."""

    def __init__(self, load: Callable[[], ModuleType], eager: bool = True):
        self._module: ModuleType | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, args=(load,), name="sdk-import", daemon=True)
        self._started = threading.Lock()
        if eager:
            self._start()

    def _start(self) -> None:
        with self._started:
            if not self._thread.is_alive() and self._thread.ident is None:
                self._thread.start()

    def _load(self, load: Callable[[], ModuleType]) -> None:
        try:
            self._module = load()
        except BaseException as exc:
            self._error = exc

    def get(self) -> ModuleType:
        self._start()
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._module is not None
        return self._module


class SdkClient:
    """A provider's SDK client, made on first use from the SDK imported in the background (SdkImport)."""

    def __init__(self, load: Callable[[], ModuleType], make: Callable[[ModuleType], object], eager: bool = True):
        self._import = SdkImport(load, eager)
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
    refused: bool = False  # the server refuses the structured form asked for (names_structured): the next form, not a retry


class MalformedResponse(Exception):
    """The SDK's response has no answer in it (no text, a shape the provider module can't read): a failure, not retried."""


class GiveUp(Exception):
    def __init__(self, message: str, attempts: tuple[FailedAttempt, ...], calls: int, refused: bool = False):
        super().__init__(message)
        self.attempts = attempts
        self.calls = calls
        self.refused = refused


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
) -> tuple[object, tuple[FailedAttempt, ...], int]:
    """Run call(); retry retryable failures up to ``retries`` times. Returns (result, attempts, calls)."""
    rng = rng or random.Random()
    attempts: list[FailedAttempt] = []
    for n in range(retries + 1):
        try:
            return call(), tuple(attempts), n + 1
        except Exception as exc:
            failure = classify(exc) or Failure(f"{type(exc).__name__}: {exc}", retryable=False)
            if not failure.retryable or n == retries:
                attempts.append(FailedAttempt(failure.message, None))
                why = "retries exhausted" if failure.retryable else "not retryable"
                raise GiveUp(f"{failure.message} ({why} after {n + 1} call(s))", tuple(attempts), n + 1, failure.refused) from exc
            wait = failure.retry_after if failure.retry_after is not None else backoff(n, rng)
            attempts.append(FailedAttempt(failure.message, round(wait, 3)))
            sleep(wait)
    raise AssertionError("unreachable")


def load_prices(path) -> dict[str, tuple[float, ...]] | None:
    """--prices FILE: {model: [usd per 1M input tokens, usd per 1M output tokens, optionally usd per 1M cached input]}."""
    if path is None:
        return None
    import yaml

    from cursorpilot.errors import BadInput

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out = {str(k): tuple(float(x) for x in v) for k, v in data.items()}
        if any(len(v) not in (2, 3) for v in out.values()):
            raise ValueError("two or three prices")
        return out
    except (yaml.YAMLError, AttributeError, TypeError, ValueError, IndexError, KeyError):
        raise BadInput(f"{path}: prices must map model -> [usd_per_1M_in, usd_per_1M_out, optional usd_per_1M_cached_in]") from None


def cost(model: str, tokens_in: int, tokens_out: int, prices: dict[str, tuple[float, ...]] | None, cached: int = 0) -> float | None:
    """tokens_in counts every prompt token, the cached ones among them; those are priced at the cached rate."""
    table = {**DEFAULT_PRICES, **(prices or {})}
    price = table.get(model)
    if price is None:
        return None
    cached = min(max(cached, 0), tokens_in)
    cached_rate = price[2] if len(price) > 2 else price[0]
    return round((tokens_in - cached) / 1e6 * price[0] + cached / 1e6 * cached_rate + tokens_out / 1e6 * price[1], 8)


class ChatProvider:
    """One request per question; retries, cleaning, usage and cost are handled here."""

    name = "llm"
    needs_prompt = True
    key_env = ""
    # The forms a reply is asked in, most structured first. A server that refuses one (an error naming the
    # structured-output parameters, whatever its status) moves the run to the next, once, for good.
    forms: tuple[str, ...] = ("structured", "text")
    _remote: Remote | None = None  # the SDK's calls made by the resident (None: here)
    base_url = ""  # the server's address: every error names it

    def __init__(self, model: str, retries: int, timeout: float, prices=None, sleep: Callable[[float], None] = time.sleep):
        self.model = model
        self.retries = retries
        self.timeout = timeout
        self.prices = prices
        self._sleep = sleep
        self.form = self.forms[0]
        self.sampling = Sampling()  # how the call being made samples (answer() sets it; the resident's child is told)

    @property
    def structured(self) -> bool:
        return self.form != "text"

    # provider modules implement these two
    def _send(self, system: str, user: str, kind: str = "input", accepts: tuple[str, ...] = ()) -> Sent:
        """Returns (text, removed reasoning, input tokens, output tokens, cached input tokens, the answer's margin where
        self.sampling asks for log-probabilities and the server gives them); raises SDK errors.
        In a structured form, asks for the structured reply of the question's kind (schema.schema_for, its text limited
        to `accepts` when the question says what it takes) and returns the object as JSON text."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> Failure | None:
        raise NotImplementedError

    def _call(self, system: str, user: str, kind: str, accepts: tuple[str, ...]) -> Sent:
        """One SDK call: made by the resident when there is one (resident.py), else here (and here from the moment the
        resident cannot be reached: the call is made again, here, and counts once)."""
        if self._remote is not None:
            from cursorpilot.providers.resident import Unreachable

            try:
                return self._remote.send(self.form, system, user, kind, accepts, self.sampling)
            except Unreachable:
                self._remote = None
        return self._send(system, user, kind, accepts)

    def _failure(self, exc: Exception) -> Failure | None:
        from cursorpilot.providers.resident import RemoteFailure

        if isinstance(exc, RemoteFailure):  # classified by the provider module in the resident's child
            return Failure(**exc.fields) if exc.fields else Failure(exc.described, retryable=False)
        return self._classify(exc)

    def _judged(self, exc: Exception) -> Failure:
        """The provider's classification, except that an error naming the structured-output parameters, while we ask in a
        structured form, is a refusal of that form: retrying it the same way would fail the same way (llama-cpp-python's
        500 for json_schema was retried five times per question, then escalated)."""
        failure = self._failure(exc) or Failure(f"{type(exc).__name__}: {exc}", retryable=False)
        if self.structured and names_structured(f"{exc} {failure.message}"):
            nxt = self.forms[self.forms.index(self.form) + 1]
            failure = Failure(f"{failure.message[:300]} [the server refuses {self.form}: {nxt} from now on]", retryable=False, refused=True)
        return self._named(failure)

    def _named(self, failure: Failure) -> Failure:
        """Every error names the server it came from (a timeout, a status, a malformed reply), so that which of the
        user's settings is wrong is plain; a timeout says how long was waited."""
        message = failure.message
        if message == "timeout":
            message = f"no reply within {self.timeout:g}s (--llm-timeout)"
        status, sep, rest = message.partition(": ")
        if not self.base_url or self.base_url in message:  # (a connection error names the URL it tried already)
            pass
        elif sep and status.startswith("HTTP "):
            message = f"{status} from {self.base_url}: {rest}"
        else:
            message = f"{message}, from {self.base_url}"
        return replace(failure, message=message)

    def answer(self, request, sampling: Sampling | None = None):  # -> Reply
        """The model's reply to one question: greedy, or sampled as `sampling` says (a cascade's, decide/cascade.py)."""
        self.sampling = sampling or Sampling()
        try:
            return self._answer(request)
        finally:
            self.sampling = Sampling()

    def _answer(self, request):  # -> Reply
        from cursorpilot.providers.base import Reply, Usage

        t0 = time.monotonic()
        source = f"{self.name}:{self.model}"
        spent, earlier = 0, ()
        accepts = request.accepts
        while True:
            try:
                result, attempts, calls = with_retries(
                    lambda: self._call(request.system, request.user, request.kind, accepts), self._judged, self.retries, self._sleep
                )
                break
            except GiveUp as exc:
                spent, earlier = spent + exc.calls, (*earlier, *exc.attempts)
                if exc.refused and self.structured:  # the next form, for the rest of the run
                    self.form = self.forms[self.forms.index(self.form) + 1]
                    continue
                usage = Usage(latency_s=round(time.monotonic() - t0, 3), calls=spent)
                return Reply(text=None, source=source, reason=f"provider error: {exc}", usage=usage, attempts=earlier)
        text, reasoning, tin, tout, cached, margin = result  # type: ignore[misc]
        cleaned = clean_reply(text, multiline_ok=request.multiline, constrained=bool(accepts) and self.structured)
        usage = Usage(tin, tout, round(time.monotonic() - t0, 3), cost(self.model, tin, tout, self.prices, cached), spent + calls,
                      cached)
        return Reply(
            text=cleaned.text, source=source, reason=cleaned.reason, usage=usage, raw=text,
            removed=(*reasoning, *cleaned.removed), attempts=(*earlier, *attempts), wait=cleaned.wait, submit=cleaned.submit,
            turn=cleaned.turn, judged=cleaned.judged, act=cleaned.act, names=cleaned.names, margin=margin,
        )


def status_failure(status: int, message: str, retry_after: str | None) -> Failure:
    """A status the server answered: retried when it may pass (429, 503, ...); a server that does not do this (a plain
    web server's 501 to a POST) is said so at once, not asked five times."""
    retryable = status in RETRYABLE or (status >= 500 and status not in NEVER_PASSES)
    said = f"HTTP {status}: {message}"[:300]
    if status in NOT_THIS_API:
        said += "; not the model's API (check --base-url)"
    return Failure(said, retryable, parse_retry_after(retry_after) if retryable else None)


def tried_url(exc: Exception, base_url: str) -> str:
    """The URL a connection error was about (the SDKs' errors carry their request), else the server's: "connection
    error" alone left a user guessing which of their settings was wrong."""
    try:
        return str(exc.request.url)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):
        return base_url
