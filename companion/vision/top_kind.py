"""Crest or plain roof from a small learned classifier (ONNX, run with ``cv2.dnn``).

The hand-built top-kind stage (:mod:`companion.vision.detector.tops`) decides crest or plain
by the printed raven's dark ink and the crest disc's colour at fixed probe points. This module
is the learned alternative (the README, "Command line", gives both methods' bench figures):

* the top roof of a space (tier ``t`` on ``space``, at ``z = t * tier_height`` mm) is resampled
  from the frame through the board pose onto a ``CROP_PX`` x ``CROP_PX`` grid spanning the roof's
  diameter (a roof-plane rectification: the crop looks the same from every camera angle);
* each channel is divided by the frame's white reference (the markers' white paper), so the
  exposure and the white balance of the frame drop out;
* a one-hidden-layer network (ReLU, softmax over ``CLASSES``) reads the crop. It was trained on
  seeded rendered tables through the Pi camera model (``python -m companion.sim.train_top_kind``,
  seeds disjoint from the bench's), with the crop grid turned at random (the raven is printed
  at any angle) and the wizards standing on the roofs as they do in play.

The model ships as ``top_kind.onnx`` beside this module and runs with OpenCV's own ``cv2.dnn``
(no new runtime on the Pi). The detector uses it when ``DetectorConfig.top_method`` is
``"learned"``; the magic roof, the track's kinds and roofs under the raven castle stay with the
hand-built stage.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.geometry import BoardGeometry
from companion.vision.images import read_onnx
from companion.vision.markers import BoardPose

if TYPE_CHECKING:  # (the detector imports this module)
    from companion.vision.detector.frame import FrameProbes, Stacks

MODEL_PATH = Path(__file__).with_name("top_kind.onnx")

CROP_PX = 20
"""Side of the rectified roof crop, px (over the roof's diameter: 2 mm per px on a 40 mm roof)."""

CROP_SPAN = 1.0
"""Half side of the crop as a fraction of the roof radius."""

CLASSES = ("plain", "crest")
"""The network's outputs, in order."""

TURNS = 4
"""Quarter turns of each crop read at run time (their probabilities averaged)."""

N_INPUTS = CROP_PX * CROP_PX * 3
"""Length of one crop's input vector (HWC order, channels B, G, R divided by white)."""


def roof_grid(geometry: BoardGeometry, space: int, tier: int, angle: float = 0.0) -> NDArray[Any]:
    """The crop's sample points on the roof of tier ``tier`` on ``space``: ``(CROP_PX**2, 3)``
    board mm with z up, row-major, the grid turned by ``angle`` (rad) about the roof centre.

    :raises GeometryError: off the track or a negative tier.
    """
    centre = geometry.roof_point(space, tier)
    r = geometry.surface_radius(tier) * CROP_SPAN
    u = (np.arange(CROP_PX) + 0.5) / CROP_PX * 2.0 - 1.0
    gx, gy = np.meshgrid(u * r, u * r)
    c, s = math.cos(angle), math.sin(angle)
    x = c * gx - s * gy
    y = s * gx + c * gy
    pts = np.empty((CROP_PX * CROP_PX, 3))
    pts[:, 0] = centre[0] + x.ravel()
    pts[:, 1] = centre[1] + y.ravel()
    pts[:, 2] = centre[2]
    return pts


def roof_crops(
    frame: NDArray[np.uint8],
    pose: BoardPose,
    geometry: BoardGeometry,
    white: NDArray[Any],
    roofs: list[tuple[int, int]],
    angles: NDArray[Any] | None = None,
) -> NDArray[np.float32]:
    """The rectified crops of the roofs ``roofs`` (``(space, tier)``, tier >= 1) as network
    inputs: ``(N, N_INPUTS) float32``, each channel divided by ``white``.

    :param frame: ``(H, W, 3) uint8 BGR``.
    :param pose: a board pose with a camera model (3-D).
    :param white: ``(3,)`` BGR of white paper in this frame.
    :param angles: ``(N,)`` turn of each crop's grid (rad); default none.
    :raises ValueError: for a pose without a camera model or a white reference <= 0.
    """
    if not pose.has_3d:
        raise ValueError("roof crops need a board pose with a camera model")
    w = np.asarray(white, np.float32).reshape(3)
    if not np.all(w > 0):
        raise ValueError("roof crops: the white reference must be > 0 in every channel")
    if not roofs:
        return np.zeros((0, N_INPUTS), np.float32)
    pts = np.concatenate(
        [
            roof_grid(geometry, sp, t, 0.0 if angles is None else float(angles[i]))
            for i, (sp, t) in enumerate(roofs)
        ]
    )
    pts[:, 2] = -pts[:, 2]  # BoardPose.project takes z down
    img = pose.project(pts).astype(np.float32)
    n = len(roofs)
    mx = img[:, 0].reshape(n * CROP_PX, CROP_PX)
    my = img[:, 1].reshape(n * CROP_PX, CROP_PX)
    crops = cv2.remap(frame, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    out = crops.reshape(n, CROP_PX, CROP_PX, 3).astype(np.float32) / w
    return cast("NDArray[np.float32]", out.reshape(n, N_INPUTS))


class TopKindModel:
    """The shipped (or a given) ONNX crest/plain classifier, run with ``cv2.dnn``.

    :param path: an ONNX file taking ``(N, N_INPUTS) float32`` crops and giving ``(N, 2)``
        probabilities of :data:`CLASSES`.
    :raises OSError: when the file is missing; :raises ValueError: when OpenCV cannot read it.
    """

    def __init__(self, path: str | Path = MODEL_PATH) -> None:
        self._net = read_onnx(path, "top-kind model")
        self.path = Path(path)

    def probabilities(self, crops: NDArray[Any]) -> NDArray[np.float32]:
        """``(N, 2)`` probabilities of plain and crest for ``(N, N_INPUTS)`` crops.

        :raises ValueError: for crops of another shape.
        """
        x = np.ascontiguousarray(crops, np.float32)
        if x.ndim != 2 or x.shape[1] != N_INPUTS:
            raise ValueError(f"top-kind crops: expected (N, {N_INPUTS}), got {x.shape}")
        if len(x) == 0:
            return np.zeros((0, len(CLASSES)), np.float32)
        self._net.setInput(x)
        out = np.asarray(self._net.forward(), np.float32).reshape(len(x), len(CLASSES))
        return out

    def read(
        self,
        frame: NDArray[np.uint8],
        pose: BoardPose,
        geometry: BoardGeometry,
        white: NDArray[Any],
        roofs: list[tuple[int, int]],
    ) -> list[tuple[str, float]]:
        """Kind (``plain`` / ``crest``) and its probability (0.5..1) of each roof in ``roofs``
        (``(space, tier)``); see :func:`roof_crops` for the arguments and errors.

        The crop is read at four quarter turns and the probabilities averaged (the raven is
        printed at any angle; one network pass for all of them)."""
        crops = roof_crops(frame, pose, geometry, white, roofs)
        n = len(crops)
        sq = crops.reshape(n, CROP_PX, CROP_PX, 3)
        turned = np.concatenate([np.rot90(sq, k, axes=(1, 2)) for k in range(TURNS)])
        p = self.probabilities(turned.reshape(TURNS * n, N_INPUTS))
        p = p.reshape(TURNS, n, len(CLASSES)).mean(axis=0)
        best = np.argmax(p, axis=1)
        return [(CLASSES[int(b)], float(p[i, b])) for i, b in enumerate(best)]


def learned_tops(
    model: TopKindModel,
    fp: FrameProbes,
    st: Stacks,
    geometry: BoardGeometry,
    tops: list[str],
    sure: list[float],
) -> None:
    """Replace, in place, the hand-built crest/plain reading of every top roof in view (a
    tower top not under the raven castle, read ``crest`` or ``plain``) by the model's, and
    its ``sure`` by the model's probability (0.5..1). ``tops`` and ``sure`` are indexed like
    ``geometry.spaces`` (as :func:`~companion.vision.detector.tops.top_kinds` returns them).

    :raises ValueError: as :func:`roof_crops`.
    """
    idx = [
        si
        for si in range(len(tops))
        if st.towers_of[si] > 0 and not st.castle_of[si] and tops[si] in CLASSES
    ]
    if not idx:
        return
    spaces = list(geometry.spaces)
    roofs = [(spaces[si], st.towers_of[si]) for si in idx]
    got = model.read(fp.frame, fp.pose, geometry, fp.white, roofs)
    for si, (kind, p) in zip(idx, got, strict=True):
        tops[si] = kind
        sure[si] = p
