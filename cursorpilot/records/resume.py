"""Whether a run may be resumed (`run --resume`): the plan and the governing prompt it started with, by their hashes in
the manifest, and the saved options a secret was redacted from."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from pathlib import Path

from cursorpilot.errors import BadInput
from cursorpilot.records.manifest import Manifest


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def check_redacted(manifest: Manifest, given: Collection[str]) -> None:
    """A saved option that held a secret was redacted on disk: it must be given again to resume."""
    from cursorpilot.records.redact import MASK

    hidden = [k for k, v in manifest.options.items() if k not in given and MASK in str(v)]
    if hidden:
        again = " -- COMMAND [ARGS...]" if "command" in hidden else ""
        raise BadInput(f"the saved {', '.join(hidden)} held a secret, redacted in the manifest: give it again to resume "
                       f"(cursor-pilot run --resume MANIFEST{again})")


def check_resumable(manifest: Manifest, plan_path: Path | None, governing_prompt: str, force: bool) -> None:
    """Refuse to resume a run whose plan or governing prompt changed, unless --force."""
    if force:
        return
    if manifest.plan_path and plan_path and manifest.plan_hash != file_hash(plan_path):
        raise BadInput(f"the plan {plan_path} changed since this run started; use --force to resume anyway")
    if manifest.prompt_hash != prompt_hash(governing_prompt):
        raise BadInput("the governing prompt changed since this run started; use --force to resume anyway")
