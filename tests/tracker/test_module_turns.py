"""Whole turns of an all-module game seen in one frame each: a piece staged on a space and moved
on later in the turn, with a spell cast in between, must not lose the true story to one that
moves the piece on at once and shifts a move into the next player's turn."""

from __future__ import annotations

import pytest
from test_staged_moves import stops

from companion.rules.actions import Cast, MoveTower
from companion.rules.model import Config
from companion.sim.simulate import CameraNoise, simulate
from companion.tracking import board_key

ALL_MODULES = frozenset({"fountain", "web", "witch", "raven", "magic_tower"})


@pytest.mark.long
def test_a_spell_between_two_moves_of_one_tower_keeps_the_true_table():
    """A 4-player bot game with every module (seed 2000, frames after each turn, no misreads).
    In turn 2 yellow moves a tower from space 2 on to the stack on space 7, casts a headwind on
    the tower of space 10 (it goes back to space 8) and moves her tower on from space 7 to the
    emptied space 10: space 7 looks as before. A story that moves the tower on at once and
    makes the headwind take both towers back also fits the frame, but only if red then moves
    one of them on: after red's turn the phones showed the wrong potions. After each of the
    first three turns the phones must show the true board, whose turn it is and the potions."""
    sim = simulate(
        Config(player_count=4, modules=ALL_MODULES),
        2000,
        CameraNoise(rate=0.0, gap="turn"),
        "greedy",
    )
    yellow = sim.actions[3:6]
    assert isinstance(yellow[0], MoveTower) and (yellow[0].space, yellow[0].steps) == (2, 5)
    assert isinstance(yellow[1], Cast) and yellow[1].spell == "headwind_tower"
    assert yellow[1].space == 10
    assert isinstance(yellow[2], MoveTower) and (yellow[2].space, yellow[2].tier) == (7, 2)
    assert (yellow[2].steps, sim.truths[6].stack(7)) == (3, sim.truths[3].stack(7))

    checked = 0
    for tr, inp in stops(sim, 3):
        st = tr.state
        assert board_key(st) == board_key(inp.truth), f"board after turn {inp.turns}"
        assert st.turn.player == inp.truth.turn.player, f"player after turn {inp.turns}"
        assert st.potions == inp.truth.potions, f"potions after turn {inp.turns}"
        checked += 1
    assert checked == 4
