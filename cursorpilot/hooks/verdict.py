"""A tool call matched against the governing prompt's compiled policy, PURE: allow, deny, ask, or nothing to say.

The same matching as a yes at a question (decide/ruling.py), on a block that shows what the call does: the command or
the tool with its input, then every form of each path it removes or overwrites (hooks/paths.py). In this order:
1. a call that does nothing that destroys: nothing to say (the agent's own permissions apply);
2. the hard floor (`ruling.floor`, an `rm` of the project itself or outside it): deny, whatever the prompt says; and so
   is a change to what the hook stands on (the agents' hook settings, the prompt or policy file it reads);
3. a prohibition that bears on the block: deny, in the user's words;
4. a prohibition that names something inside a folder the call removes: deny (those entries never grant); inside a
   folder it removes only some of (`find -delete`, `git clean`): ask;
5. a grant that names each thing the call destroys, each on its own: allow, in the user's words;
6. nothing decides it: an overwrite inside the project is the agent's ordinary work (nothing to say); any other act,
   or an overwrite outside the project, is asked about (`ask`), where a person decides.
The reason names the user's words and tells the agent what to do next, since a denied agent reads it and goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

from cursorpilot.decide import ruling
from cursorpilot.decide.compiled import BY_RULE, Entry, Policy, terms
from cursorpilot.hooks.acts import EMPTIES, Does, Target
from cursorpilot.hooks.calls import ALLOW, ASK, DENY, PASS

_ACT = {EMPTIES: "delete"}  # a touch's act as the policy's id
_GO_ON = "Leave it as it is and go on with the rest of the task; do not try it another way."


@dataclass(frozen=True, slots=True)
class HookVerdict:
    """What the hook answers, why (for the agent and the person), and the user's words that decided it, if any."""

    decision: str
    reason: str
    quote: str | None = None


def decide(policy: Policy, does: Does, targets: tuple[Target, ...], home: str | None) -> HookVerdict:
    if not does.acts:
        return HookVerdict(PASS, "nothing in this call deletes or overwrites")
    block = "\n".join((does.text, *(f for t in targets for f in t.forms)))
    what = _what(does, targets)
    floor = does.floor or ruling.floor(block, home, does.acts) or next(
        (t.forms[-1] for t in targets if t.act == "delete" and (t.outside or t.root)), None)
    if floor is not None:
        return HookVerdict(DENY, f"cursor-pilot refused: this call would {what}, and {floor!r} is the home directory, '/', a "
                             "system path, a block device, the project itself or outside it, which nothing may remove. " + _GO_ON)
    guarded = next((t for t in targets if t.guard), None)
    if guarded is not None and guarded.guard is not None:
        guard = guarded.guard
        if guarded.act == EMPTIES and guard not in guarded.forms:
            return HookVerdict(ASK, f"cursor-pilot asks: this call would {what}, and may reach {guard!r}, which the guard on this "
                                "project's tool calls stands on")
        return HookVerdict(DENY, f"cursor-pilot refused: this call would {what}, and {guard!r} is what the guard on this project's "
                             "tool calls stands on (the agent's hook settings, or the prompt or policy it reads); only you change "
                             "it. " + _GO_ON)
    said = ruling.rule(policy, does.acts, block)
    if said.verdict == ruling.REFUSED and said.entry is not None and said.entry in policy.prohibitions:
        return _refused(what, said.entry)
    for t in targets:
        if t.act == "overwrite":
            continue
        found = _within(policy.prohibitions, does.acts, t) or _inside(policy.prohibitions, does.acts, t.inside)
        if found is not None and t.act == "delete":
            return _refused(f"{what}, and with it {found[1]}", found[0])
        worded = [p for p in policy.prohibitions if p.rules & does.acts and (o := terms(p.object)) is not None and (o.words or o.kinds)]
        if found is not None or (t.truncated and worded):
            held = f"{found[1]}, which your words protect ({found[0].quote!r})" if found else "more than can be checked"
            return HookVerdict(ASK, f"cursor-pilot asks: this call would {what}, and may reach {held}", found[0].quote if found else None)
    return _granted(policy, does, targets, block, what)


def _within(prohibitions: tuple[Entry, ...], acts: frozenset[str], t: Target) -> tuple[Entry, str] | None:
    """A prohibition whose path lies inside the folder a call removes (`rm -rf tests` and "tests/fixtures"), by the
    paths alone, however much the folder holds."""
    forms = [f.lower().rstrip("/") + "/" for f in t.forms if f != "."]
    for entry in prohibitions:
        named = terms(entry.object) if entry.rules & acts else None
        for token in named.tokens if named is not None else ():
            if "/" in token and (any(token.startswith(f) for f in forms) or ("." in t.forms and not token.startswith("/"))):
                return entry, token
    return None


def _granted(policy: Policy, does: Does, targets: tuple[Target, ...], block: str, what: str) -> HookVerdict:
    """Allowed only where a grant names every thing the call destroys (each path on its own: a grant of `build` does
    not cover `rm -rf build src`); an overwrite inside the project nothing forbids is left to the agent; else asked."""
    loose = does.acts - {_ACT.get(t.act, t.act) for t in targets}
    parts: list[tuple[frozenset[str], str, Target | None]] = [(frozenset({_ACT.get(t.act, t.act)}), "\n".join(t.forms), t) for t in targets]
    parts += [(loose, block, None)] if loose or not targets else []
    open_ = [(said, t) for acts, text, t in parts if (said := ruling.rule(policy, acts, text)).verdict != ruling.GRANTED]
    if not open_:
        first = ruling.rule(policy, *parts[0][:2])
        quote = first.entry.quote if first.entry is not None else None
        return HookVerdict(ALLOW, f"cursor-pilot allowed: this call would {what}; {first.why}", quote)
    if all(t is not None and t.act == "overwrite" and not t.outside for _, t in open_):
        return HookVerdict(PASS, f"an edit inside the project that nothing you wrote protects ({what})")
    said, t = open_[0]
    beyond = f" (outside the project: {t.forms[-1]})" if t is not None and t.outside else ""
    why = said.why.replace("this question", "this call").replace("here (the policy", "(the policy")
    return HookVerdict(ASK, f"cursor-pilot asks: this call would {what}{beyond}; {why}", said.entry.quote if said.entry is not None else None)


def _refused(what: str, entry: Entry) -> HookVerdict:
    return HookVerdict(DENY, f"cursor-pilot refused: this call would {what}; your words forbid it: {entry.quote!r}. {_GO_ON}",
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


def _what(does: Does, targets: tuple[Target, ...]) -> str:
    """The acts and their objects, as a person says them: "delete tests/fixtures", "overwrite notes.md"."""
    order = list(BY_RULE)
    acts = " and ".join(BY_RULE.get(a, a) for a in sorted(does.acts, key=lambda a: order.index(a) if a in order else 9))
    objects = list(dict.fromkeys(_named(t) for t in targets))
    shown = ", ".join(objects[:3]) + (f" and {len(objects) - 3} more" if len(objects) > 3 else "")
    return f"{acts} {shown}" if objects else f"{acts} ({does.evidence or does.text})"


def _named(t: Target) -> str:
    """The target as the call names it, and what it is through a link."""
    through = [f for f in t.forms[1:] if f != t.forms[0] and not f.startswith("/")]
    return f"{t.forms[0]} (a link to {through[0]})" if through and not t.forms[0].startswith("/") else t.forms[0]
