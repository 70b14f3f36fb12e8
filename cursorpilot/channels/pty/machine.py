"""The run's state machine: PURE (state, event) -> (state, actions).

The pilot (pty/pilot.py) feeds it events and carries out the actions it returns; an event
that makes no sense in the current state is a bug and raises, instead of being
silently ignored.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    INIT = "INIT"
    RUNNING = "RUNNING"  # program working or showing nothing actionable
    ASKING_QUESTION = "ASKING_QUESTION"  # a prompt was detected; the answerer is being asked
    AWAITING_INPUT = "AWAITING_INPUT"  # waiting for a human to type the answer
    ANSWERING = "ANSWERING"  # keys are being typed
    COMPLETED = "COMPLETED"
    ERROR = "ERROR"
    ABORTED = "ABORTED"


class Event(StrEnum):
    STARTED = "started"
    PROMPT = "prompt"  # an answerable prompt is on screen
    REPLY = "reply"  # the answerer produced keys to type
    NO_REPLY = "no_reply"  # the answerer could not answer (or the reply was stale)
    ESCALATE = "escalate"  # ask a human (stdin is a terminal)
    HUMAN_REPLY = "human_reply"
    TYPED = "typed"  # all keys written
    FINISHED = "finished"  # program exited 0, or an agent is idle after working
    FAILED = "failed"  # non-zero exit, crash, or a detected error screen
    ABORT = "abort"  # interrupt, timeout, max-steps, or no human available


class Action(StrEnum):
    ASK = "ask"  # consult the answerer
    TYPE = "type"  # type the reply
    ASK_HUMAN = "ask_human"
    WATCH = "watch"  # keep reading; expect the screen to change
    CLOSE = "close"  # close the program the profile's way
    STOP = "stop"  # stop the program now


TERMINAL = frozenset({State.COMPLETED, State.ERROR, State.ABORTED})


class IllegalTransition(RuntimeError):
    pass


_TABLE: dict[tuple[State, Event], tuple[State, tuple[Action, ...]]] = {
    (State.INIT, Event.STARTED): (State.RUNNING, (Action.WATCH,)),
    (State.RUNNING, Event.PROMPT): (State.ASKING_QUESTION, (Action.ASK,)),
    (State.ASKING_QUESTION, Event.REPLY): (State.ANSWERING, (Action.TYPE,)),
    (State.ASKING_QUESTION, Event.NO_REPLY): (State.RUNNING, (Action.WATCH,)),
    (State.ASKING_QUESTION, Event.ESCALATE): (State.AWAITING_INPUT, (Action.ASK_HUMAN,)),
    (State.AWAITING_INPUT, Event.HUMAN_REPLY): (State.ANSWERING, (Action.TYPE,)),
    (State.AWAITING_INPUT, Event.NO_REPLY): (State.RUNNING, (Action.WATCH,)),
    (State.ANSWERING, Event.TYPED): (State.RUNNING, (Action.WATCH,)),
    # A menu whose highlight never reached the option chosen: its Enter is withheld while its keys go, and a person decides.
    (State.ANSWERING, Event.ESCALATE): (State.AWAITING_INPUT, (Action.ASK_HUMAN,)),
    # Retrying Enter on an unchanged screen is typing again for the same prompt.
    (State.RUNNING, Event.REPLY): (State.ANSWERING, (Action.TYPE,)),
    (State.RUNNING, Event.ESCALATE): (State.AWAITING_INPUT, (Action.ASK_HUMAN,)),
    (State.RUNNING, Event.FINISHED): (State.COMPLETED, (Action.CLOSE,)),
}

# Failing or aborting is possible from every live state.
for _s in (State.INIT, State.RUNNING, State.ASKING_QUESTION, State.AWAITING_INPUT, State.ANSWERING):
    _TABLE[(_s, Event.FAILED)] = (State.ERROR, (Action.STOP,))
    _TABLE[(_s, Event.ABORT)] = (State.ABORTED, (Action.STOP,))
# The program may exit cleanly while we are typing or deciding (e.g. it ended on its own).
for _s in (State.ASKING_QUESTION, State.ANSWERING, State.AWAITING_INPUT):
    _TABLE[(_s, Event.FINISHED)] = (State.COMPLETED, (Action.CLOSE,))


def transition(state: State, event: Event) -> tuple[State, tuple[Action, ...]]:
    try:
        return _TABLE[(state, event)]
    except KeyError:
        raise IllegalTransition(f"{event.value!r} is not allowed in state {state.value}") from None


def table() -> dict[tuple[State, Event], tuple[State, tuple[Action, ...]]]:
    """A copy of the transition table, for documentation and tests."""
    return dict(_TABLE)
