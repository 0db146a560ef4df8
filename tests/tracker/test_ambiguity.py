"""Scripted ambiguities: two legal histories leave the same picture but hide different things.

For each kind (towers with identical crest roofs landing on one space, the sub-stack choice, the
swap spell, the freed wizard) the tracker asks the players in their words, an answer commits the
history it names (hidden wizards, their tiers and the tower order), and a later frame that shows
the difference settles it without a question. A deferring tracker (``TrackerOptions.defer``)
holds both histories, commits neither and shows the hidden difference as alternatives instead
of asking, until a lifted stack settles it or the belief reaches its limit (``max_hold``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from companion.rules.actions import Action, Cast, DiscardCard, EndTurn, IllegalAction, MoveTower
from companion.rules.engine import apply, setup
from companion.rules.model import CARD_KINDS, Config, GameState, position
from companion.tracking import Tracker, TrackerOptions, TrackerUpdate, board_key
from companion.tracking.belief import trapped_places
from companion.tracking.noise import expected_observation, space_views

T = {
    v: next(c for c in CARD_KINDS if c.type == "tower" and c.tower == v and not c.dice)
    for v in range(1, 6)
}
"""Tower-only value cards T1..T5."""


def play(state: GameState, *actions: Action) -> GameState:
    for a in actions:
        state, _ = apply(state, a)
    return state


def done(state: GameState) -> GameState:
    """The DONE button: unplayed cards are discarded, the turn ends (R-TURN-3/4)."""
    while state.turn.cards_used < state.table.actions_per_turn and not state.turn.ended:
        state = play(state, DiscardCard(state.current_player, None))
    return play(state, EndTurn())


def feed(tracker: Tracker, state: GameState, times: int = 2) -> TrackerUpdate:
    """``times`` stable frames of ``state``; the last update."""
    update = None
    for _ in range(times):
        update = tracker.observe(expected_observation(state))
    assert update is not None
    return update


def inside(state: GameState, space: int) -> tuple[tuple[str, ...], ...]:
    """What lifting the stack of ``space`` tower by tower would show: per tier from the track
    (tier 0) up, the tower kind ("track" for tier 0) and the colours of the wizards there."""
    tb = state.table
    out = []
    for tier, tower in enumerate((None, *state.stacks[space - 1])):
        kind = "track" if tower is None else tb.towers[tower].kind
        colours = sorted(
            tb.colours[tb.wizard_owner[i]]
            for i, p in enumerate(state.wizards)
            if p == position(space, tier)
        )
        out.append((kind, *colours))
    return tuple(out)


def settled(tr: Tracker, truth: GameState, other: GameState, later: GameState, space: int) -> None:
    """The ambiguous turn is committed as ``truth`` (never as ``other``) and the tracker follows
    the game on to ``later`` with the hidden wizards of ``space`` right."""
    committed = [board_key(c.state) for c in tr.history]
    assert board_key(truth) in committed
    assert board_key(other) not in committed
    assert board_key(tr.state) == board_key(later)
    assert inside(tr.state, space) == inside(later, space)
    assert {board_key(s) for s, _ in tr.hypotheses} == {board_key(later)}


@dataclass(frozen=True)
class Ambiguity:
    """A position, and per answer option the true state after the ambiguous turn."""

    start: GameState
    space: int
    """The space whose stack hides different things."""
    text: str
    truths: dict[str, GameState]
    """Option text -> the state that option stands for."""


def _crest_roofs() -> Ambiguity:
    """Two players. Blue stacks R1 onto P1 (space 3 = [P1, R1]); space 4 = [R2]. Both stacks show
    a crest roof with blue, yellow, blue on it. Yellow moves both onto P3 on space 7: whichever
    lands last is on top, and the picture is the same either way."""
    st = setup(Config(player_count=2), None)
    start = play(
        st,
        MoveTower("blue", 2, 1, 1, T[1]),
        MoveTower("blue", 10, 1, 2, T[2]),
        EndTurn(),
    )
    assert start.stack(3) == ("P1", "R1") and start.stack(4) == ("R2",)
    low = MoveTower("yellow", 3, 1, 4, T[4])
    single = MoveTower("yellow", 4, 1, 3, T[3])
    return Ambiguity(
        start,
        7,
        "The camera can't tell which of these happened. Which one was it?",
        {
            "yellow moved the whole stack from space 3 to space 7; "
            "then yellow moved the top tower from space 4 to space 7": play(start, low, single),
            "yellow moved the top tower from space 4 to space 7; "
            "then yellow moved the whole stack from space 3 to space 7": play(start, single, low),
        },
    )


def _sub_stack() -> Ambiguity:
    """Two players. Blue builds [R2, R1, P1] on space 4 (two crest towers under a plain one,
    wizards on every roof). Yellow takes the stack to space 6 in two moves: the top two then the
    last tower, or the top tower then the other two. Either way space 6 shows four towers, a
    crest roof, blue, yellow, blue."""
    st = setup(Config(player_count=2), None)
    start = play(
        st,
        MoveTower("blue", 2, 1, 2, T[2]),
        MoveTower("blue", 3, 1, 1, T[1]),
        EndTurn(),
    )
    assert start.stack(4) == ("R2", "R1", "P1")
    return Ambiguity(
        start,
        6,
        "From space 4, did you move the top two or the top tower?",
        {
            "yellow moved the top 2 towers from space 4 to space 6; "
            "then yellow moved the top tower from space 4 to space 6": play(
                start, MoveTower("yellow", 4, 2, 2, T[2]), MoveTower("yellow", 4, 1, 2, T[2])
            ),
            "yellow moved the top tower from space 4 to space 6; "
            "then yellow moved the whole stack from space 4 to space 6": play(
                start, MoveTower("yellow", 4, 3, 2, T[2]), MoveTower("yellow", 4, 1, 2, T[2])
            ),
        },
    )


def _swap() -> Ambiguity:
    """Four players, master variant. Blue traps yellow and red with R2 on P2 (space 5 = [P2, R2],
    one full potion); space 7 = [P3] shows yellow and red too. Next turn blue empties space 5
    onto space 7: tower by tower, or by swapping the top towers of 5 and 7 and moving the rest.
    Space 7 then shows three towers, a plain roof, yellow and red either way."""
    st = setup(Config(player_count=4, variant="master"), None)
    s = play(st, MoveTower("blue", 4, 1, 1, T[1]), MoveTower("blue", 10, 1, 2, T[2]), EndTurn())
    for colour in ("yellow", "red", "green"):
        s = play(s, DiscardCard(colour, None), DiscardCard(colour, None), EndTurn())
    assert s.current_player == "blue" and s.potions_of("blue")[0] == 1
    assert s.stack(5) == ("P2", "R2") and s.stack(7) == ("P3",)
    return Ambiguity(
        s,
        7,
        "The camera can't tell which of these happened. Which one was it?",
        {
            "blue moved the top tower from space 5 to space 7; "
            "then blue moved the top tower from space 5 to space 7": play(
                s, MoveTower("blue", 5, 2, 2, T[2]), MoveTower("blue", 5, 1, 2, T[2])
            ),
            "blue swapped the top towers of spaces 5 and 7; "
            "then blue moved the whole stack from space 5 to space 7": play(
                s, Cast("blue", "swap_tower", a=5, b=7), MoveTower("blue", 5, 1, 2, T[2])
            ),
        },
    )


KINDS: dict[str, Callable[[], Ambiguity]] = {
    "identical crest roofs": _crest_roofs,
    "sub-stack": _sub_stack,
    "swap": _swap,
}
_BUILT: dict[str, Ambiguity] = {}


def ambiguity(kind: str) -> Ambiguity:
    if kind not in _BUILT:
        _BUILT[kind] = KINDS[kind]()
    return _BUILT[kind]


CASES = [(kind, i) for kind in KINDS for i in range(2) if (kind, i) != ("swap", 0)]
"""(kind, index of the true option). The swap case's tower-by-tower history is not listed: the
same two moves are also explained by card and Advance a Tower mixes that differ from it only in
potions, and the tracker leaves those uncommitted (its state is right, its committed state is
not) until ``max_lag`` frames have passed."""


ASK_AT_ONCE = TrackerOptions(defer=False)
"""A tracker that asks about a hidden difference as soon as a later frame confirmed it (the
mode before deferring became the default; ``companion bench tracking --no-defer``)."""


def _truth(kind: str, i: int) -> tuple[Ambiguity, str, GameState, GameState]:
    amb = ambiguity(kind)
    options = list(amb.truths)
    return amb, options[i], amb.truths[options[i]], amb.truths[options[1 - i]]


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_two_histories_look_alike_but_hide_different_things(kind):
    amb = ambiguity(kind)
    a, b = amb.truths.values()
    assert space_views(a) == space_views(b)
    assert board_key(a) != board_key(b)
    assert inside(a, amb.space) != inside(b, amb.space)
    assert inside(a, amb.space)[-1] == inside(b, amb.space)[-1], "the tops look alike"


@pytest.mark.parametrize("kind, i", CASES)
def test_the_players_are_asked_and_their_answer_commits_that_history(kind, i):
    amb, option, truth, _ = _truth(kind, i)
    tr = Tracker(amb.start, ASK_AT_ONCE)
    first = tr.observe(expected_observation(truth))
    assert first.question is None, "one frame could be a misread: no question yet"
    q = feed(tr, truth, 1).question
    assert q is not None
    assert q.text == amb.text
    assert set(q.options) == set(amb.truths)
    assert tr.committed_state == amb.start, "nothing is committed while the players are asked"
    u = tr.answer(q.id, q.options.index(option))
    assert u.question is None
    for st in (tr.state, tr.committed_state):
        assert board_key(st) == board_key(truth)
        assert inside(st, amb.space) == inside(truth, amb.space)
    assert tr.committed_state.potions == truth.potions


def next_move(state: GameState, away: int) -> GameState:
    """The current player moves the top tower of the first stack that is not on ``away`` one
    space on, to a space other than ``away``."""
    for s, stack in enumerate(state.stacks, start=1):
        if stack and away not in (s, s % state.table.length + 1) and s != state.castle:
            try:
                return play(state, MoveTower(state.current_player, s, len(stack), 1, T[1]))
            except IllegalAction:
                continue
    raise AssertionError("no tower to move")


@pytest.mark.parametrize("kind, i", CASES)
def test_a_done_pressed_before_the_answer_still_ends_the_turn(kind, i):
    # the players press DONE while the question is on the phones and answer afterwards: the
    # answer keeps the DONE, so the next still board hands the turn on, and the next player's
    # move is committed as theirs
    amb, option, truth, _ = _truth(kind, i)
    tr = Tracker(amb.start, ASK_SOON)
    q = feed(tr, truth).question
    assert q is not None
    tr.end_turn()
    assert tr.question == q, "the DONE button does not withdraw the question"
    tr.answer(q.id, q.options.index(option))
    nxt = done(truth)
    feed(tr, nxt, 1)
    assert tr.state.current_player == nxt.current_player != truth.current_player
    later = next_move(nxt, amb.space)
    feed(tr, later)
    assert board_key(tr.state) == board_key(later)
    assert tr.state.current_player == later.current_player
    # the turn is committed as ended; the move on the board is the next player's (no spell or
    # extra move of the player who pressed DONE)
    assert isinstance(tr.history[-1].action, EndTurn)
    assert tr.history[-1].state.current_player == nxt.current_player
    assert [(type(a), a.player) for a in tr.uncommitted] == [(MoveTower, nxt.current_player)]


@pytest.mark.parametrize("seen", [1, 2], ids=["seen-once", "asked"])
@pytest.mark.parametrize("kind, i", CASES)
def test_a_later_split_of_the_stack_decides_without_an_answer(kind, i, seen):
    # the next player lifts the top tower off the stack: what is under it differs
    amb, _, truth, other = _truth(kind, i)
    space = amb.space

    def split(st: GameState) -> GameState:
        nxt = done(st)
        return play(nxt, MoveTower(nxt.current_player, space, st.height(space), 1, T[1]))

    later = split(truth)
    assert space_views(later) != space_views(split(other))
    tr = Tracker(amb.start, ASK_AT_ONCE)
    asked = feed(tr, truth, seen).question
    assert (asked is not None) == (seen == 2)
    tr.end_turn()
    updates = [tr.observe(expected_observation(later)) for _ in range(3)]
    assert [u.question for u in updates] == [None] * 3
    assert all(u.explained for u in updates)
    settled(tr, truth, other, later, space)


# --------------------------------------------------------------------------------------------
# the freed wizard (asking and answering: test_tracker.py); here later frames decide


def _freed_wizard() -> tuple[GameState, dict[str, GameState]]:
    """Master variant, 2 players: space 4 = [R2, P1, R1], two blue wizards trapped at tier 1 and
    one at tier 2. Blue frees one by lifting the 2nd or the 3rd tower: the same picture."""
    st = setup(Config(player_count=2, variant="master"), None)
    a = play(st, MoveTower("blue", 2, 1, 1, T[1]))
    b = play(a, MoveTower("blue", 3, 1, 1, T[1]))
    lower = next(w for w, t in b.hidden_wizards(4) if t == 1 and w.startswith("blue"))
    upper = next(w for w, t in b.hidden_wizards(4) if t == 2 and w.startswith("blue"))
    truths = {
        "upper": play(b, Cast("blue", "free_wizard", space=4, tier=3, wizard=upper)),
        "lower": play(b, Cast("blue", "free_wizard", space=4, tier=2, wizard=lower)),
    }
    return b, truths


@pytest.mark.parametrize("seen", [1, 2], ids=["seen-once", "asked"])
@pytest.mark.parametrize("which", ["upper", "lower"])
def test_a_freed_wizard_is_settled_when_the_top_tower_moves_on(which, seen):
    b, truths = _freed_wizard()
    truth = truths[which]
    other = truths["lower" if which == "upper" else "upper"]
    assert space_views(truth) == space_views(other)
    assert inside(truth, 4) != inside(other, 4)

    def lift_top(s: GameState) -> GameState:
        return play(done(s), MoveTower("yellow", 4, 3, 1, T[1]))

    later = lift_top(truth)
    # the 2nd tower's roof shows: two yellows, or a blue among them
    assert space_views(later) != space_views(lift_top(other))
    tr = Tracker(b, ASK_AT_ONCE)
    asked = feed(tr, truth, seen).question
    assert (asked is not None) == (seen == 2)
    tr.end_turn()
    updates = [tr.observe(expected_observation(later)) for _ in range(3)]
    assert [u.question for u in updates] == [None] * 3
    settled(tr, truth, other, later, 4)


# --------------------------------------------------------------------------------------------
# deferring (TrackerOptions.defer): held and shown, not asked, until it matters


DEFER = TrackerOptions(defer=True)
"""A tracker that holds hidden differences and asks only when they matter."""
ASK_SOON = TrackerOptions(defer=True, max_hold=1)
"""Deferring, with a belief that holds one frame's difference at most: asked on the second."""


@pytest.mark.parametrize("kind, i", CASES)
def test_deferring_a_hidden_difference_is_held_and_shown_not_asked(kind, i):
    amb, _, truth, other = _truth(kind, i)
    tr = Tracker(amb.start, DEFER)
    updates = [tr.observe(expected_observation(truth)) for _ in range(6)]
    assert [u.question for u in updates] == [None] * 6, "nothing needs the hidden pieces yet"
    assert tr.committed_state == amb.start, "neither history is committed as certain"
    held = {board_key(s) for s, _ in tr.hypotheses}
    assert {board_key(truth), board_key(other)} <= held, "both stories are kept"
    last = updates[-1]
    tb = truth.table
    for seat, colour in enumerate(tb.colours):
        lo, hi = tb.wiz_range[seat]
        if sorted(truth.wizards[lo:hi]) != sorted(other.wizards[lo:hi]):
            # the page shows this colour's trapped wizards as "one of these"
            assert colour in last.hidden_unsure
            assert trapped_places(truth, seat) in last.hidden_unsure[colour]
            assert trapped_places(other, seat) in last.hidden_unsure[colour]
            assert last.to_json()["hidden_unsure"][colour]


@pytest.mark.parametrize("kind, i", CASES)
def test_deferring_at_the_belief_limit_the_players_are_asked_and_their_answer_commits_it(kind, i):
    amb, option, truth, _ = _truth(kind, i)
    tr = Tracker(amb.start, ASK_SOON)
    first = tr.observe(expected_observation(truth))
    assert first.question is None, "one frame could be a misread: no question yet"
    q = feed(tr, truth, 1).question
    assert q is not None
    assert q.text == amb.text
    assert set(q.options) == set(amb.truths)
    assert tr.committed_state == amb.start, "nothing is committed while the players are asked"
    u = tr.answer(q.id, q.options.index(option))
    assert u.question is None
    for st in (tr.state, tr.committed_state):
        assert board_key(st) == board_key(truth)
        assert inside(st, amb.space) == inside(truth, amb.space)
    assert tr.committed_state.potions == truth.potions


@pytest.mark.parametrize("seen", [1, 2, 5], ids=["seen-once", "twice", "held"])
@pytest.mark.parametrize("kind, i", CASES)
def test_deferring_a_later_split_of_the_stack_decides_without_an_answer(kind, i, seen):
    # the next player lifts the top tower off the stack: what is under it differs, and the
    # stories held together until then are told apart without a question
    amb, _, truth, other = _truth(kind, i)
    space = amb.space

    def split(st: GameState) -> GameState:
        nxt = done(st)
        return play(nxt, MoveTower(nxt.current_player, space, st.height(space), 1, T[1]))

    later = split(truth)
    assert space_views(later) != space_views(split(other))
    tr = Tracker(amb.start, DEFER)
    assert feed(tr, truth, seen).question is None, "not asked: nothing needs it yet"
    tr.end_turn()
    updates = [tr.observe(expected_observation(later)) for _ in range(3)]
    assert [u.question for u in updates] == [None] * 3
    assert all(u.explained for u in updates)
    assert not updates[-1].hidden_unsure, "the lifted stack showed which story was true"
    settled(tr, truth, other, later, space)


@pytest.mark.parametrize("seen", [1, 2, 5], ids=["seen-once", "twice", "held"])
@pytest.mark.parametrize("which", ["upper", "lower"])
def test_deferring_a_freed_wizard_is_settled_when_the_top_tower_moves_on(which, seen):
    b, truths = _freed_wizard()
    truth = truths[which]
    other = truths["lower" if which == "upper" else "upper"]
    assert space_views(truth) == space_views(other)
    assert inside(truth, 4) != inside(other, 4)

    def lift_top(s: GameState) -> GameState:
        return play(done(s), MoveTower("yellow", 4, 3, 1, T[1]))

    later = lift_top(truth)
    # the 2nd tower's roof shows: two yellows, or a blue among them
    assert space_views(later) != space_views(lift_top(other))
    tr = Tracker(b, DEFER)
    assert feed(tr, truth, seen).question is None, "not asked: nothing needs it yet"
    tr.end_turn()
    updates = [tr.observe(expected_observation(later)) for _ in range(3)]
    assert [u.question for u in updates] == [None] * 3
    settled(tr, truth, other, later, 4)
