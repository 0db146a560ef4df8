"""``companion bench web``: event streams and requests against the phone pages on loopback.

A waitress server with :class:`~companion.sim.faketable.FakeTableService` runs in a child process
(so its memory is measured alone); a seeded bot changes the game every second. The bench holds
``--clients`` Server-Sent-Event streams open and sends ``--rate`` requests per second (a mix of
what the pages fetch) for ``--seconds``, then prints:

* missed updates: (stream, change) pairs where the stream had no snapshot at least as new as
  the change within ``--deadline`` seconds (target 0);
* update delivery delay p50/p99 (change recorded by the service -> snapshot read by a client);
* request latency p50/p99/max in ms (target p99 <= 50 ms) and failed requests;
* server RSS (current and peak) in MiB.

Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import TypedDict

HOST = "127.0.0.1"

REQUEST_MIX: tuple[str, ...] = (
    "/api/state",
    "/api/state?as=public",
    "/api/state",
    "/",
    "/static/common.js",
    "/api/layout?length=16",
    "/healthz",
    "/api/state",
    "/static/style.css",
    "/api/state",
)
"""What a phone asks for, in proportion (polling dominates when event streams are down)."""


class _ServerReport(TypedDict):
    """What the server process sends back when told to stop."""

    changes: list[tuple[int, float]]  # (version, monotonic s) of every game change
    rss_mib: float
    rss_peak_mib: float


class WebFigures(TypedDict):
    """The figures :func:`run` returns (times in ms or s, memory in MiB)."""

    seconds: float
    clients: int
    stream_errors: list[str]
    changes: int
    missed_updates: int
    update_delay_ms_p50: float
    update_delay_ms_p99: float
    requests: int
    requests_ok: int
    requests_failed: int
    request_errors: list[str]
    request_rate: float
    request_ms_p50: float
    request_ms_p99: float
    request_ms_max: float
    server_rss_mib: float
    server_rss_peak_mib: float
    cpu_count: int | None
    load_avg_1min: float


def _rss_mib(pid: int | None = None) -> tuple[float, float]:
    """(current, peak) resident set size of a process in MiB, from /proc (Linux)."""
    path = f"/proc/{pid or os.getpid()}/status"
    cur = peak = 0.0
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    cur = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return cur, peak


def _server(conn: Connection, seed: int, period_s: float, threads: int) -> None:
    """Child process: fake table + waitress on a free loopback port until told to stop."""
    from companion.sim.faketable import FakeTableService
    from companion.web import BackgroundServer, create_app

    svc = FakeTableService(seed=seed, setup={"players": 4})
    svc.change_log = []
    app = create_app({"SSE_HEARTBEAT_S": 15.0}, svc)
    srv = BackgroundServer(app, HOST, 0, threads=threads).start()
    conn.send({"port": srv.port, "clock": time.monotonic()})
    svc.start_driver(period_s)
    conn.recv()  # "stop"
    log = list(svc.change_log)
    rss = _rss_mib()
    svc.close()
    srv.close()
    report: _ServerReport = {"changes": log, "rss_mib": rss[0], "rss_peak_mib": rss[1]}
    conn.send(report)
    conn.close()


class _Stream(threading.Thread):
    """One phone's event stream: records (version, monotonic time) of every snapshot."""

    def __init__(self, port: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stop = stop
        self.received: list[tuple[int, float]] = []
        self.error: str | None = None

    def run(self) -> None:
        try:
            conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
            conn.request("GET", "/events?as=public", headers={"Accept": "text/event-stream"})
            resp = conn.getresponse()
            while not self.stop.is_set():
                line = resp.readline()
                if not line:
                    break
                if line.startswith(b"id: "):
                    self.received.append((int(line[4:]), time.monotonic()))
            conn.close()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if not self.stop.is_set():
                self.error = f"{type(exc).__name__}: {exc}"


def _requests(
    port: int, rate: float, seconds: float, workers: int
) -> tuple[list[float], int, list[str]]:
    """Open-loop load: request i is due at start + i / rate; latency counts from when it was
    due, so a slow server cannot hide behind a slow sender."""
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    total = int(rate * seconds)
    start = time.monotonic() + 0.05
    next_i = [0]

    def worker() -> None:
        conn = http.client.HTTPConnection(HOST, port, timeout=10)
        etag: str | None = None
        while True:
            with lock:
                i = next_i[0]
                next_i[0] += 1
            if i >= total:
                break
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            path = REQUEST_MIX[i % len(REQUEST_MIX)]
            headers = {"If-None-Match": etag} if etag and path == "/api/state" and i % 2 else {}
            try:
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
                resp.read()
                if resp.status not in (200, 304):
                    raise http.client.HTTPException(f"{path}: HTTP {resp.status}")
                if path == "/api/state" and resp.getheader("ETag"):
                    etag = resp.getheader("ETag")
                took = time.monotonic() - due
                with lock:
                    lat.append(took)
            except (OSError, http.client.HTTPException) as exc:
                with lock:
                    errors.append(f"{path}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection(HOST, port, timeout=10)
        conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, total, errors


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def run(
    seconds: float = 30.0,
    clients: int = 12,
    rate: float = 50.0,
    period_s: float = 1.0,
    deadline_s: float = 1.0,
    seed: int = 1,
    workers: int = 8,
) -> WebFigures:
    """Run the bench and return its figures (see the module docstring)."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    threads = max(16, clients + workers + 4)
    proc = ctx.Process(target=_server, args=(child, seed, period_s, threads), daemon=True)
    proc.start()
    try:
        hello = parent.recv()
        port = int(hello["port"])
        stop = threading.Event()
        streams = [_Stream(port, stop) for _ in range(clients)]
        for s in streams:
            s.start()
        time.sleep(0.3)  # streams connected and holding their first snapshot
        t0 = time.monotonic()
        lat, total, errors = _requests(port, rate, seconds, workers)
        t1 = time.monotonic()
        time.sleep(deadline_s + 0.2)  # let the last changes arrive
        parent.send("stop")
        result: _ServerReport = parent.recv()
        stop.set()
    finally:
        proc.join(timeout=20)
        if proc.is_alive():
            proc.terminate()
    changes = [(v, t) for v, t in result["changes"] if t0 <= t <= t1]
    missed = 0
    delays: list[float] = []
    for s in streams:
        for version, changed_at in changes:
            got = next((t for v, t in s.received if v >= version), None)
            if got is None or got - changed_at > deadline_s:
                missed += 1
            else:
                delays.append(max(0.0, got - changed_at))
    return {
        "seconds": round(t1 - t0, 2),
        "clients": clients,
        "stream_errors": [s.error for s in streams if s.error],
        "changes": len(changes),
        "missed_updates": missed,
        "update_delay_ms_p50": round(_pct(delays, 0.50) * 1000, 1),
        "update_delay_ms_p99": round(_pct(delays, 0.99) * 1000, 1),
        "requests": total,
        "requests_ok": len(lat),
        "requests_failed": len(errors),
        "request_errors": errors[:5],
        "request_rate": rate,
        "request_ms_p50": round(_pct(lat, 0.50) * 1000, 2),
        "request_ms_p99": round(_pct(lat, 0.99) * 1000, 2),
        "request_ms_max": round(max(lat) * 1000, 2) if lat else float("nan"),
        "server_rss_mib": round(result["rss_mib"], 1),
        "server_rss_peak_mib": round(result["rss_peak_mib"], 1),
        "cpu_count": os.cpu_count(),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="companion bench web", description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="measurement time (s)")
    parser.add_argument("--clients", type=int, default=12, help="open event streams")
    parser.add_argument("--rate", type=float, default=50.0, help="requests per second")
    parser.add_argument("--period", type=float, default=1.0, help="s between game changes")
    parser.add_argument("--deadline", type=float, default=1.0, help="s before an update is missed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.clients < 0 or args.rate <= 0 or args.period <= 0:
        parser.error("--seconds, --rate and --period must be positive, --clients >= 0")
    r = run(args.seconds, args.clients, args.rate, args.period, args.deadline, args.seed)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(
        f"web bench: {r['clients']} event streams + {r['request_rate']:g} requests/s for "
        f"{r['seconds']} s on {HOST} (load avg {r['load_avg_1min']} on {r['cpu_count']} cores)"
    )
    print(f"  game changes         {r['changes']}")
    print(f"  missed updates       {r['missed_updates']} (target 0)")
    print(
        f"  update delay         p50 {r['update_delay_ms_p50']} ms, "
        f"p99 {r['update_delay_ms_p99']} ms"
    )
    print(
        f"  requests             {r['requests_ok']}/{r['requests']} ok, "
        f"{r['requests_failed']} failed"
    )
    print(
        f"  request latency      p50 {r['request_ms_p50']} ms, p99 {r['request_ms_p99']} ms "
        f"(target <= 50 ms), max {r['request_ms_max']} ms"
    )
    print(f"  server RSS           {r['server_rss_mib']} MiB (peak {r['server_rss_peak_mib']} MiB)")
    for err in r["stream_errors"] + r["request_errors"]:
        print(f"  error: {err}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
