"""The host page's camera check at setup: the frame with the reading drawn on it and what to fix.

:func:`setup_check` takes one frame and the detector's answer for it
(:class:`~companion.vision.detector.Detection`) and returns a PNG of the frame with the
markers (and their size in px per cell), each space's reading and the spaces with glare drawn
on it, plus sentences telling the host what to fix before the game: light, focus, the lamp's
reflection, the camera's height (the board should fill most of the frame and the markers show
about 15 px per cell or more: print larger markers otherwise). See
:mod:`companion.vision.quality` for the measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.detector import Detection
from companion.vision.geometry import BoardGeometry
from companion.vision.quality import QualityLimits, setup_advice

CHECK_WIDTH = 1024
"""Width of the check image, px (a phone shows no more; the PNG stays small)."""
BOARD_FILL_MIN = 0.5
"""Least share of the frame's width the board should fill (else the camera is too high)."""


@dataclass(frozen=True)
class SetupCheck:
    """The camera check of one frame.

    :param png: the frame with the reading drawn on it, PNG bytes (``CHECK_WIDTH`` px wide).
    :param advice: what to fix, one sentence each; empty when nothing needs fixing.
    :param figures: what was measured (``white_grey``, ``edge_px``, ``marker_cell_px``,
        ``glare``, ``moved_px``, ``board_fill``), JSON-ready.
    :param status: the detector's status for the frame; :param message: its reason.
    """

    png: bytes
    advice: list[str]
    figures: dict[str, object] = field(default_factory=dict)
    status: str = ""
    message: str = ""


def _board_fill(det: Detection, geometry: BoardGeometry, width: int) -> float | None:
    """Share of the frame's width the board's outline spans, None without a pose."""
    if det.pose is None:
        return None
    px = det.pose.board_to_image(np.asarray(geometry.board_outline(), np.float64))
    return float((px[:, 0].max() - px[:, 0].min()) / max(width, 1))


def setup_check(
    frame: NDArray[np.uint8],
    det: Detection,
    geometry: BoardGeometry,
    limits: QualityLimits | None = None,
) -> SetupCheck:
    """Check a setup frame for the host.

    :param frame: ``(H, W, 3) uint8 BGR`` of the board as the camera sees it.
    :param det: the detector's answer for ``frame``.
    :param geometry: the board geometry (space centres, the board's outline).
    :param limits: the detector's refusal limits (advice is given a little before them).
    :raises ValueError: when ``frame`` is not an ``(H, W, 3) uint8`` image.
    """
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3:
        raise ValueError("frame: expected an (H, W, 3) uint8 BGR image")
    h, w = frame.shape[:2]
    canvas = frame.copy()
    advice: list[str] = []
    q = det.quality
    if det.pose is None:
        advice.append(
            "The board's four markers are not all in view: aim the camera so that the whole "
            f"board is in the frame ({det.message})."
        )
    if q is not None:
        advice += setup_advice(q, limits)
    fill = _board_fill(det, geometry, w)
    if fill is not None and fill < BOARD_FILL_MIN:
        advice.append(
            f"The board fills only {fill:.0%} of the frame's width: lower the camera "
            "(or zoom in) so that the board fills most of the frame."
        )
    pose = det.pose
    glare = dict(q.glare or {}) if q is not None else {}
    cell = q.marker_cell_px if q is not None else None
    if pose is not None:
        for quad in pose.marker_corners_px.values():
            pts = np.asarray(quad, np.float64).reshape(-1, 2)
            colour = (0, 200, 255) if cell is not None and cell < 15 else (0, 220, 0)
            cv2.polylines(canvas, [np.round(pts).astype(np.int32)], True, colour, 2, cv2.LINE_AA)
            if cell is not None:
                x, y = pts.min(axis=0)
                cv2.putText(
                    canvas,
                    f"{cell:.0f} px/cell",
                    (int(x), max(int(y) - 6, 12)),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    0.6,
                    colour,
                    2,
                    cv2.LINE_AA,
                )
        obs = det.observation or det.unsure_reading
        centres = np.asarray(geometry.space_centres(), np.float64)
        for space, (x, y) in zip(geometry.spaces, pose.board_to_image(centres), strict=True):
            s = obs.spaces.get(space) if obs is not None else None
            text = (
                f"{space}:?"
                if s is None
                else f"{space}:{s.towers}{s.top[0]} "
                + "".join(c[0] * n for c, n in s.wizards.items())
            )
            bad = glare.get(space, 0.0) >= (limits or QualityLimits()).glare_share
            if bad:
                cv2.circle(canvas, (int(x), int(y)), 28, (0, 0, 255), 3, cv2.LINE_AA)
            cv2.putText(
                canvas,
                text,
                (int(x) - 20, int(y)),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.55,
                (0, 0, 255) if bad else (255, 255, 255),
                2,
                cv2.LINE_AA,
            )
    head = f"{det.status}: {det.message}" if det.message else det.status
    cv2.putText(
        canvas, head[:90], (16, 36), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (40, 40, 230), 2, cv2.LINE_AA
    )
    scale = CHECK_WIDTH / w
    if scale < 1.0:
        canvas = np.asarray(
            cv2.resize(
                canvas, (CHECK_WIDTH, max(1, round(h * scale))), interpolation=cv2.INTER_AREA
            ),
            np.uint8,
        )
    ok, buf = cv2.imencode(".png", canvas, [cv2.IMWRITE_PNG_COMPRESSION, 3])
    if not ok:
        raise ValueError("the check image could not be encoded")
    figures: dict[str, object] = dict(q.to_json()) if q is not None else {}
    figures["board_fill"] = None if fill is None else round(fill, 3)
    return SetupCheck(buf.tobytes(), advice, figures, det.status, det.message)
