"""The detector's thresholds, its answer per frame and the frame check.

Statuses, the profile's class names the detector reads, :class:`DetectorConfig`,
:class:`Detection` (one frame's answer) and :class:`SpaceDetail` (per-space diagnostics).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import MAX_TOWERS, Observation
from companion.vision.markers import BoardPose
from companion.vision.quality import FrameQuality

OK = "ok"
UNSURE = "unsure"
"""The frame was read but is refused: the message says why (light, focus, glare, camera
moved, a space the detector is unsure of)."""
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
    :param crest_leak: wizard areas of the yellow crest disc (or a crest space's mark) that show
        in the wizard hull and look like the wizard colour nearest to the disc; subtracted from
        that colour's area on crest roofs (calibrated on renders with the nearest-class
        labelling: up to 0.5 areas without a yellow wizard).
    :param mark_leak: the same for a crest space's mark on the track (up to 0.2 areas).
    :param disc_leak_spread: wizard areas of the disc's colour that a crest disc or mark may
        add on top of ``crest_leak`` / ``mark_leak`` when a wizard of that colour stands on it
        (their colours run together: on renders of development seeds 1001-1010 single yellow
        wizards on a crest mark measured up to 1.9 areas, other single wizards about 1.2); a
        count of that colour is only as sure as its distance to the boundary below less this.
    :param mark_min: pixels labelled crest mark on an empty crest space for the mark's colour
        to be measured there (:func:`~companion.vision.detector.wizards.local_mark`).
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
    :param forced_confidence: the most raw confidence of a space whose tower count the
        setup's tower total changed (the camera saw another count there), and of the raven
        castle's space whenever a count was changed (its tier is one of the counts that did
        not add up).
    :param ink_sure: how sure a roof's kind is when the raven's ink decided it and the disc's
        colour agrees; :param fallback_sure: when only a colour vote or a little ink did.
    :param castle_roof_sure: how sure the kind of the roof under the raven castle is: the
        castle hides it, and it is crest by the rules (R-RAVEN-3/5) unless a cast of
        R-SPELL-10 put the castle on another roof (seeded random play with all modules:
        96.5 % of 791 castles on a tower stood on a crest roof, 100 % of 828 in the base
        game; ``docs/vision.md``, "The roof under the raven castle"). Below ``ink_sure``, so
        such a space is never reported as sure as a roof that was seen.
    :param wizard_margin_gain: confidence gained per wizard of distance between a colour's
        measured area and the nearest count boundary (from 0.5 on the boundary).
    :param top_method: how a tower top's crest or plain roof is read: ``"hand"`` (the raven's
        ink and the crest disc's colour at fixed probes, :mod:`~companion.vision.detector.tops`)
        or ``"learned"`` (the ONNX classifier of :mod:`companion.vision.top_kind` on the
        rectified roof crop; the magic roof, the track and roofs under the castle stay hand).
        The default is the one that measured better on fresh bench seeds (README, "Command line").
    :param height_method: how a space's tower count is read: ``"features"`` (the small network
        over hand-built rim and colour measurements, :mod:`companion.vision.detect_height`) or
        ``"cnn"`` (the convolutional network of :mod:`companion.vision.stack_cnn` on the
        space's tier-stack ROI). Both feed the same tower-total constraint and confidence;
        the raven castle's tier and the inserts stay with the hand-built stage. ``"cnn"``
        measured better on fresh bench seeds (``docs/vision.md``, "Tower count": boards exact
        43.8 against 27.8 %, wrong boards 2.1 against 4.2 %, base game, withholding 0.2; with
        all modules and the token network 23.6 against 11.1 % exact, 8.3 against 13.9 % wrong),
        at about twice the detector's time, and is the default.
    :param wizard_method: how the wizards on a top surface are read: ``"hand"`` (the colour
        areas of the profile's classes in the projected wizard region, this package's
        ``wizards`` stage) or ``"cnn"`` (the network of :mod:`companion.vision.wizard_cnn` on
        the top surface's ROI and the colour areas' measurements there; ``docs/vision.md``,
        "Wizards",
        gives both methods' figures). ``"cnn"`` measured better on fresh bench seeds (wizard
        error per space of the frames read, CNN heights, withholding 0.2: 0.13 against 0.17 %
        base, 0.31 against 1.93 % with all modules), at about 7 ms more per frame on one core.
    :param castle_method: how the raven castle's place and tier are read: ``"hand"`` (the
        share of black body probes at the tier its roof rim points to, confidence 1.0; this
        package's ``heights`` stage) or ``"cnn"`` (the network of
        :mod:`companion.vision.castle_cnn` on every space's tier stack: the castle's place and
        tier with their probabilities, the tier among the counts that add up to the setup's
        tower total; ``docs/vision.md``, "The raven castle's place and tier").
    :param token_method: how the witch and the raven token are read: ``"hand"`` (the colours
        the setup frame showed on their space, this package's ``tokens`` stage) or ``"cnn"``
        (the network of :mod:`companion.vision.token_cnn` on the wizards' top-surface ROI,
        whose sureness joins each space's confidence; ``docs/vision.md``, "Tokens", gives both
        methods' figures).
    :param roof_disagree: with ``token_method = "cnn"``: how sure (raw) a bare crest or plain
        roof is at most when the token network's roof head reads it the other way from the
        hand-built stage (the surer of the two readings is kept).
    :param wizard_disagree: with ``wizard_method = "cnn"``: how sure (raw) a top's wizards are
        at most when the colour areas count them differently from the network (which has seen
        their measurements; its counts are kept); 1: no bound. On held-out training renders
        the network's sure tops (0.97 or more) were right 99.83 % of the time, 99.91 % with
        this bound at 0.5, for 0.6 % fewer sure tops (``docs/vision.md``, "Wizards").
    :param wizard_fewer_sure: with ``wizard_method = "cnn"``: on a top whose printed colours
        the colour areas take for wizards (a crest roof or crest space: the crest disc and
        mark; a fountain: its water), where the network counts no colour more and some colour
        fewer than the colour areas, and its counts are at least this sure (raw), the
        ``wizard_disagree`` bound does not apply (1: it always applies;
        ``docs/vision.md``, "Wizards").
    :param min_confidence: a board with a space below this (reported) confidence is refused
        (the tracker gets no reading rather than a wrong one). Off (0) by default: a floor of
        0.005 (a raw confidence of 0.22) refused a tenth of the boards on the development seeds
        (bench seeds 1001-1010), most of them wrong, but in a tracked game with all modules it
        refused every board of one table (a space always that unsure), so the tracker never
        committed; 0.05 refused a third of the boards, most of them right. The reported
        per-space confidence goes to the tracker either way.
    :param withhold_below: a space whose reported confidence is below this is left out of the
        emitted Observation (unknown to the tracker, drawn as not read) and named with a reason
        in ``Detection.withheld`` (:mod:`~companion.vision.detector.withhold`); with it on,
        a space under a lamp's glare is withheld too instead of refusing the board. 0 turns
        withholding off (glare then refuses the board). The default 0.2 is the knee of the
        trade-off on the development seeds (``bench vision --seeds 1001-1010 --frames 12``
        and, all modules, ``--seeds 2001-2003``; ``withhold_sweep``): wrong boards fell from
        17.5 to 5.8 % (all modules 30.6 to 11.1 %) for 15 % (12 %) of the spaces withheld;
        0.5 left 2.5 % (0 %) wrong but withheld 19 % (23 %) and refused a fifth of the base
        boards, and 0.8 (0.8 % wrong) withheld 28 % and refused 37 %. A tracked game loses
        what only a withheld space shows (a redraw and a spell looked like two card moves
        with 0.5 in the tracked 3-player game); at 0.2 the tracked games are followed.
    :param withhold_max: the largest share of a board's spaces that may be withheld; a board
        with more is refused (most of it unsure says the whole frame is suspect; on the
        development seeds at 0.5 withheld, refusing such boards cut wrong boards from 3.3 to
        2.5 %, ``withhold_max_sweep``).
    :param work_ppm_max: the board's scale in the frame, px per board mm (the square root of
        its projected area over its area in mm²), above which the frame is reduced before it is
        read: the detector's probe rings, edge filter, sampling step and piece areas are in
        pixels and hold at the scale of an ordinary Pi camera mode (a 1536x864 frame the board
        fills 75-90 % of: 1.1-1.55 px/mm); a full-resolution 12 MP frame shows the board at
        3-5 px/mm, where each rim's edge spreads over more pixels than the filter sees.
    :param work_ppm: the board's scale the frame is reduced to (an area average, which also
        averages the sensor's noise).
    :param confidence_power: the reported confidence is the raw one (the least of the tower
        count's probability, the top's sureness and the wizard margin) to this power, so that
        it is calibrated: on renders of the development seeds (bench seeds 101-105) spaces
        with a raw confidence of 0.97 or more were right 99.9 % of the time, 0.9-0.95 only
        99 %.
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
    disc_votes: int = 3
    crest_leak: float = 0.25
    mark_leak: float = 0.1
    disc_leak_spread: float = 0.5
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
    forced_confidence: float = 0.6
    ink_sure: float = 0.99
    fallback_sure: float = 0.6
    castle_roof_sure: float = 0.9
    min_confidence: float = 0.0
    withhold_below: float = 0.2
    withhold_max: float = 0.5
    top_method: str = "hand"
    height_method: str = "cnn"
    wizard_method: str = "cnn"
    castle_method: str = "cnn"
    token_method: str = "cnn"
    roof_disagree: float = 0.5
    wizard_disagree: float = 0.5
    wizard_fewer_sure: float = 0.97
    wizard_margin_gain: float = 2.0
    confidence_power: float = 3.5
    work_ppm_max: float = 1.6
    work_ppm: float = 1.45

    def wizard_sure(self, margin: float) -> float:
        """How sure the wizard counts of a space are (raw, 0.5 at a count boundary): its wizard
        margin ``margin`` (in wizards) through ``wizard_margin_gain``."""
        return 0.5 + margin * self.wizard_margin_gain


@dataclass(frozen=True)
class SpaceDetail:
    """Diagnostics of one space (for the bench and the host page): edge strength per tier,
    castle share per tier, wizard areas per colour and token areas (``witch``, ``raven``) in
    units of one piece's projected area, the height model's features; what the space's
    confidence is made of: the tower count's probability (``height_confidence``), how sure the
    top kind is (``top_sure``), the wizard areas' distance from the nearest count boundary
    (``wizard_margin``, in wizards), whether the setup's tower total changed the count
    (``forced``) and the share of clipped pixels on the top surface (``clipped``); the next
    most likely tower count (``rival_towers``, -1 when unknown); how sure the token network's
    reading of the witch and the raven token there is (``token_sure``, 1 when not read); how
    much lighter than the tops of its kind a lamp's reflection made the top (``washed``,
    fractions of the markers' white, 0 below ``QualityLimits.wash_excess``: then the space is
    glare, docs/vision.md "Glare"); what the colour areas measured there as the wizard
    network's second input (``wizard_cues``, :func:`~companion.vision.wizard_cnn.hand_cues`)."""

    roof_scores: tuple[float, ...]
    castle_scores: tuple[float, ...]
    wizard_area: dict[str, float]
    height_features: tuple[float, ...] = ()
    height_confidence: float = 1.0
    top_sure: float = 1.0
    wizard_margin: float = 1.0
    forced: bool = False
    clipped: float = 0.0
    rival_towers: int = -1
    token_sure: float = 1.0
    washed: float = 0.0
    wizard_cues: tuple[float, ...] = ()


@dataclass(frozen=True)
class Detection:
    """The detector's answer for one frame.

    :param status: ``ok``, ``unsure`` (read but refused: the message says why), ``no-frame``,
        ``bad-frame`` or ``board-lost``.
    :param message: why, in words (which markers are missing, what is wrong with the frame).
    :param observation: the reading of the frame when ``status == "ok"``, else None. It is marked
        ``unstable=True``: only the stability gate declares a reading stable. It lacks the
        spaces in ``withheld`` (a partial board, docs/state-model.md §3).
    :param board_view: ``(view_px, view_px, 3) uint8 BGR`` top-down board view, or None.
    :param frame_view: ``(round(H * frame_view_px / W), frame_view_px) uint8`` grey thumbnail of
        the whole frame (board and what lies around it, for the stability gate), or None.
    :param white_bgr: ``(3,)`` white reference of the frame, or None.
    :param pose: the board pose used, or None.
    :param quality: what the image-quality checks measured (:mod:`companion.vision.quality`).
    :param unsure_reading: with ``unsure`` after the board was read (glare, a space below
        ``min_confidence``): what was read, for the host page and the bench; never for the
        tracker.
    :param withheld: space -> why it was left out of ``observation`` (a player's words).
    :param reading: every space as read, withheld ones included, whenever the board was read
        (for the host page and the bench; never for the tracker).
    """

    status: str
    message: str = ""
    observation: Observation | None = None
    board_view: NDArray[np.uint8] | None = None
    white_bgr: NDArray[np.float64] | None = None
    pose: BoardPose | None = None
    details: dict[int, SpaceDetail] = field(default_factory=dict)
    frame_view: NDArray[np.uint8] | None = None
    quality: FrameQuality | None = None
    unsure_reading: Observation | None = None
    withheld: dict[int, str] = field(default_factory=dict)
    reading: Observation | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK


def check_frame(frame: object, size: tuple[int, int] | None = None) -> tuple[str, str]:
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
