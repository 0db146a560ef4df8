"""The board state as 3-D faces (towers, castle, wizards, tokens) and their painting."""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from companion.rules.model import GameState
from companion.rules.serialize import load_state
from companion.sim.render.camera import CameraPose, RenderError, _project
from companion.sim.render.light import Appearance, Lighting
from companion.sim.render_textures import (
    raven_shape,
    star_polygon,
)
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry, TowerShape

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
