"""Which offered answer a reply names: by label, a unique part of one, its number, or (ACP) its kind.

Shared by the screen's menus and ACP's permission options, so "Yes" means the same thing on both channels:
the narrowest yes (menus list "Yes, proceed" before "Yes, and don't ask again"; over ACP, `allow_once`),
whatever order the program lists them in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONFIRM_WORDS = {"yes", "no", "allow", "approve", "accept", "deny", "reject", "cancel", "skip", "continue", "proceed"}
_KIND_WORDS = {
    "allow_once": {"yes", "y", "allow", "approve", "accept", "proceed", "ok", "allow once", "yes, once"},
    "reject_once": {"no", "n", "reject", "deny", "decline", "refuse", "reject once", "no, once"},
    "allow_always": {"always", "allow always", "always allow", "yes, always", "allow for this session"},
    "reject_always": {"never", "reject always", "always reject", "deny always", "no, never"},
}


@dataclass(frozen=True, slots=True)
class Offered:
    label: str
    detail: str = ""
    number: int | None = None  # the number shown before it, if any
    kind: str | None = None


def normal(reply: str) -> str:
    return reply.strip().strip("'\"").rstrip(".").strip().lower()


def find(offered: list[Offered], wanted: str) -> int | None:
    """The index of the one offered answer `wanted` names, or None (none, or several: ambiguous)."""
    w = normal(wanted)
    if not w:
        return None
    if w.isdigit():
        n = int(w)
        by_number = [i for i, o in enumerate(offered) if o.number == n]
        if by_number:
            return by_number[0]
        return n - 1 if 1 <= n <= len(offered) and all(o.number is None for o in offered) else None
    full = [f"{o.label} {o.detail}".strip().lower() for o in offered]  # a second line completes a label
    exact = [i for i, o in enumerate(offered) if o.label.lower() == w or full[i] == w]
    if len(exact) == 1:
        return exact[0]
    if any(o.kind for o in offered):  # ACP: a bare yes/no means once, wherever that option is listed
        kinds = [i for i, o in enumerate(offered) if o.kind and w in _KIND_WORDS.get(o.kind, ())]
        if len(kinds) == 1:
            return kinds[0]
    for word in (w, *_SYNONYMS.get(w, ())):  # "yes" to a menu that says "Allow once", "no" to one that says "Deny"
        starts = [i for i in range(len(offered)) if offered[i].label.lower().startswith(word)]
        for hits in (starts, [i for i in range(len(offered)) if word in full[i]]):
            if len(hits) == 1:
                return hits[0]
            if hits and word in CONFIRM_WORDS and all(re.match(rf"{re.escape(word)}\b", offered[i].label.lower()) for i in hits):
                return hits[0]  # "Yes" among "Yes, proceed" / "Yes, and don't ask again": the narrowest is listed first
            if hits:
                return None
    return None


_SYNONYMS = {"yes": ("allow", "approve", "proceed", "accept"), "no": ("deny", "reject", "decline")}
