"""Phones that come and go against the phone pages' event streams.

Each simulated phone behaves as the page's script does (``static/common.js``): it opens an event
stream (``/events?as=public&tab=<page id>`` with its own CSRF cookie as a browser would send); on a
refusal (503) or an ``evicted`` message it polls ``/api/state`` every 1.5 s and opens a new stream
after a back-off (2 s doubling to 30 s, or the ``retry_s`` it was told); a stream that ends is
reopened after 1 s (the browser's ``retry``). Churn, at random (seeded) moments per phone:

* **leave**: the page is closed (the connection is closed) and opened again 1-10 s later;
  (a phone away or asleep comes back when the quiet end begins at the latest);
* **sleep**: the phone stops reading (its radio went off: the connection stays open, nothing is
  read, its small receive window fills) for 5-40 s, then wakes, drops that connection and
  reconnects with the same page id, as the browser's EventSource does;
* **reload**: the page is reloaded at once (a new page id).

The last ``--quiet`` seconds have no churn, so every phone should end on a live stream. Figures:

* phones stuck on polling at the end (target 0), seconds spent polling, 503s, evictions;
* missed states on live streams: versions between the first and last snapshot of one stream that
  the stream did not deliver and that were the current state for at least :data:`STATE_MIN_S`
  (the service counts versions one by one; target 0). A version is current from the first time
  any phone received it until the first time any phone received a later one; a version no
  stream ever delivered lived shorter than every stream's wake-up (one game event published
  twice within a few ms, e.g. a commit and then the dice display): such skipped versions are
  counted apart as ``momentary_versions_skipped``;
* phones whose last snapshot is not the service's current version at the end (target 0).

Against a running companion (``--url``, e.g. ``python -m companion run`` with the simulated
table), or, without ``--url``, against a fake table on loopback that changes every ``--period``
seconds (what the tests use).
"""

from __future__ import annotations

import http.client
import json
import random
import secrets
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

POLL_S = 1.5
RETRY_S = 2.0
RETRY_MAX_S = 30.0
RECONNECT_S = 1.0
STATE_MIN_S = 0.05
"""A version current for less than this (s) is a momentary one, not a state a page shows."""


@dataclass
class PhoneFigures:
    """What one phone saw."""

    streams: int = 0
    refused: int = 0
    evicted: int = 0
    polled_s: float = 0.0
    delivered: int = 0
    last_version: int = -1
    live_at_end: bool = False
    errors: list[str] = field(default_factory=list)


class Phone(threading.Thread):
    """One phone's page (see the module doc)."""

    def __init__(
        self, host: str, port: int, rng: random.Random, churn_s: float, until: float, quiet: float
    ) -> None:
        super().__init__(daemon=True)
        self.host, self.port = host, port
        self.rng = rng
        self.churn_s = churn_s
        self.until = until  # monotonic end of the run
        self.quiet_from = until - quiet
        self.device = secrets.token_urlsafe(8)
        self.tab = secrets.token_urlsafe(6)
        self.fig = PhoneFigures()
        self.windows: list[tuple[int, int, set[int]]] = []  # per stream: first, last, received
        self.received: dict[int, float] = {}  # version -> first monotonic time it arrived
        self.live = False
        self._next_churn = time.monotonic() + rng.expovariate(1 / churn_s)
        self._retry_at = 0.0
        self._retry_s = RETRY_S

    # ---------------------------------------------------------------- connection
    def _connect(self) -> tuple[socket.socket, Any] | int:
        """Open a stream: ``(socket, file)`` on 200, else the HTTP status."""
        s = socket.create_connection((self.host, self.port), timeout=5)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(
            f"GET /events?as=public&tab={self.tab} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Cookie: wt_csrf={self.device}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        fh = s.makefile("rb")
        status_line = fh.readline().decode("latin-1")
        status = int(status_line.split()[1]) if status_line.startswith("HTTP/") else 0
        while fh.readline() not in (b"\r\n", b""):
            pass
        if status != 200:
            fh.close()
            s.close()
            return status
        rest = fh.peek(65536) if hasattr(fh, "peek") else b""
        fh.read(len(rest))  # the response's first bytes, already buffered: keep them
        fh.close()
        return s, _Lines(s, rest)

    def _poll(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=5)
        try:
            conn.request("GET", "/api/state?as=public")
            resp = conn.getresponse()
            body = resp.read()
            if resp.status == 200:
                self.fig.last_version = max(self.fig.last_version, int(json.loads(body)["version"]))
        except (OSError, http.client.HTTPException, ValueError, KeyError) as exc:
            self.fig.errors.append(f"poll: {type(exc).__name__}: {exc}")
        finally:
            conn.close()

    def _churn_due(self, now: float) -> str | None:
        if now < self._next_churn or now >= self.quiet_from:
            return None
        self._next_churn = now + self.rng.expovariate(1 / self.churn_s)
        return self.rng.choice(("leave", "sleep", "reload"))

    # ---------------------------------------------------------------- the page
    def run(self) -> None:
        while time.monotonic() < self.until:
            now = time.monotonic()
            if now < self._retry_at:
                self._polling(self._retry_at)
                continue
            try:
                got = self._connect()
            except OSError as exc:
                self.fig.errors.append(f"connect: {exc}")
                self._polling(time.monotonic() + RECONNECT_S)
                continue
            if isinstance(got, int):
                self.fig.refused += 1
                self._retry_at = time.monotonic() + self._retry_s * self.rng.uniform(0.75, 1.25)
                self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
                continue
            self.fig.streams += 1
            self._retry_s = RETRY_S
            self._stream(*got)

    def _polling(self, until: float) -> None:
        """Poll every 1.5 s until ``until`` (or the end of the run)."""
        self.live = False
        while True:
            start = time.monotonic()
            end = min(until, self.until)
            if start >= end:
                return
            self._poll()
            time.sleep(max(0.0, min(POLL_S, end - time.monotonic())))
            self.fig.polled_s += time.monotonic() - start

    def _stream(self, s: socket.socket, fh: Any) -> None:
        self.live = True
        first = last = -1
        seen: set[int] = set()
        event = ""
        try:
            while time.monotonic() < self.until:
                action = self._churn_due(time.monotonic())
                if action == "sleep":
                    # reads nothing; the socket stays open
                    time.sleep(min(self.rng.uniform(5, 40), self.quiet_from - time.monotonic()))
                    return  # wakes: this connection is dropped, the same page reconnects
                if action == "leave":
                    s.close()
                    self.live = False
                    time.sleep(min(self.rng.uniform(1, 10), self.quiet_from - time.monotonic()))
                    self.tab = secrets.token_urlsafe(6)
                    return
                if action == "reload":
                    self.tab = secrets.token_urlsafe(6)
                    return
                try:
                    line = fh.readline(0.5)
                except OSError:
                    self._retry_at = time.monotonic() + RECONNECT_S
                    return
                if line is None:
                    continue
                if not line:  # the server ended the stream: the browser retries after 1 s
                    self._retry_at = time.monotonic() + RECONNECT_S
                    return
                if line.startswith(b"event: "):
                    event = line[7:].strip().decode()
                elif line.startswith(b"id: "):
                    v = int(line[4:])
                    seen.add(v)
                    self.received.setdefault(v, time.monotonic())
                    first = v if first < 0 else first
                    last = max(last, v)
                    self.fig.last_version = max(self.fig.last_version, v)
                elif line.startswith(b"data: ") and event == "evicted":
                    self.fig.evicted += 1
                    retry = float(json.loads(line[6:]).get("retry_s", 20))
                    self._retry_at = time.monotonic() + retry * self.rng.uniform(0.75, 1.25)
                    return
                elif line == b"\n":
                    event = ""
        finally:
            self.live = time.monotonic() >= self.until and self.live
            self.fig.live_at_end = self.live
            if first >= 0:
                self.fig.delivered += len(seen)
                self.windows.append((first, last, seen))
            try:
                fh.close()
                s.close()
            except OSError:
                pass


class _Lines:
    """Lines of a socket, waiting at most ``timeout_s`` for one (None: none came)."""

    def __init__(self, s: socket.socket, start: bytes = b"") -> None:
        self.s = s
        self.buf = start

    def readline(self, timeout_s: float) -> bytes | None:
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.s], [], [], timeout_s)
            if not ready:
                return None
            chunk = self.s.recv(65536)
            if not chunk:
                line, self.buf = self.buf, b""
                return line
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line + b"\n"

    def close(self) -> None:
        self.s.close()


def current_version(host: str, port: int) -> int:
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        conn.request("GET", "/api/state?as=public")
        return int(json.loads(conn.getresponse().read())["version"])
    finally:
        conn.close()


def run(
    url: str = "",
    phones: int = 20,
    seconds: float = 60.0,
    churn_s: float = 30.0,
    quiet_s: float = 40.0,
    seed: int = 1,
    period_s: float = 1.0,
) -> dict[str, Any]:
    """Run the phones (see the module doc) and return the figures.

    :param url: a running companion's base URL; "" = a fake table served on loopback.
    :param churn_s: mean seconds between two churn events of one phone.
    :param quiet_s: seconds at the end without churn.
    """
    srv = svc = None
    if url:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
    else:
        from companion.sim.faketable import FakeTableService
        from companion.web import BackgroundServer, create_app

        svc = FakeTableService(seed=seed, setup={"players": 4})
        srv = BackgroundServer(create_app({}, svc), threads=32).start()
        host, port = "127.0.0.1", srv.port
        svc.start_driver(period_s)
    rng = random.Random(seed)
    until = time.monotonic() + seconds
    crowd = [
        Phone(host, port, random.Random(rng.random()), churn_s, until, quiet_s)
        for _ in range(phones)
    ]
    v0 = current_version(host, port)
    for p in crowd:
        p.start()
        time.sleep(0.05)
    time.sleep(max(0.0, until - time.monotonic() - 0.5))
    live = [p.live for p in crowd]  # just before the end: who reads a live stream
    final = current_version(host, port)
    for p in crowd:
        p.join(timeout=10)
    if svc is not None and srv is not None:
        svc.close()
        srv.close()
    figs = [p.fig for p in crowd]
    first_seen: dict[int, float] = {}
    for p in crowd:
        for v, at in p.received.items():
            first_seen[v] = min(at, first_seen.get(v, at))
    order = sorted(first_seen)
    lifetime = {v: first_seen[w] - first_seen[v] for v, w in zip(order, order[1:], strict=False)}
    missed = momentary = 0
    for p in crowd:
        for first, last, seen in p.windows:
            for v in set(range(first, last + 1)) - seen:
                if lifetime.get(v, 0.0) >= STATE_MIN_S:
                    missed += 1
                else:
                    momentary += 1
    return {
        "phones": phones,
        "seconds": seconds,
        "churn_mean_s": churn_s,
        "quiet_s": quiet_s,
        "seed": seed,
        "versions": final - v0,
        "stuck_on_polling": sum(1 for x in live if not x),
        "behind_at_end": sum(1 for f in figs if f.last_version < final - 1),
        "missed_on_live_streams": missed,
        "momentary_versions_skipped": momentary,
        "delivered_on_live_streams": sum(f.delivered for f in figs),
        "streams_opened": sum(f.streams for f in figs),
        "refused_503": sum(f.refused for f in figs),
        "evicted": sum(f.evicted for f in figs),
        "polling_s_total": round(sum(f.polled_s for f in figs), 1),
        "errors": [e for f in figs for e in f.errors][:10],
    }
