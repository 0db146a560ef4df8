"""Every route answers as a phone expects, with the security headers on every answer."""

from __future__ import annotations

import json

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.sim.faketable import FakeTableService
from companion.web import create_app
from companion.web.app import CSP, CSRF_COOKIE, HOST_COOKIE, PLAYER_COOKIE

from .conftest import TEST_CONFIG, join, player_client

PUBLIC_GETS = [
    ("/", "text/html"),
    ("/me", "text/html"),
    ("/host", "text/html"),
    ("/api/state", "application/json"),
    ("/api/state?as=public", "application/json"),
    ("/events", "text/event-stream"),
    ("/api/layout?length=16", "application/json"),
    ("/api/setup-choices", "application/json"),
    ("/api/layout?length=18&special=9:fountain,18:web", "application/json"),
    ("/healthz", "application/json"),
    ("/static/style.css", "text/css"),
    ("/static/common.js", "text/javascript"),
    ("/static/table.js", "text/javascript"),
    ("/static/me.js", "text/javascript"),
    ("/static/host.js", "text/javascript"),
]


@pytest.mark.parametrize(("path", "mimetype"), PUBLIC_GETS)
def test_public_routes_answer_with_security_headers(
    client: FlaskClient, path: str, mimetype: str
) -> None:
    resp = client.get(path)
    resp.close()  # static files are streamed from disk
    assert resp.status_code == 200
    assert resp.mimetype == mimetype
    assert resp.headers["Content-Security-Policy"] == CSP
    assert "default-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert resp.headers["Referrer-Policy"] == "no-referrer"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(("path", "script"), [("/", "table"), ("/me", "me"), ("/host", "host")])
def test_pages_have_no_inline_script_or_style_and_no_cdn(
    client: FlaskClient, path: str, script: str
) -> None:
    html = client.get(path).get_data(as_text=True)
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</body>\n</html>")
    assert f'<body data-page="{script}">' in html and "$" not in html.split("<body", 1)[0]
    assert f'<script src="/static/{script}.js" defer></script>' in html
    assert "<style" not in html and " style=" not in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html
    for line in html.splitlines():
        if "<script" in line:
            assert 'src="/static/' in line and "></script>" in line


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/state?as=host", 401),
        ("/api/state?as=player", 401),
        ("/api/state?as=admin", 400),
        ("/events?as=host", 401),
        ("/events?as=player", 401),
        ("/api/qr", 401),
        ("/camera.jpg", 401),
        ("/nowhere", 404),
        ("/join/not-a-token", 404),
        ("/api/layout?length=3", 400),
        ("/api/layout?length=x", 400),
        ("/api/layout?length=16&special=99:fountain", 400),
        ("/api/layout?length=16&special=4:lava", 400),
    ],
)
def test_refusals_are_json_with_a_reason(client: FlaskClient, path: str, status: int) -> None:
    resp = client.get(path)
    assert resp.status_code == status
    if path.startswith("/join/"):
        assert b"not valid" in resp.data
    else:
        body = resp.get_json()
        assert body["ok"] is False and body["error"]
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_wrong_method_is_405(client: FlaskClient) -> None:
    resp = client.get("/api/command")
    assert resp.status_code == 405
    assert "GET" in resp.get_json()["error"]


def test_join_link_sets_an_httponly_strict_cookie_and_redirects(
    client: FlaskClient, service: FakeTableService
) -> None:
    token = service.player_tokens()["blue"]
    resp = client.get(f"/join/{token}")
    assert resp.status_code == 303 and resp.headers["Location"] == "/me"
    cookies = resp.headers.getlist("Set-Cookie")
    player = next(c for c in cookies if c.startswith(PLAYER_COOKIE + "="))
    assert "HttpOnly" in player and "SameSite=Strict" in player and "Path=/" in player
    me = client.get("/api/state?as=player").get_json()
    assert me["audience"] == {"role": "player", "colour": "blue"}
    # the CSRF cookie is readable by the page's script but Strict as well
    csrf = next(c for c in cookies if c.startswith(CSRF_COOKIE + "="))
    assert "HttpOnly" not in csrf and "SameSite=Strict" in csrf


def test_host_link_opens_the_host_page(client: FlaskClient, service: FakeTableService) -> None:
    resp = client.get(f"/join/{service.host_token}")
    assert resp.status_code == 303 and resp.headers["Location"] == "/host"
    assert any(c.startswith(HOST_COOKIE + "=") for c in resp.headers.getlist("Set-Cookie"))
    snap = client.get("/api/state?as=host").get_json()
    assert snap["audience"]["role"] == "host"
    assert snap["host"]["settings"]["players"] == 3
    choices = client.get("/api/setup-choices").get_json()
    assert choices["allowed_colours"]["2"] == ["blue", "yellow"]  # R-COMP-2
    assert choices["allowed_colours"]["4"] == ["blue", "yellow", "red", "green"]
    assert choices["options"]["swap_any_distance"]["default"] is True  # OPEN-02


def test_player_cookie_does_not_open_the_host_view(app: Flask, service: FakeTableService) -> None:
    c = player_client(app, service, "red")
    assert c.get("/api/state?as=host").status_code == 401
    assert c.get("/api/qr").status_code == 401


def test_state_etag_gives_304_until_something_changes(
    client: FlaskClient, service: FakeTableService
) -> None:
    first = client.get("/api/state")
    tag = first.headers["ETag"]
    assert first.headers["Cache-Control"] == "private, no-cache"
    again = client.get("/api/state", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.data == b""
    service.step()
    changed = client.get("/api/state", headers={"If-None-Match": tag})
    assert changed.status_code == 200
    assert changed.get_json()["version"] > first.get_json()["version"]


def test_event_stream_starts_with_the_full_snapshot_even_on_reconnect(
    client: FlaskClient, service: FakeTableService
) -> None:
    resp = client.get("/events", headers={"Last-Event-ID": "1"})
    text = resp.get_data(as_text=True)
    assert text.startswith("retry: 1000\n")
    first = text.split("\n\n")[0].splitlines()
    assert first[1] == f"id: {service.version}" and first[2] == "event: snapshot"
    snap = json.loads(first[3][len("data: ") :])
    assert snap["version"] == service.version and snap["state"]["players"]
    assert ": heartbeat" in text  # SSE_HEARTBEAT_S = 0.05 s, stream closed after 0.15 s


def test_layout_draws_every_space_once(client: FlaskClient) -> None:
    for length, special in ((16, ""), (18, "9:fountain,18:web")):
        lay = client.get(f"/api/layout?length={length}&special={special}").get_json()
        assert [s["space"] for s in lay["spaces"]] == list(range(1, length + 1))
        points = {(s["x"], s["y"]) for s in lay["spaces"]}
        assert len(points) == length
        for s in lay["spaces"]:
            assert 0 < s["x"] < lay["width"] and 0 < s["y"] < lay["height"]
    lay = client.get("/api/layout?length=18&special=9:fountain,18:web").get_json()
    assert lay["spaces"][8]["special"] == "fountain" and lay["spaces"][17]["special"] == "web"


def test_healthz_reports_each_part_and_503_when_one_is_down(
    client: FlaskClient, service: FakeTableService
) -> None:
    ok = client.get("/healthz")
    assert ok.status_code == 200
    assert set(ok.get_json()["parts"]) == {
        "camera",
        "detector",
        "tracker",
        "hardware",
        "journal",
        "web",
    }
    service.beat("camera", ok=False, detail="no frame for 20 s")
    bad = client.get("/healthz")
    assert bad.status_code == 503 and bad.get_json()["parts"]["camera"]["ok"] is False
    line = client.get("/api/state").get_json()["health"]
    assert line["ok"] is False and "camera" in line["line"]


def test_camera_frame_for_the_host_only(host: FlaskClient, service: FakeTableService) -> None:
    assert host.get("/camera.jpg").status_code == 404
    jpeg = b"\xff\xd8\xff\xe0fake-jpeg\xff\xd9"
    service.set_camera_jpeg(jpeg)
    resp = host.get("/camera.jpg")
    assert resp.status_code == 200 and resp.mimetype == "image/jpeg" and resp.data == jpeg


def test_qr_codes_are_inline_svg_with_the_join_links(
    host: FlaskClient, service: FakeTableService
) -> None:
    data = host.get("/api/qr").get_json()  # links use the address the host reached
    assert data["table"]["url"] == "http://localhost/"
    assert data["table"]["svg"].startswith("<svg")
    urls = {p["label"]: p["url"] for p in data["players"]}
    assert urls == {c: f"http://localhost/join/{t}" for c, t in service.player_tokens().items()}
    assert data["host"]["url"].endswith(service.host_token)


def test_public_url_config_is_used_for_qr_codes(service: FakeTableService) -> None:
    app = create_app({**TEST_CONFIG, "PUBLIC_URL": "http://towers.local:8080/"}, service)
    c = app.test_client()
    join(c, service.host_token)
    assert c.get("/api/qr").get_json()["table"]["url"] == "http://towers.local:8080/"


def test_create_app_refuses_something_that_is_not_a_service() -> None:
    with pytest.raises(TypeError, match="TableService"):
        create_app({}, object())  # type: ignore[arg-type]


def test_event_streams_are_capped_and_the_slot_is_freed(service: FakeTableService) -> None:
    app = create_app({**TEST_CONFIG, "SSE_MAX_STREAMS": 2, "SSE_MIN_AGE_S": 60.0}, service)
    c = app.test_client()
    first = c.get("/events?tab=a")
    second = c.get("/events?tab=b")
    third = c.get("/events?tab=c")
    assert (first.status_code, second.status_code, third.status_code) == (200, 200, 503)
    assert "polls and tries again" in third.get_json()["error"]
    first.close()  # the phone went away
    fourth = c.get("/events?tab=c")
    assert fourth.status_code == 200
    for resp in (second, fourth):
        resp.close()


def test_a_reconnecting_page_replaces_its_own_stream(service: FakeTableService) -> None:
    app = create_app({**TEST_CONFIG, "SSE_MAX_STREAMS": 1, "SSE_MIN_AGE_S": 60.0}, service)
    c = app.test_client()
    first = c.get("/events?tab=mine")
    again = c.get("/events?tab=mine")  # the same page reconnects: no 503, the old one ends
    assert (first.status_code, again.status_code) == (200, 200)
    assert len(app.extensions["companion.streams"]) == 1
    assert c.get("/events?tab=bad%20tab").status_code == 400
    for resp in (first, again):
        resp.close()


def test_streams_without_a_page_id_replace_no_other(service: FakeTableService) -> None:
    # a client that is no page of ours (a script, an old cached page): each stream is its own
    app = create_app({**TEST_CONFIG, "SSE_MAX_STREAMS": 8, "SSE_MIN_AGE_S": 60.0}, service)
    c = app.test_client()
    streams = [c.get("/events") for _ in range(6)]  # one address, no cookie: no device limit
    assert [r.status_code for r in streams] == [200] * 6
    assert len(app.extensions["companion.streams"]) == 6
    for resp in streams:
        resp.close()
