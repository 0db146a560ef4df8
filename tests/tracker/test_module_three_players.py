"""A 3-player bot game with every module (seed 2000, a frame pair after each turn, 1 % misreads),
followed from the true table at the start of one turn: what the camera cannot see (a spell with
no effect on the board, a feather spent for a third card) must not make the tracker lose the
turn."""

from __future__ import annotations

from dataclasses import replace

from companion.rules.actions import Cast, EndTurn, Feather, MoveTower, MoveWizard
from companion.rules.model import Config
from companion.sim.simulate import CameraNoise, SimGame, SimInput, simulate, truth_key
from companion.tracking import Tracker, board_key

ALL_MODULES = frozenset({"fountain", "web", "witch", "raven", "magic_tower"})


def _game() -> SimGame:
    return simulate(
        Config(player_count=3, modules=ALL_MODULES),
        2000,
        CameraNoise(rate=0.01, gap="turn"),
        "greedy",
    )


def _turn(sim: SimGame, first: int, last: int) -> tuple[Tracker, list[SimInput]]:
    """A tracker that knows the true table before action ``first`` (hands unknown) and the
    inputs from the DONE press of that turn to the frames after action ``last``."""
    tr = Tracker(replace(sim.truths[first], cards=None))
    after = sim.truths[last + 1]
    inputs = [i for i in sim.inputs if i.truth is after][:3]
    assert [i.kind for i in inputs] == ["end_turn", "observation", "observation"]
    return tr, inputs


def test_a_spell_cast_between_two_cards_stays_a_story():
    """Turn 11: yellow moves a tower, casts Precise Landing (nothing moves, a potion is spent)
    and moves a wizard. A story with the two cards alone is cheaper and so is one with Advance
    a Wizard; the true one must stay among the stories the tracker keeps, else the potions are
    wrong from then on (in the whole game the players were later asked for yellow's potions,
    and the option with the true count held only stories that spent the potion at the start of
    turn 26, whose true spell was then one too many: the game was lost there)."""
    sim = _game()
    acts = sim.actions[35:39]
    assert isinstance(acts[0], MoveTower) and acts[0].player == "yellow"
    assert isinstance(acts[1], Cast) and acts[1].spell == "precise_landing"
    assert isinstance(acts[2], MoveWizard) and isinstance(acts[3], EndTurn)
    tr, inputs = _turn(sim, 35, 38)
    for inp in inputs:
        inp.give(tr)
    truth = sim.truths[39]
    assert board_key(tr.state) == board_key(truth)
    assert any(truth_key(s) == truth_key(truth) for s, _cost in tr.hypotheses), (
        "the true potions are still one of the stories"
    )


def test_a_feathers_third_card_in_a_long_turn_keeps_the_true_table():
    """Turn 33: red moves a wizard, casts a headwind, moves two towers, spends a feather for a
    third card, moves another wizard and presses DONE: six steps, one more than the search
    takes per frame, and the frame misreads a field. After the turn the phones must show the
    true board, whose turn it is and the potions."""
    sim = _game()
    acts = sim.actions[113:119]
    assert [type(a) for a in acts] == [MoveWizard, Cast, MoveTower, Feather, MoveWizard, EndTurn]
    assert isinstance(acts[3], Feather) and acts[3].use == "extra_card"
    tr, inputs = _turn(sim, 113, 118)
    for inp in inputs:
        inp.give(tr)
    truth = sim.truths[119]
    st = tr.state
    assert board_key(st) == board_key(truth)
    assert st.turn.player == truth.turn.player
    assert st.potions == truth.potions
