"""Wiz-War (S4): hit points, forced rest, hand, movement, attacks, obstacles, dice (G4-…)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.hardware.dice import WIZWAR_D4
from companion.packs import PackError
from companion.packs.wizwar import (
    D4_FACES,
    START_HP,
    Direction,
    Obstacle,
    ObstacleHP,
    RestTable,
    TurnAttacks,
    Wizard,
    cards_to_discard,
    cards_to_draw,
    direction_for,
    movement,
    roll_start_order,
    start_order,
)

PROPS = settings(max_examples=80, derandomize=True, deadline=None)


def test_a_wizard_starts_with_15_and_is_out_at_0() -> None:
    """G4-HP-1, G4-LOSE-1: damage stops at 0, which is out; healing caps at 15."""
    wizard = Wizard("green")
    assert wizard.hp == START_HP == 15
    hurt = wizard.damage(6).heal(2)
    assert hurt.hp == 11
    assert hurt.heal(10).hp == 15
    out = hurt.damage(20)
    assert out.hp == 0 and out.out
    with pytest.raises(PackError, match=r"^hp: G4-LOSE-1"):
        out.damage(1)
    with pytest.raises(PackError, match=r"^hp: G4-LOSE-1"):
        out.heal(1)
    assert out.hp == 0


def test_hp_below_0_or_negative_damage_is_refused_and_the_old_value_stays() -> None:
    with pytest.raises(PackError, match=r"^hp: G4-HP-1: must be 0..15, got -1"):
        Wizard("green", hp=-1)
    wizard = Wizard("green", hp=7)
    with pytest.raises(PackError, match=r"^amount: G4-HP-1"):
        wizard.damage(-3)
    with pytest.raises(PackError, match=r"^amount: G4-HP-1"):
        wizard.heal(-3)
    assert wizard.hp == 7


def test_forced_rest_adds_up_and_counts_down_on_the_casters_turns() -> None:
    """G4-REST-1."""
    table = RestTable().add("blue", caster="red", turns=2)
    assert table.resting("blue") and table.turns_left("blue") == 2
    table = table.turn_started("blue")  # not the caster's turn: no count
    assert table.turns_left("blue") == 2
    table = table.add("blue", caster="green", turns=1)  # adds up
    assert table.turns_left("blue") == 3
    table = table.turn_started("red")  # now counted on the latest caster's turns
    assert table.turns_left("blue") == 3
    for left in (2, 1, 0):
        table = table.turn_started("green")
        assert table.turns_left("blue") == left
    assert not table.resting("blue")
    with pytest.raises(PackError, match=r"^turns: G4-REST-1"):
        table.add("blue", caster="red", turns=0)


def test_a_rest_whose_caster_is_out_counts_on_the_resting_wizards_turns() -> None:
    table = RestTable().add("blue", caster="red", turns=1).caster_out("red")
    assert table.turn_started("blue").turns_left("blue") == 0


def test_hand_limit_7_and_draw_at_most_2() -> None:
    """G4-HAND-1."""
    assert cards_to_draw(3) == 2
    assert cards_to_draw(6) == 1
    assert cards_to_draw(7) == 0
    assert cards_to_draw(7, limit=9) == 2  # a magic stone raised the limit
    assert cards_to_discard(9) == 2
    with pytest.raises(PackError, match=r"^hand_size: G4-HAND-1"):
        cards_to_draw(-1)


def test_movement_is_3_plus_one_number_card() -> None:
    """G4-MOVE-1: 3 spaces, plus one number card (2-6), more only with ADD."""
    assert movement() == 3
    assert movement([5]) == 8
    assert movement([4, 6], add=True) == 13
    with pytest.raises(PackError, match=r"^number_cards: G4-MOVE-1: one number card"):
        movement([4, 6])
    with pytest.raises(PackError, match=r"^number_cards: G4-MOVE-1: number cards are 2..6"):
        movement([7])


def test_one_attack_per_turn() -> None:
    """G4-ATK-1."""
    turn = TurnAttacks("green").attack_with("fist")
    with pytest.raises(PackError, match=r"^attack: G4-ATK-1"):
        turn.attack_with("fireball")
    assert turn.attack == "fist"


def test_walls_doors_and_thornbushes_have_20_15_5_hp() -> None:
    """G4-HP-1; solid stone and illusion walls cannot be attacked."""
    assert [ObstacleHP.fresh(k).hp for k in (Obstacle.WALL, Obstacle.DOOR, Obstacle.THORNBUSH)] == [
        20,
        15,
        5,
    ]
    bush = ObstacleHP.fresh(Obstacle.THORNBUSH).damage(7)
    assert bush.hp == 0 and bush.destroyed
    with pytest.raises(PackError, match=r"^hp: G4-HP-1"):
        bush.damage(1)
    with pytest.raises(PackError, match=r"^kind: G4-HP-1: solid stone cannot be attacked"):
        ObstacleHP.fresh(Obstacle.SOLID_STONE)
    with pytest.raises(PackError, match=r"^hp: G4-HP-1"):
        ObstacleHP(Obstacle.DOOR, 16)


def test_the_d4_gives_directions_with_the_dice_buttons_faces() -> None:
    """G4-DICE-1."""
    assert WIZWAR_D4.faces == D4_FACES
    assert [direction_for(f) for f in D4_FACES] == [
        Direction.NORTH,
        Direction.EAST,
        Direction.SOUTH,
        Direction.WEST,
    ]
    with pytest.raises(PackError, match=r"^face: G4-DICE-1"):
        direction_for(5)


def test_start_order_by_a_roll() -> None:
    """G4-SETUP-1: highest first; ties roll again."""
    assert start_order({"a": 2, "b": 6, "c": 4}) == ("b", "c", "a")
    with pytest.raises(
        PackError, match=r"^rolls: G4-SETUP-1: tied rolls, roll again: \['a', 'c'\]"
    ):
        start_order({"a": 4, "b": 6, "c": 4})
    order = roll_start_order(["a", "b", "c", "d"], random.Random(5))
    assert sorted(order) == ["a", "b", "c", "d"]
    assert order == roll_start_order(["a", "b", "c", "d"], random.Random(5))


@PROPS
@given(st.lists(st.tuples(st.booleans(), st.integers(-2, 20)), max_size=40))
def test_hp_stays_in_0_to_15(moves: list[tuple[bool, int]]) -> None:
    wizard = Wizard("green")
    for hurt, amount in moves:
        before = wizard
        try:
            wizard = wizard.damage(amount) if hurt else wizard.heal(amount)
        except PackError:
            assert wizard == before
        assert 0 <= wizard.hp <= 15


@PROPS
@given(st.integers(0, 2**32 - 1), st.integers(2, 6))
def test_rolled_start_order_is_a_permutation(seed: int, n: int) -> None:
    names = [f"w{i}" for i in range(n)]
    order = roll_start_order(names, random.Random(seed), faces=(1, 2, 3, 4))
    assert sorted(order) == names
