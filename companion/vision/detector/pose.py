"""Probe tables of one board pose: where every probe point of the detector falls in the image.

For every space and candidate tier: the roof rim (and the castle's), points just inside and
outside it, the roof interior, the camera-facing wall and the castle body, all projected with
the board pose into ``int32`` pixel positions with an in-frame mask; the hull each top surface's
pieces stand in; which space owns each pixel where hulls overlap. They depend only on the pose,
so they are computed once and reused while the camera stays put.

Geometry conventions: board mm with z up (geometry); :meth:`BoardPose.project` takes z *down*
(OpenCV's right-handed frame), so heights are negated when projecting (:func:`project`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.detector.config import DetectorConfig
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BoardPose
from companion.vision.profile import marker_cut

Hull = tuple[NDArray[np.int32], NDArray[np.int32], float, float]
"""The pixels ``(ys, xs)`` of a top surface's hull and the projected area (sampled pixels) of
one wizard and of one token there."""


def masked_median(values: NDArray[Any], ok: NDArray[np.bool_]) -> NDArray[np.float32]:
    """Median over the last axis of the entries where ``ok`` (0 where none is)."""
    v = np.where(ok, values, np.inf).astype(np.float32)
    v.sort(axis=-1)
    n = ok.sum(-1)
    lo = np.clip((n - 1) // 2, 0, v.shape[-1] - 1)
    hi = np.clip(n // 2, 0, v.shape[-1] - 1)
    a = np.take_along_axis(v, lo[..., None], -1)[..., 0]
    b = np.take_along_axis(v, hi[..., None], -1)[..., 0]
    out: NDArray[np.float32] = np.where(n > 0, (a + b) / 2, 0.0).astype(np.float32)
    return out


def masked_quantile(values: NDArray[Any], ok: NDArray[np.bool_], q: float) -> NDArray[np.float32]:
    """Quantile ``q`` (lower interpolation) over the last axis of the entries where ``ok``
    (0 where none is)."""
    v = np.where(ok, values, np.inf).astype(np.float32)
    v.sort(axis=-1)
    n = ok.sum(-1)
    i = np.clip(np.floor((n - 1) * q).astype(np.int64), 0, v.shape[-1] - 1)
    a = np.take_along_axis(v, i[..., None], -1)[..., 0]
    out: NDArray[np.float32] = np.where(n > 0, a, 0.0).astype(np.float32)
    return out


def short_median(values: NDArray[Any]) -> float:
    """Median of a short 1-D array (np.median's overhead dominates at this size)."""
    v = np.sort(values, axis=None)
    n = len(v)
    return float(v[n // 2] + v[(n - 1) // 2]) / 2 if n else 0.0


def unit_ring(n: int, phase: float = 0.0) -> NDArray[np.float64]:
    a = phase + np.arange(n) * 2 * math.pi / n
    return np.stack([np.cos(a), np.sin(a)], axis=1)


RIM = unit_ring(48)
SIDE_MM = 2.5
"""Distance of the inside / outside probes from a roof rim, mm."""
N_INNER = 8
N_DISC = 16
N_KIND = N_INNER + N_DISC
N_BARE = 16
KIND_RING = np.concatenate(
    [
        unit_ring(N_INNER) * 0.28,
        unit_ring(N_DISC, 0.2) * 0.48,
        unit_ring(N_BARE, 0.1) * 0.8,
        unit_ring(6, 0.3) * 0.14,
        unit_ring(12, 0.15) * 0.38,
    ]
)
"""Roof-interior probes (fractions of the roof radius): an inner ring on the printed raven, a
ring on the crest disc around it (the disc covers 0.62..0.7 of the radius; together the first
``N_KIND``), a ring on the bare roof outside the disc, then two more rings on the raven."""
TOKEN_RING = 0.6
"""Radius (of the roof's) of the ring between the raven token's edge (0.5) and the crest
disc's (0.62..0.7)."""
TOKEN_MARGIN_MM = 1.5
"""Probes this far outside the raven token's edge are clear of it (its blurred edge)."""
INK_PROBES = np.r_[0:N_INNER, N_KIND + N_BARE : len(KIND_RING)]
"""The probes on the printed raven (inside 0.4 of the roof radius)."""


@dataclass
class PoseTables:
    """Image positions of all probe points for one pose."""

    rim_px: NDArray[np.int32]  # (S, K, R, 2) rim of the roof of tier k = 1..K
    rim_n: NDArray[np.float32]  # (S, K, R, 2) image normal of that rim
    rim_ok: NDArray[np.bool_]  # (S, K, R); index K (extra) holds castle rims on tiers 0..K
    kind_px: NDArray[np.int32]  # (S, K, Q, 2) roof interior of tier k
    kind_ok: NDArray[np.bool_]
    castle_px: NDArray[np.int32]  # (S, K + 1, C, 2) castle body standing at tier k = 0..K
    castle_ok: NDArray[np.bool_]
    crop: tuple[int, int, int, int]  # x0, y0, x1, y1 of the board's image region
    view_matrix: NDArray[np.float64]
    wall_px: NDArray[np.int32]  # (S, K, W, 2) camera-facing wall of tier k = 1..K
    wall_ok: NDArray[np.bool_]
    side_px: NDArray[np.int32]  # (S, K, 2, R, 2) points just inside / outside the roof rim
    side_ok: NDArray[np.bool_]  # (S, K, 2, R)
    elevation: NDArray[np.float32]  # (S,) camera elevation above each space, deg
    edge_flat: tuple[NDArray[np.intp], NDArray[np.float32], NDArray[np.float32]]
    # (flat index into the crop, normal x, normal y) of the rim points then the side points
    white_px: dict[int, NDArray[np.intp]]  # marker id -> flat frame indices of its quad
    hull: dict[tuple[int, int], Hull] = field(default_factory=dict)
    masks: dict[tuple[str, int, int], NDArray[np.uint8]] = field(default_factory=dict)
    polys: dict[tuple[int, int], NDArray[np.int32]] = field(default_factory=dict)
    owners: dict[tuple[int, ...], NDArray[np.int8]] = field(default_factory=dict)


def project(pose: BoardPose, pts_up: NDArray[np.float64]) -> NDArray[np.float64]:
    """Project board points given with z *up* (geometry convention)."""
    p = np.asarray(pts_up, np.float64).reshape(-1, 3).copy()
    p[:, 2] = -p[:, 2]
    return pose.project(p)


def _clip(p: NDArray[np.float64], w: int, h: int) -> tuple[NDArray[np.int32], NDArray[np.bool_]]:
    """Image points rounded to pixels, clipped one pixel inside a ``w`` x ``h`` frame, and
    whether they were inside."""
    q = np.round(p).astype(np.int32)
    ok = (q[..., 0] >= 1) & (q[..., 0] < w - 1) & (q[..., 1] >= 1) & (q[..., 1] < h - 1)
    q[..., 0] = np.clip(q[..., 0], 1, w - 2)
    q[..., 1] = np.clip(q[..., 1], 1, h - 2)
    return q, ok


def _rims(
    g: BoardGeometry, K: int, pose: BoardPose, centres: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Image points of the roof rims ``(S, L, R, 2)`` (the top of the merlon ring of the roof
    of tier k = 1..K, then the castle's roof rim when it stands on tier k = 0..K), their image
    normals (same shape) and points just inside and outside the roof rims of tiers 1..K
    ``(S, K, 2, R, 2)`` (a roof's rim is a step)."""
    S = len(centres)
    t, mh = g.tower.height, g.tower.merlon_height
    r0 = g.tower.roof_diameter / 2
    zs = np.arange(1, K + 1) * t
    cr = g.castle.roof_diameter / 2
    radii = np.concatenate([np.full(K, r0), np.full(K + 1, cr)])
    heights = np.concatenate(
        [zs + mh, np.arange(K + 1) * t + g.castle.height + g.castle.merlon_height]
    )
    L = len(radii)
    rim = np.zeros((S, L, len(RIM), 3))
    rim[..., :2] = centres[:, None, None, :] + RIM[None, None] * radii[None, :, None, None]
    rim[..., 2] = heights[None, :, None]
    rim_out = rim.copy()
    rim_out[..., :2] = centres[:, None, None, :] + RIM[None, None] * (
        radii[None, :, None, None] + 1.0
    )
    rp = project(pose, rim.reshape(-1, 3)).reshape(S, L, len(RIM), 2)
    rq = project(pose, rim_out.reshape(-1, 3)).reshape(S, L, len(RIM), 2)
    n = rq - rp
    n /= np.linalg.norm(n, axis=-1, keepdims=True) + 1e-9
    side = np.zeros((S, K, 2, len(RIM), 3))
    for j, dr in enumerate((-SIDE_MM, SIDE_MM)):
        side[:, :, j, :, :2] = centres[:, None, None, :] + RIM[None, None] * (r0 + dr)
    side[..., 2] = heights[None, :K, None, None]
    sp = project(pose, side.reshape(-1, 3)).reshape(S, K, 2, len(RIM), 2)
    return rp, n, sp


def _interiors(
    g: BoardGeometry, K: int, pose: BoardPose, centres: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Image points ``(S, K, Q, 2)`` of the roof-interior probes of tiers 1..K."""
    S = len(centres)
    zs = np.arange(1, K + 1) * g.tower.height
    kin = np.zeros((S, K, len(KIND_RING), 3))
    kin[..., :2] = centres[:, None, None, :] + KIND_RING[None, None] * (g.tower.roof_diameter / 2)
    kin[..., 2] = (zs + 0.2)[None, :, None]
    return project(pose, kin.reshape(-1, 3)).reshape(S, K, len(KIND_RING), 2)


def _walls(
    g: BoardGeometry,
    K: int,
    pose: BoardPose,
    centres: NDArray[np.float64],
    base_a: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Image points ``(S, K, W, 2)`` on the camera-facing wall of the tower of tier 1..K
    (``base_a``: each space's direction to the camera, rad)."""
    S, t, tw = len(centres), g.tower.height, g.tower
    wall = [
        (da, (tw.base_diameter + (tw.roof_diameter - tw.base_diameter) * fz) / 2 * 0.92, fz)
        for da in np.radians([-40.0, -20.0, 0.0, 20.0, 40.0])
        for fz in (0.15, 0.4, 0.65)
    ]
    wal = np.zeros((S, K, len(wall), 3))
    for j, (da, rr, fz) in enumerate(wall):
        wal[:, :, j, 0] = (centres[:, 0] + rr * np.cos(base_a + da))[:, None]
        wal[:, :, j, 1] = (centres[:, 1] + rr * np.sin(base_a + da))[:, None]
        wal[:, :, j, 2] = (np.arange(K) + fz) * t
    return project(pose, wal.reshape(-1, 3)).reshape(S, K, len(wall), 2)


def _castle_body(
    g: BoardGeometry,
    K: int,
    pose: BoardPose,
    centres: NDArray[np.float64],
    base_a: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Image points ``(S, K + 1, C, 2)`` on the castle's camera-facing side and its roof when
    it stands on tier k = 0..K (``base_a``: each space's direction to the camera, rad)."""
    S, t, cs = len(centres), g.tower.height, g.castle
    body = []
    for da in np.radians([-50.0, -25.0, 0.0, 25.0, 50.0]):
        for fz in (0.2, 0.45, 0.7):
            rr = (cs.base_diameter + (cs.roof_diameter - cs.base_diameter) * fz) / 2 * 0.92
            body.append((da, rr, fz * cs.height))
    for off in unit_ring(6) * cs.roof_diameter / 2 * 0.55:
        body.append((math.atan2(off[1], off[0]), float(np.hypot(*off)), cs.height + 0.5))
    C = len(body)
    cas = np.zeros((S, K + 1, C, 3))
    for j, (da, rr, dz) in enumerate(body):
        a = base_a + da if dz < cs.height else np.full(S, da)
        cas[:, :, j, 0] = (centres[:, 0] + rr * np.cos(a))[:, None]
        cas[:, :, j, 1] = (centres[:, 1] + rr * np.sin(a))[:, None]
        cas[:, :, j, 2] = (np.arange(K + 1) * t + dz)[None, :]
    return project(pose, cas.reshape(-1, 3)).reshape(S, K + 1, C, 2)


def _marker_mask(pose: BoardPose, w: int, h: int) -> NDArray[np.uint8]:
    """Quarter-resolution mask of the markers, each grown by half: their black and white
    squares are the strongest edges in the frame, and a high roof's projected rim that
    crosses one must not count them."""
    mask = np.zeros((h // 4 + 1, w // 4 + 1), np.uint8)
    for quad in pose.marker_corners_px.values():
        q = np.asarray(quad, np.float64).reshape(4, 2)
        c = q.mean(axis=0)
        big = (q - c) * 1.5 + c
        cv2.fillConvexPoly(mask, np.round(big / 4).astype(np.int32), 1)
    return mask


def _white_cells(pose: BoardPose, w: int, h: int) -> dict[int, NDArray[np.intp]]:
    """Marker id -> flat frame indices of the pixels inside its quad (a ``w`` x ``h`` frame)."""
    white_px: dict[int, NDArray[np.intp]] = {}
    for mid, quad in pose.marker_corners_px.items():
        cut = marker_cut(quad, w, h)
        if cut is None:
            continue
        qx0, qy0, st, mk = cut
        my, mx = np.nonzero(mk)
        white_px[int(mid)] = ((my * st + qy0) * w + (mx * st + qx0)).astype(np.intp)
    return white_px


def build_tables(
    g: BoardGeometry, cfg: DetectorConfig, pose: BoardPose, shape: tuple[int, int]
) -> PoseTables:
    """The probe tables of ``pose`` for a frame of ``shape`` ``(h, w)`` px.

    :raises ValueError: without a 3-D pose (no camera model).
    """
    h, w = shape
    cam = pose.camera_position_mm()
    if cam is None:
        raise ValueError("the detector needs a 3-D pose (a camera model)")
    centres = g.space_centres()
    K = cfg.max_towers
    rp, n, sp = _rims(g, K, pose, centres)
    dxy = np.hypot(centres[:, 0] - cam[0], centres[:, 1] - cam[1])
    elevation = np.degrees(np.arctan2(abs(float(cam[2])), dxy)).astype(np.float32)
    to_cam = cam[:2] - centres
    base_a = np.arctan2(to_cam[:, 1], to_cam[:, 0])
    mask = _marker_mask(pose, w, h)
    rpi, rok = _clip(rp, w, h)
    rok &= mask[rpi[..., 1] // 4, rpi[..., 0] // 4] == 0
    kpi, kok = _clip(_interiors(g, K, pose, centres), w, h)
    spi, sok = _clip(sp, w, h)
    wpi, wok = _clip(_walls(g, K, pose, centres, base_a), w, h)
    sok &= mask[spi[..., 1] // 4, spi[..., 0] // 4] == 0
    cpi, cok = _clip(_castle_body(g, K, pose, centres, base_a), w, h)
    # the board's image region, and the rim and side points as flat indices into it with
    # their normals (one gather per frame)
    allp = np.concatenate([rpi.reshape(-1, 2), kpi.reshape(-1, 2), cpi.reshape(-1, 2)])
    x0, y0 = np.maximum(allp.min(0) - 3, 0)
    x1, y1 = np.minimum(allp.max(0) + 4, (w, h))
    bw, bh = g.board_size
    scale = np.diag([cfg.view_px / bw, cfg.view_px / bh, 1.0])
    view = scale @ np.linalg.inv(pose.homography)
    cw = int(x1) - int(x0)
    rim_i = (rpi[..., 1] - y0) * cw + (rpi[..., 0] - x0)
    ch = int(y1) - int(y0)
    side_i = np.clip(spi[..., 1] - y0, 0, ch - 1) * cw + np.clip(spi[..., 0] - x0, 0, cw - 1)
    sn = np.broadcast_to(n[:, :K, None], side_i.shape + (2,))
    nf = n.astype(np.float32)
    edge_flat = (
        np.concatenate([rim_i.ravel(), side_i.ravel()]).astype(np.intp),
        np.concatenate([nf[..., 0].ravel(), sn[..., 0].ravel().astype(np.float32)]),
        np.concatenate([nf[..., 1].ravel(), sn[..., 1].ravel().astype(np.float32)]),
    )
    return PoseTables(
        rpi,
        n.astype(np.float32),
        rok,
        kpi,
        kok,
        cpi,
        cok,
        (int(x0), int(y0), int(x1), int(y1)),
        view,
        wpi,
        wok,
        spi,
        sok,
        elevation,
        edge_flat,
        _white_cells(pose, w, h),
    )


def hull(
    g: BoardGeometry,
    cfg: DetectorConfig,
    pose: BoardPose,
    tables: PoseTables,
    space: int,
    tier: int,
    shape: tuple[int, int],
) -> Hull:
    """Pixels (ys, xs) of the projected cylinder the pieces of a top surface stand in, and
    the projected area (in sampled pixels) of one wizard and of one token there."""
    key = (space, tier)
    hit = tables.hull.get(key)
    if hit is not None:
        return hit
    c = g.space_centre(space)
    z = g.tier_z(tier)
    radius = g.surface_radius(tier) - (1.0 if tier else 3.0)
    ring = unit_ring(24)

    def cyl(cx: NDArray[np.float64], r: float, z0: float, z1: float) -> NDArray[np.float64]:
        pts = np.concatenate(
            [
                np.column_stack([cx + ring * r, np.full(len(ring), z0)]),
                np.column_stack([cx + ring * r, np.full(len(ring), z1)]),
            ]
        )
        return project(pose, pts)

    hull_px = cyl(c, radius, z + 1.5, z + g.wizard.height)
    step = cfg.pixel_step
    h, w = shape
    x0, y0 = np.floor(hull_px.min(0)).astype(int)
    x1, y1 = np.ceil(hull_px.max(0)).astype(int)
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, w - 1), min(y1, h - 1)
    empty = np.zeros(0, np.int32)
    res: Hull = (empty, empty, 1.0, 1.0)
    if x1 > x0 and y1 > y0:
        mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
        hull = cv2.convexHull(np.round(hull_px - (x0, y0)).astype(np.int32))
        cv2.fillConvexPoly(mask, hull, 1)
        tables.polys[key] = (hull + (x0, y0)).astype(np.int32)
        ys, xs = np.nonzero(mask[::step, ::step])
        wiz = cyl(c, g.wizard.base_diameter / 2 * 0.8, z, z + g.wizard.height)
        wiz_area = float(cv2.contourArea(cv2.convexHull(wiz.astype(np.float32)))) / step**2
        tok = cyl(c, g.witch.diameter / 2, z, z + g.witch.thickness)
        tok_area = float(cv2.contourArea(cv2.convexHull(tok.astype(np.float32)))) / step**2
        cam = pose.camera_position_mm()
        tilt = 1.0
        if cam is not None:
            elev = math.degrees(
                math.atan2(abs(float(cam[2])) - z, math.hypot(*(np.asarray(cam[:2]) - c)))
            )
            tilt = float(np.clip(1.0 + cfg.wizard_tilt * (elev - 70.0), 0.7, 1.4))
        res = (
            (ys * step + y0).astype(np.int32),
            (xs * step + x0).astype(np.int32),
            max(wiz_area * cfg.wizard_area_scale * tilt, 1.0),
            max(tok_area, 1.0),
        )
    tables.hull[key] = res
    return res


def owners(
    g: BoardGeometry,
    tables: PoseTables,
    towers_of: list[int],
    castle_of: list[bool],
    shape: tuple[int, int],
) -> NDArray[np.int8]:
    """``(H, W) int8`` index of the space whose wizard hull owns each pixel (-1 none): hulls
    are painted from the lowest top surface to the highest, so the highest wins."""
    key = tuple(-1 if c else t for t, c in zip(towers_of, castle_of, strict=True))
    hit = tables.owners.get(key)
    if hit is not None:
        return hit
    owner = np.full(shape, -1, np.int8)
    spaces = g.spaces
    order = sorted((t, si) for si, t in enumerate(key) if t >= 0)
    for t, si in order:
        poly = tables.polys.get((spaces[si], t))
        if poly is not None:
            cv2.fillConvexPoly(owner, poly, si)
    # a full-frame map each (1.3 MB at 1536x864): only the board now and the one before it
    # come back (the stability gate's still period, a hand lifted and put back); 16 kept up
    # to 20 MB that were never read again (``companion bench e2e``: every hit of a game was
    # to the newest or the second newest)
    if len(tables.owners) >= 2:
        tables.owners.pop(next(iter(tables.owners)))
    tables.owners[key] = owner
    return owner


def castle_mask(
    g: BoardGeometry,
    pose: BoardPose,
    tables: PoseTables,
    space: int,
    tier: int,
    shape: tuple[int, int],
) -> NDArray[np.uint8]:
    """Quarter-resolution mask of the castle's image when it stands on ``space``/``tier``."""
    key = ("castle", space, tier)
    hit = tables.masks.get(key)
    if hit is not None:
        return hit
    c = g.space_centre(space)
    ring = unit_ring(24)
    z = g.tier_z(tier)
    pts = np.concatenate(
        [
            np.column_stack([c + ring * g.castle.base_diameter / 2, np.full(24, z)]),
            np.column_stack(
                [c + ring * g.castle.roof_diameter / 2, np.full(24, z + g.castle.height * 1.3)]
            ),
        ]
    )
    px = project(pose, pts)
    mask = np.zeros((shape[0] // 4 + 1, shape[1] // 4 + 1), np.uint8)
    hull = cv2.convexHull(np.round(px / 4).astype(np.int32))
    cv2.fillConvexPoly(mask, hull, 1)
    tables.masks[key] = mask
    return mask
