"""Rules learned from a person: the questions a person answered at the terminal, written as a rules file that gives
the same answers with nobody there (`cursor-pilot learn`, `run --learn FILE`, and the offer after a run a person helped).

Read from the run's transcript, so what is learned is what was recorded: each `answer` a person chose (`source:
human`), its prompt block (what the rules engine matches, docs/rules.md), the reply as typed, its step. A rule's
`match` is the line of the block that asks, escaped, its spaces any whitespace. Where one pattern is not enough (the
same question answered differently, pdb's `(Pdb)` again and again) the rule also says `after:` the rule that answered
the question before it. A secret the person typed was never written anywhere: its rule types `<secret:NAME>`, named
from its question; two secrets with the same mask (the same value, within the run) share a name. The rules are
checked by replaying the recorded questions through the rules engine before they are written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from cursorpilot.decide.deliver import YOURS
from cursorpilot.providers.base import AnswerRequest, Reply
from cursorpilot.providers.rules import RuleEntry, RulesProvider, read_entries
from cursorpilot.records.secret import is_masked

_ASKS = re.compile(r"[?:]\s*(\[[^\]]*\]|\([^)]*\))?\s*[:›>]?\s*$|\[[yY]/[nN]\]|\([yY]/[nN]\)")
_LEAD = re.compile(r"^[^\w(\"'\[<]+")  # a dialog's border, a prompt library's bullet (◆ │ ? ›) before the words
_TRAIL = re.compile(r"[\s│┃|]+$")
_MID_QUESTION = re.compile(r"^(.*?[?:])\s+(?=[^\w\s])")  # "Use TypeScript? › No / Yes", "… project: (↑/↓ to navigate"
_EMPTY_MASK = re.compile(r"^•+ \(0 chars")
_PARTS = re.compile(r"[0-9]+|.")  # a word, in runs of digits and single characters
_NOISE = {"enter", "your", "the", "a", "an", "please", "type", "verifying", "again", "new"}


class LearningRules(RulesProvider):
    """A learn run's answerer: the rules given (--rules, --answer) answer what they know, and every other question is
    the person's to answer, which is what the run is for: said so (YOURS), not counted as an escalation."""

    def answer(self, request: AnswerRequest) -> Reply:
        reply = super().answer(request)
        return reply if reply.text is not None else replace(reply, reason=YOURS)


@dataclass(frozen=True, slots=True)
class Answered:
    """One question answered in the run, as the transcript has it."""

    step: int
    prompt: str
    reply: str
    source: str
    kind: str
    secret: bool


@dataclass
class Learned:
    rules: list[RuleEntry] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # the names the rules type as <secret:NAME>
    asked: int = 0  # questions a person answered
    unsure: list[str] = field(default_factory=list)  # questions the rules would not answer as the person did


def answers(transcript: Path) -> list[Answered]:
    """Every answer of the run, in order (the person's and the others', which an `after:` may follow). Only the
    answer records are parsed: a long run's transcript costs a scan, not a parse of each record."""
    import json

    from cursorpilot.records import models as R
    from cursorpilot.records.reading import parse

    out = []
    with open(transcript, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if '"type": "answer"' not in line:
                continue
            try:
                r = parse(json.loads(line))
            except ValueError:
                continue  # a torn last line
            if isinstance(r, R.Answer) and r.prompt is not None and r.reply is not None and r.channel != "acp":
                out.append(Answered(r.step or 1, r.prompt, r.reply, r.source or "", r.kind or "", bool(r.secret)))
    return out


def asking_line(block: str) -> str:
    """The words of a prompt block that ask: the last line ending in `?` or `:` (a default in brackets after it);
    else the first line that asks mid-line, up to its `?`/`:` (a prompt library's header: `Select features to include
    in your project: (↑/↓ to navigate, …`); else its first line with words (a dialog's title above its options).
    Borders and bullets go, and what a prompt library draws after a `?` (`Use TypeScript? › No / Yes`: the highlight
    moves, the question stays)."""
    lines = [_TRAIL.sub("", _LEAD.sub("", line)) for line in block.splitlines()]
    lines = [line for line in lines if sum(ch.isalnum() for ch in line) >= 2]
    ending = [line for line in lines if _ASKS.search(line)]
    if ending:
        line = ending[-1]
        cut = _MID_QUESTION.match(line)
        return cut.group(1) if cut and not line.rstrip().endswith((":", "?")) else line
    for line in lines:
        cut = _MID_QUESTION.match(line)
        if cut:
            return cut.group(1)
    return lines[0] if lines else block.strip()


def pattern(block: str) -> str:
    """The regex a rule matches this prompt block by: its asking line, literal, any run of spaces as `\\s+`, from the
    start of its row (after a bullet or a border): `New password:` alone also matched `Retype new password:`, and the
    rule learned first answered both. A number in brackets is any number: what a prompt says there is the answer's
    range and default (gdisk's `First sector (34-20446, default = 2048)`, a size of this disk, not of the next), and a
    number in the words themselves stays (`Delete partition 3?`)."""
    depth, words = 0, []
    for word in asking_line(block).split():
        out = []
        for part in _PARTS.findall(word):
            if part[0].isdigit() and depth > 0:
                out.append(r"\d+")
                continue
            depth = max(0, depth + (part in "([{") - (part in ")]}"))
            out.append(re.escape(part))
        words.append("".join(out))
    return r"^\W*" + r"\s+".join(words)


def secret_name(block: str, taken: Iterable[str]) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", asking_line(block).lower()) if w not in _NOISE][:3]
    base = "_".join(words)[:32].strip("_") or "secret"
    name, n = (base if base[0].isalpha() else f"s_{base}"), 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def learn(asked: list[Answered]) -> Learned:
    """Rules for the person's answers: one per question and reply; where the same pattern had other replies, one per
    reply and the rule that answered the question before it (`after:`), the first of them without. Ordered so that no
    rule answers a question that another rule was learned for (the narrow ones first)."""
    out = Learned(asked=sum(1 for a in asked if a.source == "human"))
    shaped, out.secrets = _shaped(asked)
    replies: dict[str, set[str]] = {}
    for _, match, reply in filter(None, shaped):
        replies.setdefault(match, set()).add(reply)
    rules: dict[tuple[str, str, str | None], RuleEntry] = {}
    owners: list[str | None] = []  # for each answer, the id of the rule learned for it (None: not the person's)
    previous: str | None = ""
    step = None
    for a, row in zip(asked, shaped, strict=True):  # one shaped row per answer, None or not
        if a.step != step:
            previous, step = "", a.step  # after: holds within a step
        if row is None:  # another answerer's (a rule of another file, a model): no after: can name it
            previous = ""
            owners.append(None)
            continue
        _, match, reply = row
        key = (match, reply, (previous or None) if len(replies[match]) > 1 else None)
        if key not in rules:
            rules[key] = RuleEntry(id=f"learned{len(rules) + 1}", match=match, reply=reply, after=key[2],
                                   kind="turn_end" if a.kind == "turn_end" else None)
        previous = rules[key].id
        owners.append(previous)
    ordered = list(rules.values())
    out.rules = _unshadowed([*(r for r in ordered if r.after), *(r for r in ordered if not r.after)], asked, owners)
    out.unsure = check(out.rules, asked)
    return out


def _shaped(asked: list[Answered]) -> tuple[list[tuple[Answered, str, str] | None], list[str]]:
    """Each answer as its rule has it, (answer, pattern, reply as typed), None where it is not the person's; and the
    names of the secrets: a secret typed was never written down, so its rule types <secret:NAME>, one name per value
    (told by its mask)."""
    names: dict[str, str] = {}  # a secret's mask (the same value, within the run) -> its name
    shaped: list[tuple[Answered, str, str] | None] = []
    for a in asked:
        if a.source != "human":
            shaped.append(None)
            continue
        reply = "" if _EMPTY_MASK.match(a.reply) else a.reply  # Enter alone at a password prompt types no secret
        if (a.secret or is_masked(reply)) and reply:
            names.setdefault(a.reply, secret_name(a.prompt, names.values()))
            reply = f"<secret:{names[a.reply]}>"
        shaped.append((a, pattern(a.prompt), reply))
    return shaped, list(dict.fromkeys(names.values()))


def _unshadowed(rules: list[RuleEntry], asked: list[Answered], owners: list[str | None]) -> list[RuleEntry]:
    """The rules reordered, one move at a time, while a move puts a rule before the one that answered its question in
    its stead (`Password: (again)` after `Password:`), and only while it answers more questions as learned."""
    def astray(order: list[RuleEntry]) -> list[tuple[str, str]]:  # (the rule learned for a question, the one that answered)
        return [(owners[i] or "", (r.source or "").removeprefix("rules:")) for i, r in _replayed(order, asked)
                if r.source != f"rules:{owners[i]}"]

    missed = astray(rules)
    while missed:
        ids = [r.id for r in rules]
        better = None
        for own, took in missed:
            if took in ids and ids.index(took) < ids.index(own):
                moved = [r for r in rules if r.id != own]
                moved.insert(ids.index(took), rules[ids.index(own)])
                if len(astray(moved)) < len(missed):
                    better = moved
                    break
        if better is None:
            break
        rules, missed = better, astray(better)
    return rules


def _replayed(rules: list[RuleEntry], asked: list[Answered]) -> Iterator[tuple[int, Reply]]:
    """The recorded questions through the rules engine as a run would ask them (an `after:` sees the rule that
    answered the question before): each person's answer's index, and the reply the rules give its question."""
    engine = RulesProvider(rules, "learned")
    previous, step = "", None
    for i, a in enumerate(asked):
        if a.step != step:
            previous, step = "", a.step  # after: holds within a step
        if a.source != "human":
            previous = a.source if a.source.startswith("rules:") else ""
            continue
        reply = engine.answer(AnswerRequest(governing_prompt="", kind=a.kind, rule_id="", prompt_block=a.prompt, screen=a.prompt,
                                            previous=previous))
        yield i, reply
        previous = reply.source if reply.text is not None else ""


def check(rules: list[RuleEntry], asked: list[Answered]) -> list[str]:
    """Replay the recorded questions through the rules engine: the questions it would not answer as the person did (a
    secret by the name its value was given, not any secret)."""
    if not rules:
        return []
    shaped, _ = _shaped(asked)
    return [asking_line(asked[i].prompt) for i, reply in _replayed(rules, asked)
            if reply.text is None or reply.text != (shaped[i] or ("", "", ""))[2]]


def to_yaml(learned: Learned, command: str) -> str:
    """The rules file: a comment saying where it came from and how to run it, then one rule per line."""
    import json

    secrets = " ".join(f"--secret {n}=ENVVAR" for n in learned.secrets)
    head = [f"# Learned by cursor-pilot from a person's answers to: {command}",
            f"# Run it again with nobody there: cursor-pilot run --rules THIS_FILE{' ' + secrets if secrets else ''} -- {command}"]
    if learned.secrets:
        head.append("# <secret:NAME> replies type the value of --secret NAME=ENVVAR: what the person typed there was never written down.")
    body = []
    for r in learned.rules:
        fields = {"id": r.id, "match": r.match, "reply": r.reply}
        fields.update({k: v for k, v in (("kind", r.kind), ("after", r.after)) if v})
        body.append("- {" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items()) + "}")
    return "\n".join([*head, *body]) + "\n"


def write(path: Path, learned: Learned, command: str) -> int:
    """Write the rules, or add them to a rules file that exists (after its own rules: the first match wins, and they
    were there first). A rule it has already is not added twice; a new rule's id never takes one of its ids. Returns
    how many rules were added."""
    if not path.exists():
        path.write_text(to_yaml(learned, command), encoding="utf-8")
        read_entries(path)  # what is written reads back as rules
        return len(learned.rules)
    existing = read_entries(path)  # a file that is not a rules list is an error, never overwritten
    ids = {e.id or f"#{i + 1}" for i, e in enumerate(existing)}
    same = {(e.match, e.reply, e.after): e.id for e in existing if e.id}
    renamed: dict[str, str] = {}  # a learned rule's id -> its id in the file
    added: set[str] = set()
    pending, n = list(learned.rules), 0
    while pending:  # a rule after its `after:` (which was always learned before it): no cycle
        r = next(r for r in pending if not r.after or r.after in renamed)
        pending.remove(r)
        after = renamed[r.after] if r.after else None
        kept = same.get((r.match, r.reply, after))
        if kept is None:
            n += 1
            while f"learned{n}" in ids:
                n += 1
            kept = f"learned{n}"
            ids.add(kept)
            added.add(kept)
        renamed[r.id or ""] = kept
    new = [RuleEntry(**{**r.model_dump(), "id": renamed[r.id or ""], "after": renamed[r.after] if r.after else None})
           for r in learned.rules if renamed[r.id or ""] in added]
    text = to_yaml(Learned(rules=new, secrets=learned.secrets), command).split("\n", 2)[2]
    with open(path, "a", encoding="utf-8") as fh:
        if path.read_text(encoding="utf-8") and not path.read_text(encoding="utf-8").endswith("\n"):
            fh.write("\n")
        fh.write(text)
    read_entries(path)
    return len(new)
