"""The deny policy's gate on an answer, the same for every channel. PURE: it returns what it rules and the records
and counts that go with it (`Ruled`); the Decider (decider.py) writes them and runs the checks that follow.

An approval is refused for its action (decide/policy.py). A yes to a question whose block names an act that destroys
is weighed (decide/weigh.py reads what it does; decide/ruling.py matches it against the governing prompt compiled into
a policy, decide/compiled.py): the hard floor first, then the user's rule that names the act, the prohibitions, the
grants in the user's words, and the focused judge where a grant names its object in other words. Granted, refused
(the question's no), or a person's. A turn end's next message is refused only where a prohibition forbids what it
asks for. Authority comes only from the user's words: what the program shows, and a model that read it, only describe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from cursorpilot.decide import consent, ruling, turns, weigh
from cursorpilot.decide.compiled import Policy, lexical
from cursorpilot.decide.policy import Denial
from cursorpilot.decide.policy import check as check_policy
from cursorpilot.decide.question import Closer, Decision, Kind, Question, Verdict
from cursorpilot.decide.yesno import refusal
from cursorpilot.providers.base import QA, Reply
from cursorpilot.records import answerer
from cursorpilot.records import models as R
from cursorpilot.records.secret import masked
from cursorpilot.records.secret import names as secret_names

_AGREES = re.compile(r"(?i)^\W*(yes|y|yeah|yep|sure|ok|okay|go ahead|do it|please do|approved?)\b")  # a turn end's yes
CHECK, COUNTED = "check", "counted"  # what the Decider does next with a ruled decision: every check, or the loop breaker only
Counted = Literal["policy_changed", "policy_granted"]  # the run's counters the gate adds to (run_context.UsageKey's)


@dataclass(frozen=True, slots=True)
class Ruled:
    """The gate's word on an answer: the decision, what follows it (`then`: CHECK, COUNTED or "" for as it is), and its
    effects: the records to write, the run's counters to add one to, the override to list, the history line."""

    decision: Decision
    then: str = ""
    records: tuple[R.Rec, ...] = ()
    counts: tuple[Counted, ...] = ()
    override: str = ""
    history: QA | None = None


@dataclass(frozen=True, slots=True)
class Ground:
    """What the gate rules from: the compiled policy (None until compiled), the working tree, the plan's allow-list, the
    home directory (the hard floor's), whether a model can judge, and the questions already answered."""

    policy: Policy | None
    cwd: str | None
    allow: frozenset[str]
    home: str | None
    can_judge: bool
    answered: tuple[str, ...] = ()
    prompt: str = ""  # the governing prompt: its lexical reading stands in where the policy is not compiled yet (a turn end)


def approval(q: Question, g: Ground) -> Ruled | None:
    """Approvals are judged by their action (the command, the file, the diff), not by the scrollback above them."""
    if not q.approval:
        return None
    denial = check_policy(q.action or q.text, g.cwd, g.allow)
    return None if denial is None else refuse(q, denial, None)


def refuse(q: Question, denial: Denial, on: str | None, changed: Decision | None = None, why: str = "") -> Ruled:
    """The question's no (its reject option, the profile's no, a No option, the no its spelling offers), or a human
    when it offers none. on: "yes" when it was a yes to the question that was refused, not the action; changed: the
    answer refused (who chose what), said wherever the answer is shown, and counted against the run's outcome."""
    no = refusal(q) if q.kind != Kind.TURN_END else None  # a turn end has no "no": a person decides
    record = R.PolicyDenied(policy_rule=denial.rule, evidence=denial.evidence, rule_id=q.source, reply=no and no[0], on=on,
                            changed_from=shown(q, changed) if changed is not None else R.OMIT,
                            chosen_by=changed.source if changed is not None else R.OMIT,
                            why=(why or None) if changed is not None else R.OMIT)
    history = QA(q.text, f"{no[0] if no else '(nothing)'}: refused by the deny policy (rule {denial.rule}: {denial.evidence})")
    if no is None:
        return Ruled(Decision.escalate(f"denied by policy rule {denial.rule!r} and the prompt has no 'no' choice"
                                       + (f": {why}" if why else ""), answerer.policy(denial.rule)), records=(record,), history=history)
    changes = f"{shown(q, changed)!r} ({changed.source}) -> {no[0]!r}" if changed is not None else ""
    decision = Decision(Verdict.ANSWER, text=no[0], choices=no[1], source=answerer.policy(denial.rule), denied=denial.rule, changed=changes)
    return Ruled(decision, CHECK, (record,), ("policy_changed",) if changes else (),
                 f"{' '.join((q.asked or q.text).split())[:80]}: {changes}" if changes else "", history)


def look(q: Question, d: Decision, g: Ground) -> weigh.CloserLook | None:
    """What a yes to this question does, read from its whole block; None: nothing to weigh."""
    return weigh.trigger(weigh.block(q.asked or q.text, q.lead, tuple(c.label for c in d.choices), g.answered), g.cwd, g.allow)


def closer_look(q: Question, d: Decision, g: Ground) -> Ruled | None:
    """A yes whose question's block names an act that destroys: None when nothing is to be weighed."""
    seen = look(q, d, g)
    return None if seen is None else weigh_yes(q, d, seen, g)


def weigh_yes(q: Question, d: Decision, seen: weigh.CloserLook, g: Ground) -> Ruled:
    """The yes matched against the floor, the user's rule and the compiled policy (decide/ruling.py): given, refused,
    or held for what it waits on (the policy compiled, the focused judgment)."""
    floor = None if "rm_outside" in g.allow else seen.floor or ruling.floor(seen.block, g.home, seen.acts)
    if floor is not None:
        return refuse(q, seen.denial, "yes", d, f"the hard floor: {floor!r} is the home directory, '/', a system path, a block "
                                                 "device or outside the working tree; only a plan's allow: that names it lifts it")
    if g.policy is None:
        return Ruled(replace(d, weigh=Closer(seen, shown(q, d), d.source, stage="policy")))
    rule = d.by.rule  # the id of the rule that answered, when one did
    by_rule = ruling.rule_names(d.named, seen.acts) if rule is not None and d.matched else frozenset()
    said = ruling.rule(g.policy, seen.acts, seen.block, by_rule, g.can_judge)
    if said.verdict == ruling.GRANTED:
        by = f"your rule {rule}" if by_rule else f"your words {said.entry.quote!r}" if said.entry else "your words"
        return granted(q, d, seen, f"{by}{_detail(said.why)}")
    if said.verdict == ruling.JUDGE:
        return Ruled(replace(d, weigh=Closer(seen, shown(q, d), d.source, grants=said.candidates)))
    return refuse(q, seen.denial, "yes", d, said.why)


def _detail(why: str) -> str:
    """What a ruling adds to who granted it (a prohibition it outweighs)."""
    m = re.search(r"\((over your .*|your .* names another .*)\)$", why)
    return f" ({m.group(1)})" if m else ""


def granted(q: Question, d: Decision, seen: weigh.CloserLook, by: str, judge: str | None = None, why: str = "") -> Ruled:
    """A weighed yes that goes through, said where its answer is said (`granted`) and recorded."""
    record = R.PolicyGranted(policy_rule=seen.denial.rule, evidence=seen.denial.evidence, rule_id=q.source, granted_by=by,
                             acts=sorted(seen.acts), judge=judge, why=why or None)
    acts = " / ".join(weigh.ACT_NAMES[a] for a in sorted(seen.acts, key=list(weigh.ACT_NAMES).index))
    return Ruled(replace(d, weigh=None, granted=f"{acts} granted by {by}"), COUNTED, (record,), ("policy_granted",))


def person(q: Question, d: Decision, seen: weigh.CloserLook, why: str) -> Ruled:
    """The user's own words disagree about this yes: a person decides, and the record says why."""
    record = R.PolicyDenied(policy_rule=seen.denial.rule, evidence=seen.denial.evidence, rule_id=q.source, reply=None, on="yes",
                            changed_from=shown(q, d), chosen_by=d.source, why=why)
    return Ruled(Decision.escalate(f"a yes that would {weigh.ACT_NAMES[seen.denial.rule]}: {why}", answerer.policy(seen.denial.rule)),
                 records=(record,))


def turn_message(q: Question, d: Decision, g: Ground) -> Ruled | None:
    """A turn end's next message is text the agent will act on, not a yes to what the agent proposed before: its
    commands were checked as commands; what it asks for in its own words is refused only where a prohibition of the
    policy forbids that ("Do not delete anything, leave it in place" asks for nothing). A bare yes to the agent's closing
    question ("Shall I delete build/?") is a yes to that question, weighed as any yes."""
    if d.turn != turns.TurnVerdict.CONTINUE or not d.text:
        return None
    bare = replace(d, choices=())
    if q.closing is not None and _AGREES.match(d.text):  # "Yes", "Sure, go ahead": a yes to what the agent asked
        seen = look(q.closing, bare, g)
        return None if seen is None else weigh_yes(q, d, seen, g)
    acts = consent.asked_for(d.text)
    if not acts:
        return None
    policy = g.policy or lexical(g.prompt)  # its prohibitions are among any compile's (compiled.from_model keeps them)
    p = next((p for p in policy.prohibitions if p.rules & acts and p.named_in(d.text)), None)
    if p is None:
        return None
    seen = weigh.CloserLook(d.text, acts, " ".join(d.text.split())[:200])
    return person(q, d, seen, f"the next message asks for what your words forbid: {p.quote!r}")


def judged(q: Question, d: Decision, reply: Reply, g: Ground) -> Ruled:
    """The judge's reply on the yes d: given (the grant recorded, as the model's judgment under which grant) or refused."""
    assert d.weigh is not None
    seen, grants = d.weigh.look, d.weigh.grants
    forbidding = tuple(p.quote for p in g.policy.prohibitions) if g.policy is not None else ()
    j = weigh.judgment(seen, grants, forbidding, reply.judged, reply.text, reply.act, reply.names, reply.reason)
    if not j.allowed or j.grant is None:
        return refuse(q, seen.denial, "yes", d, f"{reply.source}: {j.why}")
    by = f"the model's judgment ({reply.source}) that your words {j.grant.quote!r} cover {j.names or 'it'!r}"
    return granted(q, d, seen, by, judge=reply.source, why=j.why)


def shown(q: Question, d: Decision) -> str:
    """An answer as it is shown and recorded: a secret masked."""
    text = d.text or ""
    return masked(text) if (d.secret or q.secret) and not secret_names(text) else text
