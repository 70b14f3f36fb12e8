"""The governing prompt compiled into a policy a person can read: what it grants and what it forbids. PURE.

Authority comes only from the user's own words. A policy is compiled once, from the governing prompt alone (never
from anything a program printed): by a model (one request, `POLICY_SCHEMA` in providers/schema.py) or, without one,
by the lexical reader (decide/consent.py). Each entry has an act, the object in the user's words ("" where the words
name nothing: "never delete anything"), the user's exact words (`quote`) and what it leaves out (`except`). A person
can print it (`cursor-pilot policy`), correct it and pin it (`run --policy FILE`).

A model's entries are checked against the prompt before they count: a quote that is not the prompt's own words
counts for nothing, and a grant quoted from words that forbid the act ("Never uninstall anything") is dropped, said
in `dropped`. The lexical reader's prohibitions are added for sentences the model compiled into nothing: a
prohibition the model missed still binds (fail closed).

What an object names in a question's block (`Terms`): the named things (paths, file names, quoted words) and the
content words, whole words only ("photos" is not "photos-old"), and the kind of thing ("the branches", "the table"),
which binds more weakly: a prohibition that names its thing only by its kind gives way to a grant that names the
block's very thing (decide/ruling.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cursorpilot.decide import consent

ACTS = ("delete", "overwrite", "format", "drop", "reset", "force-push")  # the compile's words for the acts, "any" beside them
BY_RULE = {"delete": "delete", "overwrite": "overwrite", "mkfs": "format", "sql_drop": "drop", "reset_hard": "reset",
           "force_push": "force-push"}  # the deny policy's ids (decide/policy.py) -> the compile's words
RULE_OF = {name: rule for rule, name in BY_RULE.items()}
_KINDS = set("""file files folder folders directory directories dir dirs branch branches table tables database databases db
package packages repo repos repository repositories partition partitions disk disks image images key keys container containers
volume volumes commit commits tag tags row rows record records column columns index indexes schema schemas view views
project projects module modules app apps""".split())
_GENERIC = set("work changes edits progress stuff things everything anything".split())
_QUANTIFIED = re.compile(r"(?i)^\W*(?:(?:any|anything|everything|all|every|each|no|none|nothing|whatever|either|a|an)\b|$)")
_WORDS = re.compile(r"[A-Za-z][\w-]*[A-Za-z0-9]|[A-Za-z]{2,}")


@dataclass(frozen=True, slots=True)
class Terms:
    """What an object's words name: its named things, its content words, and its kind nouns."""

    tokens: tuple[str, ...]
    words: tuple[str, ...]
    kinds: tuple[str, ...]

    def named_in(self, block: str) -> str:
        """How the block names this object: "specific" (a named thing or a content word), "kind" (only its kind of
        thing: "the branches" at `Delete branch x?`), "other-kind" (its kind, where it names its thing in words the
        block does not hold: "the staging table" at `Drop table users?`), or "" (not at all)."""
        low = block.lower()
        if any(_whole(t, low) for t in self.tokens) or any(_word(w, low) for w in self.words):
            return "specific"
        if not any(_word(k, low) for k in self.kinds):
            return ""
        return "other-kind" if self.tokens or self.words else "kind"


def _whole(token: str, low: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(token)}(?![\w-]|\.\w)", low) is not None


def _word(word: str, low: str) -> bool:
    stem = re.sub(r"(es|s)$", "", word) if len(word) > 4 else word
    return re.search(rf"(?<![\w-]){re.escape(stem)}(s|es|ed|ing)?(?![\w-])", low) is not None


def terms(text: str) -> Terms | None:
    """The object's terms; None where it names nothing in particular ("", "anything", "my work", "any file")."""
    text = text.strip()
    tokens = tuple(t for t in (x.strip("`'\"").lower().removeprefix("./").rstrip("/") for x in consent.TOKEN.findall(text)) if len(t) >= 2)
    rest = consent.TOKEN.sub(" ", text)
    words = [w.lower() for w in _WORDS.findall(rest)]
    kinds = tuple(w for w in words if w in _KINDS)
    content = tuple(w for w in words if w not in _KINDS and w not in _GENERIC and consent.content_word(w))
    if not tokens and (_QUANTIFIED.match(text) and not content or not content and not kinds):
        return None
    return Terms(tokens, content, kinds)


@dataclass(frozen=True, slots=True)
class Entry:
    """One grant or prohibition: the act (the compile's word, or "any"), its object in the user's words, the user's
    exact words, and what it leaves out."""

    act: str
    object: str
    quote: str
    except_: tuple[str, ...] = ()

    @property
    def rules(self) -> frozenset[str]:
        """The deny policy's act ids this entry is about."""
        return frozenset(BY_RULE) if self.act == "any" else frozenset({RULE_OF[self.act]}) if self.act in RULE_OF else frozenset()

    def named_in(self, block: str) -> str:
        """How the block names this entry's object: "anything" (it names nothing in particular), "specific", "kind" or
        ""; "" too where the block names a thing it leaves out."""
        if any((t := terms(x)) is not None and t.named_in(block) == "specific" for x in self.except_):
            return ""
        t = terms(self.object)
        return "anything" if t is None else t.named_in(block)

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"act": self.act, "object": self.object, "quote": self.quote}
        return {**out, "except": list(self.except_)} if self.except_ else out


@dataclass(frozen=True, slots=True)
class Policy:
    """The governing prompt compiled: who compiled it (`source`: lexical, a model, a file) and what was dropped, why."""

    grants: tuple[Entry, ...] = ()
    prohibitions: tuple[Entry, ...] = ()
    source: str = "lexical"
    dropped: tuple[str, ...] = field(default=())

    def data(self) -> dict[str, Any]:
        return {"grants": [e.data() for e in self.grants], "prohibitions": [e.data() for e in self.prohibitions]}

    def lines(self) -> list[str]:
        """The policy as a person reads it."""
        def line(e: Entry) -> str:
            act = "every act that destroys, on" if e.act == "any" else e.act
            leaves = f" (except {', '.join(e.except_)})" if e.except_ else ""
            return f"  {act} {e.object or 'anything'}{leaves}  - your words: {e.quote!r}"
        out = [f"compiled by: {self.source}", "grants:" if self.grants else "grants: none", *map(line, self.grants),
               "prohibitions:" if self.prohibitions else "prohibitions: none", *map(line, self.prohibitions)]
        return out + [f"dropped: {why}" for why in self.dropped]


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").split()).strip(" .!?;\"'")


def within(quote: str, text: str) -> bool:
    """The quoted words are in the text (spaces, case and closing stops aside)."""
    q = _norm(quote)
    return len(q) >= 4 and q in _norm(text)


def lexical(prompt: str) -> Policy:
    """The lexical reader's policy: a clause that asks for an act in plain words is a grant, one that forbids is a
    prohibition ("any" when it forbids every act that destroys), each with its object's words."""
    grants: list[Entry] = []
    prohibitions: list[Entry] = []
    clauses = consent.read(prompt)
    granted_objects = [_object(c) for c in clauses if c.grants]
    for c in clauses:
        leaves = consent.excepted(c.text)
        obj = _object(c) if not leaves else _object_of(consent.EXCEPT.split(c.text)[0])
        for rule in sorted(c.grants, key=list(BY_RULE).index):
            grants.append(Entry(BY_RULE[rule], obj, c.text))
        if c.forbids:
            if not leaves and consent.ELSE.search(c.text):
                leaves = tuple(o for o in granted_objects if o)
            acts = ["any"] if c.forbids >= frozenset(BY_RULE) else [BY_RULE[r] for r in sorted(c.forbids, key=list(BY_RULE).index)]
            prohibitions.extend(Entry(a, obj, c.text, leaves) for a in acts)
    return Policy(tuple(grants), tuple(prohibitions), "lexical")


def _object(c: consent.Clause) -> str:
    if c.target is None:  # anything ("never delete anything", "an existing file"), but a thing named bare ("Uninstall six",
        return "" if consent.QUANTIFIER.search(c.text) else _object_of(c.text)  # "Leave requests alone") is that thing
    tokens, words = c.target
    return _object_of(c.text) or " ".join((*tokens, *words))


def _object_of(text: str) -> str:
    t = terms(text)
    return "" if t is None else " ".join((*t.tokens, *t.words, *t.kinds))


def _entries(items: object, kind: str, dropped: list[str]) -> list[Entry]:
    out: list[Entry] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            dropped.append(f"a {kind} that is not an entry: {str(item)[:80]!r}")
            continue
        act, obj, quote = (str(item.get(k) or "").strip() for k in ("act", "object", "quote"))
        leaves = item.get("except") or []
        if act not in (*ACTS, "any") or (act == "any" and kind == "grant"):
            dropped.append(f"a {kind} with no act it may have ({act!r}): {quote!r}")
            continue
        out.append(Entry(act, obj, quote, tuple(str(x) for x in leaves if str(x).strip()) if isinstance(leaves, list) else ()))
    return out


def from_model(prompt: str, data: object, source: str) -> Policy:
    """A model's compile, checked against the user's words: a quote not in the prompt counts for nothing, a grant whose
    words forbid its act (or sit in a clause that does) grants nothing, and the lexical reader's entries are kept for
    every sentence the model compiled into none of that kind (a prohibition it missed still binds; a plain "Remove X"
    still grants)."""
    dropped: list[str] = []
    raw = data if isinstance(data, Mapping) else {}
    grants = [e for e in _entries(raw.get("grants"), "grant", dropped) if _kept(prompt, e, dropped, grant=True)]
    prohibitions = [e for e in _entries(raw.get("prohibitions"), "prohibition", dropped) if _kept(prompt, e, dropped, grant=False)]
    plain = lexical(prompt)
    for mine, theirs in ((prohibitions, plain.prohibitions), (grants, plain.grants)):
        covered = [e.quote for e in mine]
        mine.extend(e for e in theirs if not any(within(q, e.quote) or within(e.quote, q) for q in covered))
    return Policy(tuple(grants), tuple(prohibitions), source, tuple(dropped))


def _kept(prompt: str, e: Entry, dropped: list[str], grant: bool) -> bool:
    if not within(e.quote, prompt):
        dropped.append(f"{'grant' if grant else 'prohibition'} {e.act} {e.object!r}: its quote is not your words ({e.quote!r})")
        return False
    if grant and (forbidding := forbidden_by(prompt, e.quote, e.rules)) is not None:
        dropped.append(f"grant {e.act} {e.object!r}: its words forbid it ({forbidding!r})")
        return False
    return True


def forbidden_by(prompt: str, quote: str, rules: frozenset[str]) -> str | None:
    """The clause of the prompt that holds the quoted words and forbids one of these acts (or is negated), if any."""
    for c in consent.read(prompt):
        if within(quote, c.text) and c.forbids & rules:  # the clause that holds the words forbids the act ("Never uninstall")
            return c.text
        if within(c.text, quote) and c.forbids & rules:  # a clause among the quoted words that forbids this very act
            return c.text
    return None


def from_file(data: object, source: str) -> Policy:
    """A pinned policy, as a person wrote or corrected it: taken as it is (its entries' shape checked)."""
    dropped: list[str] = []
    raw = data if isinstance(data, Mapping) else {}
    return Policy(tuple(_entries(raw.get("grants"), "grant", dropped)), tuple(_entries(raw.get("prohibitions"), "prohibition", dropped)),
                  source, tuple(dropped))


def merged(policies: Iterable[Policy]) -> Policy:
    items = list(policies)
    return Policy(tuple(e for p in items for e in p.grants), tuple(e for p in items for e in p.prohibitions),
                  "+".join(p.source for p in items), tuple(d for p in items for d in p.dropped))
