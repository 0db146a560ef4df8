"""``companion bench views [--games N] [--seed S] [--every K] [--modules all|LIST] [--json]``:
what one page lets its reader deduce about trapped wizards it may not see.

Positions are sampled every ``K``-th action of seeded bot games (``companion rules play``: 2-6
players, base and master variant). For each position, each viewer (every player with memory aid
``off`` and ``own``; the seatless table/host view with both) the page's state JSON
(``companion.rules.view``) is compared with the JSON of positions **the reader cannot tell
apart at a real table**: another player's trapped wizard moved under another tower
(``companion.sim.viewprobe.relocations``), or swapped with a wizard of the same colour in view or
in the raven castle (``swaps``: wizards of one colour look alike). Figures:

* ``pinned_views``: views in which some trapped wizard the reader may not see is pinned to one
  space (every other space with towers changes the view), while the board shows more than one
  space with towers;
* ``dependent_views``: views that change under any of those moves (the page shows something of
  where hidden wizards are, or which one is which);
* ``views``, ``positions`` and ``per_aid`` splits.

A page that shows only what a player could see or remember of their own gives 0 and 0.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from companion.sim.viewprobe import VIEWER_AIDS, judge, positions


def run(games: int, seed: int, every: int, modules: frozenset[str]) -> dict[str, Any]:
    per_aid: dict[str, dict[str, int]] = {
        a: {"views": 0, "pinned": 0, "dependent": 0} for a in VIEWER_AIDS
    }
    n_positions = 0
    for state in positions(games, seed, every, modules):
        n_positions += 1
        viewers: list[str | None] = [*state.table.colours, None]
        for aid in VIEWER_AIDS:
            for viewer in viewers:
                pinned, dependent = judge(state, viewer, aid)
                row = per_aid[aid]
                row["views"] += 1
                row["pinned"] += pinned
                row["dependent"] += dependent
    return {
        "games": games,
        "seeds": [seed, seed + games - 1],
        "every": every,
        "positions": n_positions,
        "views": sum(r["views"] for r in per_aid.values()),
        "pinned_views": sum(r["pinned"] for r in per_aid.values()),
        "dependent_views": sum(r["dependent"] for r in per_aid.values()),
        "per_aid": per_aid,
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="companion bench views", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--seed", type=int, default=100)
    p.add_argument("--every", type=int, default=25, help="sample every K-th action")
    p.add_argument("--modules", default="", help="'all' or a comma list (default: base game)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    from companion.rules import MODULES

    mods = (
        frozenset(MODULES)
        if args.modules == "all"
        else frozenset(m for m in args.modules.split(",") if m)
    )
    unknown = mods - frozenset(MODULES)
    if unknown or args.games < 1 or args.every < 1:
        p.error(f"--modules: unknown {sorted(unknown)}" if unknown else "--games/--every >= 1")
    result = run(args.games, args.seed, args.every, mods)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":  # runnable as a file too (to measure another checkout's rules core)
    import sys

    raise SystemExit(main(sys.argv[1:]))
