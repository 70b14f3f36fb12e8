"""The deny policy's gate on an answer, the same for every channel: an approval refused for its action, and a yes to a
question whose block names an act that destroys, weighed (decide/weigh.py) before it is given: granted by the user's
rule for it or their prompt's plain words, refused where a sentence of theirs forbids it or nothing grants it, a
person's where their words disagree, or held for the focused judgment of a model (`judged`). A turn end's next message
is refused only where the governing prompt forbids what it asks for.

A part of the Decider (decider.py), which sequences the path and hands each answer here from `check()`; what the gate
decides goes back through the Decider's checks (`check`, `counted`), so a refusal's no is checked like any answer.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from cursorpilot.decide import consent, turns, weigh
from cursorpilot.decide.policy import Denial
from cursorpilot.decide.policy import check as check_policy
from cursorpilot.decide.question import Closer, Decision, Kind, Question, Verdict
from cursorpilot.decide.yesno import refusal
from cursorpilot.providers.base import QA, Provider, Reply
from cursorpilot.records import models as R
from cursorpilot.records.secret import masked
from cursorpilot.records.secret import names as secret_names
from cursorpilot.run_context import RunContext

_AGREES = re.compile(r"(?i)^\W*(yes|y|yeah|yep|sure|ok|okay|go ahead|do it|please do|approved?)\b")  # a turn end's yes
Check = Callable[[Question, Decision], Decision]


class Gate:
    def __init__(self, ctx: RunContext, governing_prompt: str, cwd: str | None, history: deque[QA], check: Check, counted: Check):
        self.ctx, self.tx = ctx, ctx.tx
        self.governing_prompt, self.cwd = governing_prompt, cwd
        self.history = history  # the Decider's: what was asked and answered, and refused
        self.check, self.counted = check, counted

    @property
    def provider(self) -> Provider:
        return self.ctx.provider

    def policy(self, q: Question) -> Decision | None:
        """Approvals are judged by their action (the command, the file, the diff), not by the scrollback above them."""
        if not q.approval:
            return None
        denial = check_policy(q.action or q.text, self.cwd, self.ctx.allow)
        return None if denial is None else self.refuse(q, denial, None)

    def refuse(self, q: Question, denial: Denial, on: str | None, changed: Decision | None = None, why: str = "") -> Decision:
        """The question's no (its reject option, the profile's no, a No option, the no its spelling offers), or a human
        when it offers none. on: "yes" when it was a yes to the question that was refused, not the action; changed: the
        answer refused (who chose what), said wherever the answer is shown, and counted against the run's outcome."""
        no = refusal(q) if q.kind != Kind.TURN_END else None  # a turn end has no "no": a person decides
        self.tx.write(R.PolicyDenied(policy_rule=denial.rule, evidence=denial.evidence, rule_id=q.source, reply=no and no[0], on=on,
                                     changed_from=shown(q, changed) if changed is not None else R.OMIT,
                                     chosen_by=changed.source if changed is not None else R.OMIT,
                                     why=(why or None) if changed is not None else R.OMIT))
        self.history.append(QA(q.text, f"{no[0] if no else '(nothing)'}: refused by the deny policy (rule {denial.rule}: {denial.evidence})"))
        if no is None:
            return Decision.escalate(f"denied by policy rule {denial.rule!r} and the prompt has no 'no' choice", f"policy:{denial.rule}")
        changes = f"{shown(q, changed)!r} ({changed.source}) -> {no[0]!r}" if changed is not None else ""
        if changes:
            self.ctx.overrides.append(f"{' '.join((q.asked or q.text).split())[:80]}: {changes}")
            self.ctx.usage["policy_changed"] += 1
        return self.check(q, Decision(Verdict.ANSWER, text=no[0], choices=no[1], source=f"policy:{denial.rule}", denied=denial.rule,
                                      changed=changes))

    def closer_look(self, q: Question, d: Decision) -> Decision | None:
        """A yes whose question's block names an act that destroys (decide/weigh.py): None when nothing is to be weighed."""
        look = self._look(q, d)
        return None if look is None else self._weigh_yes(q, d, look, q.asked or q.text)

    def _look(self, q: Question, d: Decision) -> weigh.Look | None:
        answered = tuple(h.question for h in self.history)
        return weigh.trigger(weigh.block(q.asked or q.text, q.lead, tuple(c.label for c in d.choices), answered), self.cwd, self.ctx.allow)

    def _weigh_yes(self, q: Question, d: Decision, look: weigh.Look, asked: str) -> Decision:
        """The yes given (granted by the user's rule for it, or by their prompt's plain words), refused (a sentence of
        the governing prompt forbids it, or nothing grants it and no model can judge), a person's (the same sentence asks
        for it and forbids it), or held for the focused judgment (`weigh`)."""
        reading = consent.reading(self.governing_prompt, look.acts, look.block)
        if d.source.startswith("rules:") and weigh.rule_grants(d.named, d.matched, asked, look):
            over = f" (over your {reading.forbidding[0].sentence!r})" if reading.forbidding else ""
            return self._granted(q, d, look, f"your rule {d.source.split(':', 1)[1]}{over}")
        if (both := reading.contradicts) is not None:
            return self._person(q, d, look, f"your sentence both asks for it and forbids it: {both.sentence!r}")
        if reading.forbidding:
            return self.refuse(q, look.denial, "yes", d, f"your governing prompt forbids it: {reading.forbidding[0].sentence!r}")
        if reading.granting:
            return self._granted(q, d, look, f"your prompt: {reading.granting[0].sentence!r}")
        if not self.provider.needs_prompt:
            return self.refuse(q, look.denial, "yes", d, "no grant: no rule of yours names it, the governing prompt does not ask "
                                                          "for it, and no model can judge it")
        return replace(d, weigh=Closer(look, shown(q, d), d.source))  # the channel asks the judge, then weighed()

    def _granted(self, q: Question, d: Decision, look: weigh.Look, by: str, judge: str | None = None, why: str = "") -> Decision:
        """A weighed yes that goes through, said where its answer is said (`granted`) and recorded."""
        self.tx.write(R.PolicyGranted(policy_rule=look.denial.rule, evidence=look.denial.evidence, rule_id=q.source, granted_by=by,
                                      acts=sorted(look.acts), judge=judge, why=why or None))
        self.ctx.usage["policy_granted"] += 1
        acts = " / ".join(weigh.ACT_NAMES[a] for a in sorted(look.acts, key=list(weigh.ACT_NAMES).index))
        return self.counted(q, replace(d, weigh=None, granted=f"{acts} granted by {by}"))

    def _person(self, q: Question, d: Decision, look: weigh.Look, why: str) -> Decision:
        """The user's own words disagree about this yes: a person decides, and the record says why."""
        self.tx.write(R.PolicyDenied(policy_rule=look.denial.rule, evidence=look.denial.evidence, rule_id=q.source, reply=None, on="yes",
                                     changed_from=shown(q, d), chosen_by=d.source, why=why))
        return Decision.escalate(f"a yes that would {weigh.ACT_NAMES[look.denial.rule]}: {why}", f"policy:{look.denial.rule}")

    def turn_message(self, q: Question, d: Decision) -> Decision | None:
        """A turn end's next message is text the agent will act on, not a yes to what the agent proposed before: its
        commands were checked as commands; what it asks for in its own words is refused only where the governing prompt
        forbids that ("Do not delete anything, leave it in place" asks for nothing). A bare yes to the agent's closing
        question ("Shall I delete build/?") is a yes to that question, weighed as any yes (refused: a person decides)."""
        if d.turn != turns.TurnVerdict.CONTINUE or not d.text:
            return None
        bare = replace(d, choices=())
        if q.closing is not None and _AGREES.match(d.text):  # "Yes", "Sure, go ahead": a yes to what the agent asked
            look = self._look(q.closing, bare)
            return None if look is None else self._weigh_yes(q, d, look, q.closing.asked or q.closing.text)
        acts = consent.asked_for(d.text)
        reading = consent.reading(self.governing_prompt, acts, d.text) if acts else None
        if reading is None or not reading.forbidding:
            return None
        look = weigh.Look(d.text, acts, " ".join(d.text.split())[:200])
        return self._person(q, d, look, f"the next message asks for what your governing prompt forbids: {reading.forbidding[0].sentence!r}")

    def judged(self, q: Question, d: Decision, reply: Reply) -> Decision:
        """The judge's reply on the yes d: given (the grant recorded, with the judge's reason) or refused (its no)."""
        assert d.weigh is not None
        look = d.weigh.look
        j = weigh.judgment(self.governing_prompt, look, reply.judged, reply.text, reply.act, reply.reason)
        if not j.allowed:
            return self.refuse(q, look.denial, "yes", d, f"{reply.source}: {j.why}")
        if j.act == "none":
            by = "the judge's reading: it does none of these" + (f", under your {j.sentence!r}" if j.sentence else f" ({j.why})")
        else:
            by = f"your prompt, {j.sentence!r}"
        return self._granted(q, d, look, by, judge=reply.source, why=j.why)



def shown(q: Question, d: Decision) -> str:
    """An answer as it is shown and recorded: a secret masked."""
    text = d.text or ""
    return masked(text) if (d.secret or q.secret) and not secret_names(text) else text
