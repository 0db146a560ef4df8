"""Light, the look of the pieces and one table setup (a session)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from companion.rules.observation import COLOURS
from companion.sim.render.camera import (
    ART_VARIANTS,
    FRAME_SIZE,
    INTENSITY_RANGE,
    JPEG_RANGE,
    KELVIN_RANGE,
    TILT_RANGE,
    WIZARD_HSV,
    CameraPose,
    random_pose,
    simulated_camera,
)
from companion.sim.render_textures import (
    BoardArt,
    hsv_colour,
    random_board_art,
)
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry


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
    fill: tuple[float, float] | None = None,
) -> TableSetup:
    """A random session: the simulated camera (or ``camera``), a random pose, light and look.

    :param fill: the share of the frame the board spans, drawn from this range
        (:func:`~companion.sim.render.camera.random_pose`); default: as near as fits.
    """
    g = geometry if geometry is not None else BoardGeometry.default()
    cam = camera if camera is not None else simulated_camera(size)
    pose = random_pose(rng, g, cam, tilt_range, fill=fill)
    light = random_lighting(rng, kelvin_range, intensity_range)
    look = random_appearance(rng)
    blur = float(rng.uniform(0.0, 1.1))
    noise = float(rng.uniform(1.0, 3.5)) / max(light.intensity, 0.3) ** 0.5
    quality = int(rng.integers(JPEG_RANGE[0], JPEG_RANGE[1] + 1))
    return TableSetup(g, cam, pose, light, look, blur, noise, quality)
