"""The table renderer: seeded frames a camera could have taken, with ground truth beside them."""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from companion.rules import Config, observe, setup
from companion.rules.model import Track
from companion.rules.serialize import dump_state
from companion.sim.render import (
    WIZARD_HSV,
    Lighting,
    RenderError,
    fit_pose,
    random_setup,
    render,
    render_hand_sequence,
    render_move_sequence,
    simulated_camera,
    write_camera_file,
)
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry

ARUCO = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)


def _setup_state(players: int = 4, track: Track | None = None) -> dict[str, Any]:
    cfg = Config(player_count=players) if track is None else Config(players, track=track)
    return dump_state(setup(cfg, seed=3))


def _lone_wizard(colour: str, space: int, tier: int) -> dict[str, Any]:
    """Six players, every wizard in the castle except one ``colour-1`` at (space, tier); towers
    stacked so that ``space`` has at least ``tier`` towers."""
    d = _setup_state(6)
    d["wizards"] = {w: "castle" for w in d["wizards"]}
    towers = ["R1", "P1", "R2", "P2", "R3", "P3", "R4", "P4", "R5"]
    stacks: dict[str, list[str]] = {str(space): towers[:tier]} if tier else {}
    free = [s for s in range(2, 17) if s != space and s != 1]
    for i, t in enumerate(towers[tier:]):
        stacks[str(free[i])] = [t]
    d["stacks"] = stacks
    d["wizards"][f"{colour}-1"] = {"space": space, "tier": tier}
    return d


def _neutral(s: Any) -> Any:
    """The same session under neutral, even light (5500 K, full white balance, no vignette)."""
    light = Lighting(5500.0, 1.0, (0.2, 0.3, 0.93), 0.55, 1.0, 0.3, 4.0, 0.0)
    return dataclasses.replace(s, lighting=light, _cache={})


def _hue_dist(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


class TestDeterminism:
    def test_same_seed_same_frame_and_truth(self) -> None:
        state = _setup_state()
        a = render(state, np.random.default_rng(11))
        b = render(state, np.random.default_rng(11))
        assert np.array_equal(a.frame, b.frame)
        assert a.truth_json() == b.truth_json()
        c = render(state, np.random.default_rng(12))
        assert not np.array_equal(a.frame, c.frame)

    def test_a_session_redraws_a_still_board_exactly(self) -> None:
        state = _setup_state()
        s = random_setup(np.random.default_rng(30))
        first = render(state, np.random.default_rng(31), setup=s)
        again = render(state, np.random.default_rng(31), setup=s)  # drawn from the session cache
        fresh = render(state, np.random.default_rng(31), setup=dataclasses.replace(s, _cache={}))
        assert np.array_equal(first.frame, again.frame)
        assert np.array_equal(first.frame, fresh.frame)
        moved = _setup_state()
        moved["wizards"]["blue-1"] = {"space": 12, "tier": 0}
        other = render(moved, np.random.default_rng(31), setup=s)
        assert not np.array_equal(first.frame, other.frame)

    def test_frame_shape_and_type(self) -> None:
        r = render(_setup_state(), np.random.default_rng(1))
        assert r.frame.shape == (864, 1536, 3) and r.frame.dtype == np.uint8
        assert r.hand_mask.shape == (864, 1536) and not r.hand
        small = render(_setup_state(), np.random.default_rng(1), size=(640, 360))
        assert small.frame.shape == (360, 640, 3)
        assert small.camera.size == (640, 360)


class TestTruth:
    def test_truth_is_what_the_rules_say_a_camera_sees(self) -> None:
        st = setup(Config(player_count=4), seed=5)
        r = render(st, np.random.default_rng(2), frame_index=7, time_s=1.5)
        assert r.observation == observe(st, time=1.5, frame=7)
        # the same through the state JSON
        r2 = render(dump_state(st), np.random.default_rng(2))
        assert r2.observation.spaces == r.observation.spaces

    def test_saved_beside_the_frame(self, tmp_path: Path) -> None:
        r = render(_setup_state(), np.random.default_rng(4), hand=True)
        path = r.save(tmp_path, "f0")
        assert cv2.imread(str(path)).shape == r.frame.shape
        truth = (tmp_path / "f0.json").read_text()
        assert '"observation"' in truth and '"pose"' in truth and '"camera"' in truth
        assert (tmp_path / "f0.hand.png").exists() == r.hand

    def test_bad_state_is_refused_and_left_alone(self) -> None:
        d = _setup_state()
        d["wizards"]["blue-1"] = {"space": 3, "tier": 4}  # above a one-tower stack
        before = copy.deepcopy(d)
        with pytest.raises(RenderError, match="state"):
            render(d, np.random.default_rng(0))
        assert d == before
        with pytest.raises(RenderError):
            render(["not", "a", "state"], np.random.default_rng(0))  # type: ignore[arg-type]


class TestMarkers:
    @pytest.mark.parametrize(
        ("tilt", "azimuth", "roll"),
        [(0.0, 90.0, 0.0), (15.0, 10.0, 6.0), (28.0, 200.0, -7.0), (35.0, 265.0, 3.0)],
    )
    def test_markers_are_found_where_the_geometry_puts_them(self, tilt, azimuth, roll) -> None:
        rng = np.random.default_rng(int(tilt * 10 + azimuth))
        g = BoardGeometry.default()
        s = random_setup(rng, g)
        pose = fit_pose(g, s.camera, (240.0, 240.0), tilt, azimuth, roll, max_height_mm=150.0)
        s = dataclasses.replace(s, pose=pose, _cache={})
        r = render(_setup_state(), rng, setup=s)
        det = cv2.aruco.ArucoDetector(ARUCO, cv2.aruco.DetectorParameters())
        corners, ids, _ = det.detectMarkers(cv2.cvtColor(r.frame, cv2.COLOR_BGR2GRAY))
        assert ids is not None
        found = {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}
        assert set(found) == {0, 1, 2, 3}
        for mid, obj in g.marker_object_points().items():
            expected, _ = cv2.projectPoints(
                obj, r.pose.rvec, r.pose.tvec, r.camera.K, r.camera.dist
            )
            err = np.linalg.norm(found[mid] - expected.reshape(4, 2), axis=1)
            assert err.max() < 2.0, (mid, err)


class TestPieces:
    @pytest.mark.parametrize(
        ("colour", "space", "tier"),
        [
            ("red", 4, 1),
            ("blue", 6, 0),
            ("yellow", 2, 2),
            ("green", 12, 2),
            ("orange", 9, 1),
            ("purple", 14, 4),
        ],
    )
    def test_wizard_stands_on_the_roof_of_its_tier(self, colour, space, tier) -> None:
        rng = np.random.default_rng(100 + space)
        g = BoardGeometry.default()
        s = _neutral(random_setup(rng, g, tilt_range=(5.0, 30.0)))
        r = render(_lone_wizard(colour, space, tier), rng, setup=s, jpeg_quality=None)
        roof = g.to_opencv(g.roof_point(space, tier) + [0.0, 0.0, 0.45 * g.wizard.height])
        px, _ = cv2.projectPoints(roof[None], r.pose.rvec, r.pose.tvec, r.camera.K, r.camera.dist)
        x, y = np.round(px.reshape(2)).astype(int)
        patch = r.frame[y - 1 : y + 2, x - 1 : x + 2].reshape(-1, 1, 3)
        hsv = cv2.cvtColor(np.ascontiguousarray(patch), cv2.COLOR_BGR2HSV_FULL).reshape(-1, 3)
        hue = float(np.median(hsv[:, 0])) * 360.0 / 256.0
        assert _hue_dist(hue, WIZARD_HSV[colour][0]) < 20.0, (hue, colour)
        assert float(np.median(hsv[:, 1])) > 0.4 * 255
        # one tier lower (or a roof's width aside on the track) there is no such colour
        other = g.to_opencv(g.roof_point(space, max(tier - 1, 0)) + [35.0, 0.0, 2.0])
        px2, _ = cv2.projectPoints(other[None], r.pose.rvec, r.pose.tvec, r.camera.K, r.camera.dist)
        x2, y2 = np.round(px2.reshape(2)).astype(int)
        h2 = cv2.cvtColor(r.frame[y2 : y2 + 1, x2 : x2 + 1], cv2.COLOR_BGR2HSV_FULL)[0, 0]
        assert h2[1] < 0.3 * 255 or _hue_dist(h2[0] * 360.0 / 256.0, WIZARD_HSV[colour][0]) > 20

    def test_eighteen_space_track_shows_fountain_and_web(self) -> None:
        track = Track(18, frozenset({1, 5, 10, 14}), ((9, "fountain"), (18, "web")))
        state = _setup_state(4, track)
        rng = np.random.default_rng(9)
        r = render(state, rng, jpeg_quality=None)
        assert len(r.observation.spaces) == 18
        assert r.observation.spaces[9].top == "fountain"
        g = BoardGeometry.for_track(18)
        pts = np.array([g.to_opencv([*g.space_centre(s), 0.0]) for s in (9, 18)])
        px, _ = cv2.projectPoints(pts, r.pose.rvec, r.pose.tvec, r.camera.K, r.camera.dist)
        (fx, fy), (wx, wy) = np.round(px.reshape(2, 2) + [[0.0, 0.0], [0.0, 0.0]]).astype(int)
        water = r.frame[fy - 2 : fy + 3, fx - 2 : fx + 3].reshape(-1, 3).mean(axis=0)
        assert water[0] > water[2] + 25  # blue water in the fountain
        web = r.frame[wy - 3 : wy + 4, wx - 3 : wx + 4].reshape(-1, 3).mean(axis=0)
        assert web.mean() < water.max()  # the dark web insert

    def test_ten_high_stack_with_the_magic_tower_is_drawn_in_view(self) -> None:
        d = _setup_state(2)
        d["towers"]["MT"] = {"kind": "magic", "crest": False, "magic": True}
        d["stacks"] = {"7": ["R1", "P1", "R2", "P2", "R3", "P3", "R4", "P4", "R5", "MT"]}
        d["wizards"] = {
            w: {"space": 7, "tier": 10} if i < 3 else "castle" for i, w in enumerate(d["wizards"])
        }
        r = render(d, np.random.default_rng(21))
        assert r.observation.spaces[7].towers == 10
        assert r.observation.spaces[7].top == "magic"
        assert dict(r.observation.spaces[7].wizards) == {"blue": 3}


class TestHands:
    def test_hand_frames_differ_from_still_frames(self) -> None:
        seq = render_hand_sequence(
            _setup_state(), np.random.default_rng(8), still_before=2, moving=6, still_after=2
        )
        assert len(seq) == 10
        flags = [r.hand for r in seq]
        assert flags[:2] == [False, False] and flags[-2:] == [False, False]
        assert sum(flags[2:8]) >= 3
        still_a, still_b = seq[0].frame.astype(np.int16), seq[-1].frame.astype(np.int16)
        # still frames differ only by sensor noise and compression: no piece moved
        assert np.abs(still_a - still_b).mean() < 8.0
        smooth = [
            cv2.GaussianBlur(r.frame, (0, 0), 2.0).astype(np.float32) for r in (seq[0], seq[-1])
        ]
        smooth[1] *= smooth[0].mean() / smooth[1].mean()  # the camera's exposure flicker
        a, b = (np.minimum(x, 245.0) for x in smooth)  # ignore what the sensor saturates
        blocks = cv2.resize(np.abs(a - b).sum(axis=2), (192, 108), interpolation=cv2.INTER_AREA)
        assert blocks.max() < 30.0  # a wizard moved by a few mm gives hundreds
        for r in seq[2:8]:
            if not r.hand:
                continue
            m = r.hand_mask > 0
            diff = np.abs(r.frame.astype(np.int16) - still_a).sum(axis=2)
            assert diff[m].mean() > 40.0
            assert np.median(diff[~m]) < 25.0  # elsewhere: noise (and the hand's shadow)
            assert r.observation.spaces == seq[0].observation.spaces  # the board is unchanged
        times = [r.observation.time for r in seq]
        assert times == sorted(times) and times[1] > times[0]

    def test_a_move_happens_under_the_hand(self) -> None:
        from itertools import islice

        from companion.sim.bots import play

        steps = [st.state for st in islice(play(Config(player_count=3), 5, "random"), 8)]
        before, after = steps[5], steps[6]
        assert observe(before).spaces != observe(after).spaces
        seq = render_move_sequence(before, after, np.random.default_rng(6), frame0=40, time0=8.0)
        assert len(seq) == 2 + 3 + 3 + 3 + 3
        assert [r.observation.frame for r in seq] == list(range(40, 54))
        assert seq[0].observation.time == 8.0
        assert not seq[0].hand and not seq[1].hand and not seq[-1].hand
        assert all(r.hand for r in seq[3:11])
        assert all(r.observation.spaces == observe(before).spaces for r in seq[:5])
        assert all(r.observation.spaces == observe(after).spaces for r in seq[5:])
        # the board changed between the first and the last still frame
        a, b = (
            cv2.GaussianBlur(r.frame, (0, 0), 2.0).astype(np.float32) for r in (seq[0], seq[-1])
        )
        blocks = cv2.resize(np.abs(a - b).sum(axis=2), (192, 108), interpolation=cv2.INTER_AREA)
        assert blocks.max() > 40.0

    def test_random_hand_covers_part_of_the_frame(self) -> None:
        r = render(_setup_state(), np.random.default_rng(5), hand=True)
        frac = np.count_nonzero(r.hand_mask) / r.hand_mask.size
        assert r.hand and 0.005 < frac < 0.6


class TestCameraFile:
    def test_simulated_camera_file_loads_as_a_camera_model(self, tmp_path: Path) -> None:
        path = write_camera_file(tmp_path / "sim.yml")
        cam = CameraModel.load(path)
        ref = simulated_camera()
        np.testing.assert_allclose(cam.K, ref.K)
        np.testing.assert_allclose(cam.dist[:5], ref.dist[:5])
        assert cam.size == (1536, 864)
        assert math.degrees(2 * math.atan(768 / cam.K[0, 0])) == pytest.approx(62.0, abs=0.1)


class TestCameraAndLight:
    def test_random_poses_keep_the_whole_board_in_view(self) -> None:
        g = BoardGeometry.default()
        tilts = []
        for seed in range(25):
            s = random_setup(np.random.default_rng(seed), g)
            tilts.append(s.pose.tilt_deg)
            w, h = s.camera.size
            pts = np.concatenate(list(g.marker_object_points().values()))
            px, _ = cv2.projectPoints(pts, s.pose.rvec, s.pose.tvec, s.camera.K, s.camera.dist)
            px = px.reshape(-1, 2)
            assert np.all((px >= 0) & (px < [w, h])), seed
            # the camera is above the table, higher than a 10-high stack
            assert -s.pose.centre[2] > 10 * g.tower.height + 100
        assert min(tilts) >= 0.0 and max(tilts) <= 35.0
        assert max(tilts) - min(tilts) > 20.0

    def test_warm_light_and_dim_light_show_in_the_frame(self) -> None:
        state = _setup_state()
        base = _neutral(random_setup(np.random.default_rng(2)))

        def mean_bgr(kelvin: float, intensity: float) -> np.ndarray:
            light = dataclasses.replace(base.lighting, kelvin=kelvin, intensity=intensity, awb=0.3)
            s = dataclasses.replace(base, lighting=light, _cache={})
            r = render(state, np.random.default_rng(3), setup=s, jpeg_quality=None)
            return r.frame.reshape(-1, 3).mean(axis=0)

        warm, cold = mean_bgr(2700.0, 1.0), mean_bgr(6500.0, 1.0)
        assert warm[0] / warm[2] < 0.8 * cold[0] / cold[2]  # blue/red lower under a warm bulb
        dim, bright = mean_bgr(5500.0, 0.3), mean_bgr(5500.0, 1.5)
        assert dim.mean() < 0.4 * bright.mean()

    def test_straight_down_view_shows_the_board_upright(self) -> None:
        from companion.sim.render import look_at

        g = BoardGeometry.default()
        cam = simulated_camera()
        pose = look_at((240.0, 240.0), 0.0, 90.0, 0.0, 900.0)
        centres = {
            i: cv2.projectPoints(
                np.concatenate([c, np.zeros((4, 1))], axis=1).mean(axis=0)[None],
                pose.rvec,
                pose.tvec,
                cam.K,
                cam.dist,
            )[0].reshape(2)
            for i, c in g.marker_corners().items()
        }
        assert centres[0][0] < centres[1][0] and centres[0][1] < centres[3][1]
        assert centres[2][0] > centres[3][0] and centres[2][1] > centres[1][1]
        # the camera looks straight down from 900 mm
        np.testing.assert_allclose(pose.centre, [240.0, 240.0, -900.0], atol=1e-6)
        with pytest.raises(ValueError, match="tilt"):
            look_at((0.0, 0.0), 95.0, 0.0, 0.0, 900.0)


class TestTokens:
    def test_raven_and_witch_tokens_lie_on_their_spaces(self) -> None:
        d = _lone_wizard("red", 4, 1)
        d["witch"] = {"space": 12, "tier": 0}
        d["raven"] = {"space": 14, "tier": 0}
        g = BoardGeometry.default()
        rng = np.random.default_rng(77)
        s = _neutral(random_setup(rng, g, tilt_range=(0.0, 10.0)))
        with_tokens = render(d, rng, setup=s, jpeg_quality=None)
        assert with_tokens.observation.spaces[12].witch
        assert with_tokens.observation.spaces[14].raven
        d2 = copy.deepcopy(d)
        d2["witch"] = d2["raven"] = None
        without = render(d2, np.random.default_rng(77), setup=s, jpeg_quality=None)
        for space in (12, 14):
            p = g.to_opencv([*g.space_centre(space), 2.0])
            px, _ = cv2.projectPoints(p[None], s.pose.rvec, s.pose.tvec, s.camera.K, s.camera.dist)
            x, y = np.round(px.reshape(2)).astype(int)
            a = with_tokens.frame[y - 6 : y + 7, x - 6 : x + 7].astype(np.int16)
            b = without.frame[y - 6 : y + 7, x - 6 : x + 7].astype(np.int16)
            assert np.abs(a - b).sum(axis=2).mean() > 40.0, space
