"""The state JSON round trip over every module combination and every spell choice setup
allows (``docs/state-model.md`` §1-§2), and the load-time checks of the expansion's components."""

from __future__ import annotations

import itertools
import json

import pytest

from companion.rules import (
    MODULES,
    Cast,
    Config,
    FormatError,
    GameState,
    apply,
    dump_state,
    legal_actions,
    load_state,
    setup,
)
from companion.rules.expansion import available_spells
from companion.sim.bots import play

COMBOS = [frozenset(c) for r in range(len(MODULES) + 1) for c in itertools.combinations(MODULES, r)]


def _spell_choices(modules: frozenset[str]) -> list[tuple[str, ...] | None]:
    """None (setup's default draw), every spell the modules allow, and each one alone."""
    pool = available_spells(modules)
    return [None, pool, *((s,) for s in pool)]


def _round_trip(state: GameState) -> None:
    data = json.loads(json.dumps(dump_state(state)))
    again = load_state(data)
    assert again == state
    assert dump_state(again) == data


@pytest.mark.parametrize("modules", COMBOS, ids=lambda m: "+".join(sorted(m)) or "none")
def test_round_trip_over_every_module_and_spell_choice(modules: frozenset[str]) -> None:
    for i, spells in enumerate(_spell_choices(modules)):
        for variant in ("base", "master"):
            config = Config(player_count=2 + i % 3, variant=variant, modules=modules, spells=spells)
            for seed in (None, 11 + i):
                _round_trip(setup(config, seed))


@pytest.mark.parametrize("modules", COMBOS, ids=lambda m: "+".join(sorted(m)) or "none")
def test_round_trip_during_a_seeded_game(modules: frozenset[str]) -> None:
    config = Config(player_count=3, modules=modules, spells=available_spells(modules))
    for n, step in enumerate(play(config, 5, "random")):
        if n % 7 == 0:
            _round_trip(step.state)
        if n >= 60:
            break


def test_expansion_spells_without_modules_survive_the_round_trip() -> None:
    # R-SPELLX-1: the general expansion spells need no module.
    config = Config(player_count=2, spells=("wizard_control", "advance_wizard"))
    state = setup(config, 1)
    _round_trip(state)
    casts = 0
    for step in play(config, 1, "random"):
        again = load_state(json.loads(json.dumps(dump_state(step.state))))
        for action in legal_actions(step.state):
            if isinstance(action, Cast) and action.spell == "wizard_control":
                casts += 1
                assert apply(again, action)[0] == apply(step.state, action)[0]
        if casts >= 3:
            break
    assert casts >= 3


def test_more_witch_vials_than_the_box_holds_are_refused() -> None:
    # R-COMP-3: the expansion has 6 witch vials, taken or in the supply.
    data = dump_state(setup(Config(player_count=2, modules=frozenset({"witch"})), 1))
    assert data["witch_vial_supply"] == 6
    data["witch_vials"]["blue"]["full"] = 1
    with pytest.raises(FormatError) as err:
        load_state(data)
    assert err.value.field == "witch_vials"
