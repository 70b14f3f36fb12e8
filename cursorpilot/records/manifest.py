"""The run manifest: rewritten atomically (write, fsync, rename) at every step boundary and state change,
so a crashed run can be resumed from it."""

from __future__ import annotations

import json
import os
from datetime import datetime, UTC
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cursorpilot.errors import BadInput

StepStatus = Literal["pending", "running", "completed", "failed", "interrupted", "previewed", "skipped"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Attempt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    started: str
    finished: str | None = None
    status: StepStatus = "running"
    exit_code: int | None = None
    reason: str = ""


class StepRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    kind: str
    status: StepStatus = "pending"
    attempts: list[Attempt] = Field(default_factory=list)
    session_id: str | None = None  # an ACP step's session, loaded again by --resume where the agent can
    turns: list[dict[str, Any]] = Field(default_factory=list)  # the turn ledger: each turn end's judgement (docs/turns.md)
    pending: str | None = None  # the instruction a limit held back: --resume sends it at the first turn end


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    argv: list[str]
    options: dict[str, Any]  # the run's options, reused by --resume
    plan_path: str | None
    plan_hash: str | None
    prompt_hash: str
    versions: dict[str, str | None]
    git_commit: str | None
    transcript: str
    created: str
    updated: str
    status: Literal["running", "completed", "failed", "aborted"] = "running"
    exit_code: int | None = None
    reason: str = ""
    resumes: int = 0
    steps: list[StepRecord]
    counters: dict[str, float | int | None] = Field(default_factory=dict)

    def first_unfinished(self) -> int | None:
        return next((i for i, s in enumerate(self.steps) if s.status not in ("completed", "skipped")), None)


def write_manifest(path: Path, manifest: Manifest) -> None:
    manifest.updated = now_iso()
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_manifest(path: Path) -> Manifest:
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{path}: manifest not found") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise BadInput(f"{path}: not a cursor-pilot manifest ({'.'.join(map(str, err['loc']))}: {err['msg']})") from None
