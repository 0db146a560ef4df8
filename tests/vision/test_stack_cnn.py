"""The tower-count CNN: trained on renders, shipped as ONNX, run by cv2.dnn on tier-stack ROIs.

Seeds here are below 1000 (the bench and the training use others); the renderer's ground truth
is used for the assertions only.
"""

from __future__ import annotations

import importlib.util
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.rules import Config, setup
from companion.sim.render import RenderResult, random_setup, render
from companion.sim.scenes import random_game_state
from companion.vision.detector import Detector, DetectorConfig
from companion.vision.geometry import BoardGeometry, GeometryError
from companion.vision.profile import ColourProfile
from companion.vision.profile_setup import build_profile
from companion.vision.stack_cnn import (
    MODEL_PATH,
    ROI_PX,
    StackModel,
    TierCutter,
    camera_foot,
    n_channels,
    network_input,
    project_points,
    tier_stacks,
)
from companion.vision.top_kind import MODEL_PATH as TOP_KIND_PATH

K = 10
NEEDS_TRAIN = pytest.mark.skipif(
    importlib.util.find_spec("onnx") is None or importlib.util.find_spec("torch") is None,
    reason="training the CNN needs PyTorch, the 'train' extra (pip install -e .[train]); "
    "`python3 dev.py test` leaves it out, CI installs it and runs this file",
)


def test_the_shipped_model_is_small_and_gives_one_probability_per_tower_count() -> None:
    assert MODEL_PATH.is_file()
    assert MODEL_PATH.stat().st_size < 1_000_000
    model = StackModel()
    x = np.zeros((5, n_channels(K), ROI_PX, ROI_PX), np.float32)
    p = model.probabilities(x)
    assert p.shape == (5, K + 1) and p.dtype == np.float32
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-5)
    assert model.probabilities(x[:0]).shape == (0, K + 1)


def test_bad_models_and_inputs_are_refused_loudly(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="no such file"):
        StackModel(tmp_path / "missing.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a graph")
    with pytest.raises(ValueError, match="ONNX"):
        StackModel(junk)
    # a readable graph that is not a tower-count network (the crest/plain classifier)
    with pytest.raises(ValueError, match="tower-count model"):
        StackModel(TOP_KIND_PATH)
    with pytest.raises(ValueError, match="expected \\(N, 33, 24, 24\\)"):
        StackModel().probabilities(np.zeros((2, 3, ROI_PX, ROI_PX), np.float32))
    with pytest.raises(ValueError, match="white"):
        network_input(np.zeros((1, K + 1, ROI_PX, ROI_PX, 3), np.uint8), np.zeros(3))
    geometry = BoardGeometry.default()
    table = random_setup(np.random.default_rng(5), geometry)
    with pytest.raises(ValueError, match="height_method"):
        Detector(
            table.camera,
            geometry,
            ColourProfile({}, 9.0, np.full(3, 255.0), {}),
            config=DetectorConfig(height_method="by eye"),
        )


@pytest.fixture(scope="module")
def session() -> tuple[Detector, list[RenderResult]]:
    """One seeded table in play, read from its setup frame by the tower-count CNN."""
    players = 4
    geometry = BoardGeometry.default()
    colours = list(Config(player_count=players).colours or ())
    seed = 561
    nrng = np.random.default_rng(seed)
    prng = random.Random(seed)
    table = random_setup(nrng, geometry)
    first = render(setup(Config(player_count=players), seed=None), nrng, setup=table, hand=False)
    profile = build_profile(first.frame, table.camera, geometry, colours)
    cnn = Detector(table.camera, geometry, profile, config=DetectorConfig(height_method="cnn"))
    cnn.detect(first.frame)
    frames = [
        render(random_game_state(prng, players), nrng, setup=table, hand=False) for _ in range(4)
    ]
    return cnn, frames


def test_the_cnn_reads_rendered_stack_heights(
    session: tuple[Detector, list[RenderResult]],
) -> None:
    cnn, frames = session
    right = total = stacked = 0
    for res in frames:
        got = cnn.detect(res.frame)
        obs = got.reading
        assert obs is not None, got.message
        for space, t in res.observation.spaces.items():
            total += 1
            right += obs.spaces[space].towers == t.towers
            stacked += t.towers >= 2 and obs.spaces[space].towers == t.towers
    assert total >= 60
    assert right / total >= 0.95, f"{right} of {total} tower counts right"
    assert stacked >= 3  # stacks of two or more are read, not only empty spaces and single towers


def test_tier_stacks_put_the_roof_of_the_true_tier_in_the_middle(
    session: tuple[Detector, list[RenderResult]],
) -> None:
    cnn, frames = session
    res = frames[0]
    got = cnn.detect(res.frame)
    assert got.pose is not None
    foot = camera_foot(got.pose)
    # the camera looks down at the board from above it (a 0..35 degree tilt)
    w, h = cnn.geometry.board_size
    assert -0.5 * w < foot[0] < 1.5 * w and -0.5 * h < foot[1] < 1.5 * h
    spaces = list(cnn.geometry.spaces)
    st = tier_stacks(res.frame, got.pose, cnn.geometry, spaces, K)
    assert st.shape == (len(spaces), K + 1, ROI_PX, ROI_PX, 3) and st.dtype == np.uint8
    x = network_input(st, got.white_bgr if got.white_bgr is not None else np.full(3, 230.0))
    assert x.shape == (len(spaces), n_channels(K), ROI_PX, ROI_PX)
    assert x.min() >= -0.5 and x.max() <= 1.0


def test_reading_some_spaces_gives_what_reading_them_alone_afresh_gives(
    session: tuple[Detector, list[RenderResult]],
) -> None:
    # the detector leaves the castle's stack and the inserts out and the model keeps every
    # space's sample maps for the pose: any subset, in any order, reads as cut afresh
    cnn, frames = session
    res = frames[1]
    got = cnn.detect(res.frame)
    assert got.pose is not None and got.white_bgr is not None
    model = StackModel(max_towers=K)
    spaces = list(cnn.geometry.spaces)
    every = model.read(res.frame, got.pose, cnn.geometry, got.white_bgr, spaces)
    some = spaces[7:2:-2]
    fresh = model.probabilities(
        network_input(tier_stacks(res.frame, got.pose, cnn.geometry, some, K), got.white_bgr)
    )
    part = model.read(res.frame, got.pose, cnn.geometry, got.white_bgr, some)
    assert np.array_equal(part, fresh)
    np.testing.assert_allclose(part, every[[spaces.index(s) for s in some]], atol=1e-5)
    # the detector cuts the stacks once for both networks and gives each its rows: a space's
    # input is the same to the bit whichever spaces are cut with it
    cutter = TierCutter(K)
    whole = cutter.inputs(res.frame, got.pose, cnn.geometry, got.white_bgr, spaces)
    alone = cutter.inputs(res.frame, got.pose, cnn.geometry, got.white_bgr, some)
    assert np.array_equal(alone, whole[[spaces.index(s) for s in some]])
    assert np.array_equal(model.probabilities(alone), fresh)
    assert model.read(res.frame, got.pose, cnn.geometry, got.white_bgr, []).shape == (0, K + 1)
    # only the board's region is halved: a board running off an odd-sized frame's edge
    # (its samples there replicate the edge) reads as the whole frame does
    h, w = res.frame.shape[:2]
    cut = np.ascontiguousarray(res.frame[: h // 2 * 2 - 1, : w // 2 + 1])
    fresh = model.probabilities(
        network_input(tier_stacks(cut, got.pose, cnn.geometry, spaces, K), got.white_bgr)
    )
    assert np.array_equal(model.read(cut, got.pose, cnn.geometry, got.white_bgr, spaces), fresh)
    with pytest.raises(GeometryError, match="not on the board"):
        model.read(res.frame, got.pose, cnn.geometry, got.white_bgr, [spaces[-1] + 5])


@NEEDS_TRAIN
def test_training_runs_end_to_end_and_cv2_dnn_gives_the_training_side_answer(
    tmp_path: Path,
) -> None:
    from companion.sim.train_stack_cnn import collect, logits, to_onnx, train

    data = collect(1, 1, base=571, log=False)
    assert data.x.shape[1:] == (K + 1, ROI_PX, ROI_PX, 3) and len(data.y) >= 10
    net = train(data, np.arange(len(data.y)), epochs=1, batch=8, log=False)
    path = tmp_path / "tiny.onnx"
    to_onnx(net, 1.5, path)
    got = StackModel(path).probabilities(network_input(data.x, data.white))
    z = logits(net, data, np.arange(len(data.y))) / 1.5
    e = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), atol=1e-5)


def test_one_white_for_all_gives_what_a_white_per_stack_gives() -> None:
    # one white reference is looked up per byte value; a white per stack is computed per
    # element: the two must be the same float32 input to the bit
    rng = np.random.default_rng(11)
    stacks = rng.integers(0, 256, (5, K + 1, ROI_PX, ROI_PX, 3), dtype=np.uint8)
    white = np.array([187.4, 203.9, 141.2])
    one = network_input(stacks, white)
    each = network_input(stacks, np.tile(white, (5, 1)))
    assert one.dtype == np.float32 and one.flags.c_contiguous
    assert np.array_equal(one, each)
    assert one.min() == -0.5 and one.max() == 1.0  # 255 / 141.2 > 1.5: clipped
    with pytest.raises(ValueError, match="white"):
        network_input(stacks, np.array([200.0, 0.0, 200.0]))


def test_the_sample_maps_projection_is_opencvs(
    session: tuple[Detector, list[RenderResult]],
) -> None:
    # the maps' own projection (no Jacobian) lands where cv2.projectPoints does, to the
    # float32 the maps are kept in, for lenses with and without distortion and poses off
    # the camera's axis; other lens models are projected by OpenCV itself
    cnn, frames = session
    got = cnn.detect(frames[0].frame)
    assert got.pose is not None and got.pose.camera is not None and got.pose.rvec is not None
    pts = np.random.default_rng(5).uniform((-50, -50, -300), (650, 650, 0), (5000, 3))
    for dist in ([-0.05, 0.012, 4e-4, -3e-4, 0.002], [0.1, -0.2, 0.0, 0.0], [], [0.0] * 8):
        cam = replace(got.pose.camera, dist=np.array(dist, np.float64))
        for turn in (0.0, 0.05):
            pose = replace(got.pose, camera=cam, rvec=np.asarray(got.pose.rvec) + turn)
            fast = project_points(pose, pts).astype(np.float32)
            assert np.array_equal(fast, pose.project(pts).astype(np.float32))
