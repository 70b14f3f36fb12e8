"""A tool call matched against the governing prompt's compiled policy, PURE: allow, deny, ask, or nothing to say.

The same matching as a yes at a question (decide/ruling.py), on a block that shows what the call does: the command or
the tool with its input, then every form of each path it removes or overwrites (hooks/paths.py). In this order:
1. a call that does nothing that destroys: nothing to say (the agent's own permissions apply);
2. the hard floor (`ruling.floor`, an `rm` outside the tree): deny, whatever the prompt says;
3. a prohibition that bears on the block: deny, in the user's words;
4. a prohibition that names something inside a folder the call removes: deny (those entries never grant);
5. a grant of the act that names the block's thing: allow, in the user's words;
6. nothing decides it: an overwrite inside the project is the agent's ordinary work (nothing to say); any other act,
   or an overwrite outside the project, is asked about (`ask`), where a person decides.
The reason names the user's words and tells the agent what to do next, since a denied agent reads it and goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

from cursorpilot.decide import ruling
from cursorpilot.decide.compiled import BY_RULE, Entry, Policy
from cursorpilot.hooks.acts import Does, Where
from cursorpilot.hooks.calls import ALLOW, ASK, DENY, PASS

_GO_ON = "Leave it as it is and go on with the rest of the task; do not try it another way."


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the hook answers, why (for the agent and the person), and the user's words that decided it, if any."""

    decision: str
    reason: str
    quote: str | None = None


def decide(policy: Policy, does: Does, where: Where, home: str | None) -> Verdict:
    if not does.acts:
        return Verdict(PASS, "nothing in this call deletes or overwrites")
    block = "\n".join((does.text, *where.shown))
    what = _what(does, where)
    floor = does.floor or ruling.floor(block, home, does.acts)
    if floor is not None:
        return Verdict(DENY, f"cursor-pilot refused: this call would {what}, and {floor!r} is the home directory, '/', a "
                             f"system path, a block device or outside the working tree, which nothing may remove. {_GO_ON}")
    said = ruling.rule(policy, does.acts, block)
    if said.verdict == ruling.REFUSED and said.entry is not None and said.entry in policy.prohibitions:
        return _refused(what, said.entry)
    if where.inside:
        found = _inside(policy.prohibitions, does.acts, where.inside)
        if found is not None:
            entry, path = found
            return _refused(f"{what}, and with it {path}", entry)
    if where.truncated and policy.prohibitions:
        return Verdict(ASK, f"cursor-pilot asks: this call would {what}; it holds more than can be checked against what "
                            "your words protect")
    if said.verdict == ruling.GRANTED and said.entry is not None:
        return Verdict(ALLOW, f"cursor-pilot allowed: this call would {what}; {said.why}", said.entry.quote)
    if does.acts <= {"overwrite"} and not where.outside:
        return Verdict(PASS, f"an edit inside the project that nothing you wrote protects ({what})")
    beyond = f" (outside the project: {where.outside[0]})" if where.outside else ""
    why = said.why.replace("this question", "this call").replace("here (the policy", "(the policy")
    return Verdict(ASK, f"cursor-pilot asks: this call would {what}{beyond}; {why}",
                   said.entry.quote if said.entry is not None else None)


def _refused(what: str, entry: Entry) -> Verdict:
    return Verdict(DENY, f"cursor-pilot refused: this call would {what}; your words forbid it: {entry.quote!r}. {_GO_ON}",
                   entry.quote)


def _inside(prohibitions: tuple[Entry, ...], acts: frozenset[str], inside: tuple[str, ...]) -> tuple[Entry, str] | None:
    """The first prohibition of these acts that names something inside a removed folder (by name, not by its kind
    alone), and the entry it names."""
    for entry in prohibitions:
        if not entry.rules & acts or not entry.object:
            continue
        for path in inside:
            if entry.named_in(path) == "specific":
                return entry, path
    return None


def _what(does: Does, where: Where) -> str:
    """The acts and their objects, as a person says them: "delete tests/fixtures", "overwrite notes.md"."""
    acts = " and ".join(BY_RULE.get(a, a) for a in sorted(does.acts, key=lambda a: list(BY_RULE).index(a) if a in BY_RULE else 9))
    objects = [p for p in where.shown if not p.startswith("/")][:3] or list(where.shown[:2])
    return f"{acts} {', '.join(objects)}" if objects else f"{acts} ({does.evidence or does.text})"
