"""No page, API answer or event-stream message shows a trapped wizard its requester may not see.

Positions with trapped wizards of all four colours (tests.web.conftest.trapped_position), each
memory-aid mode, and every requester: each player's cookie, no cookie, the host's cookie.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion import rules
from companion.sim.faketable import FakeTableService
from companion.web import create_app
from companion.web.service import Audience

from .conftest import (
    TEST_CONFIG,
    command,
    hidden_ids,
    join,
    played_position,
    trapped_position,
)

COLOURS = ["blue", "yellow", "red", "green"]
REQUESTERS = ["public", "host", *COLOURS]
SIX = ["blue", "yellow", "red", "green", "orange", "purple"]

GETS = [
    "/",
    "/me",
    "/host",
    "/api/state",
    "/api/state?as=public",
    "/api/state?as=player",
    "/api/state?as=host",
    "/api/qr",
    "/healthz",
    "/camera.jpg",
    "/api/layout?length=16",
]


def may_see(requester: str, wizard_colour: str, aid: str) -> bool:
    """The rule the pages promise: ``all`` shows everyone's trapped wizards to everyone; ``own``
    shows a player their own; the table and the host (no seat) see none otherwise."""
    if aid == "all":
        return True
    return aid == "own" and requester == wizard_colour


def mentions(body: str, wizard_id: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(wizard_id)}(?![\w-])", body) is not None


@pytest.fixture(params=["off", "own", "all"])
def table(request: pytest.FixtureRequest) -> Iterator[tuple[FakeTableService, Flask, str]]:
    svc = FakeTableService(seed=9)
    svc.load(trapped_position(), memory_aid=request.param)
    yield svc, create_app(TEST_CONFIG, svc), request.param
    svc.close()


@pytest.fixture(scope="module")
def six_player_position() -> rules.GameState:
    state = played_position()
    colours = set(hidden_ids(state).values())
    assert len(colours) >= 3, colours  # trapped wizards of several colours
    return state


@pytest.mark.parametrize("aid", ["off", "own", "all"])
@pytest.mark.parametrize("requester", ["public", "host", *SIX])
def test_a_played_six_player_game_leaks_nothing(
    six_player_position: rules.GameState, aid: str, requester: str
) -> None:
    svc = FakeTableService(seed=9)
    svc.load(six_player_position, memory_aid=aid)
    app = create_app(TEST_CONFIG, svc)
    hidden = hidden_ids(six_player_position)
    forbidden = [w for w, colour in hidden.items() if not may_see(requester, colour, aid)]
    try:
        for where, body in bodies(app, svc, requester):
            for wizard in forbidden:
                assert not mentions(body, wizard), f"{where} shows {wizard} to {requester}"
    finally:
        svc.close()


def client_for(app: Flask, svc: FakeTableService, requester: str) -> FlaskClient:
    c = app.test_client()
    c.get("/")  # CSRF cookie, as a browser opening the table page
    if requester == "host":
        join(c, svc.host_token)
    elif requester != "public":
        join(c, svc.player_tokens()[requester])
    return c


def event_stream(c: FlaskClient, svc: FakeTableService, as_: str) -> str:
    """The first event-stream message plus the messages sent for two changes made meanwhile."""
    resp = c.get(f"/events?as={as_}")
    if resp.status_code != 200:
        return resp.get_data(as_text=True)
    chunks = iter(resp.response)
    out = [next(chunks)]
    svc.submit({"command": "roll"}, Audience.host())
    out.append(next(chunks))
    svc.ask(
        "Which tower moved onto space 2?", [("a", "from space 3"), ("b", "from space 1")], to="blue"
    )
    out.append(next(chunks))
    resp.close()
    return "".join(c.decode() if isinstance(c, bytes) else c for c in out)


def bodies(app: Flask, svc: FakeTableService, requester: str) -> list[tuple[str, str]]:
    c = client_for(app, svc, requester)
    seen = []
    for path in GETS:
        resp = c.get(path)
        seen.append((path, resp.get_data(as_text=True)))
    as_ = {"public": "public", "host": "host"}.get(requester, "player")
    seen.append((f"/events?as={as_}", event_stream(c, svc, as_)))
    for other in ("public", "player", "host"):
        if other != as_:
            resp = c.get(f"/events?as={other}")
            seen.append((f"/events?as={other}", resp.get_data(as_text=True)))
    # command answers too (a spell report, an answer, a refused host command)
    for body in (
        {"command": "report_spell", "spell": "advance_wizard"},
        {"command": "answer", "question": "q1", "option": "a"},
        {"command": "roll"},
    ):
        for as_cmd in ("player", "host"):
            resp = command(c, as_cmd, body)
            seen.append((f"POST {body['command']} as {as_cmd}", resp.get_data(as_text=True)))
    return seen


@pytest.mark.parametrize("requester", REQUESTERS)
def test_no_response_shows_a_trapped_wizard_the_requester_may_not_see(
    table: tuple[FakeTableService, Flask, str], requester: str
) -> None:
    svc, app, aid = table
    game = svc.game()
    assert game is not None
    hidden = hidden_ids(game)
    assert {c for c in hidden.values()} == set(COLOURS)  # every colour has a trapped wizard
    forbidden = [w for w, colour in hidden.items() if not may_see(requester, colour, aid)]
    allowed = [w for w, colour in hidden.items() if may_see(requester, colour, aid)]
    everything = bodies(app, svc, requester)
    for where, body in everything:
        for wizard in forbidden:
            assert not mentions(body, wizard), f"{where} shows {wizard} to {requester} ({aid})"
    # the memory aid really works: what may be seen is in this requester's state
    own_state = next(body for where, body in everything if where.startswith("/events?as="))
    for wizard in allowed:
        assert mentions(own_state, wizard), f"{requester} should see {wizard} with {aid}"


@pytest.mark.parametrize("requester", ["public", *COLOURS])
def test_no_join_token_reaches_anyone_but_the_host(
    table: tuple[FakeTableService, Flask, str], requester: str
) -> None:
    svc, app, _aid = table
    secrets_ = [svc.host_token, *svc.player_tokens().values()]
    for where, body in bodies(app, svc, requester):
        for token in secrets_:
            assert token not in body, f"{where} leaks a join token to {requester}"


def test_trapped_wizards_show_their_tier_on_the_owners_state(
    table: tuple[FakeTableService, Flask, str],
) -> None:
    svc, app, aid = table
    c = client_for(app, svc, "blue")
    state = c.get("/api/state?as=player").get_json()["state"]
    if aid == "off":
        assert "blue-1" not in state["wizards"]
        assert "hidden" not in state  # no count per space: nobody sees under a tower
        assert sum(state["trapped"].values()) == 6  # per colour, as anyone can count
    else:
        assert state["wizards"]["blue-1"] == {"space": 2, "tier": 1}
        assert state["wizards"]["blue-3"] == {"space": 4, "tier": 1}


def test_a_question_for_blue_shows_its_options_on_blues_and_the_hosts_page_only() -> None:
    svc = FakeTableService(seed=9)
    svc.load(trapped_position(), memory_aid="own")
    app = create_app(TEST_CONFIG, svc)
    try:
        svc.ask("Which tower moved onto space 2?", [("a", "from 3"), ("b", "from 1")], to="blue")
        seen = {}
        for requester in REQUESTERS:
            c = client_for(app, svc, requester)
            as_ = {"public": "public", "host": "host"}.get(requester, "player")
            seen[requester] = c.get(f"/api/state?as={as_}").get_json()["question"]
        for requester, q in seen.items():
            assert q["to"] == "blue" and q["text"] == "Which tower moved onto space 2?"
            labels = [o["label"] for o in q["options"]]
            if requester in ("blue", "host"):
                assert labels == ["from 3", "from 1"], requester
            else:
                assert labels == [] and q["for_other"], f"{requester} sees blue's options"
    finally:
        svc.close()
