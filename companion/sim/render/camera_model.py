"""A Raspberry Pi camera as a separate stage after the ideal render (domain randomisation).

:func:`~companion.sim.render.render` with ``ideal=True`` gives the image the lens forms under
the room light. :func:`apply_camera` turns it into what a Pi camera (Camera Module 3 / IMX708,
HQ camera / IMX477) through libcamera would deliver, in the order light meets them:

1. exposure (setup vs play: auto-exposure steps, mains flicker), lamp glare on the board, the
   hard shadow of an arm, lens vignetting, defocus (a disc) and motion blur (a line), all in
   linear light;
2. the sensor: the ISP's colour-correction matrix (CCM) and white-balance gains undone to get
   the raw colour, clipping at full well, an RGGB Bayer mosaic, Poisson shot noise for the
   electrons collected and Gaussian read noise, a black level and the ADC;
3. the ISP: demosaicing (``cv2.cvtColor``'s Bayer conversion), white balance with the gains of
   *this* phase (auto white balance drifts between setup and play), the CCM, the sRGB tone curve;
4. compression: JPEG, or an H.264-like stream (4:2:0 JPEG plus 16x16 macroblock steps).

The geometry of a session is part of the camera too: the sensor mode (:data:`CM3_MODES`,
:data:`HQ_MODES`), how much of the frame the board fills, and a bump of the camera after setup
(:func:`session_setup`, :func:`play_setup`).

Everything random is drawn from the generator passed in: :func:`random_effects` draws a
session's camera (per condition a severity: ``default``, ``mild``, ``moderate``, ``severe``);
:func:`apply_camera` draws the per-frame parts (noise, flicker, the arm's shadow, the direction
of motion). The defaults are a plausible ordinary Pi camera in an ordinary room.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import cv2
import numpy as np

from companion.sim.render.camera import bump_pose
from companion.sim.render.frame import RenderResult
from companion.sim.render.light import TableSetup, kelvin_to_bgr, random_setup
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry

SEVERITIES = ("mild", "moderate", "severe")
"""Severities of a condition, from what an ordinary evening brings to the worst a player meets."""

CONDITIONS = (
    "noise",
    "white_balance",
    "exposure",
    "glare",
    "shadow",
    "defocus",
    "motion_blur",
    "vignetting",
    "jpeg",
    "h264",
    "resolution",
    "board_fill",
    "bump",
)
"""The conditions :func:`random_effects` can make worse than the default, one at a time."""

CM3_MODES = ((4608, 2592), (2304, 1296), (1536, 864))
"""Camera Module 3 (IMX708) output sizes ``(w, h)`` px: full sensor, 2x2 binned, scaled."""
HQ_MODES = ((4056, 3040), (2028, 1520), (1332, 990))
"""HQ camera (IMX477) output sizes ``(w, h)`` px: full sensor, 2x2 binned, cropped/binned."""

RAW_MODES = {(1536, 864): (2304, 1296)}
"""Output sizes the ISP scales down from a larger raw mode (output -> raw ``(w, h)`` px); the
other listed sizes are raw modes themselves."""

PI_CCM = (1.62, -0.44, -0.18, -0.30, 1.58, -0.28, -0.04, -0.56, 1.60)
"""A colour-correction matrix (camera RGB -> linear sRGB, row-major, rows sum to 1) of the
kind the Pi cameras' libcamera tuning files hold for indoor light."""


@dataclass(frozen=True)
class CameraEffects:
    """One session's camera. Light levels are relative to the sensor's clip point (1.0 = the
    brightest level the frame can show at this exposure).

    :param full_well_e: electrons a raw pixel (of a binned mode: the binned pixel) collects at
        the clip point at this analogue gain, e- (an ordinary room at gain 4-8: a few thousand;
        an evening room at the highest gain: a few hundred).
    :param read_noise_e: read noise, e- rms.
    :param adc_bits: ADC resolution, bits (the Pi sensors: 10 or 12).
    :param black_level: black level of the raw values, a share of the ADC range.
    :param wb_gains: ``(red, blue)`` gains of the ISP's white balance at setup (green = 1).
    :param wb_drift: relative change of the red and blue gains between setup and play (auto
        white balance re-estimating); each gain moves by this share, up or down
        (``wb_signs``).
    :param ccm: colour-correction matrix, camera RGB -> linear sRGB, row-major.
    :param exposure_step_ev: exposure of play frames against the setup frame, EV (sign in
        ``exposure_sign``): auto exposure settling on a different level.
    :param flicker_ev: frame-to-frame exposure jitter (mains flicker, AE hunting), EV rms.
    :param glare: lamp reflections on the board: ``(u, v, radius_mm, peak)`` each, ``u, v`` the
        centre as a share of the board's width and height, ``radius_mm`` the spot's radius on
        the board, ``peak`` its brightness at the centre relative to the clip point (> 1
        saturates a core), in the lamp's colour (``lamp_kelvin``).
    :param lamp_kelvin: colour temperature of the lamp that makes the glare, K.
    :param shadow_prob: probability that a frame shows the shadow of an arm over the board.
    :param shadow_depth: share of the light the arm blocks (0..1).
    :param shadow_width_mm: width of the arm's shadow on the board, mm.
    :param shadow_penumbra_mm: width of the shadow's soft edge, mm (small: a hard shadow).
    :param defocus_px: diameter of the blur circle in output px (0 = in focus).
    :param motion_prob: probability that a frame is taken while the camera shakes.
    :param motion_deg_s: angular speed of the camera during the exposure, degrees/s.
    :param exposure_ms: exposure time, ms (motion blur = focal length x speed x time).
    :param vignetting: share of the light lost in the frame's corners (after lens shading
        correction), falling off with the squared radius.
    :param codec: ``"jpeg"`` or ``"h264"``.
    :param jpeg_quality: JPEG quality (libjpeg's 1..100 scale), also of the H.264 stand-in.
    :param macroblock_step_dn: quantisation step of the mean of each 16x16 macroblock, DN
        (8-bit); 0 = none. The blocking an H.264 stream at a low bitrate shows.
    :param mode: frame size ``(w, h)`` px (a sensor mode).
    :param board_fill: range of the share of the frame the board spans.
    :param bump_deg: rotation of the camera after setup, degrees (0 = none).
    :param wb_signs: directions of the red and blue drift (+1/-1).
    :param exposure_sign: direction of the exposure step (+1/-1).
    """

    full_well_e: float = 3000.0
    read_noise_e: float = 2.5
    adc_bits: int = 10
    black_level: float = 64.0 / 1023.0
    wb_gains: tuple[float, float] = (1.9, 1.6)
    wb_drift: float = 0.03
    ccm: tuple[float, ...] = PI_CCM
    exposure_step_ev: float = 0.0
    flicker_ev: float = 0.02
    glare: tuple[tuple[float, float, float, float], ...] = ()
    lamp_kelvin: float = 3000.0
    shadow_prob: float = 0.0
    shadow_depth: float = 0.5
    shadow_width_mm: float = 80.0
    shadow_penumbra_mm: float = 4.0
    defocus_px: float = 0.8
    motion_prob: float = 0.0
    motion_deg_s: float = 0.0
    exposure_ms: float = 20.0
    vignetting: float = 0.15
    codec: str = "jpeg"
    jpeg_quality: int = 90
    macroblock_step_dn: float = 0.0
    mode: tuple[int, int] = (1536, 864)
    board_fill: tuple[float, float] = (0.75, 0.9)
    bump_deg: float = 0.0
    wb_signs: tuple[int, int] = (1, -1)
    exposure_sign: int = 1

    def to_json(self) -> dict[str, Any]:
        """The parameters as JSON-ready data."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = [list(x) for x in v] if f.name == "glare" else v
        return out


# --------------------------------------------------------------------------------------------
# drawing a session's camera


def _u(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(rng.uniform(lo, hi))


def _condition(
    name: str, severity: str, rng: np.random.Generator, base: CameraEffects
) -> dict[str, Any]:
    """The fields one condition sets at one severity (``default`` = an ordinary camera)."""
    k = ("default",) + SEVERITIES
    i = k.index(severity)
    if name == "noise":
        fw = ((2000, 5000), (1200, 2000), (600, 1200), (250, 600))[i]
        rn = ((1.5, 3.0), (2.0, 3.0), (2.5, 4.0), (3.0, 6.0))[i]
        return {"full_well_e": _u(rng, *fw), "read_noise_e": _u(rng, *rn)}
    if name == "white_balance":
        d = ((0.0, 0.04), (0.04, 0.08), (0.08, 0.14), (0.14, 0.22))[i]
        return {
            "wb_gains": (_u(rng, 1.6, 2.3), _u(rng, 1.3, 2.0)),
            "wb_drift": _u(rng, *d),
            "wb_signs": (int(rng.choice([-1, 1])), int(rng.choice([-1, 1]))),
        }
    if name == "exposure":
        ev = ((0.0, 0.1), (0.25, 0.4), (0.55, 0.75), (0.9, 1.2))[i]
        return {
            "exposure_step_ev": _u(rng, *ev),
            "flicker_ev": (0.02, 0.03, 0.05, 0.08)[i],
            "exposure_sign": int(rng.choice([-1, 1])),
        }
    if name == "glare":
        if i == 0:
            return {"glare": ()}
        count = int(rng.integers(*((1, 2), (1, 3), (2, 4))[i - 1]))
        radius = ((8, 15), (12, 25), (20, 40))[i - 1]
        peak = ((0.8, 1.2), (1.2, 2.0), (2.0, 4.0))[i - 1]
        spots = tuple(
            (_u(rng, 0.12, 0.88), _u(rng, 0.12, 0.88), _u(rng, *radius), _u(rng, *peak))
            for _ in range(count)
        )
        return {"glare": spots, "lamp_kelvin": _u(rng, 2700, 4000)}
    if name == "shadow":
        if i == 0:
            return {"shadow_prob": 0.0}
        depth = ((0.25, 0.35), (0.4, 0.55), (0.6, 0.75))[i - 1]
        return {
            "shadow_prob": 1.0,
            "shadow_depth": _u(rng, *depth),
            "shadow_width_mm": _u(rng, 60, 80) if i < 3 else _u(rng, 80, 120),
            "shadow_penumbra_mm": _u(rng, 2, 6),
        }
    if name == "defocus":
        d = ((0.4, 1.2), (1.5, 2.5), (3.0, 4.5), (5.0, 7.0))[i]
        return {"defocus_px": _u(rng, *d)}
    if name == "motion_blur":
        if i == 0:
            return {"motion_prob": 0.0, "motion_deg_s": 0.0}
        # px = f * speed * time: at 1536 px wide (f ~ 1280 px) and 20 ms, 1 deg/s ~ 0.45 px
        speed = ((4.0, 9.0), (9.0, 18.0), (18.0, 30.0))[i - 1]
        return {"motion_prob": 1.0, "motion_deg_s": _u(rng, *speed), "exposure_ms": 20.0}
    if name == "vignetting":
        v = ((0.08, 0.2), (0.2, 0.3), (0.35, 0.45), (0.5, 0.6))[i]
        return {"vignetting": _u(rng, *v)}
    if name == "jpeg":
        q = ((85, 95), (70, 80), (45, 60), (20, 35))[i]
        return {"codec": "jpeg", "jpeg_quality": int(rng.integers(q[0], q[1] + 1))}
    if name == "h264":
        if i == 0:
            return {}
        q = ((70, 80), (50, 65), (30, 45))[i - 1]
        step = ((2.0, 3.0), (3.0, 5.0), (5.0, 8.0))[i - 1]
        return {
            "codec": "h264",
            "jpeg_quality": int(rng.integers(q[0], q[1] + 1)),
            "macroblock_step_dn": _u(rng, *step),
        }
    if name == "resolution":
        modes = (
            ((1536, 864),),
            ((2304, 1296), (2028, 1520)),
            ((1332, 990),),
            ((4608, 2592), (4056, 3040)),
        )[i]
        return {"mode": modes[int(rng.integers(len(modes)))]}
    if name == "board_fill":
        return {"board_fill": ((0.75, 0.9), (0.7, 0.8), (0.6, 0.7), (0.5, 0.6))[i]}
    if name == "bump":
        return {"bump_deg": (0.0, 1.0, 2.0, 3.0)[i]}
    raise ValueError(f"unknown camera condition {name!r} (known: {', '.join(CONDITIONS)})")


def random_effects(
    rng: np.random.Generator, severity: Mapping[str, str] | None = None
) -> CameraEffects:
    """A session's camera: every condition at ``default`` (an ordinary Pi camera in an ordinary
    room) except those named in ``severity`` (condition -> ``mild``/``moderate``/``severe``).

    Draws the same number of random values whatever the severities, so two calls with the same
    seed differ only in the conditions asked for.

    :raises ValueError: on an unknown condition or severity.
    """
    severity = dict(severity or {})
    for name, sev in severity.items():
        if name not in CONDITIONS:
            raise ValueError(f"unknown camera condition {name!r} (known: {', '.join(CONDITIONS)})")
        if sev not in ("default",) + SEVERITIES:
            raise ValueError(f"unknown severity {sev!r} (known: default, {', '.join(SEVERITIES)})")
    base = CameraEffects()
    values: dict[str, Any] = {}
    for name in CONDITIONS:
        # each condition draws from its own stream: the others' severities do not shift it
        sub = np.random.default_rng(rng.integers(1 << 62))
        values.update(_condition(name, severity.get(name, "default"), sub, base))
    return replace(base, **values)


def session_setup(
    rng: np.random.Generator,
    effects: CameraEffects,
    geometry: BoardGeometry | None = None,
    *,
    tilt_range: tuple[float, float] | None = None,
) -> TableSetup:
    """A random table (:func:`~companion.sim.render.random_setup`) seen by this camera: its
    sensor mode (frame size) and the board filling ``effects.board_fill`` of the frame."""
    kw: dict[str, Any] = {} if tilt_range is None else {"tilt_range": tilt_range}
    return random_setup(rng, geometry, size=effects.mode, fill=effects.board_fill, **kw)


def play_setup(setup: TableSetup, effects: CameraEffects, rng: np.random.Generator) -> TableSetup:
    """The table during play: the camera bumped by ``effects.bump_deg`` after setup
    (:func:`~companion.sim.render.camera.bump_pose`), or ``setup`` itself without a bump."""
    if effects.bump_deg <= 0:
        return setup
    return replace(setup, pose=bump_pose(setup.pose, effects.bump_deg, rng), _cache={})


def board_quad(
    camera: CameraModel, rvec: np.ndarray, tvec: np.ndarray, board_mm: tuple[float, float]
) -> np.ndarray:
    """The board's corners in the frame, ``(4, 2)`` px (top-left, top-right, bottom-right,
    bottom-left), for a camera pose ``rvec``/``tvec`` and a board of ``board_mm`` (w, h) mm."""
    w, h = board_mm
    pts = np.array([[0.0, 0.0, 0.0], [w, 0.0, 0.0], [w, h, 0.0], [0.0, h, 0.0]])
    p, _ = cv2.projectPoints(pts.reshape(-1, 1, 3), rvec, tvec, camera.K, camera.dist)
    return np.asarray(p.reshape(4, 2), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# the image stage

_SRGB_TO_LINEAR = np.array(
    [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (np.arange(256) / 255.0)],
    dtype=np.float32,
)
_TONE_BITS = 12
_TONE = np.array(
    [
        255.0 * (12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055)
        for x in np.linspace(0.0, 1.0, (1 << _TONE_BITS))
    ]
)
_TONE_LUT = np.clip(np.round(_TONE), 0, 255).astype(np.uint8)


def to_linear(frame: np.ndarray) -> np.ndarray:
    """``(H, W, 3) uint8`` sRGB-encoded -> ``float32`` linear light, 0..1."""
    return np.asarray(_SRGB_TO_LINEAR[frame], dtype=np.float32)


def tone_curve(linear: np.ndarray) -> np.ndarray:
    """Linear light (clipped to 0..1) -> ``uint8`` through the sRGB tone curve."""
    idx = np.clip(linear * ((1 << _TONE_BITS) - 1) + 0.5, 0, (1 << _TONE_BITS) - 1)
    return np.asarray(_TONE_LUT[idx.astype(np.uint16)], dtype=np.uint8)


def _ccm_bgr(ccm: tuple[float, ...]) -> np.ndarray:
    """The RGB matrix reordered for BGR pixels."""
    m = np.array(ccm, dtype=np.float64).reshape(3, 3)
    return m[::-1, ::-1]


def disc_kernel(diameter_px: float) -> np.ndarray:
    """A normalised blur disc of ``diameter_px`` (anti-aliased by 8x8 supersampling)."""
    r = diameter_px / 2
    n = int(math.ceil(r)) * 2 + 1
    ss = 8
    c = (np.arange(n * ss) + 0.5) / ss - n / 2
    xx, yy = np.meshgrid(c, c)
    cover = (xx**2 + yy**2 <= r * r).astype(np.float32)
    k = cover.reshape(n, ss, n, ss).mean(axis=(1, 3))
    return np.asarray(k / k.sum(), dtype=np.float32)


def line_kernel(length_px: float, angle_deg: float) -> np.ndarray:
    """A normalised motion-blur line of ``length_px`` at ``angle_deg`` (x right, y down)."""
    n = int(math.ceil(length_px)) // 2 * 2 + 3
    ss = 8
    big = np.zeros((n * ss, n * ss), np.float32)
    a = math.radians(angle_deg)
    dx, dy = math.cos(a) * length_px / 2 * ss, math.sin(a) * length_px / 2 * ss
    cx = cy = n * ss / 2
    cv2.line(
        big,
        (int(round(cx - dx)), int(round(cy - dy))),
        (int(round(cx + dx)), int(round(cy + dy))),
        1.0,
        max(ss // 2, 1),
        cv2.LINE_AA,
    )
    k = big.reshape(n, ss, n, ss).mean(axis=(1, 3))
    return np.asarray(k / max(float(k.sum()), 1e-9), dtype=np.float32)


def _px_per_mm(quad: np.ndarray, board_mm: tuple[float, float]) -> float:
    area = abs(float(cv2.contourArea(quad.astype(np.float32))))
    return math.sqrt(max(area, 1.0) / (board_mm[0] * board_mm[1]))


def _board_point(quad: np.ndarray, u: float, v: float) -> np.ndarray:
    """The frame point at ``(u, v)`` shares of the board's width and height."""
    src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    h = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    p = cv2.perspectiveTransform(np.array([[[u, v]]], np.float32), h)
    return np.asarray(p.reshape(2), dtype=np.float64)


def _add_glare(lin: np.ndarray, effects: CameraEffects, quad: np.ndarray, ppm: float) -> None:
    """Add the lamp's reflections (in place): a Gaussian spot per ``effects.glare`` entry."""
    h, w = lin.shape[:2]
    colour = kelvin_to_bgr(effects.lamp_kelvin)
    colour = (colour / colour.max()).astype(np.float32)
    for u, v, radius_mm, peak in effects.glare:
        cx, cy = _board_point(quad, u, v)
        sigma = max(radius_mm * ppm / 2.0, 1.0)
        r = int(math.ceil(4 * sigma))
        x0, x1 = max(int(cx) - r, 0), min(int(cx) + r + 1, w)
        y0, y1 = max(int(cy) - r, 0), min(int(cy) + r + 1, h)
        if x0 >= x1 or y0 >= y1:
            continue
        yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        spot = peak * np.exp(-0.5 * ((xx - cx) ** 2 + (yy - cy) ** 2) / sigma**2)
        lin[y0:y1, x0:x1] += spot[..., None] * colour


def _shadow_mask(
    shape: tuple[int, int],
    quad: np.ndarray,
    ppm: float,
    effects: CameraEffects,
    rng: np.random.Generator,
) -> np.ndarray:
    """Light left by an arm's shadow, ``(h, w) float32`` (1 lit, ``1 - depth`` in the shadow):
    a band of ``shadow_width_mm`` from outside one board edge to a point inside the board."""
    h, w = shape
    side = int(rng.integers(4))
    t = float(rng.uniform(0.2, 0.8))
    a, b = quad[side], quad[(side + 1) % 4]
    centre = quad.mean(axis=0)
    edge = a + (b - a) * t
    outside = edge + (edge - centre) * 1.5
    tip = _board_point(quad, float(rng.uniform(0.25, 0.75)), float(rng.uniform(0.25, 0.75)))
    mask = np.zeros((h, w), np.float32)
    width = max(int(round(effects.shadow_width_mm * ppm)), 1)
    p0 = (int(round(outside[0])), int(round(outside[1])))
    p1 = (int(round(tip[0])), int(round(tip[1])))
    cv2.line(mask, p0, p1, 1.0, width, cv2.LINE_AA)
    cv2.circle(mask, p1, width // 2, 1.0, -1, cv2.LINE_AA)  # the hand's rounded end
    sigma = effects.shadow_penumbra_mm * ppm / 2.0
    soft = cv2.GaussianBlur(mask, (0, 0), sigma) if sigma > 0.3 else mask
    return np.asarray(1.0 - effects.shadow_depth * soft, dtype=np.float32)


def _vignette(shape: tuple[int, int], amount: float) -> np.ndarray:
    """``(h, w, 1) float32``: 1 at the centre, ``1 - amount`` in the corners (squared radius)."""
    h, w = shape
    yy = (np.arange(h, dtype=np.float32) - (h - 1) / 2) / ((h - 1) / 2 or 1)
    xx = (np.arange(w, dtype=np.float32) - (w - 1) / 2) / ((w - 1) / 2 or 1)
    r2 = (xx[None, :] ** 2 * w * w + yy[:, None] ** 2 * h * h) / (w * w + h * h)
    return np.asarray(1.0 - amount * r2, dtype=np.float32)[..., None]


def _sensor(cam: np.ndarray, effects: CameraEffects, rng: np.random.Generator) -> np.ndarray:
    """Raw camera colour (BGR float32, 1 = full well) -> demosaiced noisy raw, same scale.

    RGGB mosaic; shot noise is Poisson: exact below 40 e-, the normal approximation with the
    same mean and variance above (there it differs from Poisson by well under 1 %). An output
    size the ISP scales from a larger raw mode (:data:`RAW_MODES`) is mosaicked, exposed and
    demosaiced at the raw size and then scaled down, as the ISP does (which averages noise and
    demosaicing fringes)."""
    out_h, out_w = cam.shape[:2]
    raw_size = RAW_MODES.get((out_w, out_h))
    if raw_size is not None:
        cam = cv2.resize(cam, raw_size, interpolation=cv2.INTER_LINEAR)
    h, w = cam.shape[:2]
    raw = np.empty((h, w), np.float32)
    raw[0::2, 0::2] = cam[0::2, 0::2, 2]  # R
    raw[0::2, 1::2] = cam[0::2, 1::2, 1]  # G
    raw[1::2, 0::2] = cam[1::2, 0::2, 1]  # G
    raw[1::2, 1::2] = cam[1::2, 1::2, 0]  # B
    electrons = np.clip(raw, 0.0, 1.0) * np.float32(effects.full_well_e)
    noisy = electrons + np.sqrt(electrons) * rng.standard_normal((h, w), dtype=np.float32)
    low = electrons < 40.0
    if np.any(low):
        noisy[low] = rng.poisson(electrons[low]).astype(np.float32)
    noisy += rng.standard_normal((h, w), dtype=np.float32) * np.float32(effects.read_noise_e)
    top = (1 << effects.adc_bits) - 1
    black = effects.black_level * top
    scale = (top - black) / effects.full_well_e
    dn = np.clip(np.round(noisy * scale + black), 0, top).astype(np.uint16)
    bgr = cv2.cvtColor(dn, cv2.COLOR_BayerBG2BGR)  # OpenCV names RGGB-at-(0,0) "BG"
    out = (bgr.astype(np.float32) - black) / np.float32(top - black)
    if raw_size is not None:
        out = cv2.resize(out, (out_w, out_h), interpolation=cv2.INTER_AREA)
    return np.asarray(out, dtype=np.float32)


def _compress(frame: np.ndarray, effects: CameraEffects) -> np.ndarray:
    """JPEG, or the H.264 stand-in: macroblock means stepped, then 4:2:0 JPEG."""
    out = frame
    if effects.codec == "h264" and effects.macroblock_step_dn > 0:
        h, w = frame.shape[:2]
        bh, bw = -(-h // 16), -(-w // 16)
        pad = cv2.copyMakeBorder(frame, 0, bh * 16 - h, 0, bw * 16 - w, cv2.BORDER_REPLICATE)
        grey = cv2.cvtColor(pad, cv2.COLOR_BGR2GRAY).astype(np.float32)
        means = cv2.resize(grey, (bw, bh), interpolation=cv2.INTER_AREA)
        step = effects.macroblock_step_dn
        delta = np.round(means / step) * step - means
        up = cv2.resize(delta, (bw * 16, bh * 16), interpolation=cv2.INTER_NEAREST)[:h, :w]
        out = np.clip(frame.astype(np.float32) + up[..., None], 0, 255).astype(np.uint8)
    params = [cv2.IMWRITE_JPEG_QUALITY, int(effects.jpeg_quality)]
    ok, buf = cv2.imencode(".jpg", out, params)
    dec = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    return np.asarray(dec if dec is not None else out, dtype=np.uint8)


def apply_camera(
    frame: np.ndarray,
    effects: CameraEffects,
    rng: np.random.Generator,
    *,
    phase: str = "play",
    quad: np.ndarray | None = None,
    board_mm: tuple[float, float] = (500.0, 500.0),
    focal_px: float | None = None,
) -> np.ndarray:
    """What the Pi camera delivers for the ideal lens image ``frame``.

    :param frame: ``(H, W, 3) uint8`` BGR, the ideal render (``render(..., ideal=True)``).
    :param effects: the session's camera (:func:`random_effects`).
    :param rng: the per-frame randomness (noise, flicker, shadow, motion direction).
    :param phase: ``"setup"`` (the frame the profile is built from: white balance and exposure
        as set up) or ``"play"`` (drifted white balance, stepped exposure).
    :param quad: the board's corners in the frame, ``(4, 2)`` px (:func:`board_quad`); places
        glare and shadows on the board. Default: the middle 60 % of the frame.
    :param board_mm: the board's size (w, h) mm, for mm -> px.
    :param focal_px: focal length, px, for motion blur (default: 62 degrees horizontal FOV).
    :returns: ``(H, W, 3) uint8`` BGR.
    :raises ValueError: on a frame that is not ``(H, W, 3) uint8`` or an unknown phase/codec.
    """
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3:
        raise ValueError("apply_camera: frame must be an (H, W, 3) uint8 BGR image")
    if phase not in ("setup", "play"):
        raise ValueError(f"apply_camera: phase must be 'setup' or 'play', got {phase!r}")
    if effects.codec not in ("jpeg", "h264"):
        raise ValueError(f"apply_camera: codec must be 'jpeg' or 'h264', got {effects.codec!r}")
    h, w = frame.shape[:2]
    if quad is None:
        quad = np.array(
            [[0.2 * w, 0.2 * h], [0.8 * w, 0.2 * h], [0.8 * w, 0.8 * h], [0.2 * w, 0.8 * h]]
        )
    ppm = _px_per_mm(quad, board_mm)
    play = phase == "play"
    lin = to_linear(frame)
    # exposure
    ev = float(rng.normal(0.0, effects.flicker_ev))
    if play:
        ev += effects.exposure_sign * effects.exposure_step_ev
    lin *= np.float32(2.0**ev)
    # light on the board: glare adds the lamp, an arm's shadow takes light away
    shadow = rng.random() < effects.shadow_prob
    if shadow:
        lin *= _shadow_mask((h, w), quad, ppm, effects, rng)[..., None]
    if effects.glare:
        _add_glare(lin, effects, quad, ppm)
    # the lens
    if effects.vignetting > 0:
        lin *= _vignette((h, w), effects.vignetting)
    if effects.defocus_px >= 2.0:
        lin = cv2.filter2D(lin, -1, disc_kernel(effects.defocus_px))
    elif effects.defocus_px > 0.3:
        lin = cv2.GaussianBlur(lin, (0, 0), effects.defocus_px / 4.0)
    moving = rng.random() < effects.motion_prob
    angle = float(rng.uniform(0.0, 180.0))
    if moving and effects.motion_deg_s > 0:
        f = focal_px if focal_px is not None else w / 2 / math.tan(math.radians(31.0))
        length = f * math.radians(effects.motion_deg_s) * effects.exposure_ms / 1000.0
        if length >= 1.0:
            lin = cv2.filter2D(lin, -1, line_kernel(length, angle))
    # sensor: undo the ISP's colour correction and setup white balance to get raw colour
    ccm = _ccm_bgr(effects.ccm)
    gr, gb = effects.wb_gains
    setup_gains = np.array([gb, 1.0, gr])
    to_raw = (np.linalg.inv(ccm) / setup_gains[:, None]).astype(np.float32)
    cam = cv2.transform(lin, to_raw)
    got = _sensor(cam, effects, rng)
    # ISP: white balance of this phase, colour correction, tone curve
    if play:
        sr, sb = effects.wb_signs
        gains = np.array([gb * (1 + sb * effects.wb_drift), 1.0, gr * (1 + sr * effects.wb_drift)])
    else:
        gains = setup_gains
    # clipping after the gains keeps saturated highlights white, as the ISP does
    balanced = np.minimum(got * gains.astype(np.float32), np.float32(1.0))
    out = tone_curve(cv2.transform(balanced, ccm.astype(np.float32)))
    return _compress(out, effects)


def camera_frame(
    res: RenderResult,
    effects: CameraEffects,
    rng: np.random.Generator,
    board_mm: tuple[float, float],
    phase: str = "play",
) -> np.ndarray:
    """:func:`apply_camera` on a render made with ``ideal=True``: the board's corners, the
    board's size and the focal length taken from the render. Returns ``(H, W, 3) uint8 BGR``."""
    quad = board_quad(res.camera, res.pose.rvec, res.pose.tvec, board_mm)
    return apply_camera(
        res.frame,
        effects,
        rng,
        phase=phase,
        quad=quad,
        board_mm=board_mm,
        focal_px=float(res.camera.K[0, 0]),
    )
