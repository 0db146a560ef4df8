"""The truth simulator: what the tracker receives at the table, with the truth kept aside."""

from __future__ import annotations

import pytest

from companion.rules.actions import EndTurn, MoveTower, MoveWizard
from companion.rules.model import Config
from companion.sim.simulate import CameraNoise, simulate
from companion.tracking.noise import expected_observation


@pytest.fixture(scope="module")
def game():
    return simulate(Config(player_count=3), 7, CameraNoise(rate=0.0, gap="turn"))


def test_the_tracker_starts_from_the_setup_without_knowing_the_hands(game):
    assert game.start.cards is None
    assert game.start.stacks == game.truths[0].stacks
    assert game.start.table.spells == game.truths[0].table.spells


def test_dice_buttons_report_every_die_card_before_its_move(game):
    die_moves = [a for a in game.actions if isinstance(a, MoveWizard | MoveTower) and a.card.dice]
    dice = [i for i in game.inputs if i.kind == "dice"]
    assert die_moves, "a whole game plays some die cards"
    assert [tuple(a.rolls) for a in die_moves] == [i.rolls for i in dice][: len(die_moves)]
    assert all(1 <= i.dice_allowed <= 3 for i in dice)


def test_done_is_pressed_after_every_turn_and_frames_follow_it(game):
    ends = sum(1 for a in game.actions if isinstance(a, EndTurn))
    done = [n for n, i in enumerate(game.inputs) if i.kind == "end_turn"]
    assert len(done) == ends
    for n in done:
        assert game.inputs[n + 1].kind == "observation"


def test_a_perfect_camera_shows_the_truth(game):
    for inp in game.inputs:
        if inp.kind == "observation":
            assert inp.observation.spaces == expected_observation(inp.truth).spaces


def test_gaps_of_two_turns_take_half_as_many_stops():
    one = simulate(Config(player_count=2), 3, CameraNoise(rate=0.0, gap="turn", frames_per_stop=1))
    two = simulate(
        Config(player_count=2), 3, CameraNoise(rate=0.0, gap="2turns", frames_per_stop=1)
    )
    n1 = sum(1 for i in one.inputs if i.kind == "observation")
    n2 = sum(1 for i in two.inputs if i.kind == "observation")
    assert abs(n2 - n1 / 2) <= 2


def test_forgotten_done_presses():
    sim = simulate(Config(player_count=2), 3, CameraNoise(rate=0.0, done_rate=0.5))
    ends = sum(1 for a in sim.actions if isinstance(a, EndTurn))
    done = sum(1 for i in sim.inputs if i.kind == "end_turn")
    assert 0.3 * ends < done < 0.7 * ends


def test_bad_noise_settings_are_refused():
    with pytest.raises(ValueError, match="gap"):
        CameraNoise(gap="hour")
    with pytest.raises(ValueError, match="rate"):
        CameraNoise(rate=2.0)
