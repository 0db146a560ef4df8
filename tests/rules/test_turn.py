"""Turn structure (R-TURN): two actions, discards, the redraw alternative, refilling."""

from __future__ import annotations

import pytest

from companion.rules import (
    Card,
    Config,
    DiscardCard,
    EndTurn,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
    apply,
    legal_actions,
    setup,
)

from .conftest import E_DIE, T, W, position


def test_R_TURN_2_two_card_actions_then_the_turn_ends():
    s = position(2)
    s, _ = apply(s, MoveTower("blue", 10, 1, 1, T[1]))
    with pytest.raises(IllegalAction) as exc:
        apply(s, EndTurn())
    assert exc.value.rule == "R-TURN-2"
    s, _ = apply(s, MoveTower("blue", 11, 1, 1, T[1]))
    with pytest.raises(IllegalAction) as exc:
        apply(s, MoveTower("blue", 12, 1, 1, T[1]))
    assert exc.value.rule == "R-TURN-2"
    s, events = apply(s, EndTurn())
    assert s.current_player == "yellow" and s.turn.cards_used == 0
    assert events[-1].kind == "next_player"


def test_R_TURN_1_turns_go_clockwise_and_wrap_to_the_start_player():
    s = position(3)
    seen = []
    for _ in range(4):
        seen.append(s.current_player)
        s, _ = apply(s, DiscardCard(s.current_player))
        s, _ = apply(s, DiscardCard(s.current_player))
        s, _ = apply(s, EndTurn())
    assert seen == ["blue", "yellow", "red", "blue"]


def test_R_TURN_2_a_known_hand_must_hold_the_played_card():
    s = position(2, hands={"blue": [W[1], W[2], T[3]]})
    with pytest.raises(IllegalAction, match="holds no W3"):
        apply(s, MoveWizard("blue", "blue-1", 3, W[3]))
    s2, _ = apply(s, MoveWizard("blue", "blue-1", 2, W[2]))
    assert s2.hand("blue") == (W[1], T[3])
    assert s2.cards.discard[-1] is not None and len(s2.cards.discard) == 1


def test_R_TURN_3_only_an_unplayable_card_may_be_discarded_first_the_second_freely():
    # blue's only wizard is trapped, so W1 cannot move anything; T1 can
    stacks = {
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
    s = position(
        2,
        stacks=stacks,
        wizards={"blue-1": (2, 0), "yellow-1": (3, 1)},
        hands={"blue": [W[1], T[1], T[2]]},
    )
    with pytest.raises(IllegalAction) as exc:
        apply(s, DiscardCard("blue", T[1]))
    assert exc.value.rule == "R-TURN-3"
    s, events = apply(s, DiscardCard("blue", W[1]))
    assert events[0].kind == "card_discarded_without_effect"
    s, _ = apply(s, DiscardCard("blue", T[1]))  # FAQ: the second card may be discarded
    assert s.turn.cards_used == 2


def test_R_TURN_3_a_die_card_whose_roll_cannot_move_may_be_discarded():
    stacks = {
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
    # blue-1 on space 11 (track); castle on 15; 6 yellow... a W-die card: every roll moves
    wizard_die = Card("wizard", dice=2)
    s = position(
        2,
        stacks=stacks,
        wizards={"blue-1": (11, 0), "yellow-1": (3, 1)},
        hands={"blue": [wizard_die, W[1], W[2]]},
    )
    with pytest.raises(IllegalAction):
        apply(s, DiscardCard("blue", wizard_die, (3, 5)))
    # with the only blue wizard trapped, no roll can move it: discard with the rolls
    s = position(
        2,
        stacks=stacks,
        wizards={"blue-1": (2, 0), "yellow-1": (3, 1)},
        hands={"blue": [wizard_die, W[1], W[2]]},
    )
    s, _ = apply(s, DiscardCard("blue", wizard_die, (3, 5)))
    assert s.turn.cards_used == 1


def test_R_TURN_5_redraw_replaces_both_actions_with_an_optional_one_space_push():
    s = setup(Config(player_count=2), seed=4)
    old_hand = s.cards.hands[0]
    after, events = apply(s, Redraw("blue", (10, 1)))
    assert after.stack(11) == ("R5",) and after.turn.redrawn
    assert len(after.cards.hands[0]) == 3 and after.cards.discard == old_hand
    assert events[0].kind == "hand_discarded_and_redrawn"
    with pytest.raises(IllegalAction) as exc:
        apply(after, MoveTower("blue", 11, 1, 1, T[1]))
    assert exc.value.rule == "R-TURN-5"
    apply(after, EndTurn())
    plain, _ = apply(s, Redraw("blue", None))
    assert plain.stacks == s.stacks


def test_R_TURN_5_push_follows_tower_rules_including_the_reward():
    s = position(2)
    after, events = apply(s, Redraw("blue", (3, 1)))  # P1 onto R2: traps 3 wizards
    assert after.potions_of("blue") == (1, 5, 0)
    with pytest.raises(IllegalAction) as exc:
        apply(position(2, castle=11), Redraw("blue", (10, 1)))
    assert exc.value.rule == "R-TOWER-5"


def test_R_TURN_5_no_redraw_after_a_card_was_played():
    s, _ = apply(position(2), MoveTower("blue", 10, 1, 1, T[1]))
    with pytest.raises(IllegalAction) as exc:
        apply(s, Redraw("blue", None))
    assert exc.value.rule == "R-TURN-5"


def test_R_TURN_4_hand_refilled_to_three_only_after_the_turn():
    s = setup(Config(player_count=2), seed=9)
    moves = [a for a in legal_actions(s) if isinstance(a, MoveTower | MoveWizard)]
    s, _ = apply(s, moves[0])
    assert len(s.cards.hands[0]) == 2
    second = [a for a in legal_actions(s) if isinstance(a, MoveTower | MoveWizard)][0]
    s, _ = apply(s, second)
    assert len(s.cards.hands[0]) == 1
    s, events = apply(s, EndTurn())
    assert len(s.cards.hands[0]) == 3 and len(s.cards.draw) == 90 - 6 - 2
    assert any(e.kind == "hand_refilled" and e["count"] == 2 for e in events)


def test_R_TURN_4_empty_draw_pile_reshuffles_the_discard_pile_from_the_seed():
    s = setup(Config(player_count=2), seed=9)
    cards = s.cards._replace(draw=s.cards.draw[:1], discard=s.cards.discard + s.cards.draw[1:])
    from dataclasses import replace

    s = replace(s, cards=cards)
    s, _ = apply(s, Redraw("blue", None))
    assert s.cards.reshuffles == 1 and len(s.cards.hands[0]) == 3
    assert sum(len(h) for h in s.cards.hands) + len(s.cards.draw) + len(s.cards.discard) == 90
    again = replace(setup(Config(player_count=2), seed=9), cards=cards)
    assert apply(again, Redraw("blue", None))[0] == s, "reshuffles are pure"


def test_R_TURN_6_keep_the_unplayed_card_and_end_turn_is_allowed():
    s = position(2, wizards={"blue-1": (14, 0)}, hands={"blue": [W[3], T[1], E_DIE]})
    s, _ = apply(s, MoveWizard("blue", "blue-1", 3, W[3]))
    assert s.turn.ended and EndTurn() in legal_actions(s)
    s, _ = apply(s, EndTurn())
    assert len(s.cards.hands[0]) == 3 and s.current_player == "yellow"


def test_OPEN_24_keeping_the_second_card_is_an_option():
    s, _ = apply(position(2), MoveTower("blue", 10, 1, 1, T[1]))
    with pytest.raises(IllegalAction):
        apply(s, EndTurn())
    s2, _ = apply(
        position(2, config={"options": {"keep_second_card": True}}),
        MoveTower("blue", 10, 1, 1, T[1]),
    )
    apply(s2, EndTurn())
