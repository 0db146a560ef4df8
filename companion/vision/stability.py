"""Stability gating: say nothing while anything moves or a hand is over the board.

The detector reads every frame; the tracker must only hear about a *still* board. A
:class:`StabilityGate` takes, per frame, a small top-down view of the board (the detector warps it
with the homography, e.g. ``(160, 160, 3) uint8 BGR``), the detector's reading of the frame and the
frame's timestamp, and emits the reading as an :class:`~companion.rules.observation.Observation`
exactly once per still period:

1. **Frame differencing** on the downscaled board view: the view is blurred, split into cells and
   the mean absolute grey difference to the previous view is taken per cell; any cell above
   ``motion_threshold`` grey levels means something moves.
2. **Hand / arm veto**, against the last stable view (a sandy board or an oak table is
   skin-coloured too, so only what *changed* counts): a large blob that is skin-coloured (YCrCb
   skin range after white balance) and differs from the stable view, or any changed region that
   touches the board's rim (an arm reaches in from outside the board; pieces stand inside
   it). Before the first stable view only motion and agreement guard.
   A piece that moved leaves changes too: the revealed sandy track or a beige tower is
   skin-coloured, and a tall stack at the board's edge leans over the rim in the camera's
   perspective. So a vetoing region no larger than a stack (``piece_blob``) is *settled* once the
   whole view has been quiet for ``settle_s`` seconds and the period's reading shows a tower move
   from the last reported board that keeps every tower (towers never leave the board; a hand
   hides some): then it is part of the board, not a hand. A large region (an arm, a sleeve), or
   a small one without a tower move (a hand resting after placing a wizard), vetoes that still
   period. The last stable view is only renewed by a report, so a change the veto held back
   (the raven castle carried with the towers under it leans over the rim wider than a stack)
   would stay in every later board's difference and hold back every board for the rest of the
   game. So a still period held back for ``settle_s`` or longer is remembered once motion (or
   a lost board) ends it, and what it already showed and has stayed put through that motion
   is part of the board in the next still periods: a hand does not stay in place while the
   pieces are moved. The held-back board itself is lost; the tracker bridges it with the next.
   A castle move is a piece move too: when the reading shows the castle on another space than
   the last reported board, a region larger than a stack is settled like a stack's if it lies
   within the castle's footprint (with the towers it took along) at its old and new space, drawn
   from the board's geometry and the camera's position (``geometry``, the frame's ``pose``:
   :func:`~companion.vision.footprint.castle_footprint`), or beyond it only as a shadow (the
   colour's channel shares kept, within the column's height of it). An arm is wider than that,
   and changes the colour.
3. **Agreement**: per space, the most common reading of the still period (towers, top,
   wizards, castle, witch, raven) with at least ``agree`` votes and the ``majority`` share of
   the readings that have the space; a detector that misreads a space on one noisy frame is
   outvoted. A reading may lack spaces the detector withheld (docs/state-model.md §3, "A
   partial board"): a missing space is unknown, no vote and no change. A space missing from
   more than the ``majority`` share allows (or read fewer than ``agree`` times) in the period
   is left out of what is emitted (unknown to the tracker). A board that only lacks spaces the
   last emitted one had, and agrees on the rest, is nothing new and is not emitted again; one
   that adds a space withheld so far is (the still period's board, now known further).
4. Emit when all of this has held for ``still_s`` seconds of frame time, and never on a frame
   where something **enters the camera's view**: the whole frame's grey thumbnail (the detector's
   ``frame_view``), differenced against the previous frame per cell after removing the median
   difference (the camera's exposure), moves in the band along the frame's edge. A hand that comes
   in from outside the frame is there a frame before it reaches the board view, which alone would
   see nothing and could emit on that frame. Such a frame emits nothing and resets nothing (its
   reading of the still board counts); the next frame that shows no entry may emit.

The clock is the frames' own timestamps (seconds), never read here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import Observation, SpaceObservation
from companion.vision.footprint import castle_footprint
from companion.vision.geometry import BoardGeometry

MOVING = "moving"
HAND = "hand"
SETTLING = "settling"
STABLE = "stable"
NO_BOARD = "no-board"
#: frame times are sums of ``1 / fps`` steps; 0.6 - 0.2 is 0.39999999999999997 s in floating point,
#: and three frames at 5 fps must count as the 0.4 s they span
TIME_EPS = 1e-6
NO_TOWER_MOVED = "no tower moved"


@dataclass(frozen=True)
class GateConfig:
    """Thresholds of the gate (units: seconds, grey levels 0..255, fractions of the view area).

    :param still_s: how long the board must be still (and readings agree) before emitting.
    :param cell_px: side of a differencing cell in board-view pixels.
    :param motion_threshold: mean absolute grey difference of one cell that counts as motion.
    :param agree: identical readings of every space needed within the still period (the
        detector may flicker on a noisy frame; per space the most common reading is reported).
    :param majority: share of the still period's readings each space's reported reading needs.
    :param skin_blob: minimum area of one skin-coloured blob that vetoes (fraction of the view).
    :param rim: width of the rim band (fraction of the view side) an arm must cross.
    :param change_threshold: grey difference to the last stable view that counts as changed.
    :param change_blob: minimum area of a changed region touching the rim (fraction of the view).
    :param piece_blob: largest vetoing region (fraction of the view) that may be a moved piece
        (a stack's footprint with its lean and shadow); larger ones are always a hand or arm.
    :param settle_s: how long the view must be quiet before such a small region is settled.
    :param castle_margin: how far (fraction of the view side) a region larger than a stack may
        reach beyond the castle's footprint (:func:`~companion.vision.footprint.castle_footprint`)
        and still be the castle that moved (blur, a pose a little off).
    :param shadow_chroma: beyond that, within the column's height of it, a changed pixel may be
        the shadow the castle cast or casts (darker or lighter, its colour's share of each
        channel kept within this); an arm changes the colour.
    :param entry_cell_px: side of a differencing cell of the whole-frame thumbnail, px.
    :param entry_band: width of the band along the frame's edge where something entering the view
        is looked for (fraction of the thumbnail's width).
    :param entry_threshold: mean absolute grey difference of one band cell, exposure removed, that
        counts as something entering the view.
    """

    still_s: float = 0.4
    cell_px: int = 8
    motion_threshold: float = 10.0
    agree: int = 3
    majority: float = 0.7
    skin_blob: float = 0.012
    rim: float = 0.05
    change_threshold: float = 28.0
    change_blob: float = 0.004
    piece_blob: float = 0.02
    settle_s: float = 0.6
    castle_margin: float = 0.03
    shadow_chroma: float = 0.04
    entry_cell_px: int = 2
    entry_band: float = 0.04
    entry_threshold: float = 6.0


@dataclass(frozen=True)
class GateDecision:
    """What the gate made of one frame.

    :param state: ``moving``, ``hand``, ``settling``, ``stable`` or ``no-board``.
    :param observation: the Observation to send to the tracker (only on the frame that completes a
        still period), else None.
    :param reason: a short human-readable explanation (for logs and the host page).
    :param motion: the largest per-cell grey difference to the previous view.
    """

    state: str
    observation: Observation | None = None
    reason: str = ""
    motion: float = 0.0


def reading_key(obs: Observation) -> tuple[Any, ...]:
    """What must stay equal between readings for them to 'agree' (confidence excluded)."""
    return tuple(
        (
            s,
            o.towers,
            o.top,
            tuple(sorted(o.wizards.items())),
            o.castle,
            o.witch,
            o.raven,
        )
        for s, o in sorted(obs.spaces.items())
    )


def _towers(obs: Observation) -> dict[int, int]:
    """Towers per space of a reading."""
    return {s: o.towers for s, o in obs.spaces.items()}


def _castle(obs: Observation) -> tuple[int, int] | None:
    """The castle's space in a reading and the towers under it, or None (not read)."""
    for s, o in sorted(obs.spaces.items()):
        if o.castle:
            return s, o.towers
    return None


def _tower_moved(now: dict[int, int], before: dict[int, int] | None) -> str:
    """Why the reading ``now`` is not a tower move from ``before`` (``""``: it is one): some
    tower count changed and none is missing (towers never leave the board; a hand hides some).
    A space one of them lacks (withheld) may hold any number of towers: the totals must then
    be able to agree (the unknown spaces of ``now`` hold what ``before`` has more, or the
    reverse), and a space read on one side only counts as a change."""
    if before is None:
        return "no board reported yet"
    n, b = sum(now.values()), sum(before.values())
    only_before, only_now = before.keys() - now.keys(), now.keys() - before.keys()
    if not only_before and not only_now and n != b:
        return f"{n} towers seen, {b} before"
    if only_before and not only_now and n > b:
        return f"{n} towers seen, {b} before"
    if only_now and not only_before and n < b:
        return f"{n} towers seen, {b} before"
    if now == before:
        return NO_TOWER_MOVED
    return ""


def skin_mask(
    view_bgr: NDArray[np.uint8], white_bgr: NDArray[Any] | None = None
) -> NDArray[np.uint8]:
    """Skin-coloured pixels of a board view (255 = skin).

    Classic YCrCb box (Cr 135..175, Cb 80..125, Y > 40) after scaling the view so that the white
    reference becomes neutral (skin under 2700 K light would otherwise look orange, under
    6500 K pink). :param view_bgr: ``(h, w, 3) uint8 BGR``. :returns: ``(h, w) uint8``.
    """
    img = view_bgr
    if white_bgr is not None:
        w = np.asarray(white_bgr, np.float32)
        gain = (w.mean() / np.maximum(w, 1.0)).astype(np.float32)
        img = np.clip(view_bgr.astype(np.float32) * gain, 0, 255).astype(np.uint8)
    ycc = cv2.cvtColor(img, cv2.COLOR_BGR2YCrCb)
    mask = cast("NDArray[np.uint8]", cv2.inRange(ycc, (40, 135, 80), (255, 175, 125)))
    return mask


@dataclass
class StabilityGate:
    """Emits one Observation per still period; None while something moves or a hand is in view.

    Feed it every frame with :meth:`update`. It keeps only small board views, never frames.
    """

    config: GateConfig = field(default_factory=GateConfig)
    #: the board's geometry (the detector's): the castle's footprint in the view; without it a
    #: castle move is held back like a hand
    geometry: BoardGeometry | None = None

    def __post_init__(self) -> None:
        self._prev: NDArray[np.float32] | None = None
        self._stable_view: NDArray[np.float32] | None = None
        self._stable_bgr: NDArray[np.uint8] | None = None
        self._still_since: float | None = None
        self._history: deque[Observation] = deque(maxlen=64)
        self._emitted_key: tuple[Any, ...] | None = None
        # space -> its reading key in the last emitted board (None: report the next one)
        self._emitted_spaces: dict[int, tuple[Any, ...]] | None = None
        self._last_time: float | None = None
        self._quiet_since: float | None = None
        self._emitted_towers: dict[int, int] | None = None
        self._prev_frame: NDArray[np.float32] | None = None
        # the view of the last still period the hand veto held back (``held``, see _hand), and
        # the one of the period under way (adopted when motion ends it)
        self._held_view: NDArray[np.float32] | None = None
        self._holding: NDArray[np.float32] | None = None
        # the castle's space in the last emitted board and the towers under it
        self._emitted_castle: tuple[int, int] | None = None
        # this frame's vetoing regions larger than a stack (``_hand``)
        self._large: list[NDArray[np.bool_]] = []

    def reset(self) -> None:
        """Forget everything (e.g. after the camera was moved)."""
        self.__post_init__()

    def _grey(self, view: NDArray[np.uint8]) -> NDArray[np.float32]:
        g = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY).astype(np.float32)
        return cast("NDArray[np.float32]", cv2.GaussianBlur(g, (5, 5), 1.2))

    def _cells(self, diff: NDArray[np.float32]) -> float:
        c = self.config.cell_px
        h, w = diff.shape
        hh, ww = h // c * c, w // c * c
        if hh == 0 or ww == 0:
            return float(diff.mean()) if diff.size else 0.0
        cells = diff[:hh, :ww].reshape(hh // c, c, ww // c, c).mean(axis=(1, 3))
        return float(cells.max())

    def _entering(self, frame_view: NDArray[np.uint8] | None) -> float:
        """Largest band-cell difference of the whole-frame thumbnail to the previous one (grey
        levels, the median difference removed); 0.0 without a previous thumbnail."""
        if frame_view is None or frame_view.ndim != 2:
            self._prev_frame = None
            return 0.0
        cur = frame_view.astype(np.float32)
        prev, self._prev_frame = self._prev_frame, cur
        if prev is None or prev.shape != cur.shape:
            return 0.0
        diff = cur - prev
        diff = np.abs(diff - np.float32(np.median(diff)))
        c = max(1, self.config.entry_cell_px)
        h, w = diff.shape
        hh, ww = h // c * c, w // c * c
        if hh == 0 or ww == 0:
            return 0.0
        cells = diff[:hh, :ww].reshape(hh // c, c, ww // c, c).mean(axis=(1, 3))
        band = max(1, int(round(self.config.entry_band * w / c)))
        if 2 * band >= min(cells.shape):
            return float(cells.max())
        cells[band:-band, band:-band] = 0.0  # inside the band: the board view judges the board
        return float(cells.max())

    def _hand(
        self, view: NDArray[np.uint8], grey: NDArray[np.float32], white: NDArray[Any] | None
    ) -> tuple[str, bool]:
        """Why a hand or arm may be over the board (``""``: none), and whether every vetoing
        region is small enough to be a moved piece (``piece_blob``)."""
        cfg = self.config
        area = view.shape[0] * view.shape[1]
        self._large = []
        if self._stable_view is None or self._stable_view.shape != grey.shape:
            return "", True
        reasons: list[str] = []
        largest = 0
        changed = (np.abs(grey - self._stable_view) > cfg.change_threshold).astype(np.uint8)
        held = self._held_view
        if held is not None and held.shape == grey.shape:
            # what a still period the veto held back already showed, and what has stayed put
            # through the motion since, is part of the board: a hand does not stay in place
            # while the pieces are moved
            changed &= (np.abs(grey - held) > cfg.change_threshold).astype(np.uint8)
        skin = (skin_mask(view, white) > 0).astype(np.uint8) & cast(
            "NDArray[np.uint8]", cv2.dilate(changed, np.ones((3, 3), np.uint8))
        )
        skin = cast(
            "NDArray[np.uint8]", cv2.morphologyEx(skin, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        )
        n, labels, stats, _ = cv2.connectedComponentsWithStats(skin, connectivity=8)
        areas = stats[:, cv2.CC_STAT_AREA]
        blobs = [lab for lab in range(1, n) if areas[lab] >= cfg.skin_blob * area]
        if blobs:
            reasons.append("skin-coloured blob over the board")
            largest = max(int(areas[lab]) for lab in blobs)
            self._large += [labels == lab for lab in blobs if areas[lab] > cfg.piece_blob * area]
        changed = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
        if n > 1:
            h, w = grey.shape
            r = max(1, int(round(cfg.rim * min(h, w))))
            rim = np.zeros_like(changed)
            rim[:r, :] = rim[-r:, :] = rim[:, :r] = rim[:, -r:] = 1
            areas = stats[:, cv2.CC_STAT_AREA]
            touching = [
                int(lab)
                for lab in np.unique(labels[(rim > 0) & (changed > 0)])
                if lab and areas[lab] >= cfg.change_blob * area
            ]
            if touching:
                reasons.append("something reaches over the board's edge")
                largest = max([largest, *(int(areas[lab]) for lab in touching)])
                self._large += [
                    labels == lab for lab in touching if areas[lab] > cfg.piece_blob * area
                ]
        return " and ".join(reasons), largest <= cfg.piece_blob * area

    def _castle_sized(
        self, reading: Observation | None, pose: Any, view: NDArray[np.uint8]
    ) -> bool:
        """Does every vetoing region larger than a stack (``_hand``) lie within the castle's
        footprint, with its column, at its space in the last emitted board and at its space in
        ``reading`` (``castle_margin`` around them, and the shadows they cast: ``shadow_chroma``)?
        Only when the castle moved between the two: then such a region may be the castle's move,
        not a hand. ``pose``: the frame's board pose (``camera_position_mm()``), or None."""
        before = self._emitted_castle
        stable = self._stable_bgr
        if not self._large or self.geometry is None or pose is None or reading is None:
            return False
        if stable is None or stable.shape != view.shape:
            return False
        shape = (view.shape[0], view.shape[1])
        now = _castle(reading)
        if before is None or now is None or now[0] == before[0]:
            return False
        cam = pose.camera_position_mm()
        if cam is None:
            return False
        # the part of each column the move took away (old space) or brought (new space), above
        # the towers that stay, as the other board reads them; a hand may hide an unread old
        # space, and an unread new space had no more towers than the castle now stands on
        if before[0] not in reading.spaces:
            return False
        then = self._emitted_towers or {}
        left = reading.spaces[before[0]].towers
        parts = ((before[0], before[1], left), (now[0], now[1], then.get(now[0], now[1])))
        allowed = np.zeros(shape, np.uint8)
        for space, towers, below in parts:
            mask = castle_footprint(self.geometry, cam, space, towers, shape, below)
            if mask is None:
                return False
            allowed |= mask
        m = 2 * int(round(self.config.castle_margin * min(shape))) + 1
        inside = cv2.dilate(allowed, np.ones((m, m), np.uint8)) > 0
        outside = np.zeros(shape, bool)
        for region in self._large:
            outside |= region & ~inside
        if not outside.any():
            return True
        # a shadow: within the column's height of it, the colour's channel shares kept
        g = self.geometry
        top = g.tier_z(max(before[1], now[1])) + g.castle.height
        reach = 2 * int(round(top * min(shape) / min(g.board_size))) + 1
        near = cv2.dilate(allowed, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach, reach)))
        if (outside & (near == 0)).any():
            return False
        shares = []
        for img in (view, stable):
            f = cv2.GaussianBlur(img.astype(np.float32), (5, 5), 1.2)
            shares.append(f / np.maximum(f.sum(axis=2), 1.0)[..., None])
        kept = np.abs(shares[0] - shares[1]).max(axis=2) <= self.config.shadow_chroma
        return bool(kept[outside].all())

    def _period_ended(self) -> None:
        """Motion (or a lost board) ended the still period: a period the hand veto held back
        for ``settle_s`` or longer becomes the ``held`` view (:meth:`_hand`)."""
        if self._holding is not None:
            self._held_view, self._holding = self._holding, None

    def _vote(self) -> tuple[Observation, bool]:
        """Per space, the most common reading of the still period; ``True`` when every space's
        winner has at least ``agree`` votes and the ``majority`` share of the readings that
        have the space. A space that fewer than ``agree`` readings or less than the
        ``majority`` share of them have (the detector withheld it on the other frames) is left
        out: unknown, never a change."""
        cfg = self.config
        last = self._history[-1]
        spaces = {}
        ok = True
        n = len(self._history)
        every = sorted({s for obs in self._history for s in obs.spaces})
        for s in every:
            tally: dict[tuple[Any, ...], list[SpaceObservation]] = {}
            for obs in self._history:
                o = obs.spaces.get(s)
                if o is None:
                    continue
                k = (o.towers, o.top, tuple(sorted(o.wizards.items())), o.castle, o.witch, o.raven)
                tally.setdefault(k, []).append(o)
            present = sum(len(v) for v in tally.values())
            best = max(tally.values(), key=len)
            if present < cfg.agree or present < cfg.majority * n:
                continue  # withheld on too many frames: unknown
            if len(best) < cfg.agree or len(best) < cfg.majority * present:
                ok = False
            spaces[s] = replace(
                best[-1], confidence=round(min(best[-1].confidence, len(best) / n), 3)
            )
        return replace(last, spaces=spaces), ok

    def _nothing_new(self, voted: Observation) -> bool:
        """Was everything ``voted`` says already in the last emitted board (it may lack spaces
        that board had: they were withheld since, not changed)?"""
        before = self._emitted_spaces
        if before is None:
            return False
        now = {k[0]: k[1:] for k in reading_key(voted)}
        return all(before.get(s) == k for s, k in now.items())

    def update(
        self,
        time_s: float,
        view: NDArray[np.uint8] | None,
        reading: Observation | None,
        white_bgr: NDArray[Any] | None = None,
        frame_view: NDArray[np.uint8] | None = None,
        pose: Any = None,
    ) -> GateDecision:
        """Judge one frame.

        :param time_s: the frame's timestamp in seconds (monotonic within a session).
        :param view: ``(h, w, 3) uint8 BGR`` top-down board view, or None when the board was not
            found in this frame.
        :param reading: the detector's Observation of this frame (None if it could not read it;
            with a ``view``, a refused reading: nothing is reported from this frame, but a
            still board stays still).
        :param white_bgr: white reference of the frame (for the skin test), optional.
        :param frame_view: ``(h, w) uint8`` grey thumbnail of the whole frame (the detector's
            ``frame_view``), optional; without it nothing entering the view is seen before it
            reaches the board.
        :param pose: the frame's board pose (the detector's ``BoardPose``: its
            ``camera_position_mm()``), optional; with the gate's ``geometry`` it places the
            castle's footprint in the view, so that a castle move is not taken for a hand.
        :returns: a :class:`GateDecision`; its ``observation`` is set at most once per still period.
        """
        cfg = self.config
        if self._last_time is not None and time_s < self._last_time:
            # a clock that runs backwards (replayed or restarted source): start afresh
            self.reset()
        self._last_time = time_s
        if view is None or view.ndim != 3 or view.shape[2] != 3:
            self._prev = None
            self._still_since = None
            self._quiet_since = None
            self._history.clear()
            self._prev_frame = None
            self._period_ended()
            return GateDecision(NO_BOARD, reason="board not found in this frame")
        entering = self._entering(frame_view)
        grey = self._grey(view)
        motion = (
            0.0
            if self._prev is None or self._prev.shape != grey.shape
            else self._cells(np.abs(grey - self._prev))
        )
        first = self._prev is None
        self._prev = grey
        if first or motion > cfg.motion_threshold:
            self._period_ended()
            self._still_since = None
            self._quiet_since = None
            self._history.clear()
            self._emitted_key = self._emitted_spaces = None
            why = "first frame" if first else f"board moving ({motion:.1f} grey levels)"
            return GateDecision(MOVING, reason=why, motion=motion)
        if entering > cfg.entry_threshold:
            self._quiet_since = time_s  # the whole view is not quiet: settling starts again
        if self._quiet_since is None:
            self._quiet_since = time_s
        hand, small = self._hand(view, grey, white_bgr)
        # a region larger than a stack that lies within the castle's footprint, old and new,
        # while the reading shows the castle moved: the castle's move, judged as a piece move
        castle_sized = bool(hand) and not small and self._castle_sized(reading, pose, view)
        small = small or castle_sized
        if hand and time_s - self._quiet_since >= cfg.settle_s - TIME_EPS:
            self._holding = grey  # a still period held back: remembered once motion ends it
        if hand and not small:
            self._still_since = None
            self._history.clear()
            self._emitted_key = self._emitted_spaces = None
            return GateDecision(HAND, reason=hand, motion=motion)
        if self._still_since is None:
            self._still_since = time_s
        if reading is None:
            # the board is in view but the detector refused its reading (light, glare, a
            # space it is unsure of): nothing is reported from this frame, and a still board
            # stays still (its readings so far still count)
            if hand:
                self._emitted_key = self._emitted_spaces = None
                return GateDecision(HAND, reason=hand, motion=motion)
            return GateDecision(SETTLING, reason="reading refused by the detector", motion=motion)
        self._history.append(reading)
        if hand:
            # no larger than a stack: a moved stack once it has stayed put, when the reading
            # shows a tower move that hides no tower; a hand that rests is never settled otherwise
            self._emitted_key = self._emitted_spaces = None
            if time_s - self._quiet_since < cfg.settle_s - TIME_EPS:
                return GateDecision(HAND, reason=hand, motion=motion)
            voted = self._vote()[0]
            why = _tower_moved(_towers(voted), self._emitted_towers)
            now, before = _castle(voted), self._emitted_castle
            castle_moved = now is not None and before is not None and now[0] != before[0]
            if why == NO_TOWER_MOVED and castle_moved:
                why = ""  # the castle moved (a spell, the raven): a piece move
            if not why and castle_sized and not castle_moved:
                why = "the castle did not move"
            if why:
                return GateDecision(HAND, reason=f"{hand} ({why})", motion=motion)
        voted, agreeing = self._vote()
        key = reading_key(voted)
        reading = voted
        if not agreeing:
            return GateDecision(SETTLING, reason="readings still changing", motion=motion)
        if time_s - self._still_since < cfg.still_s - TIME_EPS:
            return GateDecision(SETTLING, reason="waiting for a still board", motion=motion)
        if self._emitted_key == key or self._nothing_new(voted):
            return GateDecision(STABLE, reason="still; already reported", motion=motion)
        if entering > cfg.entry_threshold:
            # the board is still, but something comes in at the frame's edge (a hand reaching
            # in): emit nothing on this frame; the still period and its readings stay
            why = f"something enters the camera's view ({entering:.1f} grey levels at its edge)"
            return GateDecision(MOVING, reason=why, motion=motion)
        self._emitted_key = key
        self._emitted_spaces = {k[0]: k[1:] for k in key}
        self._emitted_towers = _towers(reading)
        self._emitted_castle = _castle(reading) or self._emitted_castle
        self._stable_view = grey
        self._stable_bgr = view
        self._held_view = self._holding = None
        obs = replace(reading, unstable=False)
        return GateDecision(STABLE, observation=obs, reason="still board", motion=motion)
