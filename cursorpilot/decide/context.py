"""Prompt assembly for LLM answerers: templates from prompts/, a token budget, fenced terminal text.

The system prompt is what stays the same at every question of a step (the instructions, the governing prompt, the
step), so that a server's prefix cache keeps it. The user prompt is what changes, in the order things happened: the
earlier questions the screen no longer shows, the environment, output that scrolled off, the screen once, and last
the question: its one line that asks, the default it shows, the governing prompt's sentences that bear on it
(decide/bearing.py), and the answer format for its kind. A small model answers what it read last. Terminal text is cut
before the governing prompt or the question ever are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from cursorpilot import resources
from cursorpilot.decide.bearing import bearing, question_line, shown_default
from cursorpilot.errors import BadInput
from cursorpilot.providers.base import QA

PROMPTS_DIR = resources.folder("prompts")
FENCE = "```"
HISTORY = 10  # earlier questions and answers at most
EARLIER_TOKENS = 400  # output that scrolled off, at most: the live screen is what is asked about, and a small model drowns
_WHOLE = ("turn_end", "permission", "form")  # questions not on a screen: said whole
_SAY_KIND = ("turn_end", "undecided")
_CLEAN = re.compile(r"git status --porcelain:\n\(clean\)\ngit diff --shortstat: no unstaged changes")  # envsnap's, in four words
_MARKS = re.compile(r"^[\s│|◆◇▲●○◉◯❯›»?>]+")
_BACKTICKS = re.compile(r"`{3,}")

KEYS = "Keys are tokens: <enter> <tab> <esc> <up> <down> <space> <ctrl-c>; <key:y> presses y alone, no Enter."
FORMATS = {
    "question": "The key or word the prompt offers (y or n) that the governing prompt asks for.",
    "menu": "The label of the option the governing prompt asks for, as listed.",
    "menu-multi": "The labels of every option that should end up selected, as listed, separated by commas.",
    "input": "The value to type at this prompt, from the governing prompt, on one line.",
    "input-multiline": "The text to type; several lines are allowed here. It is pasted, then submitted with Enter.",
    "permission": "The name of the option to choose, exactly as listed.",
    "form": "The value to give, exactly as it must be received.",
    "turn_end": "The agent has stopped and is waiting for its next message. Judge, under the governing prompt, whether its "
    "goal is met, from its last message, the screen, what happened in its turn and the goal check. Give a verdict: "
    "done (the goal is met: the agent is closed); continue, with the message to give the agent next, written to it directly "
    "(what to do, or the answer to its question); blocked, when only a person can give what it needs (say what); or "
    "impossible, when the goal contradicts the governing prompt or the deny policy (say why). A failing goal check means "
    "not done. As JSON: {\"verdict\": \"done\" | \"continue\" | \"blocked\" | \"impossible\", \"message\": \"<the next message, "
    "for continue>\", \"why\": \"<reason>\"}; in one line: DONE: why, CONTINUE: message, BLOCKED: what is missing, or "
    "IMPOSSIBLE: why. The message is delivered to the agent exactly as you write it.",
    "undecided": "No rule recognised this screen, and it has been quiet. First judge whether the program is waiting for a "
    "person right now. If it is not (it is working, loading, printing, or only showing something), answer WAIT (as JSON: "
    "\"action\": \"wait\"). If it is, answer its prompt: the label of an option for a menu, the text for a field, a key for a "
    "prompt that acts on one key. " + KEYS,
}


def estimate_tokens(text: str) -> int:
    """About 4 characters per token: no tokenizer download is possible offline, and a budget needs only a bound."""
    return (len(text) + 3) // 4


def fence_escape(text: str) -> str:
    """Terminal text may contain the fence; break every run of 3+ backticks so it cannot close ours."""
    return _BACKTICKS.sub(lambda m: "`\u200b" * (len(m.group(0)) - 1) + "`", text)


_RUN = re.compile(r"([^\w\s`])\1{5,}")
_GAP = re.compile(r"(?<=\S) {6,}(?=\S)")


def compact(line: str) -> str:
    """Screen text for a model: box rules and padding cost tokens and say nothing."""
    return _GAP.sub("    ", _RUN.sub(lambda m: m.group(1) * 3, line.rstrip()))


def terminal(line: str) -> str:
    return fence_escape(compact(line))


def load_template(name: str, directory: Path = PROMPTS_DIR) -> Template:
    path = directory / f"{name}.md"
    try:
        return Template(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"prompt template not found: {path}") from None


def render(template: Template, **values: str) -> str:
    try:
        return template.substitute(values)
    except KeyError as exc:
        raise BadInput(f"prompt template needs variable {exc.args[0]!r}") from None


@dataclass(slots=True, frozen=True)
class PromptParts:
    governing_prompt: str
    step: str
    kind: str
    rule_id: str
    question: str
    live: list[str]  # rendered live screen rows, top to bottom
    earlier: list[str]  # older output, oldest first
    environment: str
    history: tuple[QA, ...]
    options: str = ""  # a menu's options, numbered, the highlighted one marked
    multiline: bool = False  # the prompt takes several lines
    notes: tuple[str, ...] = ()  # facts about this question (a denial just before it, a single-key prompt)
    check: str = ""  # a turn end: the goal check's result in a line
    check_output: tuple[str, ...] = ()  # ...and the end of its output
    accepts: tuple[str, ...] = ()  # the answers the question takes, where it says (decide/accepts.py)
    labels: tuple[str, ...] = ()  # a menu's option labels (the words a governing prompt's sentence may name)
    highlighted: str = ""  # a menu's highlighted option (Enter alone takes it)
    multi: bool = False  # a multi-select (its boxes are said with its options)
    asked: str = ""  # the rows that ask, in the program's words (Question.asked): the line restated is found there


@dataclass(slots=True, frozen=True)
class BuiltPrompt:
    system: str
    user: str
    tokens: int  # estimated, system + user


def _cut_middle(lines: list[str], keep: int) -> list[str]:
    if len(lines) <= keep:
        return lines
    if keep <= 1:
        return [f"[… {len(lines)} lines left out …]"]
    head = keep // 3
    tail = keep - head - 1
    return [*lines[:head], f"[… {len(lines) - head - tail} lines left out …]", *lines[len(lines) - tail :]]


def _fit(lines: list[str], budget_tokens: int, prefer_end: bool = True) -> list[str]:
    """As many lines as fit; for the live region keep the end (nearest the cursor)."""
    total, keep = 0, 0
    seq = reversed(lines) if prefer_end else iter(lines)
    for line in seq:
        cost = estimate_tokens(line) + 1
        if total + cost > budget_tokens:
            break
        total += cost
        keep += 1
    if keep == len(lines):
        return lines
    kept = lines[len(lines) - keep :] if prefer_end else lines[:keep]
    marker = f"[… {len(lines) - keep} earlier lines left out …]"
    return [marker, *kept] if prefer_end else [*kept, marker]


def _step_section(step: str) -> str:
    """The step, for a plan of several: a run of one program ("1/1: npm") says nothing its screen does not."""
    return "" if not step or step.startswith("1/1:") else f"\n# Step\n{step}\n"


def _squeezed(rows: list[str]) -> list[str]:
    """Blank rows at the top left out, a run of them said as one, and the indent every row shares taken off: a dialog's
    ten empty rows above its box, and the 29 columns its box is centred by, said nothing a model needs, at a token for
    every four."""
    out: list[str] = []
    for row in rows:
        if row.strip() or (out and out[-1].strip()):
            out.append(row)
    indent = min((len(r) - len(r.lstrip(" ")) for r in out if r.strip()), default=0)
    return [r[indent:] for r in out]


def _goal_check(parts: PromptParts) -> str:
    """A turn end's goal check: its result, and the end of its output fenced like terminal text (it is untrusted)."""
    if not parts.check:
        return ""
    output = "\n".join(terminal(x) for x in parts.check_output) or "(no output)"
    return f"\n# Goal check\n{parts.check}\n{FENCE}TERMINAL\n{output}\n{FENCE}\n"


def _takes(accepts: tuple[str, ...]) -> str:
    """The answers the question takes, said in the prompt too: a server without structured output has only this."""
    if not accepts:
        return ""
    return "\nIt takes one of: " + ", ".join(accepts) + " (or an empty text: the default)."


def _on_screen(line: str, live: list[str]) -> bool:
    """The line's words are on a row of the screen (a row of box rules and marks alone has none to miss)."""
    flat = " ".join(_MARKS.sub("", line).split())
    return not flat or any(flat in " ".join(row.split()) for row in live)


def _history(parts: PromptParts) -> str:
    """Earlier questions and answers, those the screen no longer shows: the line that asked is not on it (the screen
    says the rest once already; clack redraws an answered question with its answer, and another mark)."""
    gone = [qa for qa in parts.history[-HISTORY:] if not _on_screen(question_line(qa.question), parts.live)]
    if not gone:
        return ""
    rows = "\n".join(f"- Q: {' '.join(qa.question.split())[:200]}\n  A: {qa.answer[:200]}" for qa in gone)
    return f"# Earlier questions and answers\n{rows}\n\n"


def _question(parts: PromptParts) -> tuple[str, str, str]:
    """The question as the model reads it, and what bears on it. A question the screen shows is said by its one line
    that asks (the screen above holds the rest once: the question block used to repeat the screen's tail); a question
    the screen does not show (an agent's last message, an ACP request) whole."""
    rows = [x for x in parts.question.splitlines() if x.strip()]
    shown = bool(rows) and all(_on_screen(x, parts.live) for x in rows) and parts.kind not in _WHOLE
    asking = question_line(parts.asked or parts.question, parts.labels) if shown else parts.question
    said: list[str] = []
    for sentence in bearing(parts.governing_prompt, asking, parts.labels) if parts.kind not in _WHOLE else ():
        said.append(f"The governing prompt says: {sentence}.")
    default = shown_default(rows[-1]) if shown and not parts.labels and not parts.accepts else None
    offered = "" if default is None else f"Default: {_quoted(default)} (an empty text takes it).\n" if default else "Default: empty.\n"
    return "\n".join(terminal(x.strip() if shown else x) for x in asking.splitlines()), offered, "".join(f"{x}\n" for x in said)


def _options(parts: PromptParts) -> str:
    """A menu's options, listed when the screen does not show them all (a protocol's request, a long menu) or when
    their boxes matter (a multi-select); else only its highlighted one, the answer an empty text gives. A 0.5B model
    chose cookiecutter's first licence, MIT, under "Pick the BSD-3-Clause license" whenever the screen's list was
    followed by our own copy of it, and BSD-3-Clause without the copy."""
    if not parts.options:
        return ""
    if parts.multi or not all(_on_screen(label, parts.live) for label in parts.labels):
        head, _, rest = parts.options.partition("\n")
        listed = rest if head.startswith("single choice") and rest else parts.options
        return f"\nOptions (→ marks the highlighted one):\n{listed}\n"
    return f"\nHighlighted (an empty text takes it): {parts.highlighted}\n" if parts.highlighted else ""


def _quoted(value: str) -> str:
    """A default from the screen, in the model's words: one short line, no backticks (it is the program's text)."""
    return "`" + " ".join(value.replace("`", "'").split())[:60] + "`"


def build(parts: PromptParts, budget: int = 3000, directory: Path = PROMPTS_DIR) -> BuiltPrompt:
    """The system prompt is the stable part (instructions, the governing prompt, the step): byte for byte the same at
    every question of a step, so a server's prefix cache keeps it. The user prompt is what changes, the question last."""
    question, default, bears = _question(parts)
    fixed = dict(
        governing_prompt=parts.governing_prompt or "(none given: answer conservatively, escalate when unsure)",
        step=parts.step,
        step_section=_step_section(parts.step),
        environment=f"# Environment\n{_CLEAN.sub('working tree clean', parts.environment)}\n\n" if parts.environment else "",
        history=_history(parts),
        kind=f"Kind: {parts.kind}\n" if parts.kind in _SAY_KIND else "",  # a judgment, not a prompt to answer
        rule_id=parts.rule_id,  # for a template of the user's own: the default keeps our labels from the model (a 0.5B one typed them)
        question=question,
        default=default,
        bearing=bears,
        answer_format=(FORMATS["input-multiline"] if parts.multiline else FORMATS["menu-multi"] if parts.multi
                       else FORMATS.get(parts.kind, FORMATS["input"]))
        + ("" if parts.options else _takes(parts.accepts)),
        options=_options(parts),
        notes="".join(f"\nNote: {n}" for n in parts.notes) + ("\n" if parts.notes else ""),
        goal_check=_goal_check(parts),
    )
    system = render(load_template("system", directory), **fixed)
    user_t = load_template("user", directory)
    skeleton = render(user_t, **fixed, live_region="", earlier_output="")
    room = budget - estimate_tokens(system) - estimate_tokens(skeleton)
    if room < 0 and (fixed["environment"] or fixed["history"]):
        fixed["environment"] = fixed["history"] = ""
        skeleton = render(user_t, **fixed, live_region="", earlier_output="")
        room = budget - estimate_tokens(system) - estimate_tokens(skeleton)
    room = max(room, 0)
    live = _fit(_squeezed([terminal(x) for x in parts.live]), room) if room else ["[… live region left out: over budget …]"]
    room -= sum(estimate_tokens(x) + 1 for x in live)
    earlier_text = ""
    earlier_room = min(room, EARLIER_TOKENS) - 20  # headers and fences
    if parts.earlier and earlier_room > 10:
        earlier = _fit(_cut_middle([terminal(x) for x in parts.earlier], 400), earlier_room)
        earlier_text = "# Earlier output\n" + FENCE + "TERMINAL\n" + "\n".join(earlier) + "\n" + FENCE + "\n\n"
    user = render(user_t, **fixed, live_region="\n".join(live), earlier_output=earlier_text)
    return BuiltPrompt(system=system, user=user, tokens=estimate_tokens(system) + estimate_tokens(user))


def build_again(governing_prompt: str, live: list[str], previous: str, why: str, accepts: tuple[str, ...] = (),
                budget: int = 3000, directory: Path = PROMPTS_DIR, notes: tuple[str, ...] = (), step: str = "",
                question: str = "") -> BuiltPrompt:
    """The question asked again after a reply that only repeated it (decide/echo.py): short and plain, the screen,
    then the governing prompt, then what to give, naming the reply that was no answer. A 0.5B model that copied the
    fenced question of the full prompt three times in a row answered this one (`demo-widget`, `Pilot Docs`, `fr`).
    Its system prompt is the first asking's, byte for byte (a prefix cache keeps it)."""
    governing = governing_prompt or "(none given)"
    system = render(load_template("system", directory), governing_prompt=governing, step=step, step_section=_step_section(step))
    said = bearing(governing_prompt, question_line(question)) if question else ()
    fixed = dict(governing_prompt=governing, previous=repr(previous), why=why, takes=_takes(accepts),
                 notes="".join(f"\nNote: {n}" for n in notes) + ("\n" if notes else ""),  # a hidden prompt's rules too
                 bearing="".join(f"\nOn this question: {x}." for x in said))
    room = budget - estimate_tokens(system) - estimate_tokens(render(load_template("again", directory), **fixed, live_region=""))
    live = _fit([terminal(x) for x in live], max(room, 0)) if room > 0 else ["[… live region left out: over budget …]"]
    user = render(load_template("again", directory), **fixed, live_region="\n".join(live))
    return BuiltPrompt(system=system, user=user, tokens=estimate_tokens(system) + estimate_tokens(user))
