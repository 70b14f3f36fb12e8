"""One question put to people on several channels at once: the first answer that passes the checks wins.

Every channel (the terminal's reader, the page's handler, any later one) offers what it got with `offer()`, from its
own thread, and waits for the result. The thread that asked (humans.py) takes the offers one at a time in the order
they came, checks each (the deny policy on the reply, the options: decide/decider.py, on that one thread as for any
answer), and either accepts it, which closes the question, or refuses it with the reason, and the question stays open
for another answer. An offer that comes after the question closed is told at once who answered it, and when. So two
answers that race are never both handed over, and the one that lost hears so.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from cursorpilot.human.asked import ACCEPTED, FORBIDDEN, GONE, REFUSED, TAKEN, Asked, OfferResult
from cursorpilot.human.tokens import Signer

VERDICT_WAIT = 30.0  # how long an offer waits for the asking thread's verdict (it checks in microseconds)


@dataclass(slots=True)
class Offer:
    channel: str  # terminal | page | ...
    text: str | None  # None: the channel gives up (Ctrl-D at the terminal)
    who: str = ""  # the page: the client's address
    at: float = 0.0  # monotonic
    result: OfferResult | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def settle(self, result: OfferResult) -> None:
        self.result = result
        self.done.set()

    def wait(self, timeout: float = VERDICT_WAIT) -> OfferResult:
        if not self.done.wait(timeout):
            return OfferResult(GONE, "no verdict came: the run may be ending")
        assert self.result is not None
        return self.result


class Pending:
    """One question, open until an answer is accepted, it is withdrawn or it times out."""

    def __init__(self, decision: str, asked: Asked, asked_at: float, expires_at: float | None = None):
        self.decision = decision
        self.asked = asked
        self.asked_at = asked_at  # monotonic
        self.expires_at = expires_at  # monotonic, or None
        self.token = ""  # the page's link for it, once there is a page
        self.closed = threading.Event()
        self.on_late: Callable[[Offer], None] | None = None  # told of each answer that came too late (the transcript)
        self.winner: Offer | None = None
        self.ended = ""  # why it closed with no winner: the person's words for a late offer
        self._offers: queue.Queue[Offer | None] = queue.Queue()
        self._lock = threading.Lock()

    # -- the channels ---------------------------------------------------------------------------------------------------
    def offer(self, offer: Offer) -> Offer:
        """Put an answer in; a question already closed says why at once (its offer is settled)."""
        with self._lock:
            closed = self.closed.is_set()
            if not closed:
                self._offers.put(offer)
        if closed:
            self._too_late(offer)
        return offer

    def late(self, now: float) -> OfferResult:
        """What an answer that comes after the question closed is told: who answered it and when, or why it closed."""
        w = self.winner
        if w is not None:
            by = {"terminal": "at the terminal", "timeout": "by --on-human-timeout (its own no)"}.get(w.channel, f"on the {w.channel}")
            who = f" ({w.who})" if w.who else ""
            return OfferResult(TAKEN, f"already answered {by}{who}, {w.at - self.asked_at:.1f} s after it was asked")
        return OfferResult(GONE, f"this question is no longer open: {self.ended or 'it closed'}")

    # -- the asking thread ----------------------------------------------------------------------------------------------
    def next_offer(self, timeout: float | None) -> Offer | None:
        """The next answer offered, in the order they came; None when `timeout` passed or the question was closed."""
        try:
            return self._offers.get(timeout=timeout)
        except queue.Empty:
            return None

    def refuse(self, offer: Offer, why: str) -> None:
        offer.settle(OfferResult(REFUSED, why))

    def accept(self, offer: Offer) -> bool:
        """The winner, unless the question closed while it was checked: then it is told why, like any late offer.
        Every offer still queued behind the winner is told who won."""
        with self._lock:
            won = not self.closed.is_set()
            if won:
                self.winner = offer
                self.closed.set()
        if not won:
            self._too_late(offer)
            return False
        offer.settle(OfferResult(ACCEPTED, "accepted: handed to the program"))
        self._drain()
        return True

    def close(self, why: str) -> None:
        """No answer will be taken (the time is up, the step ended, the run ends): offers queued or to come say why,
        and the asking thread, if it waits, wakes (to None)."""
        with self._lock:
            if self.closed.is_set():
                return
            self.ended = why
            self.closed.set()
        self._drain()
        self._offers.put(None)

    def _drain(self) -> None:
        while True:
            try:
                offer = self._offers.get_nowait()
            except queue.Empty:
                return
            if offer is not None:
                self._too_late(offer)

    def _too_late(self, offer: Offer) -> None:
        offer.settle(self.late(offer.at))
        if self.on_late is not None:
            self.on_late(offer)


class Board:
    """Every question this run put to people, by id: the page finds a token's question here. Answered ones stay, so
    that a late answer hears who answered; tokens are signed with this run's key (tokens.py)."""

    def __init__(self, signer: Signer, wall: Callable[[], float]):
        self._signer = signer
        self._wall = wall  # Unix seconds: a token's expiry
        self._all: dict[str, Pending] = {}
        self._lock = threading.Lock()

    def post(self, pending: Pending, expires_in: float | None) -> str:
        with self._lock:
            self._all[pending.decision] = pending
        pending.token = self._signer.token(pending.decision, self._wall() + expires_in if expires_in else None)
        return pending.token

    def find(self, token: str) -> tuple[Pending | None, OfferResult | None]:
        """The question a token names (open or answered: a late answer is offered, and told who answered), or what to
        say instead: 403 for a token this run did not sign, 410 for one past its time or naming no question."""
        decision, why = self._signer.read(token, self._wall())
        if decision is None:
            return None, OfferResult(FORBIDDEN, f"not a valid link ({why})")
        with self._lock:
            pending = self._all.get(decision)
        if pending is None:
            return None, OfferResult(GONE, "this question is no longer open")
        if why == "expired" and not pending.closed.is_set():
            return None, OfferResult(GONE, "this link has expired")
        return pending, None

    def open(self) -> list[Pending]:
        with self._lock:
            return [p for p in self._all.values() if not p.closed.is_set()]

    def linked(self) -> bool:
        """Some question's link was given out (shown, sent in a notice)."""
        with self._lock:
            return bool(self._all)
