"""What the PTY pilot's parts (pty/answering.py, quiet.py, turnend.py) read and call on the Pilot they are mixed into,
PURE and for the type checker only.

Each part is a mixin whose state is the Pilot's. Annotating `self` as the Pilot is not a type mypy accepts (a mixin's
self must be a supertype of the mixin), and a part that assigns `self.x` would declare `x` anew with the type of what it
assigned (a Protocol would not help: mypy takes an assignment in a subclass of one for a new declaration). So, for mypy
only, each part derives from this class: the Pilot's state, with its true types, and the Pilot's (or another part's)
rules a part calls, abstract. At run time the parts derive from `object` (nothing imports this module), and the Pilot, a
dataclass, owns every field named here; mypy checks that it does, with the same types.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cursorpilot.decide.deliver import RunCounts, Tally
    from cursorpilot.decide.limits import Limits
    from cursorpilot.decide.question import Decision
    from cursorpilot.decide.turns import Turns
    from cursorpilot.detect.classifier import Classification
    from cursorpilot.detect.profiles import Profile
    from cursorpilot.errors import ExitCode
    from cursorpilot.keys import Modes
    from cursorpilot.machine import Event, State
    from cursorpilot.pty.facts import Effect, PilotConfig, ScreenFacts
    from cursorpilot.pty.held import Asking, Resume, TurnEnd, Watch
    from cursorpilot.pty.typist import Typist


class PilotParts:
    """The Pilot as its parts see it (pty/pilot.py says what each field means)."""

    config: PilotConfig
    counts: RunCounts
    state: State
    reason: str
    worked: bool
    sent: bool
    starting: bool
    starting_since: float | None
    answered: dict[str, int]
    waited: dict[str, float]
    waits_in_a_row: int
    typist: Typist
    tally: Tally
    turns: Turns
    answered_to: int | None
    nudged: int
    limits: Limits
    _resume: Resume | None
    _went_on: str | None
    _asking: Asking | None
    _watch: Watch | None
    _token: int
    _wake: float | None
    _modes: Modes
    _text: str
    _turn: TurnEnd | None
    _typed: dict[str, str]
    _asked_on: dict[str, str]
    _busy_since: float | None
    _judged_rec: str | None

    @property
    @abstractmethod
    def profile(self) -> Profile: ...

    # -- the Pilot's rules (pty/pilot.py) ---------------------------------------------------------------------------
    @abstractmethod
    def _wake_by(self, t: float) -> None: ...

    @abstractmethod
    def _apply(self, event: Event, c: Classification | None) -> list[Effect]: ...

    @abstractmethod
    def _ask(self, c: Classification, kind: str | None, notes: tuple[str, ...] = (), not_taken: str | None = None) -> list[Effect]: ...

    @abstractmethod
    def _ask_whole(self, judged: Classification, facts: ScreenFacts, notes: tuple[str, ...], not_taken: str | None = None) -> list[Effect]: ...

    @abstractmethod
    def _asking_for(self, token: int, c: Classification, kind: str | None, not_taken: str | None = None) -> Asking: ...

    @staticmethod
    @abstractmethod
    def _still_there(c: Classification, current: Classification) -> bool: ...

    @abstractmethod
    def _escalate(self, c: Classification, why: str, kind: str | None = None, shown: str | None = None) -> list[Effect]: ...

    @abstractmethod
    def _fail(self, reason: str, c: Classification | None) -> list[Effect]: ...

    @abstractmethod
    def _abort(self, code: ExitCode, reason: str) -> list[Effect]: ...

    # -- another part's (answering.py, quiet.py) --------------------------------------------------------------------
    @abstractmethod
    def _type_answer(self, now: float, c: Classification, d: Decision, modes: Modes, kind: str | None,
                     secret: bool = False, prompt: str | None = None) -> list[Effect]: ...

    @staticmethod
    @abstractmethod
    def _not_taken(typed: str) -> tuple[str, ...]: ...

    @abstractmethod
    def _working(self, now: float, c: Classification, facts: ScreenFacts) -> list[Effect]: ...

    @abstractmethod
    def _stopped(self, c: Classification) -> bool: ...

    @abstractmethod
    def _stuck(self, now: float, c: Classification, still: float, why: str) -> list[Effect]: ...
