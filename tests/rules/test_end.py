"""Game end (R-END), deadlock (OPEN-07) and solo play (R-SOLO)."""

from __future__ import annotations

import pytest

from companion.rules import (
    Cast,
    DiscardCard,
    EndTurn,
    IllegalAction,
    MoveTower,
    MoveWizard,
    apply,
)

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


def pass_turn(s):
    colour = s.current_player
    if not s.turn.ended:
        while s.turn.cards_used < 2:
            s, _ = apply(s, DiscardCard(colour))
    return apply(s, EndTurn())


def three_players(**kw):
    """Yellow (seat 1) has 3 of 4 wizards inside and only full/spent potions; yellow-4 is one
    space before the castle."""
    inside = {f"yellow-{i}": "castle" for i in range(1, 4)}
    wiz = inside | {"yellow-4": (16, 0), "blue-1": (2, 1), "red-1": (3, 1)}
    return position(
        3,
        stacks=STACKS,
        wizards=wiz | kw.pop("wizards", {}),
        potions=kw.pop("potions", {"yellow": (3, 0, 2)}),
        turn={"player": "yellow"},
        **kw,
    )


def test_R_END_1_both_goals_trigger_the_end_in_any_order():
    s, events = apply(three_players(), MoveWizard("yellow", "yellow-4", 1, W[1]))
    trig = [e for e in events if e.kind == "game_end_triggered"][0]
    assert trig["player"] == "yellow" and s.game.end_triggered_by == 1
    # potions last: all wizards inside, one empty potion left, filled by trapping
    s2 = three_players(wizards={"yellow-4": "castle"}, potions={"yellow": (3, 1, 1)})
    s2, events = apply(s2, MoveTower("yellow", 2, 1, 1, T[1]))  # R1 traps blue-1... on P1
    assert s2.game.end_triggered_by == 1


def test_R_END_1_an_empty_potion_blocks_the_trigger():
    s, events = apply(
        three_players(potions={"yellow": (3, 1, 1)}), MoveWizard("yellow", "yellow-4", 1, W[1])
    )
    assert s.game.end_triggered_by is None
    assert "game_end_triggered" not in [e.kind for e in events]


def test_R_END_2_the_round_is_completed_then_the_game_ends():
    s, _ = apply(three_players(), MoveWizard("yellow", "yellow-4", 1, W[1]))
    s, _ = pass_turn(s)
    assert not s.over and s.current_player == "red"  # red is the last of the round
    s, events = pass_turn(s)
    assert s.over and events[-1].kind == "game_over"
    with pytest.raises(IllegalAction) as exc:
        apply(s, EndTurn())
    assert exc.value.rule == "R-END-2"


def test_R_END_2_trigger_in_the_last_seats_turn_ends_the_game_after_that_turn():
    inside = {f"red-{i}": "castle" for i in range(1, 4)}
    s = position(
        3,
        stacks=STACKS,
        wizards=inside | {"red-4": (16, 0), "blue-1": (2, 1)},
        potions={"red": (5, 0, 0)},
        turn={"player": "red"},
    )
    s, events = apply(s, MoveWizard("red", "red-4", 1, W[1]))
    assert [e for e in events if e.kind == "game_end_triggered"][0]["remaining_turns"] == 0
    s, events = apply(s, EndTurn())
    assert s.over and s.game.result.winners == (2,)


def test_R_END_3_most_unspent_full_potions_wins_ties_share():
    s, _ = apply(
        three_players(
            potions={"yellow": (3, 0, 2), "red": (2, 0, 3)},
            wizards={f"red-{i}": "castle" for i in range(2, 5)} | {"red-1": (16, 0)},
        ),
        MoveWizard("yellow", "yellow-4", 1, W[1]),
    )
    s, _ = pass_turn(s)
    steps = (s.castle - 16) % 16  # the castle moved on after yellow's entry
    s, _ = apply(s, MoveWizard("red", "red-1", steps, W[steps]))  # red qualifies too
    s, events = apply(s, EndTurn())
    result = s.game.result
    assert result.qualified == (1, 2) and result.winners == (1,)  # 3 full beat 2
    assert events[-1]["unused_full"] == {"blue": 0, "yellow": 3, "red": 2}
    # equal unspent potions: shared victory
    s, _ = apply(
        three_players(
            potions={"yellow": (3, 0, 2), "red": (3, 0, 2)},
            wizards={f"red-{i}": "castle" for i in range(2, 5)} | {"red-1": (16, 0)},
        ),
        MoveWizard("yellow", "yellow-4", 1, W[1]),
    )
    s, _ = pass_turn(s)
    steps = (s.castle - 16) % 16
    s, _ = apply(s, MoveWizard("red", "red-1", steps, W[steps]))
    s, _ = apply(s, EndTurn())
    assert s.game.result.winners == (1, 2)


def test_R_END_4_spent_potions_count_as_filled_only_the_qualifier_wins():
    s, _ = apply(
        three_players(potions={"yellow": (0, 0, 5)}), MoveWizard("yellow", "yellow-4", 1, W[1])
    )
    s, _ = pass_turn(s)
    s, _ = pass_turn(s)
    assert s.over and s.game.result.winners == (1,)


def test_R_END_5_deadlock_all_wizards_inside_nobody_qualifies_ends_at_once():
    inside = {
        w: "castle"
        for w in (
            "blue-1",
            "blue-2",
            "blue-3",
            "blue-4",
            "blue-5",
            "yellow-1",
            "yellow-2",
            "yellow-3",
            "yellow-4",
        )
    }
    s = position(
        2,
        stacks=STACKS,
        wizards=inside | {"yellow-5": (16, 0)},
        potions={"blue": (2, 2, 2), "yellow": (0, 5, 1)},
        config={"spells": ("advance_wizard",)},
    )
    s, events = apply(s, Cast("blue", "advance_wizard", wizard="yellow-5"))
    assert s.over and s.game.result.reason == "deadlock"
    # rank: wizards inside + potions filled (full + spent): blue 5 + 4 = 9, yellow 5 + 1 = 6
    assert s.game.result.winners == (0,)
    off = position(
        2,
        stacks=STACKS,
        wizards=inside | {"yellow-5": (16, 0)},
        potions={"blue": (4, 2, 0), "yellow": (0, 5, 1)},
        config={"spells": ("advance_wizard",), "options": {"deadlock_end": False}},
    )
    assert not apply(off, Cast("blue", "advance_wizard", wizard="yellow-5"))[0].over


def test_R_SOLO_2_one_card_per_turn_and_all_twelve_wizards_inside_wins():
    inside = {f"blue-{i}": "castle" for i in range(1, 12)}
    s = position(1, stacks=STACKS, wizards=inside | {"blue-12": (16, 0)})
    with pytest.raises(IllegalAction):
        apply(
            s, Cast("blue", s.table.spells[0], direction="cw", wizard="blue-12", space=2, tier=1)
        )  # spells only after the turn's card (R-SOLO-3)
    s, events = apply(s, MoveWizard("blue", "blue-12", 1, W[1]))
    assert s.over and s.game.result.reason == "solo_won"


def test_R_SOLO_2_the_thirty_card_limit_loses():
    s = position(1, game={"cards_played": 29})
    s, _ = apply(s, MoveTower("blue", 10, 1, 1, T[1]))
    with pytest.raises(IllegalAction):
        apply(s, MoveTower("blue", 11, 1, 1, T[1]))  # one card per turn
    s, events = apply(s, EndTurn())
    assert s.over and s.game.result.reason == "solo_lost" and s.game.result.winners == ()
