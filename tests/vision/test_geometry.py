"""Board geometry: the loop of spaces, inserts, towers and the ArUco marker layout."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from companion.vision.geometry import (
    DEFAULTS,
    BoardGeometry,
    GeometryError,
    TrackDef,
    fit_loop_to_taps,
)

REPO = Path(__file__).resolve().parents[2]


def _polygon_area(p: np.ndarray) -> float:
    """Shoelace area; positive = clockwise on screen (y down)."""
    x, y = p[:, 0], p[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


class TestLoop:
    def test_sixteen_spaces_form_a_closed_loop_with_even_steps(self) -> None:
        g = BoardGeometry.default()
        c = g.space_centres()
        assert c.shape == (16, 2)
        steps = np.linalg.norm(np.diff(np.vstack([c, c[:1]]), axis=0), axis=1)
        # chord lengths around the corners are a little shorter than the pitch
        assert np.all(steps > 0.9 * g.pitch) and np.all(steps <= g.pitch + 1e-9)
        # the step from space 16 back to space 1 is like any other: the loop is closed
        assert abs(steps[-1] - np.median(steps)) < 0.1 * g.pitch

    def test_spaces_are_distinct_and_do_not_overlap(self) -> None:
        g = BoardGeometry.default()
        c = g.space_centres()
        d = np.linalg.norm(c[:, None] - c[None], axis=-1) + np.eye(16) * 1e9
        assert d.min() > 0.9 * g.pitch
        # a tower standing on a space stays on its own space
        assert g.tower.base_diameter < d.min()

    def test_numbered_clockwise_seen_from_above(self) -> None:
        g = BoardGeometry.default()
        # y points down in board coordinates: clockwise on screen = positive shoelace area
        assert _polygon_area(g.space_centres()) > 0
        # space 1 is the first space of the top tile, space 2 lies to its right
        c1, c2 = g.space_centre(1), g.space_centre(2)
        assert c2[0] > c1[0]
        assert c1[1] < g.board_size[1] / 2

    def test_crest_spaces_start_the_four_tiles(self) -> None:
        g = BoardGeometry.default()
        assert g.track.crest == (1, 5, 9, 13)
        assert [s for s in g.spaces if g.crest_mark(s) is not None] == [1, 5, 9, 13]
        centre, radius = g.crest_mark(5)  # type: ignore[misc]
        np.testing.assert_allclose(centre, g.space_centre(5))
        assert radius * 2 < g.track_width
        assert len(g.tile_joints()) == 4

    def test_loop_and_pieces_stay_inside_the_board_clear_of_the_markers(self) -> None:
        for g in (BoardGeometry.default(), BoardGeometry.for_track(18)):
            outer = g.loop_edge(+1)
            w, h = g.board_size
            assert outer.min() > 0 and outer[:, 0].max() < w and outer[:, 1].max() < h
            for corners in g.marker_corners().values():
                lo, hi = corners.min(axis=0), corners.max(axis=0)
                inside = np.all((outer > lo - 2) & (outer < hi + 2), axis=1)
                assert not inside.any()

    def test_outlines_share_edges_with_their_neighbours(self) -> None:
        g = BoardGeometry.default()
        a, b = g.space_outline(3), g.space_outline(4)
        k = len(a) // 2
        # the last outer point of space 3 is the first outer point of space 4
        np.testing.assert_allclose(a[k - 1], b[0], atol=1e-9)
        assert _polygon_area(a) > 0.9 * g.pitch * g.track_width


class TestTracks:
    def test_eighteen_space_track_with_inserts_at_a_and_b(self) -> None:
        g = BoardGeometry.for_track(18)
        assert g.n_spaces == 18
        assert g.track.crest == (1, 5, 10, 14)
        assert g.track.kind(9) == "fountain" and g.track.kind(18) == "fountain"
        mixed = TrackDef.standard(("web", "fountain"))  # S1: web at A, fountain at B
        assert mixed.kind(9) == "web" and mixed.kind(18) == "fountain"
        assert mixed.crest == (1, 5, 10, 14)
        assert g.track.kind(10) == "crest-space" and g.track.kind(11) == "plain-space"
        c = g.space_centres()
        d = np.linalg.norm(c[:, None] - c[None], axis=-1) + np.eye(18) * 1e9
        assert d.min() > 0.9 * g.pitch
        # B (the last space) sits on the joint at the top-left corner, A opposite it
        mid = np.array(g.board_size) / 2
        np.testing.assert_allclose(c[8] - mid, -(c[17] - mid), atol=1e-6)
        assert c[17][0] < mid[0] and c[17][1] < mid[1]

    def test_any_track_definition(self) -> None:
        g = BoardGeometry.for_track(12, crest=[1, 7], special={4: "web"})
        assert g.n_spaces == 12 and g.track.kind(4) == "web"
        assert g.space_centres().shape == (12, 2)

    @pytest.mark.parametrize(
        ("length", "crest", "special", "field"),
        [
            (16, [17], {}, "raven_crest"),
            (16, [1], {20: "web"}, "special"),
            (16, [1], {3: "lava"}, "special.3"),
            (2, [1], {}, "length"),
        ],
    )
    def test_bad_track_definitions_are_refused_by_name(self, length, crest, special, field) -> None:
        with pytest.raises(GeometryError, match=field.replace(".", r"\.")):
            TrackDef(length, tuple(crest), special)

    def test_state_model_track_json(self) -> None:
        t = TrackDef.from_json(
            {"length": 18, "raven_crest": [1, 5, 10, 14], "special": {"9": "web", "18": "fountain"}}
        )
        assert t.special == {9: "web", 18: "fountain"}
        assert TrackDef.from_json(t.to_json()) == t
        g = BoardGeometry.default().with_track(t)
        assert g.track.kind(9) == "web"


class TestPieces:
    def test_roof_of_tier_k_rises_one_tower_height_per_tier(self) -> None:
        g = BoardGeometry.default()
        for k in range(11):
            p = g.roof_point(7, k)
            np.testing.assert_allclose(p[:2], g.space_centre(7))
            assert p[2] == pytest.approx(k * g.tower.height)
        all_roofs = g.roof_points(10)
        assert all_roofs.shape == (16, 11, 3)
        np.testing.assert_allclose(all_roofs[6, 3], g.roof_point(7, 3))

    def test_towers_taper_and_six_wizards_fit_on_a_roof(self) -> None:
        g = BoardGeometry.default()
        assert g.tower.base_diameter > g.tower.roof_diameter
        slots = g.piece_slots(6, tier=1)
        r = np.linalg.norm(slots, axis=1) + g.wizard.base_diameter / 2
        assert np.all(r <= g.tower.roof_diameter / 2)
        gaps = np.linalg.norm(slots[:, None] - slots[None], axis=-1) + np.eye(6) * 1e9
        assert gaps.min() >= g.wizard.base_diameter * 0.95

    def test_six_wizards_and_a_token_share_a_roof(self) -> None:
        g = BoardGeometry.default()
        slots = g.piece_slots(7, tier=2)
        assert slots.shape == (7, 2)
        np.testing.assert_allclose(slots[0], [0.0, 0.0])
        gaps = np.linalg.norm(slots[:, None] - slots[None], axis=-1) + np.eye(7) * 1e9
        assert gaps.min() > 0.9 * g.wizard.base_diameter
        # on the track there is more room than on a roof
        assert np.abs(g.piece_slots(4, tier=0)).max() > np.abs(g.piece_slots(4, tier=1)).max()

    def test_off_track_spaces_raise(self) -> None:
        g = BoardGeometry.default()
        with pytest.raises(GeometryError, match="space 17"):
            g.space_centre(17)
        with pytest.raises(GeometryError, match="tier -1"):
            g.roof_point(1, -1)


class TestMarkers:
    def test_four_corner_markers_in_opencv_corner_order(self) -> None:
        g = BoardGeometry.default()
        m = g.marker_corners()
        assert sorted(m) == [0, 1, 2, 3]
        assert g.marker_dictionary == "DICT_4X4_50"
        w, h = g.board_size
        for corners in m.values():
            assert corners.shape == (4, 2)
            side = np.linalg.norm(np.diff(np.vstack([corners, corners[:1]]), axis=0), axis=1)
            np.testing.assert_allclose(side, 50.0)
            # TL, TR, BR, BL: x grows to TR, y grows to BL, clockwise on screen
            assert corners[1, 0] > corners[0, 0] and corners[3, 1] > corners[0, 1]
            assert _polygon_area(corners) > 0
        centres = {i: c.mean(axis=0) for i, c in m.items()}
        assert centres[0][0] < w / 2 and centres[0][1] < h / 2
        assert centres[1][0] > w / 2 and centres[1][1] < h / 2
        assert centres[2][0] > w / 2 and centres[2][1] > h / 2
        assert centres[3][0] < w / 2 and centres[3][1] > h / 2
        obj = g.marker_object_points()[2]
        assert obj.shape == (4, 3) and np.all(obj[:, 2] == 0)

    def test_marker_side_is_configurable(self) -> None:
        g = BoardGeometry.from_dict({"markers": {"side": 40}})
        np.testing.assert_allclose(g.marker_corners()[0][1] - g.marker_corners()[0][0], [40, 0])


class TestGeometryFile:
    def test_shipped_file_matches_the_built_in_defaults(self) -> None:
        data = json.loads((REPO / "calibration/board/default.json").read_text())
        loaded = BoardGeometry.load(REPO / "calibration/board/default.json")
        assert loaded.to_dict() == BoardGeometry.default().to_dict()
        stripped = {k: v for k, v in data.items() if not k.startswith("_")}
        stripped["loop"] = {k: v for k, v in stripped["loop"].items() if not k.startswith("_")}
        assert stripped == DEFAULTS

    def test_round_trip_and_partial_override(self, tmp_path: Path) -> None:
        g = BoardGeometry.from_dict({"tower": {"tier_height": 40}, "loop": {"pitch": 60}})
        assert g.tower.height == 40 and g.tower.base_diameter == 48
        path = tmp_path / "mine.json"
        g.save(path)
        again = BoardGeometry.load(path)
        np.testing.assert_allclose(again.space_centres(), g.space_centres())
        assert again.to_dict() == g.to_dict()

    @pytest.mark.parametrize(
        ("data", "field"),
        [
            ({"tower": {"tier_height": -3}}, "tower.tier_height"),
            ({"loop": {"pitch": "wide"}}, "loop.pitch"),
            ({"markers": {"ids": [0, 0, 1, 2]}}, "markers.ids"),
            ({"loop": {"width": 900}}, "loop.width"),
        ],
    )
    def test_bad_files_name_the_field(self, data, field) -> None:
        with pytest.raises(GeometryError, match=field.replace(".", r"\.")):
            BoardGeometry.from_dict(data)

    def test_unreadable_json_is_a_geometry_error(self, tmp_path: Path) -> None:
        bad = tmp_path / "bad.json"
        bad.write_text("{ not json")
        with pytest.raises(GeometryError, match="not JSON"):
            BoardGeometry.load(bad)


class TestTapFit:
    def _homography(self) -> np.ndarray:
        # a plausible oblique view: board mm -> px
        return np.array([[1.9, 0.25, 310.0], [-0.12, 1.55, 120.0], [0.0001, 0.0004, 1.0]])

    def _project(self, h: np.ndarray, pts: np.ndarray) -> np.ndarray:
        p = np.concatenate([pts, np.ones((len(pts), 1))], axis=1) @ h.T
        return p[:, :2] / p[:, 2:3]

    def test_recovers_a_bigger_rotated_shifted_loop(self) -> None:
        nominal = BoardGeometry.default()
        truth = BoardGeometry.from_dict(
            {
                "loop": {
                    "pitch": 64 * 1.07,
                    "width": 72 * 1.07,
                    "rotation_deg": 4.0,
                    "centre": [247.0, 236.5],
                }
            }
        )
        h = self._homography()
        rng = np.random.default_rng(7)
        taps = self._project(h, truth.space_centres()) + rng.normal(0, 0.8, (16, 2))
        fit = fit_loop_to_taps(taps, h, nominal)
        assert fit.scale == pytest.approx(1.07, abs=0.01)
        assert fit.rotation_deg == pytest.approx(4.0, abs=0.3)
        assert fit.rms_mm < 1.5
        err = np.linalg.norm(fit.geometry.space_centres() - truth.space_centres(), axis=1)
        assert err.max() < 1.5
        assert fit.geometry.pitch == pytest.approx(truth.pitch, rel=0.01)

    def test_taps_on_the_empty_spaces_only(self) -> None:
        nominal = BoardGeometry.default()
        truth = BoardGeometry.from_dict({"loop": {"rotation_deg": -3.0, "centre": [236.0, 244.0]}})
        h = self._homography()
        # at setup towers stand on 2..10: the host taps 1 and 11..16
        empty = [1, 11, 12, 13, 14, 15, 16]
        px = self._project(h, truth.space_centres())
        fit = fit_loop_to_taps({s: px[s - 1] for s in empty}, h, nominal)
        err = np.linalg.norm(fit.geometry.space_centres() - truth.space_centres(), axis=1)
        assert err.max() < 0.5
        with pytest.raises(GeometryError, match="at least 3"):
            fit_loop_to_taps({1: px[0], 2: px[1]}, h, nominal)
        with pytest.raises(GeometryError, match="at least 3"):
            fit_loop_to_taps({1: px[0], 2: px[1], 40: px[2]}, h, nominal)

    def test_exact_taps_give_the_identity(self) -> None:
        g = BoardGeometry.default()
        h = self._homography()
        fit = fit_loop_to_taps(self._project(h, g.space_centres()), h, g)
        assert fit.scale == pytest.approx(1.0, abs=1e-9)
        assert fit.rotation_deg == pytest.approx(0.0, abs=1e-7)
        assert fit.rms_mm < 1e-6
        assert math.hypot(*fit.offset_mm) < 1e-6

    def test_wrong_tap_count_or_degenerate_taps_are_refused(self) -> None:
        g = BoardGeometry.default()
        h = self._homography()
        with pytest.raises(GeometryError, match="16"):
            fit_loop_to_taps(np.zeros((15, 2)), h, g)
        with pytest.raises(GeometryError, match="spread"):
            fit_loop_to_taps(np.full((16, 2), 300.0), h, g)
        with pytest.raises(GeometryError, match="homography"):
            fit_loop_to_taps(np.zeros((16, 2)), np.zeros((3, 3)), g)
