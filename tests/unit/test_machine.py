import pytest

from cursorpilot.channels.pty.machine import TERMINAL, Action, Event, IllegalTransition, State, table, transition


def test_happy_path_prompt_answer_finish():
    s, a = transition(State.INIT, Event.STARTED)
    assert s == State.RUNNING
    s, a = transition(s, Event.PROMPT)
    assert (s, a) == (State.ASKING_QUESTION, (Action.ASK,))
    s, a = transition(s, Event.REPLY)
    assert (s, a) == (State.ANSWERING, (Action.TYPE,))
    s, a = transition(s, Event.TYPED)
    assert s == State.RUNNING
    s, a = transition(s, Event.FINISHED)
    assert (s, a) == (State.COMPLETED, (Action.CLOSE,))


def test_escalation_goes_through_awaiting_input():
    s, a = transition(State.ASKING_QUESTION, Event.ESCALATE)
    assert (s, a) == (State.AWAITING_INPUT, (Action.ASK_HUMAN,))
    s, _ = transition(s, Event.HUMAN_REPLY)
    assert s == State.ANSWERING


@pytest.mark.parametrize("state", [State.INIT, State.RUNNING, State.ASKING_QUESTION, State.AWAITING_INPUT, State.ANSWERING])
def test_fail_and_abort_from_every_live_state(state):
    assert transition(state, Event.FAILED) == (State.ERROR, (Action.STOP,))
    assert transition(state, Event.ABORT) == (State.ABORTED, (Action.STOP,))


@pytest.mark.parametrize("state", sorted(TERMINAL))
@pytest.mark.parametrize("event", list(Event))
def test_terminal_states_accept_nothing(state, event):
    with pytest.raises(IllegalTransition):
        transition(state, event)


def test_illegal_transitions_raise():
    with pytest.raises(IllegalTransition):
        transition(State.INIT, Event.PROMPT)
    with pytest.raises(IllegalTransition):
        transition(State.ANSWERING, Event.PROMPT)  # no new question while typing


def test_every_state_is_reachable_from_init():
    seen, frontier = {State.INIT}, [State.INIT]
    t = table()
    while frontier:
        s = frontier.pop()
        for (src, _), (dst, _) in t.items():
            if src == s and dst not in seen:
                seen.add(dst)
                frontier.append(dst)
    assert seen == set(State)
