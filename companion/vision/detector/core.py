"""The detector: frames in, readings out (see :mod:`companion.vision.detector` for the method).

:class:`Detector` keeps what lasts a session (the pose tracker, the probe tables of the last
pose, the profile's classes) and runs the stages over each frame; :func:`wizard_area_gain`
measures at setup how large one wizard comes out at this table.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import Observation, SpaceObservation
from companion.vision.camera import CameraModel
from companion.vision.castle_cnn import CastleModel
from companion.vision.detect_height import HeightModel
from companion.vision.detector.classes import ProfileClasses
from companion.vision.detector.config import (
    BAD_FRAME,
    BOARD_LOST,
    OK,
    SHIPPED,
    UNSURE,
    Detection,
    DetectorConfig,
    SpaceDetail,
    check_frame,
)
from companion.vision.detector.frame import (
    FrameProbes,
    Reader,
    Stacks,
    TopPixels,
    frame_white,
    probe_frame,
)
from companion.vision.detector.glare import on_top_surface, washed_tops
from companion.vision.detector.heights import stack_heights
from companion.vision.detector.pose import PoseTables, build_tables, hull, project
from companion.vision.detector.tokens import (
    TokenReading,
    learned_tokens,
    place_tokens,
    token_areas,
    track_drift,
)
from companion.vision.detector.tops import crest_disc_yb, magic_shares, top_kinds
from companion.vision.detector.withhold import withheld_message, withhold
from companion.vision.detector.wizards import (
    WizardReader,
    fused_wizards,
    label_tops,
    learned_wizards,
    settle_wizards,
    surface_labels,
    top_inputs,
    wizard_areas,
    wizard_margin,
)
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BoardPose, BoardPoseTracker, MarkerDetector
from companion.vision.profile import ColourProfile, white_from_pixels
from companion.vision.profile_learn import colour_transform, recolour_input
from companion.vision.quality import (
    CAMERA_MOVED,
    OUT_OF_FOCUS,
    TOO_BRIGHT,
    TOO_DARK,
    FrameQuality,
    QualityLimits,
    glare_message,
    marker_edges,
    over_exposed,
    pose_shift,
    space_ranges,
)
from companion.vision.stack_cnn import StackModel, TierCutter
from companion.vision.token_cnn import TokenModel
from companion.vision.top_kind import TopKindModel, learned_tops
from companion.vision.wizard_cnn import TopSampler, WizardModel, hand_cues


def _thumbnail(grey: NDArray[np.uint8], fw: int, fh: int) -> NDArray[np.uint8]:
    """``(fh, fw)`` area-averaged thumbnail of a grey frame: first by the largest whole factor
    (OpenCV's fast block average; a 1536 px frame to 160 px in one step took 12 ms, in two
    3.6 ms), then to the exact size."""
    h, w = grey.shape[:2]
    f = max(1, min(w // fw, h // fh))
    if f > 1:
        grey = grey[: h - h % f, : w - w % f]
        grey = cast(
            "NDArray[np.uint8]", cv2.resize(grey, (w // f, h // f), interpolation=cv2.INTER_AREA)
        )
    return cast("NDArray[np.uint8]", cv2.resize(grey, (fw, fh), interpolation=cv2.INTER_AREA))


def space_confidence(height: float, top: float, margin: float, cfg: DetectorConfig) -> float:
    """A space's confidence (0..1): the least sure of its tower count's probability, its top
    kind and its wizard counts (the wizard margin ``margin`` in wizards through
    ``wizard_margin_gain``), to the power ``confidence_power`` (calibration)."""
    raw = float(np.clip(min(height, top, cfg.wizard_sure(margin)), 0.0, 1.0))
    return float(raw**cfg.confidence_power)


def _read_tops(
    rd: Reader,
    fp: FrameProbes,
    st: Stacks,
    px: TopPixels,
    tops: list[str],
    sure: list[float],
    clipped: NDArray[np.bool_],
    learned: WizardReader | None = None,
    tokens: TokenReading | None = None,
) -> tuple[dict[int, SpaceObservation], dict[int, SpaceDetail]]:
    """The pieces on every top surface: wizards by colour, then the tokens. ``clipped``: the
    hull pixels (as ``px.labels``) that are over-exposed (their labels are already -1).
    ``learned``: the wizard network given the colour areas' measurements of every top
    (:func:`~companion.vision.wizard_cnn.hand_cues`): space -> its counts and how sure they
    are (:func:`~companion.vision.detector.wizards.learned_wizards`), which replace the colour
    areas' counts and margin there. ``tokens``: the token network's reading
    (:func:`~companion.vision.detector.tokens.learned_tokens`), which places the tokens instead
    of the colour areas and reads a roof under a token; how sure a space's token reading is
    then bounds its confidence as its top kind's sureness does."""
    g = rd.geometry
    out: dict[int, SpaceObservation] = {}
    details: dict[int, SpaceDetail] = {}
    drift, feats_all = track_drift(rd, fp, px)
    disc_yb = crest_disc_yb(rd, fp, st, tops)
    classes = list(rd.classes.wizard_idx)
    # the colour areas of every top first: the network takes their measurements
    hand: list[tuple[dict[str, int], dict[str, float], float, float, float]] = []
    cues: dict[int, NDArray[np.float32]] = {}
    pos = 0
    for si, space in enumerate(g.spaces):
        top = tops[si]
        wizards: dict[str, int] = {}
        areas: dict[str, float] = {}
        hh = px.hulls[si]
        clip_share = unknown = 0.0
        if hh is not None and len(hh[0]):
            n_clip = int(clipped[pos : pos + len(hh[0])].sum())
            clip_share = n_clip / len(hh[0])
            unknown = n_clip / max(hh[2] * rd.wizard_gain, 1.0)
        if hh is not None and top == "web":
            # nothing ever stays on a web (R-MOD-WEB-3): its printed web is not a piece
            pos += len(hh[0])
        elif hh is not None:
            n_px = len(hh[0])
            lab = surface_labels(rd, fp, top, hh, px.labels[pos : pos + n_px])
            lab = np.where(clipped[pos : pos + n_px], -1, lab)
            pos += n_px
            counts = np.bincount(lab[lab >= 0], minlength=len(rd.classes.names))
            wizards, areas = wizard_areas(rd, top, counts, hh[2] * rd.wizard_gain)
            feats = feats_all[pos - n_px : pos]
            areas.update(token_areas(rd, hh, lab, counts, drift, feats, disc_yb))
            settle_wizards(rd, wizards, areas)
        margin = wizard_margin(
            {c: a for c, a in areas.items() if c in rd.classes.wizard_idx},
            rd.config.wizard_min,
            unknown,
            {rd.classes.disc_colour: rd.config.disc_leak_spread}
            if top in ("crest", "crest-space")
            else None,
        )
        hand.append((wizards, areas, margin, unknown, clip_share))
        if hh is not None and top != "web":
            one = hh[2] * rd.wizard_gain
            cues[space] = hand_cues(areas, wizards, classes, unknown, clip_share, margin, top, one)
    net = learned(cues) if learned is not None else {}
    for si, space in enumerate(g.spaces):
        wizards, areas, margin, unknown, clip_share = hand[si]
        if space in net and space in cues:
            wizards, margin = fused_wizards(net[space], wizards, unknown, rd.config, tops[si])
        height = float(np.clip(0.5 + st.margin_of[si], 0.0, 1.0))
        conf = space_confidence(height, sure[si], margin, rd.config)
        out[space] = SpaceObservation(
            towers=st.towers_of[si],
            top=tops[si],
            wizards={c: n for c, n in wizards.items() if n > 0},
            castle=st.castle_of[si],
            witch=False,
            raven=False,
            confidence=round(conf, 3),
        )
        details[space] = SpaceDetail(
            tuple(st.roof_edges[si].tolist()),
            tuple(st.castle_frac[si].tolist()),
            areas,
            tuple(st.height_features[si].tolist()),
            height_confidence=height,
            top_sure=sure[si],
            wizard_margin=margin,
            forced=bool(st.forced[si]) if st.forced else False,
            clipped=clip_share,
            rival_towers=st.rival_of[si] if st.rival_of else -1,
            wizard_cues=tuple(cues[space].tolist()) if space in cues else (),
        )
    token_sure, roof_sure = place_tokens(rd, fp, out, details, drift, tokens)
    for space, o in out.items():
        d = details[space]
        top_sure = d.top_sure
        if space in roof_sure:
            # the network's roof head read the roof under the token
            top_sure = roof_sure[space]
        elif (o.witch or o.raven) and o.top in ("crest", "plain"):
            # a token on a roof hides the printed raven that tells crest from plain
            top_sure = min(top_sure, rd.config.fallback_sure)
        elif tokens is not None and o.top in ("crest", "plain") and space in tokens.crest:
            # a bare roof: the network's roof head checks the hand-built reading (a crest
            # disc crowded by wizards or a plain roof in their shadow leaves that unsure)
            o, top_sure = _check_roof(o, top_sure, tokens.crest[space], rd.config)
        tok_sure = token_sure.get(space, 1.0)
        if top_sure != d.top_sure or tok_sure < 1.0 or o.top != out[space].top:
            conf = space_confidence(
                d.height_confidence, min(top_sure, tok_sure), d.wizard_margin, rd.config
            )
            out[space] = replace(o, confidence=round(conf, 3))
            details[space] = replace(d, top_sure=top_sure, token_sure=tok_sure)
    return out, details


def _check_roof(
    o: SpaceObservation, top_sure: float, crest: float, cfg: DetectorConfig
) -> tuple[SpaceObservation, float]:
    """A crest or plain roof read by the hand-built stage (sure ``top_sure``) checked against
    the token network's roof head (probability ``crest`` that it is crest): agreeing, the
    surer of the two; disagreeing, the surer reading at most ``cfg.roof_disagree`` sure."""
    kind = "crest" if crest >= 0.5 else "plain"
    sure = max(crest, 1.0 - crest)
    if kind == o.top:
        return o, max(top_sure, sure)
    if sure > top_sure:
        o = replace(o, top=kind)
    return o, min(max(top_sure, sure), cfg.roof_disagree)


def board_scale(pose: BoardPose, geometry: BoardGeometry) -> float:
    """The board's scale in the image, px per board mm: the square root of its projected
    outline's area over its area in mm²."""
    outline = np.asarray(geometry.board_outline(), np.float64)
    px = pose.board_to_image(outline).astype(np.float32)
    bw, bh = geometry.board_size
    return math.sqrt(max(abs(float(cv2.contourArea(px))), 1.0) / (bw * bh))


def _reduce(frame: NDArray[np.uint8], size: tuple[int, int]) -> NDArray[np.uint8]:
    """``frame`` area-averaged to ``size`` ``(w, h)`` px: first by the largest whole factor
    that divides the frame (OpenCV's fast block average: a 12 MP frame to a third in 34 ms,
    in one step to 1600 px wide 100 ms), then to the exact size."""
    h, w = frame.shape[:2]
    f = max(1, min(w // size[0], h // size[1]))
    while f > 1 and (w % f or h % f):
        f -= 1
    if f > 1:
        frame = cast(
            "NDArray[np.uint8]", cv2.resize(frame, (w // f, h // f), interpolation=cv2.INTER_AREA)
        )
    if frame.shape[1] == size[0] and frame.shape[0] == size[1]:
        return frame
    return cast("NDArray[np.uint8]", cv2.resize(frame, size, interpolation=cv2.INTER_AREA))


def _to_frame(
    det: Detection, camera: CameraModel, size: tuple[int, int], small: tuple[int, int]
) -> Detection:
    """A detection made on a frame reduced to ``small`` ``(w, h)`` px, with its pose and
    marker size in the pixels of the ``size`` frame (OpenCV's pixel-centre convention, as
    :meth:`CameraModel.scaled_to`); the focus and camera-moved figures stay at the
    working scale the limits hold at."""
    sx, sy = size[0] / small[0], size[1] / small[1]
    a = np.array([[sx, 0.0, 0.5 * sx - 0.5], [0.0, sy, 0.5 * sy - 0.5], [0.0, 0.0, 1.0]])
    pose = det.pose
    if pose is not None:
        cam = camera if camera.size == size else camera.scaled_to(*size)
        corners = {
            k: (np.asarray(v, np.float64) * (sx, sy) + (0.5 * sx - 0.5, 0.5 * sy - 0.5)).astype(
                np.float32
            )
            for k, v in pose.marker_corners_px.items()
        }
        pose = replace(
            pose,
            homography=a @ pose.homography,
            reprojection_error_px=pose.reprojection_error_px * math.sqrt(sx * sy),
            camera=cam if pose.camera is not None else None,
            marker_corners_px=corners,
        )
    quality = det.quality
    if quality is not None and quality.marker_cell_px is not None:
        quality = replace(quality, marker_cell_px=quality.marker_cell_px * math.sqrt(sx * sy))
    return replace(det, pose=pose, quality=quality)


class Detector:
    """Frames in, readings out. See :mod:`companion.vision.detector` for the method.

    :param camera: the calibrated camera (scaled to the frame size automatically).
    :param geometry: the board geometry (track, tower and piece sizes, markers).
    :param profile: the colour profile sampled from the setup frame.
    :param tracker: an existing pose tracker (default: one over the geometry's markers).
    :param config: thresholds.
    :param height_model: the stack-height classifier (:class:`HeightModel`), a path to one,
        :data:`SHIPPED` for the model shipped with the package, or None for the hand-tuned
        rim rule (best tier above ``roof_threshold`` and ``roof_contrast``).
    :param limits: when a frame is refused (:mod:`companion.vision.quality`).
    :raises OSError, ValueError: when the height model file cannot be read, or with
        ``config.top_method`` ``"learned"`` the top-kind model, with ``config.height_method``
        ``"cnn"`` the tower-count network (:class:`~companion.vision.stack_cnn.StackModel`),
        with ``config.wizard_method`` ``"cnn"`` the wizard network
        (:class:`~companion.vision.wizard_cnn.WizardModel`), with ``config.castle_method``
        ``"cnn"`` the raven-castle network (:class:`~companion.vision.castle_cnn.CastleModel`);
        ValueError for another ``top_method`` than ``"hand"`` or ``"learned"``, another
        ``height_method`` than ``"features"`` or ``"cnn"`` or another ``wizard_method`` or
        ``castle_method`` than ``"hand"`` or ``"cnn"``.
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
        limits: QualityLimits | None = None,
    ) -> None:
        self.camera = camera
        self.geometry = geometry
        self.profile = profile
        self._setup_profile = profile
        # the learnt light's colours mapped back to the setup's, for the networks' input
        self._recolour: NDArray[np.float32] | None = None
        self.config = config or DetectorConfig()
        self._tracker = tracker
        self._tracker_size: tuple[int, int] | None = None
        self._tables: PoseTables | None = None
        self._tables_pose: BoardPose | None = None
        self.limits = limits or QualityLimits()
        if self.config.top_method not in ("hand", "learned"):
            raise ValueError(f"top_method {self.config.top_method!r}: expected 'hand' or 'learned'")
        self._top_model = TopKindModel() if self.config.top_method == "learned" else None
        if self.config.height_method not in ("features", "cnn"):
            raise ValueError(
                f"height_method {self.config.height_method!r}: expected 'features' or 'cnn'"
            )
        if self.config.wizard_method not in ("hand", "cnn"):
            raise ValueError(
                f"wizard_method {self.config.wizard_method!r}: expected 'hand' or 'cnn'"
            )
        self._wizard_model = (
            WizardModel(max_towers=self.config.max_towers)
            if self.config.wizard_method == "cnn"
            else None
        )
        if self.config.castle_method not in ("hand", "cnn"):
            raise ValueError(
                f"castle_method {self.config.castle_method!r}: expected 'hand' or 'cnn'"
            )
        if self.config.token_method not in ("hand", "cnn"):
            raise ValueError(f"token_method {self.config.token_method!r}: expected 'hand' or 'cnn'")
        self._token_model = TokenModel() if self.config.token_method == "cnn" else None
        self._sampler = (
            self._wizard_model.sampler
            if self._wizard_model is not None
            else TopSampler(self.config.max_towers)
        )
        # a missing or unreadable network raises here, at setup, never a silent fallback
        stack_cnn = (
            StackModel(max_towers=self.config.max_towers)
            if self.config.height_method == "cnn"
            else None
        )
        castle_cnn = (
            CastleModel(max_towers=self.config.max_towers)
            if self.config.castle_method == "cnn"
            else None
        )
        # the session's references, from the first frame read (the setup frame)
        self._ref_points: NDArray[np.float64] | None = None
        # the scale frames are read at (see :meth:`detect`), None until the board is found
        self._scale: float | None = None
        self._ref_edge: float | None = None
        self._moved_to: tuple[NDArray[np.float64], int] | None = None
        # dim light: (pose, running mean frame, last thumbnail, frames in the mean)
        self._avg: (
            tuple[BoardPose, NDArray[np.float32] | NDArray[np.uint8], NDArray[np.uint8], int] | None
        ) = None
        if isinstance(height_model, str):
            height_model = (
                HeightModel.load(max_towers=self.config.max_towers)
                if height_model == SHIPPED
                else HeightModel.load(height_model, self.config.max_towers)
            )
        # one wizard's measured area at setup (pose, lens blur and the set's meeple size),
        # relative to the projected model; see :func:`wizard_area_gain`
        gain = profile.meta.get("wizard_area", 1.0)
        wizard_gain = (
            float(np.clip(gain, 0.5, 2.0))
            if isinstance(gain, (int, float)) and math.isfinite(gain)
            else 1.0
        )
        self._reader = Reader(
            geometry=geometry,
            config=self.config,
            profile=profile,
            classes=ProfileClasses.build(profile, self.config),
            height=height_model,
            stack_cnn=stack_cnn,
            castle_cnn=castle_cnn,
            tier_cut=(
                TierCutter(self.config.max_towers)
                if stack_cnn is not None or castle_cnn is not None
                else None
            ),
            wizard_gain=wizard_gain,
            crest_gaps=[],
        )

    def set_profile(self, profile: ColourProfile) -> None:
        """Read the next frames with ``profile`` (e.g. learnt from a committed board,
        :mod:`companion.vision.profile_learn`); the networks and the pose are kept, and the
        networks' input is mapped back to the setup's colours
        (:func:`~companion.vision.profile_learn.colour_transform`)."""
        rd = self._reader
        classes = ProfileClasses.build(profile, self.config)
        self._reader = replace(rd, profile=profile, classes=classes)
        self.profile = profile
        self._recolour = colour_transform(self._setup_profile, profile)

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
        a, b = project(old, pts), project(pose, pts)
        return bool(np.max(np.abs(a - b)) <= self.config.pose_tolerance_px)

    def _tables_for(self, pose: BoardPose, shape: tuple[int, int]) -> PoseTables:
        """The probe tables of ``pose``: the last ones while the camera stays put, else new
        ones with every top surface's wizard region (a new stack height in a later frame then
        costs nothing; the camera stays put for a whole game).

        :raises ValueError, cv2.error, numpy.linalg.LinAlgError: on a pose that cannot be used.
        """
        if self._tables is None or not self._same_pose(pose):
            self._tables = tables = build_tables(self.geometry, self.config, pose, shape)
            for space in self.geometry.spaces:
                for tier in range(self.config.max_towers + 1):
                    hull(self.geometry, self.config, pose, tables, space, tier, shape)
            self._tables_pose = pose
        return self._tables

    # -- the detector ----------------------------------------------------------------------------

    def detect(self, frame: object, time_s: float = 0.0, index: int = 0) -> Detection:
        """Read one frame. Never raises on a bad frame: the status says what went wrong.

        A frame that shows the board larger than ``config.work_ppm_max`` px per mm (a
        full-resolution sensor mode) is read reduced to ``config.work_ppm``; the scale is
        chosen from the first frame the board is found in and kept for the session. The
        answer's pose and marker size are in the pixels of ``frame`` either way.

        :param frame: ``(H, W, 3) uint8 BGR``.
        :param time_s: capture time in seconds (copied into the Observation).
        :param index: frame counter of the source (copied into the Observation).
        """
        status, msg = check_frame(frame, self.camera.size)
        if status != OK or not isinstance(frame, np.ndarray):
            return Detection(status, msg)
        if self._scale is None:
            self._scale = self._work_scale(frame)
        s = self._scale
        if s is None or s >= 1.0:
            return self._read(frame, time_s, index)
        h, w = frame.shape[:2]
        size = (max(64, int(round(w * s))), max(64, int(round(h * s))))
        small = _reduce(frame, size)
        return _to_frame(self._read(small, time_s, index), self.camera, (w, h), size)

    def _work_scale(self, frame: NDArray[np.uint8]) -> float | None:
        """The scale to read this session's frames at (reduced px per frame px, <= 1), from the
        board's size in ``frame``; None while the board is not found."""
        h, w = frame.shape[:2]
        grey = cast("NDArray[np.uint8]", cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
        res = self._get_tracker(w, h).update(grey)
        if not res.ok or res.pose is None:
            return None
        ppm = board_scale(res.pose, self.geometry)
        cfg = self.config
        return cfg.work_ppm / ppm if ppm > cfg.work_ppm_max else 1.0

    def _read(self, frame: NDArray[np.uint8], time_s: float, index: int) -> Detection:
        """Read one checked frame at the working scale."""
        h, w = frame.shape[:2]
        tracker = self._get_tracker(w, h)
        # one grey frame for the marker tracker and the rim edges
        grey = cast("NDArray[np.uint8]", cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
        res = tracker.update(grey)
        if not res.ok or res.pose is None:
            if res.status.value == "bad frame":
                return Detection(BAD_FRAME, res.message)
            why = self.lost_reason(grey)
            return Detection(BOARD_LOST, f"{why} ({res.message})" if why else res.message)
        pose = res.pose
        if not pose.has_3d:
            return Detection(BOARD_LOST, "board pose without a camera model")
        try:
            tables = self._tables_for(pose, (h, w))
        except (ValueError, cv2.error, np.linalg.LinAlgError) as exc:
            return Detection(BOARD_LOST, f"pose unusable: {exc}")
        white = frame_white(frame, tables, res.markers)
        if white is None:
            white = white_from_pixels(frame[::8, ::8].reshape(-1, 3))
        refusal, quality = self._check_quality(grey, pose, white, res.markers.values())
        vp = self.config.view_px
        view = cv2.warpPerspective(frame, tables.view_matrix, (vp, vp), flags=cv2.INTER_LINEAR)
        fw = self.config.frame_view_px
        fh = max(1, int(round(h * fw / w)))
        thumb = _thumbnail(grey, fw, fh).astype(np.uint8)
        if refusal:
            return Detection(
                UNSURE, refusal, None, view.astype(np.uint8), white, pose, {}, thumb, quality
            )
        if quality.white_grey is not None and quality.white_grey < self.limits.low_light:
            # dim light: the still frames of one board are averaged before reading (the
            # sensor's noise falls with the square root of their number)
            frame, grey = self._average(frame, grey, thumb, pose)
        else:
            self._avg = None
        rd = self._reader
        fp = probe_frame(rd, frame, grey, pose, tables, white)
        stacks = stack_heights(rd, fp)
        pixels = label_tops(rd, fp, stacks)
        # over-exposed pixels (white in every channel: a lamp's reflection) are unknown,
        # never "no wizard"
        top_px = frame[pixels.ys, pixels.xs]
        clipped = top_px.min(axis=1) >= self.limits.clip_level
        tops, sure = top_kinds(rd, fp, stacks, pixels, magic_shares(rd, fp, stacks))
        if self._top_model is not None:
            learned_tops(self._top_model, fp, stacks, rd.geometry, tops, sure)
        learned: WizardReader | None = None
        tokens: TokenReading | None = None
        # without tokens in play only the network's roof head is used: it checks the crest
        # and plain roofs as it does with the modules
        token_model = self._token_model
        if self._wizard_model is not None or token_model is not None:
            # one resampling of the top surfaces for both networks
            top_spaces, x = top_inputs(self._sampler, rd, fp, stacks)
            if self._recolour is not None and x.size:
                x = recolour_input(x, self._recolour)
            if self._wizard_model is not None:
                learned = partial(learned_wizards, self._wizard_model, rd, top_spaces, x)
            if token_model is not None:
                tokens = learned_tokens(token_model, rd, top_spaces, x, tops)
        spaces, details = _read_tops(rd, fp, stacks, pixels, tops, sure, clipped, learned, tokens)
        # a lamp's reflection that pales a top without clipping it is glare too
        lim = self.limits
        on_top = on_top_surface(rd.geometry, pose, stacks.towers_of, pixels)
        for s, v in washed_tops(top_px, pixels.hulls, tops, fp.white, spaces, lim, on_top).items():
            details[s] = replace(details[s], washed=v)
        glare = {
            s: max(d.clipped, lim.glare_share) if d.washed else d.clipped
            for s, d in details.items()
            if d.clipped > 0 or d.washed
        }
        quality = replace(quality, glare=glare)
        full = Observation(spaces=spaces, time=float(time_s), frame=int(index), unstable=True)
        obs, withheld, refusal = full, {}, ""
        if self.config.withhold_below > 0:
            lit = {s: c for s, c in glare.items() if c >= self.limits.glare_share}
            w = withhold(full, details, self.config, lit)
            obs, withheld, refusal = w.observation, w.reasons, w.refusal
        refusal = refusal or self._check_reading(obs, details)
        if refusal and over_exposed(quality, len(full.spaces), self.limits):
            refusal = TOO_BRIGHT  # clipped everywhere: the light, not a lamp's reflection
        return Detection(
            UNSURE if refusal else OK,
            refusal or withheld_message(withheld) or res.message,
            None if refusal else obs,
            view.astype(np.uint8),
            white,
            pose,
            details,
            thumb,
            quality,
            full if refusal else None,
            withheld,
            full,
        )

    # -- honest confidence -------------------------------------------------------------------

    def _check_quality(
        self,
        grey: NDArray[np.uint8],
        pose: BoardPose,
        white: NDArray[np.float64] | None,
        markers: Iterable[NDArray[np.floating]],
    ) -> tuple[str, FrameQuality]:
        """The image-quality checks of a frame whose board was found (see
        :mod:`companion.vision.quality`): ``(refusal or "", what was measured)``. The first
        frame read sets the session's references (the setup frame: its marker sharpness and
        its pose); a new camera place is taken once ``settle_frames`` frames agree on it."""
        lim = self.limits
        white_grey = float(np.mean(white)) if white is not None else None
        edge, cell = marker_edges(grey, markers)
        w, h = self.geometry.board_size
        pts = np.array(
            [[0, 0, 0], [w, 0, 0], [w, h, 0], [0, h, 0], [w / 2, h / 2, 300.0]], np.float64
        )
        here = project(pose, pts)
        if self._ref_points is None:
            self._ref_points = here
        moved = pose_shift(self._ref_points, here)
        quality = FrameQuality(white_grey, edge, cell, None, moved)
        if white_grey is not None and white_grey < lim.dark_white:
            return TOO_DARK, quality
        if edge is not None:
            if self._ref_edge is None:
                self._ref_edge = edge
            if edge > lim.edge_px or edge > lim.edge_growth * max(self._ref_edge, 1.0):
                return OUT_OF_FOCUS, quality
        if moved > lim.moved_px:
            cand = self._moved_to
            if cand is not None and pose_shift(cand[0], here) <= lim.moved_px:
                self._moved_to = (here, cand[1] + 1)
            else:
                self._moved_to = (here, 1)
            if self._moved_to[1] < lim.settle_frames:
                return CAMERA_MOVED, quality
            # the camera stays at its new place: read from there on
            self._ref_points = here
            self._moved_to = None
            quality = replace(quality, moved_px=0.0)
        else:
            self._moved_to = None
        return "", quality

    def _average(
        self,
        frame: NDArray[np.uint8],
        grey: NDArray[np.uint8],
        thumb: NDArray[np.uint8],
        pose: BoardPose,
    ) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
        """The running mean of this frame and the last still frames of the same pose (at most
        ``average_frames``); anything that changed in the view since the mean began (the
        thumbnails differ by more than ``still_grey`` somewhere) or a new pose starts again
        from this frame."""
        lim = self.limits
        avg = self._avg
        still = (
            avg is not None
            and avg[0] is pose
            and avg[1].shape == frame.shape
            and avg[2].shape == thumb.shape
            and float(np.max(cv2.absdiff(avg[2], thumb))) <= lim.still_grey
        )
        if not still or avg is None:
            # (the first frame is kept as it is: most frames start a new mean)
            self._avg = (pose, frame, thumb, 1)
            return frame, grey
        n = min(avg[3] + 1, lim.average_frames)
        mean = avg[1] if avg[1].dtype == np.float32 else avg[1].astype(np.float32)
        cv2.addWeighted(mean, 1.0 - 1.0 / n, frame.astype(np.float32), 1.0 / n, 0.0, dst=mean)
        self._avg = (pose, mean, avg[2], n)
        out = np.clip(mean + 0.5, 0, 255).astype(np.uint8)
        return out, cast("NDArray[np.uint8]", cv2.cvtColor(out, cv2.COLOR_BGR2GRAY))

    def _check_reading(self, obs: Observation, details: Mapping[int, SpaceDetail]) -> str:
        """Why a reading is refused ("" when it is not): clipped spaces (when they are not
        withheld: ``withhold_below`` 0), then spaces below ``min_confidence`` (the tracker
        gets no reading rather than a wrong one). ``obs`` lacks the withheld spaces."""
        glare = sorted(
            s
            for s, d in details.items()
            if (d.clipped >= self.limits.glare_share or d.washed) and s in obs.spaces
        )
        if glare:
            return glare_message(glare)
        unsure = sorted(
            s for s, o in obs.spaces.items() if o.confidence < self.config.min_confidence
        )
        if unsure:
            forced = [s for s in unsure if details[s].forced]
            word = "space" if len(unsure) == 1 else "spaces"
            lit = [s for s in unsure if details[s].clipped > 0]
            why = (
                " (the tower count does not add up)"
                if forced
                else " (a lamp's reflection hides part of it)"
                if lit
                else ""
            )
            return f"unsure of {word} {space_ranges(unsure)}{why}: re-checking the board"
        return ""

    def lost_reason(self, grey: NDArray[np.uint8]) -> str:
        """Why the markers may be lost, measured where they were last seen: too dark or out
        of focus ("" when neither)."""
        pose = self._tables_pose
        if pose is None:
            return ""
        quads = list(pose.marker_corners_px.values())
        vals = []
        for q in quads:
            qq = np.asarray(q, np.float64).reshape(4, 2)
            x0, y0 = np.maximum(np.floor(qq.min(0)).astype(int), 0)
            x1, y1 = np.ceil(qq.max(0)).astype(int) + 1
            patch = grey[y0:y1, x0:x1]
            if patch.size:
                vals.append(float(np.percentile(patch, 90)))
        if vals and float(np.median(vals)) < self.limits.dark_white:
            return TOO_DARK
        edge, _ = marker_edges(grey, quads)
        ref = self._ref_edge
        if edge is not None and (
            edge > self.limits.edge_px
            or (ref is not None and edge > self.limits.edge_growth * max(ref, 1.0))
        ):
            return OUT_OF_FOCUS
        return ""


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
    # (the wizard areas only: the tokens are not read)
    det = Detector(camera, geometry, plain, config=DetectorConfig(token_method="hand"))
    found = det.detect(frame)
    # every space as read (the withheld ones too: each is checked against the known position)
    seen = found.reading if found.ok else None
    if seen is None:
        return None
    ratios: list[float] = []
    for space, want in expected.items():
        got = seen.spaces.get(space)
        detail = found.details.get(space)
        if got is None or detail is None or got.towers != want.towers or want.castle:
            continue
        for colour, n in want.wizards.items():
            if n > 0 and colour in detail.wizard_area:
                ratios.append(detail.wizard_area[colour] / n)
    if not ratios:
        return None
    return float(np.median(ratios))
