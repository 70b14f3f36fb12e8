"""A run's transcript read as the fleet's facts, PURE: each record in, the facts it means out. The run's records are
its only word to the fleet (the same on this machine and on a Ray node): nothing is read off its console.

Which records mean what (cursorpilot/records/models.py): `program_started`, its program runs (no retry after it);
`rules_checked` and `provider_request`, a question met; `answer` and `provider_reply`'s cost, progress;
`decision_page` where its page is served; `human_asked` on the page, a question for the inbox; `human_answered` and
`human_unanswered`, that question closed.
"""

from __future__ import annotations

from cursorpilot.fleet.facts import AskedPerson, Fact, ProgramStarted, Progressed, Questioned, Settled


class TranscriptReader:
    def __init__(self, task: str):
        self.task = task
        self.page = ""  # the run's decision page, http://host:port (no token)
        self.started = False
        self.answers = 0
        self.cost = 0.0

    def feed(self, rec: dict) -> list[Fact]:
        kind = rec.get("type")
        if kind == "program_started" and not self.started:
            self.started = True
            return [ProgramStarted(self.task)]
        if kind in ("rules_checked", "provider_request"):
            return [Questioned(self.task)]
        if kind == "answer":
            self.answers += 1
            return [self._progress()]
        if kind == "provider_reply":
            usage = rec.get("usage") or {}
            if usage.get("cost_usd"):
                self.cost += float(usage["cost_usd"])
                return [self._progress()]
        if kind == "decision_page" and rec.get("url"):
            self.page = str(rec["url"]).rstrip("/")
        if kind == "human_asked" and "page" in (rec.get("channels") or []) and self.page and rec.get("decision"):
            return [AskedPerson(self.task, rec["decision"], self.page, rec.get("prompt") or "")]
        if kind in ("human_answered", "human_unanswered") and rec.get("decision"):
            return [Settled(self.task, rec["decision"])]
        return []

    def _progress(self) -> Progressed:
        return Progressed(self.task, self.answers, round(self.cost, 6))
