"""The bench's figure of deferred facts: a turn whose trapped wizards the page shows as
alternatives is counted as shown right only when the truth is one of them
(``companion bench tracking``, ``turns_shown_correct``)."""

from __future__ import annotations

from dataclasses import replace

from companion.rules.actions import MoveTower
from companion.rules.engine import apply, setup
from companion.rules.model import CARD_KINDS, Config
from companion.sim.answering import TruthWalk, shown_right
from companion.tracking.belief import trapped_places

T1 = next(c for c in CARD_KINDS if c.type == "tower" and c.tower == 1 and not c.dice)


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


def test_a_commit_is_right_when_each_players_true_count_is_one_of_his():
    """The pages list each player's possible counts (``potions_unsure``): a commit whose
    alternatives hold every player's true count is right, even when their true combination is
    not one of its alternatives (counted apart, ``wrong_commits_joint``); a count missing from
    a player's list is wrong."""
    st = setup(Config(player_count=2), None)
    truth = replace(st, potions=((1, 3, 1), (1, 3, 1)))
    alts = (((2, 3, 0), (1, 3, 1)), ((1, 3, 1), (2, 3, 0)))
    walk = TruthWalk([st, truth])
    assert walk.check(replace(truth, potions=alts[0]), alts)
    assert (walk.wrong, walk.wrong_joint) == (0, 1)
    assert not walk.check(replace(truth, potions=((2, 3, 0), (2, 3, 0))))
    assert (walk.wrong, walk.wrong_joint) == (1, 2)
