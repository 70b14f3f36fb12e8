"""Values a shell can complete (cursor-pilot --install-completion): providers, profiles, plans, agents.

Each reads the same registry the option is checked against, so a completion never offers what the run would refuse.
"""

from __future__ import annotations

from pathlib import Path


def providers(incomplete: str) -> list[str]:
    from cursorpilot.providers import ALIASES, names

    return [n for n in [*names(), *ALIASES] if n.startswith(incomplete)]


def profiles(incomplete: str) -> list[str]:
    from cursorpilot.detect.profiles import available

    return [n for n in ["auto", *available()] if n.startswith(incomplete)]


def plans(incomplete: str) -> list[str]:
    from cursorpilot import resources

    files = sorted(str(p) for p in Path(".").glob(f"{incomplete}*") if p.suffix in (".yaml", ".yml"))
    return [p.stem for p in resources.listing("plans") if p.stem.startswith(incomplete)] + files


def agents(incomplete: str) -> list[str]:
    from cursorpilot.channels.registry import flagged

    agents = next(c for c in flagged() if c.by_agent).agents  # (the channel --agent alone picks)
    return [n for n in (agents() if agents else []) if n.startswith(incomplete)]
