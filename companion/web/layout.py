"""Where each space of the track is drawn on the phone pages.

The pages draw the closed loop of spaces (R-TRACK-1, 16 spaces; 18 with the fountain and web
tiles, R-TRACK-5) as an SVG. When the vision package provides the measured board geometry
(``companion.vision.geometry.BoardGeometry``: space centres in board millimetres) the drawing
follows it; otherwise the spaces are laid on the border of a grid of square cells, space 1 in
the top-left corner and numbers increasing clockwise, as the track tiles lie on the table.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Mapping
from typing import Literal, TypedDict

CELL = 100.0
"""Side of one space in SVG user units (the page scales the drawing to the screen)."""

MAX_LENGTH = 40


class SpaceLayout(TypedDict):
    """One space as drawn: its number, centre, special tile and outline (SVG user units)."""

    space: int
    x: float
    y: float
    special: str | None
    outline: list[list[float]]


class BoardLayout(TypedDict):
    """The drawn track (``GET /api/layout``); ``source`` says whether it follows the measured
    board geometry or the fallback grid."""

    length: int
    cell: float
    width: float
    height: float
    source: Literal["geometry", "computed"]
    spaces: list[SpaceLayout]


class LayoutError(ValueError):
    """A track length or special-space list the pages cannot draw."""


def parse_special(text: str) -> dict[int, str]:
    """``"9:fountain,18:web"`` -> ``{9: "fountain", 18: "web"}``.

    :raises LayoutError: for a malformed entry or an unknown kind.
    """
    special: dict[int, str] = {}
    if not text:
        return special
    for part in text.split(","):
        num, sep, kind = part.partition(":")
        if not sep or not num.strip().isdigit() or kind not in ("fountain", "web"):
            raise LayoutError(f"special: {part!r} is not SPACE:fountain or SPACE:web")
        special[int(num)] = kind
    return special


def _grid(length: int) -> tuple[int, int] | None:
    """Columns and rows of a rectangle whose border has exactly ``length`` cells, as square as
    possible (16 -> 5x5, 18 -> 6x5); None when ``length`` is odd."""
    if length % 2:
        return None
    half = length // 2 + 2  # w + h
    h = half // 2
    w = half - h
    return w, h


def _square(x: float, y: float, half: float) -> list[tuple[float, float]]:
    return [(x - half, y - half), (x + half, y - half), (x + half, y + half), (x - half, y + half)]


def _computed(
    length: int,
) -> tuple[list[tuple[float, float]], list[list[tuple[float, float]]], float, float]:
    grid = _grid(length)
    half = CELL * 0.47
    if grid is None:
        # an odd loop: spaces on a circle, space 1 at the top-left, clockwise
        radius = CELL * length / (2 * math.pi) * 1.15
        size = 2 * radius + CELL * 1.2
        centres = []
        for i in range(length):
            a = -3 * math.pi / 4 + 2 * math.pi * i / length
            centres.append((size / 2 + radius * math.cos(a), size / 2 + radius * math.sin(a)))
        return centres, [_square(x, y, half * 0.9) for x, y in centres], size, size
    w, h = grid
    cells: list[tuple[int, int]] = [(c, 0) for c in range(w)]
    cells += [(w - 1, r) for r in range(1, h)]
    cells += [(c, h - 1) for c in range(w - 2, -1, -1)]
    cells += [(0, r) for r in range(h - 2, 0, -1)]
    centres = [((c + 0.5) * CELL, (r + 0.5) * CELL) for c, r in cells]
    return centres, [_square(x, y, half) for x, y in centres], w * CELL, h * CELL


def _from_geometry(
    length: int, special: Mapping[int, str]
) -> tuple[list[tuple[float, float]], list[list[tuple[float, float]]], float, float] | None:
    try:
        from companion.vision.geometry import BoardGeometry

        board = BoardGeometry.for_track(length, special=dict(special))
        raw = board.space_centres()  # (N, 2) float64 mm, row s-1 = space s
        points = [(float(raw[s][0]), float(raw[s][1])) for s in range(length)]
        shapes = [
            [(float(x), float(y)) for x, y in board.space_outline(s, samples=4)]
            for s in range(1, length + 1)
        ]
    except (ImportError, AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None
    # one space pitch (mm) becomes one cell
    step = float(board.pitch)
    if step <= 0:
        return None
    scale = CELL / step
    xs = [x for shape in shapes for x, _ in shape]
    ys = [y for shape in shapes for _, y in shape]
    x0, y0 = min(xs) - CELL * 0.05, min(ys) - CELL * 0.05

    def tr(p: tuple[float, float]) -> tuple[float, float]:
        return ((p[0] - x0) * scale, (p[1] - y0) * scale)

    centres = [tr(p) for p in points]
    outlines = [[tr(p) for p in shape] for shape in shapes]
    width = (max(xs) - x0) * scale + CELL * 0.05
    height = (max(ys) - y0) * scale + CELL * 0.05
    return centres, outlines, width, height


def board_layout(length: int, special: Mapping[int, str] | None = None) -> BoardLayout:
    """Centres of the spaces in SVG user units.

    :param length: number of spaces (R-TRACK-1/5), 7..40.
    :param special: space -> ``fountain`` / ``web``.
    :returns: ``{"length", "cell", "width", "height", "source": "geometry"|"computed",
        "spaces": [{"space": 1, "x": 50.0, "y": 50.0, "special": None,
        "outline": [[x, y], …]}, …]}`` (the outline of a space's field on the track band).
    :raises LayoutError: for a length outside 7..40 or a special space off the track.
    """
    if not 7 <= length <= MAX_LENGTH:
        raise LayoutError(f"length: {length} is outside 7..{MAX_LENGTH}")
    special = dict(special or {})
    for s in special:
        if not 1 <= s <= length:
            raise LayoutError(f"special: space {s} is not on a track of {length}")
    return copy.deepcopy(_layout(length, tuple(sorted(special.items()))))


@functools.lru_cache(maxsize=32)
def _layout(length: int, special_items: tuple[tuple[int, str], ...]) -> BoardLayout:
    # the geometry is fixed for a run: computed once per track
    special = dict(special_items)
    found = _from_geometry(length, special)
    source: Literal["geometry", "computed"] = "geometry" if found else "computed"
    centres, outlines, width, height = found or _computed(length)
    return {
        "length": length,
        "cell": CELL,
        "width": round(width, 1),
        "height": round(height, 1),
        "source": source,
        "spaces": [
            {
                "space": i + 1,
                "x": round(x, 1),
                "y": round(y, 1),
                "special": special.get(i + 1),
                "outline": [[round(px, 1), round(py, 1)] for px, py in outlines[i]],
            }
            for i, (x, y) in enumerate(centres)
        ],
    }
