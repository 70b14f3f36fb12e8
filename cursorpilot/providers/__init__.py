"""Answerers: rules, a script, LLM providers, behind one interface.

The registry maps a name to a factory; vendor SDKs are imported only inside their
own module, and only when that provider is chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import Provider, ProviderConfig

# name -> "module:factory"; imported lazily so unused SDKs are never loaded.
REGISTRY: dict[str, str] = {
    "rules": "cursorpilot.providers.rules:create",
    "script": "cursorpilot.providers.script:create",
    "openai": "cursorpilot.providers.openai:create",
    "anthropic": "cursorpilot.providers.anthropic:create",
    "local": "cursorpilot.providers.inprocess:create",  # a GGUF in-process (llama-cpp-python: the `local` extra)
}


ALIASES = {"mock": "script"}  # old names, still accepted


def names() -> list[str]:
    return sorted(REGISTRY)


def create(name: str, config: ProviderConfig) -> Provider:
    target = REGISTRY.get(ALIASES.get(name, name))
    if target is None:
        raise BadInput(f"unknown provider {name!r}; choose one of: {', '.join(names())}")
    module, attr = target.split(":")
    factory: Callable[[ProviderConfig], Provider] = getattr(import_module(module), attr)
    return factory(config)


def choose(name: str | None, has_rules: bool, env: dict[str, str]) -> str:
    """--provider, else openai if OPENAI_API_KEY is set, else anthropic if ANTHROPIC_API_KEY is, else rules with --rules."""
    if name:
        return ALIASES.get(name, name)
    if env.get("OPENAI_API_KEY"):
        return "openai"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    if has_rules:
        return "rules"
    raise BadInput(
        "no provider chosen: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or answer offline with --rules FILE "
        f"(or say --provider {'|'.join(names())})"
    )
