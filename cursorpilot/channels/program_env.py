"""What a step's program starts with, and the last it said when it fails by itself.

The environment: the pilot's own, minus the markers that say nobody is at the terminal.

CI services set ``CI=true``, ``GITHUB_ACTIONS=true`` and the like, and many programs read them as "never
ask": Gemini CLI refuses an untrusted folder (exit 55) instead of showing its trust menu, and tools built on
``ci-info`` / ``is-in-ci`` skip their questions or take defaults. Under the pilot somebody *is* at the
terminal: the pilot, which answers those questions under the user's rules. So by default these markers are
hidden from the program (the names are recorded in the transcript; values never are). A step's own ``env:``
wins (``env: {CI: "true"}``), and ``--keep-ci-env`` passes them through for the whole run.

The last words: a program that fails usually says why in its last paragraph (on its screen, or on stderr over
ACP); the summary quotes it, so "exit code 55" comes with its reason where the user looks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from cursorpilot.channels import reaper

# yes/no flags only: variables that carry data (build numbers, URLs, tokens) stay
CI_MARKERS = ("CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS", "BUILDKITE", "TF_BUILD")


def program_env(step_env: Mapping[str, str], mark: str, keep_ci: bool, base: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """(the program's environment, the names of the CI markers hidden from it)."""
    env = dict(os.environ if base is None else base)
    hidden = [] if keep_ci else [name for name in CI_MARKERS if name in env and name not in step_env]
    for name in hidden:
        del env[name]
    return reaper.marked_env({**env, **step_env}, mark), hidden


LAST_WORDS, LAST_ROWS = 200, 4  # characters and rows of the last paragraph quoted


def last_words(rows: list[str], width: int | None = None) -> str | None:
    """The last paragraph of rows, on one line and shortened. width: a row that fills it ran on into the next."""
    block: list[str] = []
    for row in reversed(rows):
        if row.strip():
            block.insert(0, row.rstrip())
        elif block:
            break
        if len(block) == LAST_ROWS:
            break
    text = "".join(row if width is not None and len(row) >= width else row + " " for row in block)
    text = " ".join(text.split())
    return (text if len(text) <= LAST_WORDS else text[: LAST_WORDS - 1] + "…") or None
