"""The wizards on every top surface from a small convolutional network (ONNX, run with ``cv2.dnn``).

The hand-built wizard stage (:mod:`companion.vision.detector.wizards`) labels the pixels of the
projected wizard region by the colour profile's nearest class and divides each colour's area by
one wizard's. This module is the learned alternative (``DetectorConfig.wizard_method = "cnn"``;
``docs/vision.md``, "Wizards", gives both methods' figures):

* the ROI of a space is its *top-surface stack*: ``len(SLABS_MM)`` board-parallel squares
  around the space's centre at the heights ``top + h`` (``h`` in :data:`SLABS_MM`, mm) above the
  surface the wizards stand on (the track or the roof of its top tower), resampled from the
  frame through the board pose onto ``ROI_PX`` x ``ROI_PX`` px. A slab shows a wizard's robe,
  body or head where that height of the wizard stands, so the slabs line up a wizard seen from
  any tilt. The half side is the surface's radius plus a margin (a track space is wider than a
  roof). Each square is turned so that its top points away from the camera's foot point (as the
  tower-count ROI, :mod:`companion.vision.stack_cnn`): the near side is always at the bottom;
* each channel is divided by the frame's white reference (the markers' white paper), so the
  exposure and the white balance drop out;
* beside the crops the network takes what the colour areas measured on the same top
  (:func:`hand_cues`: per colour its area in wizards and its count, the colours in the game,
  the clipped pixels, the areas' distance from a count boundary, one wizard's size, the top
  kind), joined to its pooled features, so that it learns where the colour areas are right;
* the network gives, for each of the six wizard colours (:data:`COLOURS`), the probabilities of
  ``0..MAX_PER_COLOUR`` wizards of that colour on the top (a softmax per colour, with a
  temperature fitted on held-out renders folded in). Colours not in the game are known to be
  absent: their probabilities are set to "none" before the counts are chosen.

All spaces of a frame go through the network in one batched forward pass. The model ships as
``wizard_cnn.onnx`` beside this module; its training on seeded domain-randomised renders lives
with the simulation (``python -m companion.sim.train_wizard_cnn``, needs the ``train`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import COLOURS, MAX_WIZARDS_ON_TOP
from companion.vision.geometry import BoardGeometry
from companion.vision.images import read_onnx
from companion.vision.markers import BoardPose
from companion.vision.stack_cnn import camera_foot, network_input, project_points

MODEL_PATH = Path(__file__).with_name("wizard_cnn.onnx")

ROI_PX = 32
"""Side of one slab's crop, px."""

SLABS_MM = (2.0, 10.0, 18.0)
"""Heights of the slabs above the top surface, mm (a wizard is 24 mm tall: robe, body, head)."""

MARGIN_MM = 4.0
"""How far a crop reaches beyond the top surface's radius, mm (a wizard's robe at the rim)."""

MAX_PER_COLOUR = 5
"""Most wizards of one colour the network tells apart (R-COMP-1: at most 5 in the box)."""


CUE_TOPS = ("plain-space", "crest-space", "fountain", "plain", "crest", "magic")
"""The top kinds the colour areas' measurements tell apart (:func:`hand_cues`)."""


def n_cues() -> int:
    """Length of :func:`hand_cues`: per colour the area, the count and whether it is in the
    game; the unknown area, the clipped share, the margin, one wizard's size; the top kind."""
    return 3 * len(COLOURS) + 4 + len(CUE_TOPS)


def hand_cues(
    areas: Mapping[str, float],
    counts: Mapping[str, int],
    colours: Iterable[str],
    unknown: float,
    clipped: float,
    margin: float,
    top: str,
    one_wizard: float,
) -> NDArray[np.float32]:
    """What the hand-built wizard stage measured on one top, as the network's second input
    ``(n_cues(),) float32``.

    :param areas: colour -> its area in units of one wizard's projected area (others ignored).
    :param counts: colour -> the wizards the colour areas count.
    :param colours: the colours in the game (the others' area and count are 0).
    :param unknown: the clipped pixels' area, in wizards; ``clipped``: their share of the top.
    :param margin: the colour areas' distance from the nearest count boundary, in wizards.
    :param top: the top kind read (one of :data:`CUE_TOPS`, else none of them).
    :param one_wizard: one wizard's projected area there, sampled pixels.
    """
    play = set(colours)
    on = [1.0 if c in play else 0.0 for c in COLOURS]
    area = [min(float(areas.get(c, 0.0)), 8.0) * o for c, o in zip(COLOURS, on, strict=True)]
    count = [float(counts.get(c, 0)) * o for c, o in zip(COLOURS, on, strict=True)]
    size = math.log1p(max(float(one_wizard), 0.0)) / 5.0
    rest = [min(float(unknown), 4.0), float(clipped), float(margin), size]
    kind = [1.0 if top == k else 0.0 for k in CUE_TOPS]
    return np.asarray(area + count + on + rest + kind, np.float32)


def n_channels() -> int:
    """Input channels: three colours per slab."""
    return 3 * len(SLABS_MM)


def n_outputs() -> int:
    """Output probabilities: ``0..MAX_PER_COLOUR`` wizards for each colour."""
    return len(COLOURS) * (MAX_PER_COLOUR + 1)


def roi_points(
    geometry: BoardGeometry, spaces: Sequence[int], tiers: Sequence[int], foot: NDArray[Any]
) -> NDArray[np.float64]:
    """Sample points of the top-surface stacks of ``spaces`` whose top surfaces are at
    ``tiers``: ``(N, len(SLABS_MM), ROI_PX, ROI_PX, 3)`` board mm with z up; row 0 of each crop
    is the side away from the camera's foot point ``foot`` (mm).

    :raises GeometryError: for a space off the track or a negative tier.
    """
    n, t = len(spaces), len(SLABS_MM)
    out = np.empty((n, t, ROI_PX, ROI_PX, 3))
    unit = (np.arange(ROI_PX) + 0.5) / ROI_PX * 2.0 - 1.0
    for i, (sp, tier) in enumerate(zip(spaces, tiers, strict=True)):
        c = geometry.space_centre(sp)[:2]
        u = unit * (geometry.surface_radius(tier) + MARGIN_MM)
        d = c - np.asarray(foot, np.float64)[:2]
        norm = math.hypot(float(d[0]), float(d[1]))
        away = d / norm if norm > 1e-6 else np.array([0.0, -1.0])
        side = np.array([-away[1], away[0]])
        xy = (
            c[None, None, :]
            + u[None, :, None] * side[None, None, :]
            - u[:, None, None] * away[None, None, :]
        )
        out[i, :, :, :, :2] = xy[None]
        out[i, :, :, :, 2] = (geometry.tier_z(tier) + np.asarray(SLABS_MM))[:, None, None]
    return out


def _sample_maps(
    pose: BoardPose, geometry: BoardGeometry, spaces: Sequence[int], tiers: Sequence[int]
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """``cv2.remap`` maps of the top-surface stacks of ``spaces`` in the frame."""
    pts = roi_points(geometry, spaces, tiers, camera_foot(pose)).reshape(-1, 3)
    pts[:, 2] = -pts[:, 2]  # BoardPose.project takes z down
    img = project_points(pose, pts).astype(np.float32)
    rows = len(spaces) * len(SLABS_MM) * ROI_PX
    mx = np.ascontiguousarray(img[:, 0].reshape(rows, ROI_PX))
    my = np.ascontiguousarray(img[:, 1].reshape(rows, ROI_PX))
    return mx, my


def top_stacks(
    frame: NDArray[np.uint8],
    pose: BoardPose,
    geometry: BoardGeometry,
    spaces: Sequence[int],
    tiers: Sequence[int],
    maps: tuple[NDArray[np.float32], NDArray[np.float32]] | None = None,
) -> NDArray[np.uint8]:
    """The raw top-surface stacks of ``spaces`` (top surfaces at ``tiers``):
    ``(N, len(SLABS_MM), ROI_PX, ROI_PX, 3) uint8 BGR``.

    :param frame: ``(H, W, 3) uint8 BGR`` (the frame at the detector's working scale).
    :param pose: a board pose with a camera model (3-D).
    :param maps: the sample maps of this pose, these spaces and tiers, when known.
    :raises ValueError: for a pose without a camera model or ``tiers`` of another length.
    """
    if len(tiers) != len(spaces):
        raise ValueError(f"top stacks: {len(spaces)} spaces but {len(tiers)} tiers")
    t = len(SLABS_MM)
    if not spaces:
        return np.zeros((0, t, ROI_PX, ROI_PX, 3), np.uint8)
    mx, my = maps if maps is not None else _sample_maps(pose, geometry, spaces, tiers)
    crops = cv2.remap(frame, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cast("NDArray[np.uint8]", crops.reshape(len(spaces), t, ROI_PX, ROI_PX, 3))


def choose_counts(
    probs: NDArray[Any], colours: Iterable[str] | None = None
) -> tuple[dict[str, int], float]:
    """The wizards on one top from the network's probabilities ``(len(COLOURS),
    MAX_PER_COLOUR + 1)``: colour -> count (the most probable count of each colour in the game,
    ``colours``; all six when None), and how sure that is: the product over those colours of
    the chosen count's probability. More than ``MAX_WIZARDS_ON_TOP`` (R-WIZ-4) in total drops
    the least sure wizard until the rule holds, at the probability of the count kept.
    """
    p = np.asarray(probs, np.float64).reshape(len(COLOURS), MAX_PER_COLOUR + 1)
    allowed = set(COLOURS if colours is None else colours)
    counts = {c: int(np.argmax(p[i])) if c in allowed else 0 for i, c in enumerate(COLOURS)}
    while sum(counts.values()) > MAX_WIZARDS_ON_TOP:
        # the colour whose one fewer wizard costs the least probability
        cand = [(p[i, counts[c] - 1], c) for i, c in enumerate(COLOURS) if counts[c] > 0]
        counts[max(cand)[1]] -= 1
    sure = 1.0
    for i, c in enumerate(COLOURS):
        if c in allowed:
            sure *= float(p[i, counts[c]])
    return {c: n for c, n in counts.items() if n > 0}, sure


class TopSampler:
    """Cuts the top-surface stacks of a frame's spaces as network input (the wizard and the
    token networks read the same), keeping the sample maps of the last pose read (a fixed
    camera's pose object is reused) for each space and tier it was asked for.

    The maps of a space and tier are made the first time that top surface is read in a pose:
    a new pose costs the projection of the frame's tops only (one tier per space), not of
    every tier of every space (eleven times as many points, a quarter of a second on one
    core), so a pose that changes during play does not stall the frame it changes on.

    :param max_towers: the highest tier a top surface can be at.
    """

    def __init__(self, max_towers: int = 10) -> None:
        self.max_towers = max_towers
        # the pose and geometry the maps are for
        self._key: tuple[BoardPose, BoardGeometry] | None = None
        # (space, tier) -> its x and y maps, (len(SLABS_MM) ROI_PX, ROI_PX) each
        self._maps: dict[tuple[int, int], tuple[NDArray[np.float32], NDArray[np.float32]]] = {}

    def inputs(
        self,
        frame: NDArray[np.uint8],
        pose: BoardPose,
        geometry: BoardGeometry,
        white: NDArray[Any],
        spaces: Sequence[int],
        tiers: Sequence[int],
    ) -> NDArray[np.float32]:
        """The network input ``(N, 3 len(SLABS_MM), ROI_PX, ROI_PX)`` of the top surfaces of
        ``spaces`` at ``tiers`` in one frame; see :func:`top_stacks` and
        :func:`~companion.vision.stack_cnn.network_input` for the arguments and errors."""
        if len(tiers) != len(spaces):
            raise ValueError(f"top stacks: {len(spaces)} spaces but {len(tiers)} tiers")
        if not len(spaces):
            return np.zeros((0, n_channels(), ROI_PX, ROI_PX), np.float32)
        key = self._key
        if key is None or key[0] is not pose or key[1] is not geometry:
            self._key = (pose, geometry)
            self._maps = {}
        tops = [
            (int(s), min(max(int(t), 0), self.max_towers))
            for s, t in zip(spaces, tiers, strict=True)
        ]
        new = sorted(set(tops) - set(self._maps))
        if new:
            mx, my = _sample_maps(pose, geometry, [s for s, _ in new], [t for _, t in new])
            rows = len(SLABS_MM) * ROI_PX
            for i, top in enumerate(new):
                self._maps[top] = (mx[i * rows : (i + 1) * rows], my[i * rows : (i + 1) * rows])
        maps = (
            np.concatenate([self._maps[top][0] for top in tops]),
            np.concatenate([self._maps[top][1] for top in tops]),
        )
        stacks = top_stacks(frame, pose, geometry, spaces, tiers, maps)
        return network_input(stacks, white)


class WizardModel:
    """The shipped (or a given) ONNX wizard network, run with ``cv2.dnn``.

    :param path: an ONNX file taking two inputs, ``tops``: ``(N, 3 len(SLABS_MM), ROI_PX,
        ROI_PX) float32`` top-surface stacks (:func:`~companion.vision.stack_cnn.network_input`
        of :func:`top_stacks`), and ``cues``: ``(N, n_cues()) float32`` the colour areas'
        measurements of the same tops (:func:`hand_cues`), and giving ``(N, len(COLOURS)
        (MAX_PER_COLOUR + 1))`` probabilities (colour-major: ``[colour, count]``; each colour's
        row sums to 1).
    :raises OSError: when the file is missing; :raises ValueError: when OpenCV cannot read it or
        it does not give those probabilities for those inputs.
    """

    def __init__(self, path: str | Path = MODEL_PATH, max_towers: int = 10) -> None:
        self._net = read_onnx(path, "wizard model")
        self.path = Path(path)
        self.max_towers = max_towers
        self.sampler = TopSampler(max_towers)
        probe = np.zeros((2, n_channels(), ROI_PX, ROI_PX), np.float32)
        try:
            got = self._forward(probe, np.zeros((2, n_cues()), np.float32))
        except (cv2.error, ValueError) as exc:
            raise ValueError(
                f"wizard model {self.path.name}: does not take top-surface stacks and the "
                f"colour areas' measurements ({str(exc).strip().splitlines()[-1][:200]})"
            ) from None
        rows = got.reshape(2, len(COLOURS), -1).sum(axis=2) if got.size == 2 * n_outputs() else None
        if rows is None or not np.allclose(rows, 1.0, atol=1e-3):
            raise ValueError(
                f"wizard model {self.path.name}: gives {got.shape[1:]} outputs, expected "
                f"{n_outputs()} probabilities ({len(COLOURS)} colours x 0..{MAX_PER_COLOUR})"
            )

    def _forward(self, x: NDArray[np.float32], cues: NDArray[np.float32]) -> NDArray[np.float32]:
        self._net.setInput(x, "tops")
        self._net.setInput(cues, "cues")
        out = np.asarray(self._net.forward(), np.float32)
        return out.reshape(len(x), -1)

    def probabilities(self, x: NDArray[Any], cues: NDArray[Any]) -> NDArray[np.float32]:
        """``(N, len(COLOURS), MAX_PER_COLOUR + 1)`` probabilities for network input
        ``(N, 3 len(SLABS_MM), ROI_PX, ROI_PX)`` and the colour areas' measurements of the same
        tops ``(N, n_cues())`` (:func:`hand_cues`).

        :raises ValueError: for inputs of other shapes.
        """
        a = np.ascontiguousarray(x, np.float32)
        c = np.ascontiguousarray(cues, np.float32)
        want = (n_channels(), ROI_PX, ROI_PX)
        if a.ndim != 4 or a.shape[1:] != want:
            raise ValueError(
                f"top-surface stacks: expected (N, {', '.join(map(str, want))}), got {a.shape}"
            )
        if c.shape != (len(a), n_cues()):
            raise ValueError(f"colour-area cues: expected ({len(a)}, {n_cues()}), got {c.shape}")
        if len(a) == 0:
            return np.zeros((0, len(COLOURS), MAX_PER_COLOUR + 1), np.float32)
        return self._forward(a, c).reshape(len(a), len(COLOURS), MAX_PER_COLOUR + 1)
