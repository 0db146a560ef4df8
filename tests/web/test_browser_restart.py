"""A restart in a real browser: a player's page that saw many versions keeps its cookie and
takes the restored game's snapshots (Debian's Chromium driven by Playwright, as in
``test_browser``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from companion.service.core import CompanionService
from companion.service.game import GameSettings
from companion.sim.testing import sim_config
from companion.web import BackgroundServer, create_app

from .test_browser import PHONE, browser, pytestmark  # noqa: F401  (fixture and skip marks)

SETTINGS = GameSettings(players=3, colours=("blue", "yellow", "red"))


class Running:
    """The service on its thread behind waitress, as ``companion run`` has it."""

    def __init__(self, cfg: Any, port: int = 0) -> None:
        self.svc = CompanionService(cfg)
        self.svc.start_game(SETTINGS, restore=True)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.svc.run, args=(self.stop_event, 0.05))
        self.thread.start()
        app = create_app({"SSE_HEARTBEAT_S": 1.0}, self.svc)
        self.server = BackgroundServer(app, "127.0.0.1", port).start()

    def kill(self) -> None:
        """Gone at once: nothing more is written (the journal is as a kill -9 leaves it)."""
        self.server.close(timeout_s=1.0)
        self.stop_event.set()
        self.svc.stop()
        self.svc.wake_all()
        self.thread.join(5)
        self.svc.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:  # noqa: F811
    """A phone's page; while the companion is down its requests are refused, nothing else may
    go wrong."""
    ctx = browser.new_context(viewport=PHONE)
    pg = ctx.new_page()
    errors: list[str] = []
    ctx.on("weberror", lambda err: errors.append(str(err.error)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield pg
    ctx.close()
    # the ways Chromium reports a request to a companion that is down (or going down)
    down = (
        "ERR_CONNECTION_REFUSED",
        "ERR_EMPTY_RESPONSE",
        "ERR_CONNECTION_RESET",
        "ERR_SOCKET_NOT_CONNECTED",
    )
    assert [e for e in errors if not any(d in e for d in down)] == []


def settled(svc: CompanionService) -> int:
    """The version once the service handled everything queued."""
    deadline = time.monotonic() + 5
    while svc.queue_size() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    return svc.version


def shown_version(page: Any, version: int, timeout_ms: float) -> None:
    page.wait_for_function(
        "v => document.body.dataset.version === String(v)", arg=version, timeout=timeout_ms
    )


def test_a_players_page_goes_on_after_a_restart_without_joining_again(page, tmp_path):
    cfg = sim_config(tmp_path / "data", players=3)
    first = Running(cfg)
    try:
        page.goto(f"{first.server.url}/join/{first.svc.player_tokens()['blue']}")
        table = page.context.new_page()
        table.goto(f"{first.server.url}/")
        for i in range(60):  # the page sees many versions before the restart
            first.svc.post_camera_status(f"frame {i}")
        first.svc.hardware_event({"type": "dice", "rolls": [4], "used": 4, "dice_allowed": 1})
        before = settled(first.svc)
        shown_version(page, before, 5000)
        shown_version(table, before, 5000)
    finally:
        first.kill()
    again = Running(cfg, first.server.port)
    try:
        assert again.svc.version > before
        again.svc.hardware_event({"type": "dice", "rolls": [2, 6], "used": 6, "dice_allowed": 2})
        again.svc.post_camera_status("after the restart")
        after = settled(again.svc)
        shown_version(page, after, 10000)
        shown_version(table, after, 10000)
        assert page.locator("#conn").inner_text() in ("live", "polling")
        newest_first = table.locator("#log li").all_inner_texts()
        assert newest_first[:4] == [
            "dice: 2 → 6",
            "game restored: blue, yellow, red",
            "dice: 4",
            "new game: blue, yellow, red",
        ]
        assert "2 → 6" in page.locator("#dice").inner_text()
        assert "2 → 6" in table.locator("#dice").inner_text()
    finally:
        again.kill()
