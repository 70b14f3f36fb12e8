"""The decision page, served by the run itself with aiohttp (the only importer of it, imported only when `--notify` or
`--listen` asks for the page), on its own thread and event loop, from a socket bound before the run began.

The contract (docs/human.md): `GET /d/<token>` shows the question (HTML; JSON with `Accept: application/json`);
`POST /d/<token>` with one form field `answer` answers it: 200 taken, 422 not taken (the deny policy, not an option:
the question stays open), 409 already answered (by whom, when), 410 no longer open, 403 a token this run did not sign,
413 an answer too long, 421 a Host header that is not this server's (no DNS rebinding). Every answer goes through the
same race as the terminal's (race.py): the first that passes the checks wins.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import os
import json
import socket
import threading
from collections.abc import Callable

from cursorpilot.errors import BadInput
from cursorpilot.human import ended, html
from cursorpilot.human.asked import ACCEPTED, FORBIDDEN, GONE, REFUSED, OfferResult
from cursorpilot.human.ended import HEADERS
from cursorpilot.human.race import Board, Offer, Pending

MAX_ANSWER = 16 * 1024  # characters: far more than any answer; a larger body is refused before it is read
MAX_BODY = MAX_ANSWER * 4 + 1024  # bytes of a form post (url-encoding can triple a character)
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def parse_listen(value: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 in brackets: [::1]:8765; PORT 0: any free port)."""
    host, sep, port = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise BadInput(f"--listen {value!r}: expected HOST:PORT, e.g. 127.0.0.1:8765, 0.0.0.0:8765 or [::1]:8765")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """The page's socket, bound now: a port in use is exit 2 before anything runs, unless what holds it is the page of
    an ended run of this user (ended.py), which makes way."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for attempt in (1, 2):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            return sock
        except OSError as exc:
            sock.close()
            if attempt == 2 or exc.errno != errno.EADDRINUSE or not port or not ended.make_way(port):
                raise BadInput(f"--listen {host}:{port}: cannot listen there ({exc.strerror or exc})") from None
    raise AssertionError("unreachable")


def link_host(host: str) -> str:
    """The host a link names: the one given, or, for a wildcard (0.0.0.0, ::), this machine's name."""
    if host in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


class Hosts:
    """The Host headers this server answers to: the name in its links, loopback names, and any IP address (a DNS
    rebinding attack needs a name of the attacker's; an address literal is never one). Any other name: 421."""

    def __init__(self, link: str, port: int):
        self.port = port
        self.names = {link.lower(), *LOOPBACK, "[::1]"}

    def allowed(self, header: str | None) -> bool:
        if not header:
            return False
        name, port = header.lower(), ""
        if name.startswith("["):
            name, _, rest = name.partition("]")
            name, port = name + "]", rest.removeprefix(":")
        elif name.count(":") == 1:
            name, _, port = name.partition(":")
        if (int(port) if port.isdigit() else 80) != self.port:
            return False
        if name in self.names:
            return True
        try:
            ipaddress.ip_address(name.strip("[]"))
            return True
        except ValueError:
            return False


class Page:
    def __init__(self, sock: socket.socket, board: Board, hosts: Hosts, now: Callable[[], float], expires: Callable[[Pending], str],
                 index: Callable[[str], str | None] | None = None):
        self.sock = sock
        self.index = index  # a fleet's inbox (docs/fleet.md): GET /i/<its token> lists every open question; None: a token it refuses
        self.board = board
        self.hosts = hosts
        self.now = now  # monotonic: when an answer came
        self.expires = expires  # a question's "answer within …" line
        self.error = ""  # why the page could not be served
        self.refusals: dict[str, int] = {}  # requests turned away before any question: by reason (the run's end records them)
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="decision-page", daemon=True)
        self._thread.start()

    def ready(self, timeout: float = 15.0) -> bool:
        return self._ready.wait(timeout) and not self.error

    def close(self, ended_run: bool = False) -> None:
        """Stop serving. ended_run: the run is over and links were given out: its address goes on answering them 410
        (ended.py), from the same socket, so a request that comes meanwhile waits in the backlog for its 410."""
        if self._thread is not None:
            self._ready.wait(15.0)  # a page still starting is stopped once it has started
        held = socket.socket(fileno=os.dup(self.sock.fileno())) if ended_run and not self.error else None  # (stopping closes ours)
        loop, self._loop = self._loop, None
        if loop is not None and self._stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(5.0)
        self.sock.close()
        if held is not None:
            ended.hand_over(held, html.result_page(GONE, ended.GONE))
            held.close()

    # -- the server's thread --------------------------------------------------------------------------------------------
    def _serve(self) -> None:
        try:
            from aiohttp import web

            loop = self._loop = asyncio.new_event_loop()
            self._stop = asyncio.Event()
            app = web.Application(client_max_size=MAX_BODY, middlewares=[self._guard()])
            app.router.add_get("/d/{token}", self._get)
            app.router.add_post("/d/{token}", self._post)
            if self.index is not None:
                app.router.add_get("/i/{token}", self._index)
            runner = web.AppRunner(app, access_log=None, handle_signals=False)
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, self.sock).start())
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_until_complete(self._stop.wait())
            loop.run_until_complete(runner.cleanup())
        finally:
            loop.close()

    def _refused(self, why: str) -> None:
        self.refusals[why] = self.refusals.get(why, 0) + 1

    def _guard(self):
        """Every request: the Host header first (421), the handler's own refusals in the client's format, the headers."""
        from aiohttp import web

        @web.middleware
        async def guard(request, handler):
            if not self.hosts.allowed(request.headers.get("Host")):
                self._refused("foreign Host header")
                response = self._say(request, OfferResult(421, "this server does not answer for that host name"))
            else:
                try:
                    response = await handler(request)
                except web.HTTPRequestEntityTooLarge:
                    self._refused("too large")
                    response = self._say(request, OfferResult(413, f"the answer is too long (at most {MAX_ANSWER} characters)"))
                except web.HTTPException as exc:  # 404 and 405: no question here
                    response = self._say(request, OfferResult(exc.status, exc.reason))
            response.headers.update(HEADERS)
            return response

        return guard

    def _find(self, request) -> tuple[Pending | None, OfferResult | None]:
        pending, error = self.board.find(request.match_info["token"])
        if error is not None and error.status == 403:
            self._refused("wrong token")
        return pending, error

    async def _get(self, request):
        pending, error = self._find(request)
        if pending is None:
            return self._say(request, error)
        if pending.closed.is_set():  # answered or ended: the link is spent
            return self._say(request, pending.late(self.now()))
        if _wants(request, "application/json"):
            return self._json(200, {"question": _public(pending.asked), "expires": self.expires(pending)})
        return self._html(200, html.question_page(pending.asked, expires=self.expires(pending)))

    async def _index(self, request):
        assert self.index is not None
        body = self.index(request.match_info["token"])
        if body is None:
            self._refused("wrong token")
            return self._say(request, OfferResult(FORBIDDEN, "not a valid link"))
        return self._html(200, body)

    async def _post(self, request):
        pending, error = self._find(request)
        if pending is None:
            return self._say(request, error)
        form = await request.post()
        given = form.getall("answer", [])
        if len(given) != 1 or not isinstance(given[0], str):
            return self._say(request, OfferResult(400, "post exactly one form field named answer (curl -d answer=TEXT)"))
        text = given[0]
        if len(text) > MAX_ANSWER:
            self._refused("too large")
            return self._say(request, OfferResult(413, f"the answer is too long (at most {MAX_ANSWER} characters)"))
        offer = pending.offer(Offer("page", text, who=request.remote or "", at=self.now()))
        result = await asyncio.get_running_loop().run_in_executor(None, offer.wait)
        if result.status == REFUSED and _wants(request, "text/html"):  # the question stays open: its page, saying why
            return self._html(REFUSED, html.question_page(pending.asked, expires=self.expires(pending), refused=result.message))
        return self._say(request, result, shown=("••••••" if pending.asked.secret else text) if result.status == ACCEPTED else None)

    # -- answers in the form the client asked for ----------------------------------------------------------------------
    def _say(self, request, result: OfferResult, shown: str | None = None):
        if _wants(request, "text/html"):
            return self._html(result.status, html.result_page(result.status, result.message, shown))
        if _wants(request, "application/json"):
            return self._json(result.status, {"status": result.status, "message": result.message})
        from aiohttp import web

        return web.Response(status=result.status, text=result.message + "\n", content_type="text/plain")

    @staticmethod
    def _html(status: int, body: str):
        from aiohttp import web

        return web.Response(status=status, text=body, content_type="text/html")

    @staticmethod
    def _json(status: int, body: dict):
        from aiohttp import web

        return web.Response(status=status, text=json.dumps(body, ensure_ascii=False), content_type="application/json")


def _wants(request, kind: str) -> bool:
    return kind in request.headers.get("Accept", "")


def _public(a) -> dict:
    """The question for a script or a bot: what the page shows, as data."""
    return {"text": a.prompt, "why": a.why, "kind": a.kind, "options": list(a.choices), "screen": "\n".join(a.screen),
            "action": a.action or None, "secret": a.secret, "multiline": a.multiline, "step": a.step, "steps": a.steps,
            "step_name": a.step_name, "program": a.program, "governing_prompt": a.governing_prompt}
