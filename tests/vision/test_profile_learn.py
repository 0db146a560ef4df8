"""The colours follow the light: learning from the boards the tracker commits
(``companion.vision.profile_learn``, ``companion.service.learning``)."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest

from companion.rules import Config, Observation, setup
from companion.service.learning import ColourTeacher
from companion.sim.render import render
from companion.sim.render.camera_model import (
    camera_frame,
    play_setup,
    random_effects,
    session_setup,
)
from companion.sim.scenes import random_game_state
from companion.vision.detector import Detection, Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ProfileError
from companion.vision.profile_learn import LearnLimits, learn_from_board
from companion.vision.profile_setup import build_profile
from companion.vision.stability import GateDecision

STABLE = GateDecision("stable")


@dataclass
class Session:
    """A setup frame and four play frames (with their true boards) of one table whose camera's
    white balance drifted far after setup."""

    detector_args: tuple[Any, ...]
    setup_frame: np.ndarray
    frames: list[tuple[np.ndarray, Observation]]

    def detector(self) -> Detector:
        det = Detector(*self.detector_args)
        det.detect(self.setup_frame)  # the pose, as a fixed camera has it
        return det


def drifted_session(seed: int, boards: int) -> Session:
    """A table whose white balance drifted far after setup, with ``boards`` play frames."""
    geometry = BoardGeometry.default()
    crng, nrng = np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2])
    prng = random.Random(seed)
    effects = random_effects(crng, {"white_balance": "severe"})
    table = session_setup(nrng, effects, geometry, tilt_range=(5.0, 15.0))

    def shoot(state: Any, tab: Any, phase: str) -> tuple[np.ndarray, Observation]:
        res = render(state, nrng, setup=tab, hand=False, ideal=True)
        frame = camera_frame(res, effects, crng, geometry.board_size, phase)
        return frame, res.observation

    config = Config(player_count=4)
    start = setup(config, seed=None)
    setup_frame, _ = shoot(start, table, "setup")
    profile = build_profile(setup_frame, table.camera, geometry, list(config.colours or ()))
    play = play_setup(table, effects, crng)
    frames = [shoot(random_game_state(prng, 4), play, "play") for _ in range(boards)]
    return Session((table.camera, geometry, profile), setup_frame, frames)


@pytest.fixture(scope="module")
def drifted() -> Session:
    return drifted_session(71, 6)


def misread(det: Detector, frames: list[tuple[np.ndarray, Observation]]) -> int:
    """Spaces not given right (withheld or wrong) over ``frames``."""
    bad = 0
    for frame, truth in frames:
        got = det.detect(frame)
        seen = got.observation.spaces if got.observation is not None else {}
        for space, want in truth.spaces.items():
            o = seen.get(space)
            if o is None or replace(o, confidence=want.confidence) != want:
                bad += 1
    return bad


@pytest.mark.long
def test_after_three_committed_boards_the_next_boards_are_read_better(
    drifted: Session,
) -> None:
    """The white balance moved after setup: the setup's colours misplace the wizards. Three
    committed boards' frames teach the new colours, and the three boards after them (not
    learnt from) are read with fewer spaces wrong or withheld: on four tables together, and
    worse on none."""
    totals = [0, 0]
    for session in [drifted, *(drifted_session(seed, 6) for seed in (72, 73, 74))]:
        det = session.detector()
        later = session.frames[3:]
        before = misread(det, later)
        for frame, board in session.frames[:3]:
            got = det.detect(frame)
            assert got.pose is not None and got.white_bgr is not None
            taught = learn_from_board(
                frame, got.pose, got.white_bgr, det.geometry, det.profile, board
            )
            det.set_profile(taught.profile)
        assert taught.summary().startswith("colours")
        after = misread(det, later)
        assert after <= before, (before, after)
        totals[0] += before
        totals[1] += after
    assert totals[1] < totals[0], totals


def test_a_board_that_does_not_fit_the_frame_teaches_nothing_wrong(drifted: Session) -> None:
    """The tracker's board said blue where red stands (and the reverse): those colours are
    measured far from what they were, or nearer the other colour, and are left alone."""
    det = drifted.detector()
    frame, board = drifted.frames[0]
    got = det.detect(frame)
    assert got.pose is not None and got.white_bgr is not None
    swap = {"red": "blue", "blue": "red"}
    lied = Observation(
        spaces={
            s: replace(o, wizards={swap.get(c, c): n for c, n in o.wizards.items()})
            for s, o in board.spaces.items()
        }
    )
    assert any(set(o.wizards) & {"red", "blue"} for o in board.spaces.values())
    taught = learn_from_board(frame, got.pose, got.white_bgr, det.geometry, det.profile, lied)
    for colour in ("red", "blue"):
        if taught.pixels.get(colour, 0) >= LearnLimits().min_pixels:
            assert colour in taught.refused, taught.summary()
            assert np.allclose(
                taught.profile.classes[colour].mean, det.profile.classes[colour].mean
            )


def test_bad_frames_are_refused_and_change_nothing(drifted: Session) -> None:
    det = drifted.detector()
    frame, board = drifted.frames[0]
    got = det.detect(frame)
    assert got.pose is not None and got.white_bgr is not None
    before = det.profile
    with pytest.raises(ProfileError, match="uint8"):
        learn_from_board(
            frame.astype(np.float32),  # type: ignore[arg-type]
            got.pose,
            got.white_bgr,
            det.geometry,
            before,
            board,
        )
    with pytest.raises(ProfileError, match="white"):
        learn_from_board(frame, got.pose, np.zeros(3), det.geometry, before, board)
    assert det.profile is before
    with pytest.raises(ValueError):
        LearnLimits(rate=0.0)


def test_the_teacher_learns_only_from_a_still_frame_that_reads_as_the_board(
    drifted: Session,
) -> None:
    """The vision thread learns when the camera read every space it did not withhold as the
    tracker's board says, and the board stands still; not twice within the interval; and says
    in one line what it learnt."""
    det = drifted.detector()
    lines: list[str] = []
    now = [100.0]
    teacher = ColourTeacher(min_interval_s=20.0, report=lines.append, clock=lambda: now[0])
    frame, board = drifted.frames[0]
    got: Detection = det.detect(frame)
    assert got.observation is not None
    assert not teacher.after_frame(det, frame, got, STABLE)  # nothing offered yet
    # a board the camera reads otherwise (one more tower on a read space): not this frame
    space, o = next((s, o) for s, o in got.observation.spaces.items() if o.towers >= 1)
    other = Observation(spaces={**board.spaces, space: replace(o, towers=o.towers + 1)})
    teacher.offer(other)
    assert not teacher.after_frame(det, frame, got, STABLE)
    assert det.profile is drifted.detector_args[2]
    teacher.offer(board)
    assert not teacher.after_frame(det, frame, got, GateDecision("moving"))
    # the reading's spaces as the tracker has them (withheld ones come from the board)
    agree = Observation(spaces={**board.spaces, **got.observation.spaces})
    teacher.offer(agree)
    assert teacher.after_frame(det, frame, got, STABLE)
    assert det.profile is not drifted.detector_args[2]
    assert teacher.learnt == 1 and lines and lines[0].startswith("colours learnt")
    teacher.offer(agree)
    now[0] += 5.0
    assert not teacher.after_frame(det, frame, got, STABLE)  # within the interval
    now[0] += 20.0
    assert teacher.after_frame(det, frame, got, STABLE)
