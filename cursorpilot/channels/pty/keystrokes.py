"""An answer as the keys a screen's prompt takes, PURE: the decision, the classified prompt and the terminal's modes
in, the writes out (or why it must not be typed). The pilot (pty/pilot.py) decides *whether* and *when*; this says
*what bytes*: one key for a single-key question, arrows (or the number) for a menu option, the pre-filled default
erased first, a secret's value substituted only in the bytes, Enter after the text unless the prompt takes none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from cursorpilot.records import models as R
from cursorpilot.decide.deliver import Record
from cursorpilot.decide.question import Decision, Kind
from cursorpilot.detect.classifier import Classification, headline
from cursorpilot.detect.menu import keys_for, submit_row
from cursorpilot.detect.profiles import ScreenKind
from cursorpilot.detect.profiles import Profile
from cursorpilot.keys import Modes, ReplyError, Write, only_keys, to_writes
from cursorpilot.records.secret import masked, resolve
from cursorpilot.records.secret import names as secret_names


class Refused(Exception):
    """The answer can't be typed (it names no option, a secret not given, several lines): a human decides."""


@dataclass(frozen=True, slots=True)
class Keystrokes:
    writes: list[Write]
    submit: bool  # Enter follows the text (the watch re-sends it if the prompt stays)
    shown: str  # the answer as records and messages may hold it (a secret's mask)
    secret: bool
    choice: Record | None = None  # the menu option(s) chosen


def _free_text(profile: Profile, c: Classification) -> bool:
    """A reply that names no option is typed as it is: the rule says the options are suggestions, or they were read
    from style alone (detect/facts.py: the screen may be a line prompt)."""
    rule = next((r for r in profile.rules if r.id == c.rule_id), None)
    return (rule is not None and rule.free_text) or not c.options_certain


def keystrokes(c: Classification, d: Decision, modes: Modes, profile: Profile, *, kind: str | None, secret: bool,
               secrets: Mapping[str, str], echo_check: bool) -> Keystrokes:
    text = d.text or ""
    secret = secret or d.secret
    if secret_names(text):  # <secret:NAME>: its value, in the keys only
        try:
            text = resolve(text, secrets)
        except KeyError as exc:
            raise Refused(f"the reply names a secret that was not given: {exc.args[0]!r} "
                          f"(--secret {exc.args[0]}=ENVVAR gives it)") from None
        secret = True
    shown = masked(text) if secret else text
    # the rule's word on Enter for prompts it knows; the answerer's where no rule knows, or for free text (a pager's q)
    own = kind == Kind.UNDECIDED or c.state == ScreenKind.INPUT
    submit = d.submit if own and d.submit is not None else c.submit
    typed, check, choice = text, None, None
    if c.state == ScreenKind.QUESTION and not submit and re.fullmatch(r"[A-Za-z]{2,}", text.strip()):
        typed = f"<key:{text.strip()[0].lower()}>"  # a prompt that acts on one key gets one key: "yes" is y, not y-e-s
    mapped = keys_for(c.menu, text) if c.menu is not None else None
    if c.menu is not None and mapped is not None:  # an option named by label or number: arrows from the highlighted row (or its number), then Enter
        typed, chosen = mapped
        submit_at = submit_row(c.menu)
        check = submit_at.label if submit_at is not None else None if c.menu.multi or c.menu.typed else chosen[0].label
        choice = Record(R.MenuChoice(rule_id=c.rule_id, reply=shown, options=[o.label for o in chosen], keys=typed,
                                     highlighted=None if c.menu.typed else c.menu.current.label, multi=c.menu.multi))
    elif c.menu is not None and not only_keys(text) and kind != Kind.UNDECIDED and not _free_text(profile, c):
        raise Refused(f"the reply {shown!r} names none of the options ({', '.join(o.label for o in c.menu.options)})")
    line = c.menu is not None and c.menu.typed and mapped is not None and typed.endswith("<enter>")
    if line:  # an option's number on a line prompt is typed text: its Enter goes once the number shows, not a key's delay later
        typed, submit = typed[: -len("<enter>")], True
    try:
        writes = to_writes(typed, submit=submit, key_delay=profile.key_delay_ms / 1000, enter_delay=profile.enter_delay_ms / 1000,
                           multiline=c.multiline, modes=modes, echo_check=echo_check and (mapped is None or line))
    except ReplyError as exc:
        raise Refused(str(exc)) from None
    if c.prefill and c.state == ScreenKind.INPUT and typed.strip() and not only_keys(typed):
        writes.insert(0, Write(b"\x7f" * len(c.prefill), 0.0, f"<backspace>x{len(c.prefill)}"))  # the default goes
    if secret:  # the text typed is masked wherever it is recorded or shown; key names are no secret
        writes = [replace(w, label=masked(w.label), secret=True) if w.data.decode("utf-8", "replace") == w.label else w
                  for w in writes]
    if check is not None and len(writes) > 1:
        writes[-1] = replace(writes[-1], check=check, check_from=c.anchor_row)  # Enter only once the highlight is there
    elif writes and writes[-1].echo is not None:
        writes[-1] = replace(writes[-1], prompt=headline(c.block))
    return Keystrokes(writes, submit, shown, secret, choice)
