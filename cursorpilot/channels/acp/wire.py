"""The agent's stdio as the SDK gets it: lines that are not JSON-RPC are set aside (the SDK would log a traceback for
each), Cursor's extension requests (`cursor/…`) are renamed the SDK's way for extensions (`_cursor/…`), and stderr
goes to a log whose tail is kept, to quote when the agent fails."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path


async def pump(source: asyncio.StreamReader, sink: asyncio.StreamReader, not_json: Callable[[str], None]) -> None:
    try:
        while True:
            line = await source.readline()
            if not line:
                break
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                not_json(line.decode("utf-8", "replace").rstrip())
                continue
            method = message.get("method")
            if isinstance(method, str) and method.startswith("cursor/"):
                message["method"] = "_" + method
                line = (json.dumps(message) + "\n").encode()
            sink.feed_data(line)
    finally:
        sink.feed_eof()


class StderrLog:
    """The agent's stderr, appended to a file; the last 8 KiB kept in memory."""

    def __init__(self, path: Path):
        self.path = path
        self.tail = b""

    async def copy(self, source: asyncio.StreamReader) -> None:
        with open(self.path, "ab") as fh:  # noqa: ASYNC230 (a local log, opened once per agent: no wait worth a thread)
            while chunk := await source.read(65536):
                fh.write(chunk)
                fh.flush()
                self.tail = (self.tail + chunk)[-8192:]

    def lines(self) -> list[str]:
        return self.tail.decode("utf-8", "replace").splitlines()
