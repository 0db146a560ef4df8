"""Is this frame good enough to read? Image-quality checks that let the detector refuse a frame
with a reason a player can act on instead of emitting a board it is unsure of.

Every check is measured where the board is known to be (the pose of this frame, or of the
last frame where the markers were found):

* **light**: the grey level of the markers' white paper (the brightest surface of the board;
  when it is dim every piece is in the sensor's noise);
* **sharpness**: the edges of the markers' black and white cells. A step edge of contrast
  ``C`` blurred over ``w`` px shows a largest gradient of about ``C / w``: the edge width
  (``C`` / the 99th percentile of the gradient magnitude) is the blur in px, whatever the
  light (``marker_edge_px``);
* **glare**: clipped pixels (every channel at ``clip_level`` or above: a lamp's reflection is
  white; one clipped channel is only a saturated colour) are unknown, never "no wizard": the
  share of clipped pixels on each space's top surface;
* **camera moved**: the board's corners and a point above the board projected with this
  frame's pose against the pose the session was set up with.

:func:`space_ranges` writes space numbers the way a player reads them ("3–5, 9").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

TOO_DARK = "too dark: turn on a light over the table"
TOO_BRIGHT = "too bright: dim the light over the table or lower the camera's exposure"
OUT_OF_FOCUS = "out of focus: refocus the lens"
CAMERA_MOVED = "camera moved: re-checking the board"


@dataclass(frozen=True)
class QualityLimits:
    """When a frame is refused.

    :param dark_white: grey level (0..255) of the markers' white paper below which the frame is
        too dark to read.
    :param clip_level: a pixel with every channel at or above this is clipped (unknown).
    :param glare_share: share of clipped pixels on a space's top surface that makes the space
        unreadable.
    :param edge_px: marker edge width (px) above which the frame is out of focus.
    :param edge_growth: edge width, relative to the setup frame's, above which the frame is
        out of focus (the lens was sharp at setup; a bumped focus ring or a smeared lens blurs).
    :param moved_px: shift (px) of the projected board corners against the setup pose above
        which the camera has moved.
    :param settle_frames: frames that must agree on a new pose before it is taken as the
        camera's new place: two consecutive frames within ``moved_px`` of each other show a
        camera at rest (one swaying on its arm after a bump moves more than that between
        frames); the first frame at a new place is refused ("camera moved: re-checking the
        board"), the next one read.
    :param low_light: grey level of the markers' white below which still frames are averaged
        before reading (up to ``average_frames``).
    :param still_grey: largest difference (grey levels) between two frames' thumbnails for the
        board to count as still while averaging.
    :param bright_white: grey level of the markers' white paper at or above which the frame is
        at the top of the sensor's range: with more than ``bright_share`` of the spaces
        clipped as well, the whole frame is over-exposed (too much light, or the exposure
        went up), not lit by one lamp's reflection (glare is local).
    :param bright_share: share of the spaces clipped (``glare_share`` or more of their top)
        that, with the white paper at ``bright_white``, makes the frame over-exposed.
    :param wash_excess: how much lighter (fractions of the markers' white) a top's brightest
        tenth may be than the upper quartile of the tops of its kind in the same frame before
        the top counts as washed out by a lamp's reflection (glare, though no pixel is
        clipped; :mod:`companion.vision.detector.glare`). On rendered tables without glare
        99.5 % of the tops stay within 0.055 of it, the lightest 0.10 above it.
    """

    dark_white: float = 55.0
    clip_level: int = 250
    glare_share: float = 0.08
    edge_px: float = 4.0
    edge_growth: float = 1.8
    moved_px: float = 3.0
    settle_frames: int = 2
    low_light: float = 100.0
    average_frames: int = 4
    still_grey: float = 8.0
    bright_white: float = 240.0
    bright_share: float = 0.5
    wash_excess: float = 0.12


@dataclass(frozen=True)
class FrameQuality:
    """What the checks measured on one frame (for the host page and the bench).

    :param white_grey: grey level of the markers' white paper (0..255), None when unmeasured.
    :param edge_px: median marker edge width in px, None when no marker could be measured.
    :param marker_cell_px: median side of one marker cell in px (markers are 6x6 cells with
        the border), None without markers.
    :param glare: space -> share of clipped pixels on its top surface (only spaces with some;
        at least ``glare_share`` on a top a lamp's reflection washes out without clipping).
    :param moved_px: shift of the board against the setup pose in px (0 without a reference).
    """

    white_grey: float | None = None
    edge_px: float | None = None
    marker_cell_px: float | None = None
    glare: Mapping[int, float] | None = None
    moved_px: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "white_grey": None if self.white_grey is None else round(self.white_grey, 1),
            "edge_px": None if self.edge_px is None else round(self.edge_px, 2),
            "marker_cell_px": (
                None if self.marker_cell_px is None else round(self.marker_cell_px, 1)
            ),
            "glare": {str(k): round(v, 3) for k, v in (self.glare or {}).items()},
            "moved_px": round(self.moved_px, 2),
        }


MARKER_CELLS = 6
"""Cells along a marker's side: the 4x4 ArUco bits and the black border."""


def marker_edges(
    grey: NDArray[np.uint8], quads: Iterable[NDArray[np.floating]]
) -> tuple[float | None, float | None]:
    """Median edge width (px) and cell side (px) of the markers at ``quads``.

    :param grey: ``(H, W) uint8`` frame.
    :param quads: each marker's ``(4, 2)`` corners in px.
    :returns: ``(edge_px, cell_px)``, None for what could not be measured (no marker inside
        the frame, a flat patch).
    """
    h, w = grey.shape[:2]
    widths: list[float] = []
    cells: list[float] = []
    for quad in quads:
        q = np.asarray(quad, np.float64).reshape(4, 2)
        side = float(np.mean(np.hypot(*(q - np.roll(q, 1, axis=0)).T)))
        x0, y0 = np.floor(q.min(0)).astype(int) - 2
        x1, y1 = np.ceil(q.max(0)).astype(int) + 3
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h or side < 6:
            continue
        patch = grey[y0:y1, x0:x1].astype(np.float32)
        gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3) / 8.0
        gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3) / 8.0
        mag = np.hypot(gx, gy)
        lo, hi = np.percentile(patch, (5, 95))
        top = float(np.percentile(mag, 99))
        if hi - lo < 8 or top <= 0:
            continue
        widths.append(float(hi - lo) / top)
        cells.append(side / MARKER_CELLS)
    if not widths:
        return None, None
    return float(np.median(widths)), float(np.median(cells))


def clipped_mask(frame: NDArray[np.uint8], level: int) -> NDArray[np.bool_]:
    """``(H, W)`` pixels with every channel at or above ``level`` (over-exposed white: their
    colour is unknown)."""
    out: NDArray[np.bool_] = frame.min(axis=2) >= level
    return out


def pose_shift(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Largest distance in px between two projections of the same points."""
    return float(np.max(np.hypot(*(np.asarray(a) - np.asarray(b)).T))) if len(a) else 0.0


def space_ranges(spaces: Sequence[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3–5, 9"`` (the space numbers as a player reads them)."""
    s = sorted(set(int(x) for x in spaces))
    parts: list[str] = []
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        parts.append(str(s[i]) if j == i else f"{s[i]}–{s[j]}")
        i = j + 1
    return ", ".join(parts)


def over_exposed(q: FrameQuality, spaces: int, limits: QualityLimits | None = None) -> bool:
    """Whether a read frame is over-exposed as a whole (see ``QualityLimits.bright_white``):
    then its clipped spaces are refused as :data:`TOO_BRIGHT`, not as glare.

    :param q: the frame's quality, its ``glare`` filled in (space -> clipped share).
    :param spaces: how many spaces the board has.
    """
    lim = limits or QualityLimits()
    if q.white_grey is None or q.white_grey < lim.bright_white or spaces <= 0:
        return False
    lit = sum(1 for share in (q.glare or {}).values() if share >= lim.glare_share)
    return lit > lim.bright_share * spaces


def glare_message(spaces: Sequence[int]) -> str:
    """The refusal for clipped spaces: ``"glare on spaces 3–5: move the lamp"``."""
    word = "space" if len(spaces) == 1 else "spaces"
    return f"glare on {word} {space_ranges(spaces)}: move the lamp or dim it"


def setup_advice(q: FrameQuality, limits: QualityLimits | None = None) -> list[str]:
    """What the host should fix before the game, from a setup frame's quality (for the host
    page's calibration step): light, focus, glare, marker size (print larger markers below
    ~15 px per cell: the marker detector and the focus check need a few px per cell).

    :returns: one sentence per problem, empty when the frame is fine.
    """
    lim = limits or QualityLimits()
    out: list[str] = []
    if q.white_grey is not None and q.white_grey < lim.dark_white * 1.5:
        out.append(
            f"The board is dim (marker white at grey {q.white_grey:.0f} of 255): "
            "add light over the table."
        )
    if q.edge_px is not None and q.edge_px > lim.edge_px * 0.85:
        out.append(
            f"The image is soft (marker edges {q.edge_px:.1f} px wide): refocus the lens on "
            "the board."
        )
    if q.white_grey is not None and q.white_grey >= lim.bright_white:
        out.append(
            f"The board is very bright (marker white at grey {q.white_grey:.0f} of 255): dim "
            "the light or lower the camera's exposure, or the brightest pieces clip to white."
        )
    elif q.glare:
        out.append(
            f"Glare on spaces {space_ranges(list(q.glare))}: move the lamp to the side or "
            "higher up so that its reflection leaves the board."
        )
    if q.marker_cell_px is not None and q.marker_cell_px < 15.0:
        out.append(
            f"The markers are small in the image ({q.marker_cell_px:.0f} px per cell): "
            "print larger markers or lower the camera (about 15 px per cell or more)."
        )
    return out
