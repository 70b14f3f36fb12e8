"""Looking at a report as a person would: Debian's chromium (apt-get install chromium), headless, driven by the
`playwright` package over CDP with `executable_path`; never `playwright install` (it can't download browsers here).

Without chromium the tests skip, saying why; on CI (CI set) they fail instead: .ci/run installs it. Screenshots go to
the test's folder, or to $CURSORPILOT_REPORT_SHOTS when set (to keep them).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# as root, in a container, offline: no sandbox, no GPU, nothing phoned home
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
LOADED = "window.cpReport && (!window.cpReport.player || window.cpReport.player.getDuration() > 0)"


def missing() -> str | None:
    if not CHROMIUM.exists():
        return f"Debian's chromium is not installed ({CHROMIUM}; apt-get install -y chromium): the report is not looked at"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install -e '.[test]')"
    return None


def need_chromium() -> None:
    reason = missing()
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must look at the report (.ci/run installs chromium)")
    if reason:
        pytest.skip(reason)


@contextmanager
def chromium() -> Iterator:
    """A fresh headless chromium (its own profile folder), closed at the end."""
    need_chromium()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=str(CHROMIUM), headless=True, args=ARGS,
                                                       viewport={"width": 1400, "height": 1000})
        try:
            yield context
        finally:
            context.close()


class Opened:
    """A report open in a page, with what it asked of the network and any script error."""

    def __init__(self, context, path: Path):
        self.page = context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_function(LOADED, timeout=20_000)

    def text(self, selector: str) -> str:
        return self.page.inner_text(selector)

    def now(self) -> float:
        return self.page.evaluate("window.cpReport.player.getCurrentTime()")

    def click_and_wait_for_time(self, selector: str) -> float:
        """Click what seeks the replay; the player's time must arrive at the moment it names."""
        t = float(self.page.get_attribute(selector, "data-seek"))
        self.page.click(selector)
        self.page.wait_for_function(f"Math.abs(window.cpReport.player.getCurrentTime() - {t}) < 0.05", timeout=10_000)
        return t

    def terminal_shows(self, text: str) -> None:
        """The replay's terminal, as drawn now, shows this text."""
        self.page.wait_for_function("s => document.querySelector('.ap-term').innerText.includes(s)", arg=text, timeout=10_000)

    def shot(self, folder: Path, name: str) -> Path:
        folder = Path(os.environ.get("CURSORPILOT_REPORT_SHOTS") or folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.png"
        self.page.evaluate("window.scrollTo(0, 0)")  # the page from its top (the ledger keeps its own scroll)
        self.page.screenshot(path=str(path), full_page=True)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        return path

    def offline(self) -> list[str]:
        """What the page fetched other than itself: nothing, for a self-contained page."""
        return [u for u in self.requests if not u.startswith("file://")]
