"""Each pack's main flow in a real browser (Debian's Chromium via Playwright, as in
``tests/web/test_browser.py``): the host picks the game on a fresh companion, the players play
it on their phones and with the virtual button panel. Screenshots go to
``artifacts/screenshots/pack-*.png`` (git-ignored)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import MARKS, PHONE, launch, screenshot
from tests.packs.table import PackTable

pytestmark = MARKS


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[PackTable]:
    t = PackTable(tmp_path / "data", seed=11, threaded=True, web=True, panel=True)
    yield t
    t.close()


class Phones:
    """Browser pages (one context each: their own cookies) that must report no errors."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def open(self, url: str) -> Any:
        ctx = self.browser.new_context(viewport=PHONE, device_scale_factor=1)
        self.contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("console", self._console)
        page.goto(url)
        return page

    def _console(self, msg: Any) -> None:
        # the refusals these tests send on purpose (bad input) show as failed loads
        if msg.type == "error" and "status of 400" not in msg.text:
            self.errors.append(msg.text)

    def close(self) -> None:
        for ctx in self.contexts:
            ctx.close()


@pytest.fixture
def phones(browser: Any) -> Iterator[Phones]:
    p = Phones(browser)
    yield p
    p.close()
    assert p.errors == [], f"the pages reported errors: {p.errors}"


def shot(page: Any, name: str) -> None:
    screenshot(page, f"pack-{name}")


def set_up(table: PackTable, phones: Phones, game: str, colours: list[str], name: str) -> Any:
    """The host opens a fresh companion, picks ``game`` and its seats, and starts it."""
    host = phones.open(f"{table.url}/join/{table.svc.host_token}")
    host.wait_for_selector("#s-game option[value='siege']", state="attached")
    host.click("[data-tab='setup']")
    host.select_option("#s-game", game)
    host.select_option("#sp-players", str(len(colours)))
    for i, c in enumerate(colours):
        host.select_option(f"#sp-colours [data-seat='{i}']", c)
    shot(host, f"{name}-1-host-setup")
    host.click("#s-start")
    host.wait_for_selector(f"#pack-body[data-game='{game}']")
    assert table.svc.settings.game == game
    return host


def player(table: PackTable, phones: Phones, colour: str) -> Any:
    page = phones.open(f"{table.url}/join/{table.svc.player_tokens()[colour]}")
    page.wait_for_selector("#pack-body[data-game]")
    return page


def test_siege_round_dice_and_tokens(table: PackTable, phones: Phones) -> None:
    host = set_up(table, phones, "siege", ["blue", "red", "green"], "siege")
    pages = {c: player(table, phones, c) for c in ("blue", "red", "green")}
    for c in ("blue", "red", "green"):  # picking order: clockwise from the start player
        pages[c].click("#siege-pick")
        pages[c].wait_for_selector("#siege-mine")
    numbers = {c: int(pages[c].inner_text("#siege-mine").split(":")[1].split()[0]) for c in pages}
    first = min(numbers, key=numbers.__getitem__)
    for page in pages.values():  # the lowest number held is called first, on every phone
        page.wait_for_selector("#siege-current")
        assert first in page.inner_text("#siege-current").lower()
    assert numbers[first] == min(numbers.values())
    # every phone shows only its own deployment card until it is called
    others = [c for c in pages if c != first]
    assert str(numbers[others[0]]) not in pages[others[1]].inner_text("#siege-called")
    host.wait_for_selector(f"[data-led='seat-{first}'].on")  # the seat LED of the holder
    host.click("#roll")  # 2d6 through the virtual panel
    pages[first].wait_for_selector("#siege-roll [data-armies]", timeout=8000)
    roll = table.view()["roll"]
    assert (
        roll["armies"]
        == {2: 1, 3: 1, 4: 4, 5: 2, 6: 3, 7: 2, 8: 3, 9: 3, 10: 4, 11: 1, 12: 2}[roll["sum"]]
    )
    pages[first].click("[data-place='barrier']")  # a giant barrier: 3 of 15
    pages[first].wait_for_selector("[data-token='barrier'] [data-count='12']")
    shot(pages[first], "siege-2-phone-called-rolled")
    shot(host, "siege-3-host-game")
    pages[first].click("#siege-done")
    second = sorted(numbers, key=numbers.__getitem__)[1]
    pages[second].wait_for_selector("#siege-done")
    assert table.view()["current"] == second


def test_princess_declaration_to_scoring_sheet(table: PackTable, phones: Phones) -> None:
    host = set_up(table, phones, "princess", ["blue", "red"], "princess")
    blue, red = player(table, phones, "blue"), player(table, phones, "red")
    # a step count of 40 is refused with the field named, nothing changes
    answer = blue.evaluate(
        "() => WT.post('player', {command: 'pack', action: 'declare', args: {steps: 40}})"
    )
    assert answer["status"] == 400 and answer["error"].startswith("declare.steps:")
    assert table.view()["positions"]["blue"] == 0
    for i, v in enumerate((2, 2, 3)):  # G3-STEP-1: 2 + 2 + 3 + (3 - 1) = 9
        blue.fill(f"[data-card='{i}']", str(v))
    blue.click("#princess-declare")
    blue.wait_for_selector("#princess-last[data-steps='9']")
    shot(blue, "princess-2-phone-declared-9")
    blue.click("#princess-end")
    red.wait_for_selector("#princess-declare")
    red.fill("[data-card='0']", "4")
    red.click("#princess-declare")
    red.wait_for_selector("#princess-last[data-steps='4']")
    red.click("#princess-end")
    for i, v in enumerate((9, 9, 9)):  # 29 steps: past the princess and on to GOAL
        blue.fill(f"[data-card='{i}']", str(v))
    blue.click("#princess-declare")
    blue.wait_for_selector("#princess-track [data-player='blue'] [data-space='25']")
    blue.click("#princess-end")
    red.wait_for_selector("#princess-end")
    red.click("#princess-end")  # red's last turn (G3-END-1)
    host.wait_for_selector("[data-score='blue']")
    host.click("#princess-bonus")
    # the revealed bonus cards reach every phone (typing before that redraw raced it)
    blue.wait_for_selector("#princess-bonus-shown")
    assert "most" in (blue.text_content("#princess-bonus-shown") or "")
    blue.fill("[data-score='blue'] [data-el='moon']", "3")
    # red's entry redraws blue's view while blue is still typing: what blue typed stays, and
    # so does the focus (the next keystroke lands in the same field)
    red.wait_for_selector("[data-score='red']")
    red.fill("[data-score='red'] [data-el='moon']", "1")
    red.click("[data-send-score='red']")
    blue.wait_for_function(
        "() => document.querySelector('#pack-body').textContent.includes('Counts entered: Red')"
    )
    assert blue.input_value("[data-score='blue'] [data-el='moon']") == "3"
    assert blue.evaluate("() => document.activeElement.dataset.el") == "moon"
    blue.click("[data-send-score='blue']")
    host.wait_for_selector("#princess-sheet")
    sheet = {r["player"]: r for r in table.view()["sheet"]}
    assert sheet["blue"]["track"] == 10 + table.view()["goal_scores"]["blue"] - 10
    assert sheet["blue"]["majority"] == 3  # 2 players: only the most, 3 points (G3-SCORE-3)
    shot(blue, "princess-3-phone-sheet")
    shot(host, "princess-4-host-sheet")


def test_wizwar_hit_points_turn_and_d4(table: PackTable, phones: Phones) -> None:
    host = set_up(table, phones, "wizwar", ["blue", "red", "green"], "wizwar")
    order = table.view()["players"]
    first, target = order[0], order[1]
    phone = player(table, phones, first)
    phone.click(f"[data-fist='{target}']")  # the turn's one attack: a fist, 1 damage
    phone.wait_for_selector(f"[data-wizard='{target}'] [data-hp='14']")
    assert phone.locator("[data-fist]").count() == 0  # no second attack offered
    phone.click("[data-move-card='4']")
    phone.wait_for_selector("#wizwar-move[data-move='7']")  # 3 + 4 (G4-MOVE-1)
    phone.fill("#wizwar-rest-turns", "2")
    phone.select_option("#wizwar-rest-who", target)
    phone.click("#wizwar-rest")
    phone.wait_for_selector(f"[data-wizard='{target}'] .reminder")
    phone.click("[data-add-obstacle='door']")
    phone.wait_for_selector("[data-obstacle-hp='15']")
    host.click("#roll")  # the d4 for a random direction
    phone.wait_for_selector("#wizwar-d4", timeout=8000)
    answer = phone.evaluate(
        "() => WT.post('player', {command: 'pack', action: 'set_hp', "
        f"args: {{wizard: '{target}', hp: -3}}}})"
    )
    assert answer["status"] == 400 and "hp" in answer["error"]
    shot(phone, "wizwar-2-phone-turn")
    phone.click("#wizwar-done")
    host.wait_for_selector(f"[data-led='seat-{target}'].on")
    shot(host, "wizwar-3-host-next-turn")
    assert table.view()["current"] == target
    public = phones.open(f"{table.url}/")  # the table page: everybody's view, no controls
    public.wait_for_selector(f"#wizwar-hp [data-wizard='{target}'] [data-hp='14']")
    assert public.locator("#pack button").count() == 0
    assert public.locator("#board").is_hidden()  # the Wandering Towers' board steps aside
    shot(public, "wizwar-4-table-page")
