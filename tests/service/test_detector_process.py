"""The detector in its own process reads frames exactly as the detector in the service does, and
a child that dies costs one frame, never the game or the vision worker."""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import numpy as np
import pytest

from companion.rules import Config, setup
from companion.service.child import pss_mb
from companion.service.detector_process import DetectorProcess, DetectorProcessError
from companion.service.vision import renewed
from companion.sim.render import random_setup, render
from companion.sim.scenes import random_game_state
from companion.vision.detector import BAD_FRAME, NO_FRAME, Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile_setup import build_profile

PLAYERS = 3


@pytest.fixture(scope="module")
def table():
    """A rendered session (seed 611): the detector built from its setup frame, and three frames
    of random positions."""
    geometry = BoardGeometry.default()
    nrng = np.random.default_rng(611)
    prng = random.Random(611)
    cam = random_setup(nrng, geometry, tilt_range=(5.0, 20.0))
    config = Config(player_count=PLAYERS)
    first = render(setup(config, seed=None), nrng, setup=cam, hand=False)
    profile = build_profile(first.frame, cam.camera, geometry, list(config.colours or ()))
    frames = [
        render(random_game_state(prng, PLAYERS), nrng, setup=cam, hand=False).frame
        for _ in range(3)
    ]
    return Detector(cam.camera, geometry, profile), first.frame, frames


@pytest.fixture
def process(table):
    det, _, _ = table
    proc = DetectorProcess.like(det)
    yield proc
    proc.close()


def _same(a, b) -> None:
    assert a.status == b.status
    assert a.message == b.message
    assert a.observation == b.observation
    assert a.withheld == b.withheld
    np.testing.assert_array_equal(a.board_view, b.board_view)


def test_the_child_reads_every_frame_as_the_detector_here_does(table, process):
    det, first, frames = table
    here = Detector(det.camera, det.geometry, det.profile)
    for i, frame in enumerate([first, *frames]):
        _same(process.detect(frame, 10.0 + i, i), here.detect(frame, 10.0 + i, i))
    got = process.detect(frames[0], 99.5, 7)
    assert got.ok and got.observation is not None
    assert (got.observation.time, got.observation.frame) == (99.5, 7)


def test_bad_frames_are_answered_as_the_detector_answers_them(process):
    assert process.detect(None).status == NO_FRAME
    assert process.detect(np.zeros((80, 80, 3), np.float32)).status == BAD_FRAME
    assert process.detect(np.zeros((20, 20, 3), np.uint8)).status == BAD_FRAME


def test_a_child_found_dead_is_replaced_before_the_frame(table, process):
    _, _, frames = table
    assert process.detect(frames[0]).ok
    pid = process.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    process._proc.wait(10)  # dead before the next frame comes
    assert process.detect(frames[1]).ok
    assert process.restarts == 1 and process.pid not in (None, pid)


def test_a_child_that_hangs_costs_one_frame_and_a_new_one_reads_the_next(table, process):
    _, _, frames = table
    assert process.detect(frames[0]).ok
    pid = process.pid
    assert pid is not None
    process.frame_timeout_s = 1.0
    os.kill(pid, signal.SIGSTOP)  # hung, as a child stuck in a driver would be
    t0 = time.monotonic()
    with pytest.raises(DetectorProcessError, match="did not answer in 1 s"):
        process.detect(frames[1])
    assert time.monotonic() - t0 < 5.0  # killed, not waited for
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # the hung child is gone
    assert process.detect(frames[1]).ok
    assert process.restarts == 1 and process.pid not in (None, pid)


def test_a_new_profile_reaches_the_child(table, process):
    det, first, frames = table
    # the colours of a dimmer evening, sampled from the setup frame darkened
    profile = build_profile(
        (first.astype(np.float32) * 0.85).astype(np.uint8),
        det.camera,
        det.geometry,
        list(Config(player_count=PLAYERS).colours or ()),
    )
    here = Detector(det.camera, det.geometry, det.profile)
    process.set_profile(profile)
    here.set_profile(profile)
    assert process.profile is profile
    _same(process.detect(frames[2]), here.detect(frames[2]))


def test_renewing_forgets_the_pose_in_the_same_child(table, process):
    det, _, frames = table
    process.detect(frames[0])
    pid = process.pid
    assert renewed(process) is process and process.pid == pid
    fresh = Detector(det.camera, det.geometry, det.profile)
    _same(process.detect(frames[1]), fresh.detect(frames[1]))


def test_two_threads_share_the_child_one_call_at_a_time(table, process):
    _, _, frames = table
    results: list[object] = []

    def read(frame: np.ndarray) -> None:
        results.append(process.detect(frame).observation)

    threads = [threading.Thread(target=read, args=(f,)) for f in frames]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 3 and all(r is not None for r in results)


def test_closing_ends_the_child(table):
    det, _, _ = table
    proc = DetectorProcess.like(det)
    pid = proc.pid
    assert pid is not None
    proc.close()
    assert proc.pid is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie, no orphan
    proc.close()  # idempotent


def test_the_childs_memory_is_measured_with_shared_pages_counted_once(process):
    now, peak = process.rss_mb()
    assert 0 < now <= peak
    # the libraries the child maps with its parent (the interpreter, NumPy, OpenCV) count
    # only in part towards its proportional set size
    assert 0 < pss_mb(process.pid) < now
    assert pss_mb(2**22 + 12345) == 0.0  # no such process
