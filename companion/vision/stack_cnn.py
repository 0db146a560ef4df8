"""Tower count of every space from a small convolutional network (ONNX, run with ``cv2.dnn``).

The feature height model (:mod:`companion.vision.detect_height`) reads a stack's height from
hand-built rim and colour measurements. This module is the learned alternative
(``DetectorConfig.height_method = "cnn"``; ``docs/vision.md``, "Tower count", gives both
methods' figures and why the default is what it is):

* the ROI of a space is a *tier stack*: for every tier ``k = 0..K`` the board-parallel square
  of ``2 * ROI_SPAN`` mm around the space's centre at the height of tier ``k``
  (``z = k * tier_height`` mm), resampled from the frame through the board pose onto
  ``ROI_PX`` x ``ROI_PX`` px. At the true height the roof sits centred in its tier's crop at a
  fixed size; at the other tiers it is shifted and scaled by the parallax. Every crop is turned
  so that its up direction points away from the camera's foot point on the board: the stack's
  camera-facing wall is always at the bottom and the parallax always runs along one axis,
  whatever the camera's tilt and position;
* each channel is divided by the frame's white reference (the markers' white paper) so the
  exposure and the white balance drop out;
* the ``K + 1`` crops are the input's channels (``3 (K + 1)`` of them), so the first
  convolution compares the tiers at each point; three convolutions, a global average and one
  linear layer give the softmax over the tower counts ``0..K``, whose probability is the count's
  confidence. A temperature fitted on held-out renders is folded into the last layer.

All spaces of a frame go through the network in one batched forward pass. The model ships as
``stack_cnn.onnx`` beside this module; its training on seeded domain-randomised renders lives
with the simulation (``python -m companion.sim.train_stack_cnn``, needs the ``train`` extra).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.geometry import BoardGeometry, GeometryError
from companion.vision.images import read_onnx
from companion.vision.markers import BoardPose

MODEL_PATH = Path(__file__).with_name("stack_cnn.onnx")

ROI_PX = 24
"""Side of one tier's crop, px."""

ROI_SPAN = 24.0
"""Half side of one tier's crop, mm (a roof is 40 mm across: its rim and a margin; 2 mm per
px)."""


def n_channels(max_towers: int) -> int:
    """Input channels for tiers ``0..max_towers``: three colours per tier."""
    return 3 * (max_towers + 1)


def camera_foot(pose: BoardPose) -> NDArray[np.float64]:
    """The point of the board plane under the camera's centre, ``(2,)`` board mm.

    :raises ValueError: for a pose without a camera model.
    """
    if not pose.has_3d:
        raise ValueError("the tier-stack ROI needs a board pose with a camera model")
    assert pose.rvec is not None and pose.tvec is not None
    rot, _ = cv2.Rodrigues(np.asarray(pose.rvec, np.float64))
    centre = -rot.T @ np.asarray(pose.tvec, np.float64).reshape(3)
    foot: NDArray[np.float64] = centre[:2].copy()
    return foot


def project_points(pose: BoardPose, points: NDArray[Any]) -> NDArray[np.float64]:
    """Board points ``(N, 3)`` mm (z *down*, as :meth:`BoardPose.project`) -> image ``(N, 2)`` px
    through the pose's pinhole camera and OpenCV's radial and tangential lens distortion
    (``k1, k2, p1, p2[, k3]``): the arithmetic of ``cv2.projectPoints``, without the Jacobian
    its Python binding always computes (15 numbers per point, six times the projection's own
    time: the tier stacks' sample maps of a new pose took 40 ms on one core). Other lens
    models (8 or more coefficients) and poses without a camera go to
    :meth:`BoardPose.project`.

    :raises ValueError: as :meth:`BoardPose.project`.
    """
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    cam = pose.camera
    dist = np.asarray(cam.dist if cam is not None else (), np.float64).ravel()
    if cam is None or pose.rvec is None or pose.tvec is None or dist.size > 5:
        return pose.project(pts)
    k1, k2, p1, p2, k3 = np.concatenate([dist, np.zeros(5 - dist.size)]).tolist()
    rot, _ = cv2.Rodrigues(np.asarray(pose.rvec, np.float64))
    r = rot.tolist()
    t = np.asarray(pose.tvec, np.float64).ravel().tolist()
    px, py, pz = pts[:, 0], pts[:, 1], pts[:, 2]
    # (term by term, as OpenCV sums them; a matrix product would go to a BLAS that may start
    # threads for a product this long)
    cx, cy, cz = (r[i][0] * px + r[i][1] * py + r[i][2] * pz + t[i] for i in range(3))
    inv = 1.0 / np.where(cz != 0.0, cz, 1.0)  # (a point at the camera's depth: as OpenCV)
    x, y = cx * inv, cy * inv
    r2 = x * x + y * y
    r4 = r2 * r2
    radial = 1.0 + k1 * r2 + k2 * r4 + k3 * r4 * r2
    a1 = 2.0 * x * y
    xd = x * radial + p1 * a1 + p2 * (r2 + 2.0 * x * x)
    yd = y * radial + p1 * (r2 + 2.0 * y * y) + p2 * a1
    k = np.asarray(cam.K, np.float64)
    out: NDArray[np.float64] = np.stack([k[0, 0] * xd + k[0, 2], k[1, 1] * yd + k[1, 2]], axis=1)
    return out


def roi_points(
    geometry: BoardGeometry, spaces: list[int], max_towers: int, foot: NDArray[Any]
) -> NDArray[np.float64]:
    """Sample points of the tier stacks of ``spaces``: ``(N, K + 1, ROI_PX, ROI_PX, 3)`` board mm
    with z up; row 0 of each crop is the side away from the camera's foot point ``foot`` (mm).

    :raises GeometryError: for a space off the track.
    """
    u = ((np.arange(ROI_PX) + 0.5) / ROI_PX * 2.0 - 1.0) * ROI_SPAN
    n, t = len(spaces), max_towers + 1
    out = np.empty((n, t, ROI_PX, ROI_PX, 3))
    tiers = np.array([geometry.tier_z(k) for k in range(t)])
    for i, sp in enumerate(spaces):
        c = geometry.space_centre(sp)[:2]
        d = c - np.asarray(foot, np.float64)[:2]
        norm = math.hypot(float(d[0]), float(d[1]))
        away = d / norm if norm > 1e-6 else np.array([0.0, -1.0])
        side = np.array([-away[1], away[0]])
        # column j runs along ``side``, row r from the far side (+away) to the near side
        xy = (
            c[None, None, :]
            + u[None, :, None] * side[None, None, :]
            - u[:, None, None] * away[None, None, :]
        )
        out[i, :, :, :, :2] = xy[None]
        out[i, :, :, :, 2] = tiers[:, None, None]
    return out


def _sample_maps(
    pose: BoardPose, geometry: BoardGeometry, spaces: list[int], max_towers: int
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """``cv2.remap`` maps of the tier stacks of ``spaces`` in the half-size frame."""
    foot = camera_foot(pose)
    t = max_towers + 1
    pts = roi_points(geometry, spaces, max_towers, foot).reshape(-1, 3)
    pts[:, 2] = -pts[:, 2]  # BoardPose.project takes z down
    img = project_points(pose, pts).astype(np.float32) * 0.5
    rows = len(spaces) * t * ROI_PX
    mx = np.ascontiguousarray(img[:, 0].reshape(rows, ROI_PX))
    my = np.ascontiguousarray(img[:, 1].reshape(rows, ROI_PX))
    return mx, my


def tier_stacks(
    frame: NDArray[np.uint8],
    pose: BoardPose,
    geometry: BoardGeometry,
    spaces: list[int],
    max_towers: int,
    maps: tuple[NDArray[np.float32], NDArray[np.float32]] | None = None,
) -> NDArray[np.uint8]:
    """The raw tier stacks of ``spaces``: ``(N, K + 1, ROI_PX, ROI_PX, 3) uint8 BGR``.

    :param frame: ``(H, W, 3) uint8 BGR``.
    :param pose: a board pose with a camera model (3-D).
    :param maps: the sample maps of this pose and these spaces, when known (a fixed camera's
        pose is the same frame after frame).
    :raises ValueError: for a pose without a camera model.
    """
    t = max_towers + 1
    if not spaces:
        return np.zeros((0, t, ROI_PX, ROI_PX, 3), np.uint8)
    mx, my = maps if maps is not None else _sample_maps(pose, geometry, spaces, max_towers)
    # sampled from the frame at half size (smoothed): a crop pixel (2 mm) spans about three
    # pixels of a frame read at the working scale, and a bilinear sample of the full frame
    # would alias the track's print
    half = cv2.pyrDown(frame)
    crops = cv2.remap(half, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cast("NDArray[np.uint8]", crops.reshape(len(spaces), t, ROI_PX, ROI_PX, 3))


def network_input(stacks: NDArray[np.uint8], white: NDArray[Any]) -> NDArray[np.float32]:
    """Tier stacks ``(N, T, P, P, 3) uint8`` as the network's input ``(N, 3 T, P, P) float32``
    (NCHW; channel ``3 k + c`` is colour ``c`` of tier ``k``): each colour divided by ``white``
    ``(3,)`` (or ``(N, 3)``), clipped to 0..1.5, less 0.5.

    :raises ValueError: for a white reference <= 0.
    """
    w = np.asarray(white, np.float32)
    if not np.all(w > 0):
        raise ValueError("tier stacks: the white reference must be > 0 in every channel")
    n, t, p, _, c = stacks.shape
    if w.size == 3 and stacks.dtype == np.uint8 and stacks.size:
        # one white for all: the same float32 operations on the 256 byte values of each
        # colour, looked up (cv2.LUT) and moved to NCHW in one copy
        table = np.arange(256, dtype=np.float32)[:, None] / w.reshape(1, 3)
        np.clip(table, 0.0, 1.5, out=table)
        np.subtract(table, np.float32(0.5), out=table)
        y = cv2.LUT(np.ascontiguousarray(stacks).reshape(-1, p, c), table.reshape(1, 256, 3))
        nchw = np.asarray(y, np.float32).reshape(n, t, p, p, c).transpose(0, 1, 4, 2, 3)
        return np.ascontiguousarray(nchw).reshape(n, t * c, p, p)
    # the channels moved to NCHW while still bytes, then each element divided, clipped and
    # shifted in place: the same float32 operations as on the NHWC stack, with one buffer
    w = w.reshape(-1, 1, 3, 1, 1) if w.ndim == 2 else w.reshape(1, 1, 3, 1, 1)
    x = stacks.transpose(0, 1, 4, 2, 3).astype(np.float32)
    np.divide(x, w, out=x)
    np.clip(x, 0.0, 1.5, out=x)
    np.subtract(x, np.float32(0.5), out=x)
    return x.reshape(n, t * c, p, p)


class StackModel:
    """The shipped (or a given) ONNX tower-count network, run with ``cv2.dnn``.

    :param path: an ONNX file taking ``(N, 3 (K + 1), ROI_PX, ROI_PX) float32`` tier stacks
        (:func:`network_input`) and giving ``(N, K + 1)`` probabilities of the tower counts.
    :param max_towers: ``K``, the most towers on one space.
    :raises OSError: when the file is missing; :raises ValueError: when OpenCV cannot read it or
        it does not give ``K + 1`` probabilities for that input.
    """

    what = "tower-count model"
    """What the model reads (named in its errors)."""

    extra_outputs = 0
    """Outputs beyond the ``K + 1`` of the tiers."""

    def __init__(self, path: str | Path = MODEL_PATH, max_towers: int = 10) -> None:
        self._net = read_onnx(path, self.what)
        self.path = Path(path)
        self.max_towers = max_towers
        self.outputs = max_towers + 1 + self.extra_outputs
        self.cutter = TierCutter(max_towers)
        """Cuts the tier stacks :meth:`read` reads (its sample maps kept per pose)."""
        probe = np.zeros((1, n_channels(max_towers), ROI_PX, ROI_PX), np.float32)
        try:
            got = self._forward(probe)
        except cv2.error as exc:
            raise ValueError(
                f"{self.what} {self.path.name}: does not take tier stacks of "
                f"{max_towers} towers ({exc})"
            ) from None
        if got.shape != (1, self.outputs):
            raise ValueError(
                f"{self.what} {self.path.name}: gives {got.shape[1:]} outputs, "
                f"expected {self.outputs}"
            )

    def _forward(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        self._net.setInput(x)
        out = np.asarray(self._net.forward(), np.float32)
        return out.reshape(len(x), -1)

    def probabilities(self, x: NDArray[Any]) -> NDArray[np.float32]:
        """``(N, K + 1)`` tower-count probabilities for network input ``(N, 3 (K + 1), P, P)``.

        :raises ValueError: for input of another shape.
        """
        a = np.ascontiguousarray(x, np.float32)
        want = (n_channels(self.max_towers), ROI_PX, ROI_PX)
        if a.ndim != 4 or a.shape[1:] != want:
            raise ValueError(
                f"tier stacks: expected (N, {', '.join(map(str, want))}), got {a.shape}"
            )
        if len(a) == 0:
            return np.zeros((0, self.outputs), np.float32)
        return self._forward(a)

    def read(
        self,
        frame: NDArray[np.uint8],
        pose: BoardPose,
        geometry: BoardGeometry,
        white: NDArray[Any],
        spaces: list[int],
    ) -> NDArray[np.float32]:
        """``(N, K + 1)`` tower-count probabilities of ``spaces`` in one frame (one batched
        forward pass); see :func:`tier_stacks` and :func:`network_input` for the arguments and
        errors.

        :raises GeometryError: for a space off the track.
        """
        if not spaces:
            return np.zeros((0, self.outputs), np.float32)
        return self.probabilities(self.cutter.inputs(frame, pose, geometry, white, spaces))


class TierCutter:
    """Cuts the tier stacks of a frame's spaces as the networks' input
    (:func:`tier_stacks`, :func:`network_input`), with the sample maps of every space of the
    board made once per pose (a fixed camera's pose object is reused frame after frame). The
    tower-count and raven-castle networks read the same stacks: the detector cuts them once
    per frame with one cutter and gives each network its spaces' rows (a row is the same
    whichever other spaces are cut with it).

    :param max_towers: ``K``, the most towers on one space.
    """

    def __init__(self, max_towers: int = 10) -> None:
        self.max_towers = max_towers
        # the sample maps of every space in the last pose read: (pose, geometry, space -> row,
        # (S, (K + 1) P, P) x and y maps in the half image of the frame's board region,
        # (x0, y0, x1, y1) of that region and the frame's (H, W))
        self._maps: (
            tuple[
                BoardPose,
                BoardGeometry,
                dict[int, int],
                tuple[Any, Any],
                tuple[int, int, int, int, int, int],
            ]
            | None
        ) = None

    def inputs(
        self,
        frame: NDArray[np.uint8],
        pose: BoardPose,
        geometry: BoardGeometry,
        white: NDArray[Any],
        spaces: list[int],
    ) -> NDArray[np.float32]:
        """The network input ``(N, 3 (K + 1), ROI_PX, ROI_PX) float32`` of ``spaces`` in one
        frame; see :func:`tier_stacks` and :func:`network_input` for the arguments and errors.

        :raises GeometryError: for a space off the track.
        """
        t = self.max_towers + 1
        if not spaces:
            return np.zeros((0, 3 * t, ROI_PX, ROI_PX), np.float32)
        c = self._maps
        if c is None or c[0] is not pose or c[1] is not geometry or c[4][4:] != frame.shape[:2]:
            # every space's maps, made once per pose: the spaces read change (the castle
            # moves, its stack and the inserts are not read) while the pose stays
            every = {s: i for i, s in enumerate(geometry.spaces)}
            mx, my = _sample_maps(pose, geometry, list(every), self.max_towers)
            x0, x1 = _half_span(mx, frame.shape[1])
            y0, y1 = _half_span(my, frame.shape[0])
            # (the maps moved to the region's half image: whole numbers off float32
            # coordinates of that size are exact, so remap's sub-pixel weights stay the same)
            mx -= np.float32(x0 // 2)
            my -= np.float32(y0 // 2)
            shape = (len(every), t * ROI_PX, ROI_PX)
            region = (x0, y0, x1, y1, frame.shape[0], frame.shape[1])
            c = self._maps = (pose, geometry, every, (mx.reshape(shape), my.reshape(shape)), region)
        off = sorted(set(spaces) - set(c[2]))
        if off:
            raise GeometryError(f"spaces {off} are not on the board's track")
        idx = [c[2][s] for s in spaces]
        maps = (
            np.ascontiguousarray(c[3][0][idx].reshape(-1, ROI_PX)),
            np.ascontiguousarray(c[3][1][idx].reshape(-1, ROI_PX)),
        )
        # only the board's region of the frame is halved (under half of a frame's pixels)
        x0, y0, x1, y1 = c[4][:4]
        stacks = tier_stacks(frame[y0:y1, x0:x1], pose, geometry, spaces, self.max_towers, maps)
        return network_input(stacks, white)


def _half_span(m: NDArray[np.float32], n: int) -> tuple[int, int]:
    """The frame columns (or rows) ``[a, b)`` whose half-size image (``cv2.pyrDown``) holds the
    samples ``m`` (half-image px) exactly as the whole frame's half does: the bilinear
    neighbours of every sample and two half pixels more (the reach of the pyramid's 5-tap
    filter), starting on an even pixel; the frame's edge where a sample comes within that
    of it or beyond it (replicated there as in the whole frame). The whole frame when the
    samples span no such region."""
    lo = int(np.floor(float(m.min())))
    hi = int(np.floor(float(m.max()))) + 1
    a = 2 * max(0, lo - 2)
    b = min(n, 2 * hi + 4)
    if b - a < 8:
        return 0, n
    return a, b
