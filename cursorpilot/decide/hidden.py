"""At a prompt that hides what is typed, a model never makes a value up. PURE.

With a model that says yes to everything, `y` became a new password while `--secret kp` was offered, and `YES` became a
LUKS passphrase (issue 48): a value nobody chose was locked into the program, and nobody saw it. The system prompt tells
the model never to make one up; this holds it to that, whatever the model says. At a hidden prompt (the Question's
`secret`: echo off, or a prompt that asks for a password) only a value someone gave may be typed: a `<secret:NAME>` the
user gave with --secret (a name not given is refused where it is typed), a user's rule's value, a person's. Anything
else a model says goes to a person (exit 3 when nobody is there), the escalation's record saying why. The Decider asks
this of model replies only (`by_model`): the user's own rules and answer scripts are the user's words.

What is no made-up value: a key that types no character (Esc, Ctrl-C, Ctrl-D: the prompt is left, nothing is set), and
an empty answer where the prompt's own rows offer one (ssh-keygen's `Enter passphrase (empty for no passphrase):`,
and its `Enter same passphrase again:` with that row still above it): the program names "none" as an answer, so the
model picks it as it picks an option. Anywhere else (`New password:`, a LUKS passphrase) an empty answer is a value the
model chose, an account or a volume with no password, and a person decides it.
"""

from __future__ import annotations

import re

from cursorpilot.decide.question import Decision, Question, Verdict

_GIVEN = re.compile(r"<secret:[A-Za-z_][\w.-]*>(?:<enter>)?")  # a value the user gave, by its name
_NO_CHARACTER = {"<esc>", "<ctrl-c>", "<ctrl-d>"}  # leave the prompt; nothing typed into it
_EMPTY = ("", "<enter>")
# the prompt's own rows name an empty answer: "(empty for no passphrase)", "leave blank for none", "Enter for none"
_OFFERS_EMPTY = re.compile(r"(?i)\b(?:empty|blank|enter|return)\s+(?:for|=|means)\s+(?:no|none)\b"
                           r"|\bleave\s+(?:it\s+|this\s+)?(?:empty|blank)\b"
                           r"|\[\]\s*:?\s*$")  # an empty default shown: openssl's "A challenge password []:"
ROWS_ABOVE = 4  # rows above the prompt read for the offer (the first of two prompts that ask for the same value)


def refused(q: Question, d: Decision, by_model: bool, governing_prompt: str = "") -> Decision | None:
    """A model's answer that must not be typed here, as the escalation it becomes (its one line says why, and the
    escalation's record keeps it); None: it goes on to the checks every answer passes."""
    why = made_up(q, d, governing_prompt) if by_model else None
    return None if why is None else Decision.escalate(why, d.source)


def made_up(q: Question, d: Decision, governing_prompt: str = "") -> str | None:
    """Why a model's answer must not be typed at this prompt (one line), or None: it may. A value your governing prompt
    spells out ("Protect the key with the passphrase s3cret-pass") is yours, not made up: 4 characters or more, whole,
    and no yes or no word (`YES` is never a passphrase because a prompt says "type YES")."""
    if not q.secret or d.verdict != Verdict.ANSWER:
        return None
    text = (d.text or "").strip()
    if _GIVEN.fullmatch(text) or text.lower() in _NO_CHARACTER or yours(text, governing_prompt):
        return None
    if text in _EMPTY:
        if offers_empty(q):
            return None
        return ("a model's empty answer refused at a hidden prompt that offers none: a person decides whether "
                "it stays without one")
    return ("a model's own value refused at a hidden prompt: only a secret you give (--secret NAME=ENVVAR), "
            "a rule's value or a person may fill it")


def yours(text: str, governing_prompt: str) -> bool:
    """The value is spelled out, whole, in the user's governing prompt."""
    value = text.removesuffix("<enter>")
    if len(value) < 4 or value.lower() in _YES_NO or not governing_prompt:
        return False
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", governing_prompt) is not None


_YES_NO = {"yes", "no", "true", "false", "okay", "sure", "none"}


def offers_empty(q: Question) -> bool:
    """The program's own words at this prompt say an empty answer is one it takes."""
    rows = (q.text, q.lead, *q.live[-ROWS_ABOVE:])
    return any(_OFFERS_EMPTY.search(row) for row in rows if row)
