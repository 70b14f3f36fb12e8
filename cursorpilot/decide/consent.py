"""What the user's own words ask for and forbid, clause by clause. PURE.

The governing prompt is the user's: a sentence of it may grant a yes that destroys (deletes, overwrites, formats,
drops, resets, force-pushes), and a sentence may forbid one. A negation word anywhere in a sentence used to veto the
whole sentence: "Prune the old release branches, but don't push anything" granted nothing, though its "don't" is
about pushing. A negation governs the clause it sits in (split at commas, colons, semicolons, "but", "while", and an
"and" that opens a new instruction); a clause that holds nothing but the refusal ("When asked to remove a file,
refuse.") governs its whole sentence. Prohibitions are also said without a negated verb: "… is off limits", "… must
be kept", "keep my copy", "do not lose …" forbid every act that destroys.

A prohibition bears on a question unless it names something else: its object is read (`Clause.target`): a quantifier
or no object at all ("never delete anything", "never overwrite an existing file", "any partition") bears everywhere;
a named thing (`app/settings.ini`, "the data") bears where the question's block names it. Only a grant that names
what the block names beats a prohibition that names something else ("Delete the build folder but keep the data" at
`Delete build/?`); a model never does (decide/weigh.py).

Deterministic and narrow on purpose where it grants (the trigger's words: remove, replace, drop…; other words are the
focused judge's to find), broad where it forbids (prune, clean, wipe, reformat, push, touch, lose…).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cursorpilot.decide.policy import QUESTION_RULES, sentences

# the act classes a yes may carry out (policy.QUESTION_RULES' ids): how a person forbids each, in more words than
# the trigger's (a prohibition missed lets a judge's grant through; a grant missed only costs a judge's look)
_FORBID_WORDS = {
    "delete": r"delet\w*|remov\w*|eras\w*|purg\w*|destroy\w*|discard\w*|unlink\w*|wip(e|es|ed|ing)|prun\w*|clean\w*|clear\w*"
              r"|rm|rmdir|trash\w*|get rid|throw away|uninstall\w*|deinstall\w*|dispos\w*",
    "overwrite": r"overwr\w*|clobber\w*|replac\w*|rewrit\w*|write over|writ(e|es|ing) to",
    "mkfs": r"(re)?format\w*|mkfs\S*|repartition\w*|relabel\w*|wip(e|es|ed|ing)|partition tables?|disk ?labels?",
    "sql_drop": r"drop\w*|truncat\w*|delet\w*|remov\w*|purg\w*|wip(e|es|ed|ing)",
    "reset_hard": r"reset\w*|revert\w*|discard\w*|rewind\w*",
    "force_push": r"push\w*|force[- ]?push\w*",
}
FORBIDDEN = {act: re.compile(rf"(?i)(?<![\w./-])(?:{words})(?![\w-])") for act, words in _FORBID_WORDS.items()}
# verbs whose negation forbids every act that destroys ("don't touch", "do not lose"); preserving words that forbid them
# unless negated themselves ("keep", "is off limits"; "nothing of it should survive" asks for the opposite)
_ANY_HARM = re.compile(r"(?i)\b(touch\w*|modif\w*|chang\w*|alter\w*|damag\w*|harm\w*|los(e|es|ing)|lost|break\w*|mess\w*|ruin\w*)\b")
_PRESERVE = re.compile(r"(?i)\b(keep\w*|kept|preserv\w*|protect\w*|spar(e|es|ed|ing)|retain\w*|surviv\w*|untouched|intact|alone"
                       r"|off[- ]limits?|read[- ]only|as it is|in place|stay\w*|remain\w*)\b")
_NEGATION = re.compile(r"(?i)(\b(never|not|no|nothing|none|nor|cannot|without|avoid\w*|refus\w*|declin\w*|forbid\w*|prohibit\w*"
                       r"|disallow\w*|neither)\b|n't\b|\bno\s*one\b)")
# words that say a thing is worth keeping without a verb that keeps it ("I still need notes.txt tomorrow", "the only copy",
# "production data", "unmerged work"): a prohibition of every act that destroys, where the clause asks for none
_VALUED = re.compile(r"(?i)\b(still need\w*|need (it|them|this|that|these|those)\b|only cop(y|ies)|production|irreplaceabl\w*|precious"
                     r"|unmerged|uncommitted|unsaved|unpushed|not backed up|no backup|can'?t be (re)?(created|recovered|restored))")
_INSTRUMENT = re.compile(r"(?i)\b(protect|secur)\w*\b.*\bwith\b")  # "protect the key with a passphrase": not a prohibition
_EITHER_WAY = re.compile(r"(?i)\bor not\b")
_CONDITION = re.compile(r"(?i)^\s*(if|when|whenever|whether|once|before|after|in case|unless|except|until)\b")
_EXCEPTION = re.compile(r"(?i)\b(unless|except)\b")
_SPLIT = re.compile(r"(?i)\s*[,;:()]\s+|\s+[-–—]\s+|\s+\b(?:but|while|whereas|yet|although|though|then)\b\s+"
                    r"|\s+\b(?:and|or)\b\s+(?=(?:never|not|no|nothing|don'?t|do not|doesn'?t|please|also|then|keep|leave|preserve"
                    r"|protect|make sure|avoid)\b)")
_QUANTIFIER = re.compile(r"(?i)\b(any|anything|everything|all|every|each|no|none|nothing|a|an|whatever|either)\b")
_DEFINITE = re.compile(r"(?i)\b(the|this|that|these|those|my|our|your|its|their|his|her)\b|'s\b")
_PRONOUN = re.compile(r"(?i)^\W*(it|they|them|this|that|these|those|both)\b|\b(of|to|on|from|in) (it|them)\b")
_TOKEN = re.compile(r"""(?x) `[^`]+` | "[^"]+" | (?<![\w])'[^']+'(?![\w]) | (?<![\w])[\w~.-]*\w/[\w.~/*-]* | (?<![\w/])\w[\w-]*\.\w[\w.-]*
                    | (?<![\w])[\w-]*\d[\w.-]* """)
_WORD = re.compile(r"[A-Za-z]{2,}")
_STOP = set("""that this these those there their them they then than what when where which with within without your yours
ours about above after again against also always answer answered asked asks before being below both could does doing done
down during each from further have having here into just like make more most must need needs only other over please same
should some such sure their until upon very were while will would shall want wants mine here everything anything nothing
something whatever every first last next time times ever once files file thing things stuff the and for are was not you all
any can but off limit limits place alone intact where how who why its has had him her his she our out own way don doesn
won shouldn mustn isn aren wasn didn is it to of in on at by or an as be do go me my no so up us we he if
existing current present original previous other others old new local remaining need needs needed still holds hold tomorrow leave leaves left
later today copy copies only production unmerged uncommitted work""".split())
_BARE_FILLER = re.compile(r"(?i)\b(it|that|this|them|so|just|please|always|simply|say|answer|reply|choose|pick|select|type|do|be|the"
                          r"|question|prompt|one|a|an|to|you|should|must|instead|then|and|or)\b")


@dataclass(frozen=True, slots=True)
class Clause:
    """A clause of the user's text: the sentence it belongs to, its own words, and what it says of the acts."""

    sentence: str
    text: str
    grants: frozenset[str]  # act classes it asks for, in the trigger's words, not negated, not a condition
    forbids: frozenset[str]  # act classes it forbids (a negated act, a negated harm, a preserving word)
    target: tuple[tuple[str, ...], tuple[str, ...]] | None  # (named tokens, content words) of its object; None: anything

    def bears(self, block: str) -> bool:
        """Whether what this clause is about is what `block` (the question as the program shows it) is about."""
        if self.target is None:
            return True
        tokens, words = self.target
        low = block.lower()
        return any(t in low for t in tokens) or any(re.search(rf"(?<![a-z]){re.escape(w[:5])}", low) for w in words)


def _clauses(sentence: str) -> list[str]:
    return [c.strip() for c in _SPLIT.split(sentence) if c and c.strip()]


def _bare(clause: str) -> bool:
    """A clause that says nothing but the refusal ("refuse", "answer no", "never"): it governs the whole sentence."""
    rest = _NEGATION.sub(" ", _BARE_FILLER.sub(" ", clause))
    return not re.search(r"[A-Za-z]{2,}", rest)


def _target(clause: str, before: tuple[tuple[str, ...], tuple[str, ...]] | None) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """What the clause is about: None (anything: a quantifier, no object, a generic plural) or the named things, its
    paths and file names and its content words ("main.py and VERSION": main.py and version)."""
    if _PRONOUN.search(clause) and before is not None:
        return before
    tokens = tuple(t.strip("`'\"").lower().removeprefix("./").rstrip("/") for t in _TOKEN.findall(clause))
    tokens = tuple(t for t in tokens if len(t) >= 2)
    if not tokens and (_QUANTIFIER.search(clause) or not _DEFINITE.search(clause)):
        return None
    words = tuple(w.lower() for w in _WORD.findall(_TOKEN.sub(" ", clause)) if w.lower() not in _STOP and not _acts_named(w)
                  and not _PRESERVE.fullmatch(w) and not _NEGATION.fullmatch(w) and not _ANY_HARM.fullmatch(w))
    return (tokens, words) if tokens or words else None


def _acts_named(text: str) -> frozenset[str]:
    return frozenset(act for act, rx in FORBIDDEN.items() if rx.search(text))


def read(text: str) -> list[Clause]:
    """Every clause of the user's text, with what it asks for and forbids."""
    out: list[Clause] = []
    before = None  # the last thing named: what "it" or "they" is, in the next clause or sentence
    for sentence in sentences(text):
        sentence = _EITHER_WAY.sub("or-not", sentence)  # "merged or not", "whether or not": no negation, no clause of its own
        parts = _clauses(sentence)
        refusal = any(_NEGATION.search(p) and _bare(p) for p in parts)  # "…, refuse.": the sentence's acts are refused
        for part in parts:
            negated = bool(_NEGATION.search(part))
            named = _acts_named(part)
            preserving = (bool(_PRESERVE.search(part)) or (bool(_VALUED.search(part)) and not named)) and not _INSTRUMENT.search(part)
            if negated and preserving:  # "nothing of it should survive", "don't keep the old ones": not a prohibition
                forbids: frozenset[str] = frozenset()
            elif preserving or (negated and _ANY_HARM.search(part)):
                forbids = frozenset(FORBIDDEN)
            elif negated or refusal:
                forbids = named
            else:
                forbids = frozenset()
            grants = frozenset() if negated or preserving or refusal or _CONDITION.match(part) or _EXCEPTION.search(part) \
                else frozenset(act for act, rx in QUESTION_RULES.items() if rx.search(part))
            target = _target(part, before)
            out.append(Clause(sentence, part, grants, forbids, target))
            before = target if target is not None else before
    return out


@dataclass(frozen=True, slots=True)
class Reading:
    """What the governing prompt says of a yes that carries out `acts` at the question shown as `block`."""

    forbidding: tuple[Clause, ...]  # prohibitions of one of the acts, about what the block is about (or anything)
    elsewhere: tuple[Clause, ...]  # prohibitions of one of the acts, about something the block does not name
    granting: tuple[Clause, ...]  # plain requests for one of the acts (the trigger's words), about what the block names

    @property
    def contradicts(self) -> Clause | None:
        """A sentence that both asks for the act here and forbids it here: the user's own words disagree, a person decides."""
        forbidding = {c.sentence for c in self.forbidding}
        return next((c for c in self.granting if c.sentence in forbidding), None)


def reading(text: str, acts: frozenset[str], block: str) -> Reading:
    clauses = read(text)
    forbid = [c for c in clauses if c.forbids & acts]
    return Reading(forbidding=tuple(c for c in forbid if c.bears(block)),
                   elsewhere=tuple(c for c in forbid if not c.bears(block)),
                   granting=tuple(c for c in clauses if c.grants & acts and c.bears(block)))


_OPENER = re.compile(r"(?i)^\W*(?:(?:yes|ok|okay|sure|please|now|then|also|first|go ahead and|just|so)\W+)*")


def asked_for(text: str) -> frozenset[str]:
    """The acts a message asks for in so many words (a turn end's next instruction to an agent): a clause that opens with
    the act's verb ("Remove the build directory", "Yes, delete it", "Go ahead and wipe the cache"), not negated, not a
    condition. "Do not delete anything, leave it in place and finish" and "Skip the deletion and finish" ask for none."""
    out: set[str] = set()
    for c in read(text):
        if c.forbids or _NEGATION.search(c.text) or _PRESERVE.search(c.text) or _CONDITION.match(c.text):
            continue
        rest = c.text[_OPENER.match(c.text).end():]  # type: ignore[union-attr]  # the pattern matches any text
        out |= {act for act, rx in FORBIDDEN.items() if (m := rx.search(rest)) is not None and m.start() == 0}
    return frozenset(out)






TOKEN = _TOKEN  # a named thing: a path, a file name, quoted words
QUANTIFIER = _QUANTIFIER
ELSE = re.compile(r"(?i)\b(else|other(s| ones)?|the rest)\b")  # "keep everything else": all but what the prompt asks for
EXCEPT = re.compile(r"(?i)\b(?:except(?: for)?|other than|apart from|besides|but not|save for)\s+")


def content_word(word: str) -> bool:
    """A word that says what a thing is (not a stop word, an act, a negation, a harm, a keeping word)."""
    w = word.lower()
    return (w not in _STOP and not _acts_named(w) and not _PRESERVE.fullmatch(w) and not _NEGATION.fullmatch(w)
            and not _ANY_HARM.fullmatch(w) and not _VALUED.fullmatch(w))


def excepted(text: str) -> tuple[str, ...]:
    """What a clause leaves out ("never delete anything except build/": build/)."""
    parts = EXCEPT.split(text, maxsplit=1)
    rest = parts[1] if len(parts) > 1 else ""
    return tuple(p.strip() for p in re.split(r"\s*(?:,|\band\b|\bor\b)\s*", rest) if p.strip())
