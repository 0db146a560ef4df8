"""The learned crest/plain roof classifier: trained on renders, shipped as ONNX, run by cv2.dnn.

Seeds here are below 1000 (the bench and the training use others); the renderer's ground truth
is used for the assertions only.
"""

from __future__ import annotations

import importlib.util
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from companion.rules import Config, setup
from companion.sim.render import RenderResult, random_setup, render
from companion.sim.render.light import TableSetup
from companion.sim.scenes import random_game_state
from companion.vision.detector import Detector, DetectorConfig
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile
from companion.vision.profile_setup import build_profile
from companion.vision.top_kind import CLASSES, MODEL_PATH, N_INPUTS, TopKindModel, roof_crops

HAS_ONNX = importlib.util.find_spec("onnx") is not None
NEEDS_ONNX = pytest.mark.skipif(
    not HAS_ONNX, reason="writing an ONNX graph needs the 'train' extra (pip install -e .[train])"
)


@NEEDS_ONNX
def test_training_runs_end_to_end_and_cv2_dnn_gives_the_training_side_answer(
    tmp_path: Path,
) -> None:
    from companion.sim.train_top_kind import collect, to_onnx, train

    data = collect(1, 2, base=531, turns=1, module_share=0.0, log=False)
    assert data.x.shape == (len(data.y), N_INPUTS) and len(data.y) >= 4
    # both kinds appear on a table in play (four crest towers of nine, R-COMP-1)
    assert set(data.y.tolist()) == {0, 1}
    net = train(data.x, data.y, hidden=8, steps=40)
    path = tmp_path / "tiny.onnx"
    path.write_bytes(to_onnx(net))
    got = TopKindModel(path).probabilities(data.x)
    want = net.probabilities(data.x)
    assert got.shape == (len(data.y), len(CLASSES))
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert (got.argmax(1) == want.argmax(1)).all()


def test_the_shipped_model_is_small_and_loads_with_cv2_dnn() -> None:
    assert MODEL_PATH.is_file()
    assert MODEL_PATH.stat().st_size < 400_000
    p = TopKindModel().probabilities(np.full((3, N_INPUTS), 0.6, np.float32))
    assert p.shape == (3, 2)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-5)


def test_bad_models_and_inputs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="no such file"):
        TopKindModel(tmp_path / "missing.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a graph")
    with pytest.raises(ValueError, match="ONNX"):
        TopKindModel(junk)
    with pytest.raises(ValueError, match=f"expected \\(N, {N_INPUTS}\\)"):
        TopKindModel().probabilities(np.zeros((2, 7), np.float32))
    geometry = BoardGeometry.default()
    table = random_setup(np.random.default_rng(5), geometry)
    with pytest.raises(ValueError, match="top_method"):
        Detector(
            table.camera,
            geometry,
            ColourProfile({}, 9.0, np.full(3, 255.0), {}),
            config=DetectorConfig(top_method="by eye"),
        )


@dataclass
class Session:
    table: TableSetup
    profile: ColourProfile
    detector: Detector
    frames: list[RenderResult]


@pytest.fixture(scope="module")
def sessions() -> list[Session]:
    """Two seeded tables in play, each read once from its setup frame by the learned detector."""
    players = 4
    geometry = BoardGeometry.default()
    colours = list(Config(player_count=players).colours or ())
    out = []
    for seed in (541, 542):
        nrng = np.random.default_rng(seed)
        prng = random.Random(seed)
        table = random_setup(nrng, geometry)
        first = render(
            setup(Config(player_count=players), seed=None), nrng, setup=table, hand=False
        )
        profile = build_profile(first.frame, table.camera, geometry, colours)
        det = Detector(table.camera, geometry, profile, config=DetectorConfig(top_method="learned"))
        det.detect(first.frame)
        frames = [
            render(random_game_state(prng, players), nrng, setup=table, hand=False)
            for _ in range(3)
        ]
        out.append(Session(table, profile, det, frames))
    return out


def test_the_learned_reading_of_rendered_roofs_matches_the_truth(sessions: list[Session]) -> None:
    right = total = 0
    for s in sessions:
        for res in s.frames:
            got = s.detector.detect(res.frame)
            obs = got.reading
            assert obs is not None, got.message
            for space, t in res.observation.spaces.items():
                o = obs.spaces[space]
                if t.towers == 0 or t.castle or o.towers != t.towers or t.top not in CLASSES:
                    continue
                total += 1
                right += o.top == t.top
    assert total >= 20
    assert right / total >= 0.95, f"{right} of {total} roofs read right"


def test_roof_crops_refuse_a_bad_white_reference(sessions: list[Session]) -> None:
    s = sessions[0]
    frame = s.frames[0].frame
    got = s.detector.detect(frame)
    assert got.pose is not None
    geometry = s.detector.geometry
    with pytest.raises(ValueError, match="white"):
        roof_crops(frame, got.pose, geometry, np.zeros(3), [(1, 1)])
    crops = roof_crops(frame, got.pose, geometry, np.full(3, 200.0), [(1, 1), (2, 1)])
    assert crops.shape == (2, N_INPUTS) and crops.dtype == np.float32
