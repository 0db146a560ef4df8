"""A hand and forearm over the table."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from companion.sim.render.camera import CameraPose, _project
from companion.sim.render.light import Lighting
from companion.sim.render_textures import (
    hsv_colour,
)
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry

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
