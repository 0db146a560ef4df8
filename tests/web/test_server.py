"""Serving with waitress: event streams over a real socket, join codes, layout, the bench."""

from __future__ import annotations

import http.client
import io
import json
import socket
from collections.abc import Iterator

import pytest

from companion.cli import main
from companion.sim.faketable import FakeTableService
from companion.web import BackgroundServer, create_app, print_join_codes
from companion.web.layout import board_layout
from companion.web.server import base_url, join_links


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[FakeTableService, BackgroundServer]]:
    svc = FakeTableService(seed=4, setup={"players": 3})
    srv = BackgroundServer(create_app({"SSE_HEARTBEAT_S": 0.5}, svc)).start()
    yield svc, srv
    svc.close()
    srv.close()


def read_message(resp: http.client.HTTPResponse) -> dict[str, str]:
    fields: dict[str, str] = {}
    while True:
        line = resp.readline().decode()
        if line == "\n":
            if "data" in fields:
                return fields
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.rstrip("\n").partition(": ")
        fields[key] = value


def test_a_change_reaches_an_open_event_stream(
    served: tuple[FakeTableService, BackgroundServer],
) -> None:
    svc, srv = served
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    conn.request("GET", "/events")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type", "").startswith("text/event-stream")
    first = read_message(resp)
    assert int(first["id"]) == svc.version
    svc.step()
    second = read_message(resp)
    assert int(second["id"]) == svc.version > int(first["id"])
    snap = json.loads(second["data"])
    assert snap["version"] == svc.version and snap["log"]
    conn.close()


def test_reconnect_with_last_event_id_gets_the_full_snapshot(
    served: tuple[FakeTableService, BackgroundServer],
) -> None:
    svc, srv = served
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    conn.request("GET", "/events", headers={"Last-Event-ID": str(svc.version)})
    msg = read_message(conn.getresponse())
    assert json.loads(msg["data"])["state"]["stacks"]
    conn.close()


def test_too_few_threads_are_refused() -> None:
    svc = FakeTableService()
    with pytest.raises(ValueError, match="at least 16"):
        BackgroundServer(create_app({}, svc), threads=4)
    svc.close()


def test_join_codes_print_in_the_terminal() -> None:
    svc = FakeTableService(seed=2, setup={"players": 2})
    out = io.StringIO()
    print_join_codes(svc, "http://10.0.0.5:8080", out)
    text = out.getvalue()
    for label, url in join_links(svc, "http://10.0.0.5:8080").items():
        assert url in text, label
    assert text.count("█") > 200  # the QR blocks
    out = io.StringIO()
    print_join_codes(svc, "http://10.0.0.5:8080", out, players=False)
    assert svc.player_tokens()["blue"] not in out.getvalue()
    assert svc.host_token in out.getvalue()
    svc.close()


def test_base_url_prefers_the_configured_public_url() -> None:
    assert base_url("https://towers.example/", "0.0.0.0", 8080) == "https://towers.example"
    assert base_url("", "127.0.0.1", 9000) == "http://127.0.0.1:9000"
    assert base_url("", "0.0.0.0", 8080).endswith(":8080")


def test_layout_without_geometry_is_a_ring_of_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    import companion.web.layout as layout

    monkeypatch.setattr(layout, "_from_geometry", lambda length, special: None)
    layout._layout.cache_clear()
    lay = board_layout(16)
    assert lay["source"] == "computed" and (lay["width"], lay["height"]) == (500.0, 500.0)
    first, second = lay["spaces"][0], lay["spaces"][1]
    assert (first["x"], first["y"]) == (50.0, 50.0) and second["x"] > first["x"]  # clockwise
    odd = board_layout(15)
    assert len({(s["x"], s["y"]) for s in odd["spaces"]}) == 15
    layout._layout.cache_clear()  # the next test sees the geometry again


def test_layout_follows_the_board_geometry() -> None:
    lay = board_layout(18, {9: "fountain", 18: "web"})
    assert lay["source"] == "geometry"
    for s in lay["spaces"]:
        xs = [p[0] for p in s["outline"]]
        ys = [p[1] for p in s["outline"]]
        assert min(xs) <= s["x"] <= max(xs) and min(ys) <= s["y"] <= max(ys)


def test_bench_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "bench",
            "web",
            "--seconds",
            "1.5",
            "--clients",
            "2",
            "--rate",
            "10",
            "--period",
            "0.3",
            "--json",
        ]
    )
    assert rc == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["requests"] == 15 and figures["clients"] == 2
    assert figures["changes"] >= 2
    for key in ("missed_updates", "request_ms_p50", "request_ms_p99", "server_rss_mib"):
        assert key in figures
    assert figures["server_rss_mib"] > 10


def test_closing_the_server_closes_a_phone_connection_still_open() -> None:
    """A phone that keeps its connection open (HTTP keep-alive) when the companion stops gets
    it closed by the server; it is not left to the garbage collector (which warns about an
    unclosed socket, at a random later moment)."""
    svc = FakeTableService(seed=4, setup={"players": 3})
    srv = BackgroundServer(create_app({"SSE_HEARTBEAT_S": 0.5}, svc)).start()
    phone = socket.create_connection((srv.host, srv.port), timeout=5.0)
    try:
        phone.sendall(b"GET /healthz HTTP/1.1\r\nHost: table\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += phone.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200")
        svc.close()
        srv.close()
        phone.settimeout(5.0)
        rest = b""
        while True:  # the rest of the answer, then the end of the stream
            chunk = phone.recv(4096)
            if not chunk:
                break
            rest += chunk
    finally:
        phone.close()
