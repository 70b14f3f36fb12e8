"""The decision path: deny policy -> rules -> provider -> reply checks -> loop breaker. Shared by every channel.

`first()` runs what costs nothing (the policy on the action being approved, then the rules) and answers at once
when either decides. Otherwise the channel calls the provider (`request()` builds the prompt, on the caller's
thread; the call itself may run anywhere) and hands the reply to `after()`. Every answer, whoever chose it, then
passes `check()`: the policy on the reply itself, the choice it names, the policy on what a yes approves (a yes to
"Delete all files?" deletes them, whoever typed it but a human: the gate, gate.py), the loop breaker. `path()` is one
question's whole way through it, sequenced once for every channel. What a channel actually
delivered is told back with `delivered()`, which is what the loop breaker and the next prompts' history count.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable, Generator
from concurrent.futures import Executor
from dataclasses import replace

import os

from cursorpilot.decide import gate, hidden, policyfile, turns, weigh
from cursorpilot.decide.accepts import accepted
from cursorpilot.decide.compiled import Policy
from cursorpilot.decide.gate import Ground, Ruled
from cursorpilot.decide.gate import shown as shown_as
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide.choices import Offered, find
from cursorpilot.decide.echo import echoed, own_lines, screen_rows, unlabelled
from cursorpilot.decide.breaker import LoopBreaker
from cursorpilot.decide.policy import check as check_policy
from cursorpilot.decide.question import Choice, Decision, Kind, Question, Verdict
from cursorpilot.decide.yesno import may_say_yes
from cursorpilot.keys import needs_human, only_keys
from cursorpilot.providers.base import QA, AnswerRequest, FailedAttempt, Provider, Reply, Usage
from cursorpilot.records.answerer import Answerer
from cursorpilot.records.secret import is_masked, masked, names as secret_names
from cursorpilot.run_context import RunContext
from cursorpilot.records import models as R

WAIT_WORD = "WAIT"
CAPPED = "model-call cap reached"  # a Reply's reason when --max-model-calls refused the call: the run ends with exit 4
_ENTER = ("", "<enter>")  # an empty answer presses Enter alone: it takes the prompt's default (the system prompt says so)


def interpret(text: str) -> tuple[Verdict, str]:
    """A reply in the one-line grammar: WAIT, '? question' (a human), or what to type."""
    if text.strip() == WAIT_WORD:
        return Verdict.WAIT, ""
    if needs_human(text):
        return Verdict.ESCALATE, text[2:].strip() or "the answerer asks for a human"
    return Verdict.ANSWER, text


class Decider:
    def __init__(self, ctx: RunContext, governing_prompt: str, cwd: str | None, rules: Provider | None, filer: PromptFiler,
                 policy: Policy | None = None):
        self.ctx = ctx
        self.tx = ctx.tx
        self.governing_prompt = governing_prompt
        self.cwd = cwd
        self.rules = rules
        self.filer = filer
        self.breaker = LoopBreaker()
        self.history: deque[QA] = deque(maxlen=10)
        self.previous = ""  # who chose the last answer delivered (a rule's after: reads it)
        self.compiling = policyfile.Compiling(governing_prompt, policy)  # pinned (--policy), else compiled when a yes needs it
        self.home = os.path.expanduser("~")  # the hard floor's home directory
        self._asked: Counter[str] = Counter()  # model calls per question, for --max-model-calls
        self._offered: tuple[str, str, str, str] | None = None  # (prompt, text, source, as counted) of the last answer handed out

    @property
    def provider(self) -> Provider:
        return self.ctx.provider

    # -- what costs nothing ------------------------------------------------------------------------------------------
    def first(self, q: Question) -> Decision | None:
        """The deny policy on what is being approved, then the rules. None: the provider must be asked."""
        if q.kind == Kind.TURN_END:
            return self._turn_first(q)
        denied = gate.approval(q, self.ground())
        if denied is not None:
            return self.apply(q, denied)
        judging = q.kind == Kind.UNDECIDED  # a screen no detector rule explains: the user's rules may still know its words
        if self.rules is not None:
            reply = self.rules.answer(self._bare_request(q))
            self.tx.write(R.RulesChecked(hit=reply.text is not None, source=reply.source, prompt=q.text))
            if reply.text is not None:
                self.ctx.usage["rule_hits"] += 1
                return self.check(q, self._from_text(reply.text, reply.source, reply.secret, reply.matched, reply.named))
        if not self.provider.needs_prompt:  # rules or the script as the run's provider: no prompt, no thread needed
            reply = self.provider.answer(self._bare_request(q))
            if judging and reply.text is None:
                return Decision.escalate("no rule explains this screen, and it has been quiet: is it waiting for someone?", reply.source)
            if reply.text is not None and self.provider.name == "rules":
                self.ctx.usage["rule_hits"] += 1  # the run's own rules answered: a rule hit like any other
            return self.after(q, reply)
        return None

    def _turn_first(self, q: Question) -> Decision | None:
        """An agent stopped: rules of kind turn_end read its last message; a closing question is answered by the rules
        that answer questions; then a model judges, or, with rules only, nobody does (PASS: the goal check decides)."""
        offline = [r for r in (self.rules, self.provider if self.provider.name == "rules" else None) if r is not None]
        for asked, as_rule in ((q, True), (q.closing, False)):
            if asked is None:
                continue
            for rules in offline:
                reply = rules.answer(self._bare_request(asked))
                self.tx.write(R.RulesChecked(hit=reply.text is not None, source=reply.source, prompt=asked.text))
                if reply.text is None:
                    continue
                self.ctx.usage["rule_hits"] += 1
                if as_rule:
                    return self.check(q, turns.parse(reply.text, reply.source, bare_is_continue=True))
                return self.check(q, Decision(Verdict.ANSWER, text=reply.text, turn=turns.TurnVerdict.CONTINUE, source=reply.source,
                                              why="a rule answers the agent's question"))
        if self.provider.needs_prompt:
            return None
        return Decision(Verdict.PASS, source=self.provider.name, why="no rule of kind turn_end matches")

    # -- the provider --------------------------------------------------------------------------------------------------
    def _bare_request(self, q: Question) -> AnswerRequest:
        return AnswerRequest(
            governing_prompt=self.governing_prompt, kind=q.kind, rule_id=q.source, prompt_block=q.text,
            screen="\n".join(q.live), history=tuple(self.history), multiline=q.multiline, may_wait=q.may_wait,
            previous=self.previous, accepts=accepted(q), secret=q.secret,
        )

    def request(self, q: Question) -> AnswerRequest:
        """The provider's request, its prompt built within the budget, redacted and filed."""
        q = replace(q, notes=(*q.notes, *self._secret_notes(q)))
        request = self.filer.fill(self._bare_request(q), q, tuple(self.history))
        self.tx.write(R.ProviderRequest(provider=self.provider.name, kind=q.kind, rule_id=q.source, prompt=q.text,
                                        prompt_tokens_est=self.filer.last_tokens, prompt_file=self.filer.last_file))
        return request

    def _secret_notes(self, q: Question) -> tuple[str, ...]:
        """What the model is told of secrets: their names (never their values), and that a hidden prompt is not for guessing."""
        given = ", ".join(f"<secret:{name}>" for name in sorted(self.ctx.secrets))
        if q.secret:
            return ("Typed here is hidden (a password, a token): never make one up nor copy one from the screen. " +
                    (f"Type a secret by its name, where it fits: {given}." if given else
                     "No secret was given (--secret NAME=ENVVAR): ask a person, unless an empty answer is asked for."),)
        return (f"Secrets you may type by name where one is asked for (their values are never shown to you): {given}.",) if given else ()

    def call(self, request: AnswerRequest) -> Reply:
        """The provider's answer; a provider that raises is a provider error (an escalation), never a pilot crash.
        A reply that starts with the question's own label has it taken off; one that only repeats the question or our
        prompt is asked again once, in a short prompt that says so, then left to a human (decide/echo.py). Blocking:
        channels run it off their read loop."""
        if request.kind in (Kind.TURN_END, "weigh", "policy"):  # a verdict, a judgment, a compile: they quote, on purpose
            return self._answer(request)
        reply = self._unlabelled(request, self._answer(request))
        why = self._echo(request, reply)
        if why is None:
            return reply
        said = reply.text if reply.text is not None else (reply.raw or "")[:120]
        again = self._unlabelled(request, self._answer(self.filer.again(request, said, why)))
        merged = _joined(reply, again, FailedAttempt(f"the reply {said!r} {why}: asked again", 0.0))
        still = self._echo(request, again)
        if still is None or again.text is None:  # a refusal of its own (several lines again) keeps its reason
            return merged
        return replace(merged, text=None, wait=False, submit=None,
                       reason=f"the reply {again.text!r} {still}, after it was asked again: no answer")

    def _answer(self, request: AnswerRequest) -> Reply:
        if (capped := self._capped(request)) is not None:
            return Reply(text=None, source=self.provider.name, reason=f"{CAPPED}: {capped}")
        self._asked[" ".join(request.prompt_block.split())] += 1
        try:
            return self.provider.answer(request)
        except Exception as exc:
            return Reply(text=None, source=self.provider.name, reason=f"provider error: {exc}")

    def _capped(self, request: AnswerRequest) -> str | None:
        """Why --max-model-calls refuses one more call, or None: a model that misbehaves (asked again and again, the
        same question or new ones) can't spend without bound."""
        run_cap, question_cap = self.ctx.model_calls
        if run_cap is not None and self.ctx.usage["llm_calls"] >= run_cap:
            return f"{self.ctx.usage['llm_calls']} model calls in this run (--max-model-calls {run_cap}/{question_cap})"
        if question_cap is not None and self._asked[" ".join(request.prompt_block.split())] >= question_cap:
            return f"{question_cap} model calls for this one question (--max-model-calls {run_cap}/{question_cap})"
        return None

    @staticmethod
    def _unlabelled(request: AnswerRequest, reply: Reply) -> Reply:
        """`package name: demo-widget` at `package name: (work)` is demo-widget: the label goes, recorded as removed."""
        if reply.text is None or request.kind == Kind.TURN_END or reply.text in request.accepts:
            return reply
        found = unlabelled(reply.text, request.prompt_block)
        if found is None:
            return reply
        return replace(reply, text=found[0], removed=(*reply.removed, f"the question's own label {found[1]!r}"))

    def _echo(self, request: AnswerRequest, reply: Reply) -> str | None:
        """Why a model's reply is no answer worth a second ask, or None: it only repeats what it was shown
        (decide/echo.py), or it is several lines where one is typed (a 0.5B model gave sqlite3 three rows of data)."""
        if request.kind == Kind.TURN_END or not request.user:
            return None
        if reply.text is None:
            return "is several lines, and the prompt takes one" if reply.reason.startswith("multi-line reply refused") else None
        ours = own_lines(request.system, request.user, self.ctx.redactor.text(request.governing_prompt))
        return echoed(reply.text, request.prompt_block, ours, request.accepts, screen_rows(request.user))

    def after(self, q: Question, reply: Reply) -> Decision:
        """The provider's reply, recorded, then judged like every other answer."""
        self._received(reply, q.secret or reply.secret)
        if reply.reason.startswith(CAPPED):
            return Decision(Verdict.FAIL, why=reply.reason, source=reply.source, limit=True)
        failed = reply.reason.startswith("provider error")
        if self.breaker.provider_result(not failed):
            return Decision(Verdict.FAIL, why=f"{self.breaker.provider_errors} consecutive provider errors: {reply.reason}", source=reply.source)
        if q.kind == Kind.TURN_END:  # a verdict, structured or in one line; no verdict fails closed (a human)
            if reply.turn is not None:
                return self.check(q, turns.structured(reply.turn, reply.text, reply.reason, reply.source))
            if reply.text is None:
                return Decision.escalate(reply.reason or "no verdict", reply.source)
            return self.check(q, turns.parse(reply.text, reply.source, bare_is_continue=False))
        if reply.wait:
            if not q.may_wait:
                return Decision.escalate("the answerer said WAIT, but a prompt the rules know is waiting for an answer", reply.source)
            return Decision(Verdict.WAIT, source=reply.source, why=reply.reason or "the program is not waiting for anyone")
        if reply.text is None:
            return Decision.escalate(reply.reason or "no answer", reply.source)
        decision = self._from_text(reply.text, reply.source, reply.secret, reply.matched, reply.named)
        if reply.submit is not None and decision.verdict == Verdict.ANSWER:
            decision = replace(decision, submit=reply.submit)
        if decision.verdict == Verdict.WAIT and not q.may_wait:
            return Decision.escalate("the answerer said WAIT, but a prompt the rules know is waiting for an answer", reply.source)
        return hidden.refused(q, decision, self.provider.needs_prompt, self.governing_prompt) or self.check(q, decision)  # a model's own secret: a person's

    def _received(self, reply: Reply, secret: bool) -> None:
        """A provider's reply, recorded, counted and filed beside its prompt."""
        for attempt in reply.attempts:
            failed = R.ProviderRetry if attempt.wait_s is not None else R.ProviderError
            self.tx.write(failed(error=attempt.error, wait_s=attempt.wait_s))
        self.ctx.count_usage(reply)
        self.tx.write(R.ProviderReply(
            source=reply.source, secret=secret or None, text=reply.text, wait=reply.wait, submit=reply.submit,
            turn=reply.turn, judged=reply.judged, raw=reply.raw, removed=list(reply.removed), reason=reply.reason,
            usage=reply.usage.record(), cascade=[t.record() for t in reply.cascade] or None,
        ))
        self.filer.file_answer(replace(reply, text=masked(reply.text), raw=reply.raw and masked(reply.raw)) if secret and reply.text else reply)

    @staticmethod
    def _from_text(text: str, source: str, secret: bool = False, matched: str | None = None, named: tuple[str, ...] = ()) -> Decision:
        verdict, rest = interpret(text)
        if verdict == Verdict.ANSWER:
            return Decision(Verdict.ANSWER, text=rest, source=source, secret=secret or bool(secret_names(rest)), matched=matched,
                            named=named)
        return Decision(verdict, why=rest or "the answerer asked to wait", source=source)

    def path(self, q: Question, earlier: Callable[[], tuple[str, ...]] | None = None) -> Generator[AnswerRequest, Reply, Decision]:
        """One question's whole way through the decision path, sequenced here once for every channel: what costs
        nothing (`first`), then the provider (`after` its reply), then the judge of a yes (`weighed`). Each call the
        provider must make is yielded as its request (built here, on the caller's thread); the channel makes it where it
        may wait (`call`, on a worker thread) and sends the reply back; the Decision is what the path returns.
        `earlier`: the program's scrollback, rendered only when a model is asked (never for a rule hit)."""
        d = self.first(q)
        if d is None:
            if earlier is not None:
                q = replace(q, earlier=earlier())
            d = self.after(q, (yield self.request(q)))
        while d.weigh is not None:  # a yes that waits: for the policy compiled, then perhaps for the judge
            if d.weigh.stage == "policy":
                if (compile_request := self.compile_policy()) is not None:
                    self.policy_compiled((yield compile_request))
                d = self.check(q, replace(d, weigh=None))
            else:
                d = self.weighed(q, d, (yield self.weigh_request(q, d)))
        return d

    async def decide(self, q: Question, pool: Executor) -> Decision:
        """The path, for a channel that runs an event loop (ACP, headless): each provider call on `pool`, off the loop."""
        loop = asyncio.get_running_loop()
        path = self.path(q)
        try:
            request = next(path)
            while True:
                request = path.send(await loop.run_in_executor(pool, self.call, request))
        except StopIteration as done:
            return done.value

    # -- every answer -----------------------------------------------------------------------------------------------
    def check(self, q: Question, d: Decision) -> Decision:
        """The policy on the reply itself, the choice it names, the loop breaker."""
        if d.verdict != Verdict.ANSWER or d.text is None:
            return d
        text = d.text  # (the replace()s below change only the choices)
        shown = shown_as(q, d)  # for records and messages
        if d.denied is None and (denial := check_policy(text, self.cwd, self.ctx.allow)) is not None:
            evidence = denial.evidence if shown == d.text else masked(denial.evidence)
            self.tx.write(R.PolicyDenied(policy_rule=denial.rule, evidence=evidence, rule_id=q.source, reply=None, on="reply"))
            return Decision.escalate(f"the reply was denied by policy rule {denial.rule!r}", d.source)
        if q.choices and not d.choices and text.strip() in _ENTER:  # Enter alone: the default, the highlighted option
            if q.multi:
                d = replace(d, choices=tuple(c for c in q.choices if c.checked))  # the boxes as they are
            elif q.highlighted is not None:
                d = replace(d, choices=(q.choices[q.highlighted],))
            elif q.kind in (Kind.PERMISSION, Kind.FORM):
                return Decision.escalate("an empty answer names no option, and this request has no default to take", d.source)
        elif q.choices and not d.choices:
            chosen = self._chosen(q, text)
            if chosen is None:
                if q.kind in (Kind.PERMISSION, Kind.FORM) or not (only_keys(text) or q.free_text):
                    names = ", ".join(c.label for c in q.choices)
                    return Decision.escalate(f"the reply {shown!r} names none of the options ({names})", d.source)
            else:
                d = replace(d, choices=chosen)
        if d.denied is None and d.by.kind is not Answerer.PERSON:  # a person who answers decides for themselves
            g = self.ground()
            weighed = gate.turn_message(q, d, g) if q.kind == Kind.TURN_END else gate.closer_look(q, d, g) if may_say_yes(q, d) else None
            if weighed is not None:
                return self.apply(q, weighed)
        return self._counted(q, d)

    # -- the deny policy's gate (gate.py: pure; its effects carried out here) --------------------------------------------
    @property
    def policy(self) -> Policy | None:  # the governing prompt compiled (decide/compiled.py)
        return self.compiling.policy

    def ground(self) -> Ground:
        if self.policy is None and not self.provider.needs_prompt:  # the lexical reader's, at no cost: nothing waits for a model
            self.compile_policy()
        return Ground(self.policy, self.cwd, self.ctx.allow, self.home, self.provider.needs_prompt,
                      tuple(h.question for h in self.history), self.governing_prompt)

    def apply(self, q: Question, ruled: Ruled) -> Decision:
        """What the gate ruled, carried out (its records, counts, override, history line), then the checks after it."""
        for record in ruled.records:
            self.tx.write(record)
        self.ctx.usage.update({name: self.ctx.usage.get(name, 0) + 1 for name in ruled.counts})
        self.ctx.overrides.extend([ruled.override] if ruled.override else [])
        self.history.extend([ruled.history] if ruled.history is not None else [])
        if ruled.then == gate.CHECK:
            return self.check(q, ruled.decision)
        return self._counted(q, ruled.decision) if ruled.then == gate.COUNTED else ruled.decision

    def compile_policy(self) -> AnswerRequest | None:
        """None where the policy is had without a model call (pinned, cached, the lexical reader's); else its request."""
        return self.compiling.request(self.provider, self.ctx.redactor.text(self.governing_prompt), self.filer, self.tx)

    def policy_compiled(self, reply: Reply) -> None:
        self._received(reply, False)
        self.compiling.received(reply, self.tx)

    def _counted(self, q: Question, d: Decision) -> Decision:
        """The loop breaker, last: the answer as it will be given."""
        shown = shown_as(q, d)  # a secret is counted as it is delivered: masked
        if self.breaker.looping(q.text, shown):
            return Decision.escalate(f"loop: this question was already answered {shown!r} {self.breaker.repeat_limit} times", d.source)
        self._offered = (q.text, d.text or "", d.source, shown)
        return d

    def weigh_request(self, q: Question, d: Decision) -> AnswerRequest:
        """The focused judgment of a yes (d.weigh), built, redacted and filed like any prompt."""
        assert d.weigh is not None
        system, user = weigh.request(self.governing_prompt, d.weigh.look, d.weigh.reply, d.weigh.chosen_by, d.weigh.grants)
        request = self.filer.fill_text(system, user, "weigh")
        self.tx.write(R.ProviderRequest(provider=self.provider.name, kind="weigh", rule_id=q.source, prompt=d.weigh.look.block,
                                        prompt_tokens_est=self.filer.last_tokens, prompt_file=self.filer.last_file))
        return replace(self._bare_request(q), kind="weigh", system=request[0], user=request[1])

    def weighed(self, q: Question, d: Decision, reply: Reply) -> Decision:
        """The judge's reply on the yes d, recorded, then given or refused (gate.py)."""
        assert d.weigh is not None
        self._received(reply, q.secret or d.secret)
        if reply.reason.startswith(CAPPED):
            return Decision(Verdict.FAIL, why=reply.reason, source=reply.source, limit=True)
        return self.apply(q, gate.judged(q, d, reply, self.ground()))

    def _chosen(self, q: Question, text: str) -> tuple[Choice, ...] | None:
        offered = [Offered(c.label, c.detail, c.number, c.kind) for c in q.choices]
        wanted = [w for w in (text.split(",") if q.multi else [text]) if w.strip()]
        out = []
        for w in wanted:
            at = find(offered, w)
            if at is None:
                return None
            out.append(q.choices[at])
        return tuple(out) if out else None

    def delivered(self, prompt: str, text: str) -> None:
        """The channel typed or sent this answer to this prompt: count it for the loop breaker and the history. A secret
        comes back masked: it is counted as it was checked (`<secret:pw>` typed three times is three times the same
        answer, however the channel shows it)."""
        offered, self._offered = self._offered, None
        chose = offered is not None and offered[0] == prompt and (offered[1] == text or is_masked(text))
        self.breaker.answered(prompt, offered[3] if offered is not None and chose else text)
        self.history.append(QA(prompt, text))
        self.previous = offered[2] if offered is not None and chose else ""  # "": not one it chose


def _joined(first: Reply, second: Reply, between: FailedAttempt) -> Reply:
    """A question asked twice, as one reply: the second's answer, both calls' attempts and usage."""
    a, b = first.usage, second.usage
    cost = None if a.cost_usd is None and b.cost_usd is None else round((a.cost_usd or 0) + (b.cost_usd or 0), 8)
    usage = Usage(a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens, round(a.latency_s + b.latency_s, 3), cost,
                  a.calls + b.calls, a.cached_tokens + b.cached_tokens)
    return replace(second, usage=usage, attempts=(*first.attempts, between, *second.attempts))
