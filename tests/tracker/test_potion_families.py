"""The belief holds each table's potion stories together (docs/architecture.md, "The
tracker"): every player's card-or-spell doubt is his own (a spell is paid by the caster alone,
R-SPELL-1), so the story in which several players cast spells at once is kept, and counted as
near, as long as each of those spells alone is; it must not fall out of ``keep`` behind other
tables, nor be committed away on the sum of its spells' prices."""

from __future__ import annotations

from dataclasses import replace
from itertools import product

import pytest

from companion.rules.engine import setup
from companion.rules.model import Config, GameState
from companion.tracking import TrackerOptions, board_key
from companion.tracking.belief import POTION_FLOOR, Hypothesis, Step, near_stories, prune
from companion.tracking.questions import pick_question

DEFER = TrackerOptions(defer=True)
SPELL = 1.5
"""What each player's spell costs above the card it looks like (nats), in these stories."""


def _spent(p: tuple[int, int, int]) -> tuple[int, int, int]:
    """One full potion spent (R-SPELL-1)."""
    return (p[0] - 1, p[1], p[2] + 1)


def _table(players: int = 3) -> tuple[GameState, list[GameState]]:
    """The setup, and every combination of the players' doubts: each player moved with a card
    or cast Advance a Tower (one potion), the same table either way."""
    st = setup(Config(player_count=players), None)
    st = replace(st, potions=tuple((2, p[1] - 2, 0) for p in st.potions))
    combos = []
    for spells in product((False, True), repeat=players):
        pots = tuple(_spent(p) if s else p for p, s in zip(st.potions, spells, strict=True))
        combos.append(replace(st, potions=pots))
    return st, combos


def _story(st: GameState, cost: float) -> Hypothesis:
    return Hypothesis(st, cost, (Step(st, (), (), ()),), (), False)


def _spells(st: GameState, root: GameState) -> int:
    return sum(a != b for a, b in zip(st.potions, root.potions, strict=True))


def _others(root: GameState, n: int, cost: float) -> list[Hypothesis]:
    """``n`` stories of other tables (the castle elsewhere, other turns under way), each about
    as likely as the spell-free story of the table (``cost`` on)."""
    out = []
    for i in range(n):
        st = replace(root, castle=(root.castle + i % 3) % root.table.length + 1)
        st = replace(st, turn=st.turn._replace(cards_used=1 + i))
        out.append(_story(st, cost + 0.01 * i))
    return out


@pytest.mark.parametrize("defer", [False, True])
@pytest.mark.parametrize("modules", [False, True])
def test_every_combination_of_three_players_doubts_is_kept_beside_other_tables(defer, modules):
    root, combos = _table(3)
    stories = [_story(st, SPELL * _spells(st, root)) for st in combos]
    # the costliest combination (all three cast: 4.5 nats) is beyond potion_margin (4) and
    # behind a dozen other stories, but each of its spells alone is not
    rivals = _others(root, 20, 0.5)
    kept = prune(stories + rivals, replace(DEFER, defer=defer), modules, ())
    held = {h.state.potions for h in kept if board_key(h.state) == board_key(root)}
    assert held >= {st.potions for st in combos}, "every combination of the doubts is held"


def test_six_players_doubts_leave_the_other_tables_their_slots():
    """Six players' 64 combinations are one table: they do not push the other tables out of
    ``keep`` (a frame that misreads a piece makes a wrong table cheapest for a moment), and
    the belief stays within ``potion_stories`` and the floor of each other table."""
    root, combos = _table(6)
    stories = [_story(st, SPELL * _spells(st, root)) for st in combos]
    rivals = _others(root, 5, 1.0)
    opts = TrackerOptions()
    kept = prune(stories + rivals, opts, False, ())
    assert {id(h.state) for h in kept} >= {id(h.state) for h in rivals}
    mine = [h for h in kept if board_key(h.state) == board_key(root)]
    assert len(mine) == opts.potion_stories
    assert len(kept) <= opts.potion_stories + POTION_FLOOR * len(rivals)
    # the cheapest combinations stay: no spell, and every single player's spell
    held = {h.state.potions for h in mine}
    assert {st.potions for st in combos if _spells(st, root) <= 1} <= held


def test_a_combination_is_as_near_as_its_least_likely_players_spell():
    root, combos = _table(3)
    stories = [_story(st, SPELL * _spells(st, root)) for st in combos]
    near = near_stories(stories, DEFER.commit_margin)
    assert len(near) == len(stories), "all three spells at once: as near as one"
    # a table whose own best is beyond the margin is not near, nor are its potion stories
    far = [replace(h, cost=h.cost + DEFER.commit_margin + 1) for h in _others(root, 1, 0.0)]
    assert not set(map(id, near_stories(stories + far, DEFER.commit_margin))) & set(map(id, far))


def test_the_other_players_doubts_are_not_asked_while_every_combination_is_held():
    """Every player a card-or-spell doubt: four players' 16 combinations are held, not asked;
    five players' 32 are more than half the belief's ``potion_stories`` and are asked about
    (one player's count, at most three options)."""
    for players, asked in ((4, False), (5, True)):
        root, combos = _table(players)
        stories = [_story(st, SPELL * _spells(st, root)) for st in combos]
        kept = prune(stories, DEFER, False, ())
        got = pick_question(kept, root, DEFER)
        assert (got is not None) == asked, f"{players} players"
        if got is not None:
            assert got[3] == "potions-many"
            assert len(got[1]) <= 3
