"""A tower carried by two cards may stop on wizards between them: it traps them, its mover fills
a potion (R-TOWER-9), and the second card carries it on and shows them again. The frame after
the turn looks exactly like one card carrying the tower the whole way, which fills nothing. The
tracker cannot tell the two apart, so it must not show either potion count as certain."""

from __future__ import annotations

from test_ambiguity import T, done, feed, play

from companion.rules.actions import MoveTower
from companion.rules.engine import apply, setup
from companion.rules.model import Config
from companion.tracking import Tracker, board_key


def test_a_trap_between_two_moves_of_one_tower_keeps_the_movers_potions_open():
    """Two players. Blue carries P1 (with three wizards on it) from space 3 two spaces onto
    P2 on space 5, trapping yellow's wizard there (one potion filled), then three spaces on to
    space 8, which shows that wizard again. Blue's phone must show "0 or 1 full", and the
    table must be the true one."""
    start = setup(Config(player_count=2), None)
    assert start.stack(3) == ("P1",) and start.stack(5) == ("P2",)
    mid, events = apply(start, MoveTower("blue", 3, 1, 2, T[2]))
    assert any(e.kind == "potion_filled" for e in events)
    truth = done(play(mid, MoveTower("blue", 5, 2, 3, T[3])))
    assert truth.stack(5) == ("P2",) and truth.stack(8) == ("R4", "P1")
    assert truth.potions[0] == (1, 5, 0)
    tr = Tracker(start)
    tr.end_turn()
    feed(tr, truth)
    assert board_key(tr.state) == board_key(truth)
    shown = tr.potions_unsure.get("blue", ())
    assert (0, 6, 0) in shown and (1, 5, 0) in shown, shown
    assert "yellow" not in tr.potions_unsure
