"""A restart locks nobody out: join tokens, the pages' epoch and versions, the log, the reports
and the dice display come back from the journal; the host can revoke and re-issue join links."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future

import pytest

from companion.service.core import CompanionService
from companion.service.game import GameSettings
from companion.service.inputs import CommandInput
from companion.sim.testing import sim_config
from companion.web import create_app
from companion.web.app import CSRF_COOKIE, CSRF_HEADER, HOST_COOKIE, PLAYER_COOKIE
from companion.web.service import Audience
from companion.web.validate import check_command

SETTINGS = GameSettings(players=3, colours=("blue", "yellow", "red"))


def started(cfg) -> CompanionService:
    svc = CompanionService(cfg)
    svc.start_game(SETTINGS, restore=True)
    return svc


def command(svc: CompanionService, cmd: dict, audience: Audience) -> object:
    """Carry out one command on the calling thread (no service thread in these tests)."""
    fut: Future = Future()
    svc.post(CommandInput(check_command(cmd), audience, fut))
    svc.drain()
    return fut.result(timeout=0)


def play_a_little(svc: CompanionService) -> None:
    svc.hardware_event({"type": "dice", "rolls": [2, 5], "used": 5, "dice_allowed": 2})
    svc.drain()
    command(svc, {"command": "report_spell", "spell": "piggyback"}, Audience.player("yellow"))


@pytest.fixture
def cfg(tmp_path):
    return sim_config(tmp_path / "data", players=3)


def test_a_restart_keeps_join_tokens_versions_log_reports_and_dice(cfg):
    svc = started(cfg)
    play_a_little(svc)
    for _ in range(300):  # more changes than one reserved block of versions
        svc.post_camera_status("a")
        svc.post_camera_status("b")
    svc.drain()
    host, players = svc.host_token, svc.player_tokens()
    public = svc.snapshot(Audience.public())
    seen_version, seen_log = public["version"], public["log"]
    svc.close()  # what a kill -9 leaves: nothing more is written at a clean stop

    again = started(cfg)
    snap = again.snapshot(Audience.public())
    assert again.host_token == host and again.player_tokens() == players
    assert snap["epoch"] == public["epoch"]
    assert snap["version"] > seen_version, "a page that saw the last version drops the new ones"
    assert snap["log"][: len(seen_log)] == seen_log
    assert snap["log"][-1] == "game restored: blue, yellow, red"
    assert not any(line.startswith("new game") for line in snap["log"][len(seen_log) :])
    assert snap["reports"] == public["reports"] and snap["reports"][0]["spell"] == "piggyback"
    assert snap["dice"] == public["dice"] == {"mode": 2, "rolls": [2, 5], "final": True, "value": 5}
    assert again.health()["journal"] == {"ok": True, "detail": "restored"}
    again.close()


def test_reports_made_long_before_a_restart_come_back(cfg):
    svc = started(cfg)
    play_a_little(svc)
    for i in range(250):  # more page records than a restart reads back
        svc.hardware_event({"type": "dice", "rolls": [1 + i % 6], "used": None, "dice_allowed": 1})
    svc.drain()
    reports = svc.snapshot(Audience.public())["reports"]
    svc.close()

    again = started(cfg)
    snap = again.snapshot(Audience.player("yellow"))
    assert snap["reports"] == reports and reports[0]["spell"] == "piggyback"
    again.close()


@pytest.fixture
def served(cfg) -> Iterator[tuple[list[CompanionService], object]]:
    """The service on a service thread behind the Flask app; ``restart()`` swaps in a fresh
    service restored from the same journal (the app's cookies stay with the client)."""
    live: list[CompanionService] = []
    threads: list[tuple[threading.Event, threading.Thread]] = []

    def start() -> object:
        svc = started(cfg)
        stop = threading.Event()
        t = threading.Thread(target=svc.run, args=(stop, 0.05), daemon=True)
        t.start()
        live.append(svc)
        threads.append((stop, t))
        app = create_app({"TESTING": True}, svc)
        return app.test_client()

    def restart() -> object:
        stop, t = threads[-1]
        stop.set()
        live[-1].stop()
        t.join(5)
        live[-1].close()
        return start()

    yield live, (start, restart)
    for (stop, t), svc in zip(threads, live, strict=True):
        stop.set()
        svc.stop()
        t.join(5)
        svc.close()


def post(client, who: str, body: dict):
    client.set_cookie(CSRF_COOKIE, "c" * 22)
    return client.post(f"/api/command?as={who}", json=body, headers={CSRF_HEADER: "c" * 22})


def test_phones_that_joined_keep_working_after_a_restart_and_the_host_revokes_links(served):
    live, (start, restart) = served
    start()
    svc = live[0]
    blue, red = svc.player_tokens()["blue"], svc.player_tokens()["red"]
    host = svc.host_token

    client = restart()
    client.set_cookie(PLAYER_COOKIE, blue)
    assert client.get("/api/state?as=player").status_code == 200, "the blue phone is locked out"
    client.set_cookie(HOST_COOKIE, host)
    assert client.get("/api/state?as=host").status_code == 200, "the host is locked out"

    # the host revokes blue's link: blue's phone is told why, red's still works
    assert post(client, "host", {"command": "reissue_tokens", "who": "blue"}).status_code == 200
    svc = live[-1]
    new_blue = svc.player_tokens()["blue"]
    assert new_blue != blue and svc.player_tokens()["red"] == red
    client.set_cookie(PLAYER_COOKIE, blue)
    refused = client.get("/api/state?as=player")
    assert refused.status_code == 401 and "no longer works" in refused.json["error"]
    client.set_cookie(PLAYER_COOKIE, red)
    assert client.get("/api/state?as=player").status_code == 200
    assert client.get(f"/join/{new_blue}").status_code == 303

    # the re-issued links survive a restart too, and the revoked one stays revoked
    client = restart()
    client.set_cookie(HOST_COOKIE, host)
    client.set_cookie(PLAYER_COOKIE, new_blue)
    assert client.get("/api/state?as=player").status_code == 200
    client.set_cookie(PLAYER_COOKIE, blue)
    assert "no longer works" in client.get("/api/state?as=player").json["error"]

    # all players at once, then the host's own link (the answer leads the host page on)
    assert post(client, "host", {"command": "reissue_tokens", "who": "players"}).status_code == 200
    client.set_cookie(PLAYER_COOKIE, red)
    assert client.get("/api/state?as=player").status_code == 401
    answer = post(client, "host", {"command": "reissue_tokens", "who": "host"})
    link = answer.json["host_link"]
    assert link == f"/join/{live[-1].host_token}" and live[-1].host_token != host
    assert client.get("/api/state?as=host").status_code == 401
    assert client.get(link).status_code == 303
    assert client.get("/api/state?as=host").status_code == 200
    # a colour that has no seat is refused, naming the field
    bad = post(client, "host", {"command": "reissue_tokens", "who": "green"})
    assert bad.status_code == 400 and "reissue_tokens.who" in bad.json["error"]
    assert post(client, "player", {"command": "reissue_tokens", "who": "players"}).status_code in (
        401,
        403,
    )


def test_what_the_colours_learnt_is_in_the_log_and_survives_a_restart(cfg):
    """A line from outside the game (the colour teacher's) reaches every page's log at once
    and is kept in the journal."""
    svc = started(cfg)
    line = "colours learnt from the board (moved, in spreads): red wizards 1.2"
    svc.post_note(line)
    svc.drain()
    assert svc.snapshot(Audience.public())["log"][-1] == line
    svc.close()
    again = started(cfg)
    assert line in again.snapshot(Audience.public())["log"]
