"""Wizard cards and wizard movement (R-CARD-1/3/4/5, R-WIZ), the castle (R-RAVEN)."""

from __future__ import annotations

import pytest

from companion.rules import Card, IllegalAction, MoveWizard, apply, legal_actions

from .conftest import E_DIE, W_DIE2, W_DIE3, T, W, position


def kinds(events):
    return [e.kind for e in events]


def test_R_CARD_1_wizard_card_moves_own_visible_wizard_clockwise_by_its_value():
    state = position(2)
    after, events = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))
    assert after.wizard_position("blue-1") == (5, 1), "from space 2 to 5, on top of P2"
    assert kinds(events) == ["wizard_moved"]
    assert after.turn.cards_used == 1
    with pytest.raises(IllegalAction) as exc:
        apply(state, MoveWizard("blue", "yellow-1", 3, W[3]))
    assert exc.value.rule == "R-CARD-1"


def test_R_CARD_1_only_the_current_player_plays_cards():
    with pytest.raises(IllegalAction) as exc:
        apply(position(2), MoveWizard("yellow", "yellow-1", 1, W[1]))
    assert exc.value.rule == "R-TURN-1"


def test_R_CARD_3_tower_card_cannot_move_a_wizard_and_either_card_uses_its_wizard_value():
    state = position(2)
    with pytest.raises(IllegalAction) as exc:
        apply(state, MoveWizard("blue", "blue-1", 2, T[2]))
    assert exc.value.rule == "R-CARD-3"
    either = Card("either", wizard=1, tower=5)
    assert apply(state, MoveWizard("blue", "blue-1", 1, either))[0].wizard_position("blue-1") == (
        3,
        1,
    )
    with pytest.raises(IllegalAction):
        apply(state, MoveWizard("blue", "blue-1", 5, either))


@pytest.mark.parametrize(
    ("card", "rolls", "ok"),
    [
        (E_DIE, (4,), True),
        (E_DIE, (2, 4), False),  # 1 die: the roll is final
        (W_DIE2, (2, 4), True),  # 2 dice: one reroll, second result used
        (W_DIE2, (2, 3, 4), False),
        (W_DIE3, (1, 1, 4), True),
        (W_DIE3, (), False),
        (W[4], (4,), False),  # value cards are not rolled
    ],
)
def test_R_CARD_4_dice_rerolls_limited_by_the_dice_shown_last_result_used(card, rolls, ok):
    state = position(2)
    action = MoveWizard("blue", "blue-1", 4, card, rolls)
    if ok:
        after, events = apply(state, action)
        assert after.wizard_position("blue-1") == (6, 1)
        assert events[0].kind == "dice_rolled" and events[0]["used"] == 4
    else:
        with pytest.raises(IllegalAction) as exc:
            apply(state, action)
        assert exc.value.rule == "R-CARD-4"


def test_R_CARD_4_rolls_are_never_added():
    with pytest.raises(IllegalAction, match="never added"):
        apply(position(2), MoveWizard("blue", "blue-1", 6, W_DIE2, (2, 4)))


def test_R_CARD_5_a_die_shows_1_to_6():
    with pytest.raises(IllegalAction) as exc:
        apply(position(2), MoveWizard("blue", "blue-1", 7, E_DIE, (7,)))
    assert exc.value.rule == "R-CARD-5"


def test_R_WIZ_1_hidden_wizards_cannot_move():
    state = position(2, wizards={"blue-1": (3, 0)})  # under P1 on space 3
    with pytest.raises(IllegalAction) as exc:
        apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert exc.value.rule == "R-WIZ-1"
    assert all(getattr(a, "wizard", None) != "blue-1" for a in legal_actions(state))


def test_R_WIZ_3_wizard_ends_on_the_top_surface_whatever_the_height():
    stacks = {
        2: ["R1"],
        5: ["P1", "R2", "P2"],
        6: ["R3"],
        7: ["P3"],
        8: ["R4"],
        9: ["P4"],
        10: ["R5"],
    }
    state = position(2, stacks=stacks, wizards={"blue-1": (2, 1), "yellow-1": (7, 1)})
    after, _ = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))
    assert after.wizard_position("blue-1") == (5, 3)
    after, _ = apply(after, MoveWizard("blue", "blue-1", 6, E_DIE, (6,)))
    assert after.wizard_position("blue-1") == (11, 0), "down onto the track"


def test_R_WIZ_4_a_top_surface_holds_at_most_six_wizards():
    # 6 wizards (3 blue, 3 yellow) on the roof of R2 at space 4, blue-4 on space 2
    wiz = {f"blue-{i}": (4, 1) for i in range(1, 4)} | {f"yellow-{i}": (4, 1) for i in range(1, 4)}
    wiz["blue-4"] = (2, 1)
    state = position(2, wizards=wiz | {"blue-5": (3, 1), "yellow-4": (5, 1), "yellow-5": (6, 1)})
    with pytest.raises(IllegalAction) as exc:
        apply(state, MoveWizard("blue", "blue-4", 2, W[2]))
    assert exc.value.rule == "R-WIZ-4"
    assert MoveWizard("blue", "blue-4", 2, W[2]) not in legal_actions(state)
    apply(state, MoveWizard("blue", "blue-4", 3, W[3]))  # passing over is fine


def test_R_WIZ_5_exact_count_enters_the_castle_and_more_steps_pass_it():
    state = position(2, wizards={"blue-1": (14, 0)}, castle=1)
    passed, _ = apply(state, MoveWizard("blue", "blue-1", 5, W[5]))
    assert passed.wizard_position("blue-1") == (3, 1), "passes the castle on space 1"
    inside, events = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))
    assert inside.wizard_position("blue-1") is None
    assert "blue-1" in inside.in_castle("blue")
    assert kinds(events)[:3] == ["wizard_moved", "castle_entered", "castle_moved"]


def test_R_TURN_6_own_wizard_entering_the_castle_ends_the_turn_at_once():
    state = position(2, wizards={"blue-1": (14, 0)})
    inside, events = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))
    assert inside.turn.ended and inside.turn.cards_used == 1
    assert events[-1].kind == "turn_ended" and events[-1]["reason"] == "castle_entry"
    with pytest.raises(IllegalAction) as exc:
        apply(inside, MoveWizard("blue", "blue-2", 1, W[1]))
    assert exc.value.rule == "R-TURN-6"


def test_R_RAVEN_3_castle_moves_to_the_first_unoccupied_crest_top_clockwise():
    # setup position, 2 players: wizards on the roofs of spaces 2..5. Crest tops after the
    # castle: R1 on 2 and R2 on 4 are occupied, space 5 is a crest space covered by the plain
    # P2, so the first free crest top is R3 on space 6.
    state = position(2, wizards={"blue-1": (14, 0)})
    inside, events = apply(state, MoveWizard("blue", "blue-1", 3, W[3]))
    moved = [e for e in events if e.kind == "castle_moved"][0]
    assert (moved["from"], moved["to"], moved["tier"]) == (1, 6, 1)
    assert inside.castle == 6


def test_R_RAVEN_3_crest_tower_on_a_plain_space_counts_plain_tower_on_crest_space_does_not():
    stacks = {
        3: ["R1"],
        5: ["P1"],
        7: ["P2"],
        8: ["R2", "P3"],
        9: ["P4", "R3"],
        10: ["R4"],
        11: ["R5"],
    }
    wiz = {"blue-1": (15, 0), "yellow-1": (3, 1)}  # R1 on space 3 is occupied
    state = position(2, stacks=stacks, wizards=wiz, castle=1)
    _, events = apply(state, MoveWizard("blue", "blue-1", 2, W[2]))
    # after 1: 3 R1 occupied; 5 P1 on a crest space -> no; 7 P2 -> no; 8 top P3 -> no;
    # 9 top R3 (crest tower on plain space) and unoccupied -> yes
    assert [e for e in events if e.kind == "castle_moved"][0]["to"] == 9


def test_R_RAVEN_3_hidden_wizards_do_not_occupy_a_top():
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
    wiz = {"blue-1": (15, 0), "yellow-1": (2, 0)}  # yellow-1 hidden under R1
    state = position(2, stacks=stacks, wizards=wiz)
    _, events = apply(state, MoveWizard("blue", "blue-1", 2, W[2]))
    assert [e for e in events if e.kind == "castle_moved"][0]["to"] == 2


def test_R_RAVEN_4_castle_stays_when_no_crest_top_is_free():
    # every crest tower carries a wizard and every crest space is covered by a plain tower
    stacks = {
        5: ["P1"],
        9: ["P2"],
        13: ["P3"],
        2: ["R1"],
        3: ["R2"],
        4: ["R3"],
        6: ["R4"],
        7: ["R5", "P4"],
    }
    wiz = {
        "blue-1": (15, 0),
        "blue-2": (2, 1),
        "blue-3": (3, 1),
        "blue-4": (4, 1),
        "blue-5": (6, 1),
    }
    # space 1 is an empty crest space: a yellow wizard occupies it
    state = position(
        2,
        stacks={k: v for k, v in stacks.items() if v},
        wizards=wiz | {"yellow-1": (1, 0)},
        castle=16,
    )
    after, events = apply(state, MoveWizard("blue", "blue-1", 1, W[1]))
    assert after.castle == 16
    assert [e.kind for e in events][:3] == ["wizard_moved", "castle_entered", "castle_stays"]


def test_R_WIZ_7_the_castle_has_no_capacity_limit():
    inside = {f"yellow-{i}": "castle" for i in range(1, 6)} | {
        f"blue-{i}": "castle" for i in range(1, 5)
    }
    state = position(2, wizards=inside | {"blue-5": (2, 1)}, castle=4)
    after, _ = apply(state, MoveWizard("blue", "blue-5", 2, W[2]))
    assert len(after.in_castle()) == 10


def test_R_WIZ_2_wizards_pass_over_towers_wizards_and_the_castle():
    state = position(2, wizards={"blue-1": (16, 0)}, castle=1)
    after, _ = apply(state, MoveWizard("blue", "blue-1", 4, W[4]))
    assert after.wizard_position("blue-1") == (4, 1)
