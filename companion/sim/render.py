"""The table renderer: a camera frame of any game state, with ground truth beside it.

No photos of *The Wandering Towers* exist that the project can use, so development, tests,
benchmarks and the laptop demo's simulated table draw their own camera frames. A frame is a
perspective image of the board (:mod:`companion.vision.geometry`) seen by a pinhole camera with
mild lens distortion (OpenCV's model), tilted 0-35 degrees from vertical, from any side, at any
roll; lit by a light of 2700-6500 K at 0.3-1.5x intensity with soft shadows; with sensor
noise, blur and JPEG compression; and sometimes a hand and arm over the board.

Content: the track tiles (texture, crest marks, setup marks, fountain/web inserts), tapered
crenellated towers in 3-D (meshes projected with :func:`cv2.projectPoints`, painter's algorithm
by depth, Lambert shading) with crest / plain / magic roofs, stacks up to 10 high, wizards in the
six colours (hue, saturation and value varied per render), the black raven castle, the witch and
raven tokens, and the four ArUco markers (``cv2.aruco.generateImageMarker``).

Use::

    table = random_setup(rng)                      # camera, pose, light, look: one session
    res = render(state, rng, setup=table)          # res.frame (H, W, 3) uint8 BGR, res.observation
    render_hand_sequence(state, rng, setup=table)  # a hand passes over a still board
    render_move_sequence(before, after, rng, setup=table)  # a move made under a hand
    write_camera_file("sim.yml", table.camera)     # what a calibration would give the detector

``state`` is a :class:`~companion.rules.model.GameState` or the state JSON of state-model.md.
Everything random comes from the ``numpy.random.Generator`` passed in: the same seed gives the
same frame; within a session a still board draws the same pieces frame after frame (only noise
and a little exposure flicker change). ``python -m companion.sim.render sample|time`` writes
example frames or measures the time per frame.

The detector may use the frame and the camera file (:func:`write_camera_file`), as a
calibrated real camera would give; everything else in :class:`RenderResult` is ground truth for
tests and benchmarks only.

Coordinates: board mm as in :mod:`companion.vision.geometry` (x right, y down, z up). Camera
poses are OpenCV's (``rvec``, ``tvec`` map the right-handed board frame, where above the board is
negative z, into the camera frame).
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.rules import observe
from companion.rules.model import GameState
from companion.rules.observation import COLOURS, Observation
from companion.rules.serialize import dump_state, load_state
from companion.sim.render_textures import (
    BoardArt,
    board_texture,
    hsv_colour,
    random_board_art,
    raven_shape,
    star_polygon,
    table_texture,
)
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry, TowerShape

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
) -> CameraPose:
    """A camera over the table: tilt uniform in ``tilt_range`` (degrees from vertical), leaning
    from one of the four board sides (+-15 degrees), roll +-8 degrees, aim within +-30 mm of the
    board centre, at 1.0-1.15x the nearest distance that keeps the board and its markers in view
    with the loop's outer edge raised to ``max_height_mm`` (default: 3 towers and a wizard)."""
    if max_height_mm is None:
        max_height_mm = 3 * geometry.tower.height + geometry.wizard.height
    w, h = geometry.board_size
    target = (w / 2 + rng.uniform(-30, 30), h / 2 + rng.uniform(-30, 30))
    tilt = float(rng.uniform(*tilt_range))
    az = float(90.0 * rng.integers(0, 4) + rng.uniform(-15.0, 15.0))
    roll = float(rng.uniform(-8.0, 8.0))
    near = fit_pose(geometry, camera, target, tilt, az, roll, max_height_mm=max_height_mm)
    return look_at(target, tilt, az, roll, near.distance_mm * float(rng.uniform(1.0, 1.15)))


def kelvin_to_bgr(kelvin: float) -> np.ndarray:
    """Colour of a black body at ``kelvin`` as BGR gains with green = 1 (Tanner Helland's fit of
    the CIE 1964 black-body colours, 1000-40000 K)."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = (
        99.4708025861 * math.log(t) - 161.1195681661
        if t <= 66
        else 288.1221695283 * (t - 60) ** -0.0755148492
    )
    if t >= 66:
        b = 255.0
    elif t <= 19:
        b = 0.0
    else:
        b = 138.5177312231 * math.log(t - 10) - 305.0447927307
    rgb = np.clip(np.array([r, g, b]), 1.0, 255.0)
    return np.asarray(rgb[::-1] / rgb[1], dtype=np.float64)


@dataclass(frozen=True)
class Lighting:
    """Room light of a render.

    :param kelvin: colour temperature, K (2700 warm bulb .. 6500 daylight).
    :param intensity: exposure relative to a well-lit table (0.3 .. 1.5).
    :param direction: unit vector towards the main light, board frame with z up.
    :param ambient: share of light from everywhere (0..1); the rest comes from ``direction``.
    :param awb: how much the camera's white balance corrects the colour cast (0 none, 1 all).
    :param shadow: darkness of cast shadows on the table (0 none .. 1 black).
    :param softness_mm: blur of the shadow edges, mm.
    :param vignette: brightness loss in the frame corners (0..1).
    """

    kelvin: float
    intensity: float
    direction: tuple[float, float, float]
    ambient: float
    awb: float
    shadow: float
    softness_mm: float
    vignette: float

    def gains(self) -> np.ndarray:
        """BGR gains of the residual colour cast after white balance, times the intensity."""
        cast = kelvin_to_bgr(self.kelvin) / kelvin_to_bgr(5500.0)
        return np.asarray(cast ** (1.0 - self.awb) * self.intensity, dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        return {
            "kelvin": self.kelvin,
            "intensity": self.intensity,
            "direction": list(self.direction),
            "ambient": self.ambient,
            "awb": self.awb,
            "shadow": self.shadow,
            "softness_mm": self.softness_mm,
            "vignette": self.vignette,
        }


def random_lighting(
    rng: np.random.Generator,
    kelvin_range: tuple[float, float] = KELVIN_RANGE,
    intensity_range: tuple[float, float] = INTENSITY_RANGE,
) -> Lighting:
    """Indoor light: one main light 45-85 degrees high from any side, ambient 35-60 %."""
    el = math.radians(rng.uniform(45.0, 85.0))
    az = rng.uniform(0.0, 2 * math.pi)
    d = (math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el))
    return Lighting(
        kelvin=float(rng.uniform(*kelvin_range)),
        intensity=float(rng.uniform(*intensity_range)),
        direction=d,
        ambient=float(rng.uniform(0.35, 0.6)),
        awb=float(rng.uniform(0.2, 0.8)),
        shadow=float(rng.uniform(0.25, 0.55)),
        softness_mm=float(rng.uniform(2.0, 9.0)),
        vignette=float(rng.uniform(0.0, 0.3)),
    )


@dataclass(frozen=True)
class Appearance:
    """How the pieces and the table look in one render (colours BGR 0..255, sizes as factors).

    Drawn once per session by :func:`random_appearance`; the same physical set keeps it."""

    art: BoardArt
    art_seed: int
    wizard: Mapping[str, np.ndarray]
    stone: np.ndarray
    roof: np.ndarray
    crest_disc: np.ndarray
    raven_ink: np.ndarray
    magic_wall: np.ndarray
    magic_roof: np.ndarray
    star: np.ndarray
    castle: np.ndarray
    witch: np.ndarray
    witch_hat: np.ndarray
    raven_token: np.ndarray
    tower_scale: float
    wizard_scale: float
    stone_jitter: float
    layout_seed: int = 0
    wizard_gloss: float = 0.2


def random_appearance(rng: np.random.Generator) -> Appearance:
    """Colours of this copy of the game under neutral light, varied within plausible ranges:
    wizard hue +-6 degrees, saturation and value +-8 %; sizes +-2 % (towers), +-5 % (wizards)."""
    wiz = {}
    for c in COLOURS:
        h, s, v = WIZARD_HSV[c]
        wiz[c] = hsv_colour(
            h + rng.uniform(-6, 6),
            float(np.clip(s + rng.uniform(-0.08, 0.08), 0.2, 1.0)),
            float(np.clip(v + rng.uniform(-0.08, 0.08), 0.2, 1.0)),
        )
    stone_h = rng.uniform(28, 48)
    art_variant = int(rng.integers(ART_VARIANTS))
    return Appearance(
        art=random_board_art(np.random.default_rng([art_variant, 0])),
        art_seed=art_variant,
        wizard=wiz,
        stone=hsv_colour(stone_h, rng.uniform(0.06, 0.2), rng.uniform(0.55, 0.72)),
        roof=hsv_colour(
            stone_h + rng.uniform(-8, 8), rng.uniform(0.08, 0.22), rng.uniform(0.62, 0.8)
        ),
        crest_disc=hsv_colour(rng.uniform(38, 50), rng.uniform(0.3, 0.5), rng.uniform(0.75, 0.9)),
        raven_ink=hsv_colour(
            rng.uniform(200, 260), rng.uniform(0.05, 0.2), rng.uniform(0.08, 0.15)
        ),
        magic_wall=hsv_colour(
            rng.uniform(240, 265), rng.uniform(0.22, 0.38), rng.uniform(0.55, 0.7)
        ),
        magic_roof=hsv_colour(
            rng.uniform(225, 250), rng.uniform(0.45, 0.65), rng.uniform(0.45, 0.6)
        ),
        star=hsv_colour(rng.uniform(44, 52), rng.uniform(0.55, 0.75), rng.uniform(0.85, 0.97)),
        castle=hsv_colour(rng.uniform(210, 250), rng.uniform(0.05, 0.2), rng.uniform(0.1, 0.17)),
        witch=hsv_colour(rng.uniform(95, 125), rng.uniform(0.35, 0.55), rng.uniform(0.45, 0.6)),
        witch_hat=hsv_colour(rng.uniform(250, 290), rng.uniform(0.2, 0.4), rng.uniform(0.1, 0.2)),
        raven_token=hsv_colour(rng.uniform(30, 60), rng.uniform(0.03, 0.1), rng.uniform(0.8, 0.92)),
        tower_scale=float(rng.uniform(0.98, 1.02)),
        wizard_scale=float(rng.uniform(0.95, 1.05)),
        stone_jitter=float(rng.uniform(0.02, 0.05)),
        layout_seed=int(rng.integers(2**31)),
        wizard_gloss=float(rng.uniform(0.05, 0.35)),
    )


@dataclass
class TableSetup:
    """Everything fixed while a session runs: camera, its pose and focus, the room light, the
    sensor gain and JPEG setting, the look of the game. Frames of one setup differ only by the
    state, hands, sensor noise and a little exposure flicker.

    :param blur_px: defocus blur of the lens, Gaussian sigma in px (0 = sharp; < 0.3 skipped).
    :param noise: sensor noise, standard deviation in DN at this light.
    :param jpeg_quality: the camera's JPEG quality (70..95).
    """

    geometry: BoardGeometry
    camera: CameraModel
    pose: CameraPose
    lighting: Lighting
    appearance: Appearance
    blur_px: float = 0.5
    noise: float = 2.0
    jpeg_quality: int = 85
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "camera": self.camera.to_dict(),
            "pose": self.pose.to_json(),
            "lighting": self.lighting.to_json(),
            "blur_px": self.blur_px,
            "noise": self.noise,
            "jpeg_quality": self.jpeg_quality,
        }


def random_setup(
    rng: np.random.Generator,
    geometry: BoardGeometry | None = None,
    *,
    size: tuple[int, int] = FRAME_SIZE,
    camera: CameraModel | None = None,
    tilt_range: tuple[float, float] = TILT_RANGE,
    kelvin_range: tuple[float, float] = KELVIN_RANGE,
    intensity_range: tuple[float, float] = INTENSITY_RANGE,
) -> TableSetup:
    """A random session: the simulated camera (or ``camera``), a random pose, light and look."""
    g = geometry if geometry is not None else BoardGeometry.default()
    cam = camera if camera is not None else simulated_camera(size)
    pose = random_pose(rng, g, cam, tilt_range)
    light = random_lighting(rng, kelvin_range, intensity_range)
    look = random_appearance(rng)
    blur = float(rng.uniform(0.0, 1.1))
    noise = float(rng.uniform(1.0, 3.5)) / max(light.intensity, 0.3) ** 0.5
    quality = int(rng.integers(JPEG_RANGE[0], JPEG_RANGE[1] + 1))
    return TableSetup(g, cam, pose, light, look, blur, noise, quality)


# --------------------------------------------------------------------------------------------
# the state


@dataclass(frozen=True)
class _Board:
    stacks: dict[int, list[str]]
    kinds: dict[str, str]
    wizards: list[tuple[str, str, int, int]]  # id, colour, space, tier
    castle: tuple[int, int] | None
    witch: tuple[int, int] | None
    raven: tuple[int, int] | None


def _as_state(state: GameState | Mapping[str, Any]) -> GameState:
    if isinstance(state, GameState):
        return state
    if not isinstance(state, Mapping):
        raise RenderError("state: expected a GameState or the state JSON object")
    try:
        return load_state(state)
    except ValueError as exc:
        raise RenderError(f"state: {exc}") from None


def _board_of(data: Mapping[str, Any]) -> _Board:
    stacks = {int(s): list(t) for s, t in (data.get("stacks") or {}).items()}
    kinds = {str(t): str(v.get("kind", "plain")) for t, v in (data.get("towers") or {}).items()}
    wizards = []
    for wid, pos in (data.get("wizards") or {}).items():
        if pos == "castle" or pos is None:
            continue
        colour = str(wid).rsplit("-", 1)[0]
        wizards.append((str(wid), colour, int(pos["space"]), int(pos["tier"])))

    def _pos(v: Any) -> tuple[int, int] | None:
        return None if not v or v == "castle" else (int(v["space"]), int(v["tier"]))

    return _Board(
        stacks,
        kinds,
        wizards,
        _pos(data.get("castle")),
        _pos(data.get("witch")),
        _pos(data.get("raven")),
    )


# --------------------------------------------------------------------------------------------
# meshes and the painter


_UP = np.array([0.0, 0.0, -1.0])  # "up" in the OpenCV board frame


class _Faces:
    """Polygons to paint, in batches of equal vertex count."""

    def __init__(self) -> None:
        self.batches: list[
            tuple[np.ndarray, np.ndarray, np.ndarray, int, int, bool, bool, float]
        ] = []

    def add(
        self,
        verts: np.ndarray,
        colours: np.ndarray,
        normals: np.ndarray,
        group: int,
        layer: int,
        convex: bool = True,
        cull: bool = True,
        gloss: float = 0.0,
    ) -> None:
        """``verts (F, k, 3)`` OpenCV board frame, ``colours (F, 3)``, ``normals (F, 3)``;
        ``gloss`` = strength of the specular highlight (0 matte .. 1 polished)."""
        f = verts.shape[0]
        self.batches.append(
            (
                verts,
                np.broadcast_to(colours, (f, 3)),
                np.broadcast_to(normals, (f, 3)),
                group,
                layer,
                convex,
                cull,
                gloss,
            )
        )


def _lathe(
    cx: float, cy: float, z0: float, profile: Sequence[tuple[float, float]], segs: int, phase: float
) -> tuple[np.ndarray, np.ndarray]:
    """Quads of a surface of revolution: ``profile`` = (radius, height above z0) bottom -> top.
    Returns ``(F, 4, 3)`` vertices in the OpenCV frame and ``(F, 3)`` outward normals."""
    prof = np.asarray(profile, dtype=np.float64)
    a = phase + np.arange(segs + 1) * 2 * math.pi / segs
    ca, sa = np.cos(a), np.sin(a)
    r, hgt = prof[:, 0], prof[:, 1]
    ring = np.stack(
        [
            cx + r[:, None] * ca[None],
            cy + r[:, None] * sa[None],
            np.broadcast_to(-(z0 + hgt)[:, None], (len(r), segs + 1)),
        ],
        axis=-1,
    )
    q = np.stack([ring[:-1, :-1], ring[:-1, 1:], ring[1:, 1:], ring[1:, :-1]], axis=2)
    am = phase + (np.arange(segs) + 0.5) * 2 * math.pi / segs
    dh = np.diff(hgt)
    dr = -np.diff(r)
    n = np.stack(
        [
            np.cos(am)[None] * dh[:, None],
            np.sin(am)[None] * dh[:, None],
            -np.broadcast_to(dr[:, None], (len(dh), segs)),
        ],
        axis=-1,
    )
    n /= np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-9)
    return q.reshape(-1, 4, 3), n.reshape(-1, 3)


def _disc(cx: float, cy: float, z: float, r: float, segs: int, phase: float = 0.0) -> np.ndarray:
    a = phase + np.arange(segs) * 2 * math.pi / segs
    return np.stack([cx + r * np.cos(a), cy + r * np.sin(a), np.full(segs, -z)], axis=-1)


def _flat(shape2d: np.ndarray, z: float) -> np.ndarray:
    return np.concatenate([shape2d, np.full((len(shape2d), 1), -z)], axis=1)


def _tower_faces(
    faces: _Faces,
    shape: TowerShape,
    cx: float,
    cy: float,
    z0: float,
    colour: np.ndarray,
    group: int,
    layer: int,
    rng: np.random.Generator,
    jitter: float,
    window: bool,
    ink: np.ndarray,
) -> None:
    t = shape.height
    rb, rt = shape.base_diameter / 2, shape.roof_diameter / 2
    rw = rt - 1.8
    # wall in three courses of stone with thin mortar joints, a corbelled ledge, the parapet
    heights = [0.0, 0.27, 0.285, 0.545, 0.56, 0.82, 0.87, 1.0]
    tones = [1.0, 0.78, 1.0, 0.78, 1.0, 0.93, 1.06]
    prof = [(rb + (rw - rb) * hh / 0.82, hh * t) for hh in heights[:6]] + [(rt, 0.87 * t), (rt, t)]
    segs = 16
    q, n = _lathe(cx, cy, z0, prof, segs, float(rng.uniform(0, 2 * math.pi)))
    shade = np.repeat(np.array(tones), segs)[:, None] * (1.0 + rng.normal(0.0, jitter, (len(q), 1)))
    faces.add(q, colour[None] * shade, n, group, layer)
    if window:
        a = float(rng.uniform(0, 2 * math.pi))
        wz0, wz1 = z0 + 0.38 * t, z0 + 0.62 * t
        r0 = rb + (rw - rb) * 0.38 / 0.82 + 0.4
        r1 = rb + (rw - rb) * 0.62 / 0.82 + 0.4
        half = 3.2 / max(r0, 1.0)
        pts = []
        for ang, r, z in (
            (a - half, r0, wz0),
            (a + half, r0, wz0),
            (a + half, r1, wz1),
            (a, r1 + 0.1, wz1 + 2.6),
            (a - half, r1, wz1),
        ):
            pts.append((cx + r * math.cos(ang), cy + r * math.sin(ang), -z))
        nrm = np.array([math.cos(a), math.sin(a), -(rb - rw) / (0.82 * t)])
        faces.add(np.array([pts]), ink[None], nrm / np.linalg.norm(nrm), group, layer + 1)


def _merlon_faces(
    faces: _Faces,
    shape: TowerShape,
    cx: float,
    cy: float,
    z_roof: float,
    colour: np.ndarray,
    group: int,
    layer: int,
    phase: float,
) -> None:
    m = max(shape.merlons, 3)
    ro = shape.roof_diameter / 2
    ri = ro - max(2.5, 0.08 * shape.roof_diameter)
    zt = z_roof + shape.merlon_height
    step = 2 * math.pi / m
    a0 = phase + np.arange(m) * step
    a1 = a0 + 0.5 * step

    # corners of each merlon: index = radius (0 outer, 1 inner), angle (0 a0, 1 a1), z (0, 1)
    rr = np.array([ro, ri])[:, None, None, None]
    aa = np.stack([a0, a1])[None, :, None, :]
    zz = np.array([-z_roof, -zt])[None, None, :, None]
    px = np.broadcast_to(cx + rr * np.cos(aa), (2, 2, 2, m))
    py = np.broadcast_to(cy + rr * np.sin(aa), (2, 2, 2, m))
    pz = np.broadcast_to(zz, (2, 2, 2, m))
    c = np.stack([px, py, pz], axis=-1)  # (2, 2, 2, m, 3)
    quads = [
        ((0, 0, 0), (0, 1, 0), (0, 1, 1), (0, 0, 1)),  # outer
        ((1, 1, 0), (1, 0, 0), (1, 0, 1), (1, 1, 1)),  # inner
        ((0, 0, 1), (0, 1, 1), (1, 1, 1), (1, 0, 1)),  # top
        ((1, 0, 0), (0, 0, 0), (0, 0, 1), (1, 0, 1)),  # side at a0
        ((0, 1, 0), (1, 1, 0), (1, 1, 1), (0, 1, 1)),  # side at a1
    ]
    verts = np.concatenate([np.stack([c[i] for i in q], axis=1) for q in quads])
    am = 0.5 * (a0 + a1)
    zero = np.zeros(m)
    radial = np.stack([np.cos(am), np.sin(am), zero], axis=-1)
    t0 = np.stack([np.sin(a0), -np.cos(a0), zero], axis=-1)
    t1 = np.stack([-np.sin(a1), np.cos(a1), zero], axis=-1)
    normals = np.concatenate([radial, -radial, np.tile(_UP, (m, 1)), t0, t1])
    faces.add(verts, colour[None], normals, group, layer)


def _wizard_faces(
    faces: _Faces,
    g: BoardGeometry,
    scale: float,
    cx: float,
    cy: float,
    z0: float,
    colour: np.ndarray,
    group: int,
    layer: int,
    phase: float,
    gloss: float = 0.0,
) -> None:
    h = g.wizard.height * scale
    b = g.wizard.base_diameter / 2 * scale
    hd = g.wizard.head_diameter / 2 * scale
    prof = [
        (b, 0.0),
        (b, 0.07 * h),
        (0.62 * b, 0.5 * h),
        (0.42 * b, 0.55 * h),
        (hd, 0.6 * h),
        (hd, 0.7 * h),
        (hd * 1.35, 0.73 * h),
        (hd * 0.9, 0.8 * h),
        (0.25, h),
    ]
    q, n = _lathe(cx, cy, z0, prof, 9, phase)
    faces.add(q, colour[None], n, group, layer, gloss=gloss)


def _token_faces(
    faces: _Faces,
    d: float,
    thick: float,
    cx: float,
    cy: float,
    z0: float,
    base: np.ndarray,
    icon: list[tuple[np.ndarray, np.ndarray, bool]],
    group: int,
    layer: int,
) -> None:
    r = d / 2
    q, n = _lathe(cx, cy, z0, [(r, 0.0), (r, thick)], 16, 0.0)
    faces.add(q, base[None] * 0.85, n, group, layer)
    faces.add(_disc(cx, cy, z0 + thick, r, 16)[None], base[None], _UP, group, layer)
    for shape2d, col, convex in icon:
        faces.add(
            _flat(shape2d, z0 + thick + 0.05)[None], col[None], _UP, group, layer + 1, convex=convex
        )


@dataclass
class _Scene:
    faces: _Faces
    shadow_casters: list[tuple[float, float, float, float, float]]  # x, y, r_base, r_top, height


def _build_scene(board: _Board, g: BoardGeometry, ap: Appearance, nadir: np.ndarray) -> _Scene:
    """Faces of every tower, roof, castle, wizard and token, and the shadow casters.

    How the pieces stand on a space (rotation, small offsets, windows) depends only on the
    session's layout seed and what is on that space, so a still board draws the same frame after
    frame and a move changes only the spaces it touches."""
    faces = _Faces()
    casters: list[tuple[float, float, float, float, float]] = []
    tower = TowerShape(
        g.tower.base_diameter * ap.tower_scale,
        g.tower.roof_diameter * ap.tower_scale,
        g.tower.height,
        g.tower.merlon_height,
        g.tower.merlons,
    )
    castle = g.castle
    centres = g.space_centres()
    dist = np.linalg.norm(centres - nadir[None], axis=1)
    rank = {int(s): i for i, s in enumerate(np.argsort(-dist) + 1)}
    pieces: dict[int, list[tuple[str, str]]] = {}
    for _wid, colour, s, t in board.wizards:
        if t == len(board.stacks.get(s, [])):
            pieces.setdefault(s, []).append(("wizard", colour))
    for name, pos in (("witch", board.witch), ("raven", board.raven)):
        if pos is not None and pos[1] == len(board.stacks.get(pos[0], [])):
            pieces.setdefault(pos[0], []).append((name, name))
    for s in g.spaces:
        grp = rank[s]
        stack = board.stacks.get(s, [])
        here = (
            s,
            stack,
            sorted(pieces.get(s, [])),
            board.castle is not None and board.castle[0] == s,
        )
        rng = np.random.default_rng([ap.layout_seed, zlib.crc32(repr(here).encode())])
        cx, cy = centres[s - 1] + rng.normal(0.0, 0.6, 2)
        hgt = len(stack)
        x0, y0 = cx, cy
        for k, tid in enumerate(stack):
            kind = board.kinds.get(tid, "plain")
            wall = ap.magic_wall if kind == "magic" else ap.stone
            wall = wall * (1.0 + rng.normal(0.0, 0.015))
            # a tower put on another never sits exactly centred
            cx, cy = x0 + rng.normal(0.0, 0.7), y0 + rng.normal(0.0, 0.7)
            _tower_faces(
                faces,
                tower,
                cx,
                cy,
                k * g.tower.height,
                wall,
                grp,
                2 * k,
                rng,
                ap.stone_jitter,
                bool(rng.random() < 0.6),
                ap.raven_ink * 1.5,
            )
        z_top = g.tier_z(hgt)
        has_castle = board.castle is not None and board.castle[0] == s
        if hgt:
            casters.append((cx, cy, tower.base_diameter / 2, tower.roof_diameter / 2, z_top))
            kind = board.kinds.get(stack[-1], "plain")
            roof_col = ap.magic_roof if kind == "magic" else ap.roof
            rr = tower.roof_diameter / 2
            faces.add(_disc(cx, cy, z_top, rr, 24)[None], roof_col[None], _UP, grp, 100)
            ang = float(rng.uniform(0, 2 * math.pi))
            if kind == "crest":
                er = rr * rng.uniform(0.62, 0.7)
                faces.add(
                    _disc(cx, cy, z_top + 0.05, er, 24)[None], ap.crest_disc[None], _UP, grp, 101
                )
                faces.add(
                    _flat(raven_shape(np.array([cx, cy]), er * 0.78, ang), z_top + 0.1)[None],
                    ap.raven_ink[None],
                    _UP,
                    grp,
                    102,
                    convex=False,
                )
            elif kind == "magic":
                faces.add(
                    _flat(star_polygon(5, 0.42) * rr * 0.7 @ _rot2(ang).T + [cx, cy], z_top + 0.1)[
                        None
                    ],
                    ap.star[None],
                    _UP,
                    grp,
                    102,
                    convex=False,
                )
            if not has_castle:
                mcol = (ap.magic_wall if kind == "magic" else ap.stone) * 1.04
                _merlon_faces(faces, tower, cx, cy, z_top, mcol, grp, 110, ang)
        if has_castle:
            _tower_faces(
                faces, castle, cx, cy, z_top, ap.castle, grp, 120, rng, 0.03, True, ap.castle * 0.4
            )
            zc = z_top + castle.height
            faces.add(
                _disc(cx, cy, zc, castle.roof_diameter / 2, 24)[None],
                ap.castle[None] * 1.1,
                _UP,
                grp,
                122,
            )
            spire = [(castle.roof_diameter * 0.22, 0.0), (0.3, castle.height * 0.45)]
            q, n = _lathe(cx, cy, zc, spire, 12, 0.0)
            faces.add(q, ap.castle[None] * 1.15, n, grp, 124)
            _merlon_faces(faces, castle, cx, cy, zc, ap.castle * 1.2, grp, 124, 0.3)
            casters.append(
                (
                    cx,
                    cy,
                    castle.base_diameter / 2,
                    castle.roof_diameter / 2,
                    z_top + castle.height * 1.3,
                )
            )
        on_top = pieces.get(s, [])
        if on_top:
            slots = g.piece_slots(len(on_top), hgt)
            rot = _rot2(float(rng.uniform(0, 2 * math.pi)))
            order = rng.permutation(len(on_top))
            for j, idx in enumerate(order):
                what, colour = on_top[idx]
                sloppy = 1.2 if hgt else 3.0  # players set wizards down roughly
                px, py = np.array([cx, cy]) + rot @ slots[j] + rng.normal(0.0, sloppy, 2)
                if what == "wizard":
                    _wizard_faces(
                        faces,
                        g,
                        ap.wizard_scale,
                        px,
                        py,
                        z_top,
                        ap.wizard[colour] * (1.0 + rng.normal(0.0, 0.025, 3)),
                        grp,
                        130,
                        float(rng.uniform(0, 1)),
                        ap.wizard_gloss,
                    )
                    if hgt == 0:
                        casters.append((px, py, g.wizard.base_diameter / 2, 1.5, g.wizard.height))
                elif what == "witch":
                    tok = g.witch
                    hat = (
                        np.array(
                            [[-0.55, 0.35], [0.55, 0.35], [0.12, 0.2], [0.0, -0.7], [-0.12, 0.2]]
                        )
                        * tok.diameter
                        * 0.42
                    )
                    faces_icon = [(hat @ rot.T + [px, py], ap.witch_hat, False)]
                    _token_faces(
                        faces,
                        tok.diameter,
                        tok.thickness,
                        px,
                        py,
                        z_top,
                        ap.witch,
                        faces_icon,
                        grp,
                        130,
                    )
                else:
                    tok = g.raven
                    icon = [
                        (
                            raven_shape(
                                np.array([px, py]), tok.diameter * 0.36, float(rng.uniform(0, 6.3))
                            ),
                            ap.raven_ink,
                            False,
                        )
                    ]
                    _token_faces(
                        faces,
                        tok.diameter,
                        tok.thickness,
                        px,
                        py,
                        z_top,
                        ap.raven_token,
                        icon,
                        grp,
                        130,
                    )
    return _Scene(faces, casters)


def _rot2(a: float) -> np.ndarray:
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def _paint(
    img: np.ndarray, faces: _Faces, pose: CameraPose, camera: CameraModel, light: Lighting
) -> None:
    """Project, cull, shade and paint all faces into ``img`` (uint8 BGR, in place)."""
    if not faces.batches:
        return
    verts, cols, nrms, grp, lay, convex, cull, starts, counts = [], [], [], [], [], [], [], [], []
    offset = 0
    glosses = []
    for v, c, n, g_, l_, cv_, cu_, gl_ in faces.batches:
        f, k = v.shape[0], v.shape[1]
        verts.append(v.reshape(-1, 3))
        cols.append(c)
        nrms.append(n)
        grp.append(np.full(f, g_))
        lay.append(np.full(f, l_))
        convex.append(np.full(f, cv_))
        cull.append(np.full(f, cu_))
        glosses.append(np.full(f, gl_))
        starts.append(offset + np.arange(f) * k)
        counts.append(np.full(f, k))
        offset += f * k
    allv = np.concatenate(verts)
    col = np.concatenate(cols)
    nrm = np.concatenate(nrms)
    group = np.concatenate(grp)
    layer = np.concatenate(lay)
    cvx = np.concatenate(convex)
    cul = np.concatenate(cull)
    gloss = np.concatenate(glosses)
    st = np.concatenate(starts)
    cn = np.concatenate(counts)
    # centroids (first-vertex-weighted mean over each polygon)
    csum = np.add.reduceat(allv, st, axis=0)
    cent = csum / cn[:, None]
    cam_c = pose.centre
    facing = np.einsum("ij,ij->i", nrm, cam_c[None] - cent) > 0
    keep = facing | ~cul
    rot = pose.rotation
    depth = (cent @ rot.T + pose.tvec)[:, 2]
    ldir = np.array([light.direction[0], light.direction[1], -light.direction[2]])
    lam = np.clip(nrm @ ldir, 0.0, None)
    ground = light.ambient + (1 - light.ambient) * light.direction[2]
    factor = (light.ambient + (1 - light.ambient) * lam) / ground
    shaded = col * factor[:, None]
    shiny = gloss > 0
    if shiny.any():
        # Blinn-Phong highlight of the light's (white-balanced) colour
        view = cam_c[None] - cent[shiny]
        view /= np.linalg.norm(view, axis=1, keepdims=True)
        half = view + ldir[None]
        half /= np.linalg.norm(half, axis=1, keepdims=True)
        nh = np.clip(np.einsum("ij,ij->i", nrm[shiny], half), 0.0, None)
        spec = gloss[shiny] * nh**24 * 255.0 / ground
        shaded[shiny] += spec[:, None]
    shaded = np.clip(shaded, 0, 255)
    p2 = _project(allv, pose, camera)
    fixed = np.round(p2 * 16.0).astype(np.int32)
    idx = np.nonzero(keep)[0]
    order = idx[np.lexsort((-depth[idx], layer[idx], group[idx]))]
    for i in order:
        s, k = int(st[i]), int(cn[i])
        poly = fixed[s : s + k]
        rgb = (float(shaded[i, 0]), float(shaded[i, 1]), float(shaded[i, 2]))
        if cvx[i]:
            cv2.fillConvexPoly(img, poly, rgb, cv2.LINE_AA, 4)
        else:
            cv2.fillPoly(img, [poly], rgb, cv2.LINE_AA, 4)


# --------------------------------------------------------------------------------------------
# hands


@dataclass(frozen=True)
class HandPose:
    """A hand and forearm over the table (board frame, z up, mm).

    :param entry: where the arm comes from (outside the board), ``(x, y, z)``.
    :param hand: centre of the palm, ``(x, y, z)``.
    """

    entry: tuple[float, float, float]
    hand: tuple[float, float, float]
    skin: tuple[float, float, float]
    sleeve: tuple[float, float, float]
    sleeve_reach: float  # 0 = short sleeve, 1 = sleeve down to the wrist
    spread: float
    side: float  # +1 right hand, -1 left hand


def random_hand(
    rng: np.random.Generator,
    geometry: BoardGeometry,
    target_mm: Sequence[float] | np.ndarray | None = None,
    height_mm: float | None = None,
    from_angle: float | None = None,
    min_height_mm: float = 0.0,
) -> HandPose:
    """A hand reaching over the board from a random side, palm 60-260 mm above the table (and
    at least ``min_height_mm``, e.g. above the tallest stack: a hand is never inside a tower).

    :param target_mm: board ``(x, y)`` under the palm; default near a random space.
    :param from_angle: direction (radians, board frame) the arm comes from; default random.
    """
    w, h = geometry.board_size
    centre = np.array([w / 2, h / 2])
    if target_mm is None:
        s = int(rng.integers(1, geometry.n_spaces + 1))
        target = geometry.space_centre(s) + rng.normal(0, 15, 2)
    else:
        target = np.asarray(target_mm, dtype=np.float64)
    ang = float(rng.uniform(0, 2 * math.pi)) if from_angle is None else from_angle
    entry = centre + 900.0 * np.array([math.cos(ang), math.sin(ang)])
    z = float(rng.uniform(60, 260)) if height_mm is None else height_mm
    z = max(z, min_height_mm)
    skin = hsv_colour(rng.uniform(8, 30), rng.uniform(0.18, 0.5), rng.uniform(0.3, 0.95))
    sleeve = hsv_colour(rng.uniform(0, 360), rng.uniform(0.0, 0.8), rng.uniform(0.1, 0.9))
    return HandPose(
        (float(entry[0]), float(entry[1]), z + 250.0),
        (float(target[0]), float(target[1]), z),
        tuple(float(x) for x in skin),  # type: ignore[arg-type]
        tuple(float(x) for x in sleeve),  # type: ignore[arg-type]
        float(rng.uniform(0.0, 1.0)),
        float(rng.uniform(0.0, 1.0)),
        float(rng.choice([-1.0, 1.0])),
    )


def _hand_parts(hp: HandPose) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, str]]:
    """Capsules ``(p0 (3,), p1 (3,), radii (2,), part)`` in board mm, z up."""
    e = np.array(hp.entry)
    c = np.array(hp.hand)
    d = c - e
    dh = np.array([d[0], d[1], 0.0])
    dh /= max(np.linalg.norm(dh), 1e-9)
    perp = np.array([-dh[1], dh[0], 0.0]) * hp.side
    wrist = c - dh * 50.0 + np.array([0, 0, 12.0])
    arm_dir = e - wrist
    arm_dir /= np.linalg.norm(arm_dir)
    elbow = wrist + arm_dir * 270.0
    sleeve_start = elbow + (wrist - elbow) * hp.sleeve_reach * 0.85
    parts = [
        (e, elbow, np.array([52.0, 46.0]), "sleeve"),
        (elbow, sleeve_start, np.array([46.0, 36.0 + 8.0 * (1 - hp.sleeve_reach)]), "sleeve"),
        (sleeve_start, wrist, np.array([36.0, 26.0]), "skin"),
        (wrist, c + dh * 10.0, np.array([30.0, 34.0]), "skin"),
    ]
    knuckle = c + dh * 34.0
    for i, off in enumerate((-1.5, -0.5, 0.5, 1.5)):
        base = knuckle + perp * off * 12.0
        fd = dh + perp * off * 0.12 * hp.spread
        fd /= np.linalg.norm(fd)
        length = (58.0, 68.0, 64.0, 50.0)[i]
        tip = base + fd * length - np.array([0, 0, 12.0 + 10.0 * hp.spread])
        parts.append((base, tip, np.array([8.5, 7.0]), "skin"))
    thumb0 = c + perp * 26.0 - dh * 8.0
    thumb1 = thumb0 + dh * 38.0 + perp * 20.0 - np.array([0, 0, 6.0])
    parts.append((thumb0, thumb1, np.array([11.0, 8.5]), "skin"))
    return parts


def _draw_hand(
    img: np.ndarray,
    hp: HandPose,
    pose: CameraPose,
    camera: CameraModel,
    light: Lighting,
    blur_px: float,
) -> np.ndarray:
    """Paint the hand into ``img``; returns the hand mask ``(H, W) uint8`` (255 = hand)."""
    parts = _hand_parts(hp)
    pts = np.array([p for a, b, _, _ in parts for p in (a, b)])
    pts_cv = pts * np.array([1.0, 1.0, -1.0])
    cam = (pose.rotation @ pts_cv.T).T + pose.tvec
    z = np.maximum(cam[:, 2], 30.0)
    p2 = _project(pts_cv, pose, camera)
    f = camera.K[0, 0]
    h_img, w_img = img.shape[:2]
    layer = np.zeros_like(img)
    mask = np.zeros((h_img, w_img), np.uint8)
    lcv = np.array([light.direction[0], light.direction[1], -light.direction[2]])
    ldir2 = (pose.rotation @ lcv)[:2]
    ldir2 = ldir2 / max(float(np.linalg.norm(ldir2)), 1e-6)
    ground = light.ambient + (1 - light.ambient) * light.direction[2]
    # a cylinder look: dark rim, mid tone, highlight shifted towards the light
    tones = [(1.0, 0.2, 0.0), (0.82, 0.55, 0.08), (0.55, 0.85, 0.22), (0.25, 1.0, 0.3)]
    for i, (_a, _b, radii, part) in enumerate(parts):
        base = np.array(hp.sleeve if part == "sleeve" else hp.skin)
        q0, q1 = p2[2 * i], p2[2 * i + 1]
        r0, r1 = radii[0] * f / z[2 * i], radii[1] * f / z[2 * i + 1]
        for frac, lam, off in tones:
            shade = light.ambient + (1 - light.ambient) * lam
            col = tuple(float(x) for x in np.clip(base * shade / ground, 0, 255))
            shift = ldir2 * off * max(r0, r1)
            _capsule(layer, q0 + shift, q1 + shift, r0 * frac, r1 * frac, col)
        _capsule(mask, q0, q1, r0, r1, 255)
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return mask
    pad = int(3 * blur_px) + 3
    x0, x1 = max(xs.min() - pad, 0), min(xs.max() + pad + 1, w_img)
    y0, y1 = max(ys.min() - pad, 0), min(ys.max() + pad + 1, h_img)
    roi_l = layer[y0:y1, x0:x1]
    roi_m = mask[y0:y1, x0:x1]
    if blur_px > 0.3:
        roi_l = np.asarray(cv2.GaussianBlur(roi_l, (0, 0), blur_px), dtype=np.uint8)
        roi_m = np.asarray(cv2.GaussianBlur(roi_m, (0, 0), blur_px), dtype=np.uint8)
    alpha = roi_m.astype(np.float32)[..., None] / 255.0
    # the blurred layer was premultiplied by the unblurred mask: divide it back out
    cover = np.maximum(alpha, 1e-3)
    colour = roi_l.astype(np.float32) / cover
    out = img[y0:y1, x0:x1].astype(np.float32) * (1 - alpha) + np.clip(colour, 0, 255) * alpha
    img[y0:y1, x0:x1] = out.astype(np.uint8)
    result = np.zeros((h_img, w_img), np.uint8)
    result[y0:y1, x0:x1] = np.where(roi_m >= 128, 255, 0).astype(np.uint8)
    return result


def _capsule(
    img: np.ndarray, p0: np.ndarray, p1: np.ndarray, r0: float, r1: float, colour: Any
) -> None:
    d = p1 - p0
    ln = float(np.linalg.norm(d))
    if ln < 1e-6:
        cv2.circle(img, (int(p0[0]), int(p0[1])), max(int(r0), 1), colour, -1, cv2.LINE_AA)
        return
    n = np.array([-d[1], d[0]]) / ln
    quad = np.array([p0 + n * r0, p1 + n * r1, p1 - n * r1, p0 - n * r0])
    cv2.fillConvexPoly(img, np.round(quad * 16).astype(np.int32), colour, cv2.LINE_AA, 4)
    for p, r in ((p0, r0), (p1, r1)):
        cv2.circle(
            img,
            (int(round(p[0] * 16)), int(round(p[1] * 16))),
            max(int(r * 16), 16),
            colour,
            -1,
            cv2.LINE_AA,
            4,
        )


# --------------------------------------------------------------------------------------------
# the frame


@dataclass
class RenderResult:
    """A rendered frame and its ground truth.

    :param frame: ``(H, W, 3) uint8`` BGR, the only thing a detector may look at (plus the
        camera file of :attr:`camera`).
    :param observation: what the camera truly shows (``companion.rules.observe`` of the state).
    :param hand_mask: ``(H, W) uint8``, 255 where a hand or arm covers the frame.
    :param hand: a hand or arm is in view.
    """

    frame: np.ndarray
    observation: Observation
    camera: CameraModel
    pose: CameraPose
    lighting: Lighting
    hand_mask: np.ndarray
    hand: bool
    hand_pose: HandPose | None
    jpeg_quality: int | None
    blur_px: float
    noise: float
    state: dict[str, Any]

    def truth_json(self) -> dict[str, Any]:
        """Ground truth (observation, camera, pose, light, hand) as JSON-ready data."""
        return {
            "observation": self.observation.to_json(),
            "camera": self.camera.to_dict(),
            "pose": self.pose.to_json(),
            "lighting": self.lighting.to_json(),
            "hand": self.hand,
            "hand_pixels": int(np.count_nonzero(self.hand_mask)),
            "jpeg_quality": self.jpeg_quality,
            "blur_px": self.blur_px,
            "noise": self.noise,
            "state": self.state,
        }

    def save(self, folder: str | Path, stem: str) -> Path:
        """Write ``stem.png`` (the frame), ``stem.json`` (truth) and, with a hand,
        ``stem.hand.png`` into ``folder``; returns the frame's path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stem}.png"
        cv2.imwrite(str(path), self.frame)
        (folder / f"{stem}.json").write_text(json.dumps(self.truth_json(), indent=1) + "\n")
        if self.hand:
            cv2.imwrite(str(folder / f"{stem}.hand.png"), self.hand_mask)
        return path


_CACHE_LOCK = threading.Lock()
"""Guards the module-level caches (noise banks, artwork textures, geometries): the renderer may
be called from several threads; a :class:`TableSetup` belongs to one thread at a time."""

NOISE_LEVELS = (1.2, 2.0, 3.0, 4.5)
"""Standard deviations (DN) of the sensor noise banks; each frame uses one."""
_NOISE_BANK: dict[tuple[int, int, float], tuple[np.ndarray, np.ndarray]] = {}
_NOISE_SLACK = 128


def _noise_bank(h: int, w: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """A fixed bank of Gaussian sensor noise of ``sigma`` DN, a few rows taller than the frame,
    split into its positive and negative parts (uint8, for saturating add/subtract). Seeded
    once per frame size and level; frames take windows at random row offsets."""
    key = (h, w, sigma)
    with _CACHE_LOCK:
        if key not in _NOISE_BANK:
            if len(_NOISE_BANK) >= len(NOISE_LEVELS):
                _NOISE_BANK.clear()
            rng = np.random.default_rng([20221, int(sigma * 10)])
            n = rng.standard_normal((h + _NOISE_SLACK, w, 3), np.float32) * sigma
            pos = np.clip(np.round(n), 0, 255).astype(np.uint8)
            neg = np.clip(np.round(-n), 0, 255).astype(np.uint8)
            _NOISE_BANK[key] = (pos, neg)
        return _NOISE_BANK[key]


def _add_noise(frame: np.ndarray, rng: np.random.Generator, level: float) -> np.ndarray:
    """``frame`` plus Gaussian noise of about ``level`` DN (nearest bank), saturating."""
    h, w = frame.shape[:2]
    sigma = min(NOISE_LEVELS, key=lambda s: abs(s - level))
    pos, neg = _noise_bank(h, w, sigma)
    oy = int(rng.integers(0, _NOISE_SLACK + 1))
    if rng.random() < 0.5:
        pos, neg = neg, pos
    out = cv2.add(frame, pos[oy : oy + h])
    return cv2.subtract(out, neg[oy : oy + h])


_TEXTURES: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray, float]] = {}
_TEXTURE_CACHE_SIZE = 12


def _frame_maps(setup: TableSetup, board_shape: tuple[int, int], origin: float) -> dict[str, Any]:
    """Remap tables of the board plane (z = 0) for this camera and pose, cached per setup:
    the table texture at half resolution and the board texture over its bounding box."""
    if "maps" in setup._cache:
        return setup._cache["maps"]  # type: ignore[no-any-return]
    w, h = setup.camera.size
    step = 8
    xs = np.arange(w // step) * step + (step - 1) / 2
    ys = np.arange(h // step) * step + (step - 1) / 2
    gx, gy = np.meshgrid(xs, ys)
    pts = np.stack([gx, gy], axis=-1).reshape(-1, 1, 2)
    und = cv2.undistortPoints(pts, setup.camera.K, setup.camera.dist).reshape(-1, 2)
    rays = np.concatenate([und, np.ones((len(und), 1))], axis=1) @ setup.pose.rotation
    c = setup.pose.centre
    dz = np.where(rays[:, 2] > 1e-6, rays[:, 2], 1e-6)
    s = -c[2] / dz
    bx = (c[0] + s * rays[:, 0]).reshape(gy.shape).astype(np.float32)
    by = (c[1] + s * rays[:, 1]).reshape(gy.shape).astype(np.float32)
    # table: half resolution (the table texture is coarse), later upscaled
    hx = cv2.resize(bx, (w // 2, h // 2), interpolation=cv2.INTER_LINEAR)
    hy = cv2.resize(by, (w // 2, h // 2), interpolation=cv2.INTER_LINEAR)
    tmap = cv2.convertMaps(
        (hx - origin) * TABLE_PPM - 0.5, (hy - origin) * TABLE_PPM - 0.5, cv2.CV_16SC2
    )
    # board: only the frame's bounding box of the board texture
    th, tw = board_shape
    lo_mm, hi_mm = -TEXTURE_PAD, np.array([tw, th]) / TEXTURE_PPM - TEXTURE_PAD
    inside = (bx >= lo_mm) & (bx <= hi_mm[0]) & (by >= lo_mm) & (by <= hi_mm[1])
    rows, cols = np.nonzero(inside)
    if len(rows):
        y0, y1 = max(rows.min() * step - step, 0), min((rows.max() + 2) * step, h)
        x0, x1 = max(cols.min() * step - step, 0), min((cols.max() + 2) * step, w)
        mx = cv2.resize(bx, (w, h), interpolation=cv2.INTER_LINEAR)[y0:y1, x0:x1]
        my = cv2.resize(by, (w, h), interpolation=cv2.INTER_LINEAR)[y0:y1, x0:x1]
        bmap = cv2.convertMaps(
            (mx + TEXTURE_PAD) * TEXTURE_PPM - 0.5,
            (my + TEXTURE_PAD) * TEXTURE_PPM - 0.5,
            cv2.CV_16SC2,
        )
        roi = (y0, y1, x0, x1)
    else:
        bmap, roi = None, None
    out = {"table": tmap, "board": bmap, "roi": roi}
    setup._cache["maps"] = out
    return out


def _textures(setup: TableSetup) -> tuple[np.ndarray, np.ndarray, float]:
    """Table texture, board texture (unlit, no shadows), both ``uint8`` BGR, and the table
    origin in board mm. Cached per (geometry, art variant) across setups."""
    g = setup.geometry
    key = (g.signature(), setup.appearance.art_seed)
    with _CACHE_LOCK:
        if key in _TEXTURES:
            return _TEXTURES[key]
    trng = np.random.default_rng([setup.appearance.art_seed, 1])
    origin = g.board_size[0] / 2 - TABLE_SIZE / 2
    table = table_texture(trng, setup.appearance.art, TABLE_SIZE, TABLE_PPM)
    board = board_texture(
        g, setup.appearance.art, trng, table, TABLE_PPM, origin, TEXTURE_PPM, TEXTURE_PAD
    )
    out = (
        np.clip(table, 0, 255).astype(np.uint8),
        np.clip(board, 0, 255).astype(np.uint8),
        origin,
    )
    with _CACHE_LOCK:
        while len(_TEXTURES) >= _TEXTURE_CACHE_SIZE:
            _TEXTURES.pop(next(iter(_TEXTURES)))
        _TEXTURES[key] = out
    return out


def _shadow_map(
    setup: TableSetup,
    casters: list[tuple[float, float, float, float, float]],
    hand: HandPose | None,
    shape: tuple[int, int],
) -> np.ndarray:
    """Multiplier for the board texture, ``(h, w, 3) uint8``: 255 lit, less in cast shadows."""
    light = setup.lighting
    scale = 0.25
    ppm = TEXTURE_PPM * scale
    sh, sw = max(shape[0] // 4, 1), max(shape[1] // 4, 1)
    mask = np.zeros((sh, sw), np.float32)
    lx, ly, lz = light.direction
    off = np.array([lx, ly]) / max(lz, 0.2)
    ang = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    circ = np.stack([np.cos(ang), np.sin(ang)], -1)

    def to_px(p: np.ndarray) -> np.ndarray:
        return np.round((p + TEXTURE_PAD) * ppm * 16).astype(np.int32)

    for x, y, rb, rt, hgt in casters:
        c = np.array([x, y])
        pts = np.concatenate([c + rb * circ, c - off * hgt + rt * circ])
        hull = cv2.convexHull(to_px(pts).reshape(-1, 1, 2))
        cv2.fillConvexPoly(mask, hull, 1.0, cv2.LINE_AA, 4)
    if hand is not None:
        for a, b, radii, _part in _hand_parts(hand):
            pa = np.array(a[:2]) - off * a[2]
            pb = np.array(b[:2]) - off * b[2]
            quad_n = pb - pa
            ln = max(float(np.linalg.norm(quad_n)), 1e-6)
            n = np.array([-quad_n[1], quad_n[0]]) / ln
            quad = np.array(
                [pa + n * radii[0], pb + n * radii[1], pb - n * radii[1], pa - n * radii[0]]
            )
            cv2.fillConvexPoly(mask, to_px(quad), 0.8, cv2.LINE_AA, 4)
    sigma = max(light.softness_mm * ppm, 0.6)
    soft = cv2.GaussianBlur(mask, (0, 0), sigma)
    lit = np.clip(255.0 * (1.0 - light.shadow * soft), 0, 255).astype(np.uint8)
    lit = cv2.resize(lit, (shape[1], shape[0]), interpolation=cv2.INTER_LINEAR)
    return np.asarray(cv2.cvtColor(lit, cv2.COLOR_GRAY2BGR), dtype=np.uint8)


def _vignette(setup: TableSetup, h: int, w: int) -> np.ndarray:
    """Lens vignetting as a ``(h, w, 3) uint8`` multiplier (255 = no loss), cached per setup."""
    if "vignette" in setup._cache:
        return setup._cache["vignette"]  # type: ignore[no-any-return]
    sh, sw = h // 8, w // 8
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    r2 = ((xx - sw / 2) / (sw / 2)) ** 2 + ((yy - sh / 2) / (sw / 2)) ** 2
    vig = 255.0 * (1.0 - setup.lighting.vignette * np.clip(r2 / 1.3, 0, 1))
    small = cv2.cvtColor(vig.astype(np.uint8), cv2.COLOR_GRAY2BGR)
    out = np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), dtype=np.uint8)
    setup._cache["vignette"] = out
    return out


def _optical_image(
    setup: TableSetup, board: _Board, hp: HandPose | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The image the lens forms (table, board, pieces, hand, lens blur; before the sensor):
    ``(H, W, 3) uint8`` and the hand mask ``(H, W) uint8``."""
    g = setup.geometry
    w, h = setup.camera.size
    table, board_tex, origin = _textures(setup)
    maps = _frame_maps(setup, board_tex.shape[:2], origin)
    scene = _build_scene(board, g, setup.appearance, setup.pose.centre[:2])
    shadows = _shadow_map(setup, scene.shadow_casters, hp, board_tex.shape[:2])
    lit_board = cv2.multiply(board_tex, shadows, scale=1.0 / 255.0)
    tm1, tm2 = maps["table"]
    half = cv2.remap(table, tm1, tm2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    frame = cv2.resize(half, (w, h), interpolation=cv2.INTER_LINEAR)
    if maps["roi"] is not None:
        y0, y1, x0, x1 = maps["roi"]
        bm1, bm2 = maps["board"]
        cv2.remap(
            lit_board,
            bm1,
            bm2,
            cv2.INTER_LINEAR,
            dst=frame[y0:y1, x0:x1],
            borderMode=cv2.BORDER_TRANSPARENT,
        )
    _paint(frame, scene.faces, setup.pose, setup.camera, setup.lighting)
    if hp is not None:
        hand_mask = _draw_hand(
            frame, hp, setup.pose, setup.camera, setup.lighting, float(rng.uniform(1.0, 4.0))
        )
    else:
        hand_mask = np.zeros((h, w), np.uint8)
    if setup.blur_px > 0.3:
        frame = cv2.GaussianBlur(frame, (0, 0), setup.blur_px)
    return np.asarray(frame, dtype=np.uint8), hand_mask


def render(
    state: GameState | Mapping[str, Any],
    rng: np.random.Generator,
    *,
    setup: TableSetup | None = None,
    geometry: BoardGeometry | None = None,
    size: tuple[int, int] = FRAME_SIZE,
    hand: bool | float | HandPose = 0.0,
    jpeg_quality: int | None | bool = True,
    frame_index: int = 0,
    time_s: float = 0.0,
) -> RenderResult:
    """Draw one camera frame of ``state``.

    :param state: a :class:`~companion.rules.model.GameState` or the state JSON
        (state-model.md §1-§2, as :func:`companion.rules.serialize.dump_state` writes it).
    :param rng: all randomness of this frame (and of the setup when ``setup`` is None).
    :param setup: camera, pose, light and look to keep (a session); default: a random one
        (:func:`random_setup` with ``geometry`` and ``size``).
    :param hand: ``True`` draws a hand over the board, a float is the probability of one, a
        :class:`HandPose` draws that hand.
    :param jpeg_quality: ``True`` = the setup's camera setting (70-95), an int = that quality,
        ``None``/``False`` = no compression.
    :returns: the frame ``(H, W, 3) uint8`` BGR (default 1536x864) and its ground truth.
    :raises RenderError: when the state is malformed.
    """
    gs = _as_state(state)
    data = dump_state(gs)
    if setup is None:
        g = _geometry_for(geometry, data["track"])
        setup = random_setup(rng, g, size=size)
    else:
        g = setup.geometry
        if g.track.to_json() != _track_norm(data["track"]):
            g = g.with_track(data["track"])
            setup = dataclasses.replace(setup, geometry=g, _cache={})
    board = _board_of(data)
    w, h = setup.camera.size
    # hand
    hp: HandPose | None
    if isinstance(hand, HandPose):
        hp = hand
    elif hand is True or (
        not isinstance(hand, bool) and float(hand) > 0 and rng.random() < float(hand)
    ):
        hp = random_hand(rng, g, min_height_mm=_clear_height(board, g))
    else:
        hp = None
    # a still board without a hand draws the same optical image as last time: reuse it
    still_key = None
    if hp is None:
        still_key = json.dumps(
            [data["stacks"], data["wizards"], data["castle"], data["witch"], data["raven"]],
            sort_keys=True,
        )
    cached = setup._cache.get("still")
    if still_key is not None and cached is not None and cached[0] == still_key:
        frame = cached[1].copy()
        hand_mask = np.zeros((h, w), np.uint8)
    else:
        frame, hand_mask = _optical_image(setup, board, hp, rng)
        if still_key is not None:
            setup._cache["still"] = (still_key, frame.copy())
    frame = cv2.multiply(frame, _vignette(setup, h, w), scale=1.0 / 255.0)
    # auto-exposure hunting / mains flicker: the whole frame a little brighter or darker
    flicker = float(np.clip(rng.normal(1.0, 0.012), 0.96, 1.04))
    frame = cv2.transform(frame, np.diag(setup.lighting.gains() * flicker).astype(np.float32))
    noise_level = setup.noise
    out = _add_noise(frame, rng, noise_level)
    q: int | None
    if jpeg_quality is True:
        q = setup.jpeg_quality
    elif jpeg_quality is False or jpeg_quality is None:
        q = None
    else:
        q = int(jpeg_quality)
    if q is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
        dec = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if dec is not None:
            out = np.asarray(dec, dtype=np.uint8)
    obs = observe(gs, time=time_s, frame=frame_index)
    return RenderResult(
        frame=out,
        observation=obs,
        camera=setup.camera,
        pose=setup.pose,
        lighting=setup.lighting,
        hand_mask=hand_mask,
        hand=bool(hand_mask.any()),
        hand_pose=hp,
        jpeg_quality=q,
        blur_px=setup.blur_px,
        noise=noise_level,
        state=data,
    )


_GEOMETRIES: dict[tuple[str, str], BoardGeometry] = {}


def _geometry_for(base: BoardGeometry | None, track: Mapping[str, Any]) -> BoardGeometry:
    """``base`` (default: the built-in geometry) laid out for ``track``; cached."""
    b = base if base is not None else BoardGeometry.default()
    key = (b.signature(), json.dumps(_track_norm(track), sort_keys=True))
    with _CACHE_LOCK:
        if key not in _GEOMETRIES:
            if len(_GEOMETRIES) > 16:
                _GEOMETRIES.clear()
            _GEOMETRIES[key] = b.with_track(track)
        return _GEOMETRIES[key]


def _track_norm(track: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "length": int(track["length"]),
        "raven_crest": sorted(int(s) for s in track.get("raven_crest", [])),
        "special": {
            str(s): k
            for s, k in sorted((track.get("special") or {}).items(), key=lambda kv: int(kv[0]))
        },
    }


def _clear_height(board: _Board, g: BoardGeometry) -> float:
    """Lowest palm height (mm) that clears every stack, castle and wizard on the board."""
    top = max((len(t) for t in board.stacks.values()), default=0) * g.tower.height
    return top + max(g.castle.height, g.wizard.height) + 45.0


def _hand_at(base: HandPose, pos: np.ndarray, rng: np.random.Generator) -> HandPose:
    return HandPose(
        base.entry,
        (float(pos[0]), float(pos[1]), float(pos[2])),
        base.skin,
        base.sleeve,
        base.sleeve_reach,
        float(np.clip(base.spread + rng.normal(0, 0.1), 0, 1)),
        base.side,
    )


def render_hand_sequence(
    state: GameState | Mapping[str, Any],
    rng: np.random.Generator,
    *,
    setup: TableSetup | None = None,
    still_before: int = 3,
    moving: int = 8,
    still_after: int = 4,
    fps: float = 5.0,
    jpeg_quality: int | None | bool = True,
) -> list[RenderResult]:
    """Frames of a still board while a hand enters, moves over it and leaves.

    ``still_before`` frames without a hand, ``moving`` frames with the hand entering from
    outside the frame, sweeping over a space and leaving the way it came, then ``still_after``
    frames without a hand. Camera, light and look stay fixed; noise and compression differ per
    frame, as in a real camera. ``time`` advances by ``1 / fps`` s per frame.
    """
    gs = _as_state(state)
    data = dump_state(gs)
    if setup is None:
        setup = random_setup(rng, _geometry_for(None, data["track"]))
    g = setup.geometry
    base = random_hand(rng, g, min_height_mm=_clear_height(_board_of(data), g))
    entry = np.array(base.entry)
    target = np.array(base.hand)
    away = target + (np.array([entry[0], entry[1], target[2]]) - target) * 0.5
    results = []
    n = still_before + moving + still_after
    for i in range(n):
        hp: HandPose | bool = False
        k = i - still_before
        if 0 <= k < moving:
            # in (first third), hover over the space (middle), out (last third): the share of
            # the way back to the edge goes 1 -> 0 -> 1
            phase = k / max(moving - 1, 1)
            a = min(max(abs(2.0 * phase - 1.0) * 1.5 - 0.5, 0.0), 1.0)
            pos = target + (away - target) * a + rng.normal(0, 4, 3) * (1 - a)
            hp = _hand_at(base, pos, rng)
        results.append(
            render(
                gs,
                rng,
                setup=setup,
                hand=hp,
                jpeg_quality=jpeg_quality,
                frame_index=i,
                time_s=i / fps,
            )
        )
    return results


def render_move_sequence(
    before: GameState | Mapping[str, Any],
    after: GameState | Mapping[str, Any],
    rng: np.random.Generator,
    *,
    setup: TableSetup | None = None,
    still_before: int = 2,
    reach: int = 3,
    carry: int = 3,
    leave: int = 3,
    still_after: int = 3,
    fps: float = 5.0,
    frame0: int = 0,
    time0: float = 0.0,
    jpeg_quality: int | None | bool = True,
) -> list[RenderResult]:
    """Frames of a player making a move at the table: the board of ``before`` stands still, a
    hand reaches over the space where the move starts, carries over to where it ends - the
    board already shows ``after`` while the hand is there -, leaves, and the board of ``after``
    stands still. The spaces are those whose observation changes (any space if none does).

    Frame counts per phase: ``still_before`` (no hand, ``before``), ``reach`` (hand coming in,
    ``before``), ``carry`` (hand between the two spaces, ``after``), ``leave`` (hand going,
    ``after``), ``still_after`` (no hand, ``after``). Frame numbers start at ``frame0`` and
    times at ``time0`` s, ``1 / fps`` s apart. Camera, light and look come from ``setup``
    (default: a random one) and stay fixed.

    :raises RenderError: when a state is malformed or the two tracks differ.
    """
    gb, ga = _as_state(before), _as_state(after)
    db, da = dump_state(gb), dump_state(ga)
    if _track_norm(db["track"]) != _track_norm(da["track"]):
        raise RenderError("after: the track differs from the one before the move")
    if setup is None:
        setup = random_setup(rng, _geometry_for(None, db["track"]))
    g = setup.geometry
    ob, oa = observe(gb), observe(ga)
    changed = [s for s in g.spaces if ob.spaces.get(s) != oa.spaces.get(s)]
    if not changed:
        changed = [int(rng.integers(1, g.n_spaces + 1))]
    src, dst = changed[0], changed[-1]
    if len(changed) > 1 and rng.random() < 0.5:
        src, dst = dst, src
    clear = max(_clear_height(_board_of(db), g), _clear_height(_board_of(da), g))
    base = random_hand(rng, g, target_mm=g.space_centre(src), min_height_mm=clear)
    z = base.hand[2]
    a = np.array([*g.space_centre(src), z])
    b = np.array([*g.space_centre(dst), z])
    entry = np.array(base.entry)
    out_a = a + (np.array([entry[0], entry[1], z]) - a) * 0.5
    out_b = b + (np.array([entry[0], entry[1], z]) - b) * 0.5
    plan: list[tuple[GameState, np.ndarray | None]] = [(gb, None)] * still_before
    for k in range(reach):
        t = (k + 1) / reach
        plan.append((gb, out_a + (a - out_a) * t))
    for k in range(carry):
        t = k / max(carry - 1, 1)
        plan.append((ga, a + (b - a) * t))
    for k in range(leave):
        t = (k + 1) / (leave + 1)
        plan.append((ga, b + (out_b - b) * t))
    plan += [(ga, None)] * still_after
    results = []
    for i, (st, pos) in enumerate(plan):
        hp: HandPose | bool = (
            False if pos is None else _hand_at(base, pos + rng.normal(0, 3, 3), rng)
        )
        results.append(
            render(
                st,
                rng,
                setup=setup,
                hand=hp,
                jpeg_quality=jpeg_quality,
                frame_index=frame0 + i,
                time_s=time0 + i / fps,
            )
        )
    return results


# --------------------------------------------------------------------------------------------
# command line: example frames and timing


def _game_states(seed: int, count: int, players: int | None = None) -> list[GameState]:
    """``count`` states from seeded bot games (companion.sim.bots), spread over the games."""
    from companion.rules import Config
    from companion.sim.bots import play

    out: list[GameState] = []
    rnd = np.random.default_rng(seed)
    game = 0
    while len(out) < count:
        n = players or int(rnd.integers(2, 7))
        steps = [st.state for st in play(Config(player_count=n), seed * 100 + game, "random")]
        game += 1
        if not steps:
            continue
        picks = rnd.choice(len(steps), size=min(count - len(out), 8), replace=False)
        out.extend(steps[int(i)] for i in sorted(picks))
    return out


def main(argv: list[str]) -> int:
    """``python -m companion.sim.render sample|time ...`` (see ``--help``)."""
    import argparse
    import statistics
    import time

    ap = argparse.ArgumentParser(prog="python -m companion.sim.render", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("sample", help="write example frames with their truth (PNG + JSON)")
    sp.add_argument("--out", default="artifacts/render", help="folder (default artifacts/render)")
    sp.add_argument("--count", type=int, default=6)
    sp.add_argument("--seed", type=int, default=1)
    sp.add_argument("--hand", type=float, default=0.3, help="probability of a hand per frame")
    tp = sub.add_parser("time", help="median render time per frame on one core")
    tp.add_argument("--frames", type=int, default=50)
    tp.add_argument("--seed", type=int, default=1)
    tp.add_argument("--session", action="store_true", help="one fixed setup (the demo's case)")
    tp.add_argument("--threads", type=int, default=1, help="OpenCV threads (default 1)")
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        states = _game_states(args.seed, args.count)
        for i, st in enumerate(states):
            r = render(st, np.random.default_rng([args.seed, i]), hand=args.hand)
            path = r.save(args.out, f"frame_{args.seed}_{i:03d}")
            print(
                f"{path}  tilt {r.pose.tilt_deg:4.1f}  {r.lighting.kelvin:5.0f} K  "
                f"x{r.lighting.intensity:.2f}  hand {r.hand}"
            )
        return 0
    cv2.setNumThreads(args.threads)
    states = _game_states(args.seed, args.frames)
    rng = np.random.default_rng(args.seed)
    fixed = random_setup(rng) if args.session else None
    render(states[0], rng, setup=fixed)  # imports, noise bank
    wall: list[float] = []
    cpu: list[float] = []
    for st in states:
        t0, c0 = time.perf_counter(), time.process_time()
        render(st, rng, setup=fixed, hand=0.2)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    wall.sort()
    print(
        f"{len(states)} frames {FRAME_SIZE[0]}x{FRAME_SIZE[1]}, OpenCV threads {args.threads}, "
        f"{'one session' if args.session else 'fresh camera/light/look per frame'}"
    )
    print(f"wall ms: median {statistics.median(wall):.1f}  p90 {wall[int(0.9 * len(wall))]:.1f}")
    print(f"cpu  ms: median {statistics.median(cpu):.1f}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
