"""The neutral JSON of state-model.md §1-§5: exact round trips and field-naming errors."""

from __future__ import annotations

import copy
import json

import pytest

from companion.rules import (
    Card,
    Cast,
    Config,
    DiscardCard,
    EndTurn,
    ExchangeCards,
    FormatError,
    GivePotion,
    MoveTower,
    MoveWizard,
    Redraw,
    apply,
    dump_action,
    dump_event,
    dump_state,
    load_action,
    load_event,
    load_state,
    setup,
)

from .conftest import E_DIE, T, W, position


@pytest.mark.parametrize(
    "config",
    [
        Config(player_count=2),
        Config(player_count=6, variant="master", teams=True),
        Config(player_count=1),
        Config(player_count=4, options={"swap_any_distance": False}, spell_costs={"piggyback": 1}),
    ],
)
@pytest.mark.parametrize("seed", [None, 3])
def test_state_json_round_trip_is_exact(config, seed):
    state = setup(config, seed)
    data = json.loads(json.dumps(dump_state(state)))
    again = load_state(data)
    assert again == state
    assert dump_state(again) == data


def test_state_json_speaks_the_state_model():
    data = dump_state(position(2))
    assert data["stacks"]["2"] == ["R1"] and "1" not in data["stacks"]
    assert data["wizards"]["blue-1"] == {"space": 2, "tier": 1}
    assert data["castle"] == {"space": 1, "tier": 0}
    assert data["potions"]["yellow"] == {"full": 0, "empty": 6, "spent": 0}
    assert data["towers"]["R1"] == {"kind": "crest", "crest": True, "magic": False}
    assert data["players"][1] == {"id": "yellow", "colour": "yellow", "seat": 1}
    assert data["track"] == {"length": 16, "raven_crest": [1, 5, 9, 13], "special": {}}
    assert data["config"]["options"]["swap_any_distance"] is True
    assert data["turn"]["player"] == "blue" and data["game"]["over"] is False
    inside, _ = apply(
        position(2, wizards={"blue-1": (14, 0)}), MoveWizard("blue", "blue-1", 3, W[3])
    )
    assert dump_state(inside)["wizards"]["blue-1"] == "castle"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["wizards"]["blue-2"].update(tier=3), "wizards.blue-2.tier"),
        (lambda d: d["wizards"]["blue-2"].update(space="x"), "wizards.blue-2.space"),
        (lambda d: d["stacks"].update({"11": ["R1"]}), "stacks.11[0]"),
        (lambda d: d["stacks"].pop("10"), "stacks"),
        (lambda d: d["potions"]["blue"].update(full=3), "potions.blue"),
        (lambda d: d["castle"].update(tier=2), "castle.tier"),
        (lambda d: d["turn"].update(player="pink"), "turn.player"),
        (lambda d: d.update(colour="x"), "colour"),
        (lambda d: d["config"].update(variant="expert"), "config.variant"),
        (lambda d: d["config"]["options"].update(nonsense=1), "config.options.nonsense"),
        (
            lambda d: d["cards"]["hands"]["blue"].append({"type": "wizard", "value": 6}),
            "cards.hands.blue[3].value",
        ),
        (lambda d: d["wizards"].pop("yellow-5"), "wizards"),
    ],
)
def test_malformed_state_is_refused_naming_the_field(mutate, field):
    data = copy.deepcopy(dump_state(setup(Config(player_count=2), seed=1)))
    mutate(data)
    with pytest.raises(FormatError) as exc:
        load_state(data)
    assert str(exc.value).startswith(field + ":"), str(exc.value)


ACTIONS = [
    MoveWizard("blue", "blue-1", 3, W[3]),
    MoveWizard("blue", "blue-1", 5, Card("wizard", dice=3), (2, 1, 5)),
    MoveTower("yellow", 4, 2, 6, E_DIE, (6,), card_committed=True),
    MoveTower("yellow", 4, 1, 5, Card("either", wizard=1, tower=5)),
    DiscardCard("blue"),
    DiscardCard("blue", Card("tower", dice=2), (3, 4)),
    Redraw("red", (3, 1)),
    Redraw("red", None),
    Cast("blue", "swap_tower", a=2, b=9),
    Cast("blue", "advance_wizard", wizard="red-2", times=2),
    Cast("blue", "piggyback", rider="blue-2", then=MoveWizard("blue", "blue-1", 2, W[2])),
    Cast("green", "free_wizard", space=4, tier=2, wizard="green-1"),
    Cast("green", "move_castle", direction="ccw"),
    EndTurn(),
    GivePotion("blue", "red", 2),
    ExchangeCards("blue", "red", T[2], W[1]),
]


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: a.kind)
def test_action_json_round_trip(action):
    data = json.loads(json.dumps(dump_action(action)))
    assert data["kind"] == action.kind
    assert load_action(data) == action
    assert dump_action(load_action(data)) == data


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (
            {
                "kind": "move_wizard",
                "player": "blue",
                "wizard": "blue-1",
                "steps": 9,
                "card": {"type": "wizard", "value": 3},
            },
            "actions[2].steps",
        ),
        (
            {"kind": "move_wizard", "player": "blue", "wizard": "blue-1", "steps": 3},
            "actions[2].card",
        ),
        (
            {
                "kind": "move_tower",
                "player": "blue",
                "space": 2,
                "tier": 1,
                "steps": 3,
                "card": {"type": "tower", "value": 3},
                "rolls": ["x"],
            },
            "actions[2].rolls[0]",
        ),
        ({"kind": "fly", "player": "blue"}, "actions[2].kind"),
        ({"kind": "cast", "player": "blue", "spell": "swap_tower", "a": "two"}, "actions[2].a"),
        ({"kind": "redraw", "player": "blue", "push": {"space": 2}}, "actions[2].push.tier"),
        ({"kind": "end_turn", "why": 1}, "actions[2].why"),
        ([], "actions[2]"),
    ],
)
def test_malformed_action_is_refused_naming_the_field(data, field):
    with pytest.raises(FormatError) as exc:
        load_action(data, "actions[2]")
    assert str(exc.value).startswith(field + ":"), str(exc.value)


def test_event_json_round_trip():
    _, events = apply(position(2), MoveTower("blue", 3, 1, 1, T[1]))
    for e in events:
        data = json.loads(json.dumps(dump_event(e)))
        assert load_event(data) == e and data["kind"] == e.kind
    assert events[0]["from"] == 3 and events[0].get("to") == 4
