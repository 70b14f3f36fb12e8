"""report.html and report.md from the report's content, through Jinja2 templates shipped as package data.

The page is self-contained: asciinema-player's script and styles (assets/, pinned, with its license) and the
replay are inlined, so it opens from disk and can be mailed. Everything from the run passes through autoescaping;
the JSON islands go through `json_script`, which escapes `<`, `>` and `&` so no text of a run can close a script.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from cursorpilot.report.model import Report

HERE = Path(__file__).resolve().parent
ASSETS = HERE / "assets"
PLAYER = {"js": "asciinema-player.min.js", "css": "asciinema-player.css", "license": "asciinema-player.LICENSE",
          "pin": "asciinema-player.json"}


def json_script(value: Any) -> Markup:
    text = json.dumps(value, ensure_ascii=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                  .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def secs(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 60:
        return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"
    minutes, seconds = divmod(int(round(value)), 60)
    return f"{minutes} min {seconds:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def diff_class(line: str) -> str:
    if line.startswith(("+++", "---", "diff --git", "index ", "new file", "deleted file", "similarity", "rename ")):
        return "meta"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")


def md_cell(value: Any, limit: int = 80) -> str:
    text = " ".join(str(value or "").split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("|", "\\|").replace("`", "'") or "–"


def headline(block: str) -> str:
    """The line of a prompt block that asks: the last one ending in ? or :, else the first with text."""
    lines = [line.strip(" │┃|─━┌┐└┘") for line in block.splitlines()]
    lines = [line for line in lines if line]
    asking = [line for line in lines if line.endswith(("?", ":", "?)", "]"))]
    return (asking or lines or [""])[-1 if asking else 0]


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")), undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True, autoescape=select_autoescape(enabled_extensions=("html.j2",), default=False))
    env.filters.update(json_script=json_script, secs=secs, diff_class=diff_class, md_cell=md_cell, headline=headline)
    return env


@lru_cache(maxsize=1)
def player() -> dict[str, str]:
    """The pinned player's script, styles and the record of where they came from (assets/asciinema-player.json)."""
    pin = json.loads((ASSETS / PLAYER["pin"]).read_text(encoding="utf-8"))
    return {"js": (ASSETS / PLAYER["js"]).read_text(encoding="utf-8"), "css": (ASSETS / PLAYER["css"]).read_text(encoding="utf-8"),
            "version": pin["version"]}


def html(report: Report, cast: str) -> Iterator[str]:
    """report.html, in chunks (a large replay is not copied again into one string)."""
    data = {"markers": [m.model_dump() for m in report.replay.markers], "cols": report.replay.cols, "rows": report.replay.rows}
    return environment().get_template("report.html.j2").generate(r=report, cast=cast if report.replay.available else None,
                                                                  data=data, player=player())


def markdown(report: Report, rows: int = 10) -> str:
    return environment().get_template("report.md.j2").render(r=report, rows=report.ledger[:rows]).rstrip("\n") + "\n"
