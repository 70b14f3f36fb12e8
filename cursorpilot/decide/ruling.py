"""A yes matched against the compiled policy: granted, refused, or held for the focused judge. PURE.

What the yes does (its acts, and the block whose words name its objects) is read from the program's question
(decide/weigh.py); what may grant or forbid it comes only from the user's words: the compiled policy
(decide/compiled.py), the user's rule for the question, the plan's `allow:`. In this order:
1. the hard floor (`floor`): deleting or overwriting the home directory, `/`, a system path, a block device, or
   anything outside the working tree is refused; only the plan's `allow:` lifts it (weigh.trigger leaves it out then);
2. a prohibition bears on the yes where it is about one of its acts and the block names its object (or it names no
   object in particular), unless the block names a thing it leaves out;
3. the user's rule for the question grants only an act its own pattern names (`Delete this file=y` names delete;
   `Run this command=y`, `continue=y` and `.=y` name none), over a prohibition, said so;
4. a bearing prohibition refuses, unless it names the block's thing only by its kind ("the feature branch" where the
   block says "branch old-ui") and a grant names the block's very thing ("Delete the old-ui branch");
5. a grant of one of the acts whose object the block names (or which names none) grants it, in the user's words;
6. a grant of the act whose object the block does not name in its words may still cover it ("the build output" is
   `target/`): the focused judge may point at that grant and at the block's words that name its object; both are
   checked (decide/weigh.judgment);
7. nothing else grants: the question's no is given, or a person asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cursorpilot.decide.compiled import BY_RULE, RULE_OF, Entry, Policy, terms
from cursorpilot.decide.policy import QUESTION_RULES

GRANTED, REFUSED, JUDGE = "granted", "refused", "judge"
_SYSTEM_DIRS = ("bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "opt", "proc", "root", "sbin", "srv", "sys", "usr", "var", "home")
_BLOCK_DEVICE = re.compile(r"(?<![\w/])/dev/(?:sd[a-z]\d*|nvme\d+n\d+(?:p\d+)?|vd[a-z]\d*|xvd[a-z]\d*|hd[a-z]\d*|mmcblk\d+(?:p\d+)?"
                           r"|md\d+|dm-\d+|mapper/\S+|disk/\S+|loop\d+(?:p\d+)?)\b")
_PATH = re.compile(r"(?<![\w.~$/-])(~/?|\$HOME/?|\$\{HOME\}/?|/(?:[\w.-]+/?)*\*?)(?=$|[\s'\"`;,:)?!])")


@dataclass(frozen=True, slots=True)
class Ruling:
    """What the policy says of one yes: the verdict, the entry that decided it (a grant or a prohibition), and why, in
    words a person reads. `candidates`: the grants a judge may point at (verdict JUDGE)."""

    verdict: str
    why: str
    entry: Entry | None = None
    candidates: tuple[Entry, ...] = ()


def floor(block: str, home: str | None, acts: frozenset[str]) -> str | None:
    """The path or device a yes to this block would delete, overwrite or format that no rule, prompt or model may
    grant: the home directory itself, `/`, a system folder (itself or all of it), a block device. None: none."""
    if not acts & {"delete", "overwrite", "mkfs", "rm_outside"}:
        return None
    if (dev := _BLOCK_DEVICE.search(block)) is not None:
        return dev.group(0)
    homes = {h.rstrip("/") for h in (home or "",) if h and h != "/"}
    for m in _PATH.finditer(block):
        path = m.group(1).rstrip("*").rstrip("/")
        if path in ("", "~", "$HOME", "${HOME}") or path in homes:
            return m.group(1)
        parts = path.strip("/").split("/")
        if len(parts) == 1 and parts[0] in _SYSTEM_DIRS:
            return m.group(1)
    return None


def rule_names(named: tuple[str, ...], acts: frozenset[str]) -> frozenset[str]:
    """The acts among `acts` a user's rule names in its own pattern's words (rules.spelled)."""
    words = " ".join(named)
    said = {RULE_OF[w] for w in named if w in RULE_OF}  # a rule's `grants:` names the act in the policy's own words
    return frozenset(a for a in acts if a in said or (a in QUESTION_RULES and QUESTION_RULES[a].search(words)))


def rule(policy: Policy, acts: frozenset[str], block: str, by_rule: frozenset[str] = frozenset(), can_judge: bool = False) -> Ruling:
    """The policy's word on a yes that carries out `acts` at the question shown as `block` (the hard floor is checked
    before, by the caller). `by_rule`: the acts the user's rule that chose the yes names; `can_judge`: a model can be
    asked to point at a grant."""
    bearing = [(p, how) for p in policy.prohibitions if p.rules & acts and (how := p.named_in(block))]
    if by_rule:
        over = f" (over your {bearing[0][0].quote!r})" if bearing else ""
        return Ruling(GRANTED, f"your rule names it{over}")
    grants = [(g, g.named_in(block)) for g in policy.grants if g.rules & acts]
    named = [(g, how) for g, how in grants if how in ("specific", "anything", "kind")]  # "other-kind": the judge's to point
    if bearing:
        p = next((p for p, how in bearing if how not in ("kind", "other-kind")), None)
        g = next((g for g, how in named if how == "specific"), None)
        if p is None and g is not None:
            other = bearing[0][0]
            return Ruling(GRANTED, f"granted by your words {g.quote!r} (your {other.quote!r} names another {'/'.join(_kinds(other))})", g)
        p = p or bearing[0][0]
        return Ruling(REFUSED, f"your words forbid it: {p.quote!r}", p)
    if named:
        g = next((g for g, how in named if how != "kind"), named[0][0])
        return Ruling(GRANTED, f"granted by your words {g.quote!r}", g)
    if grants and can_judge:
        return Ruling(JUDGE, "a grant of yours may cover it in other words", candidates=tuple(g for g, _ in grants))
    if grants:
        return Ruling(REFUSED, f"your grant {grants[0][0].quote!r} names something this question does not, and no model "
                               "can say it is the same", grants[0][0])
    acts_said = "/".join(BY_RULE[a] for a in sorted(acts, key=list(BY_RULE).index) if a in BY_RULE) or "this"
    return Ruling(REFUSED, f"nothing you wrote asks to {acts_said} here (the policy grants none of it)")


def _kinds(e: Entry) -> tuple[str, ...]:
    t = terms(e.object)
    return t.kinds if t is not None and t.kinds else ("thing",)
