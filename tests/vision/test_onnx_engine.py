"""The shipped networks read through ``read_onnx`` (the engine it picks) answer as OpenCV's
default engine does: the choice of engine is speed only, never another reading."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision import stack_cnn, token_cnn, wizard_cnn
from companion.vision.images import read_onnx

SHIPPED = [
    (stack_cnn.MODEL_PATH, (18, stack_cnn.n_channels(10), stack_cnn.ROI_PX, stack_cnn.ROI_PX)),
    (wizard_cnn.MODEL_PATH, (18, wizard_cnn.n_channels(), wizard_cnn.ROI_PX, wizard_cnn.ROI_PX)),
    (token_cnn.MODEL_PATH, (18, wizard_cnn.n_channels(), wizard_cnn.ROI_PX, wizard_cnn.ROI_PX)),
]


@pytest.mark.parametrize(("path", "shape"), SHIPPED, ids=lambda v: getattr(v, "stem", ""))
def test_the_engine_read_onnx_picks_gives_the_default_engines_probabilities(
    path: Path, shape: tuple[int, ...]
) -> None:
    # network input as network_input makes it: colours over white, clipped, less 0.5
    x = np.random.default_rng(7).uniform(-0.5, 1.0, shape).astype(np.float32)
    ours = read_onnx(path, "model")
    ours.setInput(x)
    got = np.asarray(ours.forward(), np.float32)
    default = cv2.dnn.readNetFromONNX(str(path))
    default.setInput(x)
    want = np.asarray(default.forward(), np.float32)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-4)
