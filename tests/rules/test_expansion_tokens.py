"""Witch and Raven modules, feathers, and the order of effects (R-MOD-WITCH, R-MOD-RAVEN,
R-ORDER, OPEN-16/17/18/21)."""

from __future__ import annotations

from typing import Any

import pytest

from companion.rules import (
    Cast,
    EndTurn,
    Feather,
    IllegalAction,
    MoveTower,
    MoveWizard,
    apply,
    check_invariants,
    observe,
    view,
)

from .conftest import BASE_STACKS, E_DIE, STACKS18, T, W, kinds, mposition

TOKENS = {"witch", "raven"}


def tokens(**kw: Any) -> Any:
    kw.setdefault("stacks", BASE_STACKS)
    return mposition(kw.pop("modules", TOKENS), **kw)


# -- witch -------------------------------------------------------------------------------------


def test_R_MOD_WITCH_2_4_a_page_card_moves_the_witch_first_and_costs_the_owners_a_potion():
    state = tokens(
        wizards={"blue-1": (7, 1), "yellow-1": (12, 0), "yellow-2": (12, 0)},
        witch=(11, 0),
        potions={"yellow": (2, 4, 0)},
    )
    after, ev = apply(state, MoveWizard("blue", "blue-1", 1, W[1], page=True))
    assert after.modules.witch == 12 << 4
    assert after.potions_of("yellow") == (1, 5, 0), "once per player, however many wizards"
    order = kinds(ev)
    assert order.index("witch_moved") < order.index("potion_emptied") < order.index("wizard_moved")
    plain, _ = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert plain.modules.witch == 11 << 4, "only page cards move the witch"


def test_R_MOD_WITCH_3_the_witch_skips_the_castle():
    state = tokens(wizards={"blue-1": (7, 1)}, witch=(11, 0), castle=12)
    after, ev = apply(state, MoveWizard("blue", "blue-1", 1, W[1], page=True))
    assert after.modules.witch == 13 << 4
    assert "witch_skips_castle" in kinds(ev)


def test_R_MOD_WITCH_5_a_wizard_ending_on_the_witch_costs_its_owner_a_potion():
    state = tokens(
        wizards={"blue-1": (10, 1), "yellow-1": (3, 1)}, witch=(11, 0), potions={"blue": (1, 5, 0)}
    )
    after, _ = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.potions_of("blue") == (0, 6, 0)
    # moved there by another player's spell: the owner is affected (S1 special case)
    other = tokens(
        wizards={"blue-1": (10, 1), "yellow-1": (3, 1)},
        witch=(11, 0),
        potions={"blue": (1, 5, 0), "yellow": (2, 4, 0)},
        turn={"player": "yellow"},
    )
    after, _ = apply(other, Cast("yellow", "advance_wizard", wizard="blue-1"))
    assert after.potions_of("blue") == (0, 6, 0)
    assert after.potions_of("yellow") == (0, 4, 2)


def test_R_MOD_WITCH_6_no_full_potion_nothing_all_spent_an_empty_witch_vial():
    state = tokens(wizards={"blue-1": (10, 1)}, witch=(11, 0), potions={"blue": (0, 3, 3)})
    after, ev = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.potions_of("blue") == (0, 3, 3) and "witch_no_effect" in kinds(ev)
    spent = tokens(wizards={"blue-1": (10, 1)}, witch=(11, 0), potions={"blue": (0, 0, 6)})
    after, ev = apply(spent, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.modules.witch_vials[0] == (0, 1, 0)
    assert after.modules.witch_vial_supply == 5
    assert "witch_vial_taken" in kinds(ev)
    assert check_invariants(after) == []


def test_OPEN_18_an_exhausted_vial_supply_means_no_effect():
    state = tokens(
        wizards={"blue-1": (10, 1)},
        witch=(11, 0),
        potions={"blue": (0, 0, 6)},
        vials={"yellow": (0, 6, 0)},
        supply=0,
    )
    after, ev = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.modules.witch_vials[0] == (0, 0, 0) and "witch_no_effect" in kinds(ev)


def test_R_MOD_WITCH_6_an_empty_witch_vial_blocks_the_game_end():
    wizards = {"blue-1": (15, 0)}  # the other blue wizards are in the castle
    with_vial = tokens(
        wizards=wizards,
        witch=(5, 1),
        potions={"blue": (0, 0, 6)},
        vials={"blue": (0, 1, 0)},
        supply=5,
    )
    after, ev = apply(with_vial, MoveWizard("blue", "blue-1", 2, W[2]))
    assert after.wizard_position("blue-1") is None
    assert "game_end_triggered" not in kinds(ev)
    without = tokens(wizards=wizards, witch=(5, 1), potions={"blue": (0, 0, 6)})
    after, ev = apply(without, MoveWizard("blue", "blue-1", 2, W[2]))
    assert "game_end_triggered" in kinds(ev)


def test_R_MOD_WITCH_7_covering_the_witch_seals_her_for_one_potion():
    state = tokens(wizards={"blue-1": (7, 1), "yellow-1": (11, 0)}, witch=(11, 0))
    after, ev = apply(state, MoveTower("blue", 10, 1, 1, T[1]))
    assert "witch_sealed" in kinds(ev) and "wizards_trapped" in kinds(ev)
    assert after.potions_of("blue") == (1, 5, 0), "witch and wizard together: one potion"
    assert after.modules.witch == 11 << 4
    assert not observe(after).spaces[11].witch, "a sealed witch is not seen"
    # no normal empty potion: an empty witch vial is filled (only by sealing)
    vial = tokens(
        wizards={"blue-1": (7, 1)},
        witch=(11, 0),
        potions={"blue": (6, 0, 0)},
        vials={"blue": (0, 1, 0)},
        supply=5,
    )
    after, ev = apply(vial, MoveTower("blue", 10, 1, 1, T[1]))
    assert after.modules.witch_vials[0] == (1, 0, 0)
    assert "witch_vial_filled" in kinds(ev)


def sealed(**kw: Any) -> Any:
    stacks = {**BASE_STACKS, 11: ["R5"]}
    del stacks[10]
    return tokens(stacks=stacks, witch=(11, 0), **kw)


def test_R_MOD_WITCH_8_moving_the_covering_tower_reveals_her():
    state = sealed(wizards={"blue-1": (7, 1)})
    after, ev = apply(state, MoveTower("blue", 11, 1, 2, T[2]))
    assert "witch_revealed" in kinds(ev)
    assert observe(after).spaces[11].witch


def test_R_MOD_WITCH_9_release_right_guess_then_the_move():
    state = sealed(wizards={"blue-1": (7, 1), "yellow-1": (12, 0)}, potions={"yellow": (1, 5, 0)})
    action = MoveWizard("blue", "blue-1", 1, W[1], page=True, witch_guess=(11, 1))
    after, ev = apply(state, action)
    assert kinds(ev)[:2] == ["witch_released", "witch_moved"]
    assert after.modules.witch == 12 << 4
    assert after.potions_of("yellow") == (0, 6, 0)
    assert after.wizard_position("blue-1") == (8, 1)
    assert after.stack(11) == ("R5",), "the tower is put back"


def test_R_MOD_WITCH_9_release_wrong_guess_ends_the_turn_and_loses_the_card():
    state = sealed(wizards={"blue-1": (7, 1)}, hands={"blue": [W[1], T[2], T[3]]})
    wrong = MoveWizard("blue", "blue-1", 1, W[1], page=True, witch_guess=(2, 1))
    after, ev = apply(state, wrong)
    assert "witch_guess_wrong" in kinds(ev) and after.turn.ended
    assert after.modules.witch == state.modules.witch and after.stacks == state.stacks
    assert after.wizard_position("blue-1") == (7, 1)
    assert after.hand("blue") == (T[2], T[3]), "the card is discarded without effect"
    after, ev = apply(after, EndTurn())
    assert after.cards is not None and len(after.cards.hands[0]) == 3, "refill to 3"
    moved = sealed(wizards={"blue-1": (7, 1)})
    with pytest.raises(IllegalAction) as err:
        apply(moved, MoveWizard("blue", "blue-1", 1, W[1], page=True))
    assert err.value.rule == "R-MOD-WITCH-9"


def test_R_MOD_WITCH_10_a_feather_blocks_one_witch_effect():
    state = tokens(
        wizards={"blue-1": (7, 1), "yellow-1": (12, 0)},
        witch=(11, 0),
        potions={"yellow": (2, 4, 0)},
        feathers={"yellow": 1},
    )
    action = MoveWizard("blue", "blue-1", 1, W[1], page=True, witch_protect=("yellow",))
    after, ev = apply(state, action)
    assert after.potions_of("yellow") == (2, 4, 0)
    assert after.modules.feathers == (0, 0)
    assert "witch_blocked" in kinds(ev)
    broke = tokens(
        wizards={"blue-1": (7, 1), "yellow-1": (12, 0)},
        witch=(11, 0),
        potions={"yellow": (2, 4, 0)},
    )
    with pytest.raises(IllegalAction):
        apply(broke, action)


def test_OPEN_21_only_visible_wizards_are_hit_by_the_witch():
    stacks = {**BASE_STACKS, 12: ["R5"]}
    del stacks[10]
    state = tokens(
        stacks=stacks,
        wizards={"blue-1": (7, 1), "yellow-1": (12, 0)},  # under R5
        witch=(11, 0),
        potions={"yellow": (2, 4, 0)},
    )
    after, _ = apply(state, MoveWizard("blue", "blue-1", 1, W[1], page=True))
    assert after.modules.witch == 12 << 4 | 1
    assert after.potions_of("yellow") == (2, 4, 0)


# -- raven ---------------------------------------------------------------------------------------


def test_R_MOD_RAVEN_2_a_die_card_moves_the_raven_by_the_value_used_before_or_after():
    state = tokens(wizards={"blue-1": (7, 1), "yellow-1": (14, 0)}, raven=(11, 0))
    after, ev = apply(state, MoveTower("blue", 2, 1, 3, E_DIE, (3,)))
    assert after.modules.raven == 14 << 4
    assert kinds(ev).index("tower_moved") < kinds(ev).index("raven_moved")
    assert after.modules.feathers == (0, 1), "effect A: yellow's wizard is there"
    before, ev = apply(state, MoveTower("blue", 2, 1, 3, E_DIE, (3,), raven_timing="before"))
    assert kinds(ev).index("raven_moved") < kinds(ev).index("tower_moved")
    with pytest.raises(IllegalAction):
        apply(state, MoveTower("blue", 2, 1, 3, T[3], raven_timing="before"))


def test_R_MOD_RAVEN_2_the_raven_skips_the_castle():
    state = tokens(wizards={"blue-1": (7, 1)}, raven=(11, 0), castle=13)
    after, ev = apply(state, MoveTower("blue", 2, 1, 2, E_DIE, (2,)))
    assert after.modules.raven == 14 << 4
    assert "raven_skips_castle" in kinds(ev)


def test_R_MOD_WEB_5_skipping_the_castle_onto_a_web_continues_by_the_distance_travelled():
    # S1 example: raven rolled 2, the castle 2 ahead, the web right after it -> continues 3
    state = mposition(
        {"web", "raven"}, stacks=STACKS18, wizards={"blue-1": (7, 1)}, raven=(6, 1), castle=8
    )
    stacks = {**STACKS18}
    assert state.stack(8) == tuple(stacks[8])
    after, ev = apply(state, MoveWizard("blue", "blue-1", 2, E_DIE, (2,)))
    assert after.modules.raven == 12 << 4
    bounce = next(e for e in ev if e.kind == "web_bounce" and e["piece"] == "raven")
    assert bounce["extra_steps"] == 3


def test_R_MOD_RAVEN_4_5_a_wizard_ending_on_the_raven_gains_a_feather_at_most_three():
    state = tokens(wizards={"blue-1": (10, 1)}, raven=(11, 0))
    after, ev = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.modules.feathers == (1, 0)
    full = tokens(wizards={"blue-1": (10, 1)}, raven=(11, 0), feathers={"blue": 3})
    after, ev = apply(full, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.modules.feathers == (3, 0) and "feather_cap_reached" in kinds(ev)


def test_R_MOD_RAVEN_7_a_landing_tower_pops_the_raven_up_and_its_wizards_gain_feathers():
    state = tokens(
        wizards={"blue-1": (10, 1), "yellow-1": (11, 0)}, raven=(11, 0), potions={"blue": (0, 6, 0)}
    )
    after, ev = apply(state, MoveTower("blue", 10, 1, 1, T[1]))
    assert after.modules.raven == 11 << 4 | 1
    assert after.wizard_position("yellow-1") == (11, 0), "still trapped as usual"
    assert after.modules.feathers == (1, 0), "blue's carried wizard is on the new top"
    order = kinds(ev)
    # R-ORDER-3: land, trap, reward, raven up + feathers
    assert (
        order.index("wizards_trapped")
        < order.index("potion_filled")
        < order.index("raven_popped_up")
        < order.index("feather_gained")
    )
    assert check_invariants(after) == []


def test_OPEN_16_tokens_on_a_moved_roof_ride_along_without_effect():
    state = tokens(
        wizards={"blue-1": (7, 1), "yellow-1": (13, 0)},
        raven=(10, 1),
        witch=(10, 1),
        potions={"yellow": (2, 4, 0)},
    )
    after, ev = apply(state, MoveTower("blue", 10, 1, 3, T[3]))
    assert after.modules.raven == 13 << 4 | 1 and after.modules.witch == 13 << 4 | 1
    assert after.potions_of("yellow") == (2, 4, 0) and after.modules.feathers == (0, 0)


# -- feathers -------------------------------------------------------------------------------------


def test_R_MOD_RAVEN_6_a_feather_buys_a_third_card_once_per_turn():
    state = tokens(wizards={"blue-1": (3, 1)}, feathers={"blue": 3})
    s = state
    for _ in range(2):
        s, _ = apply(s, MoveWizard("blue", "blue-1", 1, W[1]))
    with pytest.raises(IllegalAction):
        apply(s, MoveWizard("blue", "blue-1", 1, W[1]))
    s, ev = apply(s, Feather("blue", "extra_card"))
    assert s.modules.feathers == (2, 0)
    s, _ = apply(s, MoveWizard("blue", "blue-1", 1, W[1]))
    assert s.wizard_position("blue-1") == (6, 1)
    with pytest.raises(IllegalAction) as err:
        apply(s, Feather("blue", "free_spell"))
    assert "once per turn" in err.value.reason


def test_R_MOD_RAVEN_6_free_spell_and_moving_any_wizard():
    state = tokens(wizards={"blue-1": (3, 1), "yellow-1": (4, 1)}, feathers={"blue": 3})
    s, _ = apply(state, Feather("blue", "free_spell"))
    s, _ = apply(s, Cast("blue", "advance_wizard", wizard="yellow-1", free=True))
    assert s.potions_of("blue") == (0, 6, 0) and s.wizard_position("yellow-1") == (5, 1)
    moved, _ = apply(state, Feather("blue", "move_wizard", wizard="yellow-1", steps=5))
    assert moved.wizard_position("yellow-1") == (9, 1) and moved.modules.feathers == (0, 0)
    with pytest.raises(IllegalAction):
        apply(state, Feather("yellow", "extra_card"))  # not yellow's turn


def test_OPEN_13_feather_costs_are_configurable():
    state = tokens(
        wizards={"blue-1": (3, 1)},
        feathers={"blue": 1},
        config={"feather_costs": {"extra_card": 2}},
    )
    with pytest.raises(IllegalAction):
        apply(state, Feather("blue", "extra_card"))


# -- order of effects, castle -------------------------------------------------------------------


def test_R_ORDER_1_witch_then_fountain_then_raven():
    state = mposition(
        {"fountain", "witch", "raven"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1)},
        witch=(9, 0),
        raven=(9, 0),
        potions={"blue": (1, 5, 0)},
    )
    after, ev = apply(state, MoveWizard("blue", "blue-1", 2, W[2]))
    order = kinds(ev)
    assert (
        order.index("potion_emptied") < order.index("potion_filled") < order.index("feather_gained")
    )
    assert after.potions_of("blue") == (1, 5, 0) and after.modules.feathers == (1, 0)


def test_R_ORDER_4_castle_entry_then_castle_move_then_turn_end():
    state = tokens(wizards={"blue-1": (15, 0), "blue-2": (3, 1)})
    after, ev = apply(state, MoveWizard("blue", "blue-1", 2, W[2]))
    order = kinds(ev)
    assert order.index("castle_entered") < order.index("castle_moved") < order.index("turn_ended")


def test_OPEN_17_a_token_makes_a_crest_top_occupied_for_the_castle():
    state = tokens(wizards={"blue-1": (15, 0), "blue-2": (3, 1)}, witch=(2, 1))
    after, _ = apply(state, MoveWizard("blue", "blue-1", 2, W[2]))
    assert after.castle == 4, "R1 on 2 holds the witch; the next crest top is R2 on 4"
    off = tokens(
        wizards={"blue-1": (15, 0), "blue-2": (3, 1)},
        witch=(2, 1),
        config={"options": {"tokens_occupy_for_castle": False}},
    )
    after, _ = apply(off, MoveWizard("blue", "blue-1", 2, W[2]))
    assert after.castle == 2


# -- what is seen ---------------------------------------------------------------------------


def test_observe_reports_tokens_and_tiles_view_hides_a_sealed_witch():
    state = mposition(
        {"fountain", "web", "witch", "raven"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1)},
        witch=(12, 0),
        raven=(13, 0),
    )
    obs = observe(state)
    assert obs.spaces[12].witch and obs.spaces[13].raven
    assert obs.spaces[9].top == "web" and obs.spaces[18].top == "fountain"
    hidden = sealed(wizards={"blue-1": (7, 1)})
    assert view(hidden, "blue")["witch"] == "sealed"
    assert view(hidden, "blue", memory_aid="all")["witch"] == {"space": 11, "tier": 0}
    assert view(state, "blue")["witch"] == {"space": 12, "tier": 0}


# -- OPEN switches of the modules ---------------------------------------------------------------


def test_OPEN_16_switched_off_a_token_on_the_lifted_roof_stays_behind():
    state = tokens(
        wizards={"blue-1": (7, 1)},
        raven=(10, 1),
        witch=(10, 1),
        config={"options": {"tokens_ride_towers": False}},
    )
    after, _ = apply(state, MoveTower("blue", 10, 1, 3, T[3]))
    assert after.modules.raven == 10 << 4 and after.modules.witch == 10 << 4
    assert check_invariants(after) == []


def test_OPEN_21_switched_off_hidden_wizards_count_for_the_witch():
    stacks = {**BASE_STACKS, 12: ["R5"]}
    del stacks[10]
    state = tokens(
        stacks=stacks,
        wizards={"blue-1": (7, 1), "yellow-1": (12, 0)},
        witch=(11, 0),
        potions={"yellow": (2, 4, 0)},
        config={"options": {"token_effects_visible_only": False}},
    )
    after, _ = apply(state, MoveWizard("blue", "blue-1", 1, W[1], page=True))
    assert after.potions_of("yellow") == (1, 5, 0)


def test_OPEN_18_switched_off_vials_are_handed_out_beyond_the_supply():
    state = tokens(
        wizards={"blue-1": (10, 1)},
        witch=(11, 0),
        potions={"blue": (0, 0, 6)},
        vials={"yellow": (0, 6, 0)},
        supply=0,
        config={"options": {"witch_vial_exhausted_no_effect": False}},
    )
    after, _ = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.modules.witch_vials[0] == (0, 1, 0)
    assert check_invariants(after) == []


def test_OPEN_11_fountain_crest_and_castle_spell_on_a_fountain():
    from companion.rules import Track

    track = Track(18, frozenset({1, 5, 9, 14}), ((9, "fountain"), (18, "fountain")))
    wizards = {
        "blue-1": (7, 1),
        **{f"yellow-{i}": (s, 1) for i, s in ((1, 2), (2, 4), (3, 6), (4, 8))},
    }
    on = mposition(
        {"fountain"},
        stacks=STACKS18,
        wizards=wizards,
        castle=1,
        config={"track": track, "options": {"fountain_web_crest": True}},
    )
    after, _ = apply(on, MoveWizard("blue", "blue-1", 1, W[1]))
    entered, _ = apply(
        mposition(
            {"fountain"},
            stacks=STACKS18,
            wizards={**wizards, "blue-1": (17, 0)},
            config={"track": track, "options": {"fountain_web_crest": True}},
        ),
        MoveWizard("blue", "blue-1", 2, W[2]),
    )
    assert entered.castle == 9, "the crest on the fountain attracts the castle"
    off, _ = apply(
        mposition(
            {"fountain"},
            stacks=STACKS18,
            wizards={**wizards, "blue-1": (17, 0)},
            config={"track": track},
        ),
        MoveWizard("blue", "blue-1", 2, W[2]),
    )
    assert off.castle != 9
    assert after.castle == 1


def test_R_MOD_FOUNTAIN_3_witch_and_raven_may_stop_on_a_fountain():
    state = mposition(
        {"fountain", "witch", "raven"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1)},
        witch=(8, 1),
        raven=(6, 1),
    )
    after, _ = apply(state, MoveWizard("blue", "blue-1", 3, E_DIE, (3,), page=True))
    assert after.modules.witch == 9 << 4, "the witch steps onto the fountain at 9"
    assert after.modules.raven == 9 << 4, "the raven moves 3 from 6 onto the fountain"


def test_R_SPELL_10_nudging_the_castle_skips_tiles_and_token_tops():
    state = mposition(
        {"fountain", "witch"},
        stacks=STACKS18,
        wizards={"blue-1": (3, 1)},
        witch=(12, 0),
        castle=11,
        potions={"blue": (2, 4, 0)},
        config={"spells": ("move_castle", "advance_tower")},
    )
    # clockwise from 11: 12 holds the witch, 13 is free
    after, _ = apply(state, Cast("blue", "move_castle", direction="cw"))
    assert after.castle == 13
    back = mposition(
        {"fountain", "witch"},
        stacks=STACKS18,
        wizards={"blue-1": (3, 1), "yellow-1": (8, 1)},
        witch=(12, 0),
        castle=10,
        potions={"blue": (2, 4, 0)},
        config={"spells": ("move_castle", "advance_tower")},
    )
    # counter-clockwise from 10: 9 is the fountain (OPEN-11), 8 holds yellow, 7 is free
    after, _ = apply(back, Cast("blue", "move_castle", direction="ccw"))
    assert after.castle == 7
