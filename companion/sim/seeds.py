"""Figures over many simulated games and seeds (``companion bench tracking --seeds``): seed and
player ranges, one report per seed and the spread over the seeds.

Pure: no clock, no I/O; the games themselves come from :func:`companion.sim.answering.run_game`.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from companion.sim.answering import GameFigures

#: The figures whose spread over the seeds is reported (``--seeds``).
SPREAD_KEYS = (
    "turns_correct_pct",
    "games_exact_hidden_pct",
    "wrong_commits",
    "wrong_commits_joint",
    "wrong_board_commits",
    "reanchors",
    "narrowed_frames",
    "questions_median",
    "questions_max",
    "reconcile_ms_p50",
    "reconcile_ms_p99",
    "rss_mb",
)


def parse_range(text: str, what: str) -> tuple[int, int]:
    """``"A-B"`` (or ``"A"``) as the inclusive range ``(A, B)`` of non-negative integers.

    :raises ValueError: naming ``what`` when the text is not a range or ``B < A``.
    """
    head, sep, tail = text.strip().partition("-")
    try:
        lo = int(head)
        hi = int(tail) if sep else lo
    except ValueError:
        raise ValueError(f"{what}: expected N or A-B, got {text!r}") from None
    if lo < 0 or hi < lo:
        raise ValueError(f"{what}: expected 0 <= A <= B, got {text!r}")
    return lo, hi


def players_for(seed: int, players: tuple[int, int]) -> int:
    """The player count seed ``seed`` plays when ``players`` is a range (``lo + seed mod n``)."""
    lo, hi = players
    return lo + seed % (hi - lo + 1)


def quantile(values: Sequence[float], p: float) -> float:
    """The ``p`` quantile (0..1) of sorted ``values`` (0 when empty), rounded to 0.01."""
    if not values:
        return 0.0
    return round(values[min(len(values) - 1, int(p * len(values)))], 2)


def summarise(per_game: Sequence[GameFigures], timings: Sequence[float]) -> dict[str, Any]:
    """The report of some games: totals, percentages, questions per game, reconcile quantiles.

    :param per_game: each game's figures (:func:`companion.sim.answering.run_game`).
    :param timings: every ``observe`` call's time (ms), any order.
    """
    ts = sorted(timings)
    games = len(per_game)
    turns = sum(g["turns"] for g in per_game)
    correct = sum(g["turns_correct"] for g in per_game)
    exact = sum(1 for g in per_game if g["exact_hidden"])
    qs = [g["questions"] for g in per_game]
    return {
        "games": games,
        "turns": turns,
        "turns_correct": correct,
        "turns_correct_pct": round(100.0 * correct / turns, 3) if turns else 0.0,
        "turns_potions_correct": sum(g["turns_potions_correct"] for g in per_game),
        "games_exact_hidden": exact,
        "games_exact_hidden_pct": round(100.0 * exact / max(1, games), 2),
        "potions_exact": sum(1 for g in per_game if g["potions_exact"]),
        "potions_shown": sum(1 for g in per_game if g["potions_shown"]),
        "wrong_commits": sum(g["wrong_commits"] for g in per_game),
        "wrong_commits_joint": sum(g["wrong_commits_joint"] for g in per_game),
        "wrong_board_commits": sum(g["wrong_board_commits"] for g in per_game),
        "reanchors": sum(g["reanchors"] for g in per_game),
        "narrowed_frames": sum(g["narrowed_frames"] for g in per_game),
        "questions_per_game": {
            "mean": round(statistics.fmean(qs), 3) if qs else 0.0,
            "median": statistics.median(qs) if qs else 0,
            "max": max(qs) if qs else 0,
        },
        "reconcile_ms_p50": quantile(ts, 0.50),
        "reconcile_ms_p99": quantile(ts, 0.99),
        "reconcile_ms_max": round(ts[-1], 2) if ts else 0.0,
    }


def spread(per_seed: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean, min and max over the seeds of each figure in :data:`SPREAD_KEYS`.

    :param per_seed: one :func:`summarise` report per seed (with ``rss_mb``).
    """
    out: dict[str, dict[str, float]] = {}
    for key in SPREAD_KEYS:
        vals = [float(flat(r)[key]) for r in per_seed]
        if not vals:
            continue
        out[key] = {
            "mean": round(statistics.fmean(vals), 3),
            "min": round(min(vals), 3),
            "max": round(max(vals), 3),
        }
    return out


def flat(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with ``questions_per_game`` spread into ``questions_median``/``_max``."""
    q = report.get("questions_per_game", {})
    return {**report, "questions_median": q.get("median", 0), "questions_max": q.get("max", 0)}
