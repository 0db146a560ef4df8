"""How a board the detector emitted compares with the truth (for ``companion bench vision``
and the tests): one outcome per frame, and what another withholding threshold would have made
of the same frames.

Outcomes of a frame (docs/state-model.md §3, "A partial board"):

* ``exact``: every space read and right;
* ``partial``: some spaces withheld (unknown), every space emitted right;
* ``wrong``: some space emitted and wrong (withheld ones or not): what the issue's target
  counts ("wrong boards emitted ≤ 1 % of frames");
* ``refused``: no board emitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from companion.rules.observation import Observation, SpaceObservation

EXACT = "exact"
PARTIAL = "partial"
WRONG = "wrong"
REFUSED = "refused"
OUTCOMES = (EXACT, PARTIAL, WRONG, REFUSED)

SWEEP = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""Withholding thresholds (reported confidence) of :func:`sweep`."""


def space_right(truth: SpaceObservation, got: SpaceObservation) -> bool:
    """Is an emitted space what stands there (towers, top, wizards, castle, tokens)?"""
    return (
        got.towers == truth.towers
        and got.top == truth.top
        and dict(got.wizards) == dict(truth.wizards)
        and got.castle == truth.castle
        and got.witch == truth.witch
        and got.raven == truth.raven
    )


def board_outcome(truth: Observation, got: Observation | None) -> str:
    """The frame's outcome (:data:`OUTCOMES`): a space of ``truth`` that ``got`` lacks is
    withheld; a space ``got`` has beyond ``truth`` is wrong."""
    if got is None:
        return REFUSED
    if any(s not in truth.spaces for s in got.spaces):
        return WRONG
    if any(not space_right(truth.spaces[s], o) for s, o in got.spaces.items()):
        return WRONG
    return EXACT if len(got.spaces) == len(truth.spaces) else PARTIAL


@dataclass(frozen=True)
class FrameRead:
    """One frame the detector read whole, for :func:`sweep`: per space its reported
    confidence, whether it was right and whether a lamp's glare covers it (withheld at any
    threshold above 0). ``spaces`` is empty for a frame refused before it was read."""

    spaces: tuple[tuple[float, bool, bool], ...] = ()


def frame_read(
    truth: Observation, full: Observation | None, glare: Iterable[int] = ()
) -> FrameRead:
    """A :class:`FrameRead` of the detector's full reading (withheld spaces included; None
    when the frame was refused before the board was read)."""
    if full is None:
        return FrameRead()
    lit = set(glare)
    return FrameRead(
        tuple(
            (o.confidence, s in truth.spaces and space_right(truth.spaces[s], o), s in lit)
            for s, o in sorted(full.spaces.items())
        )
    )


def outcome_at(read: FrameRead, threshold: float, withhold_max: float) -> tuple[str, int]:
    """The outcome and the number of withheld spaces the frame would have had with
    ``DetectorConfig(withhold_below=threshold, withhold_max=withhold_max)`` (as
    :func:`companion.vision.detector.withhold.withhold`; the threshold 0 turns it off)."""
    if not read.spaces:
        return REFUSED, 0
    if threshold <= 0:
        if any(lit for _, _, lit in read.spaces):
            return REFUSED, 0  # glare refuses the board without withholding
        return (EXACT if all(ok for _, ok, _ in read.spaces) else WRONG), 0
    out = [conf < threshold or lit for conf, _, lit in read.spaces]
    n = sum(out)
    if n > withhold_max * len(read.spaces):
        return REFUSED, n
    if any(not ok for (_, ok, _), w in zip(read.spaces, out, strict=True) if not w):
        return WRONG, n
    return (PARTIAL if n else EXACT), n


def sweep(
    reads: Sequence[FrameRead], withhold_max: float, thresholds: Sequence[float] = SWEEP
) -> list[dict[str, float]]:
    """Per threshold: the share of frames (%) of each outcome and the share of spaces withheld
    on the boards emitted (%), over ``reads``."""
    rows: list[dict[str, float]] = []
    f = max(len(reads), 1)
    for t in thresholds:
        counts = dict.fromkeys(OUTCOMES, 0)
        withheld = spaces = 0
        for r in reads:
            kind, n = outcome_at(r, t, withhold_max)
            counts[kind] += 1
            if kind != REFUSED:
                withheld += n
                spaces += len(r.spaces)
        row: dict[str, float] = {"threshold": t}
        row.update({f"{k}_pct": round(100 * v / f, 2) for k, v in counts.items()})
        row["withheld_space_pct"] = round(100 * withheld / max(spaces, 1), 2)
        rows.append(row)
    return rows
