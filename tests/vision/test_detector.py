"""The detector reads rendered tables (seeded, three camera tilts, random light) like a camera.

The detector gets only what a real table has: the frame, the camera file, the board geometry and
a colour profile sampled from a frame of the setup position. The renderer's ground truth is used
for the assertions only. Seeds here are below 1000; the bench uses others.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace

import numpy as np
import pytest

from companion.rules import Config, observe, setup
from companion.rules.observation import Observation
from companion.sim.render import RenderResult, TableSetup, random_setup, render
from companion.sim.scenes import random_game_state
from companion.vision.detect_height import MODEL_PATH, HeightModel, n_features
from companion.vision.detector import BAD_FRAME, BOARD_LOST, NO_FRAME, Detector, DetectorConfig
from companion.vision.detector.heights import joint_heights
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile
from companion.vision.profile_setup import build_profile

PLAYERS = 4
SESSIONS = ((101, (0.0, 10.0)), (102, (10.0, 20.0)), (103, (20.0, 35.0)))
FRAMES_PER_SESSION = 4


@dataclass
class Session:
    tilt: float
    detector: Detector
    setup_frame: RenderResult
    frames: list[RenderResult]
    table: TableSetup


def _key(o: object) -> tuple[object, ...]:
    return (o.towers, o.top, dict(o.wizards), o.castle)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def sessions() -> list[Session]:
    geometry = BoardGeometry.default()
    colours = list(Config(player_count=PLAYERS).colours or ())
    out = []
    for seed, tilt in SESSIONS:
        nrng = np.random.default_rng(seed)
        prng = random.Random(seed)
        table = random_setup(nrng, geometry, tilt_range=tilt)
        first = render(
            setup(Config(player_count=PLAYERS), seed=None), nrng, setup=table, hand=False
        )
        profile = build_profile(first.frame, table.camera, geometry, colours)
        detector = Detector(table.camera, geometry, profile)
        frames = [
            render(random_game_state(prng, PLAYERS), nrng, setup=table, hand=False)
            for _ in range(FRAMES_PER_SESSION)
        ]
        out.append(Session(table.pose.tilt_deg, detector, first, frames, table))
    return out


def share_right(sessions: list[Session], field: str) -> float:
    right = total = 0
    for s in sessions:
        for r in s.frames:
            det = s.detector.detect(r.frame)
            # (a board refused for a space it is unsure of is still scored: what was read)
            obs = det.reading
            assert obs is not None, det.message
            for space, truth in r.observation.spaces.items():
                got = obs.spaces[space]
                total += 1
                if field == "all":
                    right += _key(got) == _key(truth)
                elif field == "wizards":
                    right += dict(got.wizards) == dict(truth.wizards)
                else:
                    right += getattr(got, field) == getattr(truth, field)
    return right / total


class TestReadingTheTable:
    def test_the_castle_is_where_it_stands(self, sessions: list[Session]) -> None:
        assert share_right(sessions, "castle") >= 0.98

    def test_stack_heights_from_the_oblique_view(self, sessions: list[Session]) -> None:
        # measured 0.979 on these seeds (0.87 with the rim rule alone); the target is 0.9975
        # (the bench reports the gap)
        assert share_right(sessions, "towers") >= 0.96

    def test_wizards_by_colour_and_count(self, sessions: list[Session]) -> None:
        assert share_right(sessions, "wizards") >= 0.95  # measured 0.974

    def test_whole_spaces(self, sessions: list[Session]) -> None:
        assert share_right(sessions, "all") >= 0.92  # measured 0.953

    def test_every_space_is_reported_with_a_confidence(self, sessions: list[Session]) -> None:
        s = sessions[0]
        det = s.detector.detect(s.frames[0].frame, time_s=12.5, index=7)
        # every space is read with a confidence (the emitted board may withhold the unsure)
        assert det.observation is not None and det.reading is not None
        obs = det.reading
        assert sorted(obs.spaces) == list(range(1, 17))
        assert set(det.observation.spaces) | set(det.withheld) == set(obs.spaces)
        assert obs.time == 12.5 and obs.frame == 7
        assert obs.unstable  # only the stability gate declares a reading stable
        assert all(0.0 <= o.confidence <= 1.0 for o in obs.spaces.values())
        # the JSON form is the contract with the tracker
        assert Observation.from_json(obs.to_json(), track_length=16) == obs

    def test_the_setup_position_castle_and_towers(self, sessions: list[Session]) -> None:
        # R-SETUP-1/3: castle on 1, one tower on each of 2..10, 11..16 empty
        for s in sessions:
            obs = s.detector.detect(s.setup_frame.frame).reading
            assert obs is not None
            assert obs.spaces[1].castle
            heights = [obs.spaces[k].towers for k in range(2, 17)]
            want = [1] * 9 + [0] * 6
            assert sum(a == b for a, b in zip(heights, want, strict=True)) >= 10


@pytest.fixture(scope="module")
def castle_on_a_tower(sessions: list[Session]) -> tuple[Session, list[tuple[RenderResult, int]]]:
    """Seeded game frames with the raven castle on a tower, each with the castle's space."""
    s = sessions[0]
    prng = random.Random(7)
    nrng = np.random.default_rng(7)
    out: list[tuple[RenderResult, int]] = []
    for _ in range(400):
        state = random_game_state(prng, PLAYERS)
        at = [k for k, o in observe(state).spaces.items() if o.castle and o.towers > 0]
        if at:
            out.append((render(state, nrng, setup=s.table, hand=False), at[0]))
            if len(out) == 4:
                return s, out
    pytest.fail("too few seeded game states with the castle on a tower")


class TestTheRavenCastle:
    def test_the_roof_under_the_castle_is_the_rules_crest_and_the_space_is_read(
        self, castle_on_a_tower: tuple[Session, list[tuple[RenderResult, int]]]
    ) -> None:
        # the castle hides its roof; it stands on a crest roof by R-RAVEN-3/5, so the space
        # (the castle's place and its tier) is emitted, not withheld for the unseen roof
        s, frames = castle_on_a_tower
        cfg = s.detector.config
        emitted = 0
        for res, space in frames:
            truth = res.observation.spaces[space]
            det = s.detector.detect(res.frame)
            assert det.observation is not None and det.reading is not None, det.message
            got = det.reading.spaces[space]
            assert got.castle and got.top == "crest" == truth.top
            d = det.details[space]
            # never as sure as a roof that shows its crest
            assert d.top_sure == cfg.castle_roof_sure < cfg.ink_sure
            if not d.forced:
                assert got.towers == truth.towers
                assert space in det.observation.spaces, det.withheld.get(space)
                emitted += 1
        assert emitted >= 2

    def test_the_hand_built_castle_tier_is_unsure_when_the_tower_counts_do_not_add_up(
        self, castle_on_a_tower: tuple[Session, list[tuple[RenderResult, int]]]
    ) -> None:
        # the setup counted one tower more than the board shows (one was knocked off): some
        # count must change, and the castle's tier (the hand-built stage's, no probability of
        # its own) is one of the counts added up
        s, frames = castle_on_a_tower
        off = _one_tower_more(s.detector.profile)
        cfg = DetectorConfig(castle_method="hand")
        for res, space in frames:
            det = Detector(s.detector.camera, s.detector.geometry, off, config=cfg).detect(
                res.frame
            )
            d = det.details[space]
            assert d.forced and d.height_confidence <= s.detector.config.forced_confidence
            assert "does not add up" in det.withheld[space]

    def test_the_castle_networks_tier_is_one_of_the_counts_the_total_weighs(
        self, castle_on_a_tower: tuple[Session, list[tuple[RenderResult, int]]]
    ) -> None:
        # with the castle network the castle's tier has a probability like any count: the
        # total that does not add up forces the least likely count, and only where it moves
        # a count is that space capped and named
        s, frames = castle_on_a_tower
        off = _one_tower_more(s.detector.profile)
        fc = s.detector.config.forced_confidence
        for res, space in frames:
            det = Detector(s.detector.camera, s.detector.geometry, off).detect(res.frame)
            forced = [k for k, d in det.details.items() if d.forced]
            assert forced
            for k in forced:
                assert det.details[k].height_confidence <= fc
                assert "does not add up" in det.withheld[k]
            assert det.reading is not None and det.reading.spaces[space].castle
            if space not in forced:
                assert det.reading.spaces[space].towers == res.observation.spaces[space].towers


def _one_tower_more(prof: ColourProfile) -> ColourProfile:
    """``prof`` with one tower more counted at setup than the board shows."""
    meta = dict(prof.meta)
    meta["towers"] = int(meta["towers"]) + 1
    return ColourProfile(dict(prof.classes), prof.reject_d2, prof.white_bgr, meta)


class TestBadFrames:
    @pytest.fixture
    def detector(self, sessions: list[Session]) -> Detector:
        return sessions[1].detector

    @pytest.mark.parametrize(
        ("frame", "status", "words"),
        [
            (None, NO_FRAME, "no frame"),
            (np.zeros((864, 1536), np.uint8), BAD_FRAME, "shape"),
            (np.zeros((864, 1536, 4), np.uint8), BAD_FRAME, "shape"),
            (np.zeros((864, 1536, 3), np.float32), BAD_FRAME, "dtype"),
            (np.zeros((20, 30, 3), np.uint8), BAD_FRAME, "too small"),
            (np.zeros((1000, 1000, 3), np.uint8), BAD_FRAME, "calibrated at"),
            (b"\xff\xd8\xff\xe0 not a decoded image", BAD_FRAME, "bytes"),
        ],
    )
    def test_unusable_input_gives_a_status_and_no_observation(
        self, detector: Detector, frame: object, status: str, words: str
    ) -> None:
        det = detector.detect(frame)
        assert det.status == status
        assert words in det.message
        assert det.observation is None

    def test_noise_and_black_frames_lose_the_board(self, detector: Detector) -> None:
        rng = np.random.default_rng(9)
        for frame in (
            rng.integers(0, 256, (864, 1536, 3), dtype=np.uint8),
            np.zeros((864, 1536, 3), np.uint8),
        ):
            det = detector.detect(frame)
            assert det.status == BOARD_LOST
            assert det.observation is None

    def test_a_truncated_jpeg_is_refused(self, sessions: list[Session]) -> None:
        s = sessions[1]
        frame = s.frames[0].frame.copy()
        frame[500:] = 128  # what OpenCV decodes for the missing tail of a cut-off JPEG
        det = s.detector.detect(frame)
        assert det.status == BAD_FRAME and "truncated" in det.message
        assert det.observation is None
        # and the next good frame is read again
        again = s.detector.detect(s.frames[0].frame)
        assert again.reading is not None, again.message


class TestNeverMoreThanTheRulesAllow:
    def test_a_profile_that_sees_wizards_everywhere_still_gives_a_valid_reading(
        self, sessions: list[Session]
    ) -> None:
        # a colour class that matches the track itself (as a badly lit profile might): every
        # space looks full of blue wizards, yet a top never holds more than 6 (R-WIZ-4)
        s = sessions[0]
        prof = s.detector.profile
        classes = {
            n: c for n, c in prof.classes.items() if not n.startswith("track") and n != "border"
        }
        classes["blue"] = replace(prof.classes["track"], name="blue", group="wizard")
        classes["yellow"] = replace(prof.classes["border"], name="yellow", group="wizard")
        bad = ColourProfile(classes, prof.reject_d2, prof.white_bgr, dict(prof.meta))
        # the colour areas alone (the wizard network, which takes their measurements beside
        # the crops, may not believe them)
        det = Detector(
            s.detector.camera,
            s.detector.geometry,
            bad,
            config=DetectorConfig(wizard_method="hand"),
        ).detect(s.frames[0].frame)
        # (such a reading is unsure and may be refused; what was read is still valid)
        obs = det.reading
        assert obs is not None, det.message
        totals = [sum(o.wizards.values()) for o in obs.spaces.values()]
        assert max(totals) <= 6
        assert max(totals) >= 3  # the misreading is really there, and capped


class TestStackHeights:
    def test_the_board_keeps_its_towers_when_one_roof_is_faint(self) -> None:
        # three spaces; alone the faint middle roof would be read as empty (0.55 vs 0.45), but
        # the board holds 3 towers and the first two are sure: the middle one is a tower
        prob = np.array(
            [
                [0.02, 0.95, 0.03],
                [0.55, 0.45, 0.00],
                [0.01, 0.97, 0.02],
            ],
            np.float32,
        )
        assert list(np.argmax(prob, axis=1)) == [1, 0, 1]
        assert list(joint_heights(prob, [False] * 3, 3)) == [1, 1, 1]
        # the castle's space keeps the height read from the castle's rim
        assert list(joint_heights(prob, [False, True, False], 2)) == [1, 0, 1]
        # no assignment can hold more towers than the tiers allow
        assert joint_heights(prob, [False] * 3, 7) is None

    def test_joint_heights_are_the_most_probable_that_add_up(self) -> None:
        # against every assignment (seeded random probabilities, 4 spaces, 0..3 towers each)
        import itertools

        rng = np.random.default_rng(11)
        for _ in range(20):
            prob = rng.dirichlet(np.ones(4), size=4).astype(np.float32)
            total = int(rng.integers(0, 10))
            got = joint_heights(prob, [False] * 4, total)
            best_p = max(
                float(np.prod(prob[np.arange(4), ks]))
                for ks in itertools.product(range(4), repeat=4)
                if sum(ks) == total
            )
            assert got is not None and sum(got) == total
            assert float(np.prod(prob[np.arange(4), got])) == pytest.approx(best_p, rel=1e-4)

    def test_the_shipped_height_model_loads_and_a_bad_file_is_refused(self, tmp_path) -> None:
        model = HeightModel.load()
        assert model is not None, "the trained height model ships with the package"
        assert model.n_features == n_features(model.max_towers)
        data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        again = HeightModel.from_json(data)
        x = np.random.default_rng(5).normal(0, 1, (4, model.n_features)).astype(np.float32)
        np.testing.assert_allclose(again.probabilities(x), model.probabilities(x), atol=1e-6)
        assert np.allclose(model.probabilities(x).sum(axis=1), 1.0)
        bad = dict(data, w2=data["w2"][:-1])
        with pytest.raises(ValueError, match="shapes"):
            HeightModel.from_json(bad)
        with pytest.raises(ValueError, match="not a height model"):
            HeightModel.from_json({"format": "something else"})
        assert HeightModel.load(tmp_path / "missing.json") is None

    def test_the_shipped_height_model_does_not_read_the_wall_colour(self) -> None:
        # the wall class is sampled on walls a near-overhead camera hardly sees: the shipped
        # model must give the same answer whatever the wall-coloured shares are
        from companion.vision.detect_height import DEFAULT_IGNORE, ignored_columns

        model = HeightModel.load()
        assert model is not None
        cols = list(ignored_columns(DEFAULT_IGNORE, model.max_towers))
        assert cols, "the wall shares are left out"
        x = np.random.default_rng(6).normal(0, 1, (8, model.n_features)).astype(np.float32) + 1
        y = x.copy()
        y[:, cols] = np.random.default_rng(7).uniform(0, 1, (8, len(cols)))
        np.testing.assert_allclose(model.probabilities(x), model.probabilities(y), atol=1e-5)
        with pytest.raises(ValueError, match="feature group"):
            ignored_columns(("walls",), model.max_towers)

    def test_the_untouched_setup_position_is_read_exactly(self, sessions: list[Session]) -> None:
        # the tracker starts from this reading: castle on 1, one tower on each of 2..10
        # (crest on even spaces, plain on odd), wizards as seated (R-SETUP-1/3/6)
        for s in sessions:
            obs = s.detector.detect(s.setup_frame.frame).reading
            assert obs is not None
            for space, truth in s.setup_frame.observation.spaces.items():
                assert _key(obs.spaces[space]) == _key(truth), (s.tilt, space)


class TestSensorModes:
    def test_a_full_resolution_frame_reads_as_the_ordinary_mode_does(
        self, sessions: list[Session]
    ) -> None:
        # a 12 MP mode shows the board three times larger in pixels: the reading must not
        # depend on it, and the pose comes back in the pixels of the frame given
        import cv2

        s = sessions[0]
        cam = s.detector.camera
        w, h = cam.size
        big = Detector(cam.scaled_to(3 * w, 3 * h), s.detector.geometry, s.detector.profile)
        small = Detector(cam, s.detector.geometry, s.detector.profile)
        same = total = 0
        for r in [s.setup_frame, *s.frames]:
            up = cv2.resize(r.frame, (3 * w, 3 * h), interpolation=cv2.INTER_LINEAR)
            got, ref = big.detect(up), small.detect(r.frame)
            # (a board refused for a space it is unsure of is still scored: what was read)
            obs = got.reading
            assert obs is not None, got.message
            for space, truth in r.observation.spaces.items():
                total += 1
                same += _key(obs.spaces[space]) == _key(truth)
            assert got.pose is not None and ref.pose is not None
            corners = np.asarray(s.detector.geometry.board_outline(), np.float64)
            np.testing.assert_allclose(
                got.pose.board_to_image(corners), 3 * ref.pose.board_to_image(corners) + 1, atol=3
            )
        assert same / total >= 0.95
