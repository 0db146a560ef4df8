"""The detector: one camera frame -> an :class:`~companion.rules.observation.Observation`.

What it uses is exactly what a real table setup has: the frame, the calibrated
:class:`~companion.vision.camera.CameraModel`, the :class:`~companion.vision.geometry.BoardGeometry`
(measured sizes, marker layout) and the :class:`~companion.vision.profile.ColourProfile` sampled
from the setup frame. Nothing else.

Pipeline per frame (all vectorised; no per-pixel Python):

1. **Check the frame** (None, wrong type/shape/dtype, truncated JPEG grey rows) -> a status.
2. **Board pose** from the four ArUco markers (:class:`~companion.vision.markers.BoardPoseTracker`:
   cached, re-checked in small ROIs each frame) and ``cv2.solvePnP`` with the camera model.
3. **White reference** from the white cells of the markers (colour temperature and brightness
   cancel, see :mod:`companion.vision.profile`).
4. **Height of each stack from the oblique view**: for every space and every candidate tier
   ``k = 1..10`` the crenellated rim of the roof of tier ``k`` (a circle of the roof's radius at
   ``k * tier_height + merlon_height``, from the geometry) is projected into the image with the
   pose; the median Sobel gradient across that projected rim (along its image normal, on the
   smoothed grey frame, scaled by the markers' white) is the evidence for a roof there. Each
   tier projects to a different ellipse (parallax and scale), so only the true top roof lines up
   with a strong edge all round. These rim measurements, the colour shares inside each candidate
   roof and on each tier's camera-facing wall (the shipped model leaves the wall shares out:
   a near-overhead setup frame shows too little wall to learn its colour), and the camera's
   elevation go to a small trained
   network (:mod:`companion.vision.detect_height`, shipped as ``detect_height.json``) that gives
   each space a probability per tower count; the heights chosen are the most probable ones that
   add up to the towers counted at setup (every tower stays on the board), and the chosen
   count's probability is the space's confidence. Without the model file the best tier wins when
   its edge is strong (``roof_threshold``) and stands out (``roof_contrast``).
   Rim points on the ArUco markers or inside the raven castle's silhouette are ignored.
   The **raven castle** (there is one) is the space whose black probes on the castle's
   camera-facing side score highest at the tier the rim test on the castle's roof points to.
   All probe positions depend only on the pose:
   they are computed once and reused while the camera stays put (``pose_tolerance_px``).
5. **Top kind**: crest roofs carry a yellow crest disc with a printed raven (dark grey ink),
   plain roofs neither. The ink decides first, relative to the bare roof outside the disc on
   the same roof (the same light on both): dark grey pixels there say crest, the raven's place
   in view and bare says plain. Where wizards hide the raven, the disc's yellow-blue chroma
   above the bare roof around it decides, compared with what the crest roofs with their raven
   in view measure in the same frame (or the last frames); over-exposed frames shrink that
   contrast, so no fixed threshold from the setup frame is used. The magic roof by its colour
   class. For an empty space the track kind is a property of the track (crest / plain /
   fountain / web). A roof under the castle cannot be seen: it is reported from the colour
   vote, with the castle flag set (the tracker knows it from history).
6. **Wizards** on the top surface: the pixels of the projected cylinder the wizards stand in are
   labelled by the nearest class of the profile with one shared spread and no reject (a
   blurred edge pixel counts for the wizard when it is more than half wizard, which keeps the
   area unbiased; a dark pixel's noisy chroma weighs less); per colour the wizard-coloured
   area divided by the projected area of one wizard gives the count (<= 6 in total, R-WIZ-4);
   where hulls overlap in the image the higher top surface owns the pixels; on crest tops the
   colour nearest the disc loses the disc's share (``crest_leak``); a faint colour next to its
   hard-pair partner (yellow/orange, red/orange, blue/purple) is the partner's shading and is
   dropped.
   **Expansion pieces**: insert spaces (fountain, web) never hold a tower or the castle
   (R-MOD-FOUNTAIN-4, R-MOD-WEB-3) and a web holds nothing; the one magic tower is the roof
   whose outer ring (outside its star, inside its merlons) shows most of its field's or its
   violet merlons' colour; on fountains and magic roofs those colours are measured in the
   frame before wizards are counted (the merlons are no purple wizard, the star no yellow
   one); the one witch and the one raven are the spaces where most of their colour shows (the
   raven: its white disc next to the grey ink of its printed raven, after the frame's colour
   drift against the setup is taken off, and whiter than this frame's crest discs). A roof
   under the raven token is crest when the roof just outside the token is yellower than its
   bare rim (the crest disc is wider than the token).
7. A small top-down **board view** (for the stability gate's frame differencing).

Geometry conventions: board mm with z up (geometry); :meth:`BoardPose.project` takes z *down*
(OpenCV's right-handed frame), so heights are negated when projecting.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import (
    COLOURS,
    MAX_TOWERS,
    MAX_WIZARDS_ON_TOP,
    Observation,
    SpaceObservation,
)
from companion.vision.camera import CameraModel
from companion.vision.detect_height import PER_TIER, HeightModel
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BoardPose, BoardPoseTracker, MarkerDetector
from companion.vision.profile import (
    CHROMA_EPS,
    MIN_LIGHT,
    ColourProfile,
    features,
    marker_cut,
    white_from_pixels,
)

OK = "ok"
NO_FRAME = "no-frame"
BAD_FRAME = "bad-frame"
BOARD_LOST = "board-lost"

ROOF_CLASSES = {
    "roof-crest": "crest",
    "roof-plain": "plain",
    "roof-magic": "magic",
    "roof-magic-star": "magic",
}
"""Profile class name -> Observation top kind."""
MAGIC_CLASSES = ("roof-magic", "roof-magic-star", "wall-magic")
"""The magic roof's field and star and the magic tower's violet merlons: they may look like
wizards, so wizards are counted against them only on magic tops."""

CASTLE_CLASS = "castle"
HARD_PAIRS = (("yellow", "orange"), ("red", "orange"), ("blue", "purple"))
"""Wizard colours that shading and white balance push into each other."""
TOKEN_CLASSES = ("witch", "raven")
INSERT_KINDS = ("fountain", "web")
INSERT_CLASSES = ("track-fountain", "track-web")
"""Track kinds of the expansion's inserts: never under a tower or the castle."""
SHIPPED = "shipped"
"""``height_model`` default: the forest shipped beside :mod:`companion.vision.detect_height`."""


@dataclass(frozen=True)
class DetectorConfig:
    """Tunable thresholds (dimensionless fractions unless stated).

    :param max_towers: highest stack considered (R-COMP-1/3: 9 towers, 10 with the magic tower).
    :param roof_threshold: minimum edge strength across a roof rim (grey levels per pixel,
        white paper = 255) for a roof to be there.
    :param roof_contrast: how far that edge must stand above the median of the other tiers'.
    :param roof_interior: minimum share of roof- or wizard-coloured probes inside the roof.
    :param castle_threshold: minimum share of castle-coloured probes for the castle.
    :param wizard_min: fraction of one wizard's projected area that counts as one wizard.
    :param wizard_area_scale: visible share of a wizard's bounding-cylinder area (calibrated on
        renders: the median single wizard then measures 1.0).
    :param ink_light: lightness (relative to the white paper) below which a roof pixel is ink.
    :param ink_share: share of dark pixels in a roof's middle that makes a roof under the
        castle crest (the printed raven; plain roofs have none).
    :param crest_leak: wizard areas of the yellow crest disc (or a crest space's mark) that show
        in the wizard hull and look like the wizard colour nearest to the disc; subtracted from
        that colour's area on crest roofs (calibrated on renders with the nearest-class
        labelling: up to 0.5 areas without a yellow wizard).
    :param mark_leak: the same for a crest space's mark on the track (up to 0.2 areas).
    :param mark_min: pixels labelled crest mark on an empty crest space for the mark's colour
        to be measured there (:meth:`Detector._local_mark`).
    :param magic_min: least share of a roof's probes nearest to the magic roof's colours (or
        the wizard colour nearest to its field) for the magic tower's roof (the roof with the
        largest share is the one magic tower).
    :param magic_leak: wizard areas subtracted on the magic roof from the wizard colours
        nearest to its star, its field and its merlons (as ``crest_leak``; with the field and
        star learnt where each shows, on renders of test seeds 0..15 0 and 0.1 did as well,
        0.2 missed a blue wizard on the field).
    :param fountain_rounds: measurements of a fountain insert's water on its space (the same
        way; its colour drifts further from the setup frame's under another light).
    :param wizard_tilt: growth of one wizard's visible area per degree of camera elevation
        above 70 degrees (seen from above a wizard shows more of its shoulders and hat than the
        projected cylinder model says; calibrated on renders: median single-wizard area 0.8 at
        52 degrees, 1.27 at 87 degrees).
    :param disc_votes: how many more outer roof probes must be crest-disc- than plain-roof-
        coloured (or the reverse) for the colour to decide crest / plain; closer votes leave it
        to the ink (wizards hide the raven; their shadows and shading look like ink).
    :param hard_pair_min: a colour next to its hard-pair partner (yellow/orange, red/orange,
        blue/purple) needs this many wizard areas: the partner's shaded edges look like it
        (with the nearest-class labelling a false partner measured at most 0.55).
    :param token_min: fraction of a token's projected area that counts as a token (only the
        space where the most of a token's colour shows can hold it: there is one witch and one
        raven).
    :param raven_min: the same for the raven token (its printed raven covers a good part of
        its white disc).
    :param raven_ink: lightness (relative to the white paper) below which a pixel may be the
        raven printed on the raven token.
    :param view_px: side of the top-down board view handed to the stability gate, px.
    :param frame_view_px: width of the whole-frame grey thumbnail handed to the stability gate, px.
    :param pixel_step: sub-sampling step of the wizard regions, px.
    :param pose_tolerance_px: a new pose that moves no projected point more than this reuses
        the probe tables of the old one (marker corners jitter by noise from frame to frame).
    :param joint_towers: with the height model, choose the most probable heights that add up to
        the number of towers counted at setup (``profile.meta["towers"]``; R-COMP-1/3).
    :param count_chroma_sd: shared chroma spread of the nearest-class labelling of wizard
        hulls and castle probes (feature units).
    :param count_light_sd: shared lightness spread of that labelling (lightness follows
        shading, so it weighs less than chroma).
    :param count_noise: chroma noise of a pixel at lightness 1/3 of the white paper; a dark
        pixel's chroma spread grows as ``count_noise / (3 light + eps)``.
    :param ink_rel: a roof-interior pixel darker than this fraction of the bare roof's
        lightness is the raven's ink (when grey).
    :param ink_probes: raven probes free of wizards needed to call a roof without ink plain
        (on renders no crest roof with 15 or more free raven probes showed no ink).
    :param ink_min: ink probes that make a roof crest (two dark grey probes were a blue
        wizard's shading on a plain roof).
    :param ink_fallback: grey ink probes that make a roof crest when neither the ink
        (``ink_min``) nor the disc's colour decides (wizards crowd the roof; on renders of bench
        seeds 1, 2, 5 the share of dark pixels got 8 of 69 such roofs wrong, this 4).
    :param ink_chroma: largest mean chroma of the ink probes (plus their noise): the shaded
        side of a wizard is dark but coloured.
    :param contrast_probes: free probes needed on the disc ring and on the bare roof to
        measure their chroma contrast.
    :param gap_memory: crest-disc contrasts of earlier frames kept for frames whose crest
        roofs all have their raven hidden.
    :param castle_tier_cost: castle score given up per tier the castle stands on (decides
        between spaces whose castle probes are all black, less than one probe of 21).
    :param castle_edge_min: edge strength (as ``roof_threshold``) of the castle's roof rim
        below which the castle's probes are taken for something else black (the dark table
        beyond the board seen past a high tier): such a space loses ``castle_no_rim`` of its
        castle score.
    :param castle_no_rim: see ``castle_edge_min``.
    :param token_ring_gap: share of the setup's crest-disc contrast (disc above plain roof,
        yellow-blue) that a ring just outside the raven token must show above the bare roof
        for the roof under the token to be crest (on renders plain roofs under the token
        measured up to 0.15, crest roofs mostly above 0.25).
    :param gap_clear: a disc contrast within this fraction of the way from the plain roofs'
        to the crest roofs' contrast of the frame (or beyond) decides the kind even against
        the ink (on renders the two kinds' contrasts met at 0.47 of the way, crest below 0.5
        in 1 of 1076, plain above in 1 of 931).
    """

    max_towers: int = MAX_TOWERS
    roof_threshold: float = 3.5
    roof_contrast: float = 4.5
    roof_interior: float = 0.0
    castle_threshold: float = 0.5
    wizard_min: float = 0.45
    wizard_area_scale: float = 0.92
    hard_pair_min: float = 0.6
    ink_light: float = 0.25
    ink_share: float = 0.06
    disc_votes: int = 3
    crest_leak: float = 0.25
    mark_leak: float = 0.1
    wizard_tilt: float = 0.011
    token_min: float = 0.25
    raven_min: float = 0.2
    raven_ink: float = 0.3
    view_px: int = 160
    frame_view_px: int = 160
    pixel_step: int = 3
    pose_tolerance_px: float = 0.75
    joint_towers: bool = True
    count_chroma_sd: float = 0.04
    count_light_sd: float = 0.15
    count_noise: float = 0.04
    ink_rel: float = 0.4
    ink_probes: int = 15
    ink_chroma: float = 0.2
    contrast_probes: int = 4
    gap_memory: int = 64
    castle_tier_cost: float = 0.01
    castle_edge_min: float = 2.0
    castle_no_rim: float = 0.5
    gap_clear: float = 0.3
    ink_min: int = 3
    ink_fallback: int = 2
    mark_min: int = 15
    fountain_rounds: int = 3
    magic_min: float = 0.2
    magic_leak: float = 0.1
    fountain_open: bool = True
    token_ring_gap: float = 0.2


@dataclass(frozen=True)
class SpaceDetail:
    """Diagnostics of one space (for the bench and the host page): edge strength per tier,
    castle share per tier, wizard areas per colour and token areas (``witch``, ``raven``) in
    units of one piece's projected area, the height model's features."""

    roof_scores: tuple[float, ...]
    castle_scores: tuple[float, ...]
    wizard_area: dict[str, float]
    height_features: tuple[float, ...] = ()


@dataclass(frozen=True)
class Detection:
    """The detector's answer for one frame.

    :param status: ``ok``, ``no-frame``, ``bad-frame`` or ``board-lost``.
    :param message: why, in words (which markers are missing, what is wrong with the frame).
    :param observation: the reading of the frame when ``status == "ok"``, else None. It is marked
        ``unstable=True``: only the stability gate declares a reading stable.
    :param board_view: ``(view_px, view_px, 3) uint8 BGR`` top-down board view, or None.
    :param frame_view: ``(round(H * frame_view_px / W), frame_view_px) uint8`` grey thumbnail of
        the whole frame (board and what lies around it, for the stability gate), or None.
    :param white_bgr: ``(3,)`` white reference of the frame, or None.
    :param pose: the board pose used, or None.
    """

    status: str
    message: str = ""
    observation: Observation | None = None
    board_view: NDArray[np.uint8] | None = None
    white_bgr: NDArray[np.float64] | None = None
    pose: BoardPose | None = None
    details: dict[int, SpaceDetail] = field(default_factory=dict)
    frame_view: NDArray[np.uint8] | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK


def check_frame(frame: Any, size: tuple[int, int] | None = None) -> tuple[str, str]:
    """Is this a usable camera frame?

    :param frame: expected ``(H, W, 3) uint8 BGR``.
    :param size: expected ``(w, h)`` px (any size when None; the same aspect ratio is required
        when given, the camera model is then scaled).
    :returns: ``(status, message)``; status ``ok``, ``no-frame`` or ``bad-frame``.
    """
    if frame is None:
        return NO_FRAME, "no frame from the camera"
    if not isinstance(frame, np.ndarray):
        return BAD_FRAME, f"frame is a {type(frame).__name__}, not an image array"
    if frame.dtype != np.uint8:
        return BAD_FRAME, f"frame has dtype {frame.dtype}, expected uint8"
    if frame.ndim != 3 or frame.shape[2] != 3:
        return BAD_FRAME, f"frame has shape {frame.shape}, expected (H, W, 3) BGR"
    h, w = frame.shape[:2]
    if h < 64 or w < 64:
        return BAD_FRAME, f"frame of {w}x{h} px is too small"
    if size is not None and abs(w * size[1] - h * size[0]) > max(w, h):
        return (
            BAD_FRAME,
            f"frame is {w}x{h} px but the camera was calibrated at {size[0]}x{size[1]}",
        )
    # a truncated JPEG decodes with its missing tail as flat grey rows
    tail = frame[-8:, ::16]
    if h >= 32 and int(tail.max()) - int(tail.min()) == 0 and 120 <= int(tail[0, 0, 0]) <= 136:
        return BAD_FRAME, "frame looks truncated (flat grey bottom rows)"
    return OK, ""


def wizard_area_gain(
    frame: NDArray[np.uint8],
    camera: CameraModel,
    geometry: BoardGeometry,
    profile: ColourProfile,
    expected: Mapping[int, SpaceObservation],
) -> float | None:
    """How large one wizard measures in the setup frame, relative to the projected model.

    The detector counts the wizards of a colour on a top as the labelled area divided by the
    projected area of one wizard. The camera's pose, its blur and the set's meeples make that
    area come out larger or smaller by the same factor for a whole session; the setup frame
    shows known wizards on known roofs (R-SETUP-6), so the factor is measured there: the median
    over the setup roofs (read at their known height) of the measured area per wizard of each
    colour. The result goes to ``profile.meta["wizard_area"]``, which :class:`Detector` divides
    the areas by.

    :param frame: ``(H, W, 3) uint8 BGR`` of the setup position.
    :param expected: space -> what stands there in that position (the ``spaces`` of
        ``observe(setup(config))``).
    :returns: the factor (dimensionless, ~1), or None when the board or no wizard is found.
    """
    meta = {k: v for k, v in profile.meta.items() if k != "wizard_area"}
    plain = ColourProfile(dict(profile.classes), profile.reject_d2, profile.white_bgr, meta)
    det = Detector(camera, geometry, plain)
    found = det.detect(frame)
    if not found.ok or found.observation is None:
        return None
    ratios: list[float] = []
    for space, want in expected.items():
        got = found.observation.spaces.get(space)
        detail = found.details.get(space)
        if got is None or detail is None or got.towers != want.towers or want.castle:
            continue
        for colour, n in want.wizards.items():
            if n > 0 and colour in detail.wizard_area:
                ratios.append(detail.wizard_area[colour] / n)
    if not ratios:
        return None
    return float(np.median(ratios))


# -------------------------------------------------------------------------------------------------
# probe tables (depend only on the pose; computed once per pose)


def _masked_median(values: NDArray[Any], ok: NDArray[np.bool_]) -> NDArray[np.float32]:
    """Median over the last axis of the entries where ``ok`` (0 where none is)."""
    v = np.where(ok, values, np.inf).astype(np.float32)
    v.sort(axis=-1)
    n = ok.sum(-1)
    lo = np.clip((n - 1) // 2, 0, v.shape[-1] - 1)
    hi = np.clip(n // 2, 0, v.shape[-1] - 1)
    a = np.take_along_axis(v, lo[..., None], -1)[..., 0]
    b = np.take_along_axis(v, hi[..., None], -1)[..., 0]
    out: NDArray[np.float32] = np.where(n > 0, (a + b) / 2, 0.0).astype(np.float32)
    return out


def _masked_quantile(values: NDArray[Any], ok: NDArray[np.bool_], q: float) -> NDArray[np.float32]:
    """Quantile ``q`` (lower interpolation) over the last axis of the entries where ``ok``
    (0 where none is)."""
    v = np.where(ok, values, np.inf).astype(np.float32)
    v.sort(axis=-1)
    n = ok.sum(-1)
    i = np.clip(np.floor((n - 1) * q).astype(np.int64), 0, v.shape[-1] - 1)
    a = np.take_along_axis(v, i[..., None], -1)[..., 0]
    out: NDArray[np.float32] = np.where(n > 0, a, 0.0).astype(np.float32)
    return out


def _median(values: NDArray[Any]) -> float:
    """Median of a short 1-D array (np.median's overhead dominates at this size)."""
    v = np.sort(values, axis=None)
    n = len(v)
    return float(v[n // 2] + v[(n - 1) // 2]) / 2 if n else 0.0


def _joint_heights(
    prob: NDArray[np.float32], fixed: list[bool], total: int
) -> NDArray[np.int32] | None:
    """The most probable heights ``(S,)`` under independent per-space probabilities
    ``prob (S, K + 1)`` whose sum over the spaces not ``fixed`` is ``total`` (dynamic programming
    over spaces and towers used), or None when no such assignment exists."""
    S, C = prob.shape
    if total < 0:
        return None
    logp = np.log(np.maximum(prob.astype(np.float64), 1e-9))
    best = np.full((S + 1, total + 1), -np.inf)
    best[0, 0] = 0.0
    choice = np.zeros((S, total + 1), np.int32)
    n_idx = np.arange(total + 1)[:, None] - np.arange(C)[None, :]  # (total + 1, C): n - k
    valid = n_idx >= 0
    n_safe = np.maximum(n_idx, 0)
    for si in range(S):
        if fixed[si]:
            best[si + 1] = best[si]
            continue
        cand = np.where(valid, best[si][n_safe] + logp[si][None, :], -np.inf)
        j = np.argmax(cand, axis=1)
        best[si + 1] = cand[np.arange(total + 1), j]
        choice[si] = j
    if not np.isfinite(best[S, total]):
        return None
    out = np.zeros(S, np.int32)
    n = total
    for si in range(S - 1, -1, -1):
        if not fixed[si]:
            out[si] = choice[si, n]
            n -= int(out[si])
    return out


def _thumbnail(grey: NDArray[np.uint8], fw: int, fh: int) -> NDArray[np.uint8]:
    """``(fh, fw)`` area-averaged thumbnail of a grey frame: first by the largest whole factor
    (OpenCV's fast block average; a 1536 px frame to 160 px in one step took 12 ms, in two
    3.6 ms), then to the exact size."""
    h, w = grey.shape[:2]
    f = max(1, min(w // fw, h // fh))
    if f > 1:
        grey = grey[: h - h % f, : w - w % f]
        grey = cv2.resize(grey, (w // f, h // f), interpolation=cv2.INTER_AREA)
    out: NDArray[np.uint8] = cv2.resize(grey, (fw, fh), interpolation=cv2.INTER_AREA)
    return out


def _ring(n: int, phase: float = 0.0) -> NDArray[np.float64]:
    a = phase + np.arange(n) * 2 * math.pi / n
    return np.stack([np.cos(a), np.sin(a)], axis=1)


RIM = _ring(48)
SIDE_MM = 2.5
"""Distance of the inside / outside probes from a roof rim, mm."""
N_INNER = 8
N_DISC = 16
N_KIND = N_INNER + N_DISC
N_BARE = 16
KIND_RING = np.concatenate(
    [
        _ring(N_INNER) * 0.28,
        _ring(N_DISC, 0.2) * 0.48,
        _ring(N_BARE, 0.1) * 0.8,
        _ring(6, 0.3) * 0.14,
        _ring(12, 0.15) * 0.38,
    ]
)
"""Roof-interior probes (fractions of the roof radius): an inner ring on the printed raven, a
ring on the crest disc around it (the disc covers 0.62..0.7 of the radius; together the first
``N_KIND``), a ring on the bare roof outside the disc, then two more rings on the raven."""
TOKEN_RING = 0.6
"""Radius (of the roof's) of the ring between the raven token's edge (0.5) and the crest
disc's (0.62..0.7)."""
TOKEN_MARGIN_MM = 1.5
"""Probes this far outside the raven token's edge are clear of it (its blurred edge)."""
INK_PROBES = np.r_[0:N_INNER, N_KIND + N_BARE : len(KIND_RING)]
"""The probes on the printed raven (inside 0.4 of the roof radius)."""


@dataclass
class _PoseTables:
    """Image positions of all probe points for one pose."""

    rim_px: NDArray[np.int32]  # (S, K, R, 2) rim of the roof of tier k = 1..K
    rim_n: NDArray[np.float32]  # (S, K, R, 2) image normal of that rim
    rim_ok: NDArray[np.bool_]  # (S, K, R); index K (extra) holds castle rims on tiers 0..K
    kind_px: NDArray[np.int32]  # (S, K, Q, 2) roof interior of tier k
    kind_ok: NDArray[np.bool_]
    castle_px: NDArray[np.int32]  # (S, K + 1, C, 2) castle body standing at tier k = 0..K
    castle_ok: NDArray[np.bool_]
    crop: tuple[int, int, int, int]  # x0, y0, x1, y1 of the board's image region
    view_matrix: NDArray[np.float64]
    wall_px: NDArray[np.int32]  # (S, K, W, 2) camera-facing wall of tier k = 1..K
    wall_ok: NDArray[np.bool_]
    side_px: NDArray[np.int32]  # (S, K, 2, R, 2) points just inside / outside the roof rim
    side_ok: NDArray[np.bool_]  # (S, K, 2, R)
    elevation: NDArray[np.float32]  # (S,) camera elevation above each space, deg
    edge_flat: tuple[NDArray[np.intp], NDArray[np.float32], NDArray[np.float32]]
    # (flat index into the crop, normal x, normal y) of the rim points then the side points
    white_px: dict[int, NDArray[np.intp]]  # marker id -> flat frame indices of its quad
    hull: dict[tuple[int, int], tuple[NDArray[np.int32], NDArray[np.int32], float, float]] = field(
        default_factory=dict
    )
    masks: dict[tuple[str, int, int], NDArray[np.uint8]] = field(default_factory=dict)
    polys: dict[tuple[int, int], NDArray[np.int32]] = field(default_factory=dict)
    owners: dict[tuple[int, ...], NDArray[np.int8]] = field(default_factory=dict)


class _NearestClass(ColourProfile):
    """Every class of a profile with one shared spread and no reject: each pixel goes to the
    nearest prototype. The chroma of a dark pixel is noisy (sensor noise divided by a small
    sum), so its chroma weighs less and its lightness more."""

    def __init__(
        self,
        classes: dict[str, Any],
        *,
        white_bgr: tuple[float, float, float],
        chroma_sd: float,
        light_sd: float,
        noise: float,
    ) -> None:
        super().__init__(classes, reject_d2=math.inf, white_bgr=white_bgr)
        self._chroma_var = chroma_sd**2
        self._light_var = light_sd**2
        self._noise = noise

    def classify(
        self, feats: NDArray[Any], only: Any = None
    ) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        return self.classify_means(feats, self._means)

    def classify_means(
        self, feats: NDArray[Any], means: NDArray[Any]
    ) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        """:meth:`classify` with the prototypes' means replaced by ``means`` ``(C, 3)``."""
        f = np.asarray(feats, np.float32).reshape(-1, 3)
        m = np.asarray(means, np.float32)
        s = 3.0 * np.maximum(f[:, 2], 0.0) + CHROMA_EPS
        var_c = self._chroma_var + (self._noise / s) ** 2
        d2 = ((f[:, None, :2] - m[None, :, :2]) ** 2).sum(-1) / var_c[:, None] + (
            f[:, None, 2] - m[None, :, 2]
        ) ** 2 / self._light_var
        best = np.argmin(d2, axis=1).astype(np.int32)
        bd = d2[np.arange(len(best)), best].astype(np.float32)
        best[f[:, 2] < MIN_LIGHT] = -1
        return best, bd


class Detector:
    """Frames in, readings out. See the module docstring for the method.

    :param camera: the calibrated camera (scaled to the frame size automatically).
    :param geometry: the board geometry (track, tower and piece sizes, markers).
    :param profile: the colour profile sampled from the setup frame.
    :param tracker: an existing pose tracker (default: one over the geometry's markers).
    :param config: thresholds.
    :param height_model: the stack-height classifier (:class:`HeightModel`), a path to one,
        :data:`SHIPPED` for the model shipped with the package, or None for the hand-tuned
        rim rule (best tier above ``roof_threshold`` and ``roof_contrast``).
    """

    def __init__(
        self,
        camera: CameraModel,
        geometry: BoardGeometry,
        profile: ColourProfile,
        *,
        tracker: BoardPoseTracker | None = None,
        config: DetectorConfig | None = None,
        height_model: HeightModel | None | str = SHIPPED,
    ) -> None:
        self.camera = camera
        self.geometry = geometry
        self.profile = profile
        self.config = config or DetectorConfig()
        self._tracker = tracker
        self._tracker_size: tuple[int, int] | None = None
        self._tables: _PoseTables | None = None
        self._tables_pose: BoardPose | None = None
        names = profile.names
        self._names = names
        self._roof_idx = np.array([names.index(n) for n in ROOF_CLASSES if n in names], np.int32)
        self._roof_kind = [ROOF_CLASSES[names[i]] for i in self._roof_idx]
        if "roof-crest" in names and "roof-plain" in names:
            # yellow-blue chroma halfway between the crest disc and the plain roof
            yb = (profile.classes["roof-crest"].mean[1] + profile.classes["roof-plain"].mean[1]) / 2
            self._disc_yb = float(yb)
            self._disc_gap = float(
                profile.classes["roof-crest"].mean[1] - profile.classes["roof-plain"].mean[1]
            )
        else:
            self._disc_yb = math.inf  # no disc colour learnt: the ink decides
            self._disc_gap = 0.0
        self._castle_idx = names.index(CASTLE_CLASS) if CASTLE_CLASS in names else -1
        self._wizard_idx = {c: names.index(c) for c in COLOURS if c in names}
        # class index + 1 -> bool (index 0 = reject)
        self._is_wizard = np.zeros(len(names) + 1, bool)
        self._is_wizard[np.array(list(self._wizard_idx.values()), np.int64) + 1] = True
        self._roofish = self._is_wizard.copy()
        self._roofish[self._roof_idx + 1] = True
        self._token_idx = {t: names.index(t) for t in TOKEN_CLASSES if t in names}
        # the raven token's white disc is told from the surfaces it can stand on, not from the
        # magic tower's colours (its pale violet merlons are near white under some lights and
        # show on the magic top only)
        self._token_profile = ColourProfile(
            {n: c for n, c in profile.classes.items() if n not in MAGIC_CLASSES},
            reject_d2=profile.reject_d2,
            white_bgr=profile.white_bgr,
        )
        self._token_raven = (
            self._token_profile.names.index("raven") if "raven" in self._token_idx else -1
        )
        # the wizard colour the crest disc is nearest to (usually yellow)
        self._disc_colour = ""
        if "roof-crest" in names and self._wizard_idx:
            wc = list(self._wizard_idx)
            d2 = profile.distances(profile.classes["roof-crest"].mean[None], only=wc)[0]
            self._disc_colour = wc[int(np.argmin(d2))]
        self._is_track = np.zeros(len(names) + 1, bool)
        for i in range(len(names)):
            self._is_track[i + 1] = profile.classes[names[i]].group == "track"
        self._mark_idx = names.index("track-crest") if "track-crest" in names else -1
        self._fountain_idx = names.index("track-fountain") if "track-fountain" in names else -1
        self._track_idx = names.index("track") if "track" in names else -1
        self._magic_idx = tuple(names.index(n) for n in MAGIC_CLASSES if n in names)
        # the magic roof's colours and the wizard colour nearest to its field (under another
        # light the roof's blue goes to the blue or purple wizard's prototype)
        self._magic_like = self._magic_idx
        self._magic_like_wizards: tuple[int, ...] = ()
        if self._wizard_idx:
            wc = list(self._wizard_idx)
            for mc in MAGIC_CLASSES:
                if mc in names:
                    d2 = profile.distances(profile.classes[mc].mean[None], only=wc)[0]
                    self._magic_like_wizards += (self._wizard_idx[wc[int(np.argmin(d2))]],)
            if "roof-magic" in names:
                self._magic_like += self._magic_like_wizards[:1]
        # the magic roof's field and violet merlons (an over-exposed frame pales the field
        # towards the merlons' colour)
        self._magic_field = tuple(
            names.index(n) for n in ("roof-magic", "wall-magic") if n in names
        )
        self._is_wall = np.zeros(len(names) + 1, bool)
        for n in ("wall", "wall-magic"):
            if n in names:
                self._is_wall[names.index(n) + 1] = True
        if isinstance(height_model, str):
            height_model = (
                HeightModel.load(max_towers=self.config.max_towers)
                if height_model == SHIPPED
                else HeightModel.load(height_model, self.config.max_towers)
            )
        self._height = height_model
        self._crest_gaps: list[float] = []
        # one wizard's measured area at setup (pose, lens blur and the set's meeple size),
        # relative to the projected model; see :func:`wizard_area_gain`
        gain = profile.meta.get("wizard_area", 1.0)
        self._wizard_gain = (
            float(np.clip(gain, 0.5, 2.0))
            if isinstance(gain, (int, float)) and math.isfinite(gain)
            else 1.0
        )
        # wizard counting: every class with one shared covariance and no reject, so a pixel
        # goes to the nearer of the wizard colour and the surface behind it; a blurred or
        # mixed edge pixel counts for the wizard when it is more than half wizard (an unbiased
        # area under blur and noise, where the profile's tight prototypes reject edge pixels)
        nearest = {
            "white_bgr": profile.white_bgr,
            "chroma_sd": self.config.count_chroma_sd,
            "light_sd": self.config.count_light_sd,
            "noise": self.config.count_noise,
        }
        # (the magic roof's colours out of reach except on magic tops: same class indices)
        away = {
            n: replace(c, mean=np.array([0.0, 0.0, 1e3]))
            for n, c in profile.classes.items()
            if n in MAGIC_CLASSES
        }
        self._count_profile = _NearestClass({**profile.classes, **away}, **nearest)
        self._magic_count = (
            _NearestClass(dict(profile.classes), **nearest) if away else self._count_profile
        )
        # the castle's probes: never on an insert (R-MOD-FOUNTAIN-6, R-MOD-WEB-3), whose dark web
        # ground is otherwise the black castle's nearest rival under a dim light
        no_insert = {
            n: replace(c, mean=np.array([0.0, 0.0, 1e3]))
            for n, c in profile.classes.items()
            if n in INSERT_CLASSES
        }
        self._castle_count = (
            _NearestClass({**profile.classes, **no_insert}, **nearest)
            if no_insert
            else self._magic_count
        )

    # -- pose ------------------------------------------------------------------------------------

    def _get_tracker(self, w: int, h: int) -> BoardPoseTracker:
        if self._tracker is None or (
            self._tracker_size is not None and self._tracker_size != (w, h)
        ):
            cam = self.camera if self.camera.size == (w, h) else self.camera.scaled_to(w, h)
            det = MarkerDetector(self.geometry.marker_dictionary, ids=self.geometry.marker_ids)
            self._tracker = BoardPoseTracker(det, self.geometry.marker_corners(), cam)
            self._tables = None
        self._tracker_size = (w, h)
        return self._tracker

    def _same_pose(self, pose: BoardPose) -> bool:
        """Is ``pose`` within ``pose_tolerance_px`` of the pose the probe tables were built for
        (checked at the board corners and a point 300 mm above the board centre)?"""
        old = self._tables_pose
        if old is None:
            return False
        if old is pose:
            return True
        w, h = self.geometry.board_size
        pts = np.array(
            [[0, 0, 0], [w, 0, 0], [w, h, 0], [0, h, 0], [w / 2, h / 2, 300.0]], np.float64
        )
        a, b = self._project(old, pts), self._project(pose, pts)
        return bool(np.max(np.abs(a - b)) <= self.config.pose_tolerance_px)

    def _project(self, pose: BoardPose, pts_up: NDArray[np.float64]) -> NDArray[np.float64]:
        """Project board points given with z *up* (geometry convention)."""
        p = np.asarray(pts_up, np.float64).reshape(-1, 3).copy()
        p[:, 2] = -p[:, 2]
        return pose.project(p)

    def _build_tables(self, pose: BoardPose, shape: tuple[int, int]) -> _PoseTables:
        g, cfg = self.geometry, self.config
        h, w = shape
        cam = pose.camera_position_mm()
        if cam is None:
            raise ValueError("the detector needs a 3-D pose (a camera model)")
        centres = g.space_centres()
        S, K = len(centres), cfg.max_towers
        t, mh = g.tower.height, g.tower.merlon_height
        r0 = g.tower.roof_diameter / 2
        zs = np.arange(1, K + 1) * t
        # roof rims: top of the merlon ring of the roof of tier k
        # ... and the castle's roof rim when the castle stands on tier k = 0..K (rows K..2K)
        cr = g.castle.roof_diameter / 2
        radii = np.concatenate([np.full(K, r0), np.full(K + 1, cr)])
        heights = np.concatenate(
            [zs + mh, np.arange(K + 1) * t + g.castle.height + g.castle.merlon_height]
        )
        L = len(radii)
        rim = np.zeros((S, L, len(RIM), 3))
        rim[..., :2] = centres[:, None, None, :] + RIM[None, None] * radii[None, :, None, None]
        rim[..., 2] = heights[None, :, None]
        rim_out = rim.copy()
        rim_out[..., :2] = centres[:, None, None, :] + RIM[None, None] * (
            radii[None, :, None, None] + 1.0
        )
        rp = self._project(pose, rim.reshape(-1, 3)).reshape(S, L, len(RIM), 2)
        rq = self._project(pose, rim_out.reshape(-1, 3)).reshape(S, L, len(RIM), 2)
        n = rq - rp
        n /= np.linalg.norm(n, axis=-1, keepdims=True) + 1e-9
        # just inside and just outside the roof rims of tiers 1..K (a roof's rim is a step)
        side = np.zeros((S, K, 2, len(RIM), 3))
        for j, dr in enumerate((-SIDE_MM, SIDE_MM)):
            side[:, :, j, :, :2] = centres[:, None, None, :] + RIM[None, None] * (r0 + dr)
        side[..., 2] = heights[None, :K, None, None]
        sp = self._project(pose, side.reshape(-1, 3)).reshape(S, K, 2, len(RIM), 2)
        dxy = np.hypot(centres[:, 0] - cam[0], centres[:, 1] - cam[1])
        elevation = np.degrees(np.arctan2(abs(float(cam[2])), dxy)).astype(np.float32)
        # roof interiors
        kin = np.zeros((S, K, len(KIND_RING), 3))
        kin[..., :2] = centres[:, None, None, :] + KIND_RING[None, None] * r0
        kin[..., 2] = (zs + 0.2)[None, :, None]
        kp = self._project(pose, kin.reshape(-1, 3)).reshape(S, K, len(KIND_RING), 2)
        # castle body: camera-facing side and roof, standing on tier k = 0..K
        cs = g.castle
        to_cam = cam[:2] - centres
        base_a = np.arctan2(to_cam[:, 1], to_cam[:, 0])
        body = []
        for da in np.radians([-50.0, -25.0, 0.0, 25.0, 50.0]):
            for fz in (0.2, 0.45, 0.7):
                rr = (cs.base_diameter + (cs.roof_diameter - cs.base_diameter) * fz) / 2 * 0.92
                body.append((da, rr, fz * cs.height))
        for off in _ring(6) * cs.roof_diameter / 2 * 0.55:
            body.append((math.atan2(off[1], off[0]), float(np.hypot(*off)), cs.height + 0.5))
        tw = g.tower
        wall = [
            (da, (tw.base_diameter + (tw.roof_diameter - tw.base_diameter) * fz) / 2 * 0.92, fz)
            for da in np.radians([-40.0, -20.0, 0.0, 20.0, 40.0])
            for fz in (0.15, 0.4, 0.65)
        ]
        wal = np.zeros((S, K, len(wall), 3))
        for j, (da, rr, fz) in enumerate(wall):
            wal[:, :, j, 0] = (centres[:, 0] + rr * np.cos(base_a + da))[:, None]
            wal[:, :, j, 1] = (centres[:, 1] + rr * np.sin(base_a + da))[:, None]
            wal[:, :, j, 2] = (np.arange(K) + fz) * t
        wp = self._project(pose, wal.reshape(-1, 3)).reshape(S, K, len(wall), 2)
        C = len(body)
        cas = np.zeros((S, K + 1, C, 3))
        for j, (da, rr, dz) in enumerate(body):
            a = base_a + da if dz < cs.height else np.full(S, da)
            cas[:, :, j, 0] = (centres[:, 0] + rr * np.cos(a))[:, None]
            cas[:, :, j, 1] = (centres[:, 1] + rr * np.sin(a))[:, None]
            cas[:, :, j, 2] = (np.arange(K + 1) * t + dz)[None, :]
        cp = self._project(pose, cas.reshape(-1, 3)).reshape(S, K + 1, C, 2)

        def clip(p: NDArray[np.float64]) -> tuple[NDArray[np.int32], NDArray[np.bool_]]:
            q = np.round(p).astype(np.int32)
            ok = (q[..., 0] >= 1) & (q[..., 0] < w - 1) & (q[..., 1] >= 1) & (q[..., 1] < h - 1)
            q[..., 0] = np.clip(q[..., 0], 1, w - 2)
            q[..., 1] = np.clip(q[..., 1], 1, h - 2)
            return q, ok

        rpi, rok = clip(rp)
        # the markers' black and white squares are the strongest edges in the frame: a high
        # roof's projected rim that crosses one must not count them
        mask = np.zeros((h // 4 + 1, w // 4 + 1), np.uint8)
        for quad in pose.marker_corners_px.values():
            q = np.asarray(quad, np.float64).reshape(4, 2)
            c = q.mean(axis=0)
            big = (q - c) * 1.5 + c
            cv2.fillConvexPoly(mask, np.round(big / 4).astype(np.int32), 1)
        rok &= mask[rpi[..., 1] // 4, rpi[..., 0] // 4] == 0
        kpi, kok = clip(kp)
        spi, sok = clip(sp)
        wpi, wok = clip(wp)
        sok &= mask[spi[..., 1] // 4, spi[..., 0] // 4] == 0
        cpi, cok = clip(cp)
        allp = np.concatenate([rpi.reshape(-1, 2), kpi.reshape(-1, 2), cpi.reshape(-1, 2)])
        x0, y0 = np.maximum(allp.min(0) - 3, 0)
        x1, y1 = np.minimum(allp.max(0) + 4, (w, h))
        bw, bh = g.board_size
        scale = np.diag([cfg.view_px / bw, cfg.view_px / bh, 1.0])
        view = scale @ np.linalg.inv(pose.homography)
        cw = int(x1) - int(x0)
        rim_i = (rpi[..., 1] - y0) * cw + (rpi[..., 0] - x0)
        ch = int(y1) - int(y0)
        side_i = np.clip(spi[..., 1] - y0, 0, ch - 1) * cw + np.clip(spi[..., 0] - x0, 0, cw - 1)
        sn = np.broadcast_to(n[:, :K, None], side_i.shape + (2,))
        nf = n.astype(np.float32)
        edge_flat = (
            np.concatenate([rim_i.ravel(), side_i.ravel()]).astype(np.intp),
            np.concatenate([nf[..., 0].ravel(), sn[..., 0].ravel().astype(np.float32)]),
            np.concatenate([nf[..., 1].ravel(), sn[..., 1].ravel().astype(np.float32)]),
        )
        white_px: dict[int, NDArray[np.intp]] = {}
        for mid, quad in pose.marker_corners_px.items():
            cut = marker_cut(quad, w, h)
            if cut is None:
                continue
            qx0, qy0, st, mk = cut
            my, mx = np.nonzero(mk)
            white_px[int(mid)] = ((my * st + qy0) * w + (mx * st + qx0)).astype(np.intp)
        return _PoseTables(
            rpi,
            n.astype(np.float32),
            rok,
            kpi,
            kok,
            cpi,
            cok,
            (int(x0), int(y0), int(x1), int(y1)),
            view,
            wpi,
            wok,
            spi,
            sok,
            elevation,
            edge_flat,
            white_px,
        )

    def _hull(
        self,
        pose: BoardPose,
        tables: _PoseTables,
        space: int,
        tier: int,
        shape: tuple[int, int],
    ) -> tuple[NDArray[np.int32], NDArray[np.int32], float, float]:
        """Pixels (ys, xs) of the projected cylinder the pieces of a top surface stand in, and
        the projected area (in sampled pixels) of one wizard and of one token there."""
        key = (space, tier)
        hit = tables.hull.get(key)
        if hit is not None:
            return hit
        g, cfg = self.geometry, self.config
        c = g.space_centre(space)
        z = g.tier_z(tier)
        radius = g.surface_radius(tier) - (1.0 if tier else 3.0)
        ring = _ring(24)

        def cyl(cx: NDArray[np.float64], r: float, z0: float, z1: float) -> NDArray[np.float64]:
            pts = np.concatenate(
                [
                    np.column_stack([cx + ring * r, np.full(len(ring), z0)]),
                    np.column_stack([cx + ring * r, np.full(len(ring), z1)]),
                ]
            )
            return self._project(pose, pts)

        hull_px = cyl(c, radius, z + 1.5, z + g.wizard.height)
        step = cfg.pixel_step
        h, w = shape
        x0, y0 = np.floor(hull_px.min(0)).astype(int)
        x1, y1 = np.ceil(hull_px.max(0)).astype(int)
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, w - 1), min(y1, h - 1)
        empty = np.zeros(0, np.int32)
        res: tuple[NDArray[np.int32], NDArray[np.int32], float, float] = (empty, empty, 1.0, 1.0)
        if x1 > x0 and y1 > y0:
            mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
            hull = cv2.convexHull(np.round(hull_px - (x0, y0)).astype(np.int32))
            cv2.fillConvexPoly(mask, hull, 1)
            tables.polys[key] = (hull + (x0, y0)).astype(np.int32)
            ys, xs = np.nonzero(mask[::step, ::step])
            wiz = cyl(c, g.wizard.base_diameter / 2 * 0.8, z, z + g.wizard.height)
            wiz_area = float(cv2.contourArea(cv2.convexHull(wiz.astype(np.float32)))) / step**2
            tok = cyl(c, g.witch.diameter / 2, z, z + g.witch.thickness)
            tok_area = float(cv2.contourArea(cv2.convexHull(tok.astype(np.float32)))) / step**2
            cam = pose.camera_position_mm()
            tilt = 1.0
            if cam is not None:
                elev = math.degrees(
                    math.atan2(abs(float(cam[2])) - z, math.hypot(*(np.asarray(cam[:2]) - c)))
                )
                tilt = float(np.clip(1.0 + cfg.wizard_tilt * (elev - 70.0), 0.7, 1.4))
            res = (
                (ys * step + y0).astype(np.int32),
                (xs * step + x0).astype(np.int32),
                max(wiz_area * cfg.wizard_area_scale * tilt, 1.0),
                max(tok_area, 1.0),
            )
        tables.hull[key] = res
        return res

    def _height_features(
        self,
        rim: NDArray[np.float32],
        rim_ok: NDArray[np.bool_],
        side: NDArray[np.float32],
        kind_labels: NDArray[np.int32],
        wall_labels: NDArray[np.int32],
        tables: _PoseTables,
        kind_light: NDArray[np.float32],
        wall_light: NDArray[np.float32],
    ) -> NDArray[np.float32]:
        """Per-space features of :mod:`companion.vision.detect_height`, ``(S, PER_TIER K + 1)``.

        :param kind_light: ``(S, K, Q)`` lightness of the roof-interior probes.
        :param wall_light: ``(S, K, W)`` lightness of the wall probes.
        """
        S, K = rim.shape[:2]
        med = _masked_quantile(rim, rim_ok, 0.5)
        q25 = _masked_quantile(rim, rim_ok, 0.25)
        share = rim_ok.sum(-1) / rim_ok.shape[-1]
        s_ok = tables.side_ok & rim_ok[:, :, None, :]
        s_med = _masked_quantile(side, s_ok, 0.5)  # (S, K, 2)
        out = np.empty((S, PER_TIER * K + 1), np.float32)
        out[:, 0:K] = med
        out[:, K : 2 * K] = q25
        out[:, 2 * K : 3 * K] = share
        out[:, 3 * K : 4 * K] = s_med[..., 0]
        out[:, 4 * K : 5 * K] = s_med[..., 1]
        kok = tables.kind_ok
        nk = np.maximum(kok.sum(-1), 1)
        out[:, 5 * K : 6 * K] = (self._roofish[kind_labels + 1] & kok).sum(-1) / nk
        out[:, 6 * K : 7 * K] = (self._is_track[kind_labels + 1] & kok).sum(-1) / nk
        wok = tables.wall_ok
        nw = np.maximum(wok.sum(-1), 1)
        out[:, 7 * K : 8 * K] = (self._is_wall[wall_labels + 1] & wok).sum(-1) / nw
        out[:, 8 * K : 9 * K] = (~self._is_track[wall_labels + 1] & wok).sum(-1) / nw
        lw = _masked_quantile(wall_light, wok, 0.5)
        lk = _masked_quantile(kind_light, kok, 0.5)
        out[:, 9 * K : 10 * K] = np.clip(lw / np.maximum(lk, 0.02), 0.0, 3.0)
        out[:, PER_TIER * K] = tables.elevation
        return out

    def _top_kinds(
        self,
        towers_of: list[int],
        castle_of: list[bool],
        tables: _PoseTables,
        kl: NDArray[np.int32],
        kc: NDArray[np.int32],
        kfeat: NDArray[np.float32],
        kdark: NDArray[np.bool_],
        near_wizard: NDArray[np.bool_],
        magic_share: Mapping[int, float],
    ) -> list[str]:
        """Top kind of every space (Observation ``top``).

        The magic roof by its colour class. Crest or plain: the printed raven's ink (dark grey
        pixels far below the bare roof's lightness) says crest; the raven's place in view and
        bare says plain. Where wizards hide the raven, the crest disc's colour decides: its
        yellow-blue chroma above the bare roof around it, compared with the roofs of the same
        frame whose raven decided (same light, white balance and clipping), else with the
        setup frame's disc and roof colours, else a little grey ink.

        :param kl: ``(S, K, Q)`` profile labels of the roof-interior probes (-1 reject).
        :param kc: ``(S, K, Q)`` nearest-class labels of the same probes.
        :param kfeat: ``(S, K, Q, 3)`` colour features of the same probes.
        :param kdark: ``(S, K, Q)`` probes darker than ``ink_light``.
        :param near_wizard: ``(S, K, Q)`` probes next to wizard-labelled pixels (left out of
            the disc contrast).
        :param magic_share: space index -> share of its top roof's probes nearest to the magic
            roof's colours (tower tops not under the castle; empty without the magic tower).
        """
        g, cfg = self.geometry, self.config
        tops: list[str] = []
        pending: dict[int, tuple[float | None, bool]] = {}
        decided: dict[int, float] = {}
        ref: dict[bool, list[float]] = {True: [], False: []}
        bare = slice(N_KIND, N_KIND + N_BARE)
        # there is one magic tower (R-MOD-MAGICTOWER-1) and it is always the top of its stack
        # (R-MOD-MAGICTOWER-3): the roof where the most probes take the magic roof's colours
        # (nearest class: under a game frame's light its blue drifts out of the setup's tight
        # prototype; a blue wizard on a crest disc's yellow looks like its two colours too)
        magic_at = -1
        if magic_share:
            best = max(magic_share, key=lambda k: magic_share[k])
            if magic_share[best] >= cfg.magic_min:
                magic_at = best
        for si, space in enumerate(g.spaces):
            towers, castle = towers_of[si], castle_of[si]
            if towers == 0:
                tops.append(g.track.kind(space))
                continue
            t = towers - 1
            okk = tables.kind_ok[si, t]
            labs = kl[si, t, :N_KIND][okk[:N_KIND]]
            if si == magic_at:
                tops.append("magic")
                continue
            wiz_here = self._is_wizard[labs + 1]
            free = max(int((~wiz_here).sum()), 1)
            dark = int((kdark[si, t, :N_KIND][okk[:N_KIND]] & ~wiz_here).sum()) / free
            # the disc ring (chroma only, without wizard and ink pixels)
            fo = kfeat[si, t, N_INNER:N_KIND]
            use = (
                okk[N_INNER:N_KIND]
                & ~self._is_wizard[kl[si, t, N_INNER:N_KIND] + 1]
                & ~self._is_wizard[kc[si, t, N_INNER:N_KIND] + 1]
                & (fo[:, 2] >= cfg.ink_light)
            )
            yellower = fo[:, 1] > self._disc_yb
            n_crest = int((use & yellower).sum())
            n_plain = int((use & ~yellower).sum())
            fa = kfeat[si, t, bare]
            use_a = okk[bare] & ~self._is_wizard[kc[si, t, bare] + 1]
            use_g = use & ~near_wizard[si, t, N_INNER:N_KIND]
            use_ga = use_a & ~near_wizard[si, t, bare]
            gap: float | None = None
            if use_g.sum() >= cfg.contrast_probes and use_ga.sum() >= cfg.contrast_probes:
                gap = _median(fo[use_g, 1]) - _median(fa[use_ga, 1])
            n_ink = -1
            use_i = okk[INK_PROBES] & ~self._is_wizard[kc[si, t, INK_PROBES] + 1]
            if use_a.sum() >= cfg.contrast_probes and not castle:
                # the raven's ink is far darker than the bare roof (the same light on both)
                # and grey (the shaded side of a wizard is dark but coloured)
                fi = kfeat[si, t, INK_PROBES]
                roof_light = _median(fa[use_a, 2])
                # (the mean chroma of the dark pixels: single dark pixels are too noisy)
                dark_i = use_i & (fi[:, 2] < cfg.ink_rel * roof_light)
                n_ink = int(dark_i.sum())
                if n_ink:
                    m = fi[dark_i, :2].mean(axis=0)
                    noise = cfg.count_noise / (3.0 * float(fi[dark_i, 2].mean()) + CHROMA_EPS)
                    if math.hypot(*m) > cfg.ink_chroma + 2.0 * noise / math.sqrt(n_ink):
                        n_ink = -1  # dark but coloured: the shaded side of a wizard
            # too few probes for the ink or the disc contrast: a clear colour vote of the disc
            # ring, else a little grey ink says crest (dark pixels that are not grey are the
            # shaded sides of the wizards crowding the roof); under the castle the dark share
            fallback = (
                n_crest > n_plain
                if abs(n_crest - n_plain) >= cfg.disc_votes
                else (dark >= cfg.ink_share if castle else n_ink >= cfg.ink_fallback)
            )
            if n_ink >= cfg.ink_min or (n_ink == 0 and use_i.sum() >= cfg.ink_probes):
                crest = n_ink > 0
                if gap is not None:
                    ref[crest].append(gap)
                    if not castle:
                        decided[si] = gap
                tops.append("crest" if crest else "plain")
            else:
                tops.append("")
                # (a roof under the castle cannot be seen: the colour vote, as before)
                pending[si] = (None if castle else gap, fallback)
        # a plain roof's disc ring and bare ring are the same surface (gap ~ 0); a crest roof's
        # gap is what the crest roofs with their raven in view measure in this frame (or in
        # the last frames: the light changes slowly)
        self._crest_gaps.extend(ref[True])
        del self._crest_gaps[: -cfg.gap_memory]
        crest_ref = ref[True] or self._crest_gaps
        m_crest = float(np.median(crest_ref)) if crest_ref else None
        m_plain = float(np.median(ref[False])) if ref[False] else 0.0
        for si, (gap, fallback) in pending.items():
            crest = fallback
            if gap is not None and m_crest is not None and m_crest > m_plain:
                crest = gap >= (m_crest + m_plain) / 2
            tops[si] = "crest" if crest else "plain"
        if m_crest is not None and m_crest > m_plain:
            # a clear disc contrast overrules the ink: a wizard's shadow next to it on a plain
            # roof is dark and nearly grey, and the disc around a hidden raven is still there
            for si, gap in decided.items():
                ratio = (gap - m_plain) / (m_crest - m_plain)
                if ratio < cfg.gap_clear:
                    tops[si] = "plain"
                elif ratio > 1.0 - cfg.gap_clear:
                    tops[si] = "crest"
        return tops

    def _crest_disc_yb(
        self,
        tops: list[str],
        towers_of: list[int],
        castle_of: list[bool],
        tables: _PoseTables,
        kl: NDArray[np.int32],
        kc: NDArray[np.int32],
        kfeat: NDArray[np.float32],
    ) -> float | None:
        """Median yellow-blue chroma of the crest discs of this frame: the disc-ring probes of
        the roofs read crest (not under the castle), without wizard-labelled or dark probes.
        None without the raven token in play or with fewer than ``contrast_probes`` probes."""
        if "raven" not in self._token_idx:
            return None
        disc = slice(N_INNER, N_KIND)
        vals: list[NDArray[np.float32]] = []
        for si, top in enumerate(tops):
            if top != "crest" or castle_of[si] or towers_of[si] == 0:
                continue
            t = towers_of[si] - 1
            fo = kfeat[si, t, disc]
            use = (
                tables.kind_ok[si, t, disc]
                & ~self._is_wizard[kl[si, t, disc] + 1]
                & ~self._is_wizard[kc[si, t, disc] + 1]
                & (fo[:, 2] >= self.config.ink_light)
            )
            vals.append(fo[use, 1])
        allv = np.concatenate(vals) if vals else np.zeros(0, np.float32)
        if len(allv) < self.config.contrast_probes:
            return None
        return float(np.median(allv))

    # -- the detector ----------------------------------------------------------------------------

    def detect(self, frame: Any, time_s: float = 0.0, index: int = 0) -> Detection:
        """Read one frame. Never raises on a bad frame: the status says what went wrong.

        :param frame: ``(H, W, 3) uint8 BGR``.
        :param time_s: capture time in seconds (copied into the Observation).
        :param index: frame counter of the source (copied into the Observation).
        """
        status, msg = check_frame(frame, self.camera.size)
        if status != OK:
            return Detection(status, msg)
        h, w = frame.shape[:2]
        tracker = self._get_tracker(w, h)
        # one grey frame for the marker tracker and the rim edges
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        res = tracker.update(grey)
        if not res.ok or res.pose is None:
            st = BAD_FRAME if res.status.value == "bad frame" else BOARD_LOST
            return Detection(st, res.message)
        pose = res.pose
        if not pose.has_3d:
            return Detection(BOARD_LOST, "board pose without a camera model")
        if self._tables is None or not self._same_pose(pose):
            try:
                self._tables = self._build_tables(pose, (h, w))
                # every top surface's wizard region at once (a new stack height in a later
                # frame then costs nothing; the camera stays put for a whole game)
                for space in self.geometry.spaces:
                    for tier in range(self.config.max_towers + 1):
                        self._hull(pose, self._tables, space, tier, (h, w))
            except (ValueError, cv2.error, np.linalg.LinAlgError) as exc:
                return Detection(BOARD_LOST, f"pose unusable: {exc}")
            self._tables_pose = pose
        tables = self._tables
        white = self._white(frame, tables, res.markers)
        if white is None:
            white = white_from_pixels(frame[::8, ::8].reshape(-1, 3))
        vp = self.config.view_px
        view = cv2.warpPerspective(frame, tables.view_matrix, (vp, vp), flags=cv2.INTER_LINEAR)
        spaces, details = self._read_spaces(frame, grey, pose, tables, white)
        obs = Observation(spaces=spaces, time=float(time_s), frame=int(index), unstable=True)
        fw = self.config.frame_view_px
        fh = max(1, int(round(h * fw / w)))
        thumb = _thumbnail(grey, fw, fh)
        return Detection(
            OK,
            res.message,
            obs,
            view.astype(np.uint8),
            white,
            pose,
            details,
            thumb.astype(np.uint8),
        )

    def _white(
        self, frame: NDArray[np.uint8], tables: _PoseTables, markers: Any
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

    def _labels(
        self,
        frame: NDArray[np.uint8],
        ys: NDArray[Any],
        xs: NDArray[Any],
        white: NDArray[Any],
    ) -> NDArray[np.int32]:
        idx = self._count_profile.classify_bgr(frame[ys, xs].reshape(-1, 3), white)
        return idx.reshape(np.shape(ys))

    def _local_mark(
        self,
        px: NDArray[np.uint8],
        lab: NDArray[np.int32],
        white: NDArray[Any],
        idx: tuple[int, ...] = (),
        rounds: int = 1,
        counter: _NearestClass | None = None,
    ) -> NDArray[np.int32]:
        """Labels of an empty crest space's pixels ``(N, 3) uint8`` with the crest mark's
        colour measured on that space: the printed mark under this frame's light can look
        nearer to a wizard colour than the setup frame's mark did (an orange wizard read on
        an empty mark). Needs ``mark_min`` pixels labelled mark.

        :param idx: the surface classes measured (default the crest mark; a fountain insert's
            water and the magic roof's two colours look like a blue or purple wizard under some
            lights).
        :param rounds: measurements in turn, each from the pixels the last one labelled that
            surface (the measured colour moves to the surface's colour in this frame).
        :param counter: the labelling ``lab`` came from (default the detector's).
        """
        idx = idx or (self._mark_idx,)
        counter = counter or self._count_profile
        if not bool(self._is_wizard[lab + 1].any()):
            return lab
        feats = features(px, white)
        means = counter._means.copy()
        for _ in range(rounds):
            moved = False
            for i in idx:
                mine = lab == i
                if int(mine.sum()) >= self.config.mark_min:
                    means[i] = np.median(feats[mine], axis=0)
                    moved = True
            if not moved:
                break
            lab, _ = counter.classify_means(feats, means)
        return lab

    def _thin_out(
        self,
        hull: tuple[NDArray[np.int32], NDArray[np.int32], float, float],
        lab: NDArray[np.int32],
        surface: int,
    ) -> NDArray[np.int32]:
        """Wizard labels whose blob is nowhere two sampled pixels wide become ``surface``: the
        blurred rim of a printed insert's artwork mixes its colours into thin curves that look
        like a wizard colour; a wizard is several sampled pixels wide."""
        wiz = self._is_wizard[lab + 1]
        if not wiz.any():
            return lab
        ys, xs = hull[0], hull[1]
        step = self.config.pixel_step
        gy = (ys - ys.min()) // step
        gx = (xs - xs.min()) // step
        keep = np.zeros(len(lab), bool)
        kernel = np.ones((2, 2), np.uint8)
        for ci in np.unique(lab[wiz]):
            grid = np.zeros((int(gy.max()) + 1, int(gx.max()) + 1), np.uint8)
            mine = lab == ci
            grid[gy[mine], gx[mine]] = 1
            opened = cv2.morphologyEx(grid, cv2.MORPH_OPEN, kernel)
            # whole blobs stay (a wizard's blurred edge is its own area), thin ones go
            n, comp = cv2.connectedComponents(grid, connectivity=8)
            solid = np.zeros(n, bool)
            solid[np.unique(comp[opened > 0])] = True
            solid[0] = False
            keep |= mine & solid[comp[gy, gx]]
        out = lab.copy()
        out[wiz & ~keep] = surface
        return out

    def _raven_area(
        self,
        frame: NDArray[np.uint8],
        hull: tuple[NDArray[np.int32], NDArray[np.int32], float, float],
        lab: NDArray[np.int32],
        white: NDArray[Any],
        one_tok: float,
        drift: NDArray[np.float32],
        feats: NDArray[np.float32],
        disc_yb: float | None = None,
    ) -> float:
        """The raven token's white disc on a top surface, in token areas: pixels of the
        profile's ``raven`` class (its own tight spread: the disc is near the sandy track's and
        a plain roof's colour) within a token's radius of the dark printed raven on it (grey
        ink, not a wizard's or the witch's colour). 0 without such pixels.

        :param hull: the top surface's ``(ys, xs, one wizard, one token)`` (sampled pixels).
        :param lab: nearest-class labels of the hull's pixels.
        :param drift: ``(3,)`` how far the track's colour features of this frame lie from the
            profile's (another light than the setup frame's); taken off before the white disc
            is looked for.
        :param feats: ``(N, 3)`` colour features of the hull's pixels.
        :param disc_yb: yellow-blue chroma of the crest roofs' discs in this frame (None: not
            measured).
        """
        cfg = self.config
        ys, xs = hull[0], hull[1]
        light = feats[:, 2]
        if not bool((light < cfg.raven_ink).any()):
            return 0.0
        # grey: a wizard's shaded side is dark but coloured (a dark pixel's chroma is noisy)
        noise = cfg.count_noise / (3.0 * np.maximum(light, 0.0) + CHROMA_EPS)
        grey = np.hypot(feats[:, 0], feats[:, 1]) <= cfg.ink_chroma + noise
        ink = (light < cfg.raven_ink) & (light >= MIN_LIGHT) & grey & ~self._is_wizard[lab + 1]
        if "witch" in self._token_idx:
            ink &= lab != self._token_idx["witch"]
        if not ink.any():
            return 0.0
        step = cfg.pixel_step
        gy = (ys - ys.min()) // step
        gx = (xs - xs.min()) // step
        grid = np.zeros((int(gy.max()) + 1, int(gx.max()) + 1), np.uint8)
        grid[gy[ink], gx[ink]] = 1
        r = max(1, int(round(math.sqrt(one_tok / math.pi))))
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
        # (only the light pixels near the ink can be the disc: the rest is not classified)
        near = (cv2.dilate(grid, kernel)[gy, gx] > 0) & (light >= 2.0 * cfg.raven_ink)
        if float(near.sum()) < cfg.raven_min * one_tok:
            return 0.0
        pale = self._token_profile.classify(feats[near] - drift)[0] == self._token_raven
        if disc_yb is not None:
            # a crest roof's disc beside its printed raven is pale and yellow: nearer (in
            # yellow-blue) to the crest discs of this frame than to the token's white, it is
            # not the token (an over-exposed frame makes the disc as light as the token)
            white_yb = float(self.profile.classes["raven"].mean[1] + drift[1])
            if disc_yb > white_yb:
                pale &= feats[near, 1] < (white_yb + disc_yb) / 2
        return float(pale.sum() / one_tok)

    def _edges(
        self, grey_frame: NDArray[np.uint8], tables: _PoseTables, white: NDArray[Any]
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

    def _owners(
        self,
        tables: _PoseTables,
        towers_of: list[int],
        castle_of: list[bool],
        shape: tuple[int, int],
    ) -> NDArray[np.int8]:
        """``(H, W) int8`` index of the space whose wizard hull owns each pixel (-1 none): hulls
        are painted from the lowest top surface to the highest, so the highest wins."""
        key = tuple(-1 if c else t for t, c in zip(towers_of, castle_of, strict=True))
        hit = tables.owners.get(key)
        if hit is not None:
            return hit
        owner = np.full(shape, -1, np.int8)
        spaces = self.geometry.spaces
        order = sorted((t, si) for si, t in enumerate(key) if t >= 0)
        for t, si in order:
            poly = tables.polys.get((spaces[si], t))
            if poly is not None:
                cv2.fillConvexPoly(owner, poly, si)
        # a full-frame map each (1.3 MB at 1536x864): only the board now and the one before it
        # come back (the stability gate's still period, a hand lifted and put back); 16 kept up
        # to 20 MB that were never read again (``companion bench e2e``: every hit of a game was
        # to the newest or the second newest)
        if len(tables.owners) >= 2:
            tables.owners.pop(next(iter(tables.owners)))
        tables.owners[key] = owner
        return owner

    def _castle_mask(
        self, pose: BoardPose, tables: _PoseTables, space: int, tier: int, shape: tuple[int, int]
    ) -> NDArray[np.uint8]:
        """Quarter-resolution mask of the castle's image when it stands on ``space``/``tier``."""
        key = ("castle", space, tier)
        hit = tables.masks.get(key)
        if hit is not None:
            return hit
        g = self.geometry
        c = g.space_centre(space)
        ring = _ring(24)
        z = g.tier_z(tier)
        pts = np.concatenate(
            [
                np.column_stack([c + ring * g.castle.base_diameter / 2, np.full(24, z)]),
                np.column_stack(
                    [c + ring * g.castle.roof_diameter / 2, np.full(24, z + g.castle.height * 1.3)]
                ),
            ]
        )
        px = self._project(pose, pts)
        mask = np.zeros((shape[0] // 4 + 1, shape[1] // 4 + 1), np.uint8)
        hull = cv2.convexHull(np.round(px / 4).astype(np.int32))
        cv2.fillConvexPoly(mask, hull, 1)
        tables.masks[key] = mask
        return mask

    def _read_spaces(
        self,
        frame: NDArray[np.uint8],
        grey: NDArray[np.uint8],
        pose: BoardPose,
        tables: _PoseTables,
        white: NDArray[Any],
    ) -> tuple[dict[int, SpaceObservation], dict[int, SpaceDetail]]:
        g, cfg = self.geometry, self.config
        S = g.n_spaces
        edges, side = self._edges(grey, tables, white)  # (S, L, R), (S, K, 2, R)
        # one classification for the castle and roof-kind probes
        cp, kp, wp = tables.castle_px, tables.kind_px, tables.wall_px
        probe = np.concatenate([cp.reshape(-1, 2), kp.reshape(-1, 2), wp.reshape(-1, 2)])
        ppx = frame[probe[:, 1], probe[:, 0]]
        pf = features(ppx, white)
        lab = self.profile.classify_bgr(ppx, white)
        n1, n2 = cp[..., 0].size, kp[..., 0].size
        # the raven printed on a crest roof is dark ink: no plain roof has dark pixels inside
        kdark = (pf[n1 : n1 + n2, 2] < cfg.ink_light).reshape(kp.shape[:-1])
        # the black castle by the nearest class without reject (under dim light its chroma is
        # noise and the profile's tight prototype rejects it)
        # (and the height features' colour shares: the profile's tight prototypes reject most
        # of a dim frame's roof and track pixels)
        # (with the magic tower its colours are in reach here: its dark blue-violet roof and
        # walls are otherwise nearest to the black castle, the web or a wizard)
        nearest = self._magic_count.classify_bgr(ppx, white)
        cl = nearest[:n1].reshape(cp.shape[:-1])
        if self._castle_count is not self._magic_count:
            cl = self._castle_count.classify_bgr(ppx[:n1], white).reshape(cp.shape[:-1])
        kc = nearest[n1 : n1 + n2].reshape(kp.shape[:-1])
        wc = nearest[n1 + n2 :].reshape(wp.shape[:-1])
        kl = lab[n1 : n1 + n2].reshape(kp.shape[:-1])
        kfeat = pf[n1 : n1 + n2].reshape(kp.shape[:-1] + (3,))
        if cfg.roof_interior > 0:
            is_r = self._roofish[kl + 1] & tables.kind_ok
            roofish = is_r.sum(-1) / np.maximum(tables.kind_ok.sum(-1), 1)  # (S, K)
            plausible = roofish >= cfg.roof_interior
        else:
            plausible = np.ones(kl.shape[:2], bool)
        if self._castle_idx >= 0:
            is_c = (cl == self._castle_idx) & tables.castle_ok
            castle_frac = is_c.sum(-1) / np.maximum(tables.castle_ok.sum(-1), 1)
        else:
            castle_frac = np.zeros(tables.castle_ok.shape[:2])
        K = cfg.max_towers
        rim_ok = tables.rim_ok
        castle_edges = _masked_median(edges[:, K:], rim_ok[:, K:])
        # the castle is black; its tier is where its roof rim is (above it the same black
        # fills every probe when seen from above)
        # there is one raven castle (R-COMP): the space where most castle probes are black
        # (a dark track or deep shadows can pass the threshold on other spaces too)
        # (the probes of a tall castle on another space can fall on the real castle's image:
        # each space is scored at the tier its castle-roof rim points to)
        total = self.profile.meta.get("towers")
        if isinstance(total, int) and 0 <= total < castle_edges.shape[1] - 1:
            # the castle stands on at most every tower counted at setup (R-COMP-1/3)
            castle_edges = castle_edges.copy()
            castle_edges[:, total + 1 :] = -1.0
        # the castle's roof rim is on a tier where its body's probes are black (another strong
        # edge higher up, the board's edge or a tower behind, is not the castle's rim)
        black = castle_frac >= cfg.castle_threshold
        castle_tier = np.argmax(np.where(black, castle_edges, castle_edges - 1e3), axis=1)
        castle_score = castle_frac[np.arange(S), castle_tier]
        # equal scores (all probes black) go to the lower castle: a tall castle's probes over
        # an empty space fall on the dark table beyond the board, and show no rim edge there
        black_share = castle_score
        castle_score = castle_score - cfg.castle_tier_cost * castle_tier
        rim_edge = castle_edges[np.arange(S), castle_tier]
        castle_score = np.where(
            rim_edge >= cfg.castle_edge_min, castle_score, castle_score - cfg.castle_no_rim
        )
        # nothing ever stands under a tower or the castle on an insert: towers may not end on a
        # fountain (R-MOD-FOUNTAIN-4, -6) and nothing stays on a web (R-MOD-WEB-3)
        insert = np.array([g.track.kind(s) in INSERT_KINDS for s in g.spaces], bool)
        castle_score = np.where(insert, -np.inf, castle_score)
        best_castle = int(np.argmax(castle_score)) if S else 0
        castle_at = (
            {best_castle: int(castle_tier[best_castle])}
            if S and black_share[best_castle] >= cfg.castle_threshold
            else {}
        )
        if castle_at:
            rim_ok = rim_ok.copy()
            rp = tables.rim_px
            for si, tier in castle_at.items():
                m = self._castle_mask(pose, tables, si + 1, tier, frame.shape[:2])
                inside = m[rp[..., 1] // 4, rp[..., 0] // 4] > 0
                inside[si] = False
                rim_ok &= ~inside
        rim_ok = rim_ok[:, :K]
        enough = rim_ok.sum(-1) >= rim_ok.shape[-1] // 2
        raw = edges[:, :K]
        edges = np.where(enough, _masked_median(raw, rim_ok), 0.0)
        wlight = pf[n1 + n2 :, 2].reshape(wp.shape[:-1])
        feats = self._height_features(raw, rim_ok, side, kc, wc, tables, kfeat[..., 2], wlight)
        model_towers = model_conf = None
        if self._height is not None:
            prob = self._height.probabilities(feats)
            model_towers = np.argmax(prob, axis=1).astype(np.int32)
            total = self.profile.meta.get("towers")
            if isinstance(total, int) and cfg.joint_towers:
                # every tower stays on the board (R-COMP-1/3): the most probable heights that
                # add up to the towers counted at setup, the castle's stack included
                fixed = [si in castle_at or bool(insert[si]) for si in range(S)]
                left = total - sum(castle_at.values())
                joint = _joint_heights(prob, fixed, left)
                if joint is not None:
                    model_towers = joint
            model_conf = prob[np.arange(S), np.minimum(model_towers, prob.shape[1] - 1)]
        towers_of: list[int] = []
        castle_of: list[bool] = []
        margin_of: list[float] = []
        for si in range(S):
            cf = castle_frac[si]
            if si in castle_at:
                towers_of.append(castle_at[si])
                castle_of.append(True)
                margin_of.append(float(cf.max() - cfg.castle_threshold) * 2)
                continue
            if insert[si]:
                towers_of.append(0)
                castle_of.append(False)
                margin_of.append(0.5)
                continue
            if model_towers is not None and model_conf is not None:
                towers_of.append(int(model_towers[si]))
                castle_of.append(False)
                margin_of.append(float(model_conf[si]) - 0.5)
                continue
            es = np.where(plausible[si], edges[si], 0.0)
            best = int(np.argmax(es))
            srt = np.sort(es)
            contrast = float(srt[-1] - np.median(srt[:-1]))
            if es[best] >= cfg.roof_threshold and contrast >= cfg.roof_contrast:
                towers_of.append(best + 1)
                castle_of.append(False)
                margin_of.append(float(min(es[best] - cfg.roof_threshold, srt[-1] - srt[-2])) / 20)
            else:
                towers_of.append(0)
                castle_of.append(False)
                margin_of.append(float(cfg.roof_threshold - es[best]) / 20)
        # one classification for the pieces on every top surface
        hulls: list[tuple[NDArray[np.int32], NDArray[np.int32], float, float] | None] = []
        for si, space in enumerate(g.spaces):
            if castle_of[si]:
                hulls.append(None)
                continue
            hulls.append(self._hull(pose, tables, space, towers_of[si], frame.shape[:2]))
        # where two hulls overlap in the image the pixel shows the higher top surface's pieces
        # (a tall stack's wizards rise in front of the spaces behind it)
        owner = self._owners(tables, towers_of, castle_of, frame.shape[:2])
        for si, hh in enumerate(hulls):
            if hh is not None and len(hh[0]):
                keep = owner[hh[0], hh[1]] == si
                hulls[si] = (hh[0][keep], hh[1][keep], hh[2], hh[3])
        ys_all = [h[0] for h in hulls if h is not None]
        xs_all = [h[1] for h in hulls if h is not None]
        lab_all = (
            self._labels(frame, np.concatenate(ys_all), np.concatenate(xs_all), white)
            if ys_all
            else np.zeros(0, np.int32)
        )
        # roof probes next to a wizard's pixels: its blurred edge (less than half wizard, so
        # not labelled wizard) tints them towards its colour
        step = cfg.pixel_step
        near = np.zeros((frame.shape[0] // step + 2, frame.shape[1] // step + 2), np.uint8)
        if len(lab_all):
            is_w = self._is_wizard[lab_all + 1]
            near[np.concatenate(ys_all)[is_w] // step, np.concatenate(xs_all)[is_w] // step] = 1
            near = cv2.dilate(near, np.ones((3, 3), np.uint8))
        kn = near[kp[..., 1] // step, kp[..., 0] // step] > 0
        magic_share: dict[int, float] = {}
        if self._magic_idx and self._magic_count is not self._count_profile:
            tops_at = [
                (si, towers_of[si] - 1)
                for si in range(S)
                if towers_of[si] > 0 and not castle_of[si]
            ]
            if tops_at:
                sel = np.array([si for si, _ in tops_at])
                tiers = np.array([t for _, t in tops_at])
                # the ring outside the star's tips and inside the merlons: all field on the
                # magic roof (less what wizards hide), bare roof on the others (a crest disc's
                # yellow is near the star's, never near the field)
                ring = slice(N_KIND, N_KIND + N_BARE)
                mp = kp[sel, tiers, ring]  # (n, Q, 2)
                mok = tables.kind_ok[sel, tiers, ring]
                ml = self._magic_count.classify_bgr(
                    frame[mp[..., 1].ravel(), mp[..., 0].ravel()], white
                ).reshape(mok.shape)
                is_m = np.isin(ml, self._magic_field) & mok
                share = is_m.sum(-1) / np.maximum(mok.sum(-1), 1)
                magic_share = {int(si): float(v) for si, v in zip(sel, share, strict=True)}
        tops = self._top_kinds(towers_of, castle_of, tables, kl, kc, kfeat, kdark, kn, magic_share)
        out: dict[int, SpaceObservation] = {}
        details: dict[int, SpaceDetail] = {}
        pos = 0
        drift = np.zeros(3, np.float32)
        feats_all = np.zeros((len(lab_all), 3), np.float32)
        if "raven" in self._token_idx and len(lab_all):
            feats_all = features(frame[np.concatenate(ys_all), np.concatenate(xs_all)], white)
            # this frame's track colour against the setup frame's (every hull's track pixels)
            on_track = lab_all == self._track_idx
            if self._track_idx >= 0 and int(on_track.sum()) >= 50:
                now = np.median(feats_all[on_track][::4], axis=0)
                drift = (now - self.profile.classes["track"].mean).astype(np.float32)
        disc_yb = self._crest_disc_yb(tops, towers_of, castle_of, tables, kl, kc, kfeat)
        for si, space in enumerate(g.spaces):
            towers, castle = towers_of[si], castle_of[si]
            top = tops[si]
            wizards: dict[str, int] = {}
            tokens = {"witch": False, "raven": False}
            areas: dict[str, float] = {}
            hull = hulls[si]
            if hull is not None and top == "web":
                # nothing ever stays on a web (R-MOD-WEB-3): its printed web is not a piece
                pos += len(hull[0])
            elif hull is not None:
                n_px = len(hull[0])
                lab = lab_all[pos : pos + n_px]
                pos += n_px
                if top == "magic" and self._magic_count is not self._count_profile and n_px:
                    px = frame[hull[0], hull[1]]
                    lab = self._magic_count.classify_bgr(px, white)
                    lab = self._local_mark(
                        px, lab, white, self._magic_idx, cfg.fountain_rounds, self._magic_count
                    )
                    if cfg.fountain_open:
                        lab = self._thin_out(hull, lab, self._magic_idx[0])
                if top == "crest-space" and self._mark_idx >= 0 and n_px:
                    lab = self._local_mark(frame[hull[0], hull[1]], lab, white)
                elif top == "fountain" and self._fountain_idx >= 0 and n_px:
                    lab = self._local_mark(
                        frame[hull[0], hull[1]],
                        lab,
                        white,
                        (self._fountain_idx,),
                        cfg.fountain_rounds,
                    )
                    if cfg.fountain_open:
                        lab = self._thin_out(hull, lab, self._fountain_idx)
                one_wiz, one_tok = hull[2] * self._wizard_gain, hull[3]
                counts = np.bincount(lab[lab >= 0], minlength=len(self._names))
                crest_top = top in ("crest", "crest-space")
                for colour, ci in self._wizard_idx.items():
                    a = counts[ci] / one_wiz
                    if crest_top and colour == self._disc_colour:
                        # the yellow crest disc / mark under the wizards shades into this colour
                        leak = cfg.crest_leak if top == "crest" else cfg.mark_leak
                        a = max(a - leak, 0.0)
                    elif top == "magic" and ci in self._magic_like_wizards:
                        # the magic roof's star and field shade into the nearest wizard colours
                        a = max(a - cfg.magic_leak, 0.0)
                    areas[colour] = float(a)
                    n = int(math.floor(a + 1.0 - cfg.wizard_min)) if a >= cfg.wizard_min else 0
                    if n:
                        wizards[colour] = n
                for tok, ti in self._token_idx.items():
                    if tok == "raven":
                        areas[tok] = self._raven_area(
                            frame,
                            hull,
                            lab,
                            white,
                            one_tok,
                            drift,
                            feats_all[pos - n_px : pos],
                            disc_yb,
                        )
                    else:
                        areas[tok] = float(counts[ti] / one_tok)
                for a_, b_ in HARD_PAIRS:
                    for weak, strong in ((a_, b_), (b_, a_)):
                        if (
                            weak in wizards
                            and strong in wizards
                            and areas[weak] < cfg.hard_pair_min
                            and areas[strong] > areas[weak]
                        ):
                            del wizards[weak]
                # R-WIZ-4: at most 6 on a top; drop the most over-counted colour first
                while sum(wizards.values()) > MAX_WIZARDS_ON_TOP:
                    worst = max(wizards, key=lambda c: wizards[c] - areas[c])
                    wizards[worst] -= 1
                    if wizards[worst] == 0:
                        del wizards[worst]
            conf = float(np.clip(0.5 + margin_of[si], 0.0, 1.0))
            out[space] = SpaceObservation(
                towers=towers,
                top=top,
                wizards={c: n for c, n in wizards.items() if n > 0},
                castle=castle,
                witch=tokens["witch"],
                raven=tokens["raven"],
                confidence=round(conf, 3),
            )
            details[space] = SpaceDetail(
                tuple(edges[si].tolist()),
                tuple(castle_frac[si].tolist()),
                areas,
                tuple(feats[si].tolist()),
            )
        # one witch and one raven token (R-MOD-WITCH-1, R-MOD-RAVEN-1): the space where the
        # most of the token's colour shows; the raven is never covered (R-MOD-RAVEN-7)
        for tok in self._token_idx:
            best = max(g.spaces, key=lambda n: details[n].wizard_area.get(tok, 0.0))
            need = cfg.raven_min if tok == "raven" else cfg.token_min
            if details[best].wizard_area.get(tok, 0.0) >= need:
                out[best] = replace(out[best], **{tok: True})
                if tok == "raven" and out[best].top in ("crest", "plain"):
                    si = g.spaces.index(best)
                    kind = self._kind_under_token(
                        frame,
                        pose,
                        best,
                        out[best].towers,
                        white,
                        tables,
                        kfeat[si, out[best].towers - 1],
                        kc[si, out[best].towers - 1],
                        drift,
                    )
                    if kind is not None:
                        out[best] = replace(out[best], top=kind)
        return out, details

    def _kind_under_token(
        self,
        frame: NDArray[np.uint8],
        pose: BoardPose,
        space: int,
        towers: int,
        white: NDArray[Any],
        tables: _PoseTables,
        kfeat: NDArray[np.float32],
        kc: NDArray[np.int32],
        drift: NDArray[np.float32],
    ) -> str | None:
        """Crest or plain for a roof the raven token stands on: the token's printed raven and
        white disc hide the roof's middle (the ink and the disc ring probes see the token), but
        the crest disc is wider than the token: a ring just outside the token is yellower than
        the bare roof further out on a crest roof, not on a plain one (the probes inside the
        disc's least radius and clear of the token, which stands off the middle beside
        wizards). None when too few of those or of the bare ring's probes are free of
        wizards.

        :param drift: the frame's colour drift against the setup (see :meth:`_raven_area`)."""
        g, cfg = self.geometry, self.config
        if not math.isfinite(self._disc_yb) or self._disc_gap <= 0:
            return None
        c = g.space_centre(space)
        r0 = g.tower.roof_diameter / 2
        # probes inside the crest disc's least radius, on rings round the roof's middle
        a = np.linspace(0.0, 2 * math.pi, 24, endpoint=False)
        rad = np.repeat(np.array([0.15, 0.3, 0.45, TOKEN_RING]) * r0, len(a))
        ang = np.tile(a, 4)
        xy = np.column_stack([c[0] + rad * np.cos(ang), c[1] + rad * np.sin(ang)])
        pts = np.column_stack([xy, np.full(len(xy), g.tier_z(towers) + 0.2)])
        q = np.round(self._project(pose, pts)).astype(np.int32)
        h, w = frame.shape[:2]
        ok = (q[:, 0] >= 0) & (q[:, 0] < w) & (q[:, 1] >= 0) & (q[:, 1] < h)
        if not ok.any():
            return None
        xy, q = xy[ok], q[ok]
        px = frame[q[:, 1], q[:, 0]]
        f = features(px, white)
        # the token's middle: where its white disc shows (beside wizards it stands off the
        # roof's middle); the probes further from it than its radius and a margin remain
        tok = self._token_profile.classify(f - drift)[0] == self._token_raven
        centre = xy[tok].mean(axis=0) if int(tok.sum()) >= 4 else c
        clear = g.raven.diameter / 2 + TOKEN_MARGIN_MM
        keep = np.hypot(*(xy - centre).T) > clear
        px, f = px[keep], f[keep]
        near = self._magic_count.classify_bgr(px, white)
        use = ~self._is_wizard[near + 1] & (f[:, 2] >= cfg.ink_light)
        bare = slice(N_KIND, N_KIND + N_BARE)
        fa = kfeat[bare]
        use_a = ~self._is_wizard[kc[bare] + 1] & (fa[:, 2] >= cfg.ink_light)
        if use.sum() < cfg.contrast_probes or use_a.sum() < cfg.contrast_probes:
            return None
        gap = _median(f[use, 1]) - _median(fa[use_a, 1])
        return "crest" if gap > cfg.token_ring_gap * self._disc_gap else "plain"
