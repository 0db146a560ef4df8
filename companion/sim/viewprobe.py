"""Positions a page's reader cannot tell apart at a real table, to check what a page shows of
trapped wizards (docs/state-model.md §2.5): another player's trapped wizard moved under another
tower (:func:`relocations`) or swapped with a wizard of its colour in view or in the raven castle
(:func:`swaps`; wizards of one colour look alike). A view that changes under them shows
something of where hidden wizards are, or which one is which (:func:`judge`). Used by
``companion bench views`` and the tests; positions come from seeded bot games
(:func:`positions`, as ``companion rules play``).
"""

from __future__ import annotations

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
