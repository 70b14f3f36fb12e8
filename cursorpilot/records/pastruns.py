"""Where runs are kept, and the past runs `cursor-pilot runs` lists, each read from its manifest.json.

A run's folder goes under one place a user can list from anywhere: `$XDG_STATE_HOME/cursor-pilot/runs/<run-id>/`
(`~/.local/state/…` without XDG_STATE_HOME), not a `runs/` in every working directory. `CURSORPILOT_RUNS=DIR` puts
them under DIR instead (`CURSORPILOT_RUNS=runs`: the working directory's, as before), and `--log DIR` puts one run
exactly there. Every run, wherever its folder is, gets a line in the index (`$XDG_STATE_HOME/cursor-pilot/index.jsonl`),
so `cursor-pilot runs` finds a `--log` run from any directory too; it also looks in the working directory's `runs/`,
where earlier versions kept them.

The manifest already holds what a person asks first (what ran, how it ended, the counters, where the records are),
so listing a hundred runs reads a hundred small files, not their transcripts.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.errors import BadInput
from cursorpilot.records.manifest import Manifest, read_manifest

LEGACY = Path("runs")  # the working directory's runs/: where runs were kept before, and where CURSORPILOT_RUNS=runs keeps them


def state_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = Path(env["XDG_STATE_HOME"]) if env.get("XDG_STATE_HOME") else Path.home() / ".local" / "state"
    return base / "cursor-pilot"


def runs_home(env: Mapping[str, str] | None = None) -> Path:
    """Where a run's folder goes when --log does not say."""
    env = os.environ if env is None else env
    return Path(env["CURSORPILOT_RUNS"]).expanduser() if env.get("CURSORPILOT_RUNS") else state_home(env) / "runs"


def register(folder: Path, run_id: str, env: Mapping[str, str] | None = None) -> None:
    """A line in the index for this run's folder. An index that can't be written never fails a run: the folder holds
    everything, and `runs --dir` or `runs show FOLDER` still find it."""
    line = json.dumps({"run_id": run_id, "dir": str(folder.expanduser().resolve())}) + "\n"
    try:
        index = state_home(env) / "index.jsonl"
        index.parent.mkdir(parents=True, exist_ok=True)
        with open(index, "a", encoding="utf-8") as fh:  # one short append: concurrent runs do not tear each other's lines
            fh.write(line)
    except OSError:
        pass


def _indexed(env: Mapping[str, str] | None = None) -> list[Path]:
    try:
        lines = (state_home(env) / "index.jsonl").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(Path(json.loads(line)["dir"]))
        except (ValueError, KeyError, TypeError):
            continue  # a torn line
    return out


@dataclass(frozen=True, slots=True)
class PastRun:
    folder: Path
    manifest: Manifest

    @property
    def what(self) -> str:
        """The command or plan that ran, as given (redacted like the manifest)."""
        argv = self.manifest.argv
        if "--" in argv:
            return shlex.join(argv[argv.index("--") + 1:])
        if self.manifest.plan_path:
            return f"plan {Path(self.manifest.plan_path).stem}"
        command = self.manifest.options.get("command")
        return shlex.join(command) if isinstance(command, list) else shlex.join(argv[1:])

    def guarded(self) -> list[str]:
        """The yeses the deny policy weighed, from the transcript: refused (what was chosen, why) and granted (by whose
        words), one line each, in order. A torn or missing transcript says nothing."""
        out: list[str] = []
        try:
            lines = (self.folder / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            return out
        for line in lines:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("type") == "policy_granted":
                out.append(f"granted: {r.get('evidence')!r}: {r.get('granted_by')}")
            elif r.get("type") == "policy_denied" and r.get("on") == "yes":
                out.append(f"refused: {r.get('evidence')!r}: {r.get('changed_from')!r} ({r.get('chosen_by')}) -> "
                           f"{r.get('reply') or 'a person'}: {r.get('why')}")
        return out

    @property
    def status(self) -> str:
        m = self.manifest
        if m.status == "running":
            return "unfinished"  # still running, or killed: --resume continues it
        return m.status


def _read(folder: Path) -> PastRun | None:
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        return None
    try:
        return PastRun(folder, read_manifest(manifest))
    except (BadInput, OSError):
        return None  # a folder being written, or not ours: the list goes on


def past_runs(root: Path) -> list[PastRun]:
    """The runs in the folders directly under root (or root itself, when it is a run's folder), oldest first."""
    if (root / "manifest.json").is_file():
        return [r for r in [_read(root)] if r is not None]
    if not root.is_dir():
        return []
    return _sorted(r for r in map(_read, root.iterdir()) if r is not None)


def known_runs(env: Mapping[str, str] | None = None) -> list[PastRun]:
    """Every run a user can list without saying where: the runs folder, the index (`--log` runs anywhere), and the
    working directory's runs/ (earlier versions kept them there), each once, oldest first."""
    seen: dict[Path, PastRun] = {}
    for run in [*past_runs(runs_home(env)), *(r for r in map(_read, _indexed(env)) if r is not None), *past_runs(LEGACY)]:
        seen.setdefault(run.folder.resolve(), run)
    return _sorted(seen.values())


def _sorted(runs: Iterable[PastRun]) -> list[PastRun]:
    return sorted(runs, key=lambda r: r.manifest.created)


def where(runs: list[PastRun], env: Mapping[str, str] | None = None) -> str:
    """The places searched, as the listing's heading says them."""
    return f"{_short(runs_home(env))}/, the index of --log runs ({_short(state_home(env) / 'index.jsonl')}) and ./{LEGACY}/"


def _short(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home):] if home != "/" and text.startswith(home + os.sep) else text


def find_run(ref: str, root: Path | None = None, env: Mapping[str, str] | None = None) -> PastRun:
    """A run by its id, the unique beginning of one, or its folder (or its manifest's path); among the runs under root
    when given, else among every known run."""
    path = Path(ref)
    if path.is_dir() or path.name == "manifest.json":
        folder = path if path.is_dir() else path.parent
        return PastRun(folder, read_manifest(folder / "manifest.json"))
    runs = past_runs(root) if root is not None else known_runs(env)
    hits = [r for r in runs if r.manifest.run_id == ref or r.folder.name == ref]
    hits = hits or [r for r in runs if r.manifest.run_id.startswith(ref) or r.folder.name.startswith(ref)]
    if len(hits) == 1:
        return hits[0]
    place = f"{root}/" if root is not None else "the known runs"
    if not hits:
        listing = "cursor-pilot runs" + ("" if root is None else f" --dir {root}")
        raise BadInput(f"no run {ref!r} in {place} ({listing} lists them)")
    raise BadInput(f"{ref!r} names {len(hits)} runs in {place}: {', '.join(r.manifest.run_id for r in hits[:5])}")
