"""The search must not lose a story for a reason that has nothing to do with the frame: a turn
closed on a board its open turn also shows, another wizard of a colour than the best story's
(docs/architecture.md, "The tracker"). Each was the true story in an end-to-end game whose
tracker then committed wrong tables as certain."""

from __future__ import annotations

from dataclasses import replace

from companion.rules import apply, observe
from companion.rules.actions import Cast, MoveWizard
from companion.rules.engine import IllegalAction, setup
from companion.rules.model import Config, GameState
from companion.tracking import board_key
from companion.tracking.belief import Hypothesis
from companion.tracking.candidates import transitions
from companion.tracking.noise import NoiseModel, Target
from companion.tracking.options import TrackerOptions
from companion.tracking.reconcile import explain
from companion.tracking.search import Node, SearchCache, _select


def _node(state: GameState, rank: float) -> Node:
    n = Node(state, rank, (), (), (), (), False)
    n.rank = n.score = rank
    return n


def _target(state: GameState) -> Target:
    return Target(observe(state), state.table.length, NoiseModel())


def test_a_closed_turn_keeps_a_beam_slot_beside_its_open_turn():
    """A turn closed on an unchanged board (a castle entry ends it, the DONE press follows) shows
    the same board as the open turn before it. The next player's moves can only follow the
    closed one, so it must not lose its board's slots to the open turn's variants."""
    st = setup(Config(player_count=3), None)
    closed = replace(st, turn=st.turn._replace(player=1))
    assert board_key(closed) == board_key(st)
    nodes = [_node(st, 0.0), _node(st, 0.1), _node(closed, 0.2)]
    kept = _select(nodes, beam=30, per_board=2)
    assert any(n.state.turn.player == 1 for n in kept)


def _swapped(st: GameState) -> tuple[GameState, int, int]:
    """``st`` with two of the current player's wizards on different places exchanged (the same
    board: a colour's wizards are interchangeable), and their indices."""
    lo, hi = st.table.wiz_range[st.turn.player]
    for i in range(lo, hi):
        for j in range(i + 1, hi):
            if st.wizards[i] != st.wizards[j]:
                w = list(st.wizards)
                w[i], w[j] = w[j], w[i]
                return replace(st, wizards=tuple(w)), i, j
    raise AssertionError("no two wizards of the colour on different places")


def test_a_story_that_moved_another_wizard_of_the_colour_gets_its_own_search():
    """Two stories show the same board but hold different wizards of a colour in its places
    (and differ in the potions). The frame shows a wizard moved: each story must explain it
    with its own wizard. Replaying the likelier story's action ("blue-2 moves") on the other
    moves another piece, so that story's true continuation was never searched."""
    st = setup(Config(player_count=3), None)
    other, i, _ = _swapped(st)
    seat = st.turn.player
    f, e, s = other.potions[seat]
    other = replace(
        other, potions=other.potions[:seat] + ((f + 1, e - 1, s),) + other.potions[seat + 1 :]
    )
    every = frozenset(range(1, st.table.length + 1))
    moves = [
        a
        for _, a, *_ in transitions(other, (), False, every, None, TrackerOptions())
        if isinstance(a, MoveWizard) and a.wizard == st.table.wizard_ids[i]
    ]
    assert moves
    truth, _ = apply(other, moves[0])
    hyps = [Hypothesis(st, 0.0, (), (), False), Hypothesis(other, 1.0, (), (), False)]
    got = explain(SearchCache(), hyps, _target(truth), TrackerOptions(), False, 0)
    right = [h for h in got.hyps if board_key(h.state) == board_key(truth)]
    assert any(h.state.potions == other.potions for h in right)
    # and nothing claims the other story's potions on a board the frame does not show
    assert all(
        board_key(h.state) == board_key(truth)
        for h in got.hyps
        if h.state.potions == other.potions and h.cost < 2.0
    )


def _with_full(st: GameState, seat: int, full: int) -> GameState:
    f, e, s = st.potions[seat]
    pots = st.potions[:seat] + ((full, e + f - full, s),) + st.potions[seat + 1 :]
    return replace(st, potions=pots)


def test_a_story_whose_player_can_pay_a_spell_gets_its_own_search():
    """Two stories show the same table and differ in the potions: in the likelier one the
    player to move has no full potion, in the other he has two. The frame shows another
    player's wizard one space on, which only Advance a Wizard (R-SPELL-5, two potions) does.
    Replaying the likelier story's search on the other never tries a spell its lead cannot
    pay: the other story reached its spell only "repaired", ``cost_repair`` more, which in a
    6-player game put the true story out of the belief."""
    st = setup(Config(player_count=3), None)
    seat = st.turn.player
    poor, rich = _with_full(st, seat, 0), _with_full(st, seat, 2)
    other_seat = (seat + 2) % len(st.table.colours)  # not the next player: his own card
    lo, hi = st.table.wiz_range[other_seat]
    truth = None
    for i in range(lo, hi):
        try:
            truth, _ = apply(
                rich, Cast(st.table.colours[seat], "advance_wizard", wizard=st.table.wizard_ids[i])
            )
            break
        except IllegalAction:
            continue
    assert truth is not None
    hyps = [Hypothesis(poor, 0.0, (), (), False), Hypothesis(rich, 1.0, (), (), False)]
    opts = TrackerOptions()
    got = explain(SearchCache(), hyps, _target(truth), opts, False, 0)
    # the rich story's own spell, at its own cost: not the poor story "repaired" to pay it
    # (``cost_repair`` more, which put the true story out of the belief)
    costs = [h.cost for h in got.hyps if h.state == truth]
    assert costs and min(costs) <= 1.0 + opts.cost_spell + 0.01
