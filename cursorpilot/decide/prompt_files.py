"""The prompt filer: each question turned into a request for a model (its context within the budget, redacted), and
every prompt and answer filed under the run's prompts/step-NN/ (what a model was told is on disk, beside what it said)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cursorpilot.decide.context import PromptParts, build_again, estimate_tokens
from cursorpilot.decide.context import build as build_prompt
from cursorpilot.decide.question import Question
from cursorpilot.envsnap import git_snapshot
from cursorpilot.providers.base import QA, AnswerRequest, Reply
from cursorpilot.run_context import RunContext


class PromptFiler:
    """Builds each LLM prompt within the budget, redacts it, and files prompt and answer under prompts/step-NN/."""

    def __init__(self, ctx: RunContext, step_index: int, step_label: str, cwd: str | None, governing_prompt: str):
        self.ctx = ctx
        self.folder = ctx.log_dir / "prompts" / f"step-{step_index:02d}"
        self.step_label = step_label
        self.cwd = cwd
        self.governing_prompt = governing_prompt
        self.count = 0
        self._answer_file: Path | None = None
        self.last_tokens = 0
        self.last_file: str | None = None  # the last prompt's file, relative to the run's folder (for the transcript)
        self._notes: tuple[str, ...] = ()  # the last question's notes, for its second asking (a secret's rules among them)

    def fill(self, request: AnswerRequest, q: Question, history: tuple[QA, ...]) -> AnswerRequest:
        live = list(q.live)
        while live and not live[-1].strip():
            live.pop()
        parts = PromptParts(
            governing_prompt=self.governing_prompt,
            step=self.step_label,
            kind=q.kind,
            rule_id=q.source,
            question=q.text,
            live=live,
            earlier=list(q.earlier),
            environment="" if self.ctx.no_upload else git_snapshot(self.cwd),
            history=history,
            options=q.describe_choices(),
            multiline=q.multiline,
            notes=q.notes,
            check=q.check,
            check_output=q.check_output,
            accepts=request.accepts,
            labels=tuple(c.label for c in q.choices),
            asked=q.asked,
            highlighted=q.choices[q.highlighted].label if q.highlighted is not None and q.choices else "",
            multi=q.multi,
        )
        built = build_prompt(parts, budget=self.ctx.context_tokens)
        self._notes = q.notes
        system, user = self.fill_text(built.system, built.user)
        return replace(request, system=system, user=user)

    def fill_text(self, system: str, user: str, what: str = "prompt") -> tuple[str, str]:
        """A prompt built elsewhere (a yes weighed: what="weigh"), redacted, counted and filed; returns what is sent."""
        system, user = self.ctx.redactor.text(system), self.ctx.redactor.text(user)
        self.count += 1
        self.last_tokens = estimate_tokens(system) + estimate_tokens(user)
        self.ctx.usage["questions_to_llm"] += 1
        self.ctx.usage["prompt_tokens_est"] += self.last_tokens
        self.folder.mkdir(parents=True, exist_ok=True)
        prompt_file = self.folder / f"{self.count:03d}-{what}.md"
        prompt_file.write_text(f"<!-- system -->\n{system}\n<!-- user -->\n{user}\n", encoding="utf-8")
        self.last_file = str(prompt_file.relative_to(self.ctx.log_dir))
        self._answer_file = self.folder / f"{self.count:03d}-answer.md"
        return system, user

    def again(self, request: AnswerRequest, previous: str, why: str) -> AnswerRequest:
        """The question asked once more after a reply that only repeated it (Decider.call): the short prompt, redacted
        and filed beside the first as NNN-again-prompt.md."""
        live = request.screen.splitlines()
        while live and not live[-1].strip():
            live.pop()
        built = build_again(self.governing_prompt, live, previous, why, request.accepts, budget=self.ctx.context_tokens,
                            notes=self._notes, step=self.step_label, question=request.prompt_block)
        system, user = self.ctx.redactor.text(built.system), self.ctx.redactor.text(built.user)
        self.ctx.usage["prompt_tokens_est"] += built.tokens
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"{self.count:03d}-again-prompt.md").write_text(f"<!-- system -->\n{system}\n<!-- user -->\n{user}\n", encoding="utf-8")
        return replace(request, system=system, user=user)

    def file_answer(self, reply: Reply) -> None:
        if self._answer_file is None:
            return
        body = (
            f"source: {reply.source}\n{f'verdict: {reply.turn}' + chr(10) if reply.turn else ''}answer: {reply.text!r}\nraw: {reply.raw!r}\n"
            f"removed: {list(reply.removed)!r}\nreason: {reply.reason}\n"
        )
        self._answer_file.write_text(self.ctx.redactor.text(body), encoding="utf-8")
        self._answer_file = None
