"""What a channel asks the decision path, and what it gets back. Plain data, no I/O.

A Question is a prompt as the program put it: on a screen (a `[y/n]`, a menu, a free-text field, a screen no rule
explains) or over a protocol (an ACP permission request with its options, an elicitation form). A Decision is what
to do about it: answer (the text in the reply grammar, or the option chosen), wait, or ask a human.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from cursorpilot.decide.policy import Denial
from cursorpilot.decide.compiled import Entry
from cursorpilot.decide.weigh import CloserLook
from cursorpilot.records.answerer import Source


class Kind(StrEnum):
    QUESTION = "question"  # yes/no, confirm: a key or a word
    INPUT = "input"  # free text
    MENU = "menu"  # pick one (or several) of the choices
    PERMISSION = "permission"  # a structured approval (ACP): pick one of the choices by name and kind
    FORM = "form"  # a structured question (ACP elicitation): fields to fill
    UNDECIDED = "undecided"  # a quiet screen no rule explains: the model judges whether anyone is asked, and answers
    TURN_END = "turn_end"  # an agent stopped and waits: is the goal met, and if not, what next (decide/turns.py)


@dataclass(frozen=True, slots=True)
class Closer:
    """A yes that waits for the focused judgment before it is given: the look (the question's block and the acts its
    words name), and the yes. (Declared here beside the Decision that carries it; decide/weigh.py judges it.)"""

    look: CloserLook
    reply: str  # the yes as it would be given (the text typed, the option chosen; a secret masked)
    chosen_by: str  # who chose it (rules:<id>, a model)
    stage: str = "judge"  # what it waits for: "policy" (the governing prompt compiled) or "judge" (the focused judgment)
    grants: tuple[Entry, ...] = ()  # the compiled grants of its acts the judge may point at

    @property
    def denial(self) -> Denial:
        return self.look.denial


@dataclass(frozen=True, slots=True)
class Choice:
    """An answer the program offers: a menu option, an ACP permission option."""

    key: str  # how the channel refers to it (the option's index on screen, an ACP optionId)
    label: str
    number: int | None = None  # the number shown before it, if any
    kind: str | None = None  # ACP: allow_once | allow_always | reject_once | reject_always
    detail: str = ""  # a description under it
    meta: bool = False  # "Type something", "Chat about this": not an answer by itself
    checked: bool | None = None  # multi-select: its box now


@dataclass(frozen=True, slots=True)
class Question:
    kind: str  # a Kind value
    text: str  # the prompt as shown: rules match it, the loop breaker counts it
    key: str  # identity: the same prompt, however often it is repainted or re-sent
    source: str  # what produced it: a detector rule id, an ACP method
    action: str = ""  # what a yes carries out (the command, the file, the diff): the deny policy reads this
    asked: str = ""  # the question in the program's own words (not a diff, a command box, the rows above): what may
    # trigger a closer look at a yes (decide/weigh.py)
    lead: str = ""  # the rest of the question's block: the rows that lead up to it (gdisk's "This option deletes all
    # partitions", apt's summary), a dialog's body (a command in a box), a hint below; what a yes does is read from it
    # with `asked` (decide/weigh.py)
    approval: bool = False  # answering yes carries out `action`
    choices: tuple[Choice, ...] = ()
    multi: bool = False
    free_text: bool = False  # the options are suggestions: a reply that names none is typed as it is (a list above a prompt)
    options_from_facts: bool = True  # the choices were read from facts (a marker, numbers, buttons, a highlight in a program
    # that reads keys); False: from style alone, the terminal's mode unknown: the answer is never narrowed to them
    highlighted: int | None = None  # the choice highlighted on screen
    deny_reply: str | None = None  # the program's own "no", when the policy refuses
    multiline: bool = False  # several lines may be typed
    single_key: bool = False  # the prompt acts on one key press: no Enter after it
    keys: tuple[str, ...] = ()  # the keys its rule says it acts on, where the screen spells none (a pager's q, <space>)
    may_wait: bool = False  # the program may not be asking anything: WAIT is an answer
    live: tuple[str, ...] = ()  # what the program shows now (screen rows, the tool call), for the model
    earlier: tuple[str, ...] = ()  # older output, oldest first
    notes: tuple[str, ...] = ()  # facts for the model: "the previous request was denied by policy rule delete"
    secret: bool = False  # what is typed here is not shown (echo off), or the prompt asks for a password: masked wherever kept
    closing: Question | None = None  # a turn end whose last message asks something: that question, as rules know it
    check: str = ""  # a turn end: the goal check's result in a line ("`pytest -q` exited 1: not met")
    check_output: tuple[str, ...] = ()  # ...and the end of its output (untrusted, like terminal text)

    def describe_choices(self) -> str:
        """For the model and for `detect`: one choice per line, the highlighted one marked."""
        if not self.choices:
            return ""
        lines = []
        for i, c in enumerate(self.choices):
            mark = "→" if i == self.highlighted else " "
            box = "" if c.checked is None else ("[x] " if c.checked else "[ ] ")
            kind = f" [{c.kind}]" if c.kind else ""
            extra = f"  ({c.detail})" if c.detail else ""
            meta = "  (not an answer by itself)" if c.meta else ""
            lines.append(f"{mark} {i + 1}) {box}{c.label}{kind}{extra}{meta}")
        head = "multi-select (name every option that should end up selected)" if self.multi else "single choice"
        if self.highlighted is not None:
            head += f"; highlighted: {self.choices[self.highlighted].label}"
        return head + "\n" + "\n".join(lines)


class Verdict(StrEnum):
    ANSWER = "answer"  # type / send this
    WAIT = "wait"  # nobody is being asked: do nothing until the program shows something new
    ESCALATE = "escalate"  # a human must decide
    FAIL = "fail"  # the run can't go on (too many provider errors)
    PASS = "pass"  # nobody here judges this (a turn end, with rules only and no rule for it): the facts decide


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    text: str | None = None  # ANSWER: what to type, in the reply grammar; for choices, their labels
    choices: tuple[Choice, ...] = ()  # ANSWER on a question with choices: the ones chosen
    source: str = ""  # rules:<id>, policy:<rule>, <provider>:<model>, human, plan:send
    why: str = ""  # ESCALATE / FAIL / WAIT: the reason, for the transcript and the user
    submit: bool | None = None  # the answerer said whether Enter follows (None: the prompt's own default)
    denied: str | None = None  # the deny policy rule that produced this answer
    secret: bool = False  # the answer is a secret (a rule's `secret: true`): masked wherever it is shown or kept
    turn: str | None = None  # a turn end's verdict (decide/turns.py): done | continue (text: the next message) | blocked | impossible
    matched: str | None = None  # a rule's answer: what its pattern matched (a rule that names the act grants a yes to it)
    named: tuple[str, ...] = ()  # ...and the words of its own its pattern spells out there (providers/rules.spelled)
    weigh: Closer | None = None  # a yes that waits for the focused judgment before it is given (decide/weigh.py)
    changed: str = ""  # the deny policy changed the answer: "'y' (openai:m) -> 'n'", said wherever it is shown
    granted: str = ""  # a yes the deny policy weighed went through: "your rule go", "your prompt: 'Remove …'", said too
    limit: bool = False  # FAIL: a limit ended it (exit 4), not a failure

    @property
    def by(self) -> Source:
        """Who answered, as a type: what a check asks (records/answerer.py), `source` being its record's spelling."""
        return Source.read(self.source)

    @staticmethod
    def escalate(why: str, source: str = "") -> Decision:
        return Decision(Verdict.ESCALATE, why=why, source=source)
