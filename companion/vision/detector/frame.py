"""The values one frame's reading passes from stage to stage.

:class:`Reader` is what reads every frame of a session (geometry, thresholds, the profile's
classes, the height model); :class:`FrameProbes` is one frame with its pose, white reference
and every probe point's colour labels and edge strength, measured once (:func:`probe_frame`);
the stages (:mod:`~companion.vision.detector.heights`, :mod:`~companion.vision.detector.tops`,
:mod:`~companion.vision.detector.wizards`, :mod:`~companion.vision.detector.tokens`) are
functions over them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.castle_cnn import CastleModel
from companion.vision.detect_height import HeightModel
from companion.vision.detector.classes import ProfileClasses
from companion.vision.detector.config import DetectorConfig
from companion.vision.detector.pose import Hull, PoseTables
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BoardPose
from companion.vision.profile import ColourProfile, features
from companion.vision.stack_cnn import StackModel, TierCutter


@dataclass(frozen=True, slots=True)
class Reader:
    """What reads every frame of a session.

    :param crest_gaps: the crest discs' contrast measured in the last frames (the light changes
        slowly); the top-kind stage appends to it.
    :param stack_cnn: the tower-count CNN when ``config.height_method`` is ``"cnn"``.
    :param castle_cnn: the raven-castle CNN when ``config.castle_method`` is ``"cnn"``.
    :param tier_cut: cuts the tier stacks both CNNs read, once per frame (None without them).
    :param wizard_gain: one wizard's measured area at setup relative to the projected model
        (see :func:`~companion.vision.detector.wizard_area_gain`), 0.5..2.
    """

    geometry: BoardGeometry
    config: DetectorConfig
    profile: ColourProfile
    classes: ProfileClasses
    height: HeightModel | None
    stack_cnn: StackModel | None
    castle_cnn: CastleModel | None
    tier_cut: TierCutter | None
    wizard_gain: float
    crest_gaps: list[float]


@dataclass(frozen=True, slots=True)
class FrameProbes:
    """One frame and its probe points' measurements (S spaces, K tiers; probe counts Q roof
    interior, W wall, C castle body, R rim points, L = 2K + 1 rims: K roofs, K + 1 castle
    roofs).

    :param frame: ``(H, W, 3) uint8 BGR``.
    :param grey: ``(H, W) uint8`` the same frame in grey.
    :param white: ``(3,)`` BGR of the markers' white paper in this frame.
    :param edges: ``(S, L, R)`` edge strength across each rim point (white paper = 255).
    :param side: ``(S, K, 2, R)`` edge strength just inside / outside the roof rims.
    :param kl: ``(S, K, Q)`` profile labels of the roof-interior probes (-1 reject).
    :param kc: ``(S, K, Q)`` nearest-class labels of the same probes.
    :param kfeat: ``(S, K, Q, 3)`` colour features of the same probes.
    :param kdark: ``(S, K, Q)`` those probes darker than ``ink_light``.
    :param cl: ``(S, K + 1, C)`` nearest-class labels of the castle-body probes.
    :param wc: ``(S, K, W)`` nearest-class labels of the wall probes.
    :param wlight: ``(S, K, W)`` lightness of the wall probes.
    """

    frame: NDArray[np.uint8]
    grey: NDArray[np.uint8]
    pose: BoardPose
    tables: PoseTables
    white: NDArray[np.float64]
    edges: NDArray[np.float32]
    side: NDArray[np.float32]
    kl: NDArray[np.int32]
    kc: NDArray[np.int32]
    kfeat: NDArray[np.float32]
    kdark: NDArray[np.bool_]
    cl: NDArray[np.int32]
    wc: NDArray[np.int32]
    wlight: NDArray[np.float32]

    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)`` px of the frame."""
        h, w = self.frame.shape[:2]
        return h, w


@dataclass(frozen=True, slots=True)
class Stacks:
    """What stands on each space (index ``si`` of ``geometry.spaces``), from the heights stage.

    :param towers_of: tower count per space.
    :param castle_of: the raven castle stands there.
    :param margin_of: how clear the decision was (confidence - 0.5).
    :param roof_edges: ``(S, K)`` median rim edge per tier (0 with too few rim points).
    :param castle_frac: ``(S, K + 1)`` share of castle-coloured body probes per tier.
    :param height_features: ``(S, F)`` the height model's features.
    :param forced: per space, the setup's tower total changed the count the camera saw.
    :param rival_of: per space, the next most likely tower count (the count the camera saw
        when the total ``forced`` another; -1 when unknown: no height model, castle, insert).
    """

    towers_of: list[int]
    castle_of: list[bool]
    margin_of: list[float]
    roof_edges: NDArray[np.floating]
    castle_frac: NDArray[np.floating]
    height_features: NDArray[np.float32]
    forced: list[bool] = field(default_factory=list)
    rival_of: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TopPixels:
    """The pixels of every top surface's hull, labelled once.

    :param hulls: per space its hull (None under the castle), clipped to the pixels it owns.
    :param labels: nearest-class labels of all hulls' pixels, space after space.
    :param ys: the same pixels' rows; :param xs: their columns.
    :param near_wizard: ``(S, K, Q)`` roof-interior probes next to a wizard-labelled pixel.
    """

    hulls: list[Hull | None]
    labels: NDArray[np.int32]
    ys: NDArray[np.int32]
    xs: NDArray[np.int32]
    near_wizard: NDArray[np.bool_]


def rim_edges(
    grey_frame: NDArray[np.uint8], tables: PoseTables, white: NDArray[np.float64]
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Edge strength at each rim point ``(S, L, R)`` and just inside / outside the roof rims
    of tiers 1..K ``(S, K, 2, R)``: the Sobel gradient of the smoothed grey frame along the
    rim's image normal, scaled so that the white paper of the markers is 255 (the same under
    dim and bright light)."""
    x0, y0, x1, y1 = tables.crop
    grey = cv2.GaussianBlur(grey_frame[y0:y1, x0:x1], (5, 5), 1.0)
    # (the 3x3 Sobel pair in one pass: the same values as two cv2.Sobel calls)
    sx, sy = cv2.spatialGradient(grey)
    gx, gy = sx.ravel(), sy.ravel()
    # rim and side points in one gather (flat indices into the crop, built with the pose)
    idx, nx, ny = tables.edge_flat
    scale = np.float32(255.0 * 3.0 / 8.0 / max(float(np.sum(white)), 1.0))
    e = np.abs(gx[idx] * nx + gy[idx] * ny) * scale
    n_rim = tables.rim_ok.size
    out: NDArray[np.float32] = e[:n_rim].reshape(tables.rim_ok.shape)
    side: NDArray[np.float32] = e[n_rim:].reshape(tables.side_ok.shape)
    return out, side


def probe_frame(
    rd: Reader,
    frame: NDArray[np.uint8],
    grey: NDArray[np.uint8],
    pose: BoardPose,
    tables: PoseTables,
    white: NDArray[np.float64],
) -> FrameProbes:
    """Measure every probe point of ``tables`` in one frame: rim edges, and one
    classification of the castle, roof-interior and wall probes."""
    edges, side = rim_edges(grey, tables, white)  # (S, L, R), (S, K, 2, R)
    # one classification for the castle and roof-kind probes
    cp, kp, wp = tables.castle_px, tables.kind_px, tables.wall_px
    probe = np.concatenate([cp.reshape(-1, 2), kp.reshape(-1, 2), wp.reshape(-1, 2)])
    ppx = frame[probe[:, 1], probe[:, 0]]
    pf = features(ppx, white)
    lab = rd.profile.classify_bgr(ppx, white)
    n1, n2 = cp[..., 0].size, kp[..., 0].size
    # the raven printed on a crest roof is dark ink: no plain roof has dark pixels inside
    kdark = (pf[n1 : n1 + n2, 2] < rd.config.ink_light).reshape(kp.shape[:-1])
    # the black castle by the nearest class without reject (under dim light its chroma is
    # noise and the profile's tight prototype rejects it)
    # (and the height features' colour shares: the profile's tight prototypes reject most
    # of a dim frame's roof and track pixels)
    # (with the magic tower its colours are in reach here: its dark blue-violet roof and
    # walls are otherwise nearest to the black castle, the web or a wizard)
    ix = rd.classes
    nearest = ix.magic_count.classify_bgr(ppx, white)
    cl = nearest[:n1].reshape(cp.shape[:-1])
    if ix.castle_count is not ix.magic_count:
        cl = ix.castle_count.classify_bgr(ppx[:n1], white).reshape(cp.shape[:-1])
    return FrameProbes(
        frame=frame,
        grey=grey,
        pose=pose,
        tables=tables,
        white=white,
        edges=edges,
        side=side,
        kl=lab[n1 : n1 + n2].reshape(kp.shape[:-1]),
        kc=nearest[n1 : n1 + n2].reshape(kp.shape[:-1]),
        kfeat=pf[n1 : n1 + n2].reshape(kp.shape[:-1] + (3,)),
        kdark=kdark,
        cl=cl,
        wc=nearest[n1 + n2 :].reshape(wp.shape[:-1]),
        wlight=pf[n1 + n2 :, 2].reshape(wp.shape[:-1]),
    )


def frame_white(
    frame: NDArray[np.uint8], tables: PoseTables, markers: Iterable[int]
) -> NDArray[np.float64] | None:
    """White reference from the white cells of the markers found in this frame (as
    :func:`~companion.vision.profile.white_from_markers`, with each marker's pixels listed
    once per pose): per marker the bright class of Otsu's threshold, the median over
    markers. None when no marker gives 20 white pixels."""
    flat = frame.reshape(-1, 3)
    whites = []
    for mid in markers:
        idx = tables.white_px.get(int(mid))
        if idx is None or len(idx) < 20:
            continue
        px = flat[idx]
        g8 = (px.astype(np.uint16).sum(axis=1) // 3).astype(np.uint8).reshape(-1, 1)
        thr, _ = cv2.threshold(g8, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
        bright = px[g8[:, 0] > thr]
        if bright.shape[0] < 20:
            continue
        whites.append(np.median(bright, axis=0).astype(np.float64))
    if not whites:
        return None
    out: NDArray[np.float64] = np.maximum(np.median(np.array(whites), axis=0), 1.0)
    return out
