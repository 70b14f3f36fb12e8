"""Prompt assembly for LLM answerers: templates from prompts/, a token budget, fenced terminal text.

Order of the user prompt: governing prompt, step, screen (live region first, then earlier
output as the budget allows), environment, recent questions and answers, the question,
and an answer-format reminder for its kind. Terminal text is cut before the governing
prompt or the question ever are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from cursorpilot import resources
from cursorpilot.errors import BadInput
from cursorpilot.providers.base import QA

PROMPTS_DIR = resources.folder("prompts")
FENCE = "```"
_BACKTICKS = re.compile(r"`{3,}")

FORMATS = {
    "question": "The key or word the prompt offers (for example y or n). When the prompt acts on the key press alone, "
    "with no Enter, say so (submit false, or <key:y>).",
    "menu": "The label of the option to choose, exactly as listed (the highlight is moved there and Enter pressed for you), "
    "or, for a multi-select, the labels of every option that should end up selected, separated by commas. "
    "If the prompt offers a letter key instead (for example [a]), that letter.",
    "input": "The text to type, on one line, exactly as the program must receive it (quotes and spaces are typed as given); "
    "Enter follows. An empty text presses Enter alone and takes the default.",
    "input-multiline": "The text to type; several lines are allowed here. It is pasted, then submitted with Enter.",
    "permission": "The name of the option to choose, exactly as listed.",
    "form": "The value to give, exactly as it must be received.",
    "turn_end": "The agent has stopped and is waiting for its next message. Judge, under the governing prompt, whether its "
    "goal is met, from its last message, the screen, what happened in its turn and the goal check. Give a verdict: "
    "done (the goal is met: the agent is closed); continue, with the message to give the agent next, written to it directly "
    "(what to do, or the answer to its question); blocked, when only a person can give what it needs (say what); or "
    "impossible, when the goal contradicts the governing prompt or the deny policy (say why). A failing goal check means "
    "not done. In one line: DONE: why, CONTINUE: message, BLOCKED: what is missing, or IMPOSSIBLE: why.",
    "undecided": "No rule recognised this screen, and it has been quiet. First judge whether the program is waiting for a "
    "person right now. If it is not (it is working, loading, printing, or only showing something), answer WAIT. If it is, "
    "answer its prompt: the label of an option for a menu, the text for a field, a key for a prompt that acts on one key.",
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
    return "\nIt takes exactly one of: " + ", ".join(accepts) + " (or an empty text: Enter alone, the default)."


def build(parts: PromptParts, budget: int = 3000, directory: Path = PROMPTS_DIR) -> BuiltPrompt:
    system = render(load_template("system", directory))
    user_t = load_template("user", directory)
    history = "\n".join(f"- Q: {' '.join(qa.question.split())[:200]}\n  A: {qa.answer[:200]}" for qa in parts.history[-10:]) or "(none)"
    fixed = dict(
        governing_prompt=parts.governing_prompt or "(none given: answer conservatively, escalate when unsure)",
        step=parts.step,
        environment=parts.environment or "(not collected)",
        history=history,
        kind=parts.kind,
        rule_id=parts.rule_id,  # for a template of the user's own: the default keeps our labels from the model (a 0.5B one typed them)
        question="\n".join(terminal(x) for x in parts.question.splitlines()),
        answer_format=(FORMATS["input-multiline"] if parts.multiline else FORMATS.get(parts.kind, FORMATS["input"])) + _takes(parts.accepts),
        options=f"\nOptions (→ marks the highlighted one):\n{parts.options}\n" if parts.options else "",
        notes="".join(f"\nNote: {n}" for n in parts.notes) + ("\n" if parts.notes else ""),
        goal_check=_goal_check(parts),
    )
    skeleton = render(user_t, **fixed, live_region="", earlier_output="")
    room = budget - estimate_tokens(system) - estimate_tokens(skeleton)
    if room < 0 and fixed["environment"] != "(not collected)":
        fixed["environment"] = "(left out: over budget)"
        fixed["history"] = "(left out: over budget)"
        skeleton = render(user_t, **fixed, live_region="", earlier_output="")
        room = budget - estimate_tokens(system) - estimate_tokens(skeleton)
    room = max(room, 0)
    live = _fit([terminal(x) for x in parts.live], room) if room else ["[… live region left out: over budget …]"]
    room -= sum(estimate_tokens(x) + 1 for x in live)
    earlier_text = ""
    earlier_room = room - 20  # headers and fences
    if parts.earlier and earlier_room > 10:
        earlier = _fit(_cut_middle([terminal(x) for x in parts.earlier], 400), earlier_room)
        earlier_text = "\nEarlier output:\n" + FENCE + "TERMINAL\n" + "\n".join(earlier) + "\n" + FENCE + "\n"
    user = render(user_t, **fixed, live_region="\n".join(live), earlier_output=earlier_text)
    return BuiltPrompt(system=system, user=user, tokens=estimate_tokens(system) + estimate_tokens(user))


def build_again(governing_prompt: str, live: list[str], previous: str, why: str, accepts: tuple[str, ...] = (),
                budget: int = 3000, directory: Path = PROMPTS_DIR, notes: tuple[str, ...] = ()) -> BuiltPrompt:
    """The question asked again after a reply that only repeated it (decide/echo.py): short and plain, the screen,
    then the governing prompt, then what to give, naming the reply that was no answer. A 0.5B model that copied the
    fenced question of the full prompt three times in a row answered this one (`demo-widget`, `Pilot Docs`, `fr`)."""
    system = render(load_template("system", directory))
    fixed = dict(governing_prompt=governing_prompt or "(none given)", previous=repr(previous), why=why, takes=_takes(accepts),
                 notes="".join(f"\nNote: {n}" for n in notes) + ("\n" if notes else ""))  # a hidden prompt's rules too
    room = budget - estimate_tokens(system) - estimate_tokens(render(load_template("again", directory), **fixed, live_region=""))
    live = _fit([terminal(x) for x in live], max(room, 0)) if room > 0 else ["[… live region left out: over budget …]"]
    user = render(load_template("again", directory), **fixed, live_region="\n".join(live))
    return BuiltPrompt(system=system, user=user, tokens=estimate_tokens(system) + estimate_tokens(user))
