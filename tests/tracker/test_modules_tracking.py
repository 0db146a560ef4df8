"""The tracker with the expansion modules: hidden choices the camera cannot read (a witch page
card, the raven's timing, a feather against the witch, Precise Landing) and effects the engine
derives (web continuation, fountain refill, feathers) are followed to the true board, the hidden
pieces and the hidden counters.

Each game is scripted from a seeded setup with the hands unknown (the tracker's own starting
state): the first candidate move (in a fixed order) that shows the wanted effect is played, the
turn is closed with the DONE button and two noiseless frames of the table are shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

import pytest

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    Feather,
    IllegalAction,
    MoveTower,
    MoveWizard,
)
from companion.rules.engine import actions_for_card, apply, legal_actions, setup
from companion.rules.model import CARD_KINDS, Config, GameState, position, space_of, tier_of
from companion.sim.simulate import tracker_config
from companion.tracking import Tracker, board_key, describe
from companion.tracking.noise import expected_observation

ALL = frozenset({"fountain", "magic_tower", "raven", "web", "witch"})


def start(modules: Iterable[str], seed: int, players: int = 3) -> GameState:
    """A seeded setup as the tracker starts it: spells on display known, hands unknown."""
    truth = setup(Config(player_count=players, modules=frozenset(modules)), seed)
    return setup(tracker_config(truth), None)


def card_moves(st: GameState) -> Iterator[MoveWizard | MoveTower]:
    """Every card move of the current player: value cards, then die cards with each final roll
    (with the raven: after and before)."""
    for card in CARD_KINDS:
        if card.dice:
            for roll in range(1, 7):
                yield from actions_for_card(st, card, (roll,))
        else:
            yield from actions_for_card(st, card)


def first(
    st: GameState,
    candidates: Iterable[Action],
    wanted: Callable[[GameState, Sequence[Event]], bool],
) -> tuple[Action, GameState]:
    for a in candidates:
        try:
            nxt, ev = apply(st, a)
        except IllegalAction:
            continue
        if wanted(nxt, ev):
            return a, nxt
    raise AssertionError("the seeded setup offers no such move")


def kinds(ev: Sequence[Event]) -> set[str]:
    return {e.kind for e in ev}


def play_turn(tracker: Tracker, st: GameState, actions: Sequence[Action]) -> GameState:
    """Apply ``actions``, discard the rest of the hand and end the turn in the truth; give
    the tracker the dice buttons' rolls and the DONE button, then two frames of the board."""
    for a in actions:
        if isinstance(a, MoveWizard | MoveTower) and a.card.dice:
            tracker.dice(a.rolls, a.card.dice)
        st, _ = apply(st, a)
    t = st.turn
    while not (t.ended or t.redrawn or t.cards_used >= st.table.actions_per_turn + t.extra_card):
        # the rest of the hand is discarded unseen (R-TURN-3)
        st, _ = apply(st, DiscardCard(st.table.colours[t.player]))
        t = st.turn
    st, _ = apply(st, EndTurn())
    tracker.end_turn()
    for _ in range(2):
        update = tracker.observe(expected_observation(st))
        assert update.explained
    return st


def table(st: GameState) -> tuple[object, ...]:
    """Everything a player would check: the board with hidden wizards and tiers, potions, the
    module pieces and counters (witch, raven, witch vials, feathers), whose turn."""
    return (board_key(st), st.potions, st.modules, st.turn.player)


def assert_tracked(tracker: Tracker, truth: GameState) -> None:
    """The tracker's best state is the truth (:func:`table`)."""
    assert table(tracker.state) == table(truth)


def held(tracker: Tracker, truth: GameState) -> bool:
    """The truth is one of the tracker's hypotheses."""
    return table(truth) in {table(h) for h, _ in tracker.hypotheses}


# --------------------------------------------------------------------------------------------


def test_a_page_card_moves_the_witch_before_the_move():
    st0 = start({"witch"}, 3)
    moves = (replace(m, page=True) for m in card_moves(st0))
    move, _ = first(st0, moves, lambda nxt, ev: "witch_moved" in kinds(ev))
    assert isinstance(move, MoveWizard | MoveTower) and move.page
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [move])
    assert_tracked(tr, truth)
    assert tr.state.modules is not None and truth.modules is not None
    assert tr.state.modules.witch == truth.modules.witch != st0.modules.witch  # type: ignore[union-attr]


def test_a_sealed_witch_released_by_a_page_card():
    st0 = start({"witch"}, 3)
    seal, sealed = first(st0, card_moves(st0), lambda nxt, ev: "witch_sealed" in kinds(ev))
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [seal])
    assert_tracked(tr, truth)
    m = truth.modules
    assert m is not None and m.witch is not None
    guess = (space_of(m.witch), tier_of(m.witch) + 1)
    moves = (replace(mv, page=True, witch_guess=guess) for mv in card_moves(truth))
    release, _ = first(truth, moves, lambda nxt, ev: "witch_released" in kinds(ev))
    truth = play_turn(tr, truth, [release])
    assert_tracked(tr, truth)


@pytest.mark.parametrize("timing", ["before", "after"])
def test_the_raven_moves_on_the_die_value_before_or_after_the_move(timing):
    st0 = start({"raven"}, 2)

    def differs(a: Action) -> bool:
        # only moves where the raven's timing changes the board tell the two apart
        if not isinstance(a, MoveTower | MoveWizard) or a.raven_timing != timing:
            return False
        other = "after" if timing == "before" else "before"
        try:
            b, _ = apply(st0, replace(a, raven_timing=other))
        except IllegalAction:
            return True
        return board_key(b) != board_key(apply(st0, a)[0])

    moves = (m for m in card_moves(st0) if m.card.dice and differs(m))
    move, _ = first(st0, moves, lambda nxt, ev: "raven_moved" in kinds(ev))
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [move])
    assert_tracked(tr, truth)


def test_a_feather_moves_a_wizard_and_is_spent():
    st0 = start({"raven"}, 2)
    m0 = st0.modules
    assert m0 is not None and m0.feathers is not None
    # the first player holds the 3 feathers a wizard move costs (R-MOD-RAVEN-6)
    st0 = replace(st0, modules=m0._replace(feathers=(3,) + m0.feathers[1:]))
    colour = st0.table.colours[0]
    # 6 spaces, then both cards: no story without the feather has three moves in a turn
    feathers = (Feather(colour, "move_wizard", wizard=w, steps=6) for w in st0.table.wizard_ids)
    use, after = first(st0, feathers, lambda nxt, ev: "feather_spent" in kinds(ev))
    assert isinstance(use, Feather)
    others = (
        m
        for m in card_moves(after)
        if isinstance(m, MoveTower) and not m.card.dice and m.space != after.castle
    )
    one, after = first(after, others, lambda nxt, ev: True)
    two, _ = first(after, (m for m in card_moves(after) if not m.card.dice), lambda n, e: True)
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [use, one, two])
    assert_tracked(tr, truth)
    got = tr.state.modules
    assert got is not None and got.feathers is not None and got.feathers[0] == 0


def test_a_feather_spent_against_the_witch_is_held_as_a_hypothesis():
    st0 = start({"witch", "raven"}, 3)
    m0 = st0.modules
    assert m0 is not None and m0.feathers is not None
    # the witch stands on space 2, next to every player's wizard on space 3; every player
    # holds a full potion, the first player a feather too
    st0 = replace(
        st0,
        potions=tuple((max(1, f), e, s) for f, e, s in st0.potions),
        modules=m0._replace(witch=position(2, len(st0.stacks[1])), feathers=(1, 0, 0)),
    )
    colour = st0.table.colours[0]

    def blocked(nxt: GameState, ev: Sequence[Event]) -> bool:
        return "witch_blocked" in kinds(ev) and nxt.potions[0] == st0.potions[0]

    moves = (replace(m, page=True, witch_protect=(colour,)) for m in card_moves(st0))
    move, _ = first(st0, moves, blocked)
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [move])
    assert truth.potions[1][0] == st0.potions[1][0] - 1  # the others lost a potion
    # potions and feathers are hidden: the camera cannot tell a blocked witch from a potion
    # emptied, so the true story is held next to the cheaper one until later evidence (a
    # spell's cost, the end of the game) decides
    assert board_key(tr.state) == board_key(truth)
    assert held(tr, truth)


def test_a_wizard_ending_on_the_fountain_fills_a_potion():
    st0 = start({"fountain"}, 2)
    seat = st0.turn.player
    move, _ = first(
        st0,
        (m for m in card_moves(st0) if isinstance(m, MoveWizard)),
        lambda nxt, ev: "potion_filled" in kinds(ev),
    )
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [move])
    assert_tracked(tr, truth)
    assert tr.state.potions[seat][0] == st0.potions[seat][0] + 1


@pytest.mark.parametrize("side", [MoveTower, MoveWizard])
def test_a_move_ending_on_the_web_continues(side):
    st0 = start({"web"}, 2)
    move, _ = first(
        st0,
        (m for m in card_moves(st0) if isinstance(m, side)),
        lambda nxt, ev: "web_bounce" in kinds(ev),
    )
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [move])
    assert_tracked(tr, truth)


def test_a_headwind_spell_over_the_web_continues_the_tower_backwards():
    # Headwind for a Tower from two spaces after a web: the tower lands on the web and goes on
    # two more spaces back (R-MOD-WEB-2). No card moves a tower back, so only the spell explains
    # the board; the still board right after it is explained at once (the page shows the tower
    # where it stands, the turn goes on)
    config = Config(
        player_count=3,
        modules=frozenset({"web"}),
        spells=("advance_tower", "headwind_tower"),
    )
    st0 = setup(tracker_config(setup(config, 2)), None)
    # the first player holds a full potion
    st0 = replace(st0, potions=tuple((max(1, f), e, s) for f, e, s in st0.potions))
    tb = st0.table
    web = tb.special.index("web")
    src = web % tb.length + 2
    assert st0.stacks[src - 1], "the seeded setup has a tower two spaces after the web"
    cast = Cast(tb.colours[st0.turn.player], "headwind_tower", space=src, tier=1)
    after, ev = apply(st0, cast)
    assert "web_bounce" in kinds(ev)
    assert len(after.stacks[web - 3]) == len(st0.stacks[web - 3]) + 1, "two spaces before the web"
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [cast])
    assert_tracked(tr, truth)


def test_a_free_spell_from_the_magic_tower_leaves_the_potions_full():
    # a wizard ending on the magic tower gives a free spell (R-MOD-MAGICTOWER-5); the player
    # casts Headwind for a Tower with it while holding a full potion that could have paid:
    # the potion stays full, and that story is followed, not only the paid one
    st0 = start({"magic_tower"}, 0)
    assert "headwind_tower" in st0.table.spells
    st0 = replace(st0, potions=tuple((1, e + f - 1, s) for f, e, s in st0.potions))
    wizard_moves = (m for m in card_moves(st0) if isinstance(m, MoveWizard))
    move, mid = first(st0, wizard_moves, lambda nxt, ev: "magic_tower_free_spell" in kinds(ev))
    casts = (
        a
        for a in legal_actions(mid)
        if isinstance(a, Cast) and a.free and a.spell == "headwind_tower"
    )
    cast, after = first(mid, casts, lambda nxt, ev: board_key(nxt) != board_key(mid))
    assert after.potions == mid.potions
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [move, cast])
    assert board_key(tr.state) == board_key(truth)
    assert held(tr, truth)


def test_a_page_card_and_the_ravens_timing_are_told_apart_on_the_phone():
    # two stories that differ only in a hidden choice of the card move (a page card moving the
    # witch first, the raven flying before the move) are offered to the players in different
    # words, never as two identical options
    st0 = start({"witch", "raven"}, 3)
    pages = (replace(m, page=True) for m in card_moves(st0))
    page, _ = first(st0, pages, lambda nxt, ev: "witch_moved" in kinds(ev))
    assert isinstance(page, MoveWizard | MoveTower)
    plain = replace(page, page=False)
    assert describe(plain, st0) != describe(page, st0)
    assert "page card" in describe(page, st0)
    before = (m for m in card_moves(st0) if m.card.dice and m.raven_timing == "before")
    early, _ = first(st0, before, lambda nxt, ev: "raven_moved" in kinds(ev))
    assert isinstance(early, MoveWizard | MoveTower)
    late = replace(early, raven_timing="after")
    assert describe(early, st0) != describe(late, st0)
    assert "raven" in describe(early, st0)
