"""Master-wizard variant (R-MASTER): off-turn casting, one caster and spell per action,
repeated casts, committed cards."""

from __future__ import annotations

import pytest

from companion.rules import Cast, IllegalAction, MoveTower, MoveWizard, apply, legal_actions

from .conftest import T, W, position

FULL = {"blue": (5, 0, 0), "yellow": (5, 0, 0), "red": (5, 0, 0)}


def master(**kw):
    kw.setdefault("potions", FULL)
    return position(3, config={"variant": "master"}, **kw)


def test_R_MASTER_2_spells_may_be_cast_during_other_players_turns():
    s = master()
    after, _ = apply(s, Cast("red", "advance_wizard", wizard="blue-1"))
    assert after.wizard_position("blue-1") == (3, 1)
    # hindering (R-MASTER-3): red blows blue's wizard back into the castle on space 1;
    # blue's own wizard entered, so blue's turn ends (OPEN-05)
    after, _ = apply(s, Cast("red", "headwind_wizard", wizard="blue-1"))
    assert after.wizard_position("blue-1") is None and after.turn.ended
    casters = {a.player for a in legal_actions(s) if isinstance(a, Cast)}
    assert casters == {"blue", "yellow", "red"}


def test_R_MASTER_4_one_caster_and_one_spell_per_action():
    s = master()
    s, _ = apply(s, Cast("yellow", "advance_tower", space=10, tier=1))
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("red", "advance_tower", space=12, tier=1))
    assert exc.value.rule == "R-MASTER-4"
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("yellow", "advance_wizard", wizard="blue-1"))
    assert exc.value.rule == "R-MASTER-4"
    # R-MASTER-8: the same caster may repeat the same spell, paying again
    s, _ = apply(s, Cast("yellow", "advance_tower", space=12, tier=1))
    assert s.stack(14) == ("R5",) and s.potions_of("yellow") == (3, 0, 2)
    # the next action opens a new window: at most 2 spell kinds per turn
    s, _ = apply(s, MoveTower("blue", 9, 1, 1, T[1]))
    s, _ = apply(s, Cast("red", "move_castle", direction="cw"))
    with pytest.raises(IllegalAction):
        apply(s, Cast("blue", "advance_wizard", wizard="blue-1"))


def test_R_MASTER_8_repeat_a_spell_with_times_each_repetition_a_separate_move():
    s = master(potions={"blue": (4, 1, 0), "yellow": (0, 5, 0), "red": (0, 5, 0)})
    after, events = apply(s, Cast("blue", "advance_wizard", wizard="blue-1", times=2))
    assert after.wizard_position("blue-1") == (4, 1)
    assert after.potions_of("blue") == (0, 1, 4)
    assert [e.kind for e in events].count("wizard_moved") == 2
    with pytest.raises(IllegalAction) as exc:
        apply(s, Cast("blue", "advance_wizard", wizard="blue-1", times=3))
    assert exc.value.rule == "R-SPELL-1"


def test_R_MASTER_7_the_spell_may_come_before_the_current_players_move():
    s = master()
    s, _ = apply(s, Cast("red", "advance_tower", space=2, tier=1))  # R1 onto R2 at 4
    s, _ = apply(s, MoveWizard("blue", "blue-1", 1, W[1]))
    assert s.wizard_position("blue-1") == (5, 1)


def test_R_MASTER_9_a_committed_card_whose_move_became_impossible_is_lost():
    s = master(castle=16)
    s, _ = apply(s, Cast("red", "move_castle", direction="cw"))  # castle to the next free top
    blocked = MoveTower("blue", 10, 1, 1, T[1], card_committed=True)
    castle = s.castle
    s2, events = apply(s, MoveTower("blue", castle - 1, 1, 1, T[1], card_committed=True))
    assert events[0].kind == "announced_move_impossible"
    assert s2.turn.cards_used == 1 and s2.stacks == s.stacks
    with pytest.raises(IllegalAction):  # without the flag it is simply illegal
        apply(s, MoveTower("blue", castle - 1, 1, 1, T[1]))
    assert blocked.card_committed


def test_R_MASTER_9_committed_cards_are_a_master_variant_rule_only():
    s = position(3, castle=11)
    with pytest.raises(IllegalAction):
        apply(s, MoveTower("blue", 10, 1, 1, T[1], card_committed=True))


def test_R_SPELL_11_piggyback_by_another_player_in_the_master_variant():
    # 3 players: space 2 holds blue-1, yellow-1, red-1 (A B C); red rides along with blue
    s = master()
    move = MoveWizard("blue", "blue-1", 4, W[4])
    after, _ = apply(s, Cast("red", "piggyback", rider="red-1", then=move))
    assert after.wizard_position("red-1") == after.wizard_position("blue-1") == (6, 1)
    assert after.potions_of("red") == (3, 0, 2) and after.turn.cards_used == 1
    base = position(3, potions=FULL, config={"spells": ("piggyback",)})
    with pytest.raises(IllegalAction) as exc:
        apply(base, Cast("red", "piggyback", rider="red-1", then=move))
    assert exc.value.rule == "R-SPELL-2", "base timing: only the current player casts"
