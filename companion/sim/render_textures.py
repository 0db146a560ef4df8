"""Flat artwork of the table for the renderer: the table top, the track tiles, crest marks,
fountain/web inserts, setup marks and the ArUco marker sheets, drawn top-down in board mm.

The board texture is an image of the board plane (z = 0) at ``ppm`` pixels per mm covering
``[-pad, width + pad] x [-pad, height + pad]`` mm; pixel ``(col, row)`` has its centre at
``x = (col + 0.5) / ppm - pad`` mm. :mod:`companion.sim.render` warps it into the camera.
Colours are BGR floats 0..255 before lighting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.geometry import BoardGeometry

RAVEN_SILHOUETTE = np.array(
    [
        [-0.95, 0.05],
        [-0.55, -0.10],
        [-0.30, -0.35],
        [-0.05, -0.30],
        [0.10, -0.55],
        [0.30, -0.62],
        [0.42, -0.52],
        [0.62, -0.50],
        [0.45, -0.38],
        [0.40, -0.20],
        [0.55, 0.05],
        [0.40, 0.30],
        [0.15, 0.38],
        [0.25, 0.62],
        [0.10, 0.62],
        [-0.02, 0.42],
        [-0.25, 0.40],
        [-0.30, 0.62],
        [-0.42, 0.62],
        [-0.40, 0.30],
        [-0.65, 0.22],
    ]
)
"""A raven in profile, unit coordinates (about -1..1), for crests and the raven token."""


def star_polygon(points: int = 5, inner: float = 0.45) -> np.ndarray:
    """A star outline in unit coordinates, ``(2 * points, 2)``."""
    a = np.arange(2 * points) * math.pi / points - math.pi / 2
    r = np.where(np.arange(2 * points) % 2 == 0, 1.0, inner)
    return np.stack([np.cos(a) * r, np.sin(a) * r], axis=-1)


def hsv_colour(h_deg: float, s: float, v: float) -> np.ndarray:
    """BGR float 0..255 from hue in degrees, saturation and value 0..1."""
    hsv = np.array([[[h_deg % 360.0 / 2.0, s * 255.0, v * 255.0]]], dtype=np.float32)
    bgr = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)
    return np.asarray(bgr[0, 0], dtype=np.float64)


@dataclass(frozen=True)
class BoardArt:
    """Colours and styles of the flat artwork of one render (drawn by :func:`board_texture`)."""

    table_kind: str  # "oak", "walnut", "white", "felt"
    table_colour: np.ndarray
    grain_scale: float
    landscape: np.ndarray
    path: np.ndarray
    path_edge: np.ndarray
    crest_mark: np.ndarray
    raven_ink: np.ndarray
    wisp: np.ndarray
    water: np.ndarray
    web_ground: np.ndarray
    paper: np.ndarray
    crest_angle: float


def random_board_art(rng: np.random.Generator) -> BoardArt:
    """Plausible table and print colours, varied per render."""
    kind = str(rng.choice(["oak", "walnut", "white", "felt", "oak"]))
    if kind == "oak":
        table = hsv_colour(rng.uniform(26, 38), rng.uniform(0.3, 0.45), rng.uniform(0.5, 0.68))
    elif kind == "walnut":
        table = hsv_colour(rng.uniform(18, 30), rng.uniform(0.45, 0.65), rng.uniform(0.28, 0.42))
    elif kind == "white":
        table = hsv_colour(rng.uniform(30, 60), rng.uniform(0.02, 0.08), rng.uniform(0.78, 0.9))
    else:
        table = hsv_colour(rng.uniform(190, 230), rng.uniform(0.10, 0.25), rng.uniform(0.3, 0.45))
    return BoardArt(
        table_kind=kind,
        table_colour=table,
        grain_scale=float(rng.uniform(0.7, 1.4)),
        landscape=hsv_colour(rng.uniform(80, 110), rng.uniform(0.35, 0.55), rng.uniform(0.35, 0.5)),
        path=hsv_colour(rng.uniform(30, 45), rng.uniform(0.12, 0.25), rng.uniform(0.68, 0.82)),
        path_edge=hsv_colour(rng.uniform(25, 40), rng.uniform(0.25, 0.4), rng.uniform(0.32, 0.45)),
        crest_mark=hsv_colour(rng.uniform(35, 48), rng.uniform(0.35, 0.5), rng.uniform(0.55, 0.7)),
        raven_ink=hsv_colour(
            rng.uniform(200, 260), rng.uniform(0.05, 0.2), rng.uniform(0.08, 0.16)
        ),
        wisp=hsv_colour(rng.uniform(195, 210), rng.uniform(0.5, 0.7), rng.uniform(0.75, 0.9)),
        water=hsv_colour(rng.uniform(190, 205), rng.uniform(0.55, 0.75), rng.uniform(0.6, 0.8)),
        web_ground=hsv_colour(
            rng.uniform(220, 260), rng.uniform(0.05, 0.15), rng.uniform(0.2, 0.3)
        ),
        paper=hsv_colour(rng.uniform(40, 60), rng.uniform(0.0, 0.05), rng.uniform(0.88, 0.97)),
        crest_angle=float(rng.uniform(-0.2, 0.2)),
    )


def _noise(rng: np.random.Generator, small: tuple[int, int], big: tuple[int, int]) -> np.ndarray:
    """Smooth noise ``big = (h, w)``, float32 about 0 +- 1, from ``small`` random cells."""
    n = rng.standard_normal(small).astype(np.float32)
    return cv2.resize(n, (big[1], big[0]), interpolation=cv2.INTER_CUBIC)


def table_texture(
    rng: np.random.Generator, art: BoardArt, size_mm: float, ppm: float
) -> np.ndarray:
    """Table top around the board: ``(n, n, 3) float32`` BGR covering ``size_mm`` square."""
    n = int(size_mm * ppm)
    base = np.ones((n, n, 3), np.float32) * art.table_colour.astype(np.float32)
    if art.table_kind in ("oak", "walnut"):
        # grain: long streaks along x (planks along the table), a few plank joints
        g = _noise(rng, (max(8, int(n / 6 / art.grain_scale)), 6), (n, n))
        g2 = _noise(rng, (max(16, int(n / 2)), 12), (n, n)) * 0.4
        shade = 1.0 + 0.06 * g + 0.03 * g2
        plank = max(40, int(140 * ppm * art.grain_scale))
        shade[::plank, :] *= 0.72
        base *= shade[..., None]
    elif art.table_kind == "felt":
        base *= (1.0 + 0.03 * _noise(rng, (n // 3, n // 3), (n, n)))[..., None]
    else:
        base *= (1.0 + 0.012 * _noise(rng, (n // 40, n // 40), (n, n)))[..., None]
    return base


def _poly(
    img: np.ndarray, pts_mm: np.ndarray, colour: np.ndarray | float, ppm: float, pad: float
) -> None:
    p = np.round((np.asarray(pts_mm) + pad) * ppm * 16.0 - 8.0).astype(np.int32)
    cv2.fillPoly(img, [p], _c(colour), cv2.LINE_AA, shift=4)


def _c(colour: np.ndarray | float) -> tuple[float, ...] | float:
    if isinstance(colour, float | int):
        return float(colour)
    return tuple(float(x) for x in colour)


def _lines(
    img: np.ndarray,
    pts_mm: np.ndarray,
    colour: np.ndarray,
    ppm: float,
    pad: float,
    width_mm: float,
    closed: bool,
) -> None:
    p = np.round((np.asarray(pts_mm) + pad) * ppm * 16.0 - 8.0).astype(np.int32)
    cv2.polylines(
        img, [p], closed, _c(colour), max(1, int(round(width_mm * ppm))), cv2.LINE_AA, shift=4
    )


def raven_shape(
    centre: np.ndarray, radius: float, angle: float, mirror: bool = False
) -> np.ndarray:
    """The raven silhouette placed at ``centre`` (mm), ``radius`` mm, rotated by ``angle`` rad."""
    s = RAVEN_SILHOUETTE * ([-1.0, 1.0] if mirror else [1.0, 1.0])
    c, si = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -si], [si, c]])
    return np.asarray(s @ rot.T * radius + centre, dtype=np.float64)


def board_texture(
    geometry: BoardGeometry,
    art: BoardArt,
    rng: np.random.Generator,
    table: np.ndarray,
    table_ppm: float,
    table_origin_mm: float,
    ppm: float,
    pad: float,
) -> np.ndarray:
    """The board plane seen from above: ``(h, w, 3) float32`` BGR (before lighting).

    :param table: the table texture; ``table_origin_mm`` = board mm of its top-left pixel edge.
    """
    w_mm, h_mm = geometry.board_size
    tw, th = int(round((w_mm + 2 * pad) * ppm)), int(round((h_mm + 2 * pad) * ppm))
    # background: the same table top, resampled to this resolution (seamless with the frame)
    s = table_ppm / ppm
    m = np.array(
        [
            [s, 0.0, (-pad - table_origin_mm) * table_ppm + 0.5 * s - 0.5],
            [0.0, s, (-pad - table_origin_mm) * table_ppm + 0.5 * s - 0.5],
        ]
    )
    img = cv2.warpAffine(
        table,
        m,
        (tw, th),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REFLECT,
    )
    # track tiles: a landscape band a little wider than the path
    band = np.zeros((th, tw), np.float32)
    margin = 0.2 * geometry.track_width
    outer = geometry.loop_edge(+1 + 2 * margin / geometry.track_width, 192)
    inner = geometry.loop_edge(-1 - 2 * margin / geometry.track_width, 192)
    _poly(band, outer, 1.0, ppm, pad)
    _poly(band, inner, 0.0, ppm, pad)
    land_noise = _noise(rng, (th // 24 + 2, tw // 24 + 2), (th, tw))
    fine = _noise(rng, (th // 4, tw // 4), (th, tw))
    land = art.landscape.astype(np.float32) * (1.0 + 0.18 * land_noise + 0.08 * fine)[..., None]
    # darker rim where the cardboard tiles end (their thickness)
    rim = np.zeros((th, tw), np.float32)
    _lines(rim, outer, np.array([1.0]), ppm, pad, 1.6, True)
    _lines(rim, inner, np.array([1.0]), ppm, pad, 1.6, True)
    img = img * (1.0 - band[..., None]) + land * band[..., None]
    img = img * (1.0 - 0.45 * rim)[..., None]
    # path spaces: stone slabs
    stone = art.path.astype(np.float32)
    slab = np.zeros((th, tw), np.float32)
    tints = 1.0 + rng.normal(0.0, 0.04, geometry.n_spaces)
    slab_img = np.zeros((th, tw, 3), np.float32)
    for s_ in geometry.spaces:
        out = geometry.space_outline(s_, 9)
        c = geometry.space_centre(s_)
        shrunk = c + (out - c) * 0.965
        _poly(slab, shrunk, 1.0, ppm, pad)
        _poly(slab_img, shrunk, stone * tints[s_ - 1], ppm, pad)
    slab_img *= (1.0 + 0.07 * fine + 0.05 * land_noise)[..., None]
    img = img * (1.0 - slab[..., None]) + slab_img * slab[..., None]
    # edges between slabs and along the path
    for s_ in geometry.spaces:
        out = geometry.space_outline(s_, 9)
        c = geometry.space_centre(s_)
        _lines(img, c + (out - c) * 0.965, art.path_edge, ppm, pad, 0.9, True)
    for joint in geometry.tile_joints():
        _lines(img, joint, art.path_edge * 0.6, ppm, pad, 1.2, False)
    # inserts
    for s_, kind in geometry.track.special.items():
        c = geometry.space_centre(s_)
        r = geometry.surface_radius(0) * 0.92
        circle = c + r * np.stack(
            [
                np.cos(np.linspace(0, 2 * np.pi, 48, endpoint=False)),
                np.sin(np.linspace(0, 2 * np.pi, 48, endpoint=False)),
            ],
            -1,
        )
        _poly(img, circle, art.path_edge * 1.1, ppm, pad)
        inner_c = c + (circle - c) * 0.82
        if kind == "fountain":
            _poly(img, inner_c, art.water, ppm, pad)
            for k in (0.3, 0.5, 0.68):
                _lines(
                    img,
                    c + (circle - c) * k,
                    np.minimum(art.water * 1.35, 255),
                    ppm,
                    pad,
                    0.8,
                    True,
                )
        else:
            _poly(img, inner_c, art.web_ground, ppm, pad)
            silk = np.array([225.0, 228.0, 230.0])
            for a in np.linspace(0, 2 * np.pi, 8, endpoint=False):
                d = np.array([math.cos(a), math.sin(a)])
                _lines(img, np.array([c, c + d * r * 0.8]), silk, ppm, pad, 0.6, False)
            for k in (0.2, 0.4, 0.6, 0.8):
                ring = c + (circle[::6] - c) * k
                _lines(img, ring, silk, ppm, pad, 0.5, True)
    # raven crests printed on the crest spaces
    for s_ in geometry.track.crest:
        mark = geometry.crest_mark(s_)
        if mark is None:
            continue
        c, r = mark
        ang = np.linspace(0, 2 * np.pi, 40, endpoint=False)
        circle = c + r * np.stack([np.cos(ang), np.sin(ang)], -1)
        _poly(img, circle, art.crest_mark, ppm, pad)
        _lines(img, circle, art.path_edge, ppm, pad, 1.0, True)
        d = geometry.space_direction(s_)
        _poly(
            img,
            raven_shape(c, r * 0.72, math.atan2(d[1], d[0]) + art.crest_angle),
            art.raven_ink,
            ppm,
            pad,
        )
    # setup marks (R-TRACK-4): little blue will-o'-wisps on base spaces 2-10
    base_spaces = [s_ for s_ in geometry.spaces if s_ not in geometry.track.special]
    for i, s_ in enumerate(base_spaces[1:10]):
        count = 3 - i // 3
        c = geometry.space_centre(s_)
        d = geometry.space_direction(s_)
        nrm = np.array([-d[1], d[0]])
        edge = c - nrm * geometry.track_width * 0.40
        for j in range(count):
            p = edge + d * (j - (count - 1) / 2) * 6.0
            ang = np.linspace(0, 2 * np.pi, 12, endpoint=False)
            drop = p + np.stack([np.cos(ang) * 1.6, np.sin(ang) * 1.6], -1)
            _poly(img, drop, art.wisp, ppm, pad)
    # what players leave in the middle of the track: move cards, spell tiles, the die
    _clutter(img, geometry, rng, ppm, pad)
    # marker sheets
    aruco = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, geometry.marker_dictionary))
    quiet = 8.0
    for mid, corners in geometry.marker_corners().items():
        lo = corners.min(axis=0) - quiet
        hi = corners.max(axis=0) + quiet
        sheet = np.array([lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]])
        _poly(img, sheet, art.paper, ppm, pad)
        x0, y0 = np.round((corners[0] + pad) * ppm).astype(int)
        side = int(round(geometry.marker_side * ppm))
        mk = cv2.aruco.generateImageMarker(aruco, int(mid), side, borderBits=1)
        ink = mk.astype(np.float32) / 255.0
        patch = art.paper.astype(np.float32) * (0.06 + 0.94 * ink[..., None])
        img[y0 : y0 + side, x0 : x0 + side] = patch
    return np.asarray(img, dtype=np.float32)


def _rect(centre: np.ndarray, w: float, h: float, angle: float, r: float = 0.0) -> np.ndarray:
    """A (rounded) rectangle outline, mm."""
    hw, hh = w / 2, h / 2
    if r <= 0:
        pts = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
    else:
        arcs = []
        for cx, cy, a0 in (
            (hw - r, -hh + r, -90),
            (hw - r, hh - r, 0),
            (-hw + r, hh - r, 90),
            (-hw + r, -hh + r, 180),
        ):
            a = np.radians(a0 + np.linspace(0, 90, 5))
            arcs.append(np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], -1))
        pts = np.concatenate(arcs)
    c, s = math.cos(angle), math.sin(angle)
    return np.asarray(pts @ np.array([[c, s], [-s, c]]) + centre, dtype=np.float64)


def _clutter(
    img: np.ndarray, g: BoardGeometry, rng: np.random.Generator, ppm: float, pad: float
) -> None:
    """Flat things inside the loop (players keep them there): a draw and a discard pile of move
    cards, 2-5 spell tiles and sometimes the die. Nothing is put on the track itself."""
    centre = g.loop_centre
    inner = (
        g.perimeter / (8.0 - 8.0 * g.corner_ratio + 2.0 * math.pi * g.corner_ratio)
        - g.track_width * 0.7
        - 10.0
    )
    if inner < 50:
        return
    back = hsv_colour(rng.uniform(200, 250), rng.uniform(0.4, 0.7), rng.uniform(0.3, 0.5))
    edge = hsv_colour(rng.uniform(40, 50), rng.uniform(0.2, 0.4), rng.uniform(0.8, 0.95))
    face = hsv_colour(rng.uniform(35, 50), rng.uniform(0.1, 0.25), rng.uniform(0.85, 0.95))
    items: list[tuple[np.ndarray, float, float]] = []

    def place(w: float, h: float) -> tuple[np.ndarray, float] | None:
        for _ in range(20):
            p = centre + rng.uniform(-inner + max(w, h) / 2, inner - max(w, h) / 2, 2)
            if all(np.linalg.norm(p - q) > (max(w, h) + max(a, b)) / 2 * 0.8 for q, a, b in items):
                items.append((p, w, h))
                return p, float(rng.uniform(-0.4, 0.4))
        return None

    if rng.random() < 0.8:
        got = place(57.0, 87.0)
        if got is not None:
            p, a = got
            for k in range(int(rng.integers(2, 6))):  # a pile: slightly shifted cards
                q = p + rng.normal(0, 0.8, 2) - k * 0.3
                _poly(img, _rect(q, 57.0, 87.0, a + rng.normal(0, 0.02), 3.0), edge * 0.8, ppm, pad)
            _poly(img, _rect(p, 57.0, 87.0, a, 3.0), edge, ppm, pad)
            _poly(img, _rect(p, 50.0, 80.0, a, 2.0), back, ppm, pad)
            _poly(img, star_polygon(6, 0.5) * 12.0 + p, edge, ppm, pad)
    if rng.random() < 0.6:
        got = place(57.0, 87.0)
        if got is not None:
            p, a = got
            _poly(img, _rect(p, 57.0, 87.0, a, 3.0), face, ppm, pad)
            ink = hsv_colour(rng.uniform(0, 360), rng.uniform(0.3, 0.6), rng.uniform(0.3, 0.5))
            _poly(img, _rect(p, 20.0, 20.0, a + 0.8, 0.0), ink, ppm, pad)
    for _ in range(int(rng.integers(2, 6))):
        got = place(42.0, 42.0)
        if got is None:
            break
        p, a = got
        _poly(img, _rect(p, 42.0, 42.0, a, 4.0), face * 0.95, ppm, pad)
        _lines(img, _rect(p, 42.0, 42.0, a, 4.0), face * 0.6, ppm, pad, 0.6, True)
        mark = hsv_colour(rng.uniform(0, 360), rng.uniform(0.2, 0.5), rng.uniform(0.35, 0.6))
        _poly(img, star_polygon(int(rng.integers(3, 7)), 0.5) * 11.0 + p, mark, ppm, pad)
    if rng.random() < 0.5:
        got = place(16.0, 16.0)
        if got is not None:
            p, a = got
            _poly(img, _rect(p, 16.0, 16.0, a, 2.5), np.array([238.0, 240.0, 242.0]), ppm, pad)
            n = int(rng.integers(1, 7))
            pips = {
                1: [(0, 0)],
                2: [(-1, -1), (1, 1)],
                3: [(-1, -1), (0, 0), (1, 1)],
                4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
                5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
                6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
            }[n]
            c, s_ = math.cos(a), math.sin(a)
            for dx, dy in pips:
                q = p + np.array([dx * c - dy * s_, dx * s_ + dy * c]) * 4.2
                ang = np.linspace(0, 2 * np.pi, 10, endpoint=False)
                _poly(
                    img,
                    q + 1.4 * np.stack([np.cos(ang), np.sin(ang)], -1),
                    np.array([30.0, 30.0, 30.0]),
                    ppm,
                    pad,
                )
