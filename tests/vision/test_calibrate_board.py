"""``companion calibrate board``: the host taps the space centres on a still photo and the board
geometry's loop is re-fitted (scale, rotation, offset) — the measure-and-enter defaults adjusted to
the real board."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.rules import Config, setup
from companion.sim.render import render
from companion.vision.calibrate_cli import main
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BOARD_DICTIONARY, MarkerDetector, estimate_board_pose


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    state = setup(Config(player_count=3), seed=4)
    result = render(state, np.random.default_rng(11), jpeg_quality=False)
    path = tmp_path_factory.mktemp("board") / "setup.png"
    cv2.imwrite(str(path), result.frame)
    return path, result.frame


def _taps_for_scaled_loop(frame, scale: float) -> dict[str, list[float]]:
    """Where the space centres would appear if the real loop were ``scale`` times the default."""
    geometry = BoardGeometry.default()
    corners = geometry.marker_corners()
    pose = estimate_board_pose(MarkerDetector(BOARD_DICTIONARY, ids=corners).detect(frame), corners)
    centres = geometry.space_centres()
    middle = centres.mean(axis=0)
    real = middle + scale * (centres - middle)
    px = pose.board_to_image(real)
    return {str(s + 1): [float(x), float(y)] for s, (x, y) in enumerate(px)}


def test_tapped_centres_of_a_larger_board_scale_the_loop(photo, tmp_path, capsys):
    path, frame = photo
    taps = tmp_path / "taps.json"
    taps.write_text(json.dumps(_taps_for_scaled_loop(frame, 1.04)))
    out = tmp_path / "board.json"
    assert main(["board", str(path), "--taps", str(taps), "--out", str(out), "--json"]) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["scale"] == pytest.approx(1.04, abs=0.005)
    assert fit["rms_mm"] < 1.0
    adjusted = BoardGeometry.load(out)
    default = BoardGeometry.default()
    spread = np.linalg.norm(
        adjusted.space_centres() - adjusted.space_centres().mean(axis=0), axis=1
    )
    nominal = np.linalg.norm(default.space_centres() - default.space_centres().mean(axis=0), axis=1)
    assert spread.mean() == pytest.approx(1.04 * nominal.mean(), rel=0.01)


def test_bad_taps_are_refused_and_nothing_is_written(photo, tmp_path, capsys):
    path, _ = photo
    taps = tmp_path / "taps.json"
    taps.write_text(json.dumps({"1": [10, 10]}))
    out = tmp_path / "board.json"
    assert main(["board", str(path), "--taps", str(taps), "--out", str(out)]) == 2
    assert "cannot fit the taps" in capsys.readouterr().err
    assert not out.exists()


def test_a_photo_without_markers_gives_no_pose(tmp_path, capsys):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 127, np.uint8))
    taps = tmp_path / "taps.json"
    taps.write_text(json.dumps({"1": [1, 1], "5": [50, 2], "9": [50, 50]}))
    out = tmp_path / "board.json"
    assert main(["board", str(blank), "--taps", str(taps), "--out", str(out)]) == 1
    assert "no board pose" in capsys.readouterr().err
