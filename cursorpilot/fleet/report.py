"""The fleet's page, `report.html` in its folder, PURE but for reading the run report's stylesheet: a row per task
(status, exit, turns, answers, escalations, denials, cost, wall, branch and diff stat, a link to its run's own
report), the fleet's totals, in the run report's look. Self-contained (no script, nothing fetched), rewritten as tasks
end, and written again by `fleet report`."""

from __future__ import annotations

import html
import os
from pathlib import Path

from cursorpilot.fleet.facts import TaskRow
from cursorpilot.fleet.manifest import FleetState

CSS = Path(__file__).resolve().parent.parent / "report" / "templates" / "report.css"
BADGE = {"done": "outcome-completed", "failed": "outcome-failed", "needs-person": "outcome-needs_human", "limit": "outcome-limit",
         "interrupted": "outcome-limit", "killed": "outcome-failed", "running": "", "waiting": "outcome-needs_human", "pending": ""}
COLUMNS = ("task", "status", "exit", "turns", "answers", "escalations", "denials", "cost", "wall", "branch", "changes", "run")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def money(usd: float | None) -> str:
    return "" if usd is None else f"${usd:.4f}"


def figures(row: TaskRow) -> dict[str, str]:
    """A row's cells, as the page and the terminal's table show them."""
    r = row.result
    return {
        "task": row.id, "status": row.status, "exit": "" if row.exit_code is None else str(row.exit_code),
        "turns": str(r.turns) if r else "", "answers": str(r.answers if r else row.answers),
        "escalations": str(r.escalations) if r else "", "denials": str(r.denials) if r else "",
        "cost": money(r.cost_usd if r and r.cost_usd is not None else (row.cost_usd or None)),
        "wall": f"{r.wall_s:.1f}s" if r else "", "branch": row.branch, "changes": r.diffstat if r else "",
    }


def counted(state: FleetState) -> dict[str, int | float]:
    """The fleet's totals as numbers (`fleet status --json`): tasks, a count per status, what the ended runs did, what
    they cost (USD) and their wall time (seconds, summed)."""
    done = [r.result for r in state.rows if r.result]
    count: dict[str, int] = {}
    for r in state.rows:
        count[r.status] = count.get(r.status, 0) + 1
    return {"tasks": len(state.rows), **dict(sorted(count.items())), "answers": sum(r.answers for r in done),
            "escalations": sum(r.escalations for r in done), "denials": sum(r.denials for r in done),
            "cost_usd": round(sum(r.cost_usd or 0.0 for r in done), 6), "wall_s": round(sum(r.wall_s for r in done), 3)}


SHOWN = {"cost_usd": ("cost", money), "wall_s": ("task wall", lambda s: f"{s:.1f}s")}


def totals(state: FleetState) -> dict[str, str]:
    """The totals as the page and the terminal's table show them."""
    out: dict[str, str] = {}
    for key, value in counted(state).items():
        name, shown = SHOWN.get(key, (key, str))
        out[name] = shown(value)
    return out


def render(state: FleetState, folder: Path) -> str:
    css = CSS.read_text(encoding="utf-8") if CSS.is_file() else ""
    badge = {0: "outcome-completed", 1: "outcome-failed", 3: "outcome-needs_human", 4: "outcome-limit"}.get(state.exit_code or 0, "")
    state_said = state.reason or state.status
    stats = "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in totals(state).items())
    head = "".join(f"<th>{_e(c)}</th>" for c in COLUMNS)
    rows = "".join(_row(r, folder) for r in state.rows)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,'
            f'initial-scale=1"><title>cursor-pilot fleet {_e(state.name)}: {_e(state.status)}</title><style>{css}</style></head><body>'
            f'<header class="verdict {badge if state.status != "running" else ""}"><div class="title"><span class="badge" id="fleet-status">'
            f'{_e(state.status)}</span><h1>Fleet {_e(state.name)}</h1></div><p class="reason" id="fleet-reason">{_e(state_said)}'
            f'{"" if state.exit_code is None else f" (exit {state.exit_code})"}</p><dl class="stats" id="totals">{stats}</dl>'
            f'<p class="meta">{_e(state.file)} · engine {_e(state.options.get("engine", "local"))} · concurrency '
            f'{_e(state.options.get("concurrency", ""))} · updated {_e(state.updated)}</p></header>'
            f'<main><h2>Tasks</h2><table id="tasks"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></main></body></html>')


def _row(row: TaskRow, folder: Path) -> str:
    cells = figures(row)
    link = ""
    if row.run_dir and (Path(row.run_dir) / "report.html").is_file():
        href = os.path.relpath(Path(row.run_dir) / "report.html", folder)
        link = f'<a href="{_e(href)}">report</a>'
    reason = f'<div class="meta">{_e(row.reason)}</div>' if row.reason else ""
    tds = "".join(f'<td class="{c}">{_e(cells[c])}{reason if c == "status" else ""}</td>' for c in COLUMNS[:-1])
    return f'<tr class="task {BADGE.get(row.status, "")}" data-task="{_e(row.id)}" data-status="{_e(row.status)}">{tds}<td class="run">{link}</td></tr>'


def write(state: FleetState, folder: Path) -> Path:
    path = folder / "report.html"
    tmp = folder / "report.html.tmp"
    tmp.write_text(render(state, folder), encoding="utf-8")
    os.replace(tmp, path)
    return path
