"""Synthetic switch-bounce traces: button presses as raw edges ``[(t, pressed), …]``.

Mechanical push buttons chatter for a while when they close and open. Published measurements
of 18 switch types (J. Ganssle, "A Guide to Debouncing") show most bursts well under 10 ms and a
few above 100 ms; worn or dirty contacts chatter longer still. The generator makes ordinary bursts
of 1-15 ms and pathological ones up to ~1 s, built of level segments of 0.02-15 ms (shorter
than the debouncer's 25 ms release/settle times, otherwise the chatter is a real press).

A :class:`Press` is first contact ``t0`` and ``duration`` (first contact to the first break of
the release burst, s). The press burst ends at least ``SETTLE_GAP_S`` before the release starts
and the line stays released at least ``GAP_S`` between presses: anything closer is physically
a single long chatter, not two presses. Everything is seeded through the ``random.Random``
passed in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

Trace = list[tuple[float, bool]]

MAX_SEGMENT_S = 0.015
SETTLE_GAP_S = 0.03
GAP_S = 0.04


@dataclass(frozen=True)
class Press:
    t0: float
    duration: float


def burst(rng: random.Random, start: float, length_s: float, final: bool) -> Trace:
    """Chatter from ``start`` for about ``length_s`` s, beginning with an edge to ``final``
    and ending on ``final``. Segments are 0.02 ms to a quarter of the burst long, at most
    :data:`MAX_SEGMENT_S`."""
    edges: Trace = [(start, final)]
    t, level = start, final
    longest = min(MAX_SEGMENT_S, max(length_s / 4, 0.0001))
    while True:
        t += rng.uniform(0.00002, longest)
        if t - start > length_s:
            break
        level = not level
        edges.append((t, level))
    if level != final:
        edges.append((min(t, start + length_s), final))
    return edges


def burst_length(rng: random.Random, pathological: float = 0.1) -> float:
    """A burst length (s): 1-15 ms, or with probability ``pathological`` 0.1-1 s."""
    if rng.random() < pathological:
        return rng.uniform(0.1, 1.0)
    return rng.uniform(0.001, 0.015)


def press_trace(rng: random.Random, press: Press, pathological: float = 0.1) -> Trace:
    """Edges of one press with bursts at both ends (lengths from :func:`burst_length`)."""
    b0 = min(burst_length(rng, pathological), max(0.0, press.duration - SETTLE_GAP_S))
    b1 = burst_length(rng, pathological)
    return burst(rng, press.t0, b0, True) + burst(rng, press.t0 + press.duration, b1, False)


def trace(rng: random.Random, presses: list[Press], pathological: float = 0.1) -> Trace:
    """All presses in one trace (they must not overlap: see the module doc)."""
    out: Trace = []
    for p in presses:
        out += press_trace(rng, p, pathological)
    return out


def random_presses(
    rng: random.Random,
    n: int,
    start: float = 1.0,
    min_s: float = 0.05,
    max_s: float = 2.0,
    gap_s: tuple[float, float] = (0.04, 0.6),
    pathological: float = 0.1,
) -> tuple[list[Press], Trace]:
    """``n`` presses of ``min_s``-``max_s`` s separated by ``gap_s`` of quiet line, with their
    trace. Durations within 10 ms of the 0.8 s hold time are moved off it (tap/hold would be a
    coin toss there)."""
    presses: list[Press] = []
    edges: Trace = []
    t = start
    for _ in range(n):
        d = rng.uniform(min_s, max_s)
        if abs(d - 0.8) < 0.01:
            d += 0.02
        p = Press(t, d)
        tr = press_trace(rng, p, pathological)
        presses.append(p)
        edges += tr
        t = tr[-1][0] + rng.uniform(*gap_s)
    return presses, edges
