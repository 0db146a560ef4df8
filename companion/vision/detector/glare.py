"""Stage: a lamp's reflection that washes a top out without clipping it (docs/vision.md,
"Glare").

A desk lamp's reflection adds the lamp's light on top of what a surface reflects: every
channel rises, colours pale towards the lamp's, and only the spot's centre reaches the
sensor's top (clipped pixels, :func:`companion.vision.quality.clipped_mask`). Around the centre
a red wizard turns pink-white and a tower's rim fades while no pixel is clipped, and the
readers see "no wizard" or a wrong height there. The tops of one kind are alike to the camera
(the roofs are all horizontal, of one wood, under one light; so are the track's spaces), so a
top whose brightest pixels are much lighter than most tops of its kind elsewhere on the board
in the same frame has light added to it: its reading is unknown, never "no wizard".

Measured relative to the markers' white paper (the same under dim and bright light): per top
the 90th percentile of each pixel's darkest channel (the channel a pale wash raises most,
relative to what the surface reflects), against the upper quartile of that over the tops of its
kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import SpaceObservation
from companion.vision.detector.frame import TopPixels
from companion.vision.detector.pose import Hull, project, unit_ring
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BoardPose
from companion.vision.quality import QualityLimits

ROOF_KINDS = frozenset({"crest", "plain", "magic"})
TRACK_KINDS = frozenset({"crest-space", "plain-space", "fountain"})
"""The tops compared with each other (a web holds no piece, R-MOD-WEB-3: not read)."""

REFERENCE_PCT = 75
"""What the tops of a kind look like in the frame: the upper quartile of their levels (above
the roofs that a taller neighbour shades, below the few a lamp pales)."""

MIN_PEERS = 3
"""Fewest tops of a kind for their median to say what that kind looks like in the frame."""


def wash_excess(
    pixels: NDArray[np.uint8],
    hulls: Sequence[Hull | None],
    tops: Sequence[str],
    white: NDArray[np.float64],
    keep: NDArray[np.bool_] | None = None,
) -> NDArray[np.float64]:
    """How much lighter each top is than the tops of its kind in the same frame.

    :param pixels: ``(N, 3) uint8 BGR`` of every hull's pixels, space after space (as
        :class:`~companion.vision.detector.frame.TopPixels` orders them).
    :param hulls: per space its hull (None: not read, e.g. under the raven castle).
    :param tops: per space its top kind as read.
    :param white: ``(3,)`` BGR of the markers' white paper in this frame.
    :param keep: ``(N,)`` the pixels to measure (default all): those on the top surface
        itself (:func:`on_top_surface`), not what is seen past it.
    :returns: ``(S,)`` per space the 90th percentile of its pixels' darkest channel divided by
        the white's, less the upper quartile of that over the tops of its kind (fractions of the
        white; 0 for a top not compared: a web, a top with no hull, a kind with fewer than
        :data:`MIN_PEERS` tops).
    :raises ValueError: when ``hulls`` and ``tops`` differ in length or the hulls' pixels are
        not ``pixels``' rows.
    """
    if len(hulls) != len(tops):
        raise ValueError(f"wash_excess: {len(hulls)} hulls but {len(tops)} tops")
    sizes = [0 if h is None else len(h[0]) for h in hulls]
    if sum(sizes) != len(pixels):
        raise ValueError(f"wash_excess: the hulls hold {sum(sizes)} pixels, not {len(pixels)}")
    level = np.full(len(hulls), np.nan)
    if len(pixels):
        ratio = (pixels.astype(np.float32) / np.maximum(white, 1.0).astype(np.float32)).min(1)
        pos = 0
        for si, n in enumerate(sizes):
            r = ratio[pos : pos + n] if keep is None else ratio[pos : pos + n][keep[pos : pos + n]]
            if len(r) >= 10 and (tops[si] in ROOF_KINDS or tops[si] in TRACK_KINDS):
                level[si] = float(np.percentile(r, 90))
            pos += n
    out = np.zeros(len(hulls))
    for kinds in (ROOF_KINDS, TRACK_KINDS):
        idx = [i for i, t in enumerate(tops) if t in kinds and not np.isnan(level[i])]
        if len(idx) >= MIN_PEERS:
            out[idx] = level[idx] - float(np.percentile(level[idx], REFERENCE_PCT))
    return out


def on_top_surface(
    geometry: BoardGeometry,
    pose: BoardPose,
    towers: Sequence[int],
    px: TopPixels,
) -> NDArray[np.bool_]:
    """``(N,)`` which of the hulls' pixels (``px.ys``, ``px.xs``) show the top surface itself:
    within the projected surface disc's shortest half-axis of its centre. A hull reaches up
    to a wizard's height above the surface, so past a tall stack it shows the board or the
    table behind (a white cloth is as light as a lamp's reflection).

    :param towers: per space (the board's order) the tower count read: the surface's tier.
    """
    keep = np.zeros(len(px.ys), bool)
    read = [si for si, hh in enumerate(px.hulls) if hh is not None]
    if not read:
        return keep
    ring = unit_ring(24)
    # every read top's rim and centre in one projection (one call per frame, not per space)
    pts = []
    for si in read:
        tier = towers[si]
        c = geometry.space_centre(geometry.spaces[si])
        r = geometry.surface_radius(tier) - (1.0 if tier else 3.0)
        z = geometry.tier_z(tier)
        pts.append(np.vstack([np.column_stack([c + ring * r, np.full(len(ring), z)]), [[*c, z]]]))
    img = project(pose, np.vstack(pts)).reshape(len(read), len(ring) + 1, 2)
    starts = np.cumsum([0] + [0 if hh is None else len(hh[0]) for hh in px.hulls])
    for k, si in enumerate(read):
        centre, rim = img[k, -1], img[k, :-1]
        half = float(np.min(np.hypot(*(rim - centre).T)))
        a, b = starts[si], starts[si + 1]
        keep[a:b] = np.hypot(px.xs[a:b] - centre[0], px.ys[a:b] - centre[1]) <= half
    return keep


def washed_tops(
    pixels: NDArray[np.uint8],
    hulls: Sequence[Hull | None],
    tops: Sequence[str],
    white: NDArray[np.float64],
    read: Mapping[int, SpaceObservation],
    limits: QualityLimits,
    keep: NDArray[np.bool_] | None = None,
) -> dict[int, float]:
    """The spaces whose top a lamp's reflection washes out: space -> its :func:`wash_excess`
    where that is ``limits.wash_excess`` or more.

    :param read: the spaces as read, in the order of ``hulls`` and ``tops`` (the board's
        spaces). The top the raven token was read on is not compared: the token's white disc
        (R-MOD-RAVEN-1) is lighter than any roof.
    :param keep: the pixels on the top surfaces (:func:`on_top_surface`).
    """
    kinds = [t if not o.raven else "" for t, o in zip(tops, read.values(), strict=True)]
    excess = wash_excess(pixels, hulls, kinds, white, keep)
    return {
        s: round(float(e), 3) for s, e in zip(read, excess, strict=True) if e >= limits.wash_excess
    }
