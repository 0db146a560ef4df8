"""The raven-castle CNN: trained on renders, shipped as ONNX, run by cv2.dnn on the tier stacks
of every space; the heights stage takes the castle's place and tier from it.

Seeds here are below 1000 (the bench and the training use others); the renderer's ground truth
is used for the assertions only.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest

from companion.rules import Config, setup
from companion.sim.render import random_setup, render
from companion.sim.scenes import random_game_state
from companion.vision.castle_cnn import MODEL_PATH, CastleModel, castle_place
from companion.vision.detector import Detector, DetectorConfig
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile
from companion.vision.profile_setup import build_profile
from companion.vision.stack_cnn import ROI_PX, n_channels, network_input
from companion.vision.top_kind import MODEL_PATH as TOP_KIND_PATH

K = 10
NEEDS_TRAIN = pytest.mark.skipif(
    importlib.util.find_spec("onnx") is None or importlib.util.find_spec("torch") is None,
    reason="training the CNN needs PyTorch, the 'train' extra (pip install -e .[train]); "
    "`python3 dev.py test` leaves it out, CI installs it and runs this file",
)


def test_the_shipped_model_is_small_and_gives_no_castle_and_one_probability_per_tier() -> None:
    assert MODEL_PATH.is_file()
    assert MODEL_PATH.stat().st_size < 1_000_000
    model = CastleModel()
    x = np.zeros((5, n_channels(K), ROI_PX, ROI_PX), np.float32)
    p = model.probabilities(x)
    assert p.shape == (5, K + 2) and p.dtype == np.float32
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-5)
    assert model.probabilities(x[:0]).shape == (0, K + 2)


def test_bad_models_are_refused_loudly_when_the_detector_is_built(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="no such file"):
        CastleModel(tmp_path / "missing.onnx")
    # a readable graph that is not a raven-castle network (the tower-count one: K + 1 outputs)
    with pytest.raises(ValueError, match="raven-castle model"):
        CastleModel(MODEL_PATH.with_name("stack_cnn.onnx"))
    with pytest.raises(ValueError, match="raven-castle model"):
        CastleModel(TOP_KIND_PATH)
    geometry = BoardGeometry.default()
    table = random_setup(np.random.default_rng(5), geometry)
    with pytest.raises(ValueError, match="castle_method"):
        Detector(
            table.camera,
            geometry,
            ColourProfile({}, 9.0, (255.0, 255.0, 255.0), {}),
            config=DetectorConfig(castle_method="by eye"),
        )


def test_the_castle_is_where_its_odds_are_highest_and_its_tier_the_most_probable_there() -> None:
    p = np.zeros((3, K + 2), np.float32)
    p[:, 0] = [0.9, 0.2, 0.99]  # no castle
    p[0, 1], p[1, 3], p[1, 4], p[2, 1] = 0.1, 0.5, 0.3, 0.01
    got = castle_place(p)
    assert got is not None
    row, place, tier = got
    assert row == 1 and tier.argmax() == 2  # on two towers
    np.testing.assert_allclose(place.sum(), 1.0)
    np.testing.assert_allclose(tier.sum(), 1.0)
    assert place[1] > 0.95 and tier[2] == pytest.approx(0.5 / 0.8)
    assert castle_place(p[:0]) is None


def test_the_detector_reads_the_rendered_castles_place_and_tier() -> None:
    players = 3
    geometry = BoardGeometry.default()
    colours = list(Config(player_count=players).colours or ())
    seed = 563
    nrng = np.random.default_rng(seed)
    prng = random.Random(seed)
    table = random_setup(nrng, geometry)
    first = render(setup(Config(player_count=players), seed=None), nrng, setup=table, hand=False)
    profile = build_profile(first.frame, table.camera, geometry, colours)
    detector = Detector(table.camera, geometry, profile, config=DetectorConfig(withhold_below=0))
    detector.detect(first.frame)
    right = total = 0
    for _ in range(5):
        res = render(random_game_state(prng, players), nrng, setup=table, hand=False)
        got = detector.detect(res.frame)
        assert got.reading is not None, got.message
        want = [(s, t.towers) for s, t in res.observation.spaces.items() if t.castle]
        seen = [(s, t.towers) for s, t in got.reading.spaces.items() if t.castle]
        total += 1
        right += want == seen
    assert right >= 4, f"{right} of {total} castles right"


@NEEDS_TRAIN
def test_training_runs_end_to_end_and_cv2_dnn_gives_the_training_side_answer(
    tmp_path: Path,
) -> None:
    from companion.sim.train_castle_cnn import collect, logits, to_onnx, train

    data = collect(1, 1, base=573, log=False)
    assert data.x.shape[1:] == (K + 1, ROI_PX, ROI_PX, 3) and len(data.y) >= 10
    assert np.sum(data.y > 0) == 2  # one castle in each of the two frames
    net = train(data, np.arange(len(data.y)), epochs=1, batch=8, log=False)
    path = tmp_path / "tiny.onnx"
    to_onnx(net, 1.5, path)
    got = CastleModel(path).probabilities(network_input(data.x, data.white))
    z = logits(net, data, np.arange(len(data.y))) / 1.5
    e = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), atol=1e-5)
