"""Commands from the host's and players' pages: CSRF, tokens, bad input, and what they do."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.sim.faketable import FakeTableService
from companion.web.app import CSRF_HEADER
from companion.web.service import Audience

from .conftest import command, csrf, player_client


def everything(service: FakeTableService) -> str:
    """All that any page could show, to check that a refused command changed nothing."""
    snaps = [service.snapshot(Audience.host()), service.snapshot(Audience.public())]
    snaps += [service.snapshot(Audience.player(c)) for c in service.player_tokens()]
    return json.dumps([service.version, snaps, service.answers], sort_keys=True)


# ------------------------------------------------------------------ CSRF and tokens


def test_host_command_works_with_token_and_csrf(
    host: FlaskClient, service: FakeTableService
) -> None:
    before = service.version
    resp = command(host, "host", {"command": "roll"})
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["ok"] is True and service.version == before + 1


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, "CSRF token missing"),
        ({CSRF_HEADER: "forged"}, "does not match"),
        ({"Sec-Fetch-Site": "cross-site"}, "cross-site"),
        ({"Origin": "http://evil.example"}, "another origin"),
    ],
)
def test_csrf_refusals_change_nothing(
    host: FlaskClient, service: FakeTableService, headers: dict[str, str], reason: str
) -> None:
    csrf(host)
    before = everything(service)
    hdrs = dict(headers)
    if "CSRF" not in reason:
        hdrs.setdefault(CSRF_HEADER, csrf(host))
    resp = host.post("/api/command?as=host", json={"command": "roll"}, headers=hdrs)
    assert resp.status_code == 403
    assert reason in resp.get_json()["error"]
    assert everything(service) == before


def test_same_origin_browser_headers_are_accepted(host: FlaskClient) -> None:
    resp = command(
        host,
        "host",
        {"command": "roll"},
        Origin="http://localhost",
        **{"Sec-Fetch-Site": "same-origin"},
    )
    assert resp.status_code == 200


def test_host_commands_need_the_host_token(
    app: Flask, client: FlaskClient, service: FakeTableService
) -> None:
    before = everything(service)
    assert command(client, "host", {"command": "undo"}).status_code == 401
    assert command(client, "public", {"command": "roll"}).status_code == 403
    assert command(client, "player", {"command": "report_spell"}).status_code == 401
    blue = player_client(app, service, "blue")
    for name in ("setup", "undo", "roll", "end_turn", "correct_space", "calibrate_reset"):
        resp = command(blue, "player", {"command": name})
        assert resp.status_code == 403, name
        assert "host only" in resp.get_json()["error"]
        # a player's cookie does not make the host's 'as' work either
        assert command(blue, "host", {"command": name}).status_code == 401
    assert everything(service) == before


def test_a_stale_or_foreign_cookie_is_refused(app: Flask, service: FakeTableService) -> None:
    c = app.test_client()
    c.set_cookie("wt_player", "made-up-token")
    c.set_cookie("wt_host", "made-up-token")
    assert c.get("/api/state?as=player").status_code == 401
    assert c.get("/api/state?as=host").status_code == 401
    c.set_cookie("wt_host", "ünïcödé")
    assert c.get("/api/state?as=host").status_code == 401


# ------------------------------------------------------------------ malformed input


MALFORMED: list[tuple[Any, int, str]] = [
    ([1, 2], 400, "JSON object"),
    ({"command": 7}, 400, "not a command"),
    ({"command": "explode"}, 400, "not a command"),
    ({}, 400, "not a command"),
    ({"command": "setup", "players": 9}, 400, "setup.players"),
    ({"command": "setup", "players": "three"}, 400, "setup.players"),
    ({"command": "setup", "players": 2, "colours": ["blue", "red"]}, 400, "R-COMP-2"),
    ({"command": "setup", "players": 3, "colours": ["blue", "blue", "red"]}, 400, "twice"),
    ({"command": "setup", "players": 3, "teams": True}, 400, "team"),
    ({"command": "setup", "players": 3, "memory_aid": "peek"}, 400, "memory_aid"),
    ({"command": "setup", "players": 3, "options": {"cheat": True}}, 400, "unknown option"),
    ({"command": "setup", "players": 3, "options": {"swap_any_distance": 1}}, 400, "true or false"),
    ({"command": "setup", "players": 3, "modules": ["lava"]}, 400, "lava"),
    ({"command": "setup", "players": 3, "spells": ["fireball"]}, 400, "fireball"),
    ({"command": "setup", "players": 3, "surprise": 1}, 400, "unknown field"),
    (
        {"command": "correct_space", "space": 40, "towers": 1, "top": "crest"},
        400,
        "not on the track",
    ),
    (
        {"command": "correct_space", "space": 99, "towers": 1, "top": "crest"},
        400,
        "correct_space.space",
    ),
    ({"command": "correct_space", "space": "7", "towers": 1, "top": "crest"}, 400, "space"),
    ({"command": "correct_space", "space": 7, "towers": 1, "top": "lava"}, 400, "top"),
    ({"command": "correct_space", "space": 7, "towers": -1, "top": "crest"}, 400, "towers"),
    (
        {
            "command": "correct_space",
            "space": 7,
            "towers": 1,
            "top": "crest",
            "wizards": {"pink": 1},
        },
        400,
        "pink",
    ),
    (
        {
            "command": "correct_space",
            "space": 7,
            "towers": 1,
            "top": "crest",
            "wizards": {"blue": 9},
        },
        400,
        "wizards",
    ),
    ({"command": "dice_mode", "dice": 4}, 400, "R-CARD-4"),
    ({"command": "dice_mode", "dice": True}, 400, "R-CARD-4"),
    ({"command": "keep"}, 409, "no roll"),
    ({"command": "answer", "question": "q1", "option": "a"}, 409, "no open question"),
    ({"command": "report_spell", "spell": "fireball"}, 400, "report_spell.spell: 'fireball'"),
    ({"command": "report_spell", "spell": "summon_raven"}, 400, "not on display"),
    ({"command": "report_page_card"}, 409, "witch"),
]


@pytest.mark.parametrize(("body", "status", "reason"), MALFORMED)
def test_malformed_commands_get_a_clear_4xx_and_change_nothing(
    host: FlaskClient, service: FakeTableService, body: Any, status: int, reason: str
) -> None:
    before = everything(service)
    resp = command(host, "host", body)
    assert resp.status_code == status, resp.get_json()
    assert reason in resp.get_json()["error"]
    assert everything(service) == before


def test_not_json_and_oversized_bodies_are_refused(
    host: FlaskClient, service: FakeTableService
) -> None:
    before = everything(service)
    token = csrf(host)
    resp = host.post(
        "/api/command?as=host", data="roll", headers={CSRF_HEADER: token}, content_type="text/plain"
    )
    assert resp.status_code == 415
    resp = host.post(
        "/api/command?as=host",
        data="{not json",
        headers={CSRF_HEADER: token},
        content_type="application/json",
    )
    assert resp.status_code == 400
    big = {"command": "report_spell", "spell": "x" * 40_000}
    resp = host.post("/api/command?as=host", json=big, headers={CSRF_HEADER: token})
    assert resp.status_code == 413 and "larger than" in resp.get_json()["error"]
    assert everything(service) == before


def test_illegal_end_turn_is_409_with_the_rule(
    host: FlaskClient, service: FakeTableService
) -> None:
    # the start player has played no card yet: the turn cannot end (R-TURN-2)
    before = everything(service)
    resp = command(host, "host", {"command": "end_turn"})
    assert resp.status_code == 409
    assert "R-" in resp.get_json()["error"]
    assert everything(service) == before


# ------------------------------------------------------------------ what commands do


def test_setup_deals_a_new_game_with_the_chosen_colours(
    host: FlaskClient, service: FakeTableService
) -> None:
    resp = command(
        host,
        "host",
        {
            "command": "setup",
            "players": 2,
            "colours": ["yellow", "blue"],
            "memory_aid": "off",
            "variant": "master",
            "options": {"master_spell_count": 4},
        },
    )
    assert resp.status_code == 200, resp.get_json()
    snap = host.get("/api/state?as=host").get_json()
    assert [p["colour"] for p in snap["state"]["players"]] == ["yellow", "blue"]
    assert snap["state"]["turn"]["player"] == "yellow"
    assert snap["memory_aid"] == "off" and snap["state"]["config"]["variant"] == "master"
    assert len(snap["state"]["config"]["spells"]) == 4
    assert set(service.player_tokens()) == {"yellow", "blue"}


def test_dice_follow_the_card(host: FlaskClient) -> None:
    assert command(host, "host", {"command": "dice_mode", "dice": 2}).status_code == 200
    assert command(host, "host", {"command": "roll"}).status_code == 200
    d = host.get("/api/state").get_json()["dice"]
    assert d["mode"] == 2 and len(d["rolls"]) == 1 and d["final"] is False
    assert 1 <= d["value"] <= 6
    assert command(host, "host", {"command": "roll"}).status_code == 200
    d = host.get("/api/state").get_json()["dice"]
    assert len(d["rolls"]) == 2 and d["final"] is True and d["value"] == d["rolls"][-1]
    # the next roll starts a new die card (one die by default)
    assert command(host, "host", {"command": "roll"}).status_code == 200
    d = host.get("/api/state").get_json()["dice"]
    assert d["rolls"] == [d["value"]] and d["final"] is True
    # keep ends a 3-dice card early
    command(host, "host", {"command": "dice_mode", "dice": 3})
    command(host, "host", {"command": "roll"})
    assert command(host, "host", {"command": "keep"}).status_code == 200
    d = host.get("/api/state").get_json()["dice"]
    assert d["final"] is True and len(d["rolls"]) == 1
    panel = host.get("/api/state").get_json()["panel"]
    assert sum(panel["pips"].values()) == d["value"]  # the LED die shows the kept face
    assert [s["on"] for s in panel["seats"]] == [True, False, False]  # start player's seat LED


def test_undo_restores_the_previous_board(host: FlaskClient, service: FakeTableService) -> None:
    before = host.get("/api/state").get_json()["state"]
    service.step()
    moved = host.get("/api/state").get_json()["state"]
    assert moved != before
    assert command(host, "host", {"command": "undo"}).status_code == 200
    assert host.get("/api/state").get_json()["state"] == before


def test_a_player_answers_only_their_own_question(app: Flask, service: FakeTableService) -> None:
    chosen: list[str] = []
    qid = service.ask(
        "Which tower did you move?",
        [("a", "space 4"), ("b", "space 6")],
        to="red",
        on_answer=chosen.append,
    )
    blue = player_client(app, service, "blue")
    red = player_client(app, service, "red")
    resp = command(blue, "player", {"command": "answer", "question": qid, "option": "a"})
    assert resp.status_code == 403 and "another player" in resp.get_json()["error"]
    resp = command(red, "player", {"command": "answer", "question": qid, "option": "zz"})
    assert resp.status_code == 400
    assert chosen == []
    resp = command(red, "player", {"command": "answer", "question": qid, "option": "b"})
    assert resp.status_code == 200
    assert chosen == ["b"] and service.answers == [(qid, "b", "red")]
    assert red.get("/api/state?as=player").get_json()["question"] is None
    # answering twice is refused
    resp = command(red, "player", {"command": "answer", "question": qid, "option": "a"})
    assert resp.status_code == 409


def test_players_report_spells(app: Flask, service: FakeTableService) -> None:
    yellow = player_client(app, service, "yellow")
    resp = command(yellow, "player", {"command": "report_spell", "spell": "advance_tower"})
    assert resp.status_code == 200
    snap = yellow.get("/api/state?as=player").get_json()
    assert snap["reports"][-1] == {"player": "yellow", "spell": "advance_tower"}
    assert "yellow reports casting advance tower" in snap["log"]


def test_correction_is_recorded_for_the_tracker(host: FlaskClient) -> None:
    resp = command(
        host,
        "host",
        {
            "command": "correct_space",
            "space": 7,
            "towers": 2,
            "top": "crest",
            "wizards": {"red": 1},
            "castle": False,
        },
    )
    assert resp.status_code == 200
    fix = host.get("/api/state?as=host").get_json()["host"]["corrections"]["7"]
    assert fix["towers"] == 2 and fix["top"] == "crest" and fix["wizards"] == {"red": 1}


def test_calibration_commands_update_the_status(host: FlaskClient) -> None:
    assert command(host, "host", {"command": "calibrate_board"}).status_code == 200
    cal = host.get("/api/state?as=host").get_json()["host"]["calibration"]
    assert "found" in cal["board"]
    assert command(host, "host", {"command": "calibrate_reset"}).status_code == 200
    cal = host.get("/api/state?as=host").get_json()["host"]["calibration"]
    assert cal["board"] == "not calibrated"
