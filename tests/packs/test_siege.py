"""攻城奇策 (S2): the 2d6 army table, deployment rounds, hand limit and token supply (G2-…)."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.hardware.dice import SIEGE_2D6
from companion.packs import PackError
from companion.packs.siege import (
    ARMY_TABLE,
    DEPLOYMENT_NUMBERS,
    DIE_FACES,
    SUPPLY,
    DeploymentRound,
    Token,
    TokenSupply,
    armies_for,
    armies_for_roll,
    army_distribution,
    cards_to_discard,
    cards_to_draw,
    clockwise_from,
    deal_round,
    next_player,
)

PROPS = settings(max_examples=60, derandomize=True, deadline=None)


def test_army_distribution_is_5_11_14_6_of_36_by_enumeration() -> None:
    """G2-DICE-1: the derived distribution, checked against all 36 rolls of the table."""
    counts = {1: 0, 2: 0, 3: 0, 4: 0}
    for first, second in product(range(1, 7), repeat=2):
        counts[armies_for_roll(first, second)] += 1
    assert counts == {1: 5, 2: 11, 3: 14, 4: 6}
    assert army_distribution() == {
        1: Fraction(5, 36),
        2: Fraction(11, 36),
        3: Fraction(14, 36),
        4: Fraction(6, 36),
    }
    assert sum(army_distribution().values()) == 1


def test_table_is_the_printed_one_and_the_dice_buttons() -> None:
    """The helpers take the same faces and table as the ``siege-2d6`` dice profile."""
    printed = [1, 1, 4, 2, 3, 2, 3, 3, 4, 1, 2]
    assert [armies_for(total) for total in range(2, 13)] == printed
    assert SIEGE_2D6.lookup == dict(ARMY_TABLE)
    assert SIEGE_2D6.faces == DIE_FACES
    assert SIEGE_2D6.dice == 2


@pytest.mark.parametrize("total", [1, 13, 0, -2])
def test_a_sum_outside_2_to_12_is_refused(total: int) -> None:
    with pytest.raises(PackError, match=r"total: G2-DICE-1"):
        armies_for(total)


def test_a_face_outside_1_to_6_is_refused() -> None:
    with pytest.raises(PackError, match=r"second: G2-DICE-1"):
        armies_for_roll(3, 7)


def test_deal_round_sets_two_aside_and_calls_the_rest_in_order() -> None:
    """G2-ROUND-1/2: 2 numbers set aside, the caller calls 1 -> 8 skipping them."""
    first = deal_round(random.Random(7), ["red", "blue", "green"])
    again = deal_round(random.Random(7), ["red", "blue", "green"])
    assert first == again  # the shuffle comes only from the injected generator
    assert len(first.unused) == 2
    assert first.calling_order == tuple(n for n in DEPLOYMENT_NUMBERS if n not in first.unused)
    assert first.caller == "red"


def test_next_picking_order_is_ascending_by_held_number() -> None:
    """G2-ROUND-1: next round picks in ascending order of this round's numbers."""
    dealt = DeploymentRound(("red", "blue", "green"), frozenset({1, 2}))
    played = dealt.reveal("red", 7).reveal("blue", 3).reveal("green", 5)
    assert played.next_picking_order() == ("blue", "green", "red")


def test_the_pope_overrides_the_next_picking_order() -> None:
    """G2-ROUND-3: the holder of 4 may impose the order; without a 4 nobody may."""
    dealt = DeploymentRound(("red", "blue", "green"), frozenset({1, 2}))
    with_pope = dealt.reveal("red", 4).reveal("blue", 3).reveal("green", 5)
    assert with_pope.next_picking_order(["green", "red", "blue"]) == ("green", "red", "blue")
    without = dealt.reveal("red", 6).reveal("blue", 3).reveal("green", 5)
    with pytest.raises(PackError, match=r"pope_order: G2-ROUND-3"):
        without.next_picking_order(["green", "red", "blue"])
    with pytest.raises(PackError, match=r"pope_order: G2-ROUND-3"):
        with_pope.next_picking_order(["green", "red"])


def test_bad_reveals_leave_the_round_unchanged() -> None:
    dealt = DeploymentRound(("red", "blue"), frozenset({1, 2}))
    held = dealt.reveal("red", 5)
    for player, number, field in [
        ("red", 6, "player"),  # already revealed
        ("pink", 6, "player"),  # not in the round
        ("blue", 1, "number"),  # set aside
        ("blue", 5, "number"),  # held by red
        ("blue", 9, "number"),  # no such card
    ]:
        with pytest.raises(PackError, match=rf"^{field}: G2-ROUND-"):
            held.reveal(player, number)
    assert held.held == {"red": 5}
    with pytest.raises(PackError, match=r"held: G2-ROUND-2"):
        held.next_picking_order()


def test_simple_rules_go_clockwise_from_the_start_player() -> None:
    """G2-ROUND-4."""
    seats = ["red", "blue", "green", "yellow"]
    assert clockwise_from(seats, "green") == ("green", "yellow", "red", "blue")
    assert next_player(seats, "yellow") == "red"
    with pytest.raises(PackError, match=r"start: G2-ROUND-4"):
        clockwise_from(seats, "pink")
    with pytest.raises(PackError, match=r"players: G2-ROUND-4"):
        clockwise_from([*seats, "pink"], "red")


def test_draw_and_hand_limit() -> None:
    """G2-TURN-1: draw 1, or 2 from an empty hand; G2-TURN-3: discard down to 6."""
    assert cards_to_draw(0) == 2
    assert cards_to_draw(3) == 1
    assert cards_to_discard(6) == 0
    assert cards_to_discard(9) == 3
    with pytest.raises(PackError, match=r"hand_size: G2-TURN-3"):
        cards_to_discard(-1)


def test_token_supply_counts_and_errors() -> None:
    """G2-COMP-1 counts 15/5/7; take and return, with errors when out."""
    full = TokenSupply()
    assert (
        {t: full.count(t) for t in Token}
        == dict(SUPPLY)
        == {
            Token.BARRIER: 15,
            Token.MUD: 5,
            Token.BOMB: 7,
        }
    )
    barriers = full.take(Token.BARRIER, 3).take(Token.BARRIER, 3)
    assert barriers.barrier == 9 and barriers.on_board(Token.BARRIER) == 6
    empty_mud = full.take(Token.MUD, 5)
    with pytest.raises(PackError, match=r"^mud: G2-TOK-3: only 0 left"):
        empty_mud.take(Token.MUD)
    assert empty_mud.mud == 0
    with pytest.raises(PackError, match=r"barrier: G2-TOK-1: .*move barriers already on the board"):
        TokenSupply(barrier=2).take(Token.BARRIER, 3)
    with pytest.raises(PackError, match=r"^bomb: G2-TOK-2: only 0 on the board"):
        full.give_back(Token.BOMB)
    assert full.take(Token.BOMB).give_back(Token.BOMB) == full
    with pytest.raises(PackError, match=r"^barrier: G2-TOK-1: supply must be 0..15"):
        TokenSupply(barrier=-1)


@PROPS
@given(st.integers(0, 2**32 - 1), st.permutations(["red", "blue", "green", "yellow"]))
def test_calling_order_is_a_permutation_of_the_six_used_numbers(
    seed: int, players: list[str]
) -> None:
    dealt = deal_round(random.Random(seed), players)
    used = set(DEPLOYMENT_NUMBERS) - dealt.unused
    assert len(dealt.unused) == 2 and dealt.unused <= set(DEPLOYMENT_NUMBERS)
    assert len(dealt.calling_order) == 6
    assert sorted(dealt.calling_order) == sorted(used)
    assert list(dealt.calling_order) == sorted(dealt.calling_order)


@PROPS
@given(
    st.lists(
        st.tuples(st.booleans(), st.sampled_from(list(Token)), st.integers(-1, 8)), max_size=40
    )
)
def test_supply_counts_never_go_negative(moves: list[tuple[bool, Token, int]]) -> None:
    supply = TokenSupply()
    for take, token, n in moves:
        before = supply
        try:
            supply = supply.take(token, n) if take else supply.give_back(token, n)
        except PackError:
            assert supply == before
        for kind in Token:
            assert 0 <= supply.count(kind) <= SUPPLY[kind]


def test_a_round_must_set_aside_two_real_numbers() -> None:
    with pytest.raises(PackError, match=r"^unused: G2-ROUND-1"):
        DeploymentRound(("red", "blue"), frozenset({1}))
    with pytest.raises(PackError, match=r"^unused: G2-ROUND-1"):
        DeploymentRound(("red", "blue"), frozenset({0, 9}))
    with pytest.raises(PackError, match=r"^players: G2-ROUND-1"):
        DeploymentRound(("red", "red"), frozenset({1, 2}))
