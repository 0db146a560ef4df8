"""Stage: a lamp's reflection that washes a top out without clipping it (docs/vision.md,
"Glare").

A desk lamp's reflection adds the lamp's light on top of what a surface reflects: every
channel rises, colours pale towards the lamp's, and only the spot's centre reaches the
sensor's top (clipped pixels, :func:`companion.vision.quality.clipped_mask`). Around the centre
a red wizard turns pink-white and a tower's rim fades while no pixel is clipped, and the
readers see "no wizard" or a wrong height there. The tops of one kind are alike to the camera
(the roofs are all horizontal, of one wood, under one light; so are the track's spaces), so a
top whose brightest pixels are much lighter than the same kind of top elsewhere on the board
in the same frame has light added to it: its reading is unknown, never "no wizard".

Measured relative to the markers' white paper (the same under dim and bright light): per top
the 90th percentile of each pixel's darkest channel (the channel a pale wash raises most,
relative to what the surface reflects), against the median of that over the tops of its kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import SpaceObservation
from companion.vision.detector.pose import Hull
from companion.vision.quality import QualityLimits

ROOF_KINDS = frozenset({"crest", "plain", "magic"})
TRACK_KINDS = frozenset({"crest-space", "plain-space", "fountain"})
"""The tops compared with each other (a web holds no piece, R-MOD-WEB-3: not read)."""

MIN_PEERS = 3
"""Fewest tops of a kind for their median to say what that kind looks like in the frame."""


def wash_excess(
    pixels: NDArray[np.uint8],
    hulls: Sequence[Hull | None],
    tops: Sequence[str],
    white: NDArray[np.float64],
) -> NDArray[np.float64]:
    """How much lighter each top is than the tops of its kind in the same frame.

    :param pixels: ``(N, 3) uint8 BGR`` of every hull's pixels, space after space (as
        :class:`~companion.vision.detector.frame.TopPixels` orders them).
    :param hulls: per space its hull (None: not read, e.g. under the raven castle).
    :param tops: per space its top kind as read.
    :param white: ``(3,)`` BGR of the markers' white paper in this frame.
    :returns: ``(S,)`` per space the 90th percentile of its pixels' darkest channel divided by
        the white's, less the median of that over the tops of its kind (fractions of the
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
            if n >= 10 and (tops[si] in ROOF_KINDS or tops[si] in TRACK_KINDS):
                level[si] = float(np.percentile(ratio[pos : pos + n], 90))
            pos += n
    out = np.zeros(len(hulls))
    for kinds in (ROOF_KINDS, TRACK_KINDS):
        idx = [i for i, t in enumerate(tops) if t in kinds and not np.isnan(level[i])]
        if len(idx) >= MIN_PEERS:
            out[idx] = level[idx] - float(np.median(level[idx]))
    return out


def washed_tops(
    pixels: NDArray[np.uint8],
    hulls: Sequence[Hull | None],
    tops: Sequence[str],
    white: NDArray[np.float64],
    read: Mapping[int, SpaceObservation],
    limits: QualityLimits,
) -> dict[int, float]:
    """The spaces whose top a lamp's reflection washes out: space -> its :func:`wash_excess`
    where that is ``limits.wash_excess`` or more.

    :param read: the spaces as read, in the order of ``hulls`` and ``tops`` (the board's
        spaces). The top the raven token was read on is not compared: the token's white disc
        (R-MOD-RAVEN-1) is lighter than any roof.
    """
    kinds = [t if not o.raven else "" for t, o in zip(tops, read.values(), strict=True)]
    excess = wash_excess(pixels, hulls, kinds, white)
    return {
        s: round(float(e), 3) for s, e in zip(read, excess, strict=True) if e >= limits.wash_excess
    }
