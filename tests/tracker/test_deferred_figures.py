"""The bench's figures of deferred facts: questions counted by kind, and a turn whose trapped
wizards the page shows as alternatives counted as shown right only when the truth is one of
them (``companion bench tracking``)."""

from __future__ import annotations

from dataclasses import replace

from companion.bench.tracking import _deferred
from companion.rules.actions import MoveTower
from companion.rules.engine import apply, setup
from companion.rules.model import CARD_KINDS, Config
from companion.sim.answering import GameFigures, shown_right
from companion.tracking.belief import trapped_places
from companion.tracking.questions import QUESTION_KINDS

T1 = next(c for c in CARD_KINDS if c.type == "tower" and c.tower == 1 and not c.dice)


def _game(turns: int, shown: int, kinds: dict[str, int]) -> GameFigures:
    return {
        "turns": turns,
        "turns_correct": 0,
        "turns_shown_correct": shown,
        "turns_potions_correct": 0,
        "exact_hidden": True,
        "potions_exact": True,
        "wrong_commits": 0,
        "wrong_board_commits": 0,
        "questions": sum(kinds.values()),
        "questions_by_kind": kinds,
    }


def test_questions_are_counted_by_kind_over_the_games():
    got = _deferred([_game(10, 9, {"potions-end": 1}), _game(10, 10, {"potions-end": 1})])
    assert set(got["questions_by_kind"]) == set(QUESTION_KINDS)
    assert got["questions_by_kind"]["potions-end"] == 2
    assert got["questions_by_kind"]["held-board"] == 0
    assert got["turns_shown_correct_pct"] == 95.0


def test_a_wrong_trapped_wizard_is_shown_right_only_among_its_alternatives():
    # blue stacks space 2 onto space 3: the wizards of space 3 are trapped under it
    st = setup(Config(player_count=2), None)
    truth, _ = apply(st, MoveTower("blue", 2, 1, 1, T1))
    seat = truth.table.colours.index("blue")
    placed = trapped_places(truth, seat)
    assert placed, "a blue wizard is trapped"
    lo, hi = truth.table.wiz_range[seat]
    i = next(lo + k for k, p in enumerate(truth.wizards[lo:hi]) if (p >> 4, p & 15) in placed)
    # the best story has that wizard under the tower of another space at tier 0
    other_space = next(
        s
        for s in range(1, truth.table.length + 1)
        if truth.height(s) and s != placed[0][0] and s != truth.castle
    )
    wizards = list(truth.wizards)
    wizards[i] = other_space << 4
    best = replace(truth, wizards=tuple(wizards))
    alts = (trapped_places(best, seat), trapped_places(truth, seat))
    assert shown_right(best, truth, {"blue": alts})
    assert not shown_right(best, truth, {"blue": alts[:1]}), "the truth is not listed"
    assert not shown_right(best, truth, {}), "shown as certain and wrong"
    assert shown_right(truth, truth, {})
