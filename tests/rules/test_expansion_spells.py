"""The eight expansion spells (R-SPELLX, OPEN-14) and the JSON of expansion states/actions."""

from __future__ import annotations

from typing import Any

import pytest

from companion.rules import (
    DEFAULT_SPELL_COSTS,
    Cast,
    Feather,
    FormatError,
    IllegalAction,
    MoveTower,
    MoveWizard,
    apply,
    dump_action,
    dump_state,
    legal_actions,
    load_action,
    load_state,
)

from .conftest import BASE_STACKS, E_DIE, STACKS18, W, kinds, mposition


def spell_state(spells: tuple[str, ...], modules: set[str] | None = None, **kw: Any) -> Any:
    kw.setdefault("stacks", BASE_STACKS)
    kw.setdefault("potions", {"blue": (6, 0, 0)})
    config = {"spells": spells, **kw.pop("config", {})}
    return mposition(modules or {"magic_tower"}, config=config, **kw)


MT_BASE = {**BASE_STACKS, 11: ["MT"]}


def test_OPEN_14_default_costs_of_the_expansion_spells():
    assert {
        s: DEFAULT_SPELL_COSTS[s]
        for s in (
            "wizard_control",
            "wizard_sprint",
            "tower_sprint",
            "fountain_abundance",
            "precise_landing",
            "witch_control",
            "summon_raven",
            "fly_to_magic_tower",
        )
    } == {
        "wizard_control": 2,
        "wizard_sprint": 3,
        "tower_sprint": 2,
        "fountain_abundance": 1,
        "precise_landing": 1,
        "witch_control": 2,
        "summon_raven": 1,
        "fly_to_magic_tower": 2,
    }


def test_R_SPELLX_2_wizard_control_moves_any_wizard_1_to_3():
    state = spell_state(
        ("wizard_control", "advance_tower"),
        stacks=MT_BASE,
        wizards={"blue-1": (3, 1), "yellow-1": (4, 1)},
    )
    after, _ = apply(state, Cast("blue", "wizard_control", wizard="yellow-1", steps=3))
    assert after.wizard_position("yellow-1") == (7, 1)
    assert after.potions_of("blue") == (4, 0, 2)
    with pytest.raises(IllegalAction):
        apply(state, Cast("blue", "wizard_control", wizard="yellow-1", steps=4))
    listed = {
        (a.wizard, a.steps)
        for a in legal_actions(state)
        if isinstance(a, Cast) and a.spell == "wizard_control"
    }
    assert ("yellow-1", 1) in listed and ("blue-1", 3) in listed


def test_R_SPELLX_3_4_sprints_move_exactly_six():
    state = spell_state(
        ("wizard_sprint", "tower_sprint"),
        stacks=MT_BASE,
        wizards={"blue-1": (3, 1), "yellow-1": (13, 0)},
        potions={"blue": (5, 1, 0)},
    )
    after, _ = apply(state, Cast("blue", "wizard_sprint", wizard="blue-1"))
    assert after.wizard_position("blue-1") == (9, 1)
    after, ev = apply(state, Cast("blue", "tower_sprint", space=7, tier=1))
    assert after.stack(13) == ("P3",) and "wizards_trapped" in kinds(ev)
    assert after.potions_of("blue") == (4, 0, 2), "2 spent, the empty one filled by trapping"


def test_R_SPELLX_5_fountain_abundance_fills_two():
    state = spell_state(
        ("fountain_abundance", "advance_tower"),
        {"fountain"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1)},
        potions={"blue": (1, 5, 0)},
    )
    armed, ev = apply(state, Cast("blue", "fountain_abundance"))
    assert armed.potions_of("blue") == (0, 5, 1) and "spell_armed" in kinds(ev)
    after, _ = apply(armed, MoveWizard("blue", "blue-1", 2, W[2]))
    assert after.potions_of("blue") == (2, 3, 1)
    assert after.modules.armed == ()


def test_R_SPELLX_6_precise_landing_chooses_1_to_3_after_the_web():
    state = spell_state(
        ("precise_landing", "advance_tower"),
        {"web"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1)},
    )
    with pytest.raises(IllegalAction):
        apply(state, MoveWizard("blue", "blue-1", 2, W[2], web_steps=1))
    armed, _ = apply(state, Cast("blue", "precise_landing"))
    after, ev = apply(armed, MoveWizard("blue", "blue-1", 2, W[2], web_steps=1))
    assert after.wizard_position("blue-1") == (10, 1), "9 web, then 1 instead of 2"
    plain, _ = apply(armed, MoveWizard("blue", "blue-1", 2, W[2]))
    assert plain.wizard_position("blue-1") == (11, 1), "not used: the same number again"


def test_R_SPELLX_7_witch_control_moves_her_anywhere_but_the_castle_or_a_web():
    state = spell_state(
        ("witch_control", "advance_tower"),
        {"witch", "web"},
        stacks=STACKS18,
        wizards={"blue-1": (7, 1), "yellow-1": (15, 0)},
        potions={"blue": (6, 0, 0), "yellow": (3, 3, 0)},
        witch=(12, 0),
    )
    after, _ = apply(state, Cast("blue", "witch_control", space=15))
    assert after.modules.witch == 15 << 4 and after.potions_of("yellow") == (2, 4, 0)
    for bad in (1, 9):  # the castle's space, a web
        with pytest.raises(IllegalAction):
            apply(state, Cast("blue", "witch_control", space=bad))


def test_R_SPELLX_8_summon_raven_to_one_of_the_casters_wizards():
    state = spell_state(
        ("summon_raven", "advance_tower"),
        {"raven"},
        wizards={"blue-1": (7, 1), "yellow-1": (7, 1), "yellow-2": (4, 1)},
        raven=(11, 0),
    )
    after, _ = apply(state, Cast("blue", "summon_raven", space=7))
    assert after.modules.raven == 7 << 4 | 1 and after.modules.feathers == (1, 1)
    with pytest.raises(IllegalAction):
        apply(state, Cast("blue", "summon_raven", space=4))


def test_R_SPELLX_9_fly_to_the_magic_tower_once_per_turn_even_through_its_free_spell():
    state = spell_state(
        ("fly_to_magic_tower", "advance_tower"),
        stacks=MT_BASE,
        wizards={"blue-1": (3, 1), "blue-2": (4, 1)},
    )
    after, ev = apply(state, Cast("blue", "fly_to_magic_tower", wizard="blue-1"))
    assert after.wizard_position("blue-1") == (11, 1)
    assert "magic_tower_free_spell" in kinds(ev)
    with pytest.raises(IllegalAction) as err:
        apply(after, Cast("blue", "fly_to_magic_tower", wizard="blue-2", free=True))
    assert err.value.rule == "R-SPELLX-9"
    free, _ = apply(after, Cast("blue", "advance_tower", space=4, tier=1, free=True))
    assert free.potions_of("blue") == (4, 0, 2)


def test_R_MOD_GEN_2_module_spells_are_refused_without_their_module():
    with pytest.raises(ValueError, match="witch"):
        spell_state(("witch_control",), {"raven"})


# -- JSON ------------------------------------------------------------------------------------------


def test_expansion_state_json_round_trips_exactly_with_armed_spells_and_free_rights():
    state = spell_state(
        ("fountain_abundance", "advance_tower"),
        {"fountain", "witch", "raven", "magic_tower"},
        stacks={**STACKS18, 12: ["MT"]},
        wizards={"blue-1": (7, 1)},
        witch=(13, 0),
        raven=(14, 0),
        feathers={"blue": 2},
        vials={"yellow": (0, 1, 0)},
        supply=5,
    )
    armed, _ = apply(state, Cast("blue", "fountain_abundance"))
    armed, _ = apply(armed, Feather("blue", "free_spell"))
    data = dump_state(armed)
    assert data["module_turn"] == {
        "armed": [{"player": "blue", "spell": "fountain_abundance"}],
        "free_spells": [{"player": "blue", "source": "feather"}],
    }
    again = load_state(data)
    assert again == armed and dump_state(again) == data


def _round_trip(action: Any) -> Any:
    return load_action(dump_action(action))


def test_expansion_action_fields_survive_json():
    actions = [
        MoveWizard(
            "blue",
            "blue-1",
            3,
            E_DIE,
            (3,),
            page=True,
            raven_timing="before",
            witch_guess=(4, 2),
            witch_protect=("yellow",),
            web_steps=2,
        ),
        MoveTower("blue", 4, 1, 2, E_DIE, (2,), physically_lifted=True, page=True),
        Cast("blue", "wizard_control", wizard="red-1", steps=3, witch_protect=("blue",)),
        Feather("blue", "move_wizard", wizard="yellow-2", steps=6),
        Feather("blue", "extra_card"),
    ]
    for a in actions:
        assert _round_trip(a) == a
    with pytest.raises(FormatError, match=r"action.raven_timing"):
        load_action({**dump_action(actions[0]), "raven_timing": "later"})
    with pytest.raises(FormatError, match=r"action.steps"):
        load_action({"kind": "feather", "player": "blue", "use": "move_wizard", "steps": 9})


def test_expansion_actions_and_events_read_as_sentences():
    from companion.rules import Config, describe_action, describe_event
    from companion.rules.model import MODULES
    from companion.sim.bots import play

    seen = set()
    for step in play(Config(player_count=3, modules=frozenset(MODULES)), 3, "random"):
        for e in step.events:
            text = describe_event(e)
            assert "=" not in text, f"no sentence for {e.kind}: {text}"
            seen.add(e.kind)
        assert "(" not in describe_action(step.action)[:1]
    assert {"witch_moved", "raven_moved", "web_bounce", "feather_gained"} <= seen
    assert describe_action(Feather("blue", "move_wizard", wizard="red-1", steps=1)) == (
        "blue spends feathers to move red-1 1 space clockwise"
    )
    assert describe_action(Cast("blue", "tower_sprint", space=3, tier=1)).startswith(
        "blue casts Tower Sprint"
    )
