"""Fixtures for the phone pages: a fake table service, the app, signed-in clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion import rules
from companion.sim.faketable import FakeTableService
from companion.web import create_app
from companion.web.app import CSRF_COOKIE, CSRF_HEADER

TEST_CONFIG = {"TESTING": True, "SSE_HEARTBEAT_S": 0.05, "SSE_MAX_S": 0.15}


def trapped_position(players: int = 4) -> rules.GameState:
    """A 4-player position with trapped wizards of every colour.

    From the setup (R-SETUP-6: space 2 holds blue, yellow, red; space 4 red, green, blue) the
    tower of space 3 was put onto space 2 and the tower of space 5 onto space 4, so blue-1,
    yellow-1, red-1 are trapped on space 2 (tier 1) and red-2, green-2, blue-3 on space 4.
    """
    state = rules.setup(rules.Config(player_count=players), seed=11)
    data = rules.dump_state(state)
    stacks = data["stacks"]
    stacks["2"] = stacks["2"] + stacks.pop("3")
    stacks["4"] = stacks["4"] + stacks.pop("5")
    for pos in data["wizards"].values():
        if isinstance(pos, dict) and pos["space"] in (3, 5):
            pos["space"] -= 1
            pos["tier"] = 2
    return rules.load_state(data)


def played_position(players: int = 6, seed: int = 3, actions: int = 150) -> rules.GameState:
    """A position reached by seeded bots (trapped wizards of several colours, some wizards in
    the castle, potions spent)."""
    from companion.sim.bots import RandomBot

    bot = RandomBot(seed)
    state = rules.setup(rules.Config(player_count=players), seed=seed)
    for _ in range(actions):
        if state.game.over:
            break
        state, _events = rules.apply(state, bot.choose(state))
    return state


def hidden_ids(state: rules.GameState) -> dict[str, str]:
    """Trapped wizard id -> its colour."""
    out = {}
    for space in state.spaces():
        for wid, _tier in state.hidden_wizards(space):
            out[wid] = wid.rsplit("-", 1)[0]
    return out


@pytest.fixture
def service() -> Iterator[FakeTableService]:
    svc = FakeTableService(seed=5, setup={"players": 3})
    yield svc
    svc.close()


@pytest.fixture
def app(service: FakeTableService) -> Flask:
    return create_app(TEST_CONFIG, service)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def join(client: FlaskClient, token: str) -> None:
    resp = client.get(f"/join/{token}")
    assert resp.status_code == 303, resp.data


def csrf(client: FlaskClient) -> str:
    """The double-submit token (fetches a page first when the cookie is not set yet)."""
    cookie = client.get_cookie(CSRF_COOKIE)
    if cookie is None:
        client.get("/")
        cookie = client.get_cookie(CSRF_COOKIE)
    assert cookie is not None
    return cookie.value


def command(client: FlaskClient, as_: str, body: Any, **headers: str) -> Any:
    """POST a command the way the pages do (JSON + CSRF header)."""
    hdrs = {CSRF_HEADER: csrf(client), **headers}
    return client.post(f"/api/command?as={as_}", json=body, headers=hdrs)


@pytest.fixture
def host(app: Flask, service: FakeTableService) -> FlaskClient:
    c = app.test_client()
    join(c, service.host_token)
    return c


def player_client(app: Flask, service: FakeTableService, colour: str) -> FlaskClient:
    c = app.test_client()
    join(c, service.player_tokens()[colour])
    return c
