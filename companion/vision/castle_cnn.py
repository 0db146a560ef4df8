"""Where the raven castle stands and on which tier, from a small convolutional network (ONNX,
run with ``cv2.dnn``).

The network reads the same tier stacks as the tower-count network
(:mod:`companion.vision.stack_cnn`: per tier ``k = 0..K`` the board-parallel square around the
space's centre at the height of tier ``k``, divided by the markers' white) and gives per space
``K + 2`` probabilities (:data:`CLASSES`): "no castle here" and "the raven castle stands here
with its base on tier ``k``" (on ``k`` towers). One small scorer shared by every tier scores
tier ``k`` from the crops of tiers ``k - 1 .. k + WINDOW - 2`` (the castle's black body, 64 mm,
reaches about two tiers above its base); "no castle" is a learnt constant; a softmax
temperature fitted on held-out renders is folded in. The heights stage
(:mod:`companion.vision.detector.heights`) turns the spaces' probabilities into the castle's
place (one castle on the board) and tier, each with its probability; ``docs/vision.md``,
"The raven castle's place and tier", gives the figures.

The model ships as ``castle_cnn.onnx`` beside this module; its training on seeded
domain-randomised renders lives with the simulation (``python -m
companion.sim.train_castle_cnn``, needs the ``train`` extra).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from companion.vision.stack_cnn import StackModel

MODEL_PATH = Path(__file__).with_name("castle_cnn.onnx")

WINDOW = 4
"""Crops each tier's score sees: tiers ``k - 1 .. k + 2``."""

CLASSES = ("none",) + tuple(f"tier {k}" for k in range(11))
"""The outputs: "no castle here", then the castle's base on tier 0..10."""


class CastleModel(StackModel):
    """The shipped (or a given) ONNX raven-castle network, run with ``cv2.dnn``: the reading
    of :class:`~companion.vision.stack_cnn.StackModel` (``read``, ``probabilities``) with
    ``K + 2`` outputs per space, ``[p(no castle), p(castle on tier 0), .., p(tier K)]``.

    :raises OSError: when the file is missing; :raises ValueError: when OpenCV cannot read it or
        it does not give ``K + 2`` probabilities for tier stacks of ``K`` towers.
    """

    what = "raven-castle model"
    extra_outputs = 1

    def __init__(self, path: str | Path = MODEL_PATH, max_towers: int = 10) -> None:
        super().__init__(path, max_towers)


def castle_place(
    prob: NDArray[np.float32],
) -> tuple[int, NDArray[np.float64], NDArray[np.float64]] | None:
    """The castle's most probable space of ``prob (S, K + 2)`` (one space's rows per row; the
    board has one raven castle): ``(row, place (S,), tier (K + 1,))``, the row, every row's
    probability of holding the castle (its odds ``p(castle) / p(none)`` normalised over the
    rows) and the probabilities of the castle's base tier on that row; None without rows."""
    if len(prob) == 0:
        return None
    p = prob.astype(np.float64)
    odds = (1.0 - p[:, 0]) / np.maximum(p[:, 0], 1e-9)
    place = odds / max(float(odds.sum()), 1e-300)
    row = int(np.argmax(place))
    tier = p[row, 1:] / max(float(p[row, 1:].sum()), 1e-300)
    return row, place, tier
