"""The 8 base spells (R-SPELL-1..12) with base timing (R-SPELL-2)."""

from __future__ import annotations

import pytest

from companion.rules import (
    BASE_SPELLS,
    Cast,
    EndTurn,
    IllegalAction,
    MoveTower,
    MoveWizard,
    apply,
    legal_actions,
)

from .conftest import T, W, position

ALL = {"spells": BASE_SPELLS}
STACKS = {
    2: ["R1"],
    3: ["P1"],
    4: ["R2"],
    5: ["P2"],
    6: ["R3"],
    7: ["P3"],
    8: ["R4"],
    9: ["P4"],
    10: ["R5"],
}


def rich(**kw):
    """Two players, all 8 spells on display, blue holds 6 full potions."""
    kw.setdefault("potions", {"blue": (6, 0, 0), "yellow": (6, 0, 0)})
    kw.setdefault("config", ALL)
    return position(2, **kw)


def test_R_SPELL_1_cost_paid_in_full_potions_which_become_spent():
    s = position(2, potions={"blue": (3, 3, 0)})
    after, events = apply(s, Cast("blue", "advance_wizard", wizard="yellow-1"))
    assert after.potions_of("blue") == (1, 3, 2)
    assert [e.kind for e in events][:2] == ["spell_cast", "potions_spent"]
    poor = position(2, potions={"blue": (1, 5, 0)})
    with pytest.raises(IllegalAction) as exc:
        apply(poor, Cast("blue", "advance_wizard", wizard="blue-1"))
    assert exc.value.rule == "R-SPELL-1"


def test_R_SETUP_4_only_displayed_spells_can_be_cast():
    s = position(2, potions={"blue": (6, 0, 0)})
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("blue", "swap_tower", a=2, b=4))
    assert exc.value.rule == "R-SETUP-4"


def test_R_SPELL_2_base_timing_current_player_one_spell_once_per_turn():
    s = rich()
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("yellow", "advance_tower", space=10, tier=1))
    assert exc.value.rule == "R-SPELL-2"
    s, _ = apply(s, Cast("blue", "advance_tower", space=10, tier=1))
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("blue", "headwind_tower", space=12, tier=1))
    assert exc.value.rule == "R-SPELL-2"
    # at any moment of the own turn: after both actions too
    s2 = rich()
    s2, _ = apply(s2, MoveTower("blue", 10, 1, 1, T[1]))
    s2, _ = apply(s2, MoveTower("blue", 11, 1, 1, T[1]))
    s2, _ = apply(s2, Cast("blue", "advance_tower", space=12, tier=1))
    assert s2.stack(14) == ("R5",)
    with pytest.raises(IllegalAction) as exc:
        apply(s2, Cast("blue", "advance_tower", space=14, tier=1, times=2))
    assert exc.value.rule == "R-MASTER-8"


def test_R_SPELL_5_advance_a_wizard_moves_any_visible_wizard_one_space():
    s = rich()
    after, _ = apply(s, Cast("blue", "advance_wizard", wizard="yellow-1"))
    assert after.wizard_position("yellow-1") == (3, 1)
    trapped = rich(stacks=STACKS, wizards={"yellow-1": (3, 0), "blue-1": (2, 1)})
    with pytest.raises(IllegalAction) as exc:
        apply(trapped, Cast("blue", "advance_wizard", wizard="yellow-1"))
    assert exc.value.rule == "R-WIZ-1"


def test_R_SPELL_3_a_spell_moving_the_casters_wizard_into_the_castle_ends_his_turn():
    s = rich(wizards={"blue-1": (16, 0)})
    after, events = apply(s, Cast("blue", "advance_wizard", wizard="blue-1"))
    assert after.turn.ended and after.wizard_position("blue-1") is None
    assert events[-1].kind == "turn_ended"


def test_OPEN_05_another_colour_entering_moves_the_castle_but_does_not_end_the_turn():
    s = rich(wizards={"yellow-1": (16, 0)})
    after, events = apply(s, Cast("blue", "advance_wizard", wizard="yellow-1"))
    assert not after.turn.ended and after.castle != 1
    off = rich(
        wizards={"yellow-1": (16, 0)},
        config=ALL | {"options": {"others_entry_moves_castle": False}},
    )
    assert apply(off, Cast("blue", "advance_wizard", wizard="yellow-1"))[0].castle == 1


def test_R_SPELL_6_advance_a_tower_two_spaces_with_trapping_reward_for_the_caster():
    s = rich(potions={"blue": (2, 4, 0)})
    after, events = apply(s, Cast("blue", "advance_tower", space=2, tier=1))
    assert after.stack(4) == ("R2", "R1")
    assert after.potions_of("blue") == (2, 3, 1), "paid 1, filled 1"
    assert "potion_filled" in [e.kind for e in events]


def test_R_SPELL_7_swap_the_top_towers_of_two_stacks_wizards_on_roofs_travel():
    stacks = STACKS | {2: ["R1", "P1"], 3: []}
    s = rich(stacks=stacks, wizards={"blue-1": (2, 2), "blue-2": (2, 1), "yellow-1": (10, 1)})
    after, events = apply(s, Cast("blue", "swap_tower", a=2, b=10))
    assert after.stack(2) == ("R1", "R5") and after.stack(10) == ("P1",)
    assert after.wizard_position("blue-1") == (10, 1)
    assert after.wizard_position("yellow-1") == (2, 2)
    assert after.wizard_position("blue-2") == (2, 1), "hidden pieces stay"
    assert events[-1].kind == "towers_swapped"
    assert "potion_filled" not in [e.kind for e in events]
    with pytest.raises(IllegalAction):
        apply(s, Cast("blue", "swap_tower", a=2, b=11))  # no tower on 11
    with pytest.raises(IllegalAction):
        apply(rich(castle=10), Cast("blue", "swap_tower", a=2, b=10))  # castle's stack


def test_OPEN_02_swap_only_with_the_stack_two_spaces_clockwise_when_switched():
    s = rich(config=ALL | {"options": {"swap_any_distance": False}})
    with pytest.raises(IllegalAction):
        apply(s, Cast("blue", "swap_tower", a=2, b=10))
    apply(s, Cast("blue", "swap_tower", a=2, b=4))


def test_R_SPELL_8_headwind_for_a_wizard_one_space_back_entering_the_castle_exactly():
    s = rich(wizards={"yellow-1": (2, 1)})
    after, _ = apply(s, Cast("blue", "headwind_wizard", wizard="yellow-1"))
    assert after.wizard_position("yellow-1") is None and after.castle != 1


def test_R_SPELL_9_headwind_for_a_tower_two_spaces_counter_clockwise_wrapping():
    s = rich()
    after, _ = apply(s, Cast("blue", "headwind_tower", space=2, tier=1))
    assert after.stack(2) == () and after.stack(16) == ("R1",)
    assert after.visible_wizards(16) == s.visible_wizards(2)
    with pytest.raises(IllegalAction) as exc:
        apply(rich(castle=16), Cast("blue", "headwind_tower", space=2, tier=1))
    assert exc.value.rule == "R-TOWER-5"


def test_R_SPELL_10_move_the_castle_to_the_next_unoccupied_space_either_way():
    s = rich()
    cw, events = apply(s, Cast("blue", "move_castle", direction="cw"))
    # 2 players: roofs of 2..5 occupied; space 6 (R3) is free; no crest needed
    assert cw.castle == 6 and events[-1]["tier"] == 1
    ccw, _ = apply(s, Cast("blue", "move_castle", direction="ccw"))
    assert ccw.castle == 16
    with pytest.raises(IllegalAction):
        apply(s, Cast("blue", "move_castle", direction="up"))


def test_R_SPELL_11_piggyback_carries_the_casters_wizard_along():
    s = rich()
    move = MoveWizard("blue", "blue-1", 4, W[4])
    # blue-1 and blue-2 both stand on R1 at space 2 (A B A): blue casts for himself
    after, events = apply(s, Cast("blue", "piggyback", rider="blue-2", then=move))
    assert after.wizard_position("blue-1") == after.wizard_position("blue-2") == (6, 1)
    assert after.turn.cards_used == 1
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("blue", "piggyback", rider="blue-3", then=move))  # on space 3
    assert exc.value.rule == "R-SPELL-11"


def test_OPEN_04_piggyback_both_count_for_capacity_and_double_entry_moves_castle_once():
    four = {f"yellow-{i}": (6, 1) for i in range(1, 6)}
    s = rich(stacks=STACKS, wizards=four | {"blue-1": (2, 1), "blue-2": (2, 1)})
    with pytest.raises(IllegalAction) as exc:  # 5 + 2 > 6
        apply(
            s, Cast("blue", "piggyback", rider="blue-2", then=MoveWizard("blue", "blue-1", 4, W[4]))
        )
    assert exc.value.rule == "R-WIZ-4"
    s = rich(stacks=STACKS, wizards={"blue-1": (15, 0), "blue-2": (15, 0), "yellow-1": (2, 1)})
    after, events = apply(
        s, Cast("blue", "piggyback", rider="blue-2", then=MoveWizard("blue", "blue-1", 2, W[2]))
    )
    kinds = [e.kind for e in events]
    assert kinds.count("castle_entered") == 2 and kinds.count("castle_moved") == 1
    assert after.turn.ended


def test_R_SPELL_12_free_a_wizard_any_time_onto_the_top_of_the_whole_stack():
    stacks = STACKS | {4: ["R2", "P2", "R3"], 5: [], 6: []}
    s = rich(stacks=stacks, wizards={"yellow-1": (4, 0), "yellow-2": (4, 1), "blue-1": (8, 1)})
    # yellow casts during blue's turn (base game: Free a Wizard is the exception)
    after, events = apply(s, Cast("yellow", "free_wizard", space=4, tier=1, wizard="yellow-1"))
    assert after.wizard_position("yellow-1") == (4, 3), "OPEN-03: on top of the whole stack"
    assert after.potions_of("yellow") == (4, 0, 2)
    lifted = [e for e in events if e.kind == "tower_lifted_and_replaced"][0]
    assert lifted["seen_underneath"] == ["yellow-1"]
    # nothing of his own there: the potions are spent anyway
    failed, events = apply(s, Cast("yellow", "free_wizard", space=8, tier=1))
    assert events[-1].kind == "free_failed" and failed.potions_of("yellow") == (4, 0, 2)
    with pytest.raises(IllegalAction):  # blue-1 is not yellow's
        apply(s, Cast("yellow", "free_wizard", space=8, tier=1, wizard="blue-1"))
    with pytest.raises(IllegalAction):  # yellow-2 is under tower 3, not tower 1
        apply(s, Cast("yellow", "free_wizard", space=4, tier=1, wizard="yellow-2"))


def test_R_SPELL_12_freed_wizard_goes_straight_into_the_castle_on_top():
    s = rich(stacks=STACKS, wizards={"yellow-1": (10, 0), "blue-1": (3, 1)}, castle=10)
    after, events = apply(s, Cast("yellow", "free_wizard", space=10, tier=1, wizard="yellow-1"))
    assert after.wizard_position("yellow-1") is None and after.castle != 10
    assert not after.turn.ended, "blue's turn goes on: the wizard is yellow's"


def test_OPEN_03_free_a_wizard_onto_a_full_top_is_illegal():
    six = {f"blue-{i}": (4, 1) for i in range(1, 6)} | {"yellow-2": (4, 1)}
    s = rich(stacks=STACKS, wizards=six | {"yellow-1": (4, 0)})
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("yellow", "free_wizard", space=4, tier=1, wizard="yellow-1"))
    assert exc.value.rule == "R-SPELL-12"


def test_OPEN_25_an_off_turn_free_a_wizard_uses_that_players_allowance():
    s = rich(stacks=STACKS, wizards={"yellow-1": (4, 0), "yellow-2": (5, 0), "blue-1": (8, 1)})
    s, _ = apply(s, Cast("yellow", "free_wizard", space=4, tier=1, wizard="yellow-1"))
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("yellow", "free_wizard", space=5, tier=1, wizard="yellow-2"))
    assert exc.value.rule == "R-SPELL-2"
    s, _ = apply(s, Cast("blue", "advance_tower", space=10, tier=1))  # blue's own allowance


def test_R_SPELL_spells_listed_by_legal_actions_are_all_accepted():
    s = rich()
    casts = [a for a in legal_actions(s) if isinstance(a, Cast)]
    assert {c.spell for c in casts} == set(BASE_SPELLS)
    for c in casts:
        apply(s, c)
    assert EndTurn() not in legal_actions(s)


def test_OPEN_03_literal_reading_frees_onto_the_roof_of_the_trapping_tower():
    stacks = STACKS | {4: ["R2", "P2", "R3"], 5: [], 6: []}
    s = rich(
        stacks=stacks,
        wizards={"yellow-1": (4, 0), "blue-1": (8, 1)},
        config=ALL | {"options": {"free_wizard_to_top_of_stack": False}},
    )
    after, _ = apply(s, Cast("yellow", "free_wizard", space=4, tier=1, wizard="yellow-1"))
    assert after.wizard_position("yellow-1") == (4, 1), "on R2's roof, under P2: still hidden"
