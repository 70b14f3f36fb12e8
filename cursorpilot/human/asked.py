"""What a person is asked, PURE: one value that the terminal, the decision page and the notice all show, so that a
question reads the same wherever it is answered, and as the model would have seen it (the screen, the request with
its diff, the options by label, the governing prompt, why nobody else could answer).

Everything in it has passed the run's redaction: it may leave the process (a notice to a chat service, a page on a LAN).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cursorpilot.decide.question import Kind, Question
from cursorpilot.decide.turns import gist
from cursorpilot.decide.yesno import refusal

HEADLINE = 100  # a question's first line, cut to this for a notice's title and the terminal's log line


@dataclass(frozen=True, slots=True)
class Asked:
    prompt: str  # the question as the program put it (a prompt block, an ACP request, an agent's last message)
    why: str  # why no rule, model or policy could answer it
    kind: str  # a decide.question.Kind value
    step: int
    steps: int
    step_name: str
    program: str  # the command line
    screen: tuple[str, ...] = ()  # the screen's rows (PTY), the request in words (ACP): what the model would have read
    action: str = ""  # what a yes carries out: the command, the file, the diff
    choices: tuple[str, ...] = ()  # the options, by label
    governing_prompt: str = ""
    secret: bool = False  # the answer is a secret: a password field, masked wherever it is kept or shown
    multiline: bool = False  # several lines may be given (an agent's next instruction)
    turn_end: bool = False  # an agent stopped: the prompt is its last message, the answer its next instruction
    rule_id: str | None = None
    no: str | None = None  # the question's own no (its reject option, n): the safe answer after --human-timeout

    def headline(self) -> str:
        """The question in a line: its first (an agent's message: its last line with words, not the banner above it)."""
        line = gist(self.prompt) if self.turn_end else next((row.strip() for row in self.prompt.splitlines() if row.strip()), "")
        line = line or "(no text)"
        return line if len(line) <= HEADLINE else line[: HEADLINE - 1] + "…"

    def where(self) -> str:
        return f"step {self.step}/{self.steps} {self.step_name!r}: {self.program}"


def asked(q: Question, why: str, *, step: int, steps: int, step_name: str, program: str, governing_prompt: str,
          redact: Callable[[str], str], shown: str | None = None) -> Asked:
    """The question a channel escalated, as a person sees it. shown: what to show when it is not the question's text
    (a turn end: the agent's last message)."""
    turn_end = q.kind == Kind.TURN_END or shown is not None
    no = refusal(q) if not turn_end else None
    prompt = shown or q.text
    screen = "\n".join(q.live)
    return Asked(
        prompt=redact(prompt), why=redact(why), kind=q.kind, step=step, steps=steps, step_name=step_name, program=redact(program),
        screen=tuple(redact(screen).split("\n")) if screen.strip() and screen.strip() != prompt.strip() else (),  # not twice
        action=redact(q.action) if q.action.strip() and q.action.strip() not in prompt else "",
        choices=tuple(c.label for c in q.choices if not c.meta), governing_prompt=redact(governing_prompt), secret=q.secret,
        multiline=q.multiline or turn_end, turn_end=turn_end, rule_id=q.source, no=no[0] if no else None,
    )


def notice(a: Asked, link: str, timeout: float | None = None) -> tuple[str, str]:
    """A notice's title and body (notify.py sends it): the run's and a fleet's inbox say a question the same way."""
    options = f"\nOptions: {', '.join(a.choices)}" if a.choices else ""
    within = f"\nAnswer within {timeout:g}s." if timeout else ""
    body = f"{a.why}\n\n{a.where()}\nQuestion: {a.headline()}{options}\n\nAnswer: {link}{within}"
    return f"cursor-pilot needs you: {a.headline()}", body


# -- what an answer offered to a question comes to (the page's HTTP status, the terminal's words) ----------------------
ACCEPTED, FORBIDDEN, TAKEN, GONE, REFUSED = 200, 403, 409, 410, 422


@dataclass(frozen=True, slots=True)
class OfferResult:
    status: int  # ACCEPTED | REFUSED (the deny policy, not an option: answer again) | TAKEN (answered already) | GONE
    message: str  # one line for the person who offered it

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED
