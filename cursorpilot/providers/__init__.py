"""Answerers: rules, mock, and (later) LLM providers behind one interface.

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
    "mock": "cursorpilot.providers.mock:create",
}
PLANNED = {"openai", "anthropic"}


def names() -> list[str]:
    return sorted(REGISTRY)


def create(name: str, config: ProviderConfig) -> Provider:
    target = REGISTRY.get(name)
    if target is None:
        if name in PLANNED:
            raise BadInput(f"provider {name!r} is not available yet in this build; use one of: {', '.join(names())}")
        raise BadInput(f"unknown provider {name!r}; choose one of: {', '.join(names())}")
    module, attr = target.split(":")
    factory: Callable[[ProviderConfig], Provider] = getattr(import_module(module), attr)
    return factory(config)
