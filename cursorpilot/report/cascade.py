"""The report's account of a cascade of answerers (decide/cascade.py): which model answered how many questions, the
share answered by the first (the local one), why questions went on to the next model, and the cost saved against the
strongest model alone (each question answered before it, priced at the strongest's rates: `usd_alone`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from cursorpilot.report.model import Cascade, CascadeModel, Escalated


class CascadeTally:
    """Fed each provider_reply's `cascade`; says nothing for a run that asked no cascade."""

    def __init__(self) -> None:
        self.questions = 0
        self.asked: Counter[str] = Counter()
        self.kept: Counter[str] = Counter()
        self.order: list[str] = []
        self.why: Counter[str] = Counter()
        self.spent = 0.0
        self.alone: float | None = None

    def add(self, tiers: list[Any] | None, usage: dict | None) -> None:
        tiers = [t for t in tiers or () if isinstance(t, dict) and isinstance(t.get("source"), str)]
        if not tiers:
            return
        self.questions += 1
        for t in tiers:
            source = t["source"]
            self.order += [] if source in self.order else [source]
            self.asked[source] += 1
            if t.get("kept"):
                self.kept[source] += 1
                if isinstance(t.get("usd_alone"), (int, float)):
                    self.alone = round((self.alone or 0.0) + t["usd_alone"], 8)
            else:
                self.why[_reason(str(t.get("why") or ""))] += 1
        cost = (usage or {}).get("cost_usd")
        self.spent = round(self.spent + (cost if isinstance(cost, (int, float)) else 0.0), 8)

    def summary(self) -> Cascade | None:
        if not self.questions:
            return None
        local = self.kept[self.order[0]]
        return Cascade(
            questions=self.questions, local=local, local_share=round(local / self.questions, 3),
            models=[CascadeModel(model=m, asked=self.asked[m], answered=self.kept[m]) for m in self.order],
            escalated=[Escalated(why=w, n=n) for w, n in self.why.most_common(10)], cost_usd=self.spent, cost_alone_usd=self.alone,
            saved_usd=None if self.alone is None else round(self.alone - self.spent, 8))


def _reason(why: str) -> str:
    """Why a question went on, as counted: "unsure", or the reason itself (an answer quoted in it left out)."""
    if why.startswith("unsure"):
        return "unsure"
    if " is not one of the answers" in why:
        return "not one of the answers the question takes"
    return why[:80]
