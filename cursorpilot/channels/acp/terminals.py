"""The agent's terminals (`terminal/*`): commands the client runs for the agent, their output kept up to a limit.
Each runs in its own session and carries the step's mark, so nothing it starts outlives the run."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable

OUTPUT_LIMIT = 1 << 20  # bytes of a terminal's output kept by default


class UnknownTerminal(KeyError):
    pass


class Terminal:
    def __init__(self, id_: str, line: str, limit: int, clock: Callable[[], float]):
        self.id, self.line, self.limit, self._clock = id_, line, limit, clock
        self.output_at = clock()  # when it started or last wrote output
        self.output = b""
        self.truncated = False
        self.exit_code: int | None = None
        self.recorded = False  # its exit is in the transcript
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task | None = None

    async def start(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                         stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                         start_new_session=True)
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output_at = self._clock()
            self.output += chunk
            if len(self.output) > self.limit:
                self.output, self.truncated = self.output[-self.limit :], True
        self.exit_code = await self.proc.wait()

    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    async def wait(self) -> int | None:
        if self._reader is not None:
            await self._reader
        return self.exit_code

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Terminals:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._all: dict[str, Terminal] = {}
        self._count = 0
        self._clock = clock

    async def start(self, line: str, argv: list[str], cwd: str, env: dict[str, str], limit: int | None) -> Terminal:
        """A new terminal running argv; OSError when it can't be started (then there is no terminal)."""
        term = Terminal(str(self._count + 1), line, limit or OUTPUT_LIMIT, self._clock)
        await term.start(argv, cwd, env)
        self._count += 1
        self._all[term.id] = term
        return term

    def output_at(self) -> float | None:
        """When a command still running last wrote output (None: none runs)."""
        running = [t.output_at for t in self._all.values() if t.exit_code is None]
        return max(running) if running else None

    def get(self, terminal_id: str) -> Terminal:
        try:
            return self._all[terminal_id]
        except KeyError:
            raise UnknownTerminal(terminal_id) from None

    def release(self, terminal_id: str) -> Terminal:
        term = self.get(terminal_id)
        del self._all[terminal_id]
        term.kill()
        return term

    def kill_all(self) -> None:
        for term in self._all.values():
            term.kill()
