"""A piece moved on to a space and away again in the same turn leaves that space as it was: the
tracker must still find the story (its moves may end on a space the picture shows unchanged),
not keep the old board or take a wrong story that the picture happens to fit."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_ambiguity import T, play

from companion.rules.actions import EndTurn, MoveTower
from companion.rules.engine import setup
from companion.rules.model import Config
from companion.sim.answering import answer_as_players
from companion.sim.simulate import CameraNoise, SimGame, SimInput, simulate
from companion.tracking import Tracker, board_key
from companion.tracking.noise import expected_observation


def stops(sim: SimGame, last_turn: int) -> Iterator[tuple[Tracker, SimInput]]:
    """Feed the game's inputs up to turn ``last_turn`` to a fresh tracker, answering every
    question as the players would; yields the tracker and the input at the last still frame of
    each stop (where the phones show the table until the next move)."""
    tr = Tracker(sim.start)
    for idx, inp in enumerate(sim.inputs):
        if inp.turns > last_turn:
            return
        up = answer_as_players(tr, inp.give(tr), inp.truth)
        assert up.question is None, "an option holds the truth"
        if inp.kind == "observation" and sim.inputs[idx + 1].kind != "observation":
            yield tr, inp


def test_a_tower_moved_twice_through_an_empty_space_is_followed_from_one_frame():
    """Two players. Blue moves P4 from space 9 to the empty space 13, then on to space 16, and
    presses DONE: space 13 is empty before and after, and no single card moves a tower 7 spaces.
    The one still frame after the turn must show P4 on space 16 on the phones."""
    start = setup(Config(player_count=2), None)
    assert start.stack(9) == ("P4",) and start.stack(13) == () and start.stack(16) == ()
    truth = play(start, MoveTower("blue", 9, 1, 4, T[4]), MoveTower("blue", 13, 1, 3, T[3]))
    assert truth.stack(13) == () and truth.stack(16) == ("P4",)
    truth = play(truth, EndTurn())
    tr = Tracker(start)
    tr.end_turn()
    u = tr.observe(expected_observation(truth))
    assert u.explained and u.health == "ok"
    assert board_key(tr.state) == board_key(truth)
    assert tr.state.current_player == "yellow"


@pytest.mark.long
def test_a_seeded_two_player_game_keeps_the_true_board_through_its_first_turns():
    """A 2-player bot game (seed 2001, 1 % misread fields, frames after each turn): in its turn 14
    yellow advances the stack carrying the castle on to her own wizard's space and moves
    it on, leaving that space as it was; the phones must show the true board after every turn."""
    sim = simulate(Config(player_count=2), 2001, CameraNoise(rate=0.01, gap="turn"), "greedy")
    checked = 0
    for tr, inp in stops(sim, 15):
        assert board_key(tr.state) == board_key(inp.truth), f"after turn {inp.turns}"
        checked += 1
    assert checked >= 14
