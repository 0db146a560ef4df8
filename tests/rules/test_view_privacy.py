"""A page shows what its reader could see at the table, plus what the memory aid remembers for
him: from player X's view no other player's trapped wizard can be pinned to a space, nor told
apart from the other wizards of its colour (docs/state-model.md §2.5).

Property over positions sampled from seeded bot games (``companion rules play``), base game and
all modules: moving another player's trapped wizard under another tower, or swapping it with a
wizard of its colour in view, leaves X's view unchanged (``companion.sim.viewprobe``).
"""

from __future__ import annotations

import pytest

from companion.rules import MODULES, GameState
from companion.rules.model import space_of, tier_of
from companion.sim.viewprobe import (
    may_see,
    page,
    positions,
    relocations,
    swaps,
    trapped,
)


def sampled(modules: frozenset[str]) -> list[GameState]:
    states = list(positions(games=4, seed=31, every=45, modules=modules))
    assert len(states) >= 20, "the sample should hold many positions with trapped wizards"
    return states


@pytest.fixture(scope="module", params=["base", "modules"])
def states(request: pytest.FixtureRequest) -> list[GameState]:
    return sampled(frozenset(MODULES) if request.param == "modules" else frozenset())


@pytest.mark.parametrize("aid", ["off", "own"])
def test_no_view_changes_when_hidden_wizards_it_may_not_show_move(
    states: list[GameState], aid: str
) -> None:
    views = 0
    for state in states:
        for viewer in [*state.table.colours, None]:
            shown = page(state, viewer, aid)
            for w in trapped(state):
                if may_see(state, w, viewer, aid):
                    continue
                for space, other in relocations(state, w):
                    assert page(other, viewer, aid) == shown, (
                        f"{viewer or 'the table'} ({aid}) can tell "
                        f"{state.table.wizard_ids[w]} is not under space {space}"
                    )
                for other in swaps(state, w):
                    assert page(other, viewer, aid) == shown, (
                        f"{viewer or 'the table'} ({aid}) can tell which "
                        f"{state.table.colours[state.table.wizard_owner[w]]} wizard is trapped"
                    )
            views += 1
    assert views >= 80


def test_own_memory_aid_still_shows_the_players_own_trapped_wizards(
    states: list[GameState],
) -> None:
    checked = 0
    for state in states:
        tb = state.table
        for w in trapped(state):
            owner = tb.colours[tb.wizard_owner[w]]
            wid = tb.wizard_ids[w]
            p = state.wizards[w]
            where = {"space": space_of(p), "tier": tier_of(p)}
            assert page(state, owner, "own")["wizards"][wid] == where
            assert wid not in page(state, owner, "off")["wizards"]
            for viewer in (*tb.colours, None):
                assert page(state, viewer, "all")["wizards"][wid] == where
            checked += 1
    assert checked >= 20


def test_the_view_counts_each_colours_left_out_wizards_as_anyone_at_the_table_could(
    states: list[GameState],
) -> None:
    for state in states[:10]:
        tb = state.table
        shown = page(state, tb.colours[0], "own")
        for colour in tb.colours[1:]:
            in_view = sum(1 for wid in shown["wizards"] if wid.rsplit("-", 1)[0] == colour)
            left_out = shown["trapped"].get(colour, 0)
            seat = tb.colours.index(colour)
            assert in_view + left_out == sum(1 for o in tb.wizard_owner if o == seat)
            assert all(
                not wid.rsplit("-", 1)[1].isdigit()
                for wid in shown["wizards"]
                if wid.rsplit("-", 1)[0] == colour
            ), "another colour's wizards carry labels, not ids"
