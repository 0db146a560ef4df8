"""``companion bench vision --still K``: a still board as the table's camera delivers it.

At the table the camera streams about 8 frames a second and players leave the board still
for a second or more between moves; the detector reads every frame and the stability gate
(:mod:`companion.vision.stability`) emits the board once it has been still for
``GateConfig.still_s`` and the readings agree, per space by majority (a space the detector
withheld on one frame and read on the others is known; one misread on a noisy frame is
outvoted). In low light the detector also averages the still frames before reading
(``QualityLimits.low_light``). What the tracker and the players get is the gate's board, not
one frame's reading.

:func:`read_still` renders nothing itself: the bench's ideal render of one scene is passed
through the camera model ``K`` times (fresh sensor noise, flicker, motion-blur direction and
compression per frame, as consecutive frames differ) and read at ``fps``; the board scored is
the last one the gate emitted (None: it emitted nothing in those frames, a refusal).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from companion.rules.observation import Observation
from companion.vision.detector import Detection, Detector
from companion.vision.stability import GateConfig, StabilityGate

FPS = 8.0
"""Frames per second of the still board (the service's pipeline default)."""


def frames_needed(fps: float = FPS) -> int:
    """The fewest frames of a still board after which the default stability gate can emit it:
    the first frame is only the gate's reference for motion, the still period starts at the
    second, and the last must come ``GateConfig.still_s`` or more after that (6 at 8 frames/s
    and 0.4 s). With fewer, every board is scored as a refusal."""
    return math.ceil(GateConfig().still_s * fps - 1e-9) + 2


def still_problem(frames: int, fps: float = FPS) -> str | None:
    """Why ``--still frames`` cannot score a board (fewer than :func:`frames_needed`), else
    None (0 = each frame read once)."""
    if 0 < frames < frames_needed(fps):
        return (
            f"--still {frames}: the stability gate emits a board after it has been still for "
            f"{GateConfig().still_s:g} s, at least {frames_needed(fps)} frames at {fps:g} "
            "frames/s (fewer would score every board as refused)"
        )
    return None


@dataclass(frozen=True)
class StillReading:
    """The gate's board over one still period and what the detector did on the way.

    :param emitted: the last board the gate emitted (None: nothing emitted).
    :param last: the detector's answer on the last frame.
    :param ms: the detector's time per frame, ms.
    """

    emitted: Observation | None
    last: Detection
    ms: list[float]


def read_still(detector: Detector, frames: Sequence[np.ndarray], fps: float = FPS) -> StillReading:
    """Read one still board through the detector and a fresh stability gate.

    :param detector: the session's detector (its pose already acquired).
    :param frames: the frames of the still board, each ``(H, W, 3) uint8 BGR``, in order.
    :param fps: frame rate, frames/s (the frames' timestamps are ``i / fps`` s).
    :raises ValueError: no frames, or ``fps`` <= 0.
    """
    if not frames or fps <= 0:
        raise ValueError(f"read_still: frames and fps > 0 needed, got {len(frames)}, {fps}")
    gate = StabilityGate()
    emitted: Observation | None = None
    ms: list[float] = []
    det: Detection | None = None
    for i, image in enumerate(frames):
        t = i / fps
        t0 = time.perf_counter()
        det = detector.detect(image, t, i)
        ms.append((time.perf_counter() - t0) * 1000)
        d = gate.update(
            t, det.board_view, det.observation if det.ok else None, det.white_bgr, det.frame_view
        )
        if d.observation is not None:
            emitted = d.observation
    assert det is not None
    return StillReading(emitted, det, ms)
