"""Fitting a colour profile to a frame of the setup position.

The setup tells what stands where (R-SETUP-1: castle on space 1; R-SETUP-3: crest towers on 2, 4,
6, 8, 10, plain towers on 3, 5, 7, 9; R-SETUP-6: the wizards on those roofs in seat order), so
each class is learnt from the pixels of a known surface: the roofs, walls, track, crest marks,
inserts and tokens first, then the wizards from what no surface class explains. Each step is a
function over one :class:`SetupView` (the frame, its board pose and white reference).

This module knows nothing of the detector; :func:`companion.vision.profile_setup.build_profile`
adds the detector's measurement of one wizard's area in the same frame.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules import Config, observe, setup
from companion.rules.observation import SpaceObservation
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry, TowerShape
from companion.vision.markers import (
    BoardPose,
    MarkerDetector,
    PoseError,
    consistent_markers,
    estimate_board_pose,
)
from companion.vision.profile import (
    COV_FLOOR,
    MAGIC_ROOF,
    MIN_LIGHT,
    OTHER,
    ROOF,
    TOKEN_D2,
    TRACK,
    WITCH_CHROMA,
    WIZARD,
    ColourClass,
    ColourProfile,
    ProfileError,
    default_profile,
    features,
    white_from_markers,
)


def polar_disc(rings: int = 5) -> NDArray[np.float64]:
    """Unit-disc sample offsets on ``rings`` rings (centre + 6, 12, 18, ... points)."""
    pts = [(0.0, 0.0)]
    for i in range(1, rings + 1):
        n = 6 * i
        r = i / rings
        for j in range(n):
            a = 2 * math.pi * (j + 0.5 * (i % 2)) / n
            pts.append((r * math.cos(a), r * math.sin(a)))
    return np.array(pts)


def _gather(frame: NDArray[np.uint8], px: NDArray[Any]) -> NDArray[np.uint8]:
    h, w = frame.shape[:2]
    p = np.round(np.asarray(px).reshape(-1, 2)).astype(int)
    ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    p = p[ok]
    out: NDArray[np.uint8] = frame[p[:, 1], p[:, 0]]
    return out


def _wizard_fit(name: str, feats: NDArray[Any], prior: NDArray[Any]) -> ColourClass:
    """A wizard colour from the pixels assigned to it: the dominant mode, unless leftover track,
    roof or wall pixels outnumber the wizard's own; then the mode that starts at the prior
    prototype. Of the two, the one whose chroma (rg, yb) lies nearer the prior wins."""
    mode = robust_fit(name, WIZARD, feats)
    near = robust_fit(name, WIZARD, feats, start=prior)
    p = np.asarray(prior, np.float64)[:2]
    return mode if np.linalg.norm(mode.mean[:2] - p) <= np.linalg.norm(near.mean[:2] - p) else near


def robust_fit(
    name: str,
    group: str,
    feats: NDArray[Any],
    rounds: int = 4,
    start: NDArray[Any] | None = None,
) -> ColourClass:
    """Fit the dominant mode of ``feats`` (other objects' pixels are trimmed away), or the mode
    reached from ``start`` when given."""
    f = np.asarray(feats, np.float64).reshape(-1, 3)
    if f.shape[0] < 5:
        raise ProfileError(f"{name}: only {f.shape[0]} pixels to learn the colour from")
    if start is not None:
        centre = np.asarray(start, np.float64)
        cov = np.diag([0.06**2, 0.12**2, 0.2**2])
        keep = f
        for _ in range(rounds + 2):
            inv = np.linalg.inv(cov + COV_FLOOR)
            d = f - centre
            d2 = np.einsum("ni,ij,nj->n", d, inv, d)
            keep = f[d2 <= 9.0]
            if keep.shape[0] < 5:
                keep = f[np.argsort(d2)[: max(5, f.shape[0] // 4)]]
            centre = keep.mean(axis=0)
            cov = np.cov(keep.T)
        return ColourClass(name, group, centre, cov, int(keep.shape[0]))
    # start from the densest cell of a coarse histogram (the mode), not the median: on a roof
    # the wizards standing on it can be a third of the pixels
    bins = np.floor(f / np.array([0.04, 0.06, 0.1])).astype(np.int64)
    cells, inverse, counts = np.unique(bins, axis=0, return_inverse=True, return_counts=True)
    mode = int(np.argmax(counts))
    keep = f[inverse.reshape(-1) == mode]
    centre = np.median(keep, axis=0)
    cov = np.diag([0.02**2, 0.03**2, 0.08**2])
    for _ in range(rounds):
        inv = np.linalg.inv(cov + COV_FLOOR)
        d = f - centre
        d2 = np.einsum("ni,ij,nj->n", d, inv, d)
        keep = f[d2 <= 9.0]
        if keep.shape[0] < 5:
            keep = f[np.argsort(d2)[: max(5, f.shape[0] // 3)]]
        centre = keep.mean(axis=0)
        cov = np.cov(keep.T)
    return ColourClass(name, group, centre, cov, int(keep.shape[0]))


# ---------------------------------------------------------------------------------------------
# the setup frame seen from the board


@dataclass(frozen=True, slots=True)
class SetupView:
    """One frame of the setup position with its board pose: where the board's surfaces fall
    in the image and the colour features of the pixels there.

    :param frame: ``(H, W, 3) uint8 BGR``.
    :param pose: the board pose (3-D, from the camera model).
    :param geometry: the board geometry.
    :param white: ``(3,)`` BGR of the markers' white paper in this frame.
    :param cam_xy: ``(2,)`` camera centre over the board, mm.
    """

    frame: NDArray[np.uint8]
    pose: BoardPose
    geometry: BoardGeometry
    white: NDArray[np.float64]
    cam_xy: NDArray[np.float64]

    @property
    def tier(self) -> float:
        """Height of one tower, mm."""
        return self.geometry.tower.height

    @property
    def roof_r(self) -> float:
        """Radius of a tower's roof, mm."""
        return self.geometry.tower.roof_diameter / 2

    def proj(self, xyz: NDArray[Any]) -> NDArray[np.float64]:
        """Board points ``(N, 3)`` mm with z up -> image ``(N, 2)`` px."""
        p = np.asarray(xyz, np.float64).reshape(-1, 3).copy()
        p[:, 2] = -p[:, 2]
        return self.pose.project(p)

    def gather(self, xyz: NDArray[Any]) -> NDArray[np.uint8]:
        """BGR pixels ``(N, 3)`` under the board points that fall inside the frame."""
        return _gather(self.frame, self.proj(xyz))

    def disc_pixels(self, space: int, z: float, r: float) -> NDArray[np.uint8]:
        """Pixels on a disc of radius ``r`` mm round a space at height ``z`` mm."""
        c = self.geometry.space_centre(space)
        disc = polar_disc(5)
        return self.gather(np.column_stack([c + disc * r, np.full(len(disc), z)]))

    def wall_pixels(self, space: int, shape: TowerShape, z0: float) -> NDArray[np.uint8]:
        """Pixels on the camera-facing side of a tower (or the castle) standing at ``z0`` mm."""
        c = self.geometry.space_centre(space)
        to_cam = self.cam_xy - c
        base_a = math.atan2(to_cam[1], to_cam[0])
        pts = []
        for da in np.radians(np.linspace(-45, 45, 7)):
            for fz in np.linspace(0.2, 0.75, 4):
                r = (shape.base_diameter + (shape.roof_diameter - shape.base_diameter) * fz) / 2
                a = base_a + da
                pts.append((c[0] + r * math.cos(a), c[1] + r * math.sin(a), z0 + fz * shape.height))
        return self.gather(np.array(pts))

    def ring_pixels(self, space: int, z: float, r: float) -> NDArray[np.uint8]:
        """Pixels on a ring of radius ``r`` mm round a space at height ``z`` mm."""
        c = self.geometry.space_centre(space)
        a = np.linspace(0.0, 2 * math.pi, 96, endpoint=False)
        pts = np.column_stack([c[0] + r * np.cos(a), c[1] + r * np.sin(a), np.full(len(a), z)])
        return self.gather(pts)

    def f(self, px: NDArray[Any]) -> NDArray[np.float32]:
        """Colour features ``(N, 3)`` of BGR pixels against this frame's white."""
        return features(px.reshape(-1, 3), self.white)


def locate_board(
    frame: NDArray[np.uint8], camera: CameraModel, geometry: BoardGeometry
) -> tuple[SetupView, CameraModel]:
    """The board pose and the markers' white in a setup frame.

    :returns: the view and the camera model scaled to the frame.
    :raises ProfileError: on a frame that is no ``(H, W, 3) uint8`` image, when the board or
        the markers' white cells are not found.
    """
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.dtype != np.uint8:
        raise ProfileError("setup frame: expected an (H, W, 3) uint8 BGR image")
    h, w = frame.shape[:2]
    cam = camera if tuple(camera.size) == (w, h) else camera.scaled_to(w, h)
    det = MarkerDetector(geometry.marker_dictionary, ids=geometry.marker_ids)
    found = det.detect(frame)
    if len(found) < len(geometry.marker_ids):  # blurred markers: the lenient pass, checked
        found = consistent_markers(found, det.detect_lenient(frame), geometry.marker_corners(), cam)
    try:
        pose = estimate_board_pose(found, geometry.marker_corners(), cam)
    except PoseError as exc:
        raise ProfileError(f"setup frame: board not found ({exc})") from None
    white = white_from_markers(frame, found)
    if white is None:
        raise ProfileError("setup frame: no white marker cells to balance the colours")
    centre = pose.camera_position_mm()
    if centre is None:
        raise ProfileError("setup frame: the board pose has no camera position")
    view = SetupView(frame, pose, geometry, white, np.asarray(centre[:2], np.float64))
    return view, cam


def expected_spaces(
    colours: Sequence[str], geometry: BoardGeometry, expected: object = None
) -> dict[int, SpaceObservation]:
    """What stands on each space in the setup position shown.

    :param expected: an :class:`~companion.rules.observation.Observation` (default: the base
        game's setup for ``colours``, R-SETUP-1..6).
    :raises ProfileError: for an invalid player count or colours, when ``expected`` is no
        Observation or names spaces the board's track does not have.
    """
    try:
        cfg = Config(player_count=len(colours), colours=tuple(colours))
    except ValueError as exc:
        raise ProfileError(f"players: {exc}") from None
    if expected is None:
        expected = observe(setup(cfg, seed=None))
    given = getattr(expected, "spaces", None)
    if not isinstance(given, Mapping):
        raise ProfileError("expected: not an Observation of the setup position")
    spaces: dict[int, SpaceObservation] = dict(given)
    missing = [n for n in spaces if n not in geometry.spaces]
    if missing:
        raise ProfileError(f"expected: spaces {missing} are not on the board's track")
    return spaces


# ---------------------------------------------------------------------------------------------
# the surfaces


@dataclass(slots=True)
class SurfaceSamples:
    """Pixels of a board's surfaces, gathered space by space: ``chunks`` by class name
    (``roof-crest``, ``roof-plain``, ``wall``, ``track``, ``track-crest``, ``track-fountain``,
    ``track-web``, ``castle``; each chunk ``(N, 3) uint8 BGR``) and the spaces whose magic
    tower roof is bare (sampled by the setup fit's own steps)."""

    chunks: dict[str, list[NDArray[np.uint8]]]
    magic_spaces: list[int]


def surface_samples(view: SetupView, board: Mapping[int, SpaceObservation]) -> SurfaceSamples:
    """Sample every space's visible surface by what ``board`` says stands there, at any tier.

    A crest roof inside its crest disc (the disc covers 0.62..0.7 of the roof's radius), a
    plain roof out to 0.8 of it, the wall of the tier below a roof, the raven castle's roof and
    wall, a bare track space (a crest mark inside the mark, the track in a ring outside it) and
    a bare insert tile. Spaces with wizards or tokens on the track, and the magic tower's violet
    walls, are not sampled. Used by the setup fit (every tower one tier high, R-SETUP-3) and by
    the learning from committed boards (:mod:`companion.vision.profile_learn`).
    """
    g = view.geometry
    chunks: dict[str, list[NDArray[np.uint8]]] = {}
    magic: list[int] = []

    def add(name: str, px: NDArray[np.uint8]) -> None:
        chunks.setdefault(name, []).append(px)

    for space, o in board.items():
        if space not in g.spaces:
            continue
        if o.castle:
            add(
                "castle", view.disc_pixels(space, g.castle.height, g.castle.roof_diameter / 2 * 0.7)
            )
            add("castle", view.wall_pixels(space, g.castle, 0.0))
            continue
        z_top = g.tier_z(o.towers)
        if o.towers >= 1 and o.top in ("crest", "plain"):
            if o.top == "crest":
                add("roof-crest", view.disc_pixels(space, z_top, view.roof_r * 0.55))
            else:
                add("roof-plain", view.disc_pixels(space, z_top, view.roof_r * 0.8))
            add("wall", view.wall_pixels(space, g.tower, z_top - view.tier))
        elif o.towers >= 1 and o.top == "magic":
            if not o.wizards:
                magic.append(space)
        elif o.towers == 0 and not o.wizards and not o.witch and not o.raven:
            kind = g.track.kind(space)
            mark = g.crest_mark(space)
            if kind in ("fountain", "web"):
                add(f"track-{kind}", view.disc_pixels(space, 0.0, g.surface_radius(0) * 0.8))
            elif mark is not None:
                add("track-crest", view.disc_pixels(space, 0.0, mark[1] * 0.6))
                disc = polar_disc(5)
                ring = disc[np.linalg.norm(disc, axis=1) > 0.85]
                c = g.space_centre(space)
                r = g.surface_radius(0) * 0.9
                add("track", view.gather(np.column_stack([c + ring * r, np.zeros(len(ring))])))
            else:
                add("track", view.disc_pixels(space, 0.0, g.surface_radius(0) * 0.8))
    return SurfaceSamples(chunks, magic)


def _fit_magic(view: SetupView, magic_spaces: list[int], classes: dict[str, ColourClass]) -> None:
    """The magic tower's roof (``roof-magic-star``, ``roof-magic``) and merlons
    (``wall-magic``), added to ``classes`` (R-MOD-MAGICTOWER-1).

    The magic roof is printed in two colours: a five-pointed star (its inner corners at 0.29,
    its tips at 0.7 of the roof's radius) on a field. The star is learnt from the roof's
    middle; the field from rings between the star's arms, less what the star explains (the
    densest of the rest: blurred edges mix the two, and the merlons' colour bleeds onto the
    roof's outer rim).
    """
    g, roof_r = view.geometry, view.roof_r
    middle = view.f(
        np.concatenate([view.disc_pixels(s, view.tier, roof_r * 0.2) for s in magic_spaces])
    )
    if middle.shape[0] >= 8:
        classes["roof-magic-star"] = robust_fit("roof-magic-star", ROOF, middle)
    ring = view.f(
        np.concatenate(
            [
                view.ring_pixels(s, view.tier, roof_r * r)
                for s in magic_spaces
                for r in (0.45, 0.55, 0.65)
            ]
        )
    )
    if "roof-magic-star" in classes:
        star = ColourProfile({"m": classes["roof-magic-star"]})
        ring = ring[star.distances(ring)[:, 0] > star.reject_d2]
    classes["roof-magic"] = robust_fit("roof-magic", ROOF, ring)
    # the magic tower's merlons and walls (a pale violet: the nearest wizard colour is purple
    # or blue): the tops of the merlons, less what the roof's two colours explain; the merlons'
    # ring lies between their inner and outer radius (see the tower's shape)
    merlon_r = roof_r - max(2.5, 0.08 * g.tower.roof_diameter) / 2
    tops = view.f(
        np.concatenate(
            [view.ring_pixels(s, view.tier + g.tower.merlon_height, merlon_r) for s in magic_spaces]
        )
    )
    painted = ColourProfile({n: classes[n] for n in MAGIC_ROOF if n in classes})
    tops = tops[painted.distances(tops).min(axis=1) > painted.reject_d2]
    if tops.shape[0] >= 8:
        classes["wall-magic"] = robust_fit("wall-magic", OTHER, tops)


def _fit_surfaces(
    view: SetupView, expected: Mapping[int, SpaceObservation], classes: dict[str, ColourClass]
) -> None:
    """The roofs, walls, track, crest marks, inserts, the landscape beside the track and the
    castle, added to ``classes``."""
    g = view.geometry
    px = surface_samples(view, expected)
    if px.magic_spaces:
        _fit_magic(view, px.magic_spaces, classes)
    for name, group in (
        ("roof-crest", ROOF),
        ("roof-plain", ROOF),
        ("wall", OTHER),
        ("track", TRACK),
        ("track-crest", TRACK),
        ("track-fountain", TRACK),
        ("track-web", TRACK),
    ):
        chunks = px.chunks.get(name, [])
        if chunks:
            classes[name] = robust_fit(name, group, view.f(np.concatenate(chunks)))
    # the printed landscape just outside the track band on both sides (the wizards' hulls on an
    # empty space reach it at an oblique view)
    border = np.concatenate([g.loop_edge(1.15, 160), g.loop_edge(-1.15, 160)])
    border_px = view.gather(np.column_stack([border, np.zeros(len(border))]))
    if len(border_px) >= 20:
        classes["border"] = robust_fit("border", TRACK, view.f(border_px))
    castle_space = next((s for s, o in expected.items() if o.castle), None)
    if castle_space is not None:
        top = view.disc_pixels(castle_space, g.castle.height, g.castle.roof_diameter / 2 * 0.7)
        side = view.wall_pixels(castle_space, g.castle, 0.0)
        classes["castle"] = robust_fit("castle", OTHER, view.f(np.concatenate([top, side])))


def _fit_tokens(
    view: SetupView, expected: Mapping[int, SpaceObservation], classes: dict[str, ColourClass]
) -> None:
    """The ``raven`` and ``witch`` tokens, added to ``classes`` (R-MOD-WITCH-1, R-MOD-RAVEN-1:
    both on the space after the last tower).

    Of the pixels on their space that the track does not explain, the witch is the largest
    coloured mode (a green-blue disc), the raven the pale one (a white disc, lighter than the
    sandy track); their dark printed hat and raven are not learnt.
    """
    g = view.geometry
    token_space = next(
        (
            n
            for n, o in expected.items()
            if (o.witch or o.raven) and not o.wizards and not o.towers and not o.castle
        ),
        None,
    )
    surf_names = [n for n in ("track", "track-crest") if n in classes]
    if token_space is None or not surf_names:
        return
    tok = expected[token_space]
    surf = ColourProfile({n: classes[n] for n in surf_names})
    c = g.space_centre(token_space)
    rr = g.surface_radius(0) * 0.9
    dense = polar_disc(16)
    pts = np.column_stack([c + dense * rr, np.full(len(dense), g.witch.thickness)])
    tf = view.f(view.gather(pts))
    tf = tf[tf[:, 2] >= MIN_LIGHT]
    d_surf = surf.distances(tf).min(axis=1)
    track_light = float(classes["track"].mean[2]) if "track" in classes else 0.0
    if tok.raven:
        # (the white disc is near the track's colour: two spreads from it, and lighter)
        pale = tf[(d_surf > TOKEN_D2) & (tf[:, 2] > track_light)]
        if pale.shape[0] >= 8:
            raven = robust_fit("raven", OTHER, pale)
            classes["raven"] = raven
            keep = ColourProfile({"m": raven}).distances(tf)[:, 0] > surf.reject_d2
            tf, d_surf = tf[keep], d_surf[keep]
    tf = tf[d_surf > surf.reject_d2]
    if tok.witch:
        modes: list[ColourClass] = []
        while tf.shape[0] >= 8 and len(modes) < 3:
            m = robust_fit("witch", OTHER, tf)
            modes.append(m)
            tf = tf[ColourProfile({"m": m}).distances(tf)[:, 0] > surf.reject_d2]
        # the largest coloured mode (the hat, the token's shaded side and its shadow are
        # smaller, darker or grey)
        coloured = [m for m in modes if float(np.hypot(*m.mean[:2])) >= WITCH_CHROMA]
        if coloured:
            classes["witch"] = max(coloured, key=lambda m: m.samples)
        elif modes:
            classes["witch"] = max(modes, key=lambda m: float(np.hypot(*m.mean[:2])))


CHROMA_SCALE = np.array([0.04, 0.06])
"""Feature units of one step of chroma (rg, yb) when colour groups are split."""


def _split(feats: NDArray[Any], k: int) -> list[NDArray[Any]]:
    """``feats (n, 3)`` split into ``k`` groups by chroma (k-means, seeded: the same frame
    gives the same profile)."""
    if k <= 1 or feats.shape[0] < 2 * k:
        return [feats] * max(k, 1)
    data = (np.asarray(feats, np.float64)[:, :2] / CHROMA_SCALE).astype(np.float32)
    cv2.setRNGSeed(12345)
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.01)
    _, lab, _ = cv2.kmeans(data, k, np.zeros(0, np.int32), crit, 5, cv2.KMEANS_PP_CENTERS)
    lab = lab.reshape(-1)
    return [feats[lab == j] for j in range(k)]


def _name_groups(
    per_space: Sequence[tuple[list[str], NDArray[np.float32]]],
    colours: Sequence[str],
    prior: Mapping[str, NDArray[np.float64]],
) -> dict[str, ColourClass]:
    """The wizard colours from the setup roofs without any distance gate: per roof the
    unexplained pixels split into one group per colour standing there, each group given the
    name whose prior chroma makes the whole roof's naming nearest (every permutation: at
    most 3 colours share a roof, R-SETUP-6), the groups of a name pooled and its dominant
    mode fitted.

    :raises ProfileError: when a colour gets fewer than 12 pixels.
    """
    pooled: dict[str, list[NDArray[Any]]] = {c: [] for c in colours}
    for names, feats_ in per_space:
        if feats_.shape[0] == 0:
            continue
        groups = _split(feats_, len(names))
        centres = [np.median(g_[:, :2], axis=0) if len(g_) else np.full(2, np.inf) for g_ in groups]
        best: tuple[float, tuple[int, ...]] | None = None
        for perm in itertools.permutations(range(len(names))):
            cost = sum(
                float(np.sum(((centres[gi] - prior[names[ni]][:2]) / CHROMA_SCALE) ** 2))
                for ni, gi in enumerate(perm)
            )
            if best is None or cost < best[0]:
                best = (cost, perm)
        assert best is not None
        for ni, gi in enumerate(best[1]):
            pooled[names[ni]].append(groups[gi])
    out: dict[str, ColourClass] = {}
    for c in colours:
        chunk = np.concatenate(pooled[c]) if pooled[c] else np.zeros((0, 3), np.float32)
        if chunk.shape[0] < 12:
            raise ProfileError(f"{c}: too few wizard pixels found on the setup roofs")
        out[c] = _wizard_fit(c, chunk, np.asarray(prior[c]))
    return out


def _fit_wizards(
    view: SetupView,
    expected: Mapping[int, SpaceObservation],
    colours: Sequence[str],
    base: ColourProfile | None,
    surfaces: ColourProfile,
) -> dict[str, ColourClass]:
    """The wizard colours in play (R-SETUP-6: known wizards on known roofs).

    The pixels of each setup roof's wizard cylinder that no surface class explains are first
    split into one group per colour standing there and named by their chroma's order
    (:func:`_name_groups`: the default colours name the groups, they never gate pixels out);
    then two rounds assign them to the nearest fitted colour among those on that roof.

    :raises ProfileError: when a colour gets fewer than 12 pixels.
    """
    g = view.geometry
    start = base or default_profile()
    wiz: dict[str, ColourClass] = {c: start.classes[c] for c in colours if c in start.classes}
    for c in colours:
        if c not in wiz:
            wiz[c] = default_profile().classes[c]
    roof_r = view.roof_r
    cyl = np.array(
        [
            (x * roof_r * 0.9, y * roof_r * 0.9, zf)
            for x, y in polar_disc(5)
            for zf in np.linspace(0.1, 0.9, 5)
        ]
    )
    per_space: list[tuple[list[str], NDArray[np.float32]]] = []
    for space, o in expected.items():
        if not o.wizards:
            continue
        centre = g.space_centre(space)
        z0 = g.tier_z(o.towers)
        pts = np.column_stack([centre + cyl[:, :2], z0 + cyl[:, 2] * g.wizard.height])
        feats_ = view.f(view.gather(pts))
        d_surf = surfaces.distances(feats_).min(axis=1)
        per_space.append((sorted(o.wizards), feats_[d_surf > surfaces.reject_d2]))
    prior = {c: np.asarray(wiz[c].mean, np.float64) for c in colours}
    # first round without the default colours' reach: each roof's unexplained pixels split
    # into as many colour groups as colours stand there, the groups named by the order of
    # their chroma (the defaults only name them; this set's paint, this lamp and this camera's
    # white balance move every colour); then the fitted colours assign the pixels again
    wiz = _name_groups(per_space, colours, prior)
    for _ in range(2):
        prof = ColourProfile(dict(wiz))
        pooled: dict[str, list[NDArray[np.float32]]] = {c: [] for c in colours}
        for names, feats_ in per_space:
            if feats_.shape[0] == 0:
                continue
            dist = prof.distances(feats_, only=names)
            idx = np.argmin(dist, axis=1)
            d2 = dist[np.arange(len(idx)), idx]
            for j, n in enumerate(names):
                pooled[n].append(feats_[(idx == j) & (d2 < 4 * prof.reject_d2)])
        new: dict[str, ColourClass] = {}
        for c in colours:
            chunk = np.concatenate(pooled[c]) if pooled[c] else np.zeros((0, 3), np.float32)
            if chunk.shape[0] < 12:
                raise ProfileError(f"{c}: too few wizard pixels found on the setup roofs")
            new[c] = _wizard_fit(c, chunk, wiz[c].mean)
        wiz = new
    return wiz


def fit_profile(
    frame: NDArray[np.uint8],
    camera: CameraModel,
    geometry: BoardGeometry,
    colours: Sequence[str],
    *,
    base: ColourProfile | None = None,
    expected: object = None,
) -> tuple[ColourProfile, CameraModel, dict[int, SpaceObservation]]:
    """Sample a colour profile from a frame of the setup position (the colours only).

    Learnt: ``roof-crest``, ``roof-plain``, ``wall``, ``castle``, ``track``, ``track-crest``,
    ``border`` (the landscape beside the track) and the wizard colours in play; with the
    expansion's setup (``expected``) also ``roof-magic`` and ``roof-magic-star`` (the magic
    tower's roof, a field with a printed star), ``wall-magic`` (its violet merlons and walls,
    not learnt into ``wall``), the insert tiles (``track-fountain``, ``track-web``) and the
    ``witch`` and ``raven`` tokens. Parameters as
    :func:`companion.vision.profile_setup.build_profile`.

    :returns: the profile, the camera scaled to the frame and the setup's spaces.
    :raises ProfileError: when the board is not found or a colour cannot be sampled.
    """
    view, cam = locate_board(frame, camera, geometry)
    spaces = expected_spaces(colours, geometry, expected)
    classes: dict[str, ColourClass] = {}
    _fit_surfaces(view, spaces, classes)
    _fit_tokens(view, spaces, classes)
    classes.update(_fit_wizards(view, spaces, colours, base, ColourProfile(dict(classes))))
    wb = (float(view.white[0]), float(view.white[1]), float(view.white[2]))
    meta: dict[str, Any] = {
        "colours": list(colours),
        "players": len(colours),
        "towers": int(sum(o.towers for o in spaces.values())),
        "track": geometry.track.to_json(),
        # the expansion's tokens in play (on the board from the setup on), whether or not
        # their colours could be sampled
        "tokens": [t for t in ("witch", "raven") if any(getattr(o, t) for o in spaces.values())],
    }
    return ColourProfile(classes, white_bgr=wb, meta=meta), cam, spaces
