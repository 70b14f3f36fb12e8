"""What an ACP agent may read, write and run through the client, PURE: the working directory bounds it, the deny policy
refuses what it names, and a dry run reads but writes and runs nothing. acp/loop.py does the reading, writing and
running; the pilot asks these rules first and carries out what they say.

Each rule returns the effects for the request (none: go ahead) and the deny policy's refusal, if that was the reason,
for the pilot to tell the turn-end judge. What was then done (read, written, run) comes back as a fact, and `done`
says how the transcript keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from cursorpilot.records import models as R
from cursorpilot.channels.acp.facts import (NOT_FOUND, REFUSED, CommandAsked, CommandExited, CommandStarted, Done, Effect, FileRead, FileWasRead,
                                   FileWrite, FileWritten, Refuse, Reply)
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.policy import Denial
from cursorpilot.decide.policy import check as check_policy

# Agents that can't take ACP's resource-not-found for a missing file. Gemini CLI (0.61 and before) gets the client's
# JSON-RPC error as a plain object, checks `String(err)` ("[object Object]") for "Resource not found", never maps it
# to ENOENT, and fails every write_file of a new file ("Error checking existing file: Resource not found"). They get
# an empty file instead, which is what their own ENOENT path makes of a missing one (google-gemini/gemini-cli#17588).
MISSING_AS_EMPTY = frozenset({"gemini-cli"})
OUTPUT_KEPT = 4000  # characters of a command's output the transcript keeps: its end, where a failure says why


@dataclass(frozen=True, slots=True)
class Bounds:
    """Where the agent works and what the plan lifted of the deny policy."""

    cwd: str
    allow: frozenset[str]
    dry_run: bool = False


def asked(f: FileRead | FileWrite | CommandAsked, b: Bounds, agent: str) -> tuple[list[Effect], Denial | None]:
    """The rule for what the agent asks to read, write or run: its effects, and the policy's refusal of a write or a
    command, for the turn-end judge."""
    match f:
        case FileRead():
            return file_read(f, b, agent), None
        case FileWrite():
            return file_write(f, b)
        case CommandAsked():
            return command(f, b)
        case _:
            assert_never(f)


def file_read(f: FileRead, b: Bounds, agent: str) -> list[Effect]:
    if not f.inside:
        return refuse(f.token, "fs/read_text_file", f.path, REFUSED, f"{f.path} is outside the working directory ({b.cwd})")
    denial = check_policy(f"cat {f.path}", b.cwd, b.allow)
    if denial is not None and denial.rule == "secrets_read":
        return [denied(denial, "acp.fs_read"),
                *refuse(f.token, "fs/read_text_file", f.path, REFUSED, f"reading {f.path} is refused by the deny policy ({denial.rule})")]
    if f.exists:
        return []
    if agent in MISSING_AS_EMPTY:
        return [Record(R.FsRead(path=f.path, chars=0, missing=True)), Reply(f.token, {"content": ""})]
    return refuse(f.token, "fs/read_text_file", f.path, NOT_FOUND, f"Resource not found: {f.path}")


def file_write(f: FileWrite, b: Bounds) -> tuple[list[Effect], Denial | None]:
    if not f.inside:
        return refuse(f.token, "fs/write_text_file", f.path, REFUSED, f"{f.path} is outside the working directory ({b.cwd})"), None
    denial = check_policy(f"write {f.path}", b.cwd, b.allow)
    if denial is not None:
        return [denied(denial, "acp.fs_write"), *refuse(f.token, "fs/write_text_file", f.path, REFUSED,
                                                       f"writing {f.path} is refused by the deny policy ({denial.rule})")], denial
    if b.dry_run:
        return [Record(R.WouldWrite(path=f.path, diff=f.diff)),
                *refuse(f.token, "fs/write_text_file", f.path, REFUSED, "dry run: nothing is written")], None
    return [], None


def command(f: CommandAsked, b: Bounds) -> tuple[list[Effect], Denial | None]:
    if not f.inside:
        return refuse(f.token, "terminal/create", f.line, REFUSED, f"`{f.line}` would run outside the working directory ({b.cwd})"), None
    denial = check_policy(f.line, b.cwd, b.allow)
    if denial is not None:
        return [denied(denial, "acp.terminal"),
                *refuse(f.token, "terminal/create", f.line, REFUSED, f"`{f.line}` is refused by the deny policy ({denial.rule})")], denial
    if b.dry_run:
        return [Record(R.WouldRun(command=f.line)), *refuse(f.token, "terminal/create", f.line, REFUSED, "dry run: nothing is run")], None
    return [], None


def denied(denial: Denial, rule_id: str) -> Record:
    return Record(R.PolicyDenied(policy_rule=denial.rule, evidence=denial.evidence, rule_id=rule_id, reply=None))


def refuse(token: int, method: str, what: str, error: str, message: str) -> list[Effect]:
    return [Record(R.AcpRefused(method=method, target=what, error=error, message=message)), Refuse(token, error, message, what)]


def done(f: Done) -> Record:
    """What the agent read, wrote and ran through the client, as the transcript keeps it."""
    match f:
        case FileWasRead():
            return Record(R.FsRead(path=f.path, chars=f.chars))
        case FileWritten():
            return Record(R.FsWrite(path=f.path, diff=f.diff))
        case CommandStarted():
            return Record(R.TerminalStarted(terminal_id=f.terminal_id, command=f.line))
        case CommandExited():
            return Record(R.TerminalExited(terminal_id=f.terminal_id, command=f.line, exit_code=f.exit_code,
                                           output=f.output[-OUTPUT_KEPT:], truncated=f.truncated))
        case _:
            assert_never(f)
