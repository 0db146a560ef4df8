"""The running companion: systemd watchdog fed only while healthy, record/replay, the commands."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.service.app import Companion, StartError
from companion.service.record import Recorder, hidden_positions, replay
from companion.service.sdnotify import SystemdNotifier
from companion.sim.testing import finish_game, sim_config, simulated_companion, wait_until

REPO = Path(__file__).resolve().parents[2]


def drain(sock: socket.socket) -> None:
    """Drop every datagram already waiting on ``sock``."""
    sock.setblocking(False)
    try:
        while True:
            sock.recv(512)
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(0.2)


def test_ready_then_watchdog_only_while_every_heartbeat_is_fresh(tmp_path):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.2)
    notifier = SystemdNotifier({"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "400000"})
    cfg = sim_config(
        tmp_path / "data",
        simulation={"speed": 5.0},
        service={"heartbeat_stale_s": 1.0},
    )
    c = simulated_companion(
        cfg, without_picture="renderer left out", notifier=notifier, out=io.StringIO()
    )

    def messages(seconds: float) -> list[bytes]:
        got, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            with contextlib.suppress(TimeoutError):
                got.append(sock.recv(512))
        return got

    try:
        # no picture: camera and detector report why, so never healthy
        c.start()
        first = messages(1.5)
        assert any(m.startswith(b"READY=1") for m in first)
        assert b"WATCHDOG=1" not in first
        # pretend every part is alive: the watchdog is fed
        stop = time.monotonic() + 1.5
        fed: list[bytes] = []
        while time.monotonic() < stop:
            for part in ("camera", "detector"):
                c.heartbeats.beat(part, "test")
            fed += messages(0.1)
        assert b"WATCHDOG=1" in fed
        # a part falls silent: the watchdog starves (systemd would restart the service). The pings
        # sent while the last beats were still fresh (up to heartbeat_stale_s after them) sit in
        # the socket's buffer: wait past staleness plus a slow supervisor tick, drop them, then
        # listen.
        time.sleep(1.6)
        drain(sock)
        assert b"WATCHDOG=1" not in messages(1.0)
        c.stop()
        assert any(m.startswith(b"STOPPING=1") for m in messages(0.3))
    finally:
        c.stop()
        sock.close()


@pytest.mark.long
def test_a_recorded_session_replays_to_the_same_commits(tmp_path):
    rec = Recorder(tmp_path / "rec")
    cfg = sim_config(tmp_path / "data", seed=4, simulation={"picture": False, "max_actions": 40})
    c = simulated_companion(cfg, web=False, recorder=rec, out=io.StringIO())
    c.start()
    try:
        finish_game(c)
    finally:
        c.stop()
    assert rec.inputs > 40 and rec.commits > 0
    result = replay(tmp_path / "rec")
    assert result.identical, result.text()
    assert result.commits_replayed == rec.commits
    assert result.final_hidden == hidden_positions(c.service.state)


def test_replay_reports_a_doctored_recording(tmp_path):
    rec = Recorder(tmp_path / "rec")
    cfg = sim_config(tmp_path / "data", seed=4, simulation={"picture": False, "max_actions": 15})
    c = simulated_companion(cfg, web=False, recorder=rec, out=io.StringIO())
    c.start()
    try:
        finish_game(c)
    finally:
        c.stop()
    results = (tmp_path / "rec" / "results.jsonl").read_text().splitlines()
    doctored = [
        line.replace('"committed": [{', '"committed": [{"forged": 1, ', 1) for line in results
    ]
    assert doctored != results
    (tmp_path / "rec" / "results.jsonl").write_text("\n".join(doctored) + "\n")
    result = replay(tmp_path / "rec")
    assert not result.identical
    assert result.commit_mismatches


def test_companion_run_prints_the_url_and_qr_codes_and_stops_on_sigint(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[web]\nhost = "127.0.0.1"\nport = 0\n[data]\ndir = "{tmp_path / "data"}"\n'
        "[simulation]\nspeed = 2.0\npicture = false\n[service]\nstatus_every_s = 0\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "run", "--config", str(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    out = b""
    try:
        os.set_blocking(proc.stdout.fileno(), False)
        deadline = time.monotonic() + 60
        while b"player's page" not in out and time.monotonic() < deadline:
            chunk = proc.stdout.read() or b""
            out += chunk
            time.sleep(0.05)
        text = out.decode()
        assert re.search(r"open http://127\.0\.0\.1:\d+/ on every phone", text), text
        assert "host page" in text, text
        assert any(block in text for block in ("\u2580", "\u2584", "\u2588")), "no QR code"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_a_camera_source_without_calibration_runs_and_says_what_to_calibrate(tmp_path):
    import cv2
    import numpy as np

    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(3):
        cv2.imwrite(str(folder / f"{i:03d}.png"), np.full((90, 160, 3), 40 * i, np.uint8))
    cfg = sim_config(tmp_path / "data", camera={"source": f"folder:{folder}", "fps": 50.0})
    out = io.StringIO()
    c = Companion(cfg, web=False, print_qr=False, out=out)
    c.start()
    try:
        assert c.mode == "camera" and c.table is None
        assert c.camera is not None
        wait_until(lambda: c.camera.ended, 10, "the folder to end")
        report = c.service.health()
        assert "calibration.camera" in report["parts"]["detector"]["detail"]
        assert "companion calibrate intrinsics" in out.getvalue()
        assert c.camera.frames == 3
        assert c.service.state is not None  # the game is set up and waits for a camera
    finally:
        c.stop()


def test_without_a_picture_by_choice_the_service_is_healthy(tmp_path):
    cfg = sim_config(tmp_path / "data", simulation={"speed": 5.0, "picture": False})
    c = simulated_companion(cfg, web=False, out=io.StringIO())
    c.start()
    try:
        wait_until(lambda: c.heartbeats.all_fresh(), 10, "every heartbeat")
        detail = c.service.health()["parts"]["camera"]["detail"]
        assert "simulation.picture = false" in detail
    finally:
        c.stop()


def test_an_uncalibrated_usb_camera_starts_on_the_nominal_camera_file(tmp_path):
    cfg = sim_config(tmp_path / "data", camera={"source": "usb:97"})
    out = io.StringIO()
    c = Companion(cfg, web=False, print_qr=False, out=out)
    c.start()
    try:
        assert c.vision is not None  # the host page can calibrate from here
        assert "nominal camera file webcam-1280x720.yml" in out.getvalue()
        assert "built-in colours" in out.getvalue()
    finally:
        c.stop()


def test_without_a_camera_the_simulated_table_must_be_wired_in(tmp_path):
    # the service never builds the simulated table itself: the command line hands it over
    c = Companion(sim_config(tmp_path / "data"), web=False, print_qr=False, out=io.StringIO())
    try:
        with pytest.raises(StartError, match="simulated table"):
            c.start()
    finally:
        c.stop()
