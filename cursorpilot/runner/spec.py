"""What a run is given: its plan, its governing prompt, its answerer, where its records go, and every option the
command line checked (commands/run.py builds it from RunArgs; the runner reads it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cursorpilot.clock import Clock, SystemClock
from cursorpilot.human.humans import HumanConfig
from cursorpilot.decide.compiled import Policy
from cursorpilot.plan import Plan
from cursorpilot.providers.base import Provider
from cursorpilot.providers.rules import RuleEntry


@dataclass
class RunSpec:
    plan: Plan
    governing_prompt: str
    provider: Provider
    run_id: str
    log_dir: Path
    argv: list[str]
    options: dict  # serialisable options, kept in the manifest for --resume
    plan_path: Path | None = None
    rule_entries: list[RuleEntry] = field(default_factory=list)  # from --rules, when the provider is not rules itself
    profile: str = "auto"
    detectors: Path | None = None
    cursor_bin: str = "cursor-agent"
    cwd: str | None = None
    max_steps: int | None = None
    model_calls: tuple[int | None, int | None] = (1000, 20)  # --max-model-calls: in the run, for one question
    timeout: float | None = None
    done_when: str | None = None  # --done-when: the goal check of every interactive step without its own
    max_turns: int | None = None  # --max-turns (given: it wins over a plan's; else the plan's, else DEFAULT_MAX_TURNS)
    max_wall: float | None = None  # seconds: no new turn after this long
    max_cost: float | None = None  # USD
    on_limit: str = "wait"  # --on-limit (decide/limits.py)
    stuck_after: float | None = None  # --stuck-after, seconds
    dry_run: bool = False
    policy: Policy | None = None  # --policy: pinned, used instead of compiling the governing prompt
    interactive: bool = False
    context_tokens: int = 3000
    no_upload: bool = False
    keep_ci_env: bool = False
    native_deny: bool = True  # write the deny policy into the agent's own deny list (channels/agent/nativedeny.py)
    cols: int = 120
    rows: int = 40
    secrets: dict[str, str] = field(default_factory=dict)  # --secret: name -> value (typed for <secret:NAME>, redacted everywhere)
    humans: HumanConfig = field(default_factory=HumanConfig)  # who is asked when nothing else can answer (docs/human.md)



def default_run_id(clock: Clock | None = None) -> str:
    import secrets

    clock = clock or SystemClock()
    return clock.utcnow().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
