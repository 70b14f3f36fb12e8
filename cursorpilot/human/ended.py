"""After the run: the decision page's address answers every link with 410 "this run has ended", for an hour.

A person opens a question's link from a notice on their phone after the run is over. With nothing listening there the
connection was refused, which reads as a network problem, where the docs promised 410 (docs/human.md). So the run's end
hands the page's listening socket to a small process of its own, `python -m cursorpilot.human.ended`: it holds nothing
of the run's (no question, no key, no token can be checked there: a link is worth nothing once the run has ended) and
answers every request with 410 and the page the run rendered for it, for AFTERLIFE seconds
(`CURSORPILOT_PAGE_AFTERLIFE`, 0: none), then exits. The socket stays open across the handover, so a request that comes
meanwhile waits in the backlog and gets its 410.

A later run that listens on the same port (`--listen 0.0.0.0:8765` again) has the port at once: `make_way` ends that
process (its pid file is in this user's private folder, daemons.folder) and waits for the port to be free.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

AFTERLIFE = 3600.0  # seconds a run's page address answers 410 after the run
_started: list[subprocess.Popen] = []  # kept: no "still running" warning when this process ends first
GONE = "this run has ended: nothing can be answered here any more"
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
}


def afterlife() -> float:
    try:
        return max(0.0, float(os.environ.get("CURSORPILOT_PAGE_AFTERLIFE", AFTERLIFE)))
    except ValueError:
        return AFTERLIFE


def hand_over(sock: socket.socket, page: str) -> None:
    """The page's socket (still listening) to the process that answers 410 from now on; `page` is its HTML body. A
    failure to start it leaves things as they were before: nothing listens."""
    seconds = afterlife()
    if seconds <= 0:
        return
    try:
        pidfile = _pidfile(sock.getsockname()[1])
        fd = sock.fileno()
        proc = subprocess.Popen([sys.executable, "-m", "cursorpilot.human.ended", str(fd), str(seconds), pidfile], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(fd,), close_fds=True,
                                start_new_session=True, cwd="/", env=_env())
        _started.append(proc)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"html": page}).encode())
        proc.stdin.close()
    except Exception:  # (a run's end never fails for it)
        return


def make_way(port: int, timeout: float = 3.0) -> bool:
    """The port held by a page that answers 410 for an ended run of this user: that process ends, and the port is free
    when this returns True. False: the port is not held by one (another program has it)."""
    try:
        pidfile = _pidfile(port)
        with open(pidfile, encoding="ascii") as fh:
            pid = int(fh.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if b"cursorpilot.human.ended" not in fh.read():
                return False
        waiter = os.pidfd_open(pid)
    except (OSError, ValueError, AttributeError):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
        import select

        poll = select.poll()
        poll.register(waiter, select.POLLIN)
        return bool(poll.poll(int(timeout * 1000)))  # readable: it has exited, and its socket is closed
    except OSError:
        return False
    finally:
        os.close(waiter)


def _pidfile(port: int) -> str:
    from cursorpilot.daemons import folder

    return os.path.join(folder(), f"page-{port}.pid")


def _env() -> dict[str, str]:
    keep = ("PATH", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
    return {k: v for k, v in os.environ.items() if k in keep}


# -- the process that answers 410 -------------------------------------------------------------------------------------
def serve(sock: socket.socket, seconds: float, page: str) -> None:
    """Every request answered 410 until `seconds` have passed or SIGTERM comes; each on a thread of its own, so that a
    slow client holds up nobody."""
    import time
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from socketserver import ThreadingMixIn

    class Gone(BaseHTTPRequestHandler):
        def _gone(self, body: bool = True) -> None:
            accept = self.headers.get("Accept", "")
            if "text/html" in accept:
                kind, text = "text/html", page
            elif "application/json" in accept:
                kind, text = "application/json", json.dumps({"status": 410, "message": GONE})
            else:
                kind, text = "text/plain", GONE + "\n"
            data = text.encode()
            self.send_response(410)
            for name, value in {**HEADERS, "Content-Type": f"{kind}; charset=utf-8", "Content-Length": str(len(data)),
                                "Connection": "close"}.items():
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(data)

        def do_GET(self) -> None:
            self._gone()

        def do_POST(self) -> None:  # (the answer is not read: it answers nothing)
            self._gone()

        def do_HEAD(self) -> None:
            self._gone(body=False)

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Server(ThreadingMixIn, HTTPServer):
        daemon_threads = True

    server = Server(sock.getsockname()[:2], Gone, bind_and_activate=False)
    server.socket, server.timeout = sock, 1.0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        server.handle_request()


def main(argv: list[str]) -> int:
    fd, seconds, pidfile = int(argv[0]), float(argv[1]), argv[2]
    page = json.loads(sys.stdin.read() or "{}").get("html") or GONE
    sock = socket.socket(fileno=fd)

    def stop(*_: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    with open(pidfile, "w", encoding="ascii") as fh:
        fh.write(str(os.getpid()))
    try:
        serve(sock, seconds, page)
    finally:
        sock.close()
        try:
            with open(pidfile, encoding="ascii") as fh:
                mine = fh.read().strip() == str(os.getpid())
            if mine:
                os.unlink(pidfile)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
