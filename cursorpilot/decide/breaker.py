"""Loop breaker and provider-error counter: small, pure bookkeeping for the decision path."""

from __future__ import annotations

from collections import Counter

REPEAT_LIMIT = 3  # the same question answered with the same reply this often -> escalate next time
PROVIDER_ERROR_LIMIT = 20  # consecutive provider errors -> stop the run


def over_cap(run_answers: int, run_cap: int | None, step_answers: int, step_cap: int | None) -> str | None:
    """Why one more answer would break --max-steps or the step's max_steps, or None."""
    if run_cap is not None and run_answers >= run_cap:
        return f"max-steps reached ({run_cap} answers)"
    if step_cap is not None and step_answers >= step_cap:
        return f"step max_steps reached ({step_cap} answers)"
    return None


class LoopBreaker:
    def __init__(self, repeat_limit: int = REPEAT_LIMIT, provider_error_limit: int = PROVIDER_ERROR_LIMIT):
        self.repeat_limit = repeat_limit
        self.provider_error_limit = provider_error_limit
        self._answers: Counter[tuple[str, str]] = Counter()
        self.provider_errors = 0

    @staticmethod
    def _key(question: str, reply: str) -> tuple[str, str]:
        """The question as it was asked: an answer typed without Enter stays on its line (`Name: x`, then `Name: xx`),
        and the same answer typed again is still the same answer to the same question."""
        q, r = " ".join(question.split()), " ".join(reply.split())
        while r and q.endswith(r) and len(q) > len(r):
            q = q[: -len(r)].rstrip()
        return q, reply

    def looping(self, question: str, reply: str) -> bool:
        """True when this exact answer to this exact question was already given repeat_limit times."""
        return self._answers[self._key(question, reply)] >= self.repeat_limit

    def answered(self, question: str, reply: str) -> None:
        self._answers[self._key(question, reply)] += 1

    def provider_result(self, ok: bool) -> bool:
        """Count consecutive provider errors; True when the limit is reached."""
        self.provider_errors = 0 if ok else self.provider_errors + 1
        return self.provider_errors >= self.provider_error_limit
