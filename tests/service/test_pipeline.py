"""Camera thread and vision worker: a failing camera is a status, never a crash; frames in order."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from companion.rules import Config, observe, setup
from companion.service.heartbeat import Heartbeats
from companion.service.pipeline import CameraThread, VisionWorker
from companion.sim.testing import wait_until
from companion.vision.sources import FakeFrameSource


@dataclasses.dataclass
class Reading:
    status: str
    observation: object
    board_view: object
    message: str = ""
    white_bgr: object = None
    frame_view: object = None
    pose: object = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class StubDetector:
    """Reads the frame's top-left pixel as 'the board': 0 = setup position, else unreadable."""

    def __init__(self) -> None:
        self.obs = observe(setup(Config(player_count=3), None))
        self.calls = 0

    def detect(self, image, time_s, index):
        self.calls += 1
        if int(image[0, 0, 0]) != 0:
            return Reading("board-lost", None, None, "no markers")
        return Reading("ok", dataclasses.replace(self.obs, time=time_s, frame=index), image[:8, :8])


@dataclasses.dataclass
class Decision:
    state: str
    observation: object = None
    reason: str = ""


class StubGate:
    def __init__(self) -> None:
        self.seen: list[int] = []

    def update(self, time_s, view, reading, white=None, frame_view=None, pose=None):
        self.seen.append(reading.frame if reading is not None else -1)
        if reading is None:
            return Decision("no-board")
        return Decision("stable", reading if len(self.seen) % 3 == 0 else None)


def frames(n: int, value: int = 0) -> list:
    return [np.full((24, 32, 3), value, np.uint8) for _ in range(n)]


def test_camera_errors_become_a_status_and_frames_flow_again():
    script = [*frames(3), OSError("camera unplugged"), None, b"\xff\xd8garbage", *frames(4)]
    source = FakeFrameSource(script)
    hb = Heartbeats(stale_s=60.0)
    statuses: list[str] = []
    cam = CameraThread(source, hb, fps=1000.0, on_status=statuses.append, lossless=True)
    posted: list = []
    worker = VisionWorker(cam, StubDetector(), StubGate(), posted.append, hb)
    cam.start()
    worker.start()
    try:
        wait_until(lambda: cam.ended, 10, "the end of the script")
        wait_until(lambda: worker.frames == 7, 10, "every good frame analysed")
    finally:
        worker.stop()
        cam.stop()
    assert cam.frames == 7
    assert any("camera unplugged" in s for s in statuses), statuses
    assert "ok" in statuses[statuses.index(next(s for s in statuses if "unplugged" in s)) :]
    assert statuses[-1] == "ended"
    assert len(posted) == 2  # the stub gate emits on every third frame
    assert cam.failures >= 3


def test_lossless_mode_hands_on_every_frame_in_order():
    source = FakeFrameSource(frames(30))
    hb = Heartbeats(stale_s=60.0)
    cam = CameraThread(source, hb, fps=1000.0, lossless=True)
    gate = StubGate()
    worker = VisionWorker(cam, StubDetector(), gate, lambda obs: None, hb)
    cam.start()
    worker.start()
    try:
        wait_until(lambda: worker.frames == 30, 10, "30 frames")
    finally:
        worker.stop()
        cam.stop()
    assert gate.seen == list(range(30))


def test_an_unreadable_frame_reaches_the_gate_as_no_reading():
    source = FakeFrameSource([*frames(2), *frames(1, value=9), *frames(2)])
    hb = Heartbeats(stale_s=60.0)
    cam = CameraThread(source, hb, fps=1000.0, lossless=True)
    gate = StubGate()
    worker = VisionWorker(cam, StubDetector(), gate, lambda obs: None, hb)
    cam.start()
    worker.start()
    try:
        wait_until(lambda: worker.frames == 5, 10, "5 frames")
    finally:
        worker.stop()
        cam.stop()
    assert gate.seen == [0, 1, -1, 3, 4]
    assert hb.part_ok("detector")


def test_the_detector_waits_while_the_service_is_busy():
    source = FakeFrameSource(frames(20))
    hb = Heartbeats(stale_s=60.0)
    cam = CameraThread(source, hb, fps=1000.0, lossless=True)
    free = threading.Event()  # busy: a still board waits for the tracker
    worker = VisionWorker(
        cam, StubDetector(), StubGate(), lambda obs: None, hb, yield_to=free, max_yield_s=30.0
    )
    cam.start()
    worker.start()
    try:
        wait_until(lambda: cam.frames >= 4, 10, "frames taken")
        assert not free.wait(0.3)
        assert worker.frames == 0
        free.set()
        wait_until(lambda: worker.frames == 20, 10, "every frame analysed once free")
    finally:
        worker.stop()
        cam.stop()
