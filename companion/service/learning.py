"""The colour profile follows the light: learning from the boards the tracker commits.

The service thread *offers* every board the tracker has worked out (the visible part of the
tracked state, :func:`companion.rules.observe`); the vision thread, after a frame of a still
board, *learns* from that frame when the camera read every space it did not withhold exactly as
the offered board says (so the labels are the tracker's, and they describe this frame), at most
once every ``min_interval_s``. The detector then reads the next frames with the moved colours
(:func:`companion.vision.profile_learn.learn_from_board`), and what was learnt is reported (the
service keeps it in the log and the journal).

A restart begins again from the setup's colours (the sampled profile file is not rewritten:
a board learnt wrong must not outlive the game). See ``docs/vision.md`` ("Learning from
committed boards").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from companion.rules import Observation
from companion.service.detector_process import AnyDetector
from companion.service.pipeline import reading_of
from companion.vision.detector import Detection
from companion.vision.profile import ProfileError
from companion.vision.profile_learn import LearnLimits, learn_from_board
from companion.vision.stability import GateDecision

log = logging.getLogger(__name__)


class ColourTeacher:
    """Offers (any thread) and learning (the vision thread) of committed boards.

    :param min_interval_s: least time (s) between two learnings.
    :param limits: how much one board may teach (:class:`LearnLimits`).
    :param report: called (vision thread) with a line saying what was learnt, only when a
        colour moved or a measurement was refused.
    :param clock: monotonic seconds.
    """

    def __init__(
        self,
        min_interval_s: float = 20.0,
        limits: LearnLimits | None = None,
        report: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if min_interval_s < 0:
            raise ValueError(f"min_interval_s {min_interval_s}: expected >= 0")
        self.min_interval_s = min_interval_s
        self.limits = limits or LearnLimits()
        self.report = report
        self._clock = clock
        self._lock = threading.Lock()
        self._offered: Observation | None = None
        self._last_at: float | None = None
        self.learnt = 0
        """Boards learnt from so far."""
        self.last_line = ""
        """What the last learning said (empty before the first)."""

    def offer(self, board: Observation) -> None:
        """The tracker's board now (replaces an offer not yet learnt from)."""
        with self._lock:
            self._offered = board

    def after_frame(
        self, detector: AnyDetector, image: NDArray[np.uint8], det: Detection, gate: GateDecision
    ) -> bool:
        """Learn from this frame if an offered board matches it (see the module doc).

        :param detector: the detector that read ``image`` (its profile is replaced).
        :param image: the frame, ``(H, W, 3) uint8 BGR``.
        :param det: the detector's reading of it.
        :param gate: the stability gate's decision on it (only a ``stable`` board is learnt).
        :returns: True when the profile was replaced.
        """
        with self._lock:
            board = self._offered
            due = self._last_at is None or self._clock() - self._last_at >= self.min_interval_s
        obs = det.observation if det.ok else None
        if board is None or not due or gate.state != "stable" or obs is None:
            return False
        if det.pose is None or det.white_bgr is None:
            return False
        seen, want = reading_of(obs), reading_of(board)
        if any(want.get(s) != r for s, r in seen.items()):
            return False  # not this board (a move since, or the tracker holds another story)
        try:
            taught = learn_from_board(
                image,
                det.pose,
                det.white_bgr,
                detector.geometry,
                detector.profile,
                board,
                self.limits,
            )
        except ProfileError as exc:
            log.warning("colours not learnt: %s", exc)
            return False
        with self._lock:
            self._last_at = self._clock()
            if self._offered is board:
                self._offered = None
        detector.set_profile(taught.profile)
        self.learnt += 1
        self.last_line = taught.summary()
        if (taught.moved or taught.refused) and self.report is not None:
            self.report(self.last_line)
        return True
