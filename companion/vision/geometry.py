"""Board geometry of the Wandering Towers table in board millimetres.

Board coordinates: x to the right, y down, z up, millimetres, origin at the top-left corner of the
board area (the area framed by the four ArUco markers). The track is a closed loop of ``N`` spaces
(16 in the base game, R-TRACK-1; 18 with both fountain/web inserts, R-TRACK-5 / OPEN-10) laid out
on a rounded square, spaces numbered ``1..N`` clockwise as seen from above, space 1 = the raven
castle's start space. Four track tiles of four spaces; the joint between space ``N`` and space 1
(or, when space ``N`` is an insert, that insert's centre) lies on the top-left corner.

The publisher does not publish dimensions, so every size is a measure-and-enter default
(``calibration/board/default.json`` holds the same numbers as :data:`DEFAULTS`); load your own
with :meth:`BoardGeometry.load` or override single values with :meth:`BoardGeometry.from_dict`.

Towers: tier ``k`` (1 = bottom) stands on the roof of tier ``k-1`` (or on the track); its roof is
at ``z = k * tier_height``. A piece at tier ``t`` stands at ``z = t * tier_height`` (tier 0 = the
track). Towers taper from ``base_diameter`` to ``roof_diameter``; merlons rise ``merlon_height``
above the roof and are covered by the hollow base of a tower placed on top.

This module is pure (numpy only, plus :meth:`BoardGeometry.load` reading a JSON file).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MARKER_DICTIONARY = "DICT_4X4_50"
"""OpenCV ArUco dictionary of the board markers (``cv2.aruco.DICT_4X4_50``)."""

MARKER_IDS: tuple[int, int, int, int] = (0, 1, 2, 3)
"""Marker ids at the board corners: 0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left."""

SPECIAL_KINDS = frozenset({"fountain", "web"})
"""Kinds of inserted spaces (R-TRACK-5)."""

DEFAULTS: dict[str, Any] = {
    "board": {"width": 480.0, "height": 480.0},
    "track": {"length": 16, "raven_crest": [1, 5, 9, 13], "special": {}},
    "loop": {
        "centre": [240.0, 240.0],
        "pitch": 64.0,
        "width": 72.0,
        "corner_ratio": 0.5,
        "rotation_deg": 0.0,
        "spaces_per_tile": 4,
    },
    "crest_mark": {"diameter": 34.0},
    "tower": {
        "base_diameter": 48.0,
        "roof_diameter": 40.0,
        "tier_height": 36.0,
        "merlon_height": 6.0,
        "merlons": 8,
    },
    "castle": {
        "base_diameter": 52.0,
        "roof_diameter": 44.0,
        "height": 64.0,
        "merlon_height": 8.0,
        "merlons": 8,
    },
    "wizard": {"height": 24.0, "base_diameter": 13.0, "head_diameter": 8.0},
    "tokens": {
        "witch": {"diameter": 20.0, "thickness": 4.0},
        "raven": {"diameter": 20.0, "thickness": 4.0},
    },
    "markers": {"dictionary": MARKER_DICTIONARY, "ids": [0, 1, 2, 3], "side": 50.0, "margin": 10.0},
}
"""Built-in measure-and-enter defaults (identical to ``calibration/board/default.json``)."""

DEFAULT_CREST_16: tuple[int, ...] = (1, 5, 9, 13)
"""R-TRACK-2 / OPEN-09: raven-crest spaces of the 16-space track."""

DEFAULT_CREST_18: tuple[int, ...] = (1, 5, 10, 14)
"""R-TRACK-5 / OPEN-10: raven-crest spaces of the 18-space track (inserts at 9 and 18)."""


class GeometryError(ValueError):
    """A geometry file or track definition that cannot describe a board; names the bad field."""


# --------------------------------------------------------------------------------------------
# value types


@dataclass(frozen=True, slots=True)
class TrackDef:
    """Which spaces a track has: R-TRACK-1/2/5.

    :param length: number of spaces N (>= 4).
    :param crest: raven-crest spaces (printed crest on the track), each in ``1..N``.
    :param special: space -> ``"fountain"`` or ``"web"`` for the expansion inserts.
    :raises GeometryError: on a space outside ``1..N`` or an unknown special kind. (An insert
        normally carries no crest, R-TRACK-6 / OPEN-11; a table configured otherwise is drawn
        with both.)
    """

    length: int = 16
    crest: tuple[int, ...] = DEFAULT_CREST_16
    special: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.length, int) or isinstance(self.length, bool) or self.length < 4:
            raise GeometryError(f"track.length: {self.length!r} is not a track of >= 4 spaces")
        crest = tuple(sorted({int(s) for s in self.crest}))
        for s in crest:
            if not 1 <= s <= self.length:
                raise GeometryError(f"track.raven_crest: space {s} is not on a {self.length} track")
        special = {int(s): str(k) for s, k in self.special.items()}
        for s, k in special.items():
            if not 1 <= s <= self.length:
                raise GeometryError(f"track.special: space {s} is not on a {self.length} track")
            if k not in SPECIAL_KINDS:
                raise GeometryError(f"track.special.{s}: {k!r} is not fountain or web")
        object.__setattr__(self, "crest", crest)
        object.__setattr__(self, "special", dict(sorted(special.items())))

    @classmethod
    def standard(cls, inserts: Sequence[str] | None = None) -> TrackDef:
        """The base 16-space track, or 18 spaces with two inserts (OPEN-10 default).

        :param inserts: ``None`` for the base track, or the kinds of inserts A and B, e.g.
            ``("fountain", "fountain")`` or S1's mixed setup ``("web", "fountain")``: A becomes
            space 9, B space 18, crests ``1, 5, 10, 14``.
        """
        if not inserts:
            return cls()
        if len(inserts) != 2:
            raise GeometryError("track.special: the expansion inserts come as a pair A, B")
        return cls(18, DEFAULT_CREST_18, {9: inserts[0], 18: inserts[1]})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrackDef:
        """From the state model's ``track`` object (``length``, ``raven_crest``, ``special``)."""
        length = int(data.get("length", 16))
        crest_default = DEFAULT_CREST_18 if length == 18 else DEFAULT_CREST_16
        crest = data.get("raven_crest", data.get("crest", crest_default))
        special = data.get("special") or {}
        return cls(length, tuple(int(s) for s in crest), {int(s): k for s, k in special.items()})

    def to_json(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "raven_crest": list(self.crest),
            "special": {str(s): k for s, k in self.special.items()},
        }

    def kind(self, space: int) -> str:
        """Track surface of a space: ``crest-space``, ``plain-space``, ``fountain`` or ``web``."""
        if space in self.special:
            return self.special[space]
        return "crest-space" if space in self.crest else "plain-space"


@dataclass(frozen=True, slots=True)
class TowerShape:
    """A tapered, crenellated tower (mm). The raven castle uses the same shape with its height."""

    base_diameter: float
    roof_diameter: float
    height: float
    merlon_height: float
    merlons: int


@dataclass(frozen=True, slots=True)
class WizardShape:
    """A wizard meeple (mm): cone-like robe of ``base_diameter`` with a head, ``height`` tall."""

    height: float
    base_diameter: float
    head_diameter: float


@dataclass(frozen=True, slots=True)
class TokenShape:
    """A round token (witch, raven), mm."""

    diameter: float
    thickness: float


@dataclass(frozen=True, slots=True)
class LoopFit:
    """Result of :func:`fit_loop_to_taps`: the similarity board-nominal -> measured.

    ``measured = scale * R(rotation) @ nominal + offset``; ``rms_mm`` = residual of the taps.
    """

    scale: float
    rotation_deg: float
    offset_mm: tuple[float, float]
    rms_mm: float
    geometry: BoardGeometry


# --------------------------------------------------------------------------------------------
# the rounded-square loop


def _loop_segments(a: float, r: float) -> list[tuple[str, float, tuple[float, ...]]]:
    """Segments of a rounded square (half side ``a``, corner radius ``r``), clockwise on screen
    (y down) starting at the 45-degree point of the top-left corner. Each segment is
    ``(kind, length, params)``; arcs: (cx, cy, theta0), lines: (x0, y0, dx, dy, nx, ny)."""
    c = a - r
    q = math.pi / 4 * r  # length of an eighth circle
    side = 2 * c
    segs: list[tuple[str, float, tuple[float, ...]]] = [
        ("arc", q, (-c, -c, -0.75 * math.pi)),
        ("line", side, (-c, -a, 1.0, 0.0, 0.0, -1.0)),
        ("arc", 2 * q, (c, -c, -0.5 * math.pi)),
        ("line", side, (a, -c, 0.0, 1.0, 1.0, 0.0)),
        ("arc", 2 * q, (c, c, 0.0)),
        ("line", side, (c, a, -1.0, 0.0, 0.0, 1.0)),
        ("arc", 2 * q, (-c, c, 0.5 * math.pi)),
        ("line", side, (-a, c, 0.0, -1.0, -1.0, 0.0)),
        ("arc", q, (-c, -c, math.pi)),
    ]
    return segs


def _loop_eval(u: np.ndarray, a: float, r: float) -> tuple[np.ndarray, np.ndarray]:
    """Points and outward unit normals at arc lengths ``u`` (any shape) on the canonical loop
    (centre 0, no rotation). Returns ``(points (..., 2), normals (..., 2))``."""
    segs = _loop_segments(a, r)
    perim = sum(s[1] for s in segs)
    uu = np.mod(np.asarray(u, dtype=np.float64), perim)
    pts = np.zeros(uu.shape + (2,))
    nrm = np.zeros(uu.shape + (2,))
    start = 0.0
    for i, (kind, length, p) in enumerate(segs):
        last = i == len(segs) - 1
        sel = (uu >= start) & ((uu <= start + length) if last else (uu < start + length))
        t = uu[sel] - start
        if kind == "arc":
            cx, cy, th0 = p
            th = th0 + t / r if r > 0 else np.full_like(t, th0)
            n = np.stack([np.cos(th), np.sin(th)], axis=-1)
            pts[sel] = np.array([cx, cy]) + r * n
            nrm[sel] = n
        else:
            x0, y0, dx, dy, nx, ny = p
            pts[sel] = np.stack([x0 + dx * t, y0 + dy * t], axis=-1)
            nrm[sel] = (nx, ny)
        start += length
    return pts, nrm


def _rot(deg: float) -> np.ndarray:
    t = math.radians(deg)
    return np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])


# --------------------------------------------------------------------------------------------
# the geometry


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if k.startswith("_"):
            continue
        if isinstance(v, Mapping) and isinstance(out.get(k), dict) and k != "special":
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _num(d: Mapping[str, Any], key: str, where: str, positive: bool = True) -> float:
    v = d.get(key)
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        raise GeometryError(f"{where}.{key}: expected a number (mm)")
    if positive and v <= 0:
        raise GeometryError(f"{where}.{key}: must be > 0")
    return float(v)


class BoardGeometry:
    """Board, track loop, pieces and markers of one table, in board millimetres.

    Build with :meth:`default`, :meth:`for_track`, :meth:`load` or :meth:`from_dict`; all
    positions are numpy arrays in mm (board coordinates, see the module docstring).
    """

    def __init__(self, data: Mapping[str, Any], track: TrackDef | None = None) -> None:
        d = _merge(DEFAULTS, data)
        self._data = d
        self._signature: str | None = None
        self.track: TrackDef = track if track is not None else TrackDef.from_json(d["track"])
        self._data["track"] = self.track.to_json()
        b = d["board"]
        self.board_size: tuple[float, float] = (
            _num(b, "width", "board"),
            _num(b, "height", "board"),
        )
        lp = d["loop"]
        centre = lp.get("centre")
        if not (isinstance(centre, Sequence) and len(centre) == 2):
            raise GeometryError("loop.centre: expected [x, y] in mm")
        self.loop_centre = np.array([float(centre[0]), float(centre[1])])
        self.pitch = _num(lp, "pitch", "loop")
        self.track_width = _num(lp, "width", "loop")
        self.corner_ratio = _num(lp, "corner_ratio", "loop", positive=False)
        if not 0.0 <= self.corner_ratio <= 1.0:
            raise GeometryError("loop.corner_ratio: must lie in 0..1")
        self.rotation_deg = _num(lp, "rotation_deg", "loop", positive=False)
        self.spaces_per_tile = int(lp.get("spaces_per_tile", 4))
        self.crest_mark_diameter = _num(d["crest_mark"], "diameter", "crest_mark")
        t = d["tower"]
        self.tower = TowerShape(
            _num(t, "base_diameter", "tower"),
            _num(t, "roof_diameter", "tower"),
            _num(t, "tier_height", "tower"),
            _num(t, "merlon_height", "tower", positive=False),
            int(t.get("merlons", 8)),
        )
        c = d["castle"]
        self.castle = TowerShape(
            _num(c, "base_diameter", "castle"),
            _num(c, "roof_diameter", "castle"),
            _num(c, "height", "castle"),
            _num(c, "merlon_height", "castle", positive=False),
            int(c.get("merlons", 8)),
        )
        w = d["wizard"]
        self.wizard = WizardShape(
            _num(w, "height", "wizard"),
            _num(w, "base_diameter", "wizard"),
            _num(w, "head_diameter", "wizard"),
        )
        tk = d["tokens"]
        self.witch = TokenShape(
            _num(tk["witch"], "diameter", "tokens.witch"),
            _num(tk["witch"], "thickness", "tokens.witch"),
        )
        self.raven = TokenShape(
            _num(tk["raven"], "diameter", "tokens.raven"),
            _num(tk["raven"], "thickness", "tokens.raven"),
        )
        m = d["markers"]
        self.marker_dictionary = str(m.get("dictionary", MARKER_DICTIONARY))
        ids = tuple(int(i) for i in m.get("ids", MARKER_IDS))
        if len(ids) != 4 or len(set(ids)) != 4:
            raise GeometryError("markers.ids: expected four distinct ids (TL, TR, BR, BL)")
        self.marker_ids: tuple[int, int, int, int] = (ids[0], ids[1], ids[2], ids[3])
        self.marker_side = _num(m, "side", "markers")
        self.marker_margin = _num(m, "margin", "markers", positive=False)
        # loop shape: perimeter N * pitch on a rounded square
        n = self.track.length
        denom = 8.0 - 8.0 * self.corner_ratio + 2.0 * math.pi * self.corner_ratio
        self._half_side = n * self.pitch / denom
        self._corner_r = self.corner_ratio * self._half_side
        if self.track_width / 2 >= self._half_side - 1e-6:
            raise GeometryError("loop.width: the track band is wider than the loop")
        last_is_insert = n in self.track.special
        self._u0 = 0.0 if last_is_insert else self.pitch / 2  # arc length of space 1's centre
        self._centres = self._arc_points(self._space_u(np.arange(1, n + 1)), 0.0)

    # ---- construction --------------------------------------------------------------------

    @classmethod
    def default(cls) -> BoardGeometry:
        """The built-in defaults (16-space base track)."""
        return cls({})

    @classmethod
    def for_track(
        cls,
        length: int = 16,
        crest: Iterable[int] | None = None,
        special: Mapping[int, str] | None = None,
        *,
        base: BoardGeometry | None = None,
    ) -> BoardGeometry:
        """Geometry for any track definition (R-TRACK-5: engines accept any track).

        :param length: number of spaces.
        :param crest: raven-crest spaces; default 1,5,9,13 (16) or 1,5,10,14 (18).
        :param special: space -> ``fountain``/``web``; default none, or for ``length == 18`` the
            OPEN-10 default insert positions A = 9 and B = 18, both magic fountains (the
            expansion rulebook S1 adds both fountains together; with one web and one fountain it
            recommends the web at A and the fountain at B).
        :param base: take all sizes from this geometry (e.g. one loaded from a file).
        :raises GeometryError: on an impossible track.
        """
        if crest is None:
            crest = DEFAULT_CREST_18 if length == 18 else DEFAULT_CREST_16
            crest = tuple(s for s in crest if s <= length)
        if special is None:
            special = {9: "fountain", 18: "fountain"} if length == 18 else {}
        track = TrackDef(length, tuple(crest), dict(special))
        return cls(base._data if base is not None else {}, track)

    def with_track(self, track: TrackDef | Mapping[str, Any]) -> BoardGeometry:
        """Same sizes, another track (a :class:`TrackDef` or the state model's ``track`` JSON)."""
        t = track if isinstance(track, TrackDef) else TrackDef.from_json(track)
        return BoardGeometry(self._data, t)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BoardGeometry:
        """Defaults overridden by ``data`` (same layout as the geometry file; partial is fine).

        :raises GeometryError: naming the first bad field.
        """
        if not isinstance(data, Mapping):
            raise GeometryError("geometry: expected an object")
        try:
            return cls(data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise GeometryError(f"geometry: malformed file ({exc})") from None

    @classmethod
    def load(cls, path: str | Path) -> BoardGeometry:
        """Read a geometry JSON file (see ``calibration/board/default.json``).

        :raises GeometryError: when the file is not valid JSON or a field is wrong.
        :raises OSError: when the file cannot be read.
        """
        text = Path(path).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GeometryError(f"{Path(path).name}: not JSON ({exc})") from None
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The geometry file form (round-trips through :meth:`from_dict`)."""
        return copy.deepcopy(self._data)

    def signature(self) -> str:
        """A string that is equal for equal geometries (canonical JSON of :meth:`to_dict`)."""
        if self._signature is None:
            self._signature = json.dumps(self._data, sort_keys=True)
        return self._signature

    def save(self, path: str | Path) -> None:
        """Write the geometry file (JSON, 2-space indent)."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    # ---- the loop ----------------------------------------------------------------------------

    @property
    def n_spaces(self) -> int:
        return self.track.length

    @property
    def spaces(self) -> range:
        """Space numbers ``1..N``."""
        return range(1, self.track.length + 1)

    @property
    def perimeter(self) -> float:
        """Length of the loop's centre line, mm (= N * pitch)."""
        return self.track.length * self.pitch

    def _space_u(self, space: np.ndarray | int) -> np.ndarray:
        return self._u0 + (np.asarray(space, dtype=np.float64) - 1.0) * self.pitch

    def _arc_points(self, u: np.ndarray, offset: float | np.ndarray) -> np.ndarray:
        pts, nrm = _loop_eval(u, self._half_side, self._corner_r)
        off = np.asarray(offset, dtype=np.float64)[..., None] if np.ndim(offset) else offset
        p = pts + nrm * off
        rot = _rot(self.rotation_deg)
        return np.asarray(p @ rot.T + self.loop_centre, dtype=np.float64)

    def _check_space(self, space: int) -> None:
        if not 1 <= int(space) <= self.track.length:
            raise GeometryError(f"space {space} is not on this {self.track.length}-space track")

    def space_centres(self) -> np.ndarray:
        """Centres of all spaces, ``(N, 2) float64`` mm, row ``s-1`` = space ``s``."""
        return self._centres.copy()

    def space_centre(self, space: int) -> np.ndarray:
        """Centre of one space, ``(2,) float64`` mm. :raises GeometryError: off the track."""
        self._check_space(space)
        return np.array(self._centres[int(space) - 1], dtype=np.float64)

    def to_opencv(self, points_mm: np.ndarray) -> np.ndarray:
        """Board points with z up (this module) -> OpenCV's right-handed board frame.

        x right and y down with z up is a left-handed frame; OpenCV poses (``solvePnP``,
        ``projectPoints``) need the right-handed one, where above the board is *negative* z.
        ``(..., 3)`` in, same shape out, z negated.
        """
        p = np.array(points_mm, dtype=np.float64)
        p[..., 2] *= -1.0
        return p

    def space_outline(self, space: int, samples: int = 7) -> np.ndarray:
        """Outline of a space on the track band, ``(2*samples, 2) float64`` mm: the outer edge
        clockwise, then the inner edge back. Neighbouring outlines share their edges.

        :raises GeometryError: off the track.
        """
        self._check_space(space)
        u0 = float(self._space_u(int(space)))
        u = np.linspace(u0 - self.pitch / 2, u0 + self.pitch / 2, samples)
        outer = self._arc_points(u, self.track_width / 2)
        inner = self._arc_points(u[::-1], -self.track_width / 2)
        return np.concatenate([outer, inner])

    def space_direction(self, space: int) -> np.ndarray:
        """Unit vector along the loop (clockwise) at a space centre, ``(2,)``."""
        self._check_space(space)
        u = float(self._space_u(int(space)))
        a, b = self._arc_points(np.array([u - 0.5, u + 0.5]), 0.0)
        d = b - a
        return np.asarray(d / np.linalg.norm(d), dtype=np.float64)

    def loop_edge(self, side: float, samples: int = 256) -> np.ndarray:
        """The whole loop's edge as a closed polyline, ``(samples, 2)`` mm: ``side = +1`` outer
        edge, ``-1`` inner edge, ``0`` centre line."""
        u = np.linspace(0.0, self.perimeter, samples, endpoint=False)
        return self._arc_points(u, side * self.track_width / 2)

    def tile_joints(self) -> list[np.ndarray]:
        """Segments ``(2, 2)`` mm across the band where two track tiles (or an insert) meet."""
        out = []
        n = self.track.length
        for s in self.spaces:
            nxt = s % n + 1
            tile_end = (s in self.track.special) or (nxt in self.track.special)
            if not tile_end:
                base_index = sum(1 for t in range(1, s + 1) if t not in self.track.special)
                tile_end = base_index % self.spaces_per_tile == 0
            if tile_end:
                u = float(self._space_u(s)) + self.pitch / 2
                w = self.track_width / 2
                out.append(self._arc_points(np.array([u, u]), np.array([-w, w])))
        return out

    def crest_mark(self, space: int) -> tuple[np.ndarray, float] | None:
        """Printed raven crest of a crest space: ``(centre (2,) mm, radius mm)``, else ``None``."""
        self._check_space(space)
        if space not in self.track.crest:
            return None
        return self.space_centre(space), self.crest_mark_diameter / 2

    # ---- towers and pieces -----------------------------------------------------------------

    def tier_z(self, tier: int) -> float:
        """Height (mm) of the surface a piece at ``tier`` stands on: ``tier * tier_height``."""
        if tier < 0:
            raise GeometryError(f"tier {tier} is below the track")
        return tier * self.tower.height

    def roof_point(self, space: int, tier: int) -> np.ndarray:
        """3-D centre of the top surface of tier ``tier`` on ``space``, ``(3,) float64`` mm.

        Tier 0 is the track itself; tier ``k >= 1`` is the roof of the k-th tower from the bottom.
        :raises GeometryError: off the track or a negative tier.
        """
        c = self.space_centre(space)
        return np.array([c[0], c[1], self.tier_z(tier)])

    def roof_points(self, tiers: int) -> np.ndarray:
        """Roof centres of every space and tier ``0..tiers``, ``(N, tiers+1, 3) float64`` mm."""
        n = self.track.length
        out = np.zeros((n, tiers + 1, 3))
        out[:, :, :2] = self._centres[:, None, :]
        out[:, :, 2] = np.arange(tiers + 1)[None, :] * self.tower.height
        return out

    def surface_radius(self, tier: int) -> float:
        """Radius (mm) of the usable top surface: a roof's radius, or for the track the radius of
        the largest disc inside a space."""
        if tier == 0:
            return min(self.pitch, self.track_width) / 2
        return self.tower.roof_diameter / 2

    def piece_slots(self, n: int, tier: int) -> np.ndarray:
        """Offsets (mm) from a surface centre where ``n`` pieces stand, ``(n, 2)``: one in the
        centre; 2..6 evenly on a ring that keeps each wizard base on the surface; 7 or more
        (6 wizards and the witch/raven tokens) one in the centre and the rest on the ring."""
        if n <= 0:
            return np.zeros((0, 2))
        if n == 1:
            return np.zeros((1, 2))
        rad = self.surface_radius(tier) - self.wizard.base_diameter / 2 - 1.0
        ring = n if n <= 6 else n - 1  # 7+ pieces (6 wizards and tokens): one in the middle
        ang = np.arange(ring) * 2 * math.pi / ring - math.pi / 2
        pts = np.stack([np.cos(ang), np.sin(ang)], axis=-1) * max(rad, 1.0)
        return pts if ring == n else np.concatenate([np.zeros((1, 2)), pts])

    # ---- markers -----------------------------------------------------------------------------

    def marker_corners(self) -> dict[int, np.ndarray]:
        """Board-mm corners of the four ArUco markers: id -> ``(4, 2) float64`` in OpenCV order
        (TL, TR, BR, BL). Ids 0..3 sit at the top-left, top-right, bottom-right, bottom-left
        board corners, ``margin`` mm in from the edges, ``side`` mm wide (default 50)."""
        w, h = self.board_size
        m, s = self.marker_margin, self.marker_side
        origins = [(m, m), (w - m - s, m), (w - m - s, h - m - s), (m, h - m - s)]
        square = np.array([[0.0, 0.0], [s, 0.0], [s, s], [0.0, s]])
        return {i: square + np.array(o) for i, o in zip(self.marker_ids, origins, strict=True)}

    def marker_object_points(self) -> dict[int, np.ndarray]:
        """The marker corners as 3-D points on the board plane (z = 0), id -> ``(4, 3)``."""
        return {
            i: np.concatenate([c, np.zeros((4, 1))], axis=1)
            for i, c in self.marker_corners().items()
        }

    def board_outline(self) -> np.ndarray:
        """The board area's corners, ``(4, 2)`` mm (TL, TR, BR, BL)."""
        w, h = self.board_size
        return np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])


# --------------------------------------------------------------------------------------------
# host step: adjust the loop from tapped space centres


def _apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.concatenate([pts, np.ones((len(pts), 1))], axis=1) @ h.T
    return np.asarray(p[:, :2] / p[:, 2:3], dtype=np.float64)


def fit_loop_to_taps(
    taps_px: np.ndarray | Sequence[Sequence[float]] | Mapping[int, Sequence[float]],
    board_to_image: np.ndarray,
    geometry: BoardGeometry,
) -> LoopFit:
    """Fit the loop's scale, rotation and offset to space centres tapped on a snapshot.

    The host taps the centre of every space, in order ``1..N``, on a still frame of the empty
    track (or only some spaces, e.g. those without a tower: a tapped tower roof is not on the
    board plane); the markers give the homography. The taps are mapped into board mm and the
    similarity transform (scale, rotation, translation) from the geometry's nominal centres to
    them is found by linear least squares (Umeyama 1991, closed form). The returned geometry
    has the loop re-laid with the new pitch (scale), rotation and centre; the other sizes are
    unchanged.

    :param taps_px: ``(N, 2)`` image pixels, row ``s-1`` = space ``s``; or a mapping space ->
        ``(x, y)`` px with at least 3 spaces.
    :param board_to_image: ``(3, 3)`` homography board mm -> image px.
    :raises GeometryError: wrong number of taps, an unknown space, a singular homography, or
        taps that do not spread around the loop (e.g. all on one point).
    """
    n_all = geometry.n_spaces
    if isinstance(taps_px, Mapping):
        spaces = sorted(int(k) for k in taps_px)
        if len(spaces) < 3 or any(not 1 <= k <= n_all for k in spaces):
            raise GeometryError(f"taps: expected at least 3 of the spaces 1..{n_all}")
        taps = np.array([taps_px[k] for k in spaces], dtype=np.float64).reshape(len(spaces), -1)
    else:
        spaces = list(range(1, n_all + 1))
        taps = np.asarray(taps_px, dtype=np.float64)
    n = len(spaces)
    if taps.shape != (n, 2) or not np.all(np.isfinite(taps)):
        raise GeometryError(f"taps: expected {n} finite (x, y) pixel positions, one per space")
    hmat = np.asarray(board_to_image, dtype=np.float64)
    if hmat.shape != (3, 3) or abs(np.linalg.det(hmat)) < 1e-12:
        raise GeometryError("homography: expected an invertible 3x3 matrix")
    measured = _apply_h(np.linalg.inv(hmat), taps)
    nominal = geometry.space_centres()[np.array(spaces) - 1]
    mu_n, mu_m = nominal.mean(axis=0), measured.mean(axis=0)
    a, b = nominal - mu_n, measured - mu_m
    var_n = float((a**2).sum() / n)
    if var_n < 1e-9 or float((b**2).sum() / n) < 1e-6:
        raise GeometryError("taps: the tapped points do not spread around a loop")
    cov = b.T @ a / n
    u, sig, vt = np.linalg.svd(cov)
    d = np.eye(2)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        d[1, 1] = -1.0  # taps in the wrong order (mirror): best proper rotation
    rot = u @ d @ vt
    scale = float(np.trace(np.diag(sig) @ d) / var_n)
    if scale <= 0:
        raise GeometryError("taps: the tapped order runs counter-clockwise")
    t = mu_m - scale * rot @ mu_n
    resid = measured - (nominal @ (scale * rot).T + t)
    rms = float(np.sqrt((resid**2).sum(axis=1).mean()))
    dtheta = math.degrees(math.atan2(rot[1, 0], rot[0, 0]))
    data = geometry.to_dict()
    lp = data["loop"]
    new_centre = scale * rot @ geometry.loop_centre + t
    lp["centre"] = [float(new_centre[0]), float(new_centre[1])]
    lp["pitch"] = geometry.pitch * scale
    lp["width"] = geometry.track_width * scale
    lp["rotation_deg"] = geometry.rotation_deg + dtheta
    fitted = BoardGeometry(data, geometry.track)
    return LoopFit(scale, dtheta, (float(t[0]), float(t[1])), rms, fitted)
