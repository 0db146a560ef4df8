"""Where a stack with the raven castle on top covers the stability gate's board view.

The gate's board view (``companion.vision.stability``) is the board plane warped top-down: the
board's ``board_size`` rectangle (mm) scaled to the view's pixels. A piece above the plane is
drawn where the camera's rays through it meet the plane, so a tall column leans away from the
camera, over the board's rim near its edge (docs/architecture.md, "A still board the gate holds
back"). :func:`castle_footprint` draws where the castle, with the towers carried under it, covers
the view, from the board geometry and the camera's position: the region a castle move may change
in the view.
"""

from __future__ import annotations

from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.geometry import BoardGeometry, GeometryError

RING = 24
"""Points on each circle of the column's outline."""


def castle_footprint(
    geometry: BoardGeometry,
    camera_mm: NDArray[Any],
    space: int,
    towers: int,
    shape: tuple[int, int],
    below: int = 0,
) -> NDArray[np.uint8] | None:
    """The board view's pixels (255) covered by the castle standing on ``towers`` towers on
    ``space`` and by those of the towers above the ``below`` lowest (the part of the column a
    castle move takes away or brings): the convex hull of that part's foot and of the castle's
    roof, each projected onto the board plane from the camera.

    :param camera_mm: the camera's centre ``(3,)`` in the board's OpenCV frame, mm (negative z
        above the board: ``BoardPose.camera_position_mm``).
    :param towers: the towers under the castle (0: it stands on the track).
    :param shape: ``(h, w)`` of the board view, px.
    :param below: the towers that stay (0..``towers``; 0: the whole column).
    :returns: ``(h, w) uint8``, or None when the space is off the track or the camera is not
        above the column's top.
    """
    h, w = shape
    try:
        centre = geometry.space_centre(space)
    except GeometryError:
        return None
    cam = np.asarray(camera_mm, np.float64).reshape(3)
    height = -float(cam[2])  # OpenCV's board frame: above the board is negative z
    top = geometry.tier_z(max(0, towers)) + geometry.castle.height
    if height <= top * 1.05:
        return None
    radius = max(geometry.castle.base_diameter, geometry.tower.base_diameter) / 2
    a = np.linspace(0.0, 2 * np.pi, RING, endpoint=False)
    ring = centre + radius * np.column_stack([np.cos(a), np.sin(a)])
    foot = geometry.tier_z(min(max(0, below), max(0, towers)))
    # a point at height z meets the board plane along the camera's ray through it
    pts = np.concatenate(
        [cam[:2] + (ring - cam[:2]) * (height / (height - z)) for z in (foot, top)]
    )
    bw, bh = geometry.board_size
    px = pts * np.array([w / bw, h / bh])
    hull = cv2.convexHull(np.round(px).astype(np.int32))
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, hull, 255)
    return cast("NDArray[np.uint8]", mask)
