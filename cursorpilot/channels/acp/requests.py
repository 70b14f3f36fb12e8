"""The agent's requests the ACP pilot holds open, PURE: what is being decided for each (a permission, a form, Cursor's
questions or plan, or the pilot's own turn-end question), and the reply an answer, or the end of the step, sends back.

acp/pilot.py keeps them by token and says when each is asked and answered; this module only says what they hold and
what goes back to the agent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from cursorpilot.channels.acp import ask
from cursorpilot.decide.question import Decision, Question, Verdict

_CANCELLED: dict[str, dict] = {"permission": ask.CANCELLED, "form": {"action": "cancel"}}
_GENERIC_CANCEL: dict = {"outcome": {"outcome": "cancelled"}}


@dataclass(slots=True)
class Open:
    """A request of the agent (or the turn end) being decided."""

    kind: str  # permission | form | ask_question | plan | turn_end
    questions: list[tuple[str, Question]]  # ask_question has several, asked one by one
    data: dict = field(default_factory=dict)  # the form's schema; whether the call says what it does
    at: int = 0
    answers: list[dict] = field(default_factory=list)
    human: str | None = None  # why a human was asked (then their answer is the last word)

    @property
    def question(self) -> Question:
        return self.questions[self.at][1]

    @property
    def cancelled(self) -> dict:
        """The reply that tells the agent this request will not be answered (the step ended)."""
        return _CANCELLED.get(self.kind, _GENERIC_CANCEL)


def form_reply(schema: dict, d: Decision) -> tuple[str, dict] | None:
    """A form filled from the answer (what was sent, the reply), or None when the answer does not fit it."""
    content = ask.form_content(schema, d.text) if d.verdict == Verdict.ANSWER and d.text is not None else None
    return None if content is None else (json.dumps(content), {"action": "accept", "content": content})


def plan_reply(d: Decision) -> tuple[str, dict]:
    """Cursor's plan accepted or rejected (a rejection says why: the deny policy, or the answer's own words)."""
    if d.choices[0].key == "accept":
        return "Accept", {"outcome": {"outcome": "accepted"}}
    reason = f"refused by the deny policy ({d.denied})" if d.denied else d.text
    return "Reject", {"outcome": {"outcome": "rejected", "reason": reason}}


def question_answer(qid: str, q: Question, d: Decision) -> dict:
    """One of Cursor's questions answered: the options chosen, or the text."""
    return {"questionId": qid, "selectedOptionIds": [c.key for c in d.choices]} if q.choices else {"questionId": qid, "text": d.text}
