"""Event streams over real sockets: dead and stalled phones give their slot back, a new phone
always gets a stream, a page that reconnects replaces its own stream."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Callable, Iterator

import pytest

from companion.sim.faketable import FakeTableService
from companion.web import BackgroundServer, create_app
from companion.web.streams import StreamRegistry, StreamsFull

from .test_server import read_message


def open_streams(
    app_config: dict[str, object],
) -> Iterator[tuple[FakeTableService, BackgroundServer]]:
    svc = FakeTableService(seed=4, setup={"players": 3})
    srv = BackgroundServer(create_app(app_config, svc)).start()
    yield svc, srv
    svc.close()
    srv.close()


@pytest.fixture
def served() -> Iterator[tuple[FakeTableService, BackgroundServer]]:
    yield from open_streams(
        {
            "SSE_HEARTBEAT_S": 0.5,
            "SSE_CHECK_S": 0.1,
            "SSE_MAX_STREAMS": 3,
            "SSE_MIN_AGE_S": 0.2,
            "SSE_WRITE_TIMEOUT_S": 0.5,
        }
    )


def streams_of(srv: BackgroundServer) -> StreamRegistry:
    registry: StreamRegistry = srv._app.extensions["companion.streams"]
    return registry


def wait_until(cond: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def stalled_client(port: int, tab: str) -> socket.socket:
    """A client that asks for a stream and never reads it (small receive window)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    s.connect(("127.0.0.1", port))
    s.sendall(
        f"GET /events?tab={tab} HTTP/1.1\r\nHost: x\r\nCookie: wt_csrf={tab}\r\n\r\n".encode()
    )
    return s


def phone(port: int, tab: str) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", f"/events?tab={tab}", headers={"Cookie": f"wt_csrf=phone-{tab}"})
    return conn, conn.getresponse()


def test_a_phone_that_closes_its_page_frees_its_slot_long_before_a_heartbeat() -> None:
    # heartbeats 30 s apart: the slot must come back long before the next write would fail
    gen = open_streams({"SSE_HEARTBEAT_S": 30.0, "SSE_MAX_STREAMS": 2, "SSE_MIN_AGE_S": 60.0})
    svc, srv = next(gen)
    conn, resp = phone(srv.port, "a")
    assert resp.status == 200 and read_message(resp)["id"]
    assert len(streams_of(srv)) == 1
    resp.close()  # the page is closed: the browser closes the connection
    conn.close()
    t0 = time.monotonic()
    assert wait_until(lambda: len(streams_of(srv)) == 0, 10.0)
    assert time.monotonic() - t0 < 5.0  # a check a second, not the next heartbeat (30 s)
    gen.close()


def test_stalled_clients_cannot_lock_out_a_new_phone(
    served: tuple[FakeTableService, BackgroundServer],
) -> None:
    svc, srv = served
    stalled = [stalled_client(srv.port, f"s{i}") for i in range(3)]
    assert wait_until(lambda: len(streams_of(srv)) == 3)
    time.sleep(0.3)  # older than SSE_MIN_AGE_S
    conn, resp = phone(srv.port, "new")
    assert resp.status == 200  # a slot was taken back from a stalled client
    first = read_message(resp)
    svc.step()
    assert int(read_message(resp)["id"]) == svc.version > int(first["id"])
    assert len(streams_of(srv)) == 3
    conn.close()
    for s in stalled:
        s.close()


def test_a_client_that_stops_reading_is_released(
    served: tuple[FakeTableService, BackgroundServer],
) -> None:
    svc, srv = served
    s = stalled_client(srv.port, "slow")
    assert wait_until(lambda: len(streams_of(srv)) == 1)
    # snapshots of a few KB each fill its receive window; then the bytes stay unacknowledged
    for _ in range(40):
        svc.step()
        time.sleep(0.02)
        if len(streams_of(srv)) == 0:
            break
    assert wait_until(lambda: len(streams_of(srv)) == 0, 5.0)
    s.close()


def test_an_evicted_page_is_told_to_poll_and_come_back(
    served: tuple[FakeTableService, BackgroundServer],
) -> None:
    svc, srv = served
    phones = [phone(srv.port, f"p{i}") for i in range(3)]
    for _, resp in phones:
        read_message(resp)
    time.sleep(0.3)
    conn, resp = phone(srv.port, "late")
    assert resp.status == 200
    # one of the three (the one least recently seen alive) gets its slot taken: it is told so
    # and its stream ends; the others go on with heartbeats
    told = []
    for _, r in phones:
        lines: list[str] = []
        deadline = time.monotonic() + 1.2  # heartbeats every 0.5 s keep the others talking
        while time.monotonic() < deadline:
            line = r.readline().decode()
            if not line:
                break
            lines.append(line)
        told.append("event: evicted\n" in lines and any('"retry_s"' in x for x in lines))
    assert told.count(True) == 1, told
    for c, _ in phones:
        c.close()
    conn.close()


def test_young_streams_keep_their_slots_and_the_device_limit_holds() -> None:
    reg = StreamRegistry(capacity=2, per_device=2, min_age_s=60.0)
    a = reg.open(("d1", "public:", "a"), "d1")
    b = reg.open(("d1", "public:", "b"), "d1")
    c = reg.open(("d1", "public:", "c"), "d1")  # a third tab of one browser ends its oldest
    assert a.ended.is_set() and a.reason == "replaced" and not b.ended.is_set()
    with pytest.raises(StreamsFull):
        reg.open(("d2", "public:", "x"), "d2")
    again = reg.open(("d1", "public:", "c"), "d1")  # the same page reconnects
    assert c.reason == "replaced" and len(reg) == 2
    reg.close(c)  # the replaced stream's late close does not free the new one's slot
    assert len(reg) == 2 and not again.ended.is_set()
