"""Past runs, for `cursor-pilot runs`: the run folders under runs/ (or --dir), each read from its manifest.json.

The manifest already holds what a person asks first (what ran, how it ended, the counters, where the records are),
so listing a hundred runs reads a hundred small files, not their transcripts.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from cursorpilot.errors import BadInput
from cursorpilot.manifest import Manifest, read_manifest


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

    @property
    def status(self) -> str:
        m = self.manifest
        if m.status == "running":
            return "unfinished"  # still running, or killed: --resume continues it
        return m.status


def past_runs(root: Path) -> list[PastRun]:
    """Every folder directly under root that holds a readable manifest, oldest first."""
    if not root.is_dir():
        return []
    runs = []
    for folder in root.iterdir():
        manifest = folder / "manifest.json"
        if manifest.is_file():
            try:
                runs.append(PastRun(folder, read_manifest(manifest)))
            except (BadInput, OSError):
                continue  # a folder being written, or not ours: the list goes on
    return sorted(runs, key=lambda r: r.manifest.created)


def find_run(root: Path, ref: str) -> PastRun:
    """A run by its id, the unique beginning of one, or its folder (or its manifest's path)."""
    path = Path(ref)
    if path.is_dir() or path.name == "manifest.json":
        folder = path if path.is_dir() else path.parent
        return PastRun(folder, read_manifest(folder / "manifest.json"))
    runs = past_runs(root)
    hits = [r for r in runs if r.manifest.run_id == ref or r.folder.name == ref]
    hits = hits or [r for r in runs if r.manifest.run_id.startswith(ref) or r.folder.name.startswith(ref)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        listing = "cursor-pilot runs" + ("" if root == Path("runs") else f" --dir {root}")
        raise BadInput(f"no run {ref!r} in {root}/ ({listing} lists them)")
    raise BadInput(f"{ref!r} names {len(hits)} runs in {root}/: {', '.join(r.manifest.run_id for r in hits[:5])}")
