"""Tower cards and tower movement (R-CARD-2, R-TOWER), potions as reward (R-POTION)."""

from __future__ import annotations

import pytest

from companion.rules import IllegalAction, MoveTower, MoveWizard, apply, legal_actions

from .conftest import T, W, position

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


def test_R_CARD_2_any_tower_moves_whoever_stands_on_it_never_the_castle():
    state = position(2)
    after, events = apply(state, MoveTower("blue", 3, 1, 3, T[3]))  # P1 with B A B on it
    assert after.stack(3) == () and after.stack(6) == ("R3", "P1")
    assert sorted(events[0]["carried_wizards"]) == sorted(state.visible_wizards(3))
    with pytest.raises(IllegalAction) as exc:
        apply(state, MoveTower("blue", 1, 1, 2, T[2]))  # space 1 holds only the castle
    assert exc.value.rule == "R-TOWER-2"


def test_R_TOWER_2_lifting_a_tier_takes_everything_above_in_order():
    stacks = dict(STACKS) | {4: ["R2", "P2", "R3"], 5: [], 6: []}
    wiz = {"blue-1": (4, 0), "blue-2": (4, 1), "yellow-1": (4, 2), "yellow-2": (4, 3)}
    state = position(2, stacks={k: v for k, v in stacks.items() if v}, wizards=wiz)
    after, events = apply(state, MoveTower("blue", 4, 2, 4, T[4]))  # lift P2 and R3
    assert after.stack(4) == ("R2",) and after.stack(8) == ("R4", "P2", "R3")
    # R-TOWER-4: t_new = t_old - (k - 1) + h_dest  -> yellow-1: 2 - 1 + 1 = 2
    assert after.wizard_position("yellow-1") == (8, 2)
    assert after.wizard_position("yellow-2") == (8, 3)
    # R-TOWER-7: blue-2 (tier 1, under P2) is revealed, blue-1 stays trapped under R2
    assert after.wizard_position("blue-2") == (4, 1) and after.visible_wizards(4) == ("blue-2",)
    assert [e for e in events if e.kind == "wizards_revealed"][0]["wizards"] == ["blue-2"]
    assert after.hidden_wizards(4) == (("blue-1", 0),)


def test_R_TOWER_8_trapping_covers_visible_wizards_of_any_colour_including_own():
    state = position(2)
    # P1 (space 3) onto R2 (space 4): A B A on R2 -> trapped, blue and yellow alike
    after, events = apply(state, MoveTower("blue", 3, 1, 1, T[1]))
    trapped = [e for e in events if e.kind == "wizards_trapped"][0]
    assert sorted(trapped["wizards"]) == sorted(state.visible_wizards(4))
    assert after.visible_wizards(4) == state.visible_wizards(3)
    for w in state.visible_wizards(4):
        assert after.wizard_position(w) == (4, 1) and after.height(4) == 2


def test_R_TOWER_9_one_potion_per_trapping_move_however_many_wizards():
    state = position(2)
    after, events = apply(state, MoveTower("blue", 3, 1, 1, T[1]))  # traps 3 wizards
    assert after.potions_of("blue") == (1, 5, 0)
    assert [e.kind for e in events].count("potion_filled") == 1


def test_R_TOWER_9_no_empty_potion_no_reward():
    state = position(2, potions={"blue": (4, 0, 2)})
    after, events = apply(state, MoveTower("blue", 3, 1, 1, T[1]))
    assert after.potions_of("blue") == (4, 0, 2)
    assert "no_empty_potion" in [e.kind for e in events]


def test_R_TOWER_10_already_hidden_or_carried_wizards_are_not_newly_trapped():
    stacks = dict(STACKS) | {2: ["R1", "P1"], 3: []}
    wiz = {"blue-1": (2, 1), "yellow-1": (5, 0)}  # both hidden; nothing visible at 5's top
    state = position(2, stacks={k: v for k, v in stacks.items() if v}, wizards=wiz)
    after, events = apply(state, MoveTower("blue", 2, 1, 3, T[3]))  # carry blue-1 onto P2
    assert "wizards_trapped" not in [e.kind for e in events]
    assert after.potions_of("blue") == (0, 6, 0)
    assert after.wizard_position("blue-1") == (5, 2)


def test_R_TOWER_12_landing_on_an_empty_space_is_legal():
    after, _ = apply(position(2), MoveTower("blue", 10, 1, 5, T[5]))
    assert after.stack(15) == ("R5",)


def test_R_TOWER_5_a_tower_may_not_end_on_the_castle_but_may_pass_it():
    state = position(2, castle=12)
    with pytest.raises(IllegalAction) as exc:
        apply(state, MoveTower("blue", 10, 1, 2, T[2]))
    assert exc.value.rule == "R-TOWER-5"
    assert MoveTower("blue", 10, 1, 2, T[2]) not in legal_actions(state)
    after, _ = apply(state, MoveTower("blue", 10, 1, 3, T[3]))
    assert after.stack(13) == ("R5",)
    # castle on top of a stack: the stack's space is just as forbidden
    on_tower = position(2, castle=10)
    with pytest.raises(IllegalAction):
        apply(on_tower, MoveTower("blue", 9, 1, 1, T[1]))


def test_R_TOWER_6_castle_on_top_rides_along():
    state = position(2, castle=10)
    after, events = apply(state, MoveTower("blue", 10, 1, 4, T[4]))
    assert after.castle == 14 and after.height(14) == 1
    assert events[0]["carried_castle"] is True
    # R-RAVEN-5: lifting from below the castle carries it too
    stacks = dict(STACKS) | {9: ["P4", "R5"], 10: []}
    state = position(2, stacks={k: v for k, v in stacks.items() if v}, castle=9)
    after, _ = apply(state, MoveTower("blue", 9, 1, 2, T[2]))
    assert after.castle == 11 and after.stack(11) == ("P4", "R5") and after.height(9) == 0


def test_R_TOWER_7_a_freed_wizard_can_move_again():
    stacks = dict(STACKS)
    state = position(2, stacks=stacks, wizards={"blue-1": (3, 0), "blue-2": (8, 1)})
    after, _ = apply(state, MoveTower("blue", 3, 1, 1, T[1]))
    assert after.visible_wizards(3) == ("blue-1",)
    after, _ = apply(after, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.wizard_position("blue-1") == (4, 2)


def test_R_CARD_2_tower_moves_list_every_tier_of_every_stack():
    stacks = dict(STACKS) | {2: ["R1", "P1", "R2"], 3: [], 4: []}
    state = position(2, stacks={k: v for k, v in stacks.items() if v}, castle=16)
    tiers = {
        (a.space, a.tier) for a in legal_actions(state) if isinstance(a, MoveTower) and a.steps == 5
    }
    assert {(2, 1), (2, 2), (2, 3)} <= tiers and (2, 4) not in tiers
