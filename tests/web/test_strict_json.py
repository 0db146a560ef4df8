"""Strict JSON in and out: one player's bad request must never freeze every phone.

A snapshot holding ``NaN`` cannot be parsed by any browser, so every page would silently stop
updating; unchecked reports would grow every snapshot; a deeply nested body must get a JSON
answer, never an HTML error page.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.service.core import CompanionService
from companion.service.heartbeat import Heartbeats
from companion.sim.faketable import FakeTableService
from companion.sim.testing import sim_config
from companion.web.app import CSRF_HEADER
from companion.web.service import Audience, CommandError
from companion.web.validate import COMMAND_FIELDS, check_command, parse_json_body

from .conftest import csrf, player_client
from .test_commands import everything


def refuse(constant: str) -> None:
    pytest.fail(f"{constant} in a snapshot")


def post_raw(client: FlaskClient, as_: str, raw: str | bytes) -> tuple[int, dict[str, object]]:
    resp = client.post(
        f"/api/command?as={as_}",
        data=raw,
        headers={CSRF_HEADER: csrf(client)},
        content_type="application/json",
    )
    assert resp.mimetype == "application/json", resp.get_data(as_text=True)[:200]
    answer = resp.get_json()
    assert isinstance(answer, dict)
    return resp.status_code, answer


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinity_in_a_report_are_refused(
    app: Flask, service: FakeTableService, constant: str
) -> None:
    red = player_client(app, service, "red")
    before = everything(service)
    version = service.version
    raw = f'{{"command": "report_spell", "spell": "advance_tower", "player": {constant}}}'
    status, answer = post_raw(red, "player", raw)
    assert status == 400 and answer["ok"] is False
    assert "NaN and Infinity" in str(answer["error"])
    assert service.version == version and everything(service) == before
    # every page still parses what it gets
    for as_ in ("public", "player"):
        text = red.get(f"/api/state?as={as_}").get_data(as_text=True)
        json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"command": "report_spell", "spell": "fireball"}, "report_spell.spell: 'fireball'"),
        ({"command": "report_spell", "spell": "advance_tower", "note": "x"}, "report_spell.note"),
        ({"command": "report_spell", "spell": "advance_tower" * 1000}, "report_spell.spell"),
        ({"command": "report_spell"}, "report_spell.spell: missing"),
        ({"command": "report_spell", "spell": 7}, "report_spell.spell: expected a string"),
        ({"command": "report_page_card", "extra": [1] * 50}, "report_page_card.extra"),
        ({"command": "answer", "question": "q1" * 100, "option": "a"}, "answer.question"),
        ({"command": "answer", "question": "q1", "option": True}, "answer.option"),
        ({"command": "setup", "teams": "yes"}, "setup.teams: expected true or false"),
        ({"command": "setup", "options": {"solo_card_limit": -5}}, "setup.options.solo_card"),
        ({"command": "setup", "colours": "blue"}, "setup.colours"),
        ({"command": "dice_mode"}, "dice_mode.dice: missing"),
        (
            {"command": "correct_space", "space": 7, "towers": 1, "top": "crest", "castle": 1},
            "castle",
        ),
    ],
)
def test_every_field_of_a_command_is_checked_and_named(
    app: Flask, service: FakeTableService, host: FlaskClient, body: object, reason: str
) -> None:
    before = everything(service)
    status, answer = post_raw(host, "host", json.dumps(body))
    assert status == 400, answer
    assert reason in str(answer["error"])
    assert everything(service) == before


def test_twenty_bad_reports_do_not_grow_the_snapshot(app: Flask, service: FakeTableService) -> None:
    red = player_client(app, service, "red")
    size = len(red.get("/api/state?as=public").data)
    for _ in range(20):
        body = {"command": "report_spell", "spell": "advance_tower", "note": "x" * 15_000}
        status, _answer = post_raw(red, "player", json.dumps(body))
        assert status in (400, 413)
    assert len(red.get("/api/state?as=public").data) == size


def test_deep_and_huge_bodies_get_a_json_error(
    host: FlaskClient, service: FakeTableService
) -> None:
    before = everything(service)
    status, answer = post_raw(host, "host", "[" * 3000 + "]" * 3000)
    assert status == 400 and "nested deeper" in str(answer["error"])
    status, answer = post_raw(host, "host", '{"command": "roll", "x": ' + "9" * 5000 + "}")
    assert status == 400 and "JSON" in str(answer["error"])
    status, answer = post_raw(host, "host", b'{"command": "roll"}' + b" " * 70_000)
    assert status == 413 and "larger than" in str(answer["error"])
    status, answer = post_raw(host, "host", b'{"command": "\xff"}')
    assert status == 400 and "UTF-8" in str(answer["error"])
    assert everything(service) == before


def test_json_out_refuses_nan(app: Flask, service: FakeTableService) -> None:
    with pytest.raises(ValueError):
        app.json.dumps({"x": float("nan")})
    service._reports.append({"player": "red", "spell": float("nan")})  # a bad entry got in
    resp = app.test_client().get("/api/state?as=public")
    assert resp.status_code == 500 and resp.mimetype == "application/json"
    assert b"NaN" not in resp.data


def test_the_schema_accepts_what_the_pages_send() -> None:
    sent = [
        {"command": "report_spell", "spell": "advance_wizard"},
        {"command": "report_page_card"},
        {"command": "answer", "question": "q7", "option": "a"},
        {"command": "dice_mode", "dice": 3},
        {
            "command": "correct_space",
            "space": 9,
            "towers": 2,
            "top": "crest",
            "wizards": {"blue": 1, "red": 2},
            "castle": False,
        },
        {
            "command": "setup",
            "players": 4,
            "colours": ["blue", "red", "green", "yellow"],
            "variant": "base",
            "teams": True,
            "modules": ["witch"],
            "memory_aid": "own",
            "options": {"swap_any_distance": False, "team_exchanges_per_turn": None},
            "spells": None,
        },
    ]
    sent += [
        {"command": name}
        for name, fields in COMMAND_FIELDS.items()
        if not any(f.required for f in fields.values())
    ]
    for body in sent:
        assert check_command(body) == body
    assert parse_json_body(b'{"a": [1.5, -2]}') == {"a": [1.5, -2]}


@pytest.fixture
def running(tmp_path: Path) -> Iterator[CompanionService]:
    svc = CompanionService(sim_config(tmp_path / "data"), heartbeats=Heartbeats(60.0))
    svc.start_game()
    stop = threading.Event()
    loop = threading.Thread(target=svc.run, args=(stop, 0.05), daemon=True)
    loop.start()
    yield svc
    stop.set()
    svc.stop()
    loop.join(10)
    svc.close()


def test_the_running_companion_refuses_a_report_with_nan(running: CompanionService) -> None:
    colour = running.settings.colours[0]
    version = running.version
    with pytest.raises(CommandError, match="report_spell.note: unknown field"):
        running.submit(
            {"command": "report_spell", "spell": "advance_tower", "note": float("nan")},
            Audience.player(colour),
        )
    with pytest.raises(CommandError, match="report_spell.spell"):
        running.submit({"command": "report_spell", "spell": "fireball"}, Audience.player(colour))
    assert running.version == version
    running.submit({"command": "report_spell", "spell": "advance_tower"}, Audience.player(colour))
    snap = running.snapshot(Audience.public())
    assert snap["reports"][-1] == {"spell": "advance_tower", "kind": "report_spell", "by": colour}
    json.dumps(snap, allow_nan=False)
