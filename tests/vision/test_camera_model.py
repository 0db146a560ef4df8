"""The Pi camera model: each effect is seeded and changes the frame the way a real camera would;
the board stays aligned with the pieces at any frame size."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import cv2
import numpy as np
import pytest

from companion.cli import main as cli_main
from companion.rules import Config, setup
from companion.rules.serialize import dump_state
from companion.sim.render import fit_pose, random_setup, render
from companion.sim.render.camera import board_fill, bump_pose
from companion.sim.render.camera_model import (
    CM3_MODES,
    CONDITIONS,
    HQ_MODES,
    SEVERITIES,
    CameraEffects,
    apply_camera,
    board_quad,
    play_setup,
    random_effects,
    session_setup,
    to_linear,
)
from companion.vision.geometry import BoardGeometry

ARUCO = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
G = BoardGeometry.default()
SIZE = (960, 540)

# a camera that changes nothing but what a test asks for (no noise worth the name, no blur,
# no vignetting, no drift, near-lossless JPEG)
CLEAN = CameraEffects(
    full_well_e=1e7,
    read_noise_e=0.0,
    wb_drift=0.0,
    flicker_ev=0.0,
    defocus_px=0.0,
    vignetting=0.0,
    jpeg_quality=100,
)


def _state() -> dict[str, Any]:
    return dump_state(setup(Config(player_count=4), seed=3))


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, np.ndarray]:
    """One ideal render (960x540) and the board's corners in it."""
    rng = np.random.default_rng(11)
    table = random_setup(rng, G, size=SIZE)
    res = render(_state(), rng, setup=table, ideal=True)
    return res.frame, board_quad(res.camera, res.pose.rvec, res.pose.tvec, G.board_size)


def _apply(
    frame: np.ndarray,
    quad: np.ndarray | None,
    eff: CameraEffects,
    seed: int = 0,
    phase: str = "play",
) -> np.ndarray:
    return apply_camera(
        frame, eff, np.random.default_rng(seed), phase=phase, quad=quad, board_mm=G.board_size
    )


def _flat(level: float, shape: tuple[int, int] = (128, 128)) -> np.ndarray:
    """A grey frame at ``level`` of the clip point in linear light."""
    v = 255.0 * (12.92 * level if level <= 0.0031308 else 1.055 * level ** (1 / 2.4) - 0.055)
    return np.full((*shape, 3), int(round(v)), np.uint8)


class TestSeeds:
    @pytest.mark.parametrize("condition", CONDITIONS)
    def test_each_condition_is_the_same_for_the_same_seed(self, condition, scene) -> None:
        frame, quad = scene
        a = random_effects(np.random.default_rng(5), {condition: "severe"})
        b = random_effects(np.random.default_rng(5), {condition: "severe"})
        assert a == b
        assert np.array_equal(_apply(frame, quad, a, 3), _apply(frame, quad, b, 3))

    def test_another_seed_gives_another_frame(self, scene) -> None:
        frame, quad = scene
        eff = random_effects(np.random.default_rng(5))
        assert not np.array_equal(_apply(frame, quad, eff, 1), _apply(frame, quad, eff, 2))

    def test_one_condition_leaves_the_others_as_they_were(self) -> None:
        base = random_effects(np.random.default_rng(9))
        glare = random_effects(np.random.default_rng(9), {"glare": "moderate"})
        assert glare.glare and not base.glare
        assert dataclasses.replace(glare, glare=(), lamp_kelvin=base.lamp_kelvin) == base

    def test_severity_makes_each_condition_worse(self) -> None:
        def draw(cond: str, sev: str) -> CameraEffects:
            return random_effects(np.random.default_rng(4), {cond: sev})

        worse = {
            "noise": lambda e: -e.full_well_e,
            "white_balance": lambda e: e.wb_drift,
            "exposure": lambda e: e.exposure_step_ev,
            "defocus": lambda e: e.defocus_px,
            "motion_blur": lambda e: e.motion_deg_s,
            "vignetting": lambda e: e.vignetting,
            "jpeg": lambda e: -e.jpeg_quality,
            "board_fill": lambda e: -e.board_fill[0],
            "bump": lambda e: e.bump_deg,
        }
        for cond, key in worse.items():
            values = [key(draw(cond, s)) for s in SEVERITIES]
            assert values == sorted(values) and values[0] < values[-1], cond

    def test_unknown_condition_or_severity_is_refused(self) -> None:
        with pytest.raises(ValueError, match="unknown camera condition"):
            random_effects(np.random.default_rng(1), {"fog": "mild"})
        with pytest.raises(ValueError, match="unknown severity"):
            random_effects(np.random.default_rng(1), {"glare": "extreme"})

    def test_bad_frame_or_phase_is_refused(self) -> None:
        eff = CameraEffects()
        with pytest.raises(ValueError, match="uint8"):
            apply_camera(np.zeros((8, 8, 3), np.float32), eff, np.random.default_rng(0))
        with pytest.raises(ValueError, match="phase"):
            apply_camera(_flat(0.2), eff, np.random.default_rng(0), phase="later")


class TestSensor:
    def test_a_clean_camera_gives_back_the_lens_image(self, scene) -> None:
        frame, quad = scene
        out = _apply(frame, quad, CLEAN)
        diff = cv2.blur(out.astype(np.float32), (5, 5)) - cv2.blur(frame.astype(np.float32), (5, 5))
        assert float(np.abs(diff).mean()) < 1.5

    def test_noise_grows_with_the_signal_as_shot_noise_does(self) -> None:
        eff = dataclasses.replace(CLEAN, full_well_e=800.0, read_noise_e=2.0)
        var = []
        for level in (0.04, 0.4):
            out = to_linear(_apply(_flat(level), None, eff))
            var.append(float(out[8:-8, 8:-8, 1].var()))
        # shot noise: the variance in linear light grows with the signal (10x here)
        assert var[1] > 4 * var[0] > 0

    def test_fewer_electrons_more_noise(self) -> None:
        def sd(full_well: float) -> float:
            eff = dataclasses.replace(CLEAN, full_well_e=full_well, read_noise_e=3.0)
            return float(_apply(_flat(0.1), None, eff)[8:-8, 8:-8].astype(float).std())

        assert sd(300.0) > 2 * sd(6000.0)

    def test_a_mode_scaled_from_a_larger_raw_mode_is_less_noisy(self) -> None:
        # 1536x864 is scaled from the 2304x1296 binned mode: 2.25 raw pixels per output pixel
        eff = dataclasses.replace(CLEAN, full_well_e=600.0, read_noise_e=3.0)
        scaled = _apply(_flat(0.1, (864, 1536)), None, eff)[100:-100, 100:-100]
        native = _apply(_flat(0.1, (990, 1332)), None, eff)[100:-100, 100:-100]
        assert float(scaled.std()) < 0.8 * float(native.std())

    def test_exposure_step_brightens_play_frames_by_the_step(self) -> None:
        eff = dataclasses.replace(CLEAN, exposure_step_ev=1.0, exposure_sign=1)
        img = _flat(0.1)
        setup_lin = to_linear(_apply(img, None, eff, phase="setup")).mean()
        play_lin = to_linear(_apply(img, None, eff, phase="play")).mean()
        assert play_lin / setup_lin == pytest.approx(2.0, rel=0.08)

    def test_white_balance_drifts_between_setup_and_play(self) -> None:
        eff = dataclasses.replace(CLEAN, wb_drift=0.16, wb_signs=(1, -1))
        img = _flat(0.2)
        s = to_linear(_apply(img, None, eff, phase="setup")).reshape(-1, 3).mean(axis=0)
        p = to_linear(_apply(img, None, eff, phase="play")).reshape(-1, 3).mean(axis=0)
        # grey stays grey at setup; in play red rises and blue falls against green
        assert s[2] / s[1] == pytest.approx(1.0, abs=0.03)
        assert p[2] / p[1] > 1.1 and p[0] / p[1] < 0.92

    def test_vignetting_darkens_the_corners(self) -> None:
        eff = dataclasses.replace(CLEAN, vignetting=0.4)
        lin = to_linear(_apply(_flat(0.3, (200, 300)), None, eff))
        centre, corner = lin[95:105, 145:155].mean(), lin[:10, :10].mean()
        assert corner / centre == pytest.approx(0.6, abs=0.06)


def _sharpness(img: np.ndarray) -> float:
    return float(cv2.Laplacian(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var())


class TestOptics:
    def test_defocus_lowers_the_sharpness(self, scene) -> None:
        frame, quad = scene
        sharp = _sharpness(_apply(frame, quad, CLEAN))
        soft = _sharpness(_apply(frame, quad, dataclasses.replace(CLEAN, defocus_px=4.0)))
        assert soft < 0.5 * sharp

    def test_motion_blur_lowers_the_sharpness(self, scene) -> None:
        frame, quad = scene
        moving = dataclasses.replace(CLEAN, motion_prob=1.0, motion_deg_s=20.0, exposure_ms=20.0)
        assert _sharpness(_apply(frame, quad, moving)) < 0.6 * _sharpness(
            _apply(frame, quad, CLEAN)
        )

    def test_glare_saturates_a_spot_on_the_board(self, scene) -> None:
        frame, quad = scene
        eff = dataclasses.replace(CLEAN, glare=((0.5, 0.5, 20.0, 3.0),))
        out = _apply(frame, quad, eff)
        src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
        h = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
        cx, cy = cv2.perspectiveTransform(np.array([[[0.5, 0.5]]], np.float32), h).ravel()
        x, y = int(round(cx)), int(round(cy))
        core = out[y - 2 : y + 3, x - 2 : x + 3]
        assert core.min() >= 250  # clipped white, not tinted
        assert _apply(frame, quad, CLEAN)[y - 2 : y + 3, x - 2 : x + 3].min() < 250

    def test_an_arm_shadow_darkens_part_of_the_board(self, scene) -> None:
        frame, quad = scene
        eff = dataclasses.replace(CLEAN, shadow_prob=1.0, shadow_depth=0.6)
        lit = to_linear(_apply(frame, quad, CLEAN))
        shaded = to_linear(_apply(frame, quad, eff))
        ratio = (shaded.mean(axis=2) + 1e-3) / (lit.mean(axis=2) + 1e-3)
        dark = ratio < 0.55
        assert 0.002 < dark.mean() < 0.3  # a band, not the whole frame
        assert np.mean(ratio > 0.95) > 0.6  # the rest stays lit

    def test_h264_stand_in_shows_macroblock_edges(self, scene) -> None:
        frame, quad = scene
        eff = dataclasses.replace(CLEAN, codec="h264", jpeg_quality=40, macroblock_step_dn=8.0)
        out = _apply(frame, quad, eff).astype(np.float32).mean(axis=2)
        jumps = np.abs(np.diff(out, axis=1)).mean(axis=0)
        at_edges = jumps[15::16].mean()
        inside = np.delete(jumps, np.s_[15::16]).mean()
        assert at_edges > 1.3 * inside


def _markers(frame: np.ndarray) -> dict[int, np.ndarray]:
    det = cv2.aruco.ArucoDetector(ARUCO, cv2.aruco.DetectorParameters())
    corners, ids, _ = det.detectMarkers(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    assert ids is not None
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


class TestGeometry:
    @pytest.mark.parametrize("size", [(1332, 990), (1335, 999), (2028, 1520)])
    def test_board_texture_stays_on_the_geometry_at_odd_sizes(self, size) -> None:
        """The pieces are projected exactly; the board texture (with the markers) must land
        where the same projection puts it, also when the size is not a multiple of 8."""
        rng = np.random.default_rng(size[0])
        s = random_setup(rng, G, size=size)
        pose = fit_pose(G, s.camera, (240.0, 240.0), 12.0, 100.0, 4.0, max_height_mm=150.0)
        s = dataclasses.replace(s, pose=pose, _cache={})
        r = render(_state(), rng, setup=s, ideal=True)
        assert r.frame.shape == (size[1], size[0], 3)
        found = _markers(r.frame)
        assert set(found) == {0, 1, 2, 3}
        errs = []
        for mid, obj in G.marker_object_points().items():
            expected, _ = cv2.projectPoints(
                obj, r.pose.rvec, r.pose.tvec, r.camera.K, r.camera.dist
            )
            errs.append(np.linalg.norm(found[mid] - expected.reshape(4, 2), axis=1))
        e = np.concatenate(errs)
        assert e.mean() < 0.8 and e.max() < 1.5, e

    def test_bump_moves_the_image_by_focal_length_times_tan_angle(self) -> None:
        rng = np.random.default_rng(21)
        eff = dataclasses.replace(CameraEffects(), bump_deg=2.0)
        table = session_setup(rng, eff, G)
        bumped = play_setup(table, eff, np.random.default_rng(2))
        f = float(table.camera.K[0, 0])
        target = np.array([[*table.pose.target_mm, 0.0]])
        a, _ = cv2.projectPoints(target, table.pose.rvec, table.pose.tvec, table.camera.K, None)
        b, _ = cv2.projectPoints(target, bumped.pose.rvec, bumped.pose.tvec, table.camera.K, None)
        moved = float(np.linalg.norm(a - b))
        assert moved == pytest.approx(f * math.tan(math.radians(2.0)), rel=0.02)
        # and the markers in the rendered frames move by about as much
        before = _markers(render(_state(), rng, setup=table, ideal=True).frame)
        after = _markers(render(_state(), rng, setup=bumped, ideal=True).frame)
        shifts = [np.linalg.norm(before[m] - after[m], axis=1).mean() for m in before]
        assert np.median(shifts) == pytest.approx(moved, rel=0.35)
        assert bump_pose(table.pose, 0.0, rng).rvec == pytest.approx(table.pose.rvec)

    @pytest.mark.parametrize("fill", [(0.5, 0.55), (0.7, 0.75)])
    def test_board_fills_the_asked_share_of_the_frame(self, fill) -> None:
        eff = dataclasses.replace(CameraEffects(), board_fill=fill, mode=(1332, 990))
        table = session_setup(np.random.default_rng(8), eff, G)
        assert table.camera.size == (1332, 990)
        got = board_fill(G, table.camera, table.pose)
        assert fill[0] - 0.01 <= got <= fill[1] + 0.01

    def test_sensor_modes_of_both_pi_cameras(self) -> None:
        assert (4608, 2592) in CM3_MODES and (1332, 990) in HQ_MODES
        sizes = {
            random_effects(np.random.default_rng(i), {"resolution": "mild"}).mode for i in range(12)
        }
        assert sizes <= {(2304, 1296), (2028, 1520)} and len(sizes) == 2


class TestBench:
    """``companion bench vision`` through the command line (tests never import a bench)."""

    def test_many_seeds_one_report_with_the_spread(self, capsys) -> None:
        rc = cli_main(
            ["bench", "vision", "--seeds", "5-6", "--frames", "1", "--no-hands", "--json"]
        )
        assert rc == 0
        out = json.loads(capsys.readouterr().out)
        per_seed = out["by_seed"]["per_seed"]
        assert sorted(int(k) for k in per_seed) == [5, 6] and out["frames"] == 2
        exact = [v["board_exact_pct"] for v in per_seed.values()]
        s = out["by_seed"]["spread"]["board_exact_pct"]
        assert (s["min"], s["max"]) == (min(exact), max(exact))
        assert s["mean"] == pytest.approx(np.mean(exact), abs=1e-3)
        assert s["sd"] == pytest.approx(np.std(exact, ddof=1), abs=1e-3)
        fig = out["groups"]["all"]
        exact_frames = round(fig["board_exact_pct"] * fig["frames"] / 100)
        parts = fig["wrong_boards"] + fig["frames_not_read"] + fig["boards_partial"]
        assert parts + exact_frames == fig["frames"]

    def test_conditions_table(self, capsys) -> None:
        argv = ["bench", "vision", "--conditions", "--seeds", "5", "--frames", "1"]
        assert cli_main([*argv, "--condition", "glare", "--severity", "severe", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)["conditions"]
        assert [(r["condition"], r["severity"]) for r in rows] == [
            ("default", "default"),
            ("glare", "severe"),
        ]
        assert all(r["frames"] + r["profile_failures"] >= 1 for r in rows)

    def test_the_top_method_is_chosen_and_reported(self, capsys) -> None:
        argv = ["bench", "vision", "--seed", "5", "--frames", "1", "--no-hands", "--json"]
        assert cli_main(argv) == 0
        assert json.loads(capsys.readouterr().out)["top_method"] == "hand"
        assert cli_main([*argv, "--top-method", "learned"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["top_method"] == "learned" and out["frames"] == 1

    @pytest.mark.long
    def test_still_boards_are_scored_as_the_gate_emits_them(self, capsys) -> None:
        argv = ["bench", "vision", "--seed", "5", "--frames", "1", "--no-hands", "--json"]
        assert cli_main([*argv, "--still", "8"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["still_frames"] == 8 and out["frames"] == 1  # one board, eight frames
        fig = out["groups"]["all"]
        # the gate needs 0.4 s of a still board after its first frame: a second at 8/s is plenty
        assert fig["frames_not_read"] == 0 and fig["wrong_boards"] == 0
        # the first frame is the gate's reference, and five more at 8/s (0.625 s) are too
        # short to be still for 0.4 s after it: the gate would emit nothing on any board, so
        # the bench says so instead of scoring every board as refused
        assert cli_main([*argv, "--still", "5"]) == 2
        assert "at least 6 frames" in capsys.readouterr().err
        assert cli_main([*argv, "--still", "6"]) == 0
        assert json.loads(capsys.readouterr().out)["groups"]["all"]["frames_not_read"] == 0

    @pytest.mark.parametrize(
        "argv",
        [
            ["--seeds", "5-2"],
            ["--seeds", "0-3"],
            ["--seeds", "x"],
            ["--conditions", "--condition", "fog"],
            ["--conditions", "--severity", "extreme"],
            ["--conditions", "--camera", "legacy"],
        ],
    )
    def test_bad_flags_are_refused(self, argv, capsys) -> None:
        assert cli_main(["bench", "vision", *argv]) == 2
        assert capsys.readouterr().err
