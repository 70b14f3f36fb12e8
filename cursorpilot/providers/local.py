"""Is a base URL a server of the user's own (this machine, a private network)? Such servers (Ollama, llama.cpp, vLLM,
LM Studio) take no API key, so none is demanded; a public one (api.openai.com, OpenRouter) still needs one."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

_LOCAL_NAMES = ("localhost", "host.docker.internal")
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def is_local(url: str | None) -> bool:
    """A loopback, private or link-local address, or a name that only resolves on the user's own network. Decided from
    the URL alone: resolving the name would be a network call before the run starts."""
    if not url:
        return False
    try:
        host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    if not host:
        return False
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a bare name ("ollama", "gpu-box"): a container's or the LAN's, never a public API
    return address.is_loopback or address.is_private or address.is_link_local
