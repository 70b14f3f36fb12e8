"""The human rung of the decision path, the same for every channel: `Humans.ask()` puts a question to people wherever
they may be and returns the first answer that passes the checks, or None.

At once: the terminal (when someone can be there: stdin is one), the decision page (page.py, with `--listen` or
`--notify`), and a notice with the page's link (notify.py) sent once per question. The answers race (race.py): the
first that passes the deny policy and names an offered option wins; the others are told who answered. The wait is
bounded by `--human-timeout` (then exit 3, or the question's own no with `--on-human-timeout no`), by the end of the
step (its deadline, an interrupt: the runner withdraws what is open) and by the run's end. Each question, its notice,
every answer refused and the one taken (channel, latency) go into the transcript.

The loops call `ask()` on a worker thread, never on the thread that reads the program; the checks run on that thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cursorpilot.decide.deliver import NOBODY
from cursorpilot.decide.question import Decision, Question, Verdict
from cursorpilot.human.asked import GONE, REFUSED, Asked, OfferResult, asked, notice
from cursorpilot.human.race import Board, Offer, Pending
from cursorpilot.human.terminal import LineReader
from cursorpilot.human.tokens import Signer
from cursorpilot.records import answerer
from cursorpilot.records import models as R

if TYPE_CHECKING:
    from cursorpilot.clock import Clock
    from cursorpilot.human.page import Page
    from cursorpilot.channels.contract import AnswerCheck as Check
    from cursorpilot.channels.contract import Job
    from cursorpilot.records.transcript import Transcript

ON_TIMEOUT = ("exit", "no")
GAVE_UP = "the person at the terminal gave up (Ctrl-D)"


class Told(Protocol):
    """What the people tell the person watching the run (events.py's Sink is one): a note, and a question put to people
    shown with its page's link (`typed_here`: the terminal is read for the answer; `again`: why the last one typed here
    was not taken)."""

    def note(self, text: str) -> None: ...

    def ask_human(self, asked: Asked, *, link: str | None = None, qr: bool = False, typed_here: bool = False,
                  again: str = "") -> None: ...


@dataclass(frozen=True, slots=True)
class HumanConfig:
    terminal: bool = False  # someone may be at this terminal: its stdin is one (and CI is not set)
    notify: tuple[str, ...] = ()  # Apprise URLs
    sock: Any = None  # the decision page's socket, bound by the CLI (page.bind); None: no page
    link_host: str = "127.0.0.1"  # the host its links name
    public: bool = False  # it listens beyond loopback
    timeout: float | None = None  # --human-timeout, seconds
    on_timeout: str = "exit"  # exit | no
    key: bytes | None = None  # the page's signing key when a fleet handed one over (tokens.handed_key); else its own

    @property
    def reachable(self) -> bool:
        """Someone can be asked at all: the terminal, or the page."""
        return self.terminal or self.sock is not None


class Humans:
    def __init__(self, config: HumanConfig, tx: Transcript, clock: Clock, redact: Callable[[str], str], sink: Told,
                 reader: LineReader | None = None):
        self.config = config
        self.tx = tx
        self.clock = clock
        self.redact = redact
        self.sink = sink
        self.reader = reader or (LineReader() if config.terminal else None)
        self.board = Board(Signer(config.key), lambda: clock.utcnow().timestamp())
        self.page: Page | None = None
        self.base = ""  # http://host:port

    # -- the run's start and end (runner/run.py) ---------------------------------------------------------------------------
    def start(self) -> None:
        c = self.config
        if c.sock is None:
            return
        from cursorpilot.human.page import Hosts, Page

        port = c.sock.getsockname()[1]
        self.base = f"http://{c.link_host}:{port}"
        self.page = Page(c.sock, self.board, Hosts(c.link_host, port), self.clock.monotonic, self._expires)
        self.page.start()
        self.tx.write(R.DecisionPage(url=self.base + "/", public=c.public, notify=[_scheme(u) for u in c.notify] or None))
        if c.public:
            self.sink.note(f"the decision page listens beyond this machine ({self.base}/): anyone on that network who gets a "
                           "question's link can answer it")

    def withdraw(self, why: str) -> None:
        """The step ended (done, a deadline, an interrupt): what it asked and nobody answered is no longer asked."""
        for pending in self.board.open():
            pending.close(why)

    def close(self) -> None:
        self.withdraw("the run ended")
        page, self.page = self.page, None
        if page is not None:
            page.close(ended_run=self.board.linked())  # its links answer 410 "this run has ended" (ended.py)
            if page.refusals:
                self.tx.write(R.PageRefusals(counts=dict(page.refusals)))

    # -- asking ---------------------------------------------------------------------------------------------------------
    async def decide(self, q: Question, why: str, step: Job, check: Check, pool: Executor) -> Decision:
        """For a channel that runs an event loop (ACP, headless): people asked off the loop, on `pool`; the answer taken,
        recorded and checked like any other (an escalation saying why, when nobody answered)."""
        try:
            d = await asyncio.get_running_loop().run_in_executor(pool, self.ask, q, why, step, check)
        except Exception as exc:
            d = Decision.escalate(f"nobody could be asked ({type(exc).__name__}: {exc})", NOBODY)
        if d.verdict != Verdict.ANSWER or d.text is None:
            return d
        return check(q, Decision(Verdict.ANSWER, text=d.text, source=d.source))

    def ask(self, q: Question, why: str, step: Job, check: Check | None = None, shown: str | None = None) -> Decision:
        """The first answer that passes `check` (the deny policy, the options), as a Decision that says who gave it (a
        person, or --on-human-timeout's own no); or an escalation that says why no answer came (nobody answered in time,
        the person at the terminal gave up, nobody could be asked, the step ended). step: what the question belongs to
        (its Job)."""
        a = asked(q, why, step=step.index, steps=step.total, step_name=step.name, program=" ".join(step.command),
                  governing_prompt=step.governing_prompt, redact=self.redact, shown=shown)
        now, timeout = self.clock.monotonic(), self.config.timeout
        pending = Pending(Signer.new_id(), a, now, now + timeout if timeout else None)
        pending.on_late = lambda offer: self._late(pending, offer, step.index)
        link = None
        if self.page is not None and self.page.ready():
            link = f"{self.base}/d/{self.board.post(pending, timeout)}"
        elif self.page is not None:
            self.sink.note(f"the decision page could not start ({self.page.error}): only the terminal can answer")
        channels = [name for name, on in (("terminal", self.reader is not None), ("page", link is not None)) if on]
        self.tx.write(R.HumanAsked(step=step.index, decision=pending.decision, prompt=a.headline(), why=a.why, rule_id=a.rule_id,
                                   secret=a.secret or None, channels=channels, timeout_s=timeout))
        if not channels:
            return self._unanswered(pending, step.index, "nobody can be asked: no terminal, and the decision page could not start")
        stale = self.reader.typed_ahead() if self.reader is not None else []
        if stale:  # typed after the last question was answered elsewhere: it answers nothing
            self.sink.note(f"ignored {len(stale)} line(s) typed before this question was asked")
        self.sink.ask_human(a, link=link, qr=self.config.public, typed_here=self.reader is not None)
        if self.config.notify and link is not None:
            threading.Thread(target=self._notify, args=(pending, link), name="notify", daemon=True).start()
        reading = None
        if self.reader is not None:
            reading = threading.Thread(target=self._terminal, args=(pending,), name="terminal-answer", daemon=True)
            reading.start()
        try:
            return self._wait(pending, q, check, step.index)
        finally:
            pending.close("it is no longer asked")
            if reading is not None:
                reading.join(2.0)

    def _wait(self, pending: Pending, q: Question, check: Check | None, step: int) -> Decision:
        """The asking thread: each offer in turn, checked; the first that passes wins."""
        while True:
            left = None if pending.expires_at is None else pending.expires_at - self.clock.monotonic()
            if left is not None and left <= 0:
                return self._timed_out(pending, q, check, step)
            offer = pending.next_offer(left)
            if offer is None:
                if pending.closed.is_set():
                    return self._unanswered(pending, step, pending.ended or "the question was withdrawn")
                continue
            if offer.text is None:  # Ctrl-D at the terminal: giving up, as it always was
                pending.close("the person at the terminal gave up")
                offer.settle(OfferResult(GONE, "given up"))
                return self._unanswered(pending, step, GAVE_UP)
            why_not = _refused(q, check, offer.text)
            if why_not:
                pending.refuse(offer, why_not)
                self.tx.write(R.HumanRefused(step=step, decision=pending.decision, channel=offer.channel, why=why_not,
                                             status=REFUSED, text=offer.text, secret=pending.asked.secret or None))
                continue
            if pending.accept(offer):
                self._answered(pending, offer, step)
                return Decision(Verdict.ANSWER, text=offer.text, source=answerer.PERSON)
            return self._unanswered(pending, step, pending.ended or "the question was withdrawn")  # while it was checked

    def _timed_out(self, pending: Pending, q: Question, check: Check | None, step: int) -> Decision:
        limit = f"nobody answered within {self.config.timeout:g}s (--human-timeout)"
        no = pending.asked.no if self.config.on_timeout == "no" else None
        if no is not None and not _refused(q, check, no):
            offer = Offer("timeout", no, at=self.clock.monotonic())
            if pending.accept(offer):
                self.sink.note(f"{limit}: answered the question's own no, {no!r} (--on-human-timeout no)")
                self._answered(pending, offer, step)
                return Decision(Verdict.ANSWER, text=no, source=R.BY_TIMEOUT)  # the run's option chose it: nobody answered
        pending.close("the time to answer it is up")
        self.sink.note(limit + ("" if no is None else "; the question's no could not be given"))
        return self._unanswered(pending, step, limit)

    def _answered(self, pending: Pending, offer: Offer, step: int) -> None:
        """An answer taken: who gave it, and what (the one place a person's reply is recorded, whichever channel asked;
        a secret's masked as the transcript writes it)."""
        self.tx.write(R.HumanAnswered(step=step, decision=pending.decision, channel=offer.channel, by=offer.who or None,
                                      latency_s=round(offer.at - pending.asked_at, 3)))
        self.tx.write(R.HumanReply(text=offer.text, secret=True if pending.asked.secret else R.OMIT))
        if offer.channel == "page":  # (the terminal's answer is shown where it was typed; a timeout's, by _timed_out)
            by = f" ({offer.who})" if offer.who else ""
            self.sink.note(f"answered on the {offer.channel}{by} after {offer.at - pending.asked_at:.1f}s")

    def _late(self, pending: Pending, offer: Offer, step: int) -> None:
        """An answer that came after the question closed (it lost the race, or came after the time): recorded with what
        it was told."""
        if offer.text is None or offer.result is None:
            return
        self.tx.write(R.HumanRefused(step=step, decision=pending.decision, channel=offer.channel, why=offer.result.message,
                                     status=offer.result.status, text=offer.text, secret=pending.asked.secret or None))

    def _unanswered(self, pending: Pending, step: int, why: str) -> Decision:
        """Recorded, and said to the channel as an escalation whose why is why no answer came (its end's reason)."""
        self.tx.write(R.HumanUnanswered(step=step, decision=pending.decision, why=why,
                                        waited_s=round(self.clock.monotonic() - pending.asked_at, 3)))
        return Decision.escalate(why, source=NOBODY)

    # -- the channels' threads ------------------------------------------------------------------------------------------
    def _terminal(self, pending: Pending) -> None:
        """The terminal, read until an answer is taken here or elsewhere; each refusal said where it was typed."""
        assert self.reader is not None
        while not pending.closed.is_set():
            line = self.reader.read(pending.closed, secret=pending.asked.secret)
            if line is None and pending.closed.is_set():
                break
            result = pending.offer(Offer("terminal", line, at=self.clock.monotonic())).wait()
            if result.accepted or line is None:
                return
            if result.status == REFUSED:
                self.sink.ask_human(pending.asked, typed_here=True, again=result.message)
                continue
            self.sink.note(f"not taken: {result.message}")
            return
        w = pending.winner
        if w is not None and w.channel != "terminal":
            self.sink.note(f"answered on the {w.channel}: anything typed here now is ignored")

    def _notify(self, pending: Pending, link: str) -> None:
        from cursorpilot.human import notify

        if pending.closed.is_set():  # answered at the terminal before the notice went out: nobody else is needed
            return
        title, body = notice(pending.asked, link, self.config.timeout)
        sent = notify.send(list(self.config.notify), title, body)
        self.tx.write(R.HumanNotified(decision=pending.decision,
                                      sent=[{"service": s.service, "ok": s.ok, "error": s.error or None} for s in sent]))
        failed = [s for s in sent if not s.ok]
        if failed:
            self.sink.note(f"the notice was not sent to {len(failed)} of {len(sent)} target(s): "
                           + "; ".join(f"{s.service}: {s.error}" for s in failed))

    def _expires(self, pending: Pending) -> str:
        if pending.expires_at is None:
            return ""
        left = max(0.0, pending.expires_at - self.clock.monotonic())
        after = "its own no is answered" if self.config.on_timeout == "no" and pending.asked.no else "the run stops (exit 3)"
        return f"Answer within {left:.0f} s; then {after}."


def _refused(q: Question, check: Check | None, text: str) -> str:
    """Why this answer can't be taken ("" when it can): the deny policy on the reply itself, the options it names."""
    if check is None:
        return ""
    d = check(q, Decision(Verdict.ANSWER, text=text, source=answerer.PERSON, secret=q.secret))
    return "" if d.verdict == Verdict.ANSWER else (d.why or "not taken")


def _scheme(url: str) -> str:
    return url.partition("://")[0].lower() or "?"


def configure(*, terminal: bool, notify: list[str], listen: str | None, timeout: float | None, on_timeout: str,
              dry_run: bool = False) -> HumanConfig:
    """The options, checked before anything runs (exit 2 with one line): Apprise knows every --notify target, the
    page's address can be listened on, --on-human-timeout has a timeout to act on. The page is served when --listen or
    --notify asks for it (a notice carries its link), on 127.0.0.1 unless --listen says otherwise; never in a dry run,
    which asks nobody."""
    from cursorpilot.errors import BadInput

    if on_timeout not in ON_TIMEOUT:
        raise BadInput(f"--on-human-timeout {on_timeout!r}: expected one of {', '.join(ON_TIMEOUT)}")
    if on_timeout != "exit" and timeout is None:
        raise BadInput(f"--on-human-timeout {on_timeout} acts when --human-timeout passes: give --human-timeout DURATION too")
    if notify:
        from cursorpilot.human import notify as notices

        notices.check(notify)
    if dry_run or not (notify or listen):
        return HumanConfig(terminal=terminal, notify=tuple(notify), timeout=timeout, on_timeout=on_timeout)
    from cursorpilot.human import page
    from cursorpilot.human.tokens import handed_key

    host, port = page.parse_listen(listen) if listen else ("127.0.0.1", 0)
    return HumanConfig(terminal=terminal, notify=tuple(notify), sock=page.bind(host, port), link_host=page.link_host(host),
                       public=not page.is_loopback(host), timeout=timeout, on_timeout=on_timeout, key=handed_key())
