"""The camera thread and the vision worker: frames in, stable observations onto the service queue.

* :class:`CameraThread` reads the frame source at the configured rate and keeps the **latest**
  frame under a ``threading.Condition`` (a slow detector never makes the camera fall behind). A
  source that fails (exception, ``None``, unreadable frame) is reported as a status — shown on the
  pages — and retried with a growing pause; the game is never touched.
  With ``lossless=True`` (the simulated table, recordings) every frame is handed on in order
  instead, so a seeded run is reproducible frame for frame.
* :class:`VisionWorker` runs the detector on each new frame and the stability gate on its
  reading, and posts an ``observation`` item to the service only when the board has been still.

Both beat their heartbeat (``camera``, ``detector``) when they did their job.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from companion.rules import Observation
from companion.service.detector_process import AnyDetector
from companion.service.heartbeat import Heartbeats
from companion.vision.detector import Detection
from companion.vision.sources import Frame, SourceStatus
from companion.vision.stability import GateDecision, StabilityGate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TakenFrame:
    """A frame as the camera thread took it: ``image`` ``(H, W, 3) uint8 BGR``, the source's
    ``index`` and ``time_s`` (s), and ``taken_at`` (monotonic s, for latency figures)."""

    image: NDArray[np.uint8]
    index: int
    time_s: float
    taken_at: float


class FrameReader(Protocol):
    """What the camera thread reads: ``companion.vision.sources.FrameSource`` or the simulated
    table's source. ``read`` never raises (a failure is a ``status``); ``status.kind`` is
    ``ended`` after the last frame of a file, folder, session or simulated game."""

    @property
    def status(self) -> SourceStatus: ...

    def read(self) -> Frame | None: ...

    def close(self) -> None: ...


class CameraThread:
    """Reads ``source`` (a :class:`FrameReader`) on its own thread.

    :param fps: frames per second to take (the pause between reads is ``1 / (fps * speed)``).
    :param speed: time factor (``inf`` = no pause at all).
    :param on_status: called with a status text whenever it changes (e.g. ``"ok"``,
        ``"no signal"``, ``"error: …"``).
    :param on_frame: called (camera thread) with each taken frame (recorder).
    :param lossless: hand on every frame in order (bounded buffer, blocks the camera) instead of
        only the latest.
    """

    def __init__(
        self,
        source: FrameReader,
        heartbeats: Heartbeats,
        fps: float = 8.0,
        speed: float = 1.0,
        on_status: Callable[[str], None] | None = None,
        on_frame: Callable[[TakenFrame], None] | None = None,
        lossless: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source = source
        self.heartbeats = heartbeats
        self.period_s = 0.0 if speed == float("inf") else 1.0 / (fps * speed)
        self.on_status = on_status
        self.on_frame = on_frame
        self.lossless = lossless
        self._clock = clock
        self._cond = threading.Condition()
        self._latest: TakenFrame | None = None
        self._buffer: deque[TakenFrame] = deque()
        self._buffer_max = 4
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.status = "starting"
        self.frames = 0
        self.failures = 0
        self.ended = False
        self._fps_window: deque[float] = deque(maxlen=32)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def fps(self) -> float:
        w = self._fps_window
        if len(w) < 2 or w[-1] <= w[0]:
            return 0.0
        return (len(w) - 1) / (w[-1] - w[0])

    def _set_status(self, text: str) -> None:
        if text != self.status:
            self.status = text
            if self.on_status is not None:
                self.on_status(text)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._loop()
            except Exception as exc:  # the thread's top: log, report, keep reading
                log.exception("camera thread failed")
                self.heartbeats.trouble("camera", f"error: {type(exc).__name__}: {exc}")
                self._stop.wait(0.5)

    def _loop(self) -> None:
        backoff = 0.0
        next_at = self._clock()
        while not self._stop.is_set():
            if self.period_s:
                delay = next_at - self._clock()
                if delay > 0 and self._stop.wait(delay):
                    break
                next_at = max(next_at + self.period_s, self._clock())
            frame = self.source.read()  # never raises: a failure is the source's status
            if frame is None:
                self.failures += 1
                raw = self.source.status
                status = str(raw) or "no frame"
                if raw.kind == "ended":
                    self.ended = True
                    self._set_status("ended")
                    self.heartbeats.trouble("camera", f"source {raw}")  # why, if it says
                    with self._cond:
                        self._cond.notify_all()
                    # keep the thread alive (and quiet) until stopped
                    self._stop.wait(0.5)
                    continue
                if not self.status.startswith("error"):
                    self._set_status(status if status != "ok" else "no frame")
                self.heartbeats.trouble("camera", self.status)
                backoff = min(1.0, backoff * 2 if backoff else 0.05)
                if self._stop.wait(backoff):
                    break
                continue
            backoff = 0.0
            image = frame.image
            if not isinstance(image, np.ndarray) or image.ndim != 3 or image.dtype != np.uint8:
                self.failures += 1
                self._set_status("error: unreadable frame")
                self.heartbeats.trouble("camera", "unreadable frame")
                continue
            taken = TakenFrame(image, int(frame.index), float(frame.time_s), self._clock())
            self.frames += 1
            self._fps_window.append(taken.taken_at)
            self._set_status("ok")
            self.heartbeats.beat("camera", f"{self.fps:.1f} fps")
            if self.on_frame is not None:
                self.on_frame(taken)
            with self._cond:
                if self.lossless:
                    while len(self._buffer) >= self._buffer_max and not self._stop.is_set():
                        self._cond.wait(0.2)
                    self._buffer.append(taken)
                self._latest = taken
                self._cond.notify_all()

    def buffered(self) -> int:
        """Frames taken and not yet handed on (lossless mode)."""
        with self._cond:
            return len(self._buffer)

    def latest(self) -> TakenFrame | None:
        with self._cond:
            return self._latest

    def wait_frame(self, after_index: int | None, timeout_s: float) -> TakenFrame | None:
        """The next frame to analyse: in lossless mode the oldest unconsumed frame, else the
        latest frame if it is newer than ``after_index``; None after ``timeout_s``."""
        deadline = self._clock() + timeout_s
        with self._cond:
            while not self._stop.is_set():
                if self.lossless:
                    if self._buffer:
                        frame = self._buffer.popleft()
                        self._cond.notify_all()
                        return frame
                elif self._latest is not None and (
                    after_index is None or self._latest.index != after_index
                ):
                    return self._latest
                left = deadline - self._clock()
                if left <= 0:
                    return None
                self._cond.wait(left)
        return None


Reading = tuple[int, str, tuple[tuple[str, int], ...], bool, bool, bool]
"""One space's reading: towers, top surface, visible wizards (colour, count), castle, witch,
raven."""


def reading_of(obs: Observation) -> dict[int, Reading]:
    """An observation's reading per space without its confidences: towers, top surface,
    visible wizards, castle, witch, raven (what two frames of one still board share)."""
    return {
        n: (s.towers, s.top, tuple(sorted(s.wizards.items())), s.castle, s.witch, s.raven)
        for n, s in obs.spaces.items()
    }


class EarlyReading:
    """Uses the stability gate's still period: the first readings of a board that has stopped
    moving are handed out as *candidates* (the tracker works them out while the gate waits), and
    when the gate then reports the still board with the same reading on every space, the
    candidate is what is reported — so the work done ahead is the work that counts.

    The gate still decides alone whether and when a board is reported; only which of its equal
    readings (they differ in confidences, frame number and time) goes to the tracker changes.
    Replaying a recording runs the same class, so it reports the same observations.

    :param tries: candidates per still period at most (a reading that flickered is replaced by
        the next frame's, up to this many times).
    """

    def __init__(self, tries: int = 2) -> None:
        self.tries = tries
        self._candidate: Observation | None = None
        self._used = 0

    def reset(self) -> None:
        self._candidate = None
        self._used = 0

    def frame(
        self, reading: Observation | None, decision: GateDecision
    ) -> tuple[Observation | None, Observation | None]:
        """One frame's ``reading`` (the detector's Observation or None) and the gate's
        ``decision`` -> ``(candidate, report)``: a new candidate Observation to work out ahead
        (or None), and the Observation to report for this frame (or None: the gate reports
        nothing)."""
        report = decision.observation
        state = decision.state
        if report is not None:
            candidate = self._candidate
            self.reset()
            if candidate is not None and reading_of(candidate) == reading_of(report):
                return None, candidate
            return None, report
        if state != "settling" or reading is None:
            self.reset()
            return None, None
        if self._used >= self.tries:
            return None, None
        if self._candidate is not None and reading_of(self._candidate) == reading_of(reading):
            return None, None
        self._candidate = dataclasses.replace(reading, unstable=False)
        self._used += 1
        return self._candidate, None


class VisionWorker:
    """Detector + stability gate on the camera thread's frames (see the module doc).

    :param detector: ``detect(image, time_s, index) -> Detection`` (``companion.vision.detector``,
        or the same in a child process: ``companion.service.detector_process``).
    :param gate: ``update(time_s, view, reading, white_bgr) -> GateDecision``
        (``companion.vision.stability``).
    :param post: called with each stable ``Observation`` (the service queue).
    :param on_decision: called with ``(frame, detection, decision)`` for every frame (recorder,
        bench, calibration view).
    :param prepare: when given, called with each early reading of a board that has stopped
        moving (:class:`EarlyReading`; the service's ``candidate`` item), so the tracker works
        on it while the gate waits.
    :param yield_to: when given, the worker takes its next frame only once this event is set
        (the service's ``free``: no still board waiting for the tracker), or after
        ``max_yield_s``. The phones wait for the tracker's result, not for the next frame; the
        camera thread keeps the latest frame meanwhile (the simulated table's lossless camera
        just waits).
    """

    def __init__(
        self,
        camera: CameraThread,
        detector: AnyDetector,
        gate: StabilityGate,
        post: Callable[[Observation], None],
        heartbeats: Heartbeats,
        on_decision: Callable[[TakenFrame, Detection, GateDecision], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        yield_to: threading.Event | None = None,
        max_yield_s: float = 2.0,
        prepare: Callable[[Observation], None] | None = None,
    ) -> None:
        self.prepare = prepare
        self.early = EarlyReading()
        self.camera = camera
        self.yield_to = yield_to
        self.max_yield_s = max_yield_s
        self.detector = detector
        self.gate = gate
        self.post = post
        self.heartbeats = heartbeats
        self.on_decision = on_decision
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames = 0
        self.detected = 0
        self.observations = 0
        self.detect_ms: deque[float] = deque(maxlen=256)
        self.last_detection: Detection | None = None
        self.last_frame: TakenFrame | None = None
        self.idle = threading.Event()
        self._last_image: NDArray[np.uint8] | None = None
        self.before_frame: Callable[[TakenFrame], None] | None = None
        self.after_frame: Callable[[TakenFrame, Detection, GateDecision], None] | None = None
        """Called (vision thread) with each frame, its reading and the gate's decision, after
        the board was posted (the colour teacher, :mod:`companion.service.learning`)."""

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="vision", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._loop()
            except Exception as exc:  # the thread's top: log, report, take the next frame
                log.exception("vision worker failed")
                self.heartbeats.trouble("detector", f"error: {type(exc).__name__}: {exc}")
                self._stop.wait(0.5)

    def _loop(self) -> None:
        last_index: int | None = None
        while not self._stop.is_set():
            if self.yield_to is not None:
                self.yield_to.wait(self.max_yield_s)
            frame = self.camera.wait_frame(last_index, 0.5)
            if frame is None:
                self.idle.set()
                # no new frame: the detector is idle, not stuck
                if self.camera.status == "ok" or self.camera.ended:
                    self.heartbeats.beat("detector", "waiting for a frame")
                else:
                    self.heartbeats.beat("detector", f"idle: camera {self.camera.status}")
                continue
            self.idle.clear()
            last_index = frame.index
            self.process(frame)

    @staticmethod
    def _reuse(detection: Detection, frame: TakenFrame) -> Detection:
        obs = detection.observation
        if obs is None:
            return detection
        return dataclasses.replace(
            detection,
            observation=dataclasses.replace(obs, time=frame.time_s, frame=frame.index),
        )

    def process(self, frame: TakenFrame) -> GateDecision | None:
        """Detect and gate one frame; returns the gate's decision (None when the detector
        failed on it: reported, and the worker goes on with the next frame)."""
        if self.before_frame is not None:
            self.before_frame(frame)
        t0 = self._clock()
        try:
            if frame.image is self._last_image and self.last_detection is not None:
                # the very same image object again (a source repeating its frame, e.g. the
                # simulated table over a still board): the reading cannot differ
                detection = self._reuse(self.last_detection, frame)
            else:
                detection = self.detector.detect(frame.image, frame.time_s, frame.index)
                self._last_image = frame.image
                self.detect_ms.append((self._clock() - t0) * 1000.0)
                self.detected += 1
        except Exception as exc:  # a detector bug on one frame must not stop the worker
            log.exception("detector failed on frame %d", frame.index)
            self.heartbeats.trouble("detector", f"error: {type(exc).__name__}: {exc}")
            return None
        self.frames += 1
        self.last_detection = detection
        self.last_frame = frame
        reading = detection.observation if detection.ok else None
        decision = self.gate.update(
            frame.time_s,
            detection.board_view,
            reading,
            detection.white_bgr,
            detection.frame_view,
            pose=detection.pose,
        )
        candidate, report = self.early.frame(reading, decision)
        if report is not decision.observation:
            decision = dataclasses.replace(decision, observation=report)
        if candidate is not None and self.prepare is not None:
            self.prepare(candidate)
        status = detection.status if not detection.ok else decision.state
        self.heartbeats.beat("detector", f"{status}: {detection.message or decision.reason}")
        if self.on_decision is not None:
            self.on_decision(frame, detection, decision)
        if decision.observation is not None:
            self.observations += 1
            self.post(decision.observation)
        if self.after_frame is not None:
            self.after_frame(frame, detection, decision)
        return decision
