"""The moves of a PTY step every part makes, PURE: its state machine moved (pty/machine.py), the step finished, failed
or aborted, the program closed. Each changes the step's state (held.py's StepState) and returns the pilot's effects.
"""

from __future__ import annotations

from cursorpilot.channels.pty.facts import Close, Effect
from cursorpilot.channels.pty.held import StepState
from cursorpilot.channels.pty.machine import Action, Event, transition
from cursorpilot.decide.deliver import Record
from cursorpilot.detect.classifier import Classification
from cursorpilot.errors import ExitCode
from cursorpilot.keys import to_writes
from cursorpilot.records import models as R

STOP_GRACE = 3.0  # SIGINT (or the quit keys), then SIGKILL after this long
LATE = Record(R.Kill(reason="program did not exit in time", signal="SIGKILL"))


def go(s: StepState, event: Event, c: Classification | None) -> list[Effect]:
    """Move the step's state machine, recorded; a move that ends the step closes the program."""
    before = s.state
    s.state, actions = transition(s.state, event)
    out: list[Effect] = [Record(R.State(event=event.value, from_=before.value, to=s.state.value, rule_id=c.rule_id if c else None))]
    for action in actions:
        if action in (Action.CLOSE, Action.STOP):
            s.questions.asking = None
            out += close(s, graceful=action == Action.CLOSE or s.exit_code != ExitCode.INTERRUPTED)
    return out


def finish(s: StepState, reason: str, c: Classification | None) -> list[Effect]:
    s.reason = reason
    return go(s, Event.FINISHED, c)


def fail(s: StepState, reason: str, c: Classification | None) -> list[Effect]:
    s.exit_code, s.reason = ExitCode.FAILED, reason
    return go(s, Event.FAILED, c)


def abort(s: StepState, code: ExitCode, reason: str) -> list[Effect]:
    s.exit_code, s.reason = code, reason
    return go(s, Event.ABORT, None)


def close(s: StepState, graceful: bool) -> list[Effect]:
    """End the program: the profile's quit keys when it is healthy (never in a dry run: it types nothing), else
    SIGINT; SIGKILL if it has not exited after the grace."""
    s.typist.clear()
    s.answering.watch = None
    profile = s.profile
    keys = tuple(profile.finish.close) if graceful and not s.counts.dry_run else ()
    if keys:
        delay = max(profile.key_delay_ms / 1000, 0.3)
        s.typist.schedule(tuple(w for k in keys for w in to_writes(k, submit=False, key_delay=delay)), 0.0)
        return [Close(True, profile.finish.close_timeout_s, Record(R.Closing(how="keys", keys=list(keys))), LATE)]
    return [Close(False, STOP_GRACE, Record(R.Closing(how="signal", signal="SIGINT")), LATE)]
