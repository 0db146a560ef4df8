"""The shipped networks read through ``read_onnx`` (the engine it picks) answer as OpenCV's
default engine does: the choice of engine is speed only, never another reading."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision import castle_cnn, stack_cnn, token_cnn, wizard_cnn
from companion.vision.images import read_onnx

TOPS = (18, wizard_cnn.n_channels(), wizard_cnn.ROI_PX, wizard_cnn.ROI_PX)
# each network's inputs: name -> shape (one unnamed input: "")
SHIPPED = [
    (
        stack_cnn.MODEL_PATH,
        {"": (18, stack_cnn.n_channels(10), stack_cnn.ROI_PX, stack_cnn.ROI_PX)},
    ),
    (
        castle_cnn.MODEL_PATH,
        {"": (18, stack_cnn.n_channels(10), stack_cnn.ROI_PX, stack_cnn.ROI_PX)},
    ),
    (wizard_cnn.MODEL_PATH, {"tops": TOPS, "cues": (18, wizard_cnn.n_cues())}),
    (token_cnn.MODEL_PATH, {"": TOPS}),
]


@pytest.mark.parametrize(("path", "shapes"), SHIPPED, ids=lambda v: getattr(v, "stem", ""))
def test_the_engine_read_onnx_picks_gives_the_default_engines_probabilities(
    path: Path, shapes: dict[str, tuple[int, ...]]
) -> None:
    # network input as network_input makes it: colours over white, clipped, less 0.5 (the
    # colour areas' measurements are of the same order)
    rng = np.random.default_rng(7)
    xs = {name: rng.uniform(-0.5, 1.0, shape).astype(np.float32) for name, shape in shapes.items()}
    ours = read_onnx(path, "model")
    default = cv2.dnn.readNetFromONNX(str(path))
    for name, x in xs.items():
        ours.setInput(x, name)
        default.setInput(x, name)
    got = np.asarray(ours.forward(), np.float32)
    want = np.asarray(default.forward(), np.float32)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-4)
