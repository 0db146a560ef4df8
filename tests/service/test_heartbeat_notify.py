"""Heartbeats go stale, and systemd hears READY/WATCHDOG over its notify socket."""

from __future__ import annotations

import os
import socket

import pytest

from companion.service.heartbeat import Heartbeats
from companion.service.sdnotify import SystemdNotifier


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_part_that_stops_beating_goes_stale():
    clock = Clock()
    hb = Heartbeats(stale_s=5.0, clock=clock)
    for part in ("camera", "detector", "tracker", "hardware", "journal", "web"):
        hb.beat(part, "fine")
    assert hb.all_fresh()
    clock.t += 4.0
    hb.beat("camera", "8 fps")
    hb.beat("detector")
    hb.beat("tracker")
    hb.beat("hardware")
    hb.beat("journal")
    clock.t += 2.0  # web last beat 6 s ago
    report = hb.report()
    assert not hb.all_fresh()
    assert report["ok"] is False
    assert report["parts"]["web"]["ok"] is False
    assert report["parts"]["web"]["detail"].startswith("stale")
    assert report["parts"]["camera"] == {"ok": True, "age_s": 2.0, "detail": "8 fps"}


def test_trouble_marks_a_part_unhealthy_until_it_beats_again():
    clock = Clock()
    hb = Heartbeats(stale_s=5.0, clock=clock, parts=("camera",))
    hb.beat("camera")
    hb.trouble("camera", "error: no signal")
    assert not hb.part_ok("camera")
    assert hb.report()["parts"]["camera"]["detail"] == "error: no signal"
    hb.beat("camera", "ok")
    assert hb.part_ok("camera")


def test_a_part_never_heard_of_is_not_healthy():
    hb = Heartbeats(parts=("camera", "web"))
    hb.beat("camera")
    assert hb.report()["parts"]["web"] == {"ok": False, "age_s": None, "detail": "not started"}


@pytest.fixture
def notify_socket(tmp_path):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    yield path, sock
    sock.close()


def test_notifier_sends_ready_watchdog_and_stopping(notify_socket):
    path, sock = notify_socket
    n = SystemdNotifier({"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "30000000"})
    assert n.enabled
    assert n.watchdog_interval_s == 15.0
    assert n.ready("serving")
    assert sock.recv(256) == b"READY=1\nSTATUS=serving"
    assert n.watchdog()
    assert sock.recv(256) == b"WATCHDOG=1"
    assert n.stopping()
    assert sock.recv(256) == b"STOPPING=1"
    n.close()


def test_notifier_uses_the_abstract_namespace_for_at_paths():
    name = f"companion-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2)
    try:
        n = SystemdNotifier({"NOTIFY_SOCKET": "@" + name})
        assert n.status("tracking")
        assert sock.recv(256) == b"STATUS=tracking"
        n.close()
    finally:
        sock.close()


def test_without_systemd_the_notifier_does_nothing():
    n = SystemdNotifier({})
    assert not n.enabled
    assert n.watchdog_interval_s is None
    assert n.ready() is False


def test_watchdog_of_another_process_is_ignored():
    n = SystemdNotifier(
        {"NOTIFY_SOCKET": "/nonexistent", "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"}
    )
    assert n.watchdog_interval_s is None
    assert n.ready() is False  # the socket does not exist: reported, never raised
    assert "sd_notify failed" in n.last_error
    n.close()
