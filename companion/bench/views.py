"""``companion bench views [--games N] [--seed S] [--every K] [--modules all|LIST] [--json]``:
what one page lets its reader deduce about trapped wizards it may not see.

Positions are sampled every ``K``-th action of seeded bot games (``companion rules play``: 2-6
players, base and master variant). For each position, each viewer (every player with memory aid
``off`` and ``own``; the seatless table/host view with both) the page's state JSON
(``companion.rules.view``) is compared with the JSON of positions **the reader cannot tell
apart at a real table**: another player's trapped wizard moved under another tower
(:func:`relocations`), or swapped with a wizard of the same colour in view or in the raven castle
(:func:`swaps`: wizards of one colour look alike). Figures:

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
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from companion.rules import Config, GameState
from companion.rules.model import position, space_of, tier_of
from companion.rules.view import table_view, view
from companion.sim.bots import play

VIEWER_AIDS = ("off", "own")
"""The memory aids under which a page hides some trapped wizards (``all`` hides none)."""


def may_see(state: GameState, wizard: int, viewer: str | None, memory_aid: str) -> bool:
    """Whether ``viewer`` (a colour, None = the seatless table page) may see where ``wizard``
    (index into ``state.table.wizard_ids``) is when trapped (``docs/state-model.md`` §2.2)."""
    if memory_aid == "all":
        return True
    if viewer is None or memory_aid == "off":
        return False
    return state.table.colours[state.table.wizard_owner[wizard]] == viewer


def trapped(state: GameState) -> list[int]:
    """Indices of the wizards under some tower now."""
    out = []
    for i, p in enumerate(state.wizards):
        if p and tier_of(p) < len(state.stacks[space_of(p) - 1]):
            out.append(i)
    return out


def towered_spaces(state: GameState) -> list[int]:
    """Spaces with at least one tower: where a trapped wizard may be, as far as the board says."""
    return [s + 1 for s, stack in enumerate(state.stacks) if stack]


def moved(state: GameState, wizard: int, where: int) -> GameState:
    """``state`` with ``wizard`` at position code ``where`` (nothing else checked or changed)."""
    wizards = list(state.wizards)
    wizards[wizard] = where
    return replace(state, wizards=tuple(wizards))


def relocations(state: GameState, wizard: int) -> Iterator[tuple[int, GameState]]:
    """``(space, state)`` with the trapped ``wizard`` put under the bottom tower of each other
    space with towers (the board looks the same)."""
    here = space_of(state.wizards[wizard])
    for s in towered_spaces(state):
        if s != here:
            yield s, moved(state, wizard, position(s, 0))


def swaps(state: GameState, wizard: int) -> Iterator[GameState]:
    """``state`` with the trapped ``wizard`` exchanged with each wizard of its colour that is in
    view or in the castle (the board looks the same; only the ids differ)."""
    tb = state.table
    hidden = set(trapped(state))
    for j in range(len(state.wizards)):
        if j != wizard and j not in hidden and tb.wizard_owner[j] == tb.wizard_owner[wizard]:
            both = list(state.wizards)
            both[wizard], both[j] = both[j], both[wizard]
            yield replace(state, wizards=tuple(both))


def page(state: GameState, viewer: str | None, memory_aid: str) -> dict[str, Any]:
    """The state JSON the page of ``viewer`` shows (None = the table and host pages)."""
    return view(state, viewer, memory_aid) if viewer is not None else table_view(state, memory_aid)


def judge(state: GameState, viewer: str | None, memory_aid: str) -> tuple[bool, bool]:
    """``(pinned, dependent)`` for one view (see the module docstring)."""
    shown = page(state, viewer, memory_aid)
    towered = towered_spaces(state)
    pinned = dependent = False
    for w in trapped(state):
        if may_see(state, w, viewer, memory_aid):
            continue
        same = [s for s, other in relocations(state, w) if page(other, viewer, memory_aid) == shown]
        if len(same) < len(towered) - 1:
            dependent = True
            if not same and len(towered) > 1:
                pinned = True
        if any(page(other, viewer, memory_aid) != shown for other in swaps(state, w)):
            dependent = True
        if pinned:
            break
    return pinned, dependent


def positions(
    games: int, seed: int, every: int, modules: frozenset[str] = frozenset()
) -> Iterator[GameState]:
    """Every ``every``-th position with a trapped wizard of seeded random bot games."""
    for g in range(games):
        players = 2 + g % 5
        cfg = Config(player_count=players, variant="master" if g % 2 else "base", modules=modules)
        for n, step in enumerate(play(cfg, seed + g, "random")):
            if n % every == every - 1 and trapped(step.state):
                yield step.state


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
