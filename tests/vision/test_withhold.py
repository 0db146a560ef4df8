"""Withhold an unsure space, not the whole board (docs/state-model.md §3, "A partial board"):
the detector leaves it out and says why, the stability gate confirms a still partial board
and never takes an unknown space for a change, the bench tells partial boards from wrong ones.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from companion.rules import Config, setup
from companion.rules.observation import Observation, SpaceObservation
from companion.sim.readings import (
    EXACT,
    PARTIAL,
    REFUSED,
    WRONG,
    board_outcome,
    frame_read,
    outcome_at,
    sweep,
)
from companion.sim.render import random_setup, render
from companion.sim.scenes import random_game_state
from companion.sim.vision_tally import Tally
from companion.vision.detector import OK, UNSURE, Detector, DetectorConfig, SpaceDetail
from companion.vision.detector.withhold import reason_kind, withheld_message, withhold
from companion.vision.geometry import BoardGeometry
from companion.vision.profile_setup import build_profile
from companion.vision.stability import GateConfig, StabilityGate

FPS = 10.0


def board_view() -> np.ndarray:
    """A still 160x160 board view: green cloth and a light track band."""
    view = np.full((160, 160, 3), (60, 110, 70), np.uint8)
    view[20:140:, 20:38] = view[20:38, 20:140] = (170, 190, 200)
    return view


def noisy(view: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.normal(0, 2.5, view.shape)
    return np.clip(view.astype(np.float64) + noise, 0, 255).astype(np.uint8)


def detail(**kw: object) -> SpaceDetail:
    return SpaceDetail((), (), dict(kw.pop("areas", {})), **kw)  # type: ignore[arg-type]


def board(**conf: float) -> Observation:
    """Spaces 1..4: one crest tower each with a blue wizard; ``s2=0.2`` sets a confidence."""
    return Observation(
        {
            s: SpaceObservation(1, "crest", {"blue": 1}, confidence=conf.get(f"s{s}", 0.99))
            for s in range(1, 5)
        },
        time=3.0,
        frame=9,
    )


class TestWithhold:
    CFG = DetectorConfig(withhold_below=0.5, withhold_max=0.5)

    def test_an_unsure_space_is_left_out_and_named_with_its_two_tower_counts(self) -> None:
        obs = board(s3=0.2)
        details = {s: detail() for s in obs.spaces}
        details[3] = detail(height_confidence=0.6, rival_towers=2)
        got = withhold(obs, details, self.CFG, {})
        assert sorted(got.observation.spaces) == [1, 2, 4] and not got.refusal
        assert got.observation.frame == 9 and got.observation.time == 3.0
        assert got.reasons == {3: "space 3: can't tell 1 or 2 towers"}
        assert withheld_message(got.reasons) == "not read: space 3: can't tell 1 or 2 towers"

    def test_the_reason_names_what_the_detector_is_least_sure_of(self) -> None:
        obs = board(s1=0.1, s2=0.1, s4=0.1)
        details = {
            1: detail(top_sure=0.55),
            2: detail(wizard_margin=0.02, areas={"blue": 1.43, "red": 0.1}),
            3: detail(),
            4: detail(height_confidence=0.55, forced=True, rival_towers=0),
        }
        cfg = replace(self.CFG, withhold_max=1.0)
        got = withhold(obs, details, cfg, {})
        assert got.reasons == {
            1: "space 1: can't tell a crest roof from a plain one",
            2: "space 2: can't tell 1 or 2 blue wizards",
            4: "space 4: the tower count does not add up (0 or 1 towers)",
        }
        # the bench tallies them by kind
        kinds = {s: reason_kind(r) for s, r in got.reasons.items()}
        assert kinds == {1: "top kind", 2: "wizards", 4: "tower total"}
        assert reason_kind("space 3: can't tell 1 or 2 towers") == "tower count"
        assert reason_kind("glare on space 5") == "glare"
        assert reason_kind("space 5: can't read it") == "not read"

    def test_glare_withholds_a_space_whatever_its_confidence(self) -> None:
        got = withhold(board(), {}, self.CFG, {2: 0.3})
        assert 2 not in got.observation.spaces and got.reasons == {2: "glare on space 2"}

    def test_a_board_with_most_spaces_withheld_is_refused_and_says_why(self) -> None:
        got = withhold(board(s1=0.1, s2=0.1), {}, self.CFG, {3: 0.5})
        assert got.refusal.startswith("can't read 3 of 4 spaces (glare on 3")
        assert got.refusal.endswith("re-checking the board")
        # half the board withheld is still a board
        assert not withhold(board(s1=0.1, s2=0.1), {}, self.CFG, {}).refusal


@pytest.fixture(scope="module")
def table() -> tuple[Detector, np.ndarray, np.ndarray]:
    geometry = BoardGeometry.default()
    nrng = np.random.default_rng(404)
    t = random_setup(nrng, geometry, tilt_range=(5.0, 15.0))
    first = render(setup(Config(player_count=3), seed=None), nrng, setup=t, hand=False)
    colours = list(Config(player_count=3).colours or ())
    profile = build_profile(first.frame, t.camera, geometry, colours)
    det = Detector(t.camera, geometry, profile)
    frame = render(random_game_state(random.Random(404), 3), nrng, setup=t, hand=False).frame
    return det, first.frame, frame


def fresh(table: tuple[Detector, np.ndarray, np.ndarray], **cfg: float) -> Detector:
    """A detector of the table with these settings, set up on the table's setup frame."""
    base, setup_frame, _ = table
    det = Detector(base.camera, base.geometry, base.profile, config=replace(base.config, **cfg))
    assert det.detect(setup_frame).reading is not None
    return det


def test_the_detector_leaves_its_least_sure_space_out_and_says_why(
    table: tuple[Detector, np.ndarray, np.ndarray],
) -> None:
    frame = table[2]
    full = fresh(table, withhold_below=0.0).detect(frame).reading
    assert full is not None and len(full.spaces) == 16
    least = min(full.spaces, key=lambda s: full.spaces[s].confidence)
    floor = full.spaces[least].confidence + 1e-4
    assert sum(o.confidence < floor for o in full.spaces.values()) <= 8
    got = fresh(table, withhold_below=floor).detect(frame)
    assert got.status == OK and got.observation is not None
    assert least not in got.observation.spaces
    assert least in got.withheld and f"space {least}" in got.withheld[least]
    assert got.withheld[least] in got.message
    # what was emitted is what was read, space for space
    assert got.reading is not None
    assert all(got.reading.spaces[s] == o for s, o in got.observation.spaces.items())
    # withholding every space refuses the board, with the reason
    none = fresh(table, withhold_below=1.01).detect(frame)
    assert none.status == UNSURE and none.observation is None
    assert none.message.startswith("can't read 16 of 16 spaces")


class TestGate:
    @staticmethod
    def run(readings: list[Observation]) -> list[Observation | None]:
        rng = np.random.default_rng(11)
        base = board_view()
        gate = StabilityGate()
        return [
            gate.update(i / FPS, noisy(base, rng), r).observation for i, r in enumerate(readings)
        ]

    def test_a_still_board_with_a_withheld_space_is_confirmed_once(self) -> None:
        partial = Observation({s: o for s, o in board().spaces.items() if s != 3})
        out = self.run([partial] * 30)
        emitted = [o for o in out if o is not None]
        assert len(emitted) == 1 and sorted(emitted[0].spaces) == [1, 2, 4]
        assert out.index(emitted[0]) / FPS <= GateConfig().still_s + 0.5

    def test_a_space_withheld_now_and_then_is_no_change(self) -> None:
        full = board()
        partial = Observation({s: o for s, o in full.spaces.items() if s != 3})
        # space 3 read on most frames: reported; withheld on a few: never a new board
        out = self.run([partial if i % 4 == 3 else full for i in range(40)])
        emitted = [o for o in out if o is not None]
        assert len(emitted) == 1 and sorted(emitted[0].spaces) == [1, 2, 3, 4]
        # space 3 withheld on most frames: unknown, the rest reported once
        out = self.run([full if i % 4 == 3 else partial for i in range(40)])
        emitted = [o for o in out if o is not None]
        assert len(emitted) == 1 and sorted(emitted[0].spaces) == [1, 2, 4]

    def test_a_space_that_becomes_readable_is_reported_then(self) -> None:
        full = board()
        partial = Observation({s: o for s, o in full.spaces.items() if s != 3})
        # (once it is read on the majority of the still period's frames)
        out = self.run([partial] * 6 + [full] * 34)
        emitted = [o for o in out if o is not None]
        assert [sorted(o.spaces) for o in emitted] == [[1, 2, 4], [1, 2, 3, 4]]


class TestBenchOutcomes:
    TRUTH = board()

    def test_exact_partial_wrong_refused(self) -> None:
        t = self.TRUTH
        assert board_outcome(t, t) == EXACT
        partial = Observation({s: o for s, o in t.spaces.items() if s != 2})
        assert board_outcome(t, partial) == PARTIAL
        wrong = Observation({**partial.spaces, 1: SpaceObservation(2, "crest", {"blue": 1})})
        assert board_outcome(t, wrong) == WRONG
        assert board_outcome(t, None) == REFUSED

    def test_other_thresholds_on_the_same_frames(self) -> None:
        t = self.TRUTH
        # space 1 read wrong at 0.3, space 2 right at 0.6
        full = Observation(
            {
                **t.spaces,
                1: SpaceObservation(2, "crest", {"blue": 1}, confidence=0.3),
                2: replace(t.spaces[2], confidence=0.6),
            }
        )
        read = frame_read(t, full)
        assert outcome_at(read, 0.0, 0.5) == (WRONG, 0)
        assert outcome_at(read, 0.5, 0.5) == (PARTIAL, 1)
        assert outcome_at(read, 0.7, 0.5) == (PARTIAL, 2)
        assert outcome_at(read, 0.7, 0.25) == (REFUSED, 2)
        assert outcome_at(frame_read(t, full, glare=[3]), 0.0, 0.5) == (REFUSED, 0)
        rows = sweep([read, frame_read(t, t), frame_read(t, None)], 0.5, (0.0, 0.5))
        assert rows[0]["wrong_pct"] == rows[0]["exact_pct"] == rows[0]["refused_pct"] == 33.33
        assert rows[1]["wrong_pct"] == 0.0 and rows[1]["partial_pct"] == 33.33
        assert rows[1]["withheld_space_pct"] == 12.5  # 1 of the 8 spaces of 2 boards

    def test_the_bench_counts_the_frames_whose_tower_total_forced_a_count(self) -> None:
        t = self.TRUTH
        tally = Tally()
        tally.add(t, t, t)
        # the setup's total moved a tower from space 1 (right after the move) and space 2
        moved = Observation({**t.spaces, 2: replace(t.spaces[2], towers=t.spaces[2].towers + 1)})
        tally.add(t, None, moved, forced=[1, 2])
        tally.add(t, None, None)
        tally.ms, tally.warp_ms = [5.0, 6.0, 7.0], [1.0]
        fg = tally.figures()
        assert (fg["forced_frames"], fg["forced_spaces"], fg["forced_right"]) == (1, 2, 1)
        assert fg["forced_frame_pct"] == 33.33

    def test_the_bench_counts_the_withheld_spaces_by_why(self) -> None:
        t = self.TRUTH
        tally = Tally()
        partial = Observation({s: o for s, o in t.spaces.items() if s not in (1, 2)})
        why = {1: "space 1: can't tell 1 or 2 red wizards", 2: "glare on space 2"}
        tally.add(t, partial, t, withheld=why)
        tally.add(
            t, Observation({s: o for s, o in t.spaces.items() if s != 1}), t, withheld={1: why[1]}
        )
        tally.add(t, None, None, withheld={3: "space 3: can't read it"})  # refused: not counted
        tally.ms, tally.warp_ms = [5.0, 6.0, 7.0], [1.0]
        assert tally.figures()["withheld_by_kind"] == {"glare": [1, 1], "wizards": [2, 2]}
