"""The dice button follows the game: its profile changes with the game set up, never under a
roll that belongs to the old game."""

from __future__ import annotations

import random

import pytest

from companion.hardware.dice import SIEGE_2D6, WIZWAR_D4, DiceError, DiceMachine, DiceState


def tap(m: DiceMachine, t: float) -> float:
    m.edge(t, "roll", True)
    m.edge(t + 0.1, "roll", False)
    return t + 0.1


def test_the_profile_changes_between_rolls_and_the_next_roll_uses_it() -> None:
    m = DiceMachine(rng=random.Random(4))
    m.select_mode(0.0, 2)
    m.set_profile(0.1, SIEGE_2D6)  # a picked mode of the old game is dropped
    assert m.status()["profile"] == "siege-2d6" and m.status()["dice_allowed"] is None
    t = tap(m, 0.2)
    events = m.tick(t + 2.0)
    result = next(e for e in events if e["type"] == "dice")
    assert result["profile"] == "siege-2d6" and len(result["dice"][0]) == 2
    assert result["used"] == SIEGE_2D6.used(sum(result["dice"][0]))


def test_no_change_of_game_under_a_roll() -> None:
    m = DiceMachine(rng=random.Random(4))
    m.select_mode(0.0, 2)
    tap(m, 0.1)
    m.tick(0.3)
    assert m.state is DiceState.ROLLING
    with pytest.raises(DiceError):
        m.set_profile(0.35, WIZWAR_D4)
    assert m.profile.name == "wandering-towers"
