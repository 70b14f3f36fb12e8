"""The fleet's manifest, `fleet.json` in its folder: the fleet file it ran, its options, and one row per task (status,
exit, figures, run folder, branch). Rewritten atomically at every change, so `fleet status` reads it live, `fleet
resume` after a crash, and it always says what finished."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from cursorpilot.errors import BadInput
from cursorpilot.fleet.facts import RunResult, TaskRow

NAME = "fleet.json"


@dataclasses.dataclass
class FleetState:
    name: str
    file: str  # the fleet file (absolute)
    fleet_id: str
    created: str
    options: dict[str, Any]  # concurrency, engine, address, max_cost: what `fleet resume` runs with again
    rows: list[TaskRow]
    updated: str = ""
    status: str = "running"  # running | finished | interrupted
    exit_code: int | None = None
    reason: str = ""
    pid: int = 0  # the fleet's process while it runs (status: is it still running?)

    def row(self, task: str) -> TaskRow:
        return next(r for r in self.rows if r.id == task)


def write(folder: Path, state: FleetState) -> None:
    from cursorpilot.records.manifest import now_iso

    state.updated = now_iso()
    tmp = folder / (NAME + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(dataclasses.asdict(state), indent=2, ensure_ascii=False))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, folder / NAME)


def read(folder: Path) -> FleetState:
    path = folder / NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = [TaskRow(**{**r, "result": RunResult(**r["result"]) if r.get("result") else None}) for r in data.pop("rows")]
        return FleetState(**data, rows=rows)
    except FileNotFoundError:
        raise BadInput(f"{folder}: not a fleet's folder (no {NAME} in it)") from None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise BadInput(f"{path}: not a fleet manifest this version reads ({type(exc).__name__}: {exc})") from None
