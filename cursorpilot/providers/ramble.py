"""A model that says more than the answer: the first line is the answer when the rest only talks about it.

A 0.5B model answered npm init's `version: (1.0.0)` and sqlite3's prompt in two lines; the reply was refused as
several lines where one is typed, and the run stopped for a person. Most such replies are an answer and a remark on
it ("0.2.0" then "This sets the version."): the remark is commentary, kept in the transcript (`removed`), and the
first line is typed. A reply whose other lines look like answers too (eleven values for eleven questions, three rows
of data, three SQL statements) is several answers, and stays refused: which one was meant is not ours to guess.
Pure: text in, the split out.
"""

from __future__ import annotations

import re

# How a remark starts: a note, an explanation, a sentence about the answer, a comment in the answer's own syntax.
_REMARK_START = re.compile(
    r"(?i)^\s*(?:\((?=[a-z]+\s)|\[note|#|//|--\s|/\*|note\b|notes\b|explanation\b|reason\b|because\b|since\b|this\b|that\b|these\b"
    r"|the\b|it\b|it's\b|i\b|i'm\b|i've\b|here\b|as\b|so\b|which\b|we\b|you\b|your\b|if\b|otherwise\b|answer\b|reply\b"
    r"|according\b|per\b|following\b|based\b)")
_SENTENCE = re.compile(r"^\s*[A-Z][^\n]*\s\S+\s\S+\s\S+[^\n]*[.!)]\s*$")  # four words or more, ending as a sentence does
_LEAD_IN = re.compile(r"(?i)^\s*(?:sure|okay|ok|certainly|here\b|the answer|answer\b|reply\b)[^\n]*[:,]?\s*$")


def remark(line: str) -> bool:
    """A line that reads as talk about an answer rather than an answer."""
    return bool(line.strip()) and (_REMARK_START.match(line) is not None or _SENTENCE.match(line) is not None)


def first_and_remarks(text: str) -> tuple[str, str] | None:
    """(the answer, the commentary) when `text` is one line of answer and then lines that only remark on it; None
    when it is one line, several answers, or opens with a lead-in ("Sure, here it is:") rather than the answer."""
    lines = text.strip("\r\n").splitlines()
    rest = [x for x in lines[1:] if x.strip()]
    if len(lines) < 2 or not lines[0].strip() or not rest:
        return None
    if _LEAD_IN.match(lines[0]) or remark(lines[0]):
        return None
    if not all(remark(x) for x in rest):
        return None
    return lines[0].rstrip("\r"), "\n".join(rest)
