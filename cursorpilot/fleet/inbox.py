"""One inbox for the fleet (`--listen`, `--notify`): one decision page, the run's own (human/page.py), serving every
question that waits for a person across the fleet, and one notice per question with its own single-use link.

Each task's run serves its own page, on this machine's loopback or on its node, its links signed with a key the fleet
handed it (tokens.handed_key). The fleet is a client of that page's documented contract (docs/human.md, "Answering from
a script"): it reads a question as JSON, and relays each answer given on the inbox to it. The run still checks every
answer (the deny policy, the options) and says what became of it; the inbox shows that, word for word. So the inbox
decides nothing: its questions are copies, and the runs keep the race.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from cursorpilot.human.asked import ACCEPTED, GONE, REFUSED, TAKEN, Asked, OfferResult, notice
from cursorpilot.human.race import Board, Pending
from cursorpilot.human.tokens import Signer

RELAY_TIMEOUT = 40.0  # seconds an answer relayed to a run's page may take (it checks it, and may ask the deny policy's judge)


class Inbox:
    def __init__(self, fleet: str, sock, link_host: str, public: bool, notify: tuple[str, ...], say: Callable[[str], None]):
        from cursorpilot.human.page import Hosts, Page

        self.fleet = fleet
        self.notify = notify
        self.say = say
        self.board = Board(Signer(), time.time)
        self.secret = secrets.token_urlsafe(24)
        port = sock.getsockname()[1]
        self.base = f"http://{link_host}:{port}"
        self.page = Page(sock, self.board, Hosts(link_host, port), time.monotonic, lambda p: "", index=self._index)
        self.public = public
        self.keys: dict[str, str] = {}  # task -> the hex key its run signs its links with
        self.open: dict[tuple[str, str], tuple[Pending, str]] = {}  # (task, decision) -> its copy here, and its link here
        self._lock = threading.Lock()

    @property
    def link(self) -> str:
        return f"{self.base}/i/{self.secret}"

    def start(self) -> None:
        self.page.start()
        if not self.page.ready():
            from cursorpilot.errors import PilotError

            raise PilotError(f"the inbox could not start: {self.page.error}")

    def close(self) -> None:
        with self._lock:
            pending = [p for p, _ in self.open.values()]
            self.open.clear()
        for p in pending:
            p.close("the fleet ended")
        self.page.close()

    def key_for(self, task: str) -> str:
        self.keys[task] = secrets.token_hex(32)
        return self.keys[task]

    # -- the fleet's loop (runner.py) -----------------------------------------------------------------------------------
    def post(self, task: str, decision: str, page: str) -> None:
        """A task's question, copied here (off the loop: it is read from the run's page)."""
        threading.Thread(target=self._post, args=(task, decision, page), name=f"inbox-{task}", daemon=True).start()

    def withdraw(self, task: str, decision: str = "") -> None:
        with self._lock:
            keys = [k for k in self.open if k[0] == task and (not decision or k[1] == decision)]
            gone = [self.open.pop(k)[0] for k in keys]
        for p in gone:
            p.close("it is no longer asked: answered, withdrawn, or its task ended")

    def waiting(self) -> int:
        with self._lock:
            return len(self.open)

    # -- a question's thread ------------------------------------------------------------------------------------------
    def _post(self, task: str, decision: str, page: str) -> None:
        remote = f"{page}/d/{Signer(bytes.fromhex(self.keys[task])).token(decision, None)}"
        try:
            asked = _asked(task, _get_json(remote)["question"])
        except (OSError, ValueError, KeyError) as exc:
            self.say(f"{task}: its question could not be read from its page ({exc}): it waits there, unseen here")
            return
        pending = Pending(Signer.new_id(), asked, time.monotonic())
        link = f"{self.base}/d/{self.board.post(pending, None)}"
        with self._lock:
            self.open[(task, decision)] = (pending, link)
        self.say(f"{task}: answer on the inbox: {link}")
        if self.notify:
            threading.Thread(target=self._notice, args=(asked, link), name="notify", daemon=True).start()
        self._relay(pending, remote)

    def _relay(self, pending: Pending, remote: str) -> None:
        """The asking thread of the copy: each answer given here goes to the run's page, and what it says is the verdict."""
        while not pending.closed.is_set():
            offer = pending.next_offer(None)
            if offer is None:
                return
            result = _post_answer(remote, offer.text or "")
            if result.status == ACCEPTED:
                pending.accept(offer)
            elif result.status == REFUSED:
                pending.refuse(offer, result.message)
            else:
                offer.settle(result)
                pending.close(result.message)

    def _notice(self, asked: Asked, link: str) -> None:
        from cursorpilot.human import notify

        title, body = notice(asked, link)
        failed = [s for s in notify.send(list(self.notify), title, body) if not s.ok]
        if failed:
            self.say("a notice was not sent: " + "; ".join(f"{s.service}: {s.error}" for s in failed))

    def _index(self, token: str) -> str | None:
        import hmac

        from cursorpilot.human.html import inbox_page

        if not hmac.compare_digest(token.encode(), self.secret.encode()):
            return None
        with self._lock:
            rows = [(task, link, p.asked) for (task, _), (p, link) in self.open.items() if not p.closed.is_set()]
        return inbox_page(self.fleet, rows)


def _asked(task: str, q: dict) -> Asked:
    """The question as the run's page gives it (page._public), for this page to show the same."""
    return Asked(prompt=q.get("text") or "", why=q.get("why") or "", kind=q.get("kind") or "", step=int(q.get("step") or 1),
                 steps=int(q.get("steps") or 1), step_name=f"{task}: {q.get('step_name') or ''}", program=q.get("program") or "",
                 screen=tuple((q.get("screen") or "").split("\n")) if q.get("screen") else (), action=q.get("action") or "",
                 choices=tuple(q.get("options") or ()), governing_prompt=q.get("governing_prompt") or "",
                 secret=bool(q.get("secret")), multiline=bool(q.get("multiline")))


def _get_json(url: str) -> dict:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=RELAY_TIMEOUT) as response:
        return json.loads(response.read().decode("utf-8"))


def _post_answer(url: str, text: str) -> OfferResult:
    data = urllib.parse.urlencode({"answer": text}).encode()
    request = urllib.request.Request(url, data=data, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=RELAY_TIMEOUT) as response:
            body = json.loads(response.read().decode("utf-8"))
            return OfferResult(response.status, body.get("message") or "")
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read().decode("utf-8")).get("message") or exc.reason
        except ValueError:
            message = str(exc.reason)
        status = exc.code if exc.code in (TAKEN, GONE) else REFUSED if exc.code in (400, 413, REFUSED) else GONE
        return OfferResult(status, message)
    except OSError as exc:
        return OfferResult(GONE, f"the task's page could not be reached: {exc}")
