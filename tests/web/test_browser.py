"""The pages in a real browser: Debian's Chromium driven by Playwright against waitress.

Skipped with a reason where ``/usr/bin/chromium`` is absent (CI installs it in ``.ci/run``).
Screenshots are kept in ``artifacts/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.sim.faketable import FakeTableService
from companion.web import BackgroundServer, create_app
from companion.web.service import Audience
from tests.browser import MARKS, PHONE, launch, screenshot

from .conftest import trapped_position

pytestmark = MARKS


@pytest.fixture(scope="module")
def table() -> Iterator[tuple[FakeTableService, str]]:
    svc = FakeTableService(seed=21)
    svc.load(trapped_position(), memory_aid="own")
    app = create_app({"SSE_HEARTBEAT_S": 1.0}, svc)
    srv = BackgroundServer(app, "127.0.0.1", 0).start()
    yield svc, srv.url
    svc.close()
    srv.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport=PHONE, device_scale_factor=1)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield pg
    ctx.close()
    assert errors == [], f"the page reported errors: {errors}"


def shot(page: Any, name: str) -> None:
    screenshot(page, f"{name}")


def wait_version(page: Any, version: int, timeout_ms: float) -> None:
    page.wait_for_function(
        "v => Number(document.body.dataset.version || -1) >= v", arg=version, timeout=timeout_ms
    )


def test_table_page_follows_the_game_within_a_second(
    table: tuple[FakeTableService, str], page: Any
) -> None:
    svc, url = table
    page.goto(url + "/")
    wait_version(page, svc.version, 5000)
    page.wait_for_selector("#board g[data-space='16']")
    assert page.locator("#conn").inner_text() == "live"
    shot(page, "table")
    # an action at the table: the tower on space 6 moves onto space 7 (R-TOWER-*)
    from companion import rules

    game = svc.game()
    assert game is not None
    move = next(a for a in rules.legal_actions(game) if isinstance(a, rules.MoveTower))
    start = time.monotonic()
    svc.step()
    wait_version(page, svc.version, 1000)
    took = time.monotonic() - start
    assert took < 1.0
    after = svc.snapshot(Audience.public())["state"]
    for space, stack in after["stacks"].items():
        title = page.locator(f"#board g[data-space='{space}'] > title").text_content() or ""
        assert f"{len(stack)} tower" in title
    # trapped wizards never appear on the table page (memory aid 'own')
    text = page.content()
    assert "blue-1" not in text and "trapped" not in (page.locator("#board").text_content() or "")
    del move


def test_a_player_answers_a_question_on_their_phone(
    table: tuple[FakeTableService, str], page: Any
) -> None:
    svc, url = table
    page.goto(url + "/join/" + svc.player_tokens()["blue"])
    page.wait_for_url(url + "/me")
    page.wait_for_selector("#mine li")
    assert "TRAPPED on space 2" in page.locator("#mine").inner_text()
    qid = svc.ask(
        "Which tower moved onto space 2?",
        [("a", "the one from space 1"), ("b", "the one from space 3")],
        to="blue",
    )
    button = page.locator("[data-option='b']")
    button.wait_for(timeout=2000)
    shot(page, "player")
    button.click()
    page.wait_for_function("() => document.getElementById('msg').textContent.includes('Answered')")
    assert svc.answers[-1] == (qid, "b", "blue")
    page.wait_for_selector("#question.hidden", state="attached")


def test_the_host_rolls_the_die(table: tuple[FakeTableService, str], page: Any) -> None:
    svc, url = table
    page.goto(url + "/join/" + svc.host_token)
    page.wait_for_url(url + "/host")
    page.wait_for_selector("#board g[data-space='1']")
    page.click("[data-dice-mode='2']")
    page.wait_for_function("() => !document.getElementById('roll').disabled")
    page.click("#roll")
    page.wait_for_function("() => /^[1-6]$/.test(document.querySelector('#dice .die').textContent)")
    dice = svc.snapshot(Audience.host())["dice"]
    assert page.locator("#dice .die").inner_text() == str(dice["value"])
    assert dice["mode"] == 2 and len(dice["rolls"]) == 1
    assert page.locator("#panel .pips i.on").count() == dice["value"]
    shot(page, "host-game")
    # tap a space: the correction form opens with what the companion believes is there
    page.click("#board g[data-space='2']")
    assert page.locator("#c-towers").input_value() == "2"
    shot(page, "host-correct")


def test_commands_tapped_quickly_reach_the_companion_in_the_order_tapped(
    table: tuple[FakeTableService, str], page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """"Two dice" and then "roll" at once: the die card must not arrive after the roll and wipe
    it (each request has its own server thread; here the first one is slow to reach the game)."""
    svc, url = table
    submit = svc.submit

    def slow_die_card(command: Any, audience: Audience) -> Any:
        if isinstance(command, dict) and command.get("command") == "dice_mode":
            time.sleep(0.5)
        return submit(command, audience)

    monkeypatch.setattr(svc, "submit", slow_die_card)
    page.goto(url + "/join/" + svc.host_token)
    page.wait_for_selector("#board g[data-space='1']")
    page.wait_for_function("() => !document.getElementById('roll').disabled")
    # the table is shared with the tests before: the die may already show a roll of a
    # two-dice card, so wait for both commands to be carried out, then for the page to draw
    # that version (not for a die face that may be the old one)
    before = svc.version
    page.click("[data-dice-mode='2']")
    page.click("#roll")
    deadline = time.monotonic() + 20.0
    while svc.version < before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert svc.version >= before + 2, "the two commands did not both reach the companion"
    wait_version(page, svc.version, 20000)
    dice = svc.snapshot(Audience.host())["dice"]
    classes = (page.locator("[data-dice-mode='2']").get_attribute("class") or "").split()
    assert "primary" in classes, "the page lost the two-dice card"
    assert dice["mode"] == 2 and len(dice["rolls"]) == 1
    assert page.locator("#dice .die").inner_text() == str(dice["value"])


def test_the_host_sets_up_a_game_and_shows_join_codes(
    table: tuple[FakeTableService, str], page: Any
) -> None:
    svc, url = table
    page.goto(url + "/join/" + svc.host_token)
    page.wait_for_selector("#board g[data-space='1']")
    page.click("[data-tab='setup']")
    page.select_option("#s-players", "2")
    options = page.locator("#s-colours select").first.locator("option").all_inner_texts()
    assert options == ["B · Blue", "Y · Yellow"]  # R-COMP-2
    shot(page, "host-setup")
    page.click("#s-start")
    page.wait_for_function("() => document.getElementById('msg').textContent === 'new game dealt'")
    game = svc.game()
    assert game is not None and game.table.colours == ("blue", "yellow")
    page.click("[data-tab='codes']")
    page.wait_for_selector("[data-qr='yellow'] svg")
    assert page.locator(".qr svg").count() == 4
    shot(page, "host-codes")


def test_without_event_streams_the_page_polls(
    table: tuple[FakeTableService, str], browser: Any
) -> None:
    svc, url = table
    ctx = browser.new_context(viewport=PHONE)
    ctx.add_init_script("delete window.EventSource;")  # an old browser or a proxy that buffers
    pg = ctx.new_page()
    try:
        pg.goto(url + "/")
        wait_version(pg, svc.version, 5000)
        pg.wait_for_function("() => document.getElementById('conn').textContent === 'polling'")
        svc.submit({"command": "roll"}, Audience.host())
        wait_version(pg, svc.version, 3000)  # polled every 1.5 s with If-None-Match
        value = svc.snapshot(Audience.public())["dice"]["value"]
        assert pg.locator("#dice .die").inner_text() == str(value)
    finally:
        ctx.close()


@pytest.mark.parametrize(
    ("path", "hint"), [("/me", "Scan your own QR code"), ("/host", "join link")]
)
def test_pages_without_a_join_link_say_how_to_sign_in(
    table: tuple[FakeTableService, str], browser: Any, path: str, hint: str
) -> None:
    _svc, url = table
    ctx = browser.new_context(viewport=PHONE)
    pg = ctx.new_page()
    crashes: list[str] = []
    pg.on("pageerror", lambda exc: crashes.append(str(exc)))
    try:
        pg.goto(url + path)
        pg.wait_for_selector("#signin:not(.hidden)", timeout=5000)
        assert hint in pg.locator("#signin").inner_text()
        assert pg.locator("#main").is_hidden()
        assert pg.locator("#conn").inner_text() == "not signed in"
        assert crashes == []
    finally:
        ctx.close()


def test_a_page_left_polling_goes_back_to_a_stream_when_a_slot_frees(browser: Any) -> None:
    import http.client

    svc = FakeTableService(seed=22)
    svc.load(trapped_position(), memory_aid="own")
    app = create_app({"SSE_MAX_STREAMS": 1, "SSE_MIN_AGE_S": 600.0, "SSE_CHECK_S": 0.2}, svc)
    srv = BackgroundServer(app, "127.0.0.1", 0).start()
    other = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    other.request("GET", "/events?tab=other", headers={"Cookie": "wt_csrf=another-phone"})
    held = other.getresponse()  # another phone holds the only slot
    assert held.status == 200
    ctx = browser.new_context(viewport=PHONE)
    pg = ctx.new_page()
    crashes: list[str] = []
    pg.on("pageerror", lambda exc: crashes.append(str(exc)))
    try:
        pg.goto(srv.url + "/")
        wait_version(pg, svc.version, 5000)  # the refused page polls meanwhile
        assert pg.locator("#conn").inner_text() == "polling"
        held.close()
        other.close()  # that phone leaves: its slot is free within a check
        pg.wait_for_function(
            "() => document.getElementById('conn').textContent === 'live'", timeout=6000
        )
        svc.step()
        wait_version(pg, svc.version, 1000)  # a change arrives by the stream, not a 1.5 s poll
        assert crashes == []
    finally:
        ctx.close()
        svc.close()
        srv.close()


class SlowTracker:
    """A game driver whose tracker takes as long as the test says: ``observe`` waits for
    ``go`` before it explains the board (with the state the camera shows), so the page can be
    looked at while the tracker has not answered yet."""

    def __init__(self, service: Any, settings: Any, restore: bool) -> None:
        from companion import rules
        from companion.service.driver import PublishedGame

        self.settings = settings
        self.before = rules.setup(rules.Config(player_count=settings.players), 5)
        move = next(
            a
            for a in rules.legal_actions(self.before)
            if isinstance(a, rules.MoveTower) and a.space == 3 and a.tier == 1
        )
        self.after, _events = rules.apply(self.before, move)
        self.published = PublishedGame(self.before, None, "ok", "playing")
        self.last_update = None
        self.started = threading.Event()
        self.go = threading.Event()

    def observe(self, obs: Any) -> list[str]:
        from companion.service.driver import PublishedGame

        self.started.set()
        assert self.go.wait(30), "the test never let the tracker answer"
        self.published = PublishedGame(self.after, None, "ok", "playing")
        return ["a tower moved"]

    def prepare(self, obs: Any) -> bool:
        return False

    def close(self) -> None:
        pass


def test_the_table_page_shows_the_cameras_board_before_the_tracker_answers(
    browser: Any, page: Any, tmp_path: Path
) -> None:
    # the tracker is slow on purpose: the camera's still board is on the page at once, marked
    # "checking…", and the mark goes once the tracker has worked the board out
    from companion import rules
    from companion.service.core import CompanionService
    from companion.service.heartbeat import Heartbeats
    from companion.sim.testing import sim_config

    svc = CompanionService(
        sim_config(tmp_path / "data", players=3),
        heartbeats=Heartbeats(60.0),
        driver_factory=SlowTracker,
    )
    svc.start_game()
    driver = svc.driver
    assert isinstance(driver, SlowTracker)
    stop = threading.Event()
    loop = threading.Thread(target=svc.run, args=(stop, 0.05), daemon=True)
    loop.start()
    srv = BackgroundServer(create_app({"SSE_HEARTBEAT_S": 1.0}, svc), "127.0.0.1", 0).start()
    try:
        page.goto(srv.url + "/")
        wait_version(page, svc.version, 5000)
        moved_from = len(driver.before.stacks[2])
        assert moved_from >= 1
        space3 = page.locator("#board g[data-space='3'] > title")
        assert f"{moved_from} tower" in (space3.text_content() or "")
        assert page.locator("#checking").count() == 0
        # the camera withheld one space with towers as unsure: the page must not draw it empty
        unsure = next(
            s
            for s in range(16, 3, -1)
            if driver.before.stacks[s - 1]
            and driver.after.stacks[s - 1] == driver.before.stacks[s - 1]
        )
        seen = rules.observe(driver.after)
        spaces = {s: o for s, o in seen.spaces.items() if s != unsure}
        svc.post_observation(rules.Observation(spaces, seen.time, seen.frame))
        assert driver.started.wait(10)
        # the tracker is still working: the page already shows the moved tower, checking
        page.wait_for_selector("#checking", timeout=5000)
        assert page.locator("#checking").inner_text() == "checking…"
        assert "tower" not in (space3.text_content() or "")  # space 3 is empty now
        held = page.locator(f"#board g[data-space='{unsure}'] > title").text_content() or ""
        assert f"{len(driver.before.stacks[unsure - 1])} tower" in held  # the belief, not empty
        assert "not read by the camera" in held
        assert page.locator(f"#board g[data-space='{unsure}'][data-unread='1']").count() == 1
        assert page.locator("#board g[data-unread='1']").count() == 1
        assert not driver.go.is_set() and svc.checking
        shot(page, "table-checking")
        driver.go.set()
        page.wait_for_selector("#checking", state="detached", timeout=5000)
        page.wait_for_function("document.body.dataset.checking === '0'", timeout=5000)
        assert "tower" not in (space3.text_content() or "")  # the tracker agrees
        assert "a tower moved" in (page.locator("#log").text_content() or "")
    finally:
        driver.go.set()
        page.goto("about:blank")  # the page's event stream ends before the server does
        stop.set()
        loop.join(5)
        srv.close()
        svc.close()


def test_the_host_checks_the_camera_before_the_game(
    table: tuple[FakeTableService, str], page: Any
) -> None:
    import base64

    import cv2
    import numpy as np

    svc, url = table
    ok, jpeg = cv2.imencode(".jpg", np.full((90, 160, 3), 90, np.uint8))
    assert ok
    svc.set_camera_jpeg(jpeg.tobytes())  # the camera tab's live frame
    page.goto(url + "/join/" + svc.host_token)
    page.wait_for_selector("#board g[data-space='1']")
    page.click("[data-tab='calibrate']")
    page.click("#cal-check")
    page.wait_for_selector("#cal-check-img:not(.hidden)", timeout=60_000)
    # the frame with the reading drawn on it, a PNG from the service
    src = page.get_attribute("#cal-check-img", "src") or ""
    assert src.startswith("data:image/png;base64,")
    png = cv2.imdecode(np.frombuffer(base64.b64decode(src.split(",", 1)[1]), np.uint8), 1)
    assert png is not None and png.shape[1] == 1024
    # the simulated camera shows the markers at about 10 px per cell: the host is told the
    # size and to print larger markers
    advice = page.locator("#cal-advice li").all_inner_texts()
    assert any("print larger markers" in a for a in advice), advice
    assert "px per cell" in (page.text_content("#cal-figures") or "")
    shot(page, "host-camera-check")


class UnsurePotions(FakeTableService):
    """A table whose tracker cannot tell red's potions (a card and a spell look alike)."""

    def _build(self, audience: Audience) -> Any:
        snap = super()._build(audience)
        if snap.get("state") is not None:
            snap["state"]["potions_unsure"] = {
                "red": [{"full": 2, "empty": 1, "spent": 0}, {"full": 1, "empty": 1, "spent": 1}]
            }
        return snap


class UnsureTrapped(FakeTableService):
    """A table whose tracker holds two stories of where red's trapped wizard is."""

    def _build(self, audience: Audience) -> Any:
        snap = super()._build(audience)
        if snap.get("state") is not None:
            snap["state"]["trapped_unsure"] = {
                "red": [[{"space": 8, "tier": 0}], [{"space": 13, "tier": 0}]]
            }
        return snap


def test_trapped_wizards_the_tracker_holds_two_stories_of_are_shown_as_either(page: Any) -> None:
    svc = UnsureTrapped(seed=22)
    svc.load(trapped_position(), memory_aid="all")
    srv = BackgroundServer(create_app({"SSE_HEARTBEAT_S": 1.0}, svc), "127.0.0.1", 0).start()
    try:
        page.goto(srv.url + "/")
        note = page.locator("#players tr.trapped-unsure[data-player='red']")
        note.wait_for(timeout=5000)
        assert note.inner_text() == (
            "Red trapped under a tower: space 8 (tier 0) or space 13 (tier 0)"
        )
        assert page.locator("#players tr.trapped-unsure").count() == 1, "blue's are certain"
    finally:
        page.goto("about:blank")  # the page leaves before its server stops
        svc.close()
        srv.close()


def test_potions_the_tracker_cannot_tell_are_shown_as_one_or_the_other(page: Any) -> None:
    svc = UnsurePotions(seed=22)
    svc.load(trapped_position(), memory_aid="own")
    srv = BackgroundServer(create_app({"SSE_HEARTBEAT_S": 1.0}, svc), "127.0.0.1", 0).start()
    try:
        page.goto(srv.url + "/")
        cell = page.locator("#players tr[data-player='red'] td.potions")
        cell.wait_for(timeout=5000)
        assert "unsure" in (cell.get_attribute("class") or "")
        assert cell.get_attribute("title") == "2 full, 1 empty, 0 spent or 1 full, 1 empty, 1 spent"
        assert " or " in cell.inner_text()
        assert cell.locator(".potion-full").count() == 3  # ●● or ●
        sure = page.locator("#players tr[data-player='blue'] td.potions")
        assert (
            "unsure" not in (sure.get_attribute("class") or "") and " or " not in sure.inner_text()
        )
        shot(page, "potions-unsure")
    finally:
        page.goto("about:blank")  # the page leaves before its server stops
        svc.close()
        srv.close()
