"""A release guess over a sealed witch that names the wrong tower (R-MOD-WITCH-9): the player
lifts a tower, she is not under it, the tower goes back, nothing moves and the turn ends. The
camera sees only the turn's end, exactly as after a turn without a move, so the tables of the
two stories are the same: the tracker asks nothing (no answer could change the table), follows
the true table, and its history tells both stories instead of claiming one.

Scripted like ``test_modules_tracking``: a seeded setup, the first candidate move with the
wanted effect, the DONE button, two noiseless frames.
"""

from __future__ import annotations

from dataclasses import replace

from test_modules_tracking import assert_tracked, card_moves, first, kinds, play_turn, start

from companion.rules.actions import MoveTower, MoveWizard
from companion.rules.engine import apply
from companion.rules.model import GameState, space_of, tier_of
from companion.tracking import Tracker


def _sealed_witch() -> tuple[Tracker, GameState]:
    """A tracker that followed the first player sealing the witch (R-MOD-WITCH-7)."""
    st0 = start({"witch"}, 3)
    seal, _ = first(st0, card_moves(st0), lambda nxt, ev: "witch_sealed" in kinds(ev))
    tr = Tracker(st0)
    truth = play_turn(tr, st0, [seal])
    assert_tracked(tr, truth)
    return tr, truth


def _guess(st: GameState, right: bool) -> MoveTower | MoveWizard:
    """The current player's first card move played as a page card naming the tower over the
    witch (``right``) or another tower: of her stack, else the top of another stack."""
    m = st.modules
    assert m is not None and m.witch is not None
    ws, wt = space_of(m.witch), tier_of(m.witch)
    assert wt < st.height(ws), "the witch is sealed"
    if right:
        towers = [(ws, wt + 1)]
    else:
        towers = [(ws, k) for k in range(1, st.height(ws) + 1) if k != wt + 1]
        towers += [(s, st.height(s)) for s in range(1, st.table.length + 1) if s != ws]
    wanted = "witch_released" if right else "witch_guess_wrong"
    moves = (
        replace(mv, page=True, witch_guess=t) for mv in card_moves(st) for t in towers if t[1] >= 1
    )
    move, _ = first(st, moves, lambda nxt, ev: wanted in kinds(ev))
    assert isinstance(move, MoveTower | MoveWizard)
    return move


def test_a_wrong_release_guess_is_followed_and_told_not_claimed():
    tr, truth = _sealed_witch()
    before = len(tr.history)
    wrong = _guess(truth, right=False)
    after, events = apply(truth, wrong)
    assert "witch_guess_wrong" in kinds(events) and after.turn.ended
    truth = play_turn(tr, truth, [wrong])
    assert_tracked(tr, truth)
    assert tr.state.modules is not None and tr.state.modules.witch == truth.modules.witch  # type: ignore[union-attr]
    # nothing a player could answer changes the table: no question
    assert tr.question is None
    # the next player's first frame commits the turn: the history names the wrong guess as
    # one of the stories the camera cannot tell apart, and claims none of them
    nxt = _guess(truth, right=True)
    truth = play_turn(tr, truth, [nxt])
    assert_tracked(tr, truth)
    told = [c for c in tr.history[before:] if c.action is None]
    assert told, "the guessed turn is committed as stories, not as one claimed path"
    options = told[0].events[0]["options"]
    assert any("to release the witch, but she was not under it" in o for o in options)
    assert len(options) >= 2


def test_a_right_guess_after_a_wrong_one_releases_the_witch():
    tr, truth = _sealed_witch()
    truth = play_turn(tr, truth, [_guess(truth, right=False)])
    released = _guess(truth, right=True)
    _, events = apply(truth, released)
    assert "witch_released" in kinds(events)
    truth = play_turn(tr, truth, [released])
    assert_tracked(tr, truth)
    assert tr.state.modules is not None and truth.modules is not None
    assert tr.state.modules.witch == truth.modules.witch
