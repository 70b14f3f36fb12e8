"""The notice that a question waits for someone, sent through Apprise (the only importer of it, imported only when
`--notify` or $CURSOR_PILOT_NOTIFY names a target): ntfy, Slack, Telegram, email, a `json://` webhook, any of its services.

A target's URL often holds a token or a password: it is never written down. The transcript names its scheme alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from cursorpilot.errors import BadInput


@dataclass(frozen=True, slots=True)
class Sent:
    service: str  # the URL's scheme: json, ntfy, slack, mailto...
    ok: bool
    error: str = ""  # Apprise's own words, when it failed


def scheme(url: str) -> str:
    return url.partition("://")[0].lower() or "?"


def check(urls: list[str]) -> None:
    """Every target is one Apprise knows, before anything runs: a typo is exit 2, not a notice that never comes."""
    import apprise

    for url in urls:
        if not apprise.Apprise().add(url):
            raise BadInput(f"--notify {scheme(url)}://…: not a notification URL Apprise knows (see its wiki for the services and their "
                           "URL forms, e.g. json://host:port/path, ntfys://topic, mailto://user:pass@host)")


def send(urls: list[str], title: str, body: str) -> list[Sent]:
    """One notice to each target, each on its own (one failing target does not hide the others' fate). Blocking: the
    caller sends it off the threads that read or answer."""
    import apprise

    out = []
    for url in urls:
        a = apprise.Apprise()
        a.add(url)
        error = ""
        with apprise.LogCapture(level=apprise.logging.WARNING) as log:
            try:
                ok = bool(a.notify(title=title, body=body))
            except Exception as exc:
                ok, error = False, f"{type(exc).__name__}: {exc}"
            if not ok and not error:
                lines = [line.split(" - ", 2)[-1] for line in log.getvalue().splitlines() if line.strip()]
                error = lines[-1] if lines else "not sent"
        out.append(Sent(scheme(url), ok, error[:300]))
    return out
