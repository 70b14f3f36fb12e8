"""Which channel drives each kind of step, and what a channel is: one registry, one entry per channel (or per kind of
step a channel drives: the screen channel drives two, `cursor:` and `drive:`).

A channel is a folder here (pty/, acp/, headless/; shell.py for a plan's `run:` steps) whose loop's `drive(job)` takes a
Job and returns a StepResult (contract.py). Its entry says all the rest of the program knows of it, and nothing else
spells it: its plan key (a step `acp: TASK`), the command line its step starts (the Cursor binary with a `cursor:`
step's arguments, a known agent by name, a `drive:` step's command as written), the agents it knows by name
(`--agent`), whether it reads a screen (then its step gets its detector profile), the `run` flag that picks it for a
command or an agent (`--acp`, `--headless`: commands/runargs.py reads its options off the entries, and a fleet names the
channel by the same word, `channel: headless`), the record types it writes (records/), and its folder (the import
contracts: tests/unit/test_registry_one_entry.py holds pyproject's channel lines to the folders). A new channel is a
folder and one entry: the test there registers one and runs it through the plan, `run`'s flags and the fleet.

Each entry imports its channel when a step of that kind runs, not before (a run of shell steps never loads the PTY, the
ACP SDK or the event streams), by the module's name (`_late`): the registry imports no channel at all, so the plan can
read it from below every channel; the test holds each name to a callable in the entry's own folder.
Light on purpose, like runargs.py which reads it before a run's program starts: the standard library only, and none of
its heavier modules (no dataclasses, no typing). It names neither the plan nor the contract, not even for the type
checker (the plan imports it): a step is typed here by its shape, and a Job and a StepResult are the runner's to name.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not typing's: its import costs a run's start 2 ms; the type checker reads the name alike)
if TYPE_CHECKING:
    from collections.abc import Callable

    from typing import Any, Protocol

    class Step(Protocol):
        """What a plan step's command line is made of (plan.Step: named here by its shape, as the plan imports this)."""

        @property
        def run(self) -> Any: ...
        @property
        def cursor(self) -> Any: ...
        @property
        def drive(self) -> Any: ...
        @property
        def agent(self) -> Any: ...
        @property
        def kind(self) -> str: ...

    from cursorpilot.channels.contract import Job, StepResult


class Channel:
    """A channel's entry (keyword-only, frozen in use: the registry is read, never written, once the run starts)."""

    __slots__ = ("key", "value", "words", "agent", "answers", "drive", "command_line", "folder", "reads_screen", "agents", "launcher",
                 "flag", "help", "by_agent", "records", "called")

    def __init__(self, *, key: str, value: str, drive: Callable[[Job], StepResult], command_line: Callable[[Step, str], list[str]],
                 folder: str, words: bool = False, agent: str = "", answers: bool = True, reads_screen: bool = False,
                 agents: Callable[[], list[str]] | None = None, launcher: Callable[[str], list[str] | None] | None = None,
                 flag: str | None = None, help: str = "", by_agent: bool = False, records: tuple[str, ...] = (),
                 called: str = "") -> None:
        self.key = key  # the plan's key for its steps (`acp: TASK`; plan.StepKind)
        self.value = value  # the type of what the key holds in a plan (plan.Step's field, as written)
        self.words = words  # a string there is a command line, split into its words (and may not be empty)
        self.agent = agent  # its step needs `agent:` (which agents it knows, for the message); "": it takes none
        self.answers = answers  # it drives a program and answers it (rules, a goal check, turns), unlike `run:`
        self.drive = drive
        self.command_line = command_line  # the step's program (given the Cursor binary, for a cursor: step)
        self.folder = folder  # its folder (or module): what the import contracts name
        self.reads_screen = reads_screen  # its step gets its detector profile
        self.agents = agents  # the agents it knows by name (--agent NAME)
        self.launcher = launcher  # a known agent's command line (None: not known)
        self.flag = flag  # `run --FLAG` drives `-- COMMAND` or `--agent` through it; a fleet's `channel: FLAG`
        self.help = help  # the flag's help in `run --help`
        self.by_agent = by_agent  # `--agent` alone picks it (no flag needed)
        self.records = records  # the record types its loop writes (declared in records/)
        self.called = called or f"a {key}"  # a run through it, in a message: "an ACP" run

    def __repr__(self) -> str:
        return f"Channel({self.key!r})"


def _late(module: str, name: str) -> Callable:
    """`module`'s `name`, imported only when it is called, by its name: the registry imports no channel, not even late in
    a function (then the plan, which reads the entries, sat below the channels and above them at once: registry → a
    channel's loop → contract → plan → registry). tests/unit/test_registry_one_entry.py holds every name to a callable
    of the entry's own folder."""

    def call(*args):
        import importlib

        return getattr(importlib.import_module(module), name)(*args)

    call.__qualname__ = f"{module}.{name}"
    return call


def _names(module: str) -> Callable[[], list[str]]:
    """The agents a channel knows by name: its launchers module's LAUNCHERS, imported when asked."""

    def names() -> list[str]:
        import importlib

        return list(importlib.import_module(module).LAUNCHERS)

    return names


_shell = _late("cursorpilot.channels.shell", "drive")
_pty = _late("cursorpilot.channels.pty.loop", "drive")
_acp = _late("cursorpilot.channels.acp.loop", "drive")
_headless = _late("cursorpilot.channels.headless.loop", "drive")
_acp_launcher = _late("cursorpilot.channels.acp.launchers", "launcher")
_acp_agents = _names("cursorpilot.channels.acp.launchers")
_headless_launcher = _late("cursorpilot.channels.headless.launchers", "launcher")
_headless_agents = _names("cursorpilot.channels.headless.launchers")


def _run_line(step: Step, cursor_bin: str) -> list[str]:
    assert step.run is not None
    return list(step.run)


def _cursor_line(step: Step, cursor_bin: str) -> list[str]:
    import shlex

    assert step.cursor is not None
    return [*shlex.split(cursor_bin), *step.cursor]


def _drive_line(step: Step, cursor_bin: str) -> list[str]:
    assert isinstance(step.drive, list)
    return step.drive


def _agent_line(launcher: Callable[[str], list[str] | None]) -> Callable[[Step, str], list[str]]:
    """An agent's step: its command as written, or a known agent's by name (else the name as a command line)."""

    def line(step: Step, cursor_bin: str) -> list[str]:
        import shlex

        if not isinstance(step.agent, str):
            return list(step.agent or [])
        return launcher(step.agent) or shlex.split(step.agent)

    return line


_ACP_RECORDS = ("acp_initialized", "acp_session", "acp_update", "tool_call", "plan", "permission_request", "elicitation",
                "acp_extension", "acp_cancel", "acp_not_json", "acp_refused", "acp_client_error", "fs_read", "fs_write",
                "would_write", "terminal_started", "terminal_exited", "native_deny")
_HEADLESS_RECORDS = ("headless_session", "headless_message", "headless_event", "headless_not_json", "tool_call", "permission_request",
                     "native_deny")

CHANNELS: dict[str, Channel] = {c.key: c for c in (
    Channel(key="run", value="list[str]", drive=_shell, command_line=_run_line, folder="cursorpilot.channels.shell", answers=False),
    Channel(key="cursor", value="list[str]", drive=_pty, command_line=_cursor_line, folder="cursorpilot.channels.pty", reads_screen=True),
    Channel(key="drive", value="list[str] | str", words=True, drive=_pty, command_line=_drive_line, folder="cursorpilot.channels.pty",
            reads_screen=True),
    Channel(key="acp", value="str", agent="cursor, gemini, claude, codex", drive=_acp, command_line=_agent_line(_acp_launcher),
            folder="cursorpilot.channels.acp", agents=_acp_agents, launcher=_acp_launcher, flag="acp", by_agent=True,
            records=_ACP_RECORDS, called="an ACP", help="Drive the agent over the Agent Client Protocol (JSON-RPC on stdio), not a screen."),
    Channel(key="headless", value="str", agent="claude, cursor", drive=_headless, command_line=_agent_line(_headless_launcher),
            folder="cursorpilot.channels.headless", agents=_headless_agents, launcher=_headless_launcher, flag="headless",
            records=_HEADLESS_RECORDS, called="a headless",
            help="Drive the agent's print mode (claude -p, cursor-agent -p) through its event stream (docs/headless.md)."),
)}


COMMAND = "drive"  # the kind of step `run -- COMMAND` is, through no agent's channel: a program on a terminal


def drive(kind: str, job: Job) -> StepResult:
    return CHANNELS[kind].drive(job)


def command_line(step: Step, cursor_bin: str) -> list[str]:
    """The command line a plan step starts (the runner's, and the preflight check's: the first program is looked up
    before a run folder is made)."""
    return CHANNELS[step.kind].command_line(step, cursor_bin)


def flagged() -> list[Channel]:
    """The channels `run` picks by a flag (for `-- COMMAND` or `--agent`), in the order their flags are declared."""
    return [c for c in CHANNELS.values() if c.flag]
