"""Team variant (R-TEAM): partners opposite, partner wizards, potions, team goal."""

from __future__ import annotations

import pytest

from companion.rules import (
    Cast,
    Config,
    DiscardCard,
    EndTurn,
    ExchangeCards,
    GivePotion,
    IllegalAction,
    MoveTower,
    MoveWizard,
    apply,
    setup,
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
TEAM = {"teams": True}


def test_R_TEAM_1_partners_sit_opposite():
    assert Config(player_count=4, teams=True).team_pairs == (("blue", "red"), ("yellow", "green"))
    assert setup(Config(player_count=6, teams=True)).table.partner == (3, 4, 5, 0, 1, 2)
    with pytest.raises(ValueError, match="R-TEAM-1"):
        Config(player_count=3, teams=True)


def test_R_TEAM_5_with_all_own_wizards_inside_a_player_moves_his_partners():
    inside = {f"blue-{i}": "castle" for i in range(1, 5)}
    s = position(4, config=TEAM, wizards=inside)
    after, _ = apply(s, MoveWizard("blue", "red-1", 1, W[1]))
    assert after.wizard_position("red-1") != s.wizard_position("red-1")
    with pytest.raises(IllegalAction) as exc:
        apply(position(4, config=TEAM), MoveWizard("blue", "red-1", 1, W[1]))
    assert exc.value.rule == "R-CARD-1"


def test_R_TEAM_4_full_potions_may_be_handed_to_the_partner():
    s = position(4, config=TEAM, potions={"blue": (2, 3, 0)})
    after, _ = apply(s, GivePotion("blue", "red", 1))
    assert after.potions_of("blue") == (1, 3, 0) and after.potions_of("red") == (1, 5, 0)
    with pytest.raises(IllegalAction):
        apply(s, GivePotion("blue", "yellow", 1))
    with pytest.raises(IllegalAction):
        apply(s, GivePotion("blue", "red", 3))


def test_R_TEAM_7_a_player_with_no_empty_potion_fills_his_partners():
    s = position(4, config=TEAM, potions={"blue": (5, 0, 0)})
    after, events = apply(s, MoveTower("blue", 3, 1, 1, T[1]))  # traps on R2
    assert after.potions_of("red") == (1, 4, 0)
    filled = [e for e in events if e.kind == "potion_filled"][0]
    assert filled["player"] == "red" and filled["reason"] == "trapping_for_partner"


def test_R_TEAM_6_free_a_wizard_may_free_the_partners_wizard():
    s = position(
        4,
        config=TEAM | {"spells": ("free_wizard",)},
        stacks=STACKS,
        wizards={"red-1": (4, 0), "blue-1": (8, 1), "yellow-1": (9, 1), "green-1": (10, 1)},
        potions={"blue": (2, 3, 0)},
    )
    after, _ = apply(s, Cast("blue", "free_wizard", space=4, tier=1, wizard="red-1"))
    assert after.wizard_position("red-1") == (4, 1)


def test_R_TEAM_2_card_help_swaps_one_card_each_way():
    s = position(4, config=TEAM, hands={"blue": [W[1], W[2], W[3]], "red": [T[1], T[2], T[3]]})
    after, _ = apply(s, ExchangeCards("blue", "red", take=T[2], give=W[1]))
    assert sorted(c.code for c in after.hand("blue")) == ["T2", "W2", "W3"]
    assert sorted(c.code for c in after.hand("red")) == ["T1", "T3", "W1"]
    with pytest.raises(IllegalAction):
        apply(s, ExchangeCards("blue", "yellow", take=T[2], give=W[1]))


def test_R_TEAM_8_the_team_triggers_the_end_when_both_partners_are_done():
    done = {f"blue-{i}": "castle" for i in range(1, 5)} | {
        f"red-{i}": "castle" for i in range(1, 4)
    }
    s = position(
        4,
        config=TEAM,
        stacks=STACKS,
        wizards=done | {"red-4": (16, 0), "yellow-1": (3, 1), "green-1": (4, 1)},
        potions={"blue": (3, 0, 2), "red": (5, 0, 0)},
    )
    s, events = apply(s, MoveWizard("blue", "red-4", 1, W[1]))
    trig = [e for e in events if e.kind == "game_end_triggered"][0]
    assert trig["team"] == ["blue", "red"] and trig["remaining_turns"] == 3
    s, _ = apply(s, EndTurn())
    for colour in ("yellow", "red", "green"):  # R-END-2: the round is completed
        assert not s.over and s.current_player == colour
        s, _ = apply(s, DiscardCard(colour))
        s, _ = apply(s, DiscardCard(colour))
        s, events = apply(s, EndTurn())
    assert s.over and events[-1].kind == "game_over"
    assert set(s.game.result.winners) == {0, 2}
    assert events[-1]["winners"] == ["blue", "red"]


def test_R_TEAM_4_potions_change_hands_only_during_either_partners_turn():
    s = position(4, config=TEAM, potions={"yellow": (2, 3, 0)})  # blue's turn
    with pytest.raises(IllegalAction) as exc:
        apply(s, GivePotion("yellow", "green", 1))
    assert exc.value.rule == "R-TEAM-4"


def test_R_TEAM_2_card_help_with_unknown_hands_is_recorded_and_may_be_limited():
    s = position(4, config=TEAM)
    after, events = apply(s, ExchangeCards("blue", "red"))
    assert events[0].kind == "cards_exchanged" and after.turn.exchanges == 1
    once = position(4, config=TEAM | {"options": {"team_exchanges_per_turn": 1}})
    once, _ = apply(once, ExchangeCards("blue", "red"))
    with pytest.raises(IllegalAction) as exc:
        apply(once, ExchangeCards("blue", "red"))
    assert exc.value.rule == "R-TEAM-2"


def test_OPEN_06_potion_hand_over_in_any_turn_is_an_option():
    s = position(
        4, config=TEAM | {"options": {"team_potions_any_turn": True}}, potions={"yellow": (2, 3, 0)}
    )
    after, _ = apply(s, GivePotion("yellow", "green", 1))
    assert after.potions_of("green") == (1, 5, 0)
