"""What the browser tests share: Debian's Chromium driven by Playwright, a phone-sized page,
the skip marks where Chromium is absent (CI installs it in ``.ci/run``), and screenshots kept in
``artifacts/screenshots/`` (git-ignored)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHONE = {"width": 412, "height": 915}
"""A phone's viewport (px)."""

MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="Debian's Chromium (/usr/bin/chromium) is not installed"
    ),
]
"""A browser test module's ``pytestmark``."""


def launch() -> Iterator[Any]:
    """Yield a headless Chromium (a Playwright ``Browser``) and close it afterwards: the body
    of a module-scoped fixture. Skips when Playwright is not installed."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


def screenshot(page: Any, name: str) -> None:
    """Save the whole page as ``artifacts/screenshots/<name>.png``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
