"""The simulated camera renders in a child process, and the detector reads frames in one, that
never outlive the companion: stopped with Ctrl-C or SIGTERM, or killed with ``kill -9``, no
renderer or detector process is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import start_demo, wait_for_start, write_config

CAMERA = b"companion.sim.simrender"
DETECTOR = b"companion.service.detector_process"


def camera_children(pid: int, module: bytes = CAMERA) -> list[int]:
    """Processes whose parent is ``pid`` and that run ``module`` (the simulated camera)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and module in cmdline:
            out.append(int(entry.name))
    return out


def gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has exited


def start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], list[int], Path]:
    cfg = write_config(
        tmp_path,
        {"camera": {"fps": 5.0}, "game": {"players": 3}, "simulation": {"seed": 2, "speed": 4.0}},
    )
    log = tmp_path / "companion.log"
    proc, _url = start_demo(cfg, log)

    def children() -> list[int] | None:
        found = [camera_children(proc.pid, m) for m in (CAMERA, DETECTOR)]
        return [ids[0] for ids in found] if all(found) else None

    pids = wait_for_start(proc, log, children, 30, 0.1, "no camera or detector process")
    return proc, pids, log


def wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_the_camera_and_detector_processes_end_with_the_companion(tmp_path, how):
    proc, pids, log = start(tmp_path)
    try:
        time.sleep(1.0)  # frames are being rendered
        assert proc.poll() is None, log.read_text()
        proc.send_signal(getattr(signal, how))
        code = proc.wait(timeout=30)
        if how != "SIGKILL":
            assert code == 0, log.read_text()
        for child, what in zip(pids, ("camera", "detector"), strict=True):
            assert wait_gone(child, 10), (
                f"the {what} process {child} outlived the companion ({how})"
            )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for child in pids:
            if not gone(child):
                os.kill(child, signal.SIGKILL)
