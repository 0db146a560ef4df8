"""Is the detector's per-space confidence calibrated? A reliability table per confidence bin.

For every space of every board the detector emitted: its reported confidence and whether the
whole space (tower count, top kind, wizards, castle, tokens) was right. A calibrated detector's
spaces at confidence 0.9 or more are right 99.9 % of the time (issue target); the table shows
each bin's share right next to the bin's range.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

BINS: tuple[tuple[float, float], ...] = (
    (0.0, 0.5),
    (0.5, 0.7),
    (0.7, 0.9),
    (0.9, 0.95),
    (0.95, 0.99),
    (0.99, 1.0),
)
"""Confidence bins ``[lo, hi)`` (the last one includes 1.0)."""


def reliability(pairs: Iterable[tuple[float, bool]]) -> dict[str, Any]:
    """The reliability table of ``(confidence, right)`` pairs (one per space emitted).

    :returns: ``{"bins": [{"range": "0.9-0.95", "spaces": n, "right_pct": p}, ...],
        "high": {"spaces": n, "right_pct": p}}`` where ``high`` is confidence >= 0.9
        (``right_pct`` None for an empty bin).
    """
    counts = [[0, 0] for _ in BINS]
    high = [0, 0]
    for conf, right in pairs:
        for i, (lo, hi) in enumerate(BINS):
            if lo <= conf < hi or (hi == BINS[-1][1] and conf >= hi):
                counts[i][0] += 1
                counts[i][1] += int(right)
                break
        if conf >= 0.9:
            high[0] += 1
            high[1] += int(right)

    def pct(n: int, k: int) -> float | None:
        return round(100.0 * k / n, 3) if n else None

    return {
        "bins": [
            {"range": f"{lo:g}-{hi:g}", "spaces": n, "right_pct": pct(n, k)}
            for (lo, hi), (n, k) in zip(BINS, counts, strict=True)
        ],
        "high": {"spaces": high[0], "right_pct": pct(high[0], high[1])},
    }


def print_reliability(table: dict[str, Any]) -> None:
    """Print :func:`reliability`'s table (one line per bin)."""
    print("confidence calibration (spaces of emitted boards): bin, spaces, right %")
    for b in table["bins"]:
        print(f"  {b['range']:<10}{b['spaces']:>8}{str(b['right_pct']):>10}")
    h = table["high"]
    print(f"  >= 0.9    {h['spaces']:>8}{str(h['right_pct']):>10}   (target >= 99.9)")
