"""Expansion track and setup, Magic Fountain, Spider Web, Magic Tower and the lift penalty
(R-TRACK-5, R-MOD-GEN, R-MOD-FOUNTAIN, R-MOD-WEB, R-MOD-MAGICTOWER)."""

from __future__ import annotations

import pytest

from companion.rules import (
    MODULES,
    Cast,
    Config,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Track,
    apply,
    check_invariants,
    setup,
)
from companion.rules.expansion import FIRST_GAME_SPELLS, available_spells, expansion_track

from .conftest import E_DIE, STACKS18, T, W, kinds, mposition

MT_STACKS = {**STACKS18, 12: ["MT"]}


# -- track and setup ----------------------------------------------------------------------------


def test_R_TRACK_5_inserted_tiles_renumber_the_track_and_move_the_crests():
    fountain = expansion_track({"fountain"})
    assert fountain.length == 18
    assert sorted(fountain.raven_crest) == [1, 5, 10, 14]
    assert fountain.special_map == {9: "fountain", 18: "fountain"}
    assert expansion_track({"web"}).special_map == {9: "web", 18: "web"}
    # S1 advanced setup: one web at A, one fountain at B
    assert expansion_track({"web", "fountain"}).special_map == {9: "web", 18: "fountain"}
    assert expansion_track({"witch"}).length == 16, "no tiles without fountain or web"


def test_OPEN_10_tile_positions_and_sizes_are_configurable():
    track = expansion_track({"fountain"}, after_a=4, after_b=12, spaces_per_tile=2)
    assert track.length == 20
    assert track.special_map == {5: "fountain", 6: "fountain", 15: "fountain", 16: "fountain"}
    assert sorted(track.raven_crest) == [1, 7, 11, 17]
    with pytest.raises(ValueError):
        expansion_track({"web"}, after_a=12, after_b=4)
    given = Track(18, frozenset({1, 5, 10, 14}), ((4, "web"), (15, "fountain")))
    state = setup(Config(player_count=2, modules=frozenset({"web", "fountain"}), track=given))
    assert state.table.track == given, "a track that already has tiles is used as given"


def test_R_MOD_FOUNTAIN_1_towers_castle_and_wizards_stay_on_their_base_spaces():
    state = setup(Config(player_count=4, modules=frozenset({"fountain"})))
    assert state.castle == 1
    assert state.stack(9) == () and state.stack(18) == ()
    assert [state.stack(s) for s in (2, 3, 8, 10, 11)] == [
        ("R1",),
        ("P1",),
        ("R4",),
        ("P4",),
        ("R5",),
    ]
    # 4 players: A B C | D A B | C D A | B C | D A | B C | D  (R-SETUP-6) on the base towers
    assert [len(state.visible_wizards(s)) for s in (2, 3, 4, 5, 6, 7, 8, 10)] == [
        3,
        3,
        3,
        2,
        2,
        2,
        1,
        0,
    ]
    assert check_invariants(state) == []


def test_R_MOD_MAGICTOWER_1_magic_tower_after_the_last_tower_tokens_after_it():
    base = setup(Config(player_count=3, modules=frozenset({"magic_tower", "witch", "raven"})))
    assert base.stack(11) == ("MT",)
    assert base.modules is not None
    assert base.modules.witch == 12 << 4 and base.modules.raven == 12 << 4
    assert len(base.table.spells) == 5
    every = setup(Config(player_count=3, modules=frozenset(MODULES)), seed=4)
    assert every.stack(12) == ("MT",), "base space 11 is space 12 on the 18-space track"
    assert every.modules is not None and every.modules.witch == 13 << 4
    assert set(every.table.spells) <= set(available_spells(frozenset(MODULES)))


def test_R_MOD_WITCH_1_tokens_after_the_last_tower_without_magic_tower():
    state = setup(Config(player_count=2, modules=frozenset({"witch", "raven"})))
    assert state.modules is not None
    assert state.modules.witch == 11 << 4 and state.modules.raven == 11 << 4
    assert state.modules.witch_vial_supply == 6
    assert state.modules.feathers == (0, 0)
    assert state.table.spells == ("advance_wizard", "advance_tower"), "R-SETUP-4 unchanged"


def test_R_MOD_GEN_2_module_spells_are_drawn_only_with_their_module():
    for seed in range(8):
        spells = setup(
            Config(player_count=2, modules=frozenset({"magic_tower"})), seed
        ).table.spells
        assert len(spells) == 5
        assert not {"fountain_abundance", "precise_landing", "witch_control", "summon_raven"} & set(
            spells
        )
    first = setup(
        Config(player_count=2, modules=frozenset({"magic_tower"}), spells=FIRST_GAME_SPELLS)
    )
    assert first.table.spells == FIRST_GAME_SPELLS


# -- magic fountain ----------------------------------------------------------------------------


def fountain_state(potions: tuple[int, int, int], **kw: object) -> object:
    return mposition(
        {"fountain"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1), "yellow-1": (6, 1)},
        potions={"blue": potions},
        **kw,  # type: ignore[arg-type]
    )


def test_R_MOD_FOUNTAIN_2_a_wizard_ending_on_the_fountain_fills_an_empty_potion():
    state = fountain_state((0, 6, 0))
    after, ev = apply(state, MoveWizard("blue", "blue-1", 2, W[2]))  # 7 -> 9 fountain
    assert after.wizard_position("blue-1") == (9, 0)
    assert after.potions_of("blue") == (1, 5, 0)
    assert ("potion_filled", "fountain") in [(e.kind, e.get("reason")) for e in ev]


def test_R_MOD_FOUNTAIN_2_no_empty_potion_restores_a_spent_one_never_more_than_at_start():
    after, ev = apply(fountain_state((2, 0, 4)), MoveWizard("blue", "blue-1", 2, W[2]))
    assert after.potions_of("blue") == (3, 0, 3)
    assert "potion_restored" in kinds(ev)
    after, ev = apply(fountain_state((6, 0, 0)), MoveWizard("blue", "blue-1", 2, W[2]))
    assert after.potions_of("blue") == (6, 0, 0)
    assert "fountain_no_effect" in kinds(ev)


def test_R_MOD_FOUNTAIN_2_passing_the_fountain_gives_nothing():
    after, _ = apply(fountain_state((0, 6, 0)), MoveWizard("blue", "blue-1", 3, W[3]))
    assert after.wizard_position("blue-1") == (10, 1)
    assert after.potions_of("blue") == (0, 6, 0)


def test_OPEN_20_the_owner_benefits_when_another_player_moved_his_wizard_there():
    state = mposition(
        {"fountain"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1), "yellow-1": (8, 1)},
        potions={"blue": (3, 3, 0), "yellow": (0, 6, 0)},
        config={"spells": ("advance_wizard", "wizard_control")},
    )
    after, _ = apply(state, Cast("blue", "advance_wizard", wizard="yellow-1"))
    assert after.potions_of("yellow") == (1, 5, 0)
    off = mposition(
        {"fountain"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1), "yellow-1": (8, 1)},
        potions={"blue": (3, 3, 0), "yellow": (0, 6, 0)},
        config={
            "spells": ("advance_wizard", "wizard_control"),
            "options": {"owner_benefits_when_moved": False},
        },
    )
    after, _ = apply(off, Cast("blue", "advance_wizard", wizard="yellow-1"))
    assert after.potions_of("yellow") == (0, 6, 0)


def test_R_MOD_FOUNTAIN_4_towers_may_pass_but_not_end_on_a_fountain():
    state = fountain_state((0, 6, 0))
    with pytest.raises(IllegalAction) as err:
        apply(state, MoveTower("blue", 7, 1, 2, T[2]))
    assert err.value.rule == "R-MOD-FOUNTAIN-4"
    after, _ = apply(state, MoveTower("blue", 7, 1, 3, T[3]))  # over the fountain onto 10
    assert after.stack(10) == ("P4", "P3")
    assert not any(
        isinstance(a, MoveTower) and a.space == 7 and a.steps == 2 for a in _legal(state)
    )


def _legal(state: object) -> list[object]:
    from companion.rules import legal_actions

    return list(legal_actions(state))  # type: ignore[arg-type]


def test_R_MOD_GEN_3_a_lifted_tower_that_cannot_move_costs_the_turn():
    state = fountain_state((0, 6, 0))
    lifted = MoveTower("blue", 7, 1, 2, T[2], physically_lifted=True)
    after, ev = apply(state, lifted)
    assert after.stacks == state.stacks, "the tower goes back; nothing moves"
    assert after.turn.ended and after.turn.cards_used == 1
    assert kinds(ev)[-2:] == ["illegal_tower_lift", "turn_ended"]
    with pytest.raises(IllegalAction):
        apply(after, MoveWizard("blue", "blue-1", 1, W[1]))
    # OPEN-23 switched off: the move is simply refused
    off = fountain_state((0, 6, 0), config={"options": {"expansion_lift_penalty": False}})
    with pytest.raises(IllegalAction):
        apply(off, lifted)


# -- spider web ----------------------------------------------------------------------------------


def web_state(**kw: object) -> object:
    return mposition(
        {"web", "fountain"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1), "blue-2": (8, 1), "yellow-1": (6, 1)},
        **kw,  # type: ignore[arg-type]
    )


def test_R_MOD_WEB_2_a_wizard_ending_on_the_web_moves_the_same_number_again():
    after, ev = apply(web_state(), MoveWizard("blue", "blue-1", 2, W[2]))  # 7 -> 9 web -> 11
    assert after.wizard_position("blue-1") == (11, 1)
    bounce = next(e for e in ev if e.kind == "web_bounce")
    assert (bounce["at"], bounce["extra_steps"]) == (9, 2)


def test_R_MOD_WEB_2_counter_clockwise_moves_continue_backwards():
    moved = mposition(
        {"web", "fountain"},
        stacks=STACKS18,
        wizards={"blue-1": (10, 1), "yellow-1": (6, 1)},
        potions={"blue": (4, 2, 0)},
        config={"spells": ("headwind_wizard", "advance_wizard")},
    )
    after, _ = apply(moved, Cast("blue", "headwind_wizard", wizard="blue-1"))  # 10 -> 9 -> 8
    assert after.wizard_position("blue-1") == (8, 1)


def test_R_MOD_WEB_2_towers_continue_and_only_the_final_space_traps():
    state = web_state()
    after, ev = apply(state, MoveTower("blue", 6, 1, 3, T[3]))  # 6 -> 9 web -> 12
    assert after.stack(12) == ("R3",)
    assert after.wizard_position("yellow-1") == (12, 1), "the wizard on the roof travels"
    assert "wizards_trapped" not in kinds(ev), "passing over 9 and landing on empty 12"
    after, ev = apply(state, MoveTower("blue", 5, 1, 4, T[4]))  # 5 -> 9 web -> 13
    assert after.stack(13) == ("P2",)


def test_R_MOD_WEB_4_a_continuation_ending_on_the_castle_or_a_fountain_is_illegal():
    # castle on 11: a tower from 7 (2 steps to the web at 9, then 2 more) would land on it
    stacks = {**STACKS18, 13: ["R5"]}
    del stacks[11]
    state = mposition({"web", "fountain"}, stacks=stacks, wizards={"blue-1": (8, 1)}, castle=11)
    with pytest.raises(IllegalAction) as err:
        apply(state, MoveTower("blue", 7, 1, 2, T[2]))
    assert err.value.rule == "R-TOWER-5"
    with pytest.raises(IllegalAction) as err:
        apply(state, MoveTower("blue", 13, 1, 5, T[5]))  # 18 is the fountain at B
    assert err.value.rule == "R-MOD-FOUNTAIN-4"
    after, _ = apply(state, MoveTower("blue", 3, 1, 6, E_DIE, (6,)))  # 9 web -> 15
    assert after.stack(15) == ("P1",)


def test_R_MOD_WEB_4_a_wizard_whose_continuation_ends_on_the_castle_enters_it():
    state = mposition({"web"}, stacks=STACKS18, wizards={"blue-1": (7, 1)}, castle=11)
    after, ev = apply(state, MoveWizard("blue", "blue-1", 2, W[2]))  # 9 web -> 11 castle
    assert after.wizard_position("blue-1") is None
    assert "castle_entered" in kinds(ev) and after.turn.ended


def test_OPEN_19_a_continuation_ending_on_another_web_continues_again():
    track = Track(18, frozenset({1, 5, 10, 14}), ((5, "web"), (8, "web")))
    state = mposition(
        {"web"},
        stacks={
            2: ["R1"],
            3: ["P1"],
            4: ["R2"],
            6: ["P2"],
            7: ["R3"],
            9: ["P3"],
            10: ["R4"],
            11: ["P4"],
            12: ["R5"],
        },
        wizards={"blue-1": (2, 1)},
        config={"track": track},
    )
    after, ev = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))  # 5 web -> 8 web -> 11
    assert after.wizard_position("blue-1") == (11, 1)
    assert kinds(ev).count("web_bounce") == 2
    off = mposition(
        {"web"},
        stacks={
            2: ["R1"],
            3: ["P1"],
            4: ["R2"],
            6: ["P2"],
            7: ["R3"],
            9: ["P3"],
            10: ["R4"],
            11: ["P4"],
            12: ["R5"],
        },
        wizards={"blue-1": (2, 1)},
        config={"track": track, "options": {"web_continues_again": False}},
    )
    with pytest.raises(IllegalAction):
        apply(off, MoveWizard("blue", "blue-1", 3, W[3]))


def test_R_MOD_WEB_2_capacity_counts_at_the_final_space_only():
    wizards = {f"blue-{i}": (11, 1) for i in range(1, 6)}
    wizards.update({"yellow-1": (11, 1), "yellow-2": (7, 1)})
    state = mposition({"web"}, stacks=STACKS18, wizards=wizards, turn={"player": "yellow"})
    with pytest.raises(IllegalAction) as err:
        apply(state, MoveWizard("yellow", "yellow-2", 2, W[2]))  # 9 web -> 11 holds 6
    assert err.value.rule == "R-WIZ-4"


# -- magic tower ---------------------------------------------------------------------------------


def mt_state(**kw: object) -> object:
    return mposition(
        {"magic_tower"},
        stacks={
            2: ["R1"],
            3: ["P1"],
            4: ["R2"],
            5: ["P2"],
            6: ["R3"],
            7: ["P3"],
            8: ["R4"],
            9: ["P4"],
            10: ["R5"],
            11: ["MT"],
        },
        **kw,  # type: ignore[arg-type]
    )


def test_R_MOD_MAGICTOWER_3_no_tower_lands_on_the_magic_tower_but_it_moves_onto_others():
    state = mt_state(wizards={"blue-1": (7, 1), "yellow-1": (10, 1)})
    with pytest.raises(IllegalAction) as err:
        apply(state, MoveTower("blue", 9, 1, 2, T[2]))
    assert err.value.rule == "R-MOD-MAGICTOWER-3"
    after, _ = apply(state, MoveTower("blue", 11, 1, 3, T[3]))
    assert after.stack(14) == ("MT",)


def test_R_MOD_MAGICTOWER_4_trapping_with_the_magic_tower_gives_one_potion():
    state = mt_state(wizards={"blue-1": (7, 1), "yellow-1": (13, 0), "yellow-2": (13, 0)})
    after, ev = apply(state, MoveTower("blue", 11, 1, 2, T[2]))
    assert after.potions_of("blue") == (1, 5, 0)
    assert kinds(ev).count("potion_filled") == 1


def test_R_MOD_MAGICTOWER_5_a_wizard_ending_on_it_casts_one_spell_for_free():
    state = mt_state(
        wizards={"blue-1": (8, 1), "yellow-1": (4, 1)},
        potions={"blue": (0, 6, 0)},
        config={"spells": ("advance_wizard", "advance_tower", "headwind_tower")},
    )
    after, ev = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))
    assert after.wizard_position("blue-1") == (11, 1)
    assert "magic_tower_free_spell" in kinds(ev)
    with pytest.raises(IllegalAction):
        apply(after, Cast("blue", "advance_wizard", wizard="yellow-1"))  # no potions to pay
    free, ev = apply(after, Cast("blue", "advance_wizard", wizard="yellow-1", free=True))
    assert free.potions_of("blue") == (0, 6, 0)
    assert free.wizard_position("yellow-1") == (5, 1)
    # the right is used up, and the free spell did not count as the turn's spell
    with pytest.raises(IllegalAction):
        apply(free, Cast("blue", "advance_wizard", wizard="yellow-1", free=True))
    rich = free.potions[0]
    assert rich == (0, 6, 0)


def test_R_MOD_MAGICTOWER_5_free_spell_does_not_use_up_the_turns_spell():
    state = mt_state(
        wizards={"blue-1": (8, 1), "yellow-1": (4, 1)},
        potions={"blue": (3, 3, 0)},
        config={"spells": ("advance_wizard", "advance_tower")},
    )
    after, _ = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))
    after, _ = apply(after, Cast("blue", "advance_wizard", wizard="yellow-1", free=True))
    after, _ = apply(after, Cast("blue", "advance_wizard", wizard="yellow-1"))
    assert after.potions_of("blue") == (1, 3, 2)
    assert after.wizard_position("yellow-1") == (6, 1)


def test_OPEN_15_the_magic_tower_shows_no_crest_for_the_castle():
    # blue enters the castle on 1; the next crest top after it is R1 on 2 ... all occupied except
    # the magic tower roof on 11, which has no crest: the castle goes to the first free crest
    state = mt_state(wizards={"blue-1": (16, 0)})
    after, ev = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    moved = next(e for e in ev if e.kind == "castle_moved")
    assert moved["to"] == 2  # R1, a crest tower with nobody on it
    crowd = {f"yellow-{i}": (s, 1) for i, s in zip(range(1, 6), (2, 4, 6, 8, 10), strict=True)}
    crowd["blue-1"] = (16, 0)
    state = mt_state(wizards=crowd)
    after, ev = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    moved = next(e for e in ev if e.kind == "castle_moved")
    assert moved["to"] == 13, "crest space 13 on the track, the magic tower (11) is skipped"
    on = mt_state(wizards=crowd, config={"options": {"magic_tower_crest": True}})
    after, ev = apply(on, MoveWizard("blue", "blue-1", 1, W[1]))
    assert next(e for e in ev if e.kind == "castle_moved")["to"] == 11


def test_OPEN_26_tokens_setup_space_with_a_tile_right_after_the_last_tower():
    track = Track(18, frozenset({1, 5, 9, 14}), ((11, "fountain"), (18, "fountain")))
    mods = frozenset({"fountain", "witch", "raven"})
    default = setup(Config(player_count=2, modules=mods, track=track))
    assert default.modules is not None and default.modules.witch == 12 << 4
    switched = setup(
        Config(
            player_count=2,
            modules=mods,
            track=track,
            options={"module_setup_on_base_spaces": False},
        )
    )
    assert switched.modules is not None and switched.modules.witch == 11 << 4
    assert check_invariants(switched) == []
