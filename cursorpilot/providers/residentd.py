"""The resident (resident.py says why): imports one SDK once, then forks a child for each run that connects.

    python -m cursorpilot.providers.residentd MODULE DIGEST [WARM_WITH...] SOCKET FD

FD is the listening socket, bound at SOCKET by the run that started it (so that run connects at once and waits in the
backlog while the SDK is imported). It exits after IDLE seconds without a run, or when SOCKET is no longer its own.
The child of a run takes the run's environment and config, makes the provider as the run would have made it, answers
"ready", and then makes one SDK call per request until the run hangs up. Nothing is logged, and nothing is kept.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from importlib import import_module

from cursorpilot.daemons import accept_loop
from cursorpilot.providers.base import Sampling


def main(argv: list[str]) -> int:
    module, key, *warm_with, path, fd = argv
    listener = socket.socket(fileno=int(fd))
    _warm(module, warm_with)
    return accept_loop(listener, path, lambda conn: serve(conn, key))


def _warm(module: str, warm_with: list[str]) -> None:
    """The SDK, and what its first call would import (its provider module's warm()); a local model, loaded."""
    import_module(f"cursorpilot.providers.{module}").warm(*warm_with)


def serve(conn: socket.socket, key: str) -> None:
    """One run: its hello (the digest, its environment, the provider and its config), then a call per request."""
    f = conn.makefile("rwb")
    hello = _receive(f)
    if hello is None:
        return
    if hello.get("digest") != key:
        _send(f, {"ready": False, "error": "another version of cursor-pilot"})
        return
    os.environ.clear()
    os.environ.update(hello["env"])
    os.environ["CURSORPILOT_RESIDENT"] = "0"  # the provider made here makes its calls here
    try:
        provider = _provider(hello["provider"], hello["config"], hello["key"])
    except Exception as exc:
        _send(f, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return
    _send(f, {"ready": True, "pid": os.getpid()})
    while (request := _receive(f)) is not None:
        provider.form = request["form"]
        provider.sampling = Sampling(bool(request.get("logprobs")), float(request.get("temperature") or 0.0))
        try:
            result = provider._send(request["system"], request["user"], request["kind"], tuple(request["accepts"]))
        except Exception as exc:
            failure = provider._classify(exc)
            fields = None if failure is None else {"message": failure.message, "retryable": failure.retryable,
                                                   "retry_after": failure.retry_after, "refused": failure.refused}
            _send(f, {"error": str(exc), "described": f"{type(exc).__name__}: {exc}", "failure": fields})
            continue
        _send(f, {"ok": list(result)})


CLASSES = {"openai": "OpenAIProvider", "anthropic": "AnthropicProvider", "inprocess": "LocalProvider"}


def _provider(name: str, config: dict, key: str):
    """The provider, made as the run made it (its config, its key), whose calls are then made here."""
    from cursorpilot.providers.base import ProviderConfig

    prices = config.get("prices")
    config = {**config, "prices": {k: tuple(v) for k, v in prices.items()} if prices else None}
    provider = getattr(import_module(f"cursorpilot.providers.{name}"), CLASSES[name])(ProviderConfig(**config), key)
    provider.client  # noqa: B018 - made now, before the run's first question
    return provider


def _send(f, message: dict) -> None:
    f.write(json.dumps(message).encode() + b"\n")
    f.flush()


def _receive(f) -> dict | None:
    line = f.readline()
    return json.loads(line) if line else None


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
