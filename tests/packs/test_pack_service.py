"""The game packs in the real service: setup from the host, commands from the phones, the
buttons, undo, bad input, and restarts from the journal (kill -9 included)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.journal import Journal
from companion.web import create_app
from companion.web.app import CSRF_COOKIE, CSRF_HEADER
from companion.web.service import Audience, CommandError
from tests.packs.table import PackTable

REPO = Path(__file__).resolve().parents[2]
ARMIES = {2: 1, 3: 1, 4: 4, 5: 2, 6: 3, 7: 2, 8: 3, 9: 3, 10: 4, 11: 1, 12: 2}


@pytest.fixture
def table(tmp_path: Path) -> Any:
    t = PackTable(tmp_path / "data", seed=5)
    yield t
    t.close()


def setup(t: PackTable, game: str, colours: list[str], **pack: Any) -> None:
    result = t.send({"command": "setup", "game": game, "colours": colours, "pack": pack})
    assert not isinstance(result, CommandError), result
    assert t.svc.settings.game == game


def player(colour: str) -> Audience:
    return Audience.player(colour)


def journal_rows(t: PackTable) -> int:
    with Journal(t.config.data.journal_path()) as j:
        return j.count()


def all_views(t: PackTable) -> dict[str, Any]:
    views = {"host": t.view(), "public": t.view(Audience.public())}
    for c in t.svc.settings.colours:
        views[c] = t.view(player(c))
    return views


# ------------------------------------------------------------------------------------------
# setup


def test_the_host_chooses_each_game_and_its_settings_with_stated_defaults(table: PackTable) -> None:
    setup(table, "siege", ["blue", "red"])
    assert table.svc.settings.pack == {"rules": "full"}
    setup(table, "princess", ["blue", "red", "green"], overtake="free")
    assert table.svc.settings.pack["overtake"] == "free"
    assert table.svc.settings.pack["track_values"] == {"23": -2}
    setup(table, "wizwar", ["green", "blue"])
    assert table.svc.settings.pack == {"start_order": "roll", "hand_limit": 7}
    assert sorted(table.view()["hp"].values()) == [15, 15]
    # and back to the Wandering Towers, tracked by the camera
    assert not isinstance(table.send({"command": "setup", "players": 3}), CommandError)
    assert table.svc.settings.game == "wandering-towers" and table.svc.state is not None
    assert "pack" not in table.svc.snapshot(Audience.host())


@pytest.mark.parametrize(
    ("cmd", "message"),
    [
        ({"game": "siege", "colours": ["blue"]}, "setup.players"),
        ({"game": "princess", "colours": ["blue", "red"], "pack": {"ties": "x"}}, "setup.ties"),
        ({"game": "wizwar", "colours": ["blue", "blue"]}, "setup.colours"),
        (
            {"game": "princess", "colours": ["blue", "red"], "pack": {"track_values": "30:1"}},
            "setup.track_values",
        ),
        ({"game": "siege", "colours": ["blue", "red"], "pack": {"speed": 2}}, "setup.pack.speed"),
    ],
)
def test_a_bad_setup_names_the_field_and_keeps_the_game(
    table: PackTable, cmd: dict[str, Any], message: str
) -> None:
    before = table.svc.settings
    err = table.send({"command": "setup", **cmd})
    assert isinstance(err, CommandError) and err.status == 400
    assert err.message.startswith(message), err.message
    assert table.svc.settings == before


# ------------------------------------------------------------------------------------------
# bad input changes nothing


BAD = [
    ("wizwar", "set_hp", {"wizard": "red", "hp": -3}, None, 400, "set_hp.hp: G4-HP-1"),
    ("wizwar", "damage", {"wizard": "red", "amount": -2}, "red", 400, "damage.amount: G4-HP-1"),
    ("wizwar", "heal", {"wizard": "pink", "amount": 2}, None, 400, "heal.wizard: G4-HP-1"),
    ("wizwar", "move_card", {"value": 7}, None, 400, "move_card.value: G4-MOVE-1"),
    ("princess", "declare", {"steps": 40}, None, 400, "declare.steps: G3-STEP-1"),
    ("princess", "declare", {"cards": [2, 12]}, "blue", 400, "declare.card_steps: G3-STEP-1"),
    ("princess", "score", {"player": "pink"}, None, 400, "score.player: G3-SCORE-1"),
    ("princess", "score", {"tiles": {"moon": -1}}, "red", 400, "score.tiles.moon: G3-SCORE-3"),
    ("princess", "declare", {"steps": 3}, "red", 409, "declare.player: G3-TURN-1"),
    ("siege", "token", {"token": "bomb", "op": "take", "n": 8}, None, 400, "token.n: G2-TOK-1"),
    ("siege", "token", {"token": "mud", "op": "return"}, None, 400, "token.mud: G2-TOK-3"),
    ("siege", "pick", {}, "red", 409, "pick.player: G2-ROUND-1"),
    ("siege", "win", {"player": "red"}, "red", 409, "win.player: G2-GOAL-1"),
    ("siege", "warp", {}, None, 400, "warp.action: pack"),
]


@pytest.mark.parametrize(("game", "action", "args", "by", "status", "message"), BAD)
def test_bad_input_gets_a_clear_message_and_changes_nothing(
    table: PackTable,
    game: str,
    action: str,
    args: dict[str, Any],
    by: str | None,
    status: int,
    message: str,
) -> None:
    setup(table, game, ["blue", "red"])
    before, rows, version = all_views(table), journal_rows(table), table.svc.version
    err = table.pack(action, player(by) if by else None, **args)
    assert isinstance(err, CommandError), err
    assert (err.status, err.message[: len(message)]) == (status, message), err.message
    assert all_views(table) == before
    assert journal_rows(table) == rows and table.svc.version == version


def test_the_web_answers_a_bad_phone_command_with_a_4xx_naming_the_field(
    table: PackTable,
) -> None:
    setup(table, "wizwar", ["blue", "red"])
    app = create_app({"TESTING": True}, table.svc)
    import threading

    stop = threading.Event()
    runner = threading.Thread(target=table.svc.run, args=(stop, 0.05), daemon=True)
    runner.start()
    try:
        client = app.test_client()
        assert client.get(f"/join/{table.svc.player_tokens()['red']}").status_code == 303
        token = client.get_cookie(CSRF_COOKIE)
        assert token is not None
        body = {"command": "pack", "action": "set_hp", "args": {"wizard": "red", "hp": -3}}
        resp = client.post("/api/command?as=player", json=body, headers={CSRF_HEADER: token.value})
        assert resp.status_code == 400
        assert resp.get_json()["error"] == "set_hp.hp: G4-HP-1: must be 0..15, got -3"
        deep = {"command": "pack", "action": "damage", "args": {"a": {"b": {"c": 1}}}}
        resp = client.post("/api/command?as=player", json=deep, headers={CSRF_HEADER: token.value})
        assert resp.status_code == 400 and resp.get_json()["error"].startswith("pack.args.a.b")
    finally:
        table.svc.stop()
        runner.join(timeout=5)
    assert table.view()["hp"] == {"blue": 15, "red": 15}


# ------------------------------------------------------------------------------------------
# the buttons: ROLL, DONE, UNDO


def test_roll_done_and_undo_buttons_drive_every_pack(table: PackTable) -> None:
    setup(table, "siege", ["blue", "red"], rules="simple")
    table.svc.hardware_event(
        {
            "type": "dice",
            "rolls": [8],
            "used": 3,
            "dice_allowed": 1,
            "dice": [[3, 5]],
            "profile": "siege-2d6",
        }
    )
    table.svc.drain()
    assert table.view()["roll"] == {"faces": [3, 5], "sum": 8, "armies": 3}
    assert any("8 → 3 armies" in line for line in table.svc.log_lines())
    table.svc.hardware_event({"type": "done"})
    table.svc.drain()
    assert table.view()["current"] == "red"  # simple rules: clockwise (G2-ROUND-4)
    table.svc.hardware_event({"type": "undo"})
    table.svc.drain()
    assert table.view()["current"] == "blue" and table.view()["roll"]["sum"] == 8
    setup(table, "wizwar", ["blue", "red"], start_order="seating")
    table.svc.hardware_event(
        {"type": "dice", "rolls": [3], "used": 3, "dice_allowed": 1, "profile": "wizwar-d4"}
    )
    table.svc.drain()
    assert table.view()["d4"] == {"face": 3, "direction": "south"}
    assert table.svc.published is not None and table.svc.published.seat == 0
    table.svc.hardware_event({"type": "done"})
    table.svc.drain()
    assert table.svc.published.seat == 1  # the seat LED follows the turn
    err = table.send({"command": "undo"})
    assert not isinstance(err, CommandError)
    table.send({"command": "undo"})
    err = table.send({"command": "undo"})
    assert isinstance(err, CommandError) and err.status == 409


# ------------------------------------------------------------------------------------------
# the games


def test_siege_full_rules_round_calls_the_numbers_in_order_and_the_pope_reorders(
    table: PackTable,
) -> None:
    setup(table, "siege", ["blue", "red", "green"])
    v = table.view()
    assert (v["phase"], v["order"], v["current"]) == ("pick", ["blue", "red", "green"], "blue")
    assert table.svc.published.attention  # look at your phone: pick
    for c in ("blue", "red", "green"):
        assert not isinstance(table.pack("pick", player(c)), CommandError)
    held = {c: table.view(player(c))["my_number"] for c in ("blue", "red", "green")}
    assert len(set(held.values())) == 3
    assert "my_number" not in table.view() and "my_number" not in table.view(Audience.public())
    called = []
    for _ in range(3):
        v = table.view()
        called.append(v["current"])
        assert table.svc.published.seat == ["blue", "red", "green"].index(v["current"])
        table.svc.hardware_event({"type": "done"})
        table.svc.drain()
    assert called == sorted(held, key=held.__getitem__)  # 1 → 8, unused and unheld skipped
    v = table.view()
    assert v["round"] == 2 and v["phase"] == "pick"
    assert v["order"] == sorted(held, key=held.__getitem__)  # ascending (G2-ROUND-1)
    pope = next((c for c, n in held.items() if n == 4), None)
    assert v["pope"] == pope
    if pope is not None:
        other = next(c for c in held if c != pope)
        err = table.pack("pope_order", player(other), order=["green", "red", "blue"])
        assert isinstance(err, CommandError) and err.status == 409
        table.pack("pope_order", player(pope), order=["green", "red", "blue"])
        assert table.view()["order"] == ["green", "red", "blue"]


def test_siege_token_supply_counts(table: PackTable) -> None:
    setup(table, "siege", ["blue", "red"])
    table.pack("token", token="barrier", op="take", n=3)
    table.pack("token", token="bomb", op="take")
    table.pack("token", token="bomb", op="return")
    assert table.view()["supply"] == {"barrier": 12, "mud": 5, "bomb": 7}


def test_princess_steps_passages_goal_and_the_end(table: PackTable) -> None:
    setup(table, "princess", ["blue", "red"])
    table.pack("declare", cards=[2, 2, 3])  # G3-STEP-1: 9
    assert table.view()["positions"]["blue"] == 9
    table.pack("end_turn")
    table.pack("declare", steps=11)  # red to 11
    table.pack("end_turn")
    table.pack("declare", steps=8)  # passing her costs 2: 9 -> 15, leads, carries (G3-STEP-2)
    v = table.view()
    assert (v["positions"]["blue"], v["carrier"], v["princess"]) == (15, "blue", 15)
    table.pack("end_turn")
    table.pack("end_turn")
    table.pack("declare", steps=7)  # carried: 15 + 5 = 20, the passages open (G3-STEP-3)
    v = table.view()
    assert v["positions"]["blue"] == 20 and v["passages_open"]
    table.pack("end_turn")
    table.pack("end_turn")
    table.pack("declare", steps=9)  # 20 + 7 = 27: GOAL 1st, 10 + 2 excess (G3-STEP-4)
    v = table.view()
    assert v["arrivals"] == ["blue"] and v["goal_scores"] == {"blue": 12}
    table.pack("end_turn")
    assert table.view()["final_turns"] == ["red"]  # G3-END-1
    table.pack("end_turn")
    assert table.view()["phase"] == "scoring" and table.svc.published.phase == "over"
    table.pack("score", player="blue", tiles={"moon": 2, "fire": 3}, spirit_uses=[2, 1])
    table.pack("score", player="red", tiles={"moon": 1}, spirit_uses=[0, 0], track_value=-9)
    table.pack("bonus", cards=[{"element": "fire", "most": True, "points": 3}])
    sheet = {r["player"]: r for r in table.view()["sheet"]}
    assert sheet["blue"] == {
        "player": "blue",
        "track": 12,
        "majority": 3,
        "spirit": 6,
        "bonus": 3,
        "total": 24,
        "winner": True,
    }
    assert sheet["red"]["track"] == -9 and sheet["red"]["total"] == -9


def test_princess_tiles_running_out_end_the_game_unrescued(table: PackTable) -> None:
    setup(table, "princess", ["blue", "red", "green"])
    table.pack("end_turn", tiles_out=True)
    v = table.view()
    assert v["phase"] == "scoring" and not v["rescued"]


def test_wizwar_hit_points_rest_and_elimination(table: PackTable) -> None:
    setup(table, "wizwar", ["blue", "red", "green"], start_order="seating")
    table.pack("rest", wizard="green", turns=2)  # cast by blue (G4-REST-1)
    table.pack("rest", wizard="green", turns=1, caster="blue")  # rests add up
    assert table.view()["rests"] == {"green": 3}
    table.pack("damage", wizard="red", amount=14)
    table.pack("damage", player("red"), wizard="red", amount=1, attack="dagger")
    v = table.view()
    assert v["out"] == ["red"] and v["hp"]["red"] == 0  # G4-LOSE-1
    err = table.pack("heal", wizard="red", amount=3)
    assert isinstance(err, CommandError) and "G4-LOSE-1" in err.message
    table.pack("end_turn")
    assert table.view()["current"] == "green"  # red is out: skipped
    table.pack("end_turn")
    assert table.view()["rests"] == {"green": 2}  # blue's turn came round once
    table.pack("damage", wizard="green", amount=15)
    v = table.view()
    assert v["winner"] == "blue" and v["phase"] == "over"


def test_wizwar_start_order_is_rolled(tmp_path: Path) -> None:
    orders = set()
    for seed in range(6):
        t = PackTable(tmp_path / f"d{seed}", seed=seed)
        try:
            setup(t, "wizwar", ["blue", "red", "green", "yellow"])
            orders.add(tuple(t.view()["players"]))
            assert t.view()["rolled"] and t.view()["current"] == t.view()["players"][0]
        finally:
            t.close()
    assert len(orders) > 1


# ------------------------------------------------------------------------------------------
# restart


def play_some(t: PackTable, game: str) -> None:
    if game == "siege":
        setup(t, "siege", ["blue", "red", "green"])
        for c in ("blue", "red", "green"):
            t.pack("pick", player(c))
        t.pack("token", token="barrier", op="take", n=3)
        t.svc.hardware_event(
            {"type": "dice", "rolls": [7], "used": 2, "dice_allowed": 1, "dice": [[3, 4]]}
        )
        t.svc.drain()
        t.pack("end_turn")
    elif game == "princess":
        setup(t, "princess", ["blue", "red"], overtake="free", track_values="20:-4")
        t.pack("declare", cards=[3, 4])
        t.pack("end_turn")
        t.pack("declare", steps=5)
        t.send({"command": "undo"})
        t.pack("declare", steps=6)
    else:
        setup(t, "wizwar", ["blue", "red", "green"])
        current = t.view()["current"]
        t.pack("damage", wizard=current, amount=4)
        t.pack("rest", wizard=current, turns=2)
        t.pack("obstacle", kind="wall")
        t.pack("obstacle_damage", id=1, amount=6)
        t.pack("move_card", value=5)


@pytest.mark.parametrize("game", ["siege", "princess", "wizwar"])
def test_reopening_the_journal_mid_game_loses_nothing(tmp_path: Path, game: str) -> None:
    t = PackTable(tmp_path / "data", seed=3)
    play_some(t, game)
    before = all_views(t)
    t.close()
    again = PackTable(tmp_path / "data", seed=99)  # another seed: nothing is drawn again
    try:
        assert again.svc.settings.game == game
        assert all_views(again) == before
        assert not isinstance(again.send({"command": "undo"}), CommandError)
    finally:
        again.close()


CHILD = """
import json, sys, time
from pathlib import Path
from tests.packs.table import PackTable
from tests.packs.test_pack_service import all_views, play_some
t = PackTable(Path(sys.argv[1]), seed=3)
play_some(t, sys.argv[2])
print(json.dumps(all_views(t)), flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("game", ["siege", "princess", "wizwar"])
def test_kill_9_mid_game_and_the_restart_continues_it(tmp_path: Path, game: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "data"), game],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            before = json.loads(proc.stdout.readline())
        finally:
            proc.send_signal(signal.SIGKILL)  # the service dies mid-game, nothing flushed
            proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    again = PackTable(tmp_path / "data", seed=42)
    try:
        assert all_views(again) == before
    finally:
        again.close()
