"""A model provider's SDK, warm by the first question: its calls made by a resident process that imported it already.

`import openai` takes about a second and `import anthropic` two (their pydantic types), and a short program asks its
first question within a tenth of one. Imported lazily, the first answer waited for it; imported on a thread of the
pilot, it held the GIL while the program started and its first screen was read; imported by a process of its own
started with the run, it still took its second, on the other core. So the SDK is imported once, by a resident
process (residentd.py) that later runs reuse, and each run's calls are made by a child it forks for that run:

- started on demand: the first run that needs it starts it (and waits for it, as a provider process started with
  the run would); it needs nothing installed or configured;
- version-checked: its socket's name is a digest of what it runs (cursor-pilot's version and provider modules, the
  Python, the SDK's files), so a changed install starts a new one; each connection says the digest again;
- idle exit: it exits after IDLE seconds with no run, or as soon as its socket is no longer the one it made;
- no stale state: it never makes a client and never sees a key; the child forked for a run takes that run's whole
  environment and config, makes its own client, serves that run alone and exits with it.

The socket sits in a folder only this user can enter ($XDG_RUNTIME_DIR/cursor-pilot, else /tmp/cursor-pilot-UID),
and the daemon answers only its own user (SO_PEERCRED). Nothing it receives is logged. CURSORPILOT_RESIDENT=0 turns
it off: the SDK is then imported by the pilot, in the background, as before. So does any failure to reach it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import sys
import threading
from pathlib import Path

from cursorpilot import __version__
from cursorpilot.daemons import Unreachable, _daemons, connect, folder, spawn_daemon  # noqa: F401 - _daemons: the tests'
from cursorpilot.providers.base import Sampling


class RemoteFailure(Exception):
    """An SDK error raised in the run's child: its text, its type and text, and the Failure's fields the provider
    module classified it as there (None: not one of the SDK's errors)."""

    def __init__(self, text: str, described: str, fields: dict | None):
        super().__init__(text)
        self.described = described
        self.fields = fields


def remote(sdk: str, config, api_key: str, module: str | None = None, warm_with: tuple[str, ...] = ()) -> Remote | None:
    """The run's line to the resident for this SDK (connecting in the background), or None: the SDK is imported here.
    `module`: the provider's module, when its name is not the SDK's (inprocess.py, for llama_cpp); `warm_with`: what its
    warm() is given (a model file: each file has a resident of its own, which loads it once)."""
    if not wanted():
        return None
    fields = {"model": config.model, "base_url": config.base_url, "retries": config.retries, "timeout": config.timeout,
              "prices": config.prices}
    return Remote(sdk, module or sdk, fields, api_key, warm_with)


def wanted() -> bool:
    return os.environ.get("CURSORPILOT_RESIDENT", "1") != "0" and hasattr(socket, "AF_UNIX") and hasattr(os, "fork")


def digest(sdk: str, warm_with: tuple[str, ...] = ()) -> str:
    """What the daemon runs, in 16 hex digits: a daemon of another install, Python or SDK release (or model file) is never
    asked."""
    from importlib.util import find_spec

    here = Path(__file__).resolve().parent
    parts = [__version__, sys.executable, sys.version, sdk, str(here)]
    for arg in warm_with:
        st = os.stat(arg) if os.path.exists(arg) else None
        parts.append(f"{arg}:{st.st_size}:{st.st_mtime_ns}" if st else arg)
    for path in sorted(here.glob("*.py")):
        st = path.stat()
        parts.append(f"{path.name}:{st.st_mtime_ns}:{st.st_size}")
    spec = find_spec(sdk)
    origin = Path(spec.origin) if spec and spec.origin else None
    parts.append(f"{origin}:{origin.stat().st_mtime_ns}" if origin else "missing")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


class Remote:
    """One run's line to the resident: connected in the background from the moment the provider is made."""

    def __init__(self, sdk: str, provider: str, config: dict, api_key: str, warm_with: tuple[str, ...] = ()):
        self._sock: socket.socket | None = None
        self._file: io.BufferedRWPair | None = None
        self.child: int | None = None  # the pid of the resident's child that serves this run
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        hello = {"provider": provider, "config": config, "key": api_key, "env": dict(os.environ)}
        self._thread = threading.Thread(target=self._connect, args=(sdk, provider, hello, warm_with), name="resident-connect",
                                        daemon=True)
        self._thread.start()

    def _connect(self, sdk: str, provider: str, hello: dict, warm_with: tuple[str, ...]) -> None:
        try:
            key = digest(sdk, warm_with)
            path = os.path.join(folder(), f"{provider}-{key}.sock")
            sock = connect(path) or _start(provider, key, path, warm_with)
            self._file = sock.makefile("rwb")
            _send(self._file, {**hello, "digest": key})
            reply = _receive(self._file)
            if reply.get("ready") is not True:
                raise Unreachable(str(reply.get("error") or "the resident refused the run"))
            self._sock, self.child = sock, reply.get("pid")
        except Exception as exc:
            self._error = exc

    def ready(self) -> bool:
        self._thread.join()
        return self._sock is not None

    def send(self, form: str, system: str, user: str, kind: str, accepts: tuple[str, ...],
             sampling: Sampling) -> tuple[str, tuple[str, ...], int, int, int, float | None]:
        """One SDK call, made by the run's child: its result, or the SDK's error as RemoteFailure."""
        if not self.ready():
            raise Unreachable(str(self._error))
        with self._lock:  # one call at a time on the line (a run asks one question at a time)
            try:
                _send(self._file, {"form": form, "system": system, "user": user, "kind": kind, "accepts": list(accepts),
                                   "logprobs": sampling.logprobs, "temperature": sampling.temperature})
                reply = _receive(self._file)
            except (OSError, ValueError) as exc:
                self.close()
                raise Unreachable(f"the resident's child is gone: {exc}") from None
        if "ok" in reply:
            text, reasoning, tin, tout, cached, margin = reply["ok"]
            return text, tuple(reasoning), tin, tout, cached, margin
        raise RemoteFailure(reply.get("error", "error"), reply.get("described", "error"), reply.get("failure"))

    def close(self) -> None:
        """Hang up: the run's child exits."""
        for part in (self._file, self._sock):
            try:
                if part is not None:
                    part.close()
            except OSError:
                pass
        self._file = self._sock = None


def _start(module: str, key: str, path: str, warm_with: tuple[str, ...] = ()) -> socket.socket:
    """Start the daemon and connect to it: the connection waits in the backlog while the daemon imports its SDK."""
    try:
        spawn_daemon("cursorpilot.providers.residentd", [module, key, *warm_with], path)
    except OSError:  # another run started one just now: that one is asked
        pass
    sock = connect(path)
    if sock is None:
        raise Unreachable("the resident's socket refused the connection")
    return sock


def _send(f, message: dict) -> None:
    f.write(json.dumps(message).encode() + b"\n")
    f.flush()


def _receive(f) -> dict:
    line = f.readline()
    if not line:
        raise ValueError("end of stream")
    return json.loads(line)
