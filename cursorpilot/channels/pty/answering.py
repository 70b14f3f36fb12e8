"""An answer's life on a screen, PURE (a part of pty/pilot.py's Pilot): typed, then taken or not.

An answer becomes the keys its prompt takes (pty/keystrokes.py), is handed over (decide/deliver.py: the caps, the dry
run's preview, the records) and queued in the typist; then the facts say whether the program took it: the screen changed
anywhere, or the kernel saw the program leave its terminal. Only the very same screen, read again, is an answer not
taken: Enter is re-sent on it, then it is judged again, told what was typed. A still screen alone proves nothing.

It keeps (held.py's Answers) what an answer leaves behind (the prompts answered, what was typed at each and on which
screen, the row history ends at) and the answer being watched.
"""

from __future__ import annotations

from dataclasses import replace

from cursorpilot.channels.pty.asking import ask, escalate
from cursorpilot.channels.pty.facts import Effect, ScreenFacts, Type
from cursorpilot.channels.pty.held import StepState, Watch
from cursorpilot.channels.pty.keystrokes import Refused, keystrokes
from cursorpilot.channels.pty.machine import Event, State
from cursorpilot.channels.pty.step import abort, go
from cursorpilot.channels.pty.typist import HighlightMissed, Out
from cursorpilot.decide.deliver import Answer, Record, deliver, split
from cursorpilot.decide.question import Decision, Kind
from cursorpilot.decide.turns import gist
from cursorpilot.detect.classifier import Classification, headline
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.keys import Modes, Write
from cursorpilot.records import answerer, models as R

RETRY_GAPS = (0.8, 1.6, 3.2)  # wait after an answer; Enter is re-sent after the first two
UNREAD_LOOK = 0.1  # while what was typed sits unread in the program's input, it is looked at this often


def follow(s: StepState, now: float, c: Classification, facts: ScreenFacts) -> list[Effect] | None:
    """None: the program took the answer, carry on with whatever it shows; else what to do meanwhile.

    Taken and not taken are facts about the question, not about paint. While the keys typed sit unread in the
    program's input, it has not seen them: whatever it shows is no answer to them (a clock repainted beside the
    prompt). Taken: the question went away or changed (its text, its highlight, the answer's echo: any change
    outside the rows it repaints by itself), or the kernel says the program left its terminal having read them (it
    works now: the never-silent deadline applies, not an escalation). Not taken: it read them, waits on its terminal
    again, and shows the same question; Enter is re-sent (only on the very same, unchanged screen), then the
    question is judged again, the judge told what was typed. A still screen alone proves nothing."""
    mine, w = s.answering, s.answering.watch
    assert w is not None
    if c.state == ScreenKind.SETTLING or w.content is None:
        return []  # still rendering, or keys still going out
    stuck_after = s.profile.stuck_after_s
    if facts.unread:  # not read yet: it has not reacted (a human is asked if it never reads them)
        if facts.quiet_for >= stuck_after:
            mine.watch = None
            return escalate(s, c, f"stuck: what was typed ({w.typed!r}) sat unread for {stuck_after:g}s")
        s.wake_by(now + UNREAD_LOOK)
        return []
    held = _held(s, w, facts)
    if held is not None:  # the key stays echoed on the question's line, nothing else changed: it wants Enter
        if now < w.due:
            s.wake_by(w.due)  # (unless more changes by then: then the program went on with it)
            return []
        if w.answer in _rule_keys(s, w.c):
            return _a_line(s, now, w, held)
        w.submit = True
        return _enter(s, now, Record(R.EnterAfterEcho(prompt_key=w.c.key, echoed=held)), w.c)
    if _reacted(c, facts, w) or facts.tty == "busy":  # (busy: it read what was typed and works on it)
        mine.watch = None
        return None
    if now < w.due:
        s.wake_by(w.due)
        return []
    shown = c if c.key == w.c.key or not c.block else w.c
    if w.submit and w.retries < len(RETRY_GAPS) - 1 and facts.content == w.content:
        w.retries += 1
        return _enter(s, now, Record(R.EnterRetry(prompt_key=w.c.key, attempt=w.retries)), shown)
    mine.watch = None
    not_taken = Record(R.NotTaken(prompt_key=w.c.key, typed=w.typed, enter_retries=w.retries))
    if shown.state == ScreenKind.UNKNOWN and not shown.block:  # a screen no rule explains now: asked about whole
        judged = facts.judged or w.c
        if judged.state == ScreenKind.UNKNOWN:
            return [not_taken, *ask(s, now, judged, Kind.UNDECIDED.value, not_taken_note(w.typed), w.answer, whole=facts)]
        shown = judged
    kind = Kind.UNDECIDED.value if shown.state == ScreenKind.UNKNOWN else None
    return [not_taken, *ask(s, now, shown, kind, not_taken_note(w.typed), w.answer)]


def _enter(s: StepState, now: float, said: Record, c: Classification) -> list[Effect]:
    """An Enter after an answer (its key echoed and held, or the very same screen still there), said and typed."""
    enter = (Write(b"\r", 0.0, "<enter>"),)
    s.typist.schedule(enter, now)
    return [said, *go(s, Event.REPLY, c), Type(enter)]


def _a_line(s: StepState, now: float, w: Watch, held: str) -> list[Effect]:
    """A key the rule names (a pager's q) stayed echoed after the prompt: no pager takes its keys so, a command line
    does. The key is erased, and the question asked again as the line it is (same identity, so the answer chosen
    while the erase shows counts), its answer typed with Enter: a q sent with Enter there would have run `q`."""
    s.answering.watch = None
    erase = (Write(b"\x7f" * len(held), 0.0, f"<backspace>x{len(held)}"),)
    line = replace(w.c, state=ScreenKind.INPUT, submit=True, rule_id=f"{w.c.rule_id}.line")
    note = (f"{held!r} was typed here as a pager's key, and the program showed it after the prompt and nothing else: "
            "this is a command line, not a pager. It was erased. Type the line this prompt asks for (Enter follows), "
            "or ask for a human.",)
    s.typist.schedule(erase, now)
    return [Record(R.ReadAsLine(prompt_key=w.c.key, rule_id=w.c.rule_id, echoed=held)), Type(erase),
            *ask(s, now, line, Kind.INPUT.value, note)]


def _held(s: StepState, w: Watch, facts: ScreenFacts) -> str | None:
    """What an answer typed without Enter left on its question's line, when that is all that changed and the program,
    which drew it (the terminal does not echo), waits on its terminal again: read, not taken. None otherwise."""
    if w.submit or facts.echoes is not False or facts.tty not in ("reading", "polling") or w.answer != w.typed:
        return None  # (an Enter went, the terminal echoes keys itself, the program works, a secret's mask)
    before = s.answering.asked_on.get(w.c.key or "")
    return None if before is None else echo_held(before, facts.text, w.typed)


def type_answer(s: StepState, now: float, c: Classification, d: Decision, modes: Modes, kind: str | None,
                secret: bool = False, prompt: str | None = None) -> list[Effect]:
    """The answer's keys, handed over and queued, and watched (unless refused, or a cap is reached). prompt: what
    was answered, when not the prompt block (a turn end: the agent's last message)."""
    try:
        k = keystrokes(c, d, modes, s.profile, kind=kind, secret=secret, secrets=s.config.secrets,
                       echo_check=s.config.echo_check)
    except Refused as exc:
        return escalate(s, c, str(exc), kind)
    out: list[Effect] = [k.choice] if k.choice else []
    asked = prompt or c.block
    delivered, halt = split(deliver(s.tally, Answer(asked, k.shown, d.source, c.rule_id, kind or c.state,
                                                    gist(asked) if kind == Kind.TURN_END else headline(asked),
                                                    extra={"secret": True} if k.secret else {},
                                                    preview_extra={"keys": [w.label for w in k.writes]}, changed=d.changed,
                                                    granted=d.granted)))
    if halt is not None:
        return [*out, *delivered, *abort(s, halt.code, halt.reason)]
    _answered(s, c, k.shown, kind, d, asked)
    event = Event.REPLY if s.state == State.ASKING_QUESTION else Event.HUMAN_REPLY
    s.answering.watch = Watch(c, k.submit, k.shown, d.text or "", float("inf"))
    s.quiet.waits_in_a_row = 0  # whatever the program does next answers to us: idle afterwards means done
    s.limits.progressed()
    s.turn_ends.worked = True
    out += [*delivered, *go(s, event, c)]
    s.typist.schedule(tuple(k.writes), now, paced=s.profile.key_pace == "reaction")
    return [*out, Type(tuple(k.writes))]


def _answered(s: StepState, c: Classification, shown: str, kind: str | None, d: Decision, asked: str) -> None:
    """What an answer leaves behind: the turn's ledger, the prompt answered (and on which screen), history's row."""
    mine = s.answering
    if kind == Kind.TURN_END or d.source == answerer.PLAN_SEND:
        s.turns.sent(shown)  # an instruction (the step's task typed, or the next one): a new turn begins
    else:
        s.turns.answered(headline(asked), shown, d.source, d.denied)  # (a secret as its mask: the judge never sees it)
    if c.key:
        mine.answered[c.key] = mine.answered.get(c.key, 0) + 1
        mine.typed[c.key] = shown
        mine.asked_on[c.key] = s.look.text
    if c.block.strip():
        mine.answered_to = c.anchor_row + len(c.block.rstrip("\n").split("\n")) - 1


def keys_due(s: StepState, out: list[Out]) -> list[Effect]:
    """What the typist handed out when a key fell due; a menu whose highlight never reached the chosen option gets no
    Enter: a person decides."""
    said: list[Effect] = []
    for e in out:
        if isinstance(e, HighlightMissed):
            s.answering.watch = None
            c = Classification(state=ScreenKind.MENU, rule_id=None, block=e.block)
            said += [Record(R.MenuCheckFailed(expected=e.expected, seen=e.seen)),
                     *escalate(s, c, f"the highlight did not reach {e.expected!r} (it is on {e.seen!r}); Enter not pressed")]
        elif isinstance(e, Record) and isinstance(e.rec, R.EnterSkipped):
            s.answering.watch = None  # the program took the key (the question left, or it went on to a new line): taken,
            said.append(e)  # whatever it shows by the time the last key is out (the next prompt, drawn at once)
        else:
            said.append(e)
    return said


def forget_answer(s: StepState, key: str) -> None:
    """The prompt answered before under this key is a new question now."""
    s.answering.answered.pop(key, None)


def watch_keys(s: StepState, w: Watch) -> None:
    """Keys of the pilot's own are out (an agent told to go on): watched taken, as an answer's."""
    s.answering.watch = w


def keys_out(s: StepState, now: float, content: int) -> None:
    """Every key of the answer is out, the screen as it was then: from now on it is watched."""
    w = s.answering.watch
    if w:
        w.due = now + RETRY_GAPS[w.retries]
        w.content = content


def _reacted(c: Classification, facts: ScreenFacts, w: Watch) -> bool:
    """The question went away or changed since the last key went out: its text (a cursor line's holds the answer's
    echo), its highlight. A repaint of the rest of the screen (a clock beside the prompt) is paint, not a reaction."""
    if facts.content == w.content:
        return False
    return c.key != w.c.key or (c.menu is not None and w.c.menu is not None and c.menu.highlighted != w.c.menu.highlighted)


def _rule_keys(s: StepState, c: Classification) -> tuple[str, ...]:
    """The keys the prompt's rule says it acts on, where the screen spells none (a pager's q, <space>)."""
    rule = next((r for r in s.profile.rules if r.id == c.rule_id), None)
    return tuple(rule.keys) if rule is not None else ()


def echo_held(before: str, after: str, typed: str) -> str | None:
    """What one row of the screen gained, when that row is the only change and what it gained is what was typed (or,
    for one key, the word the program shows for it: questionary's `Yes` for y); None otherwise."""
    old, new = before.split("\n"), after.split("\n")
    rows = max(len(old), len(new))
    old, new = old + [""] * (rows - len(old)), new + [""] * (rows - len(new))
    changed = [i for i in range(rows) if old[i].rstrip() != new[i].rstrip()]
    if len(changed) != 1:
        return None
    was, now = old[changed[0]].rstrip(), new[changed[0]].rstrip()
    gained, key = now[len(was):].strip(), typed.strip()
    if not now.startswith(was) or not gained or not key:
        return None
    if gained.casefold() == key.casefold():
        return gained
    word = gained.isalpha() and key.isalpha() and len(gained) <= 3 and len(key) <= 3  # y, yes, Yes; n, no, No
    return gained if word and gained[0].casefold() == key[0].casefold() else None


def not_taken_note(typed: str) -> tuple[str, ...]:
    return (f"{typed!r} was typed here already, and the screen did not change at all: the program waits on its "
            "terminal again, so the answer was not taken. Answer what this screen asks now (differently, if that "
            "answer cannot work), or ask for a human.",)
