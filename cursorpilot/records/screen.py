"""The records of a screen read and typed into: the PTY channel's (records/models.py gathers every type)."""

from typing import Any

from pydantic import Field

from cursorpilot.records.base import Rec, declare


# -- the screen (PTY channel) ----------------------------------------------------------------------------------------------
@declare("screen_state")
class ScreenState(Rec):
    """The classified screen changed: its state (`starting`, working, question, input, menu, idle, completed, error;
    `unknown` with rule `<profile>.undecided`: a screen no rule explains, read whole as a question when it is judged),
    the detector rule, the prompt block and the evidence. A question's (question, input, menu, a screen judged) has
    `facts`: what classified it beyond the rule's words (the kernel's word and the quiet, the terminal's mode, the
    cursor and how its line ends, how a menu's highlight was read)."""

    state: str | None
    rule_id: str | None
    prompt: str | None
    evidence: Any
    error: str | None
    facts: list[str] | None = None


@declare("state")
class State(Rec):
    """A transition of the step's state machine: the event, the state before (`from`) and after (`to`)."""

    event: str | None
    from_: str | None = Field(alias="from")
    to: str | None
    rule_id: str | None


@declare("agent_started")
class AgentStarted(Rec):
    """An agent given its task was seen working (`unseen`: it finished before it was ever seen working)."""

    rule_id: str | None
    unseen: bool | None = None


@declare("limit_hit")
class LimitHit(Rec):
    """The agent hit a usage or rate limit (`rule_id`: the screen's rule, or `acp.limit` / `headless.limit`): its `words`,
    the reset read from them (`reset`: ISO 8601, the latest it can be; `phrase`: the words it was read from; none when
    they give no time) and what the pilot does under --on-limit (`on_limit`): `action` wait (for `wait_s`, then the same
    session continues), switch (to the model the agent offers) or stop. `hits`: limits in a row (the backoff's step)."""

    rule_id: str | None
    words: str | None
    reset: str | None
    phrase: str | None
    action: str | None
    wait_s: float | None
    on_limit: str | None
    hits: int | None


@declare("limit_waited")
class LimitWaited(Rec):
    """A limit's wait ended after `waited_s`: `how` continued (`sent` was typed or sent, or the option of the agent's
    limit dialog chosen), switched (to another model), or went_on (the agent went on by itself)."""

    waited_s: float | None
    how: str | None
    sent: str | None = None


@declare("stuck")
class Stuck(Rec):
    """An agent at work showed no progress sign for `still_s` (no new output, its token counter still, its child
    processes idle; its spinner and elapsed timer do not count): `action` interrupt (its interrupt `keys`, or the
    channel's cancel, then it is told to continue), or escalate (it was interrupted once already in this step)."""

    rule_id: str | None = None
    still_s: float | None = None
    action: str | None
    keys: list[str] | None = None


@declare("watcher")
class Watcher(Rec):
    """A person looked in on the run (`cursor-pilot watch`, from process `pid`): `event` joined or left."""

    event: str | None
    pid: int | None


@declare("take_over")
class TakeOver(Rec):
    """A person took the keyboard (`cursor-pilot watch --take`, `by` their process): `action` taken (the pilot paused:
    nothing typed or asked meanwhile) or handed_back (`keys`: how many bytes they typed; the pilot judges the screen
    afresh, what it answered before forgotten)."""

    action: str | None
    by: str | None
    keys: int | None = None


@declare("asked_again")
class AskedAgain(Rec):
    """The same prompt came back after its answer (a new question that looks the same): it is asked again."""

    rule_id: str | None
    prompt: str | None


@declare("wait")
class Wait(Rec):
    """A quiet screen judged not to be asking (the answerer said WAIT): nothing typed."""

    rule_id: str | None
    prompt: str | None
    source: str | None
    why: str | None
    waits_in_a_row: int | None


@declare("reply_discarded")
class ReplyDiscarded(Rec):
    """An answer came back for a prompt that had changed meanwhile: it was not typed."""

    reason: str | None
    prompt_key: Any


@declare("menu_choice")
class MenuChoice(Rec):
    """A reply turned into moves through a menu: the options chosen, the keys (in the reply grammar), the row
    highlighted before."""

    rule_id: str | None
    reply: str | None
    options: list[str] | None
    keys: str | None
    highlighted: str | None
    multi: bool | None


@declare("menu_check_failed")
class MenuCheckFailed(Rec):
    """The highlight did not reach the chosen option: Enter was not pressed (an escalation follows)."""

    expected: Any
    seen: Any


@declare("keys_sent")
class KeysSent(Rec):
    """One write to the program's terminal: the key label, the exact text and bytes (hex). `secret`: typed while
    echo was off, at a prompt that asks for a password or the like, or a secret answer (`<secret:NAME>`, a rule's
    `secret: true`); `keys`, `data` and `hex` are then masked, all three as the text typed."""

    keys: str | None
    data: str | None
    hex: str | None
    secret: bool | None


@declare("enter_retry")
class EnterRetry(Rec):
    """The screen stayed exactly as it was after the answer, and the program waits on its terminal again: Enter was sent
    again (`attempt`)."""

    prompt_key: Any
    attempt: int | None


@declare("enter_after_echo")
class EnterAfterEcho(Rec):
    """An answer typed without Enter stayed echoed on its question's line, nothing else changed, and the program waits on
    its terminal again (it drew the echo itself): it was read, not taken, and Enter was sent once, the answer not typed
    again (a confirm without auto-enter showing `(y/N) Yes`, a `:` command line). `echoed`: what the line gained."""

    prompt_key: Any
    echoed: str | None


@declare("read_as_line")
class ReadAsLine(Rec):
    """A key the prompt's rule names (a pager's q, typed without Enter) stayed echoed after the prompt, nothing else
    changed: the prompt is a line to fill (a curses program's `:` command line), not a pager. The key was erased and
    the question asked again as a line, its answer typed with Enter. `echoed`: the key."""

    prompt_key: Any
    rule_id: str | None
    echoed: str | None


@declare("not_taken")
class NotTaken(Rec):
    """After the answer (and `enter_retries` more Enters) the screen stayed exactly as it was and the program waits on
    its terminal again: the answer was not taken, and the screen is judged again, told what was `typed`."""

    prompt_key: Any
    typed: str | None
    enter_retries: int | None


@declare("enter_skipped")
class EnterSkipped(Rec):
    """The program took the answer without Enter (one key made the question leave): Enter was not sent."""

    reason: str | None
    prompt: str | None


@declare("echo_not_seen")
class EchoNotSeen(Rec):
    """The typed text did not show near the cursor within `waited_s`: Enter went anyway. `secret`: `text` is masked."""

    text: str | None
    waited_s: float | None
    secret: bool | None


@declare("enter_while_working")
class EnterWhileWorking(Rec):
    """The typed text showed, but the kernel saw the program still at work on it (a filter over a long list, a
    completion) for `waited_s`: Enter went anyway. Only where keys are paced by the program (key_pace: reaction)."""

    waited_s: float | None


@declare("terminal_reply")
class TerminalReply(Rec):
    """What the pilot's terminal answered to the program's probes (cursor position, device attributes, colours)."""

    data: str | None
    hex: str | None


@declare("terminal_ignored")
class TerminalIgnored(Rec):
    """Escape sequences the terminal ignored during a step, counted by kind."""

    step: int | None = None
    counts: dict[str, int] | None
