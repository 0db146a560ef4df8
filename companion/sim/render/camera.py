"""Camera models, camera poses and the frame constants of the renderer."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry

FRAME_SIZE = (1536, 864)
"""Default frame size ``(w, h)`` px."""

TILT_RANGE = (0.0, 35.0)
"""Camera tilt from vertical, degrees."""

KELVIN_RANGE = (2700.0, 6500.0)
INTENSITY_RANGE = (0.3, 1.5)
JPEG_RANGE = (70, 95)

TEXTURE_PPM = 2.0
"""Board texture resolution, px per mm."""
TEXTURE_PAD = 30.0
"""Board texture margin around the board area, mm."""
TABLE_PPM = 0.5
ART_VARIANTS = 12
"""Number of table/track artwork variants (table kind, grain, print colours, texture noise);
each render picks one, so textures can be cached."""
TABLE_SIZE = 2400.0

WIZARD_HSV: Mapping[str, tuple[float, float, float]] = {
    "blue": (214.0, 0.78, 0.62),
    "yellow": (51.0, 0.86, 0.92),
    "red": (356.0, 0.82, 0.72),
    "green": (128.0, 0.72, 0.50),
    "orange": (25.0, 0.90, 0.93),
    "purple": (282.0, 0.55, 0.46),
}
"""Nominal hue (degrees), saturation and value of the painted wooden wizards; each render varies
them by a few degrees / percent (:func:`random_appearance`)."""


class RenderError(ValueError):
    """The state cannot be drawn (malformed state JSON, a piece above its stack, ...)."""


# --------------------------------------------------------------------------------------------
# camera, pose, light, appearance


def simulated_camera(size: tuple[int, int] = FRAME_SIZE) -> CameraModel:
    """The simulated table's camera: 62 degrees horizontal field of view, mild barrel distortion.

    Its camera file (:func:`write_camera_file`) is what a calibration of a real camera gives.
    """
    w, h = size
    f = w / 2 / math.tan(math.radians(62.0) / 2)
    k = np.array(
        [[f, 0.0, w / 2 - 0.5 + 0.004 * w], [0.0, f, h / 2 - 0.5 - 0.003 * h], [0.0, 0.0, 1.0]]
    )
    return CameraModel(
        k,
        np.array([-0.045, 0.012, 0.0004, -0.0003, 0.0]),
        (w, h),
        info="simulated table camera (companion.sim.render)",
    )


def random_camera(rng: np.random.Generator, size: tuple[int, int] = FRAME_SIZE) -> CameraModel:
    """A plausible webcam/Pi camera: 55-72 degrees horizontal FOV, principal point within 2 %
    of the centre, mild distortion (k1 -0.10..0.04, k2 -0.02..0.03, tangential < 0.001)."""
    w, h = size
    f = w / 2 / math.tan(math.radians(rng.uniform(55.0, 72.0)) / 2)
    fy = f * rng.uniform(0.995, 1.005)
    cx = w / 2 - 0.5 + rng.uniform(-0.02, 0.02) * w
    cy = h / 2 - 0.5 + rng.uniform(-0.02, 0.02) * h
    dist = np.array(
        [
            rng.uniform(-0.10, 0.04),
            rng.uniform(-0.02, 0.03),
            rng.uniform(-0.001, 0.001),
            rng.uniform(-0.001, 0.001),
            0.0,
        ]
    )
    return CameraModel(
        np.array([[f, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]]),
        dist,
        (w, h),
        info="random simulated camera (companion.sim.render)",
    )


def write_camera_file(path: str | Path, camera: CameraModel | None = None) -> Path:
    """Write the camera file of the simulated camera (OpenCV YAML, or JSON for ``.json``), the
    same format :meth:`companion.vision.camera.CameraModel.load` reads for a real camera.

    :returns: the path written. :raises CameraFileError: when it cannot be written.
    """
    return (camera if camera is not None else simulated_camera()).save(path)


@dataclass(frozen=True)
class CameraPose:
    """Where the camera is: OpenCV ``rvec``, ``tvec`` (right-handed board frame -> camera) and
    the parameters it was built from.

    :param tilt_deg: angle between the optical axis and the vertical, degrees.
    :param azimuth_deg: side of the board the camera leans from (direction target -> camera in
        the board plane, degrees from +x towards +y).
    :param roll_deg: rotation about the optical axis, degrees.
    :param distance_mm: camera centre to the target point, mm.
    :param target_mm: ``(x, y)`` board point on the optical axis, mm.
    """

    rvec: np.ndarray
    tvec: np.ndarray
    tilt_deg: float
    azimuth_deg: float
    roll_deg: float
    distance_mm: float
    target_mm: tuple[float, float]

    @property
    def rotation(self) -> np.ndarray:
        """``(3, 3)`` rotation board (OpenCV frame) -> camera."""
        r, _ = cv2.Rodrigues(self.rvec)
        return np.asarray(r, dtype=np.float64)

    @property
    def centre(self) -> np.ndarray:
        """Camera centre in the OpenCV board frame, ``(3,)`` mm (negative z = above)."""
        return np.asarray(-self.rotation.T @ self.tvec, dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        return {
            "rvec": [float(x) for x in self.rvec],
            "tvec": [float(x) for x in self.tvec],
            "tilt_deg": self.tilt_deg,
            "azimuth_deg": self.azimuth_deg,
            "roll_deg": self.roll_deg,
            "distance_mm": self.distance_mm,
            "target_mm": list(self.target_mm),
        }


def look_at(
    target_mm: Sequence[float],
    tilt_deg: float,
    azimuth_deg: float,
    roll_deg: float,
    distance_mm: float,
) -> CameraPose:
    """The camera pose looking at a board point from a tilt/azimuth/roll/distance.

    With tilt 0 and azimuth 90 the image shows the board upright (board x right, y down).
    :raises ValueError: on a non-positive distance or a tilt outside 0..89 degrees.
    """
    if distance_mm <= 0 or not 0.0 <= tilt_deg < 89.0:
        raise ValueError("pose: need distance > 0 mm and tilt in 0..89 degrees")
    th, az, ro = (math.radians(v) for v in (tilt_deg, azimuth_deg, roll_deg))
    tx, ty = float(target_mm[0]), float(target_mm[1])
    h = np.array([math.cos(az), math.sin(az), 0.0])
    c = np.array(
        [
            tx + distance_mm * math.sin(th) * h[0],
            ty + distance_mm * math.sin(th) * h[1],
            -distance_mm * math.cos(th),
        ]
    )
    z = np.array([tx, ty, 0.0]) - c
    z /= np.linalg.norm(z)
    y = h - (h @ z) * z
    y /= np.linalg.norm(y)
    x = np.cross(y, z)
    xr = math.cos(ro) * x + math.sin(ro) * y
    yr = -math.sin(ro) * x + math.cos(ro) * y
    rot = np.stack([xr, yr, z])
    rvec, _ = cv2.Rodrigues(rot)
    return CameraPose(
        rvec.reshape(3),
        -rot @ c,
        float(tilt_deg),
        float(azimuth_deg),
        float(roll_deg),
        float(distance_mm),
        (tx, ty),
    )


def _project(pts_cv: np.ndarray, pose: CameraPose, camera: CameraModel) -> np.ndarray:
    p, _ = cv2.projectPoints(
        np.ascontiguousarray(pts_cv, dtype=np.float64).reshape(-1, 1, 3),
        pose.rvec,
        pose.tvec,
        camera.K,
        camera.dist,
    )
    return np.asarray(p.reshape(-1, 2), dtype=np.float64)


def _fit_points(geometry: BoardGeometry, max_height_mm: float) -> np.ndarray:
    w, h = geometry.board_size
    corners = np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])
    edge = geometry.loop_edge(+1, 32)
    top = np.concatenate([edge, np.full((len(edge), 1), -max_height_mm)], axis=1)
    flat = np.concatenate([corners, np.zeros((4, 1))], axis=1)
    return np.concatenate([flat, top])


def fit_pose(
    geometry: BoardGeometry,
    camera: CameraModel,
    target_mm: Sequence[float],
    tilt_deg: float,
    azimuth_deg: float,
    roll_deg: float,
    margin_px: float = 24.0,
    max_height_mm: float = 300.0,
) -> CameraPose:
    """The nearest pose (for these angles) that keeps the whole board, its markers and stacks
    up to ``max_height_mm`` inside the frame with ``margin_px`` to spare."""
    pts = _fit_points(geometry, max_height_mm)
    w, h = camera.size
    lo, hi = 250.0, 6000.0
    for _ in range(16):
        mid = 0.5 * (lo + hi)
        pose = look_at(target_mm, tilt_deg, azimuth_deg, roll_deg, mid)
        ok = _inside(pts, pose, camera, w, h, margin_px)
        lo, hi = (lo, mid) if ok else (mid, hi)
    return look_at(target_mm, tilt_deg, azimuth_deg, roll_deg, hi)


def _inside(
    pts: np.ndarray, pose: CameraPose, camera: CameraModel, w: int, h: int, margin: float
) -> bool:
    cam = (pose.rotation @ pts.T).T + pose.tvec
    if np.any(cam[:, 2] <= 50.0):
        return False
    p = _project(pts, pose, camera)
    return bool(
        np.all(
            (p[:, 0] >= margin)
            & (p[:, 0] <= w - 1 - margin)
            & (p[:, 1] >= margin)
            & (p[:, 1] <= h - 1 - margin)
        )
    )


def random_pose(
    rng: np.random.Generator,
    geometry: BoardGeometry,
    camera: CameraModel,
    tilt_range: tuple[float, float] = TILT_RANGE,
    max_height_mm: float | None = None,
    fill: tuple[float, float] | None = None,
) -> CameraPose:
    """A camera over the table: tilt uniform in ``tilt_range`` (degrees from vertical), leaning
    from one of the four board sides (+-15 degrees), roll +-8 degrees, aim within +-30 mm of the
    board centre, at 1.0-1.15x the nearest distance that keeps the board and its markers in view
    with the loop's outer edge raised to ``max_height_mm`` (default: 3 towers and a wizard).

    With ``fill = (lo, hi)`` the distance instead makes the board span a share of the frame
    drawn uniformly from ``lo..hi`` (:func:`fill_pose`; never nearer than the nearest distance
    above, so a fill the frame cannot hold comes out smaller). The same random draws are made
    either way."""
    if max_height_mm is None:
        max_height_mm = 3 * geometry.tower.height + geometry.wizard.height
    w, h = geometry.board_size
    target = (w / 2 + rng.uniform(-30, 30), h / 2 + rng.uniform(-30, 30))
    tilt = float(rng.uniform(*tilt_range))
    az = float(90.0 * rng.integers(0, 4) + rng.uniform(-15.0, 15.0))
    roll = float(rng.uniform(-8.0, 8.0))
    if fill is not None:
        share = float(rng.uniform(*fill))
        return fill_pose(geometry, camera, target, tilt, az, roll, share, max_height_mm)
    near = fit_pose(geometry, camera, target, tilt, az, roll, max_height_mm=max_height_mm)
    return look_at(target, tilt, az, roll, near.distance_mm * float(rng.uniform(1.0, 1.15)))


def board_fill(geometry: BoardGeometry, camera: CameraModel, pose: CameraPose) -> float:
    """How much of the frame the board spans: the larger of its projected bounding box's width
    and height as a share of the frame's width and height (0..1+; 1 = edge to edge)."""
    w, h = geometry.board_size
    outline = np.array([[0.0, 0.0, 0.0], [w, 0.0, 0.0], [w, h, 0.0], [0.0, h, 0.0]])
    p = _project(outline, pose, camera)
    span = p.max(axis=0) - p.min(axis=0)
    fw, fh = camera.size
    return float(max(span[0] / fw, span[1] / fh))


def fill_pose(
    geometry: BoardGeometry,
    camera: CameraModel,
    target_mm: Sequence[float],
    tilt_deg: float,
    azimuth_deg: float,
    roll_deg: float,
    fill: float,
    max_height_mm: float = 300.0,
) -> CameraPose:
    """The pose (for these angles) at which the board spans ``fill`` of the frame
    (:func:`board_fill`), but never nearer than :func:`fit_pose` allows (the whole board, its
    markers and stacks up to ``max_height_mm`` stay in view).

    :raises ValueError: when ``fill`` is not in (0, 1].
    """
    if not 0.0 < fill <= 1.0:
        raise ValueError(f"board fill must be in (0, 1], got {fill}")
    near = fit_pose(
        geometry, camera, target_mm, tilt_deg, azimuth_deg, roll_deg, max_height_mm=max_height_mm
    )
    lo, hi = near.distance_mm, 20000.0
    for _ in range(24):
        mid = 0.5 * (lo + hi)
        pose = look_at(target_mm, tilt_deg, azimuth_deg, roll_deg, mid)
        lo, hi = (mid, hi) if board_fill(geometry, camera, pose) > fill else (lo, mid)
    return look_at(target_mm, tilt_deg, azimuth_deg, roll_deg, lo)


def bump_pose(pose: CameraPose, degrees: float, rng: np.random.Generator) -> CameraPose:
    """The camera knocked after setup: ``pose`` turned by ``degrees`` about a random axis
    through the camera centre, perpendicular to the optical axis (the mount tilts; the camera
    does not move). An image point near the principal point moves by about
    ``f * tan(degrees)`` px; ``tilt_deg``, ``azimuth_deg`` and ``roll_deg`` keep the values of
    the setup (the intended pose).

    :raises ValueError: on a negative or non-finite angle.
    """
    if not math.isfinite(degrees) or degrees < 0:
        raise ValueError(f"bump angle must be >= 0 degrees, got {degrees}")
    a = float(rng.uniform(0.0, 2 * math.pi))
    axis_cam = np.array([math.cos(a), math.sin(a), 0.0]) * math.radians(degrees)
    turn, _ = cv2.Rodrigues(axis_cam)
    rot = np.asarray(turn, dtype=np.float64) @ pose.rotation
    centre = pose.centre
    rvec, _ = cv2.Rodrigues(rot)
    return CameraPose(
        rvec.reshape(3),
        -rot @ centre,
        pose.tilt_deg,
        pose.azimuth_deg,
        pose.roll_deg,
        pose.distance_mm,
        pose.target_mm,
    )
