"""The tracker's bounds (docs/architecture.md, "The tracker"): a frame's search tries at most
its budget of transitions (``TrackerOptions.frame_budget``), the search's caches stay within
``cache_entries`` plus one frame's search, and a narrowed search still follows the game without
showing a wrong board as certain. 3-player bot games (seed 2000, a frame pair after each turn,
1 % misreads), followed from the true table at the start of a turn."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from companion.rules.model import Config
from companion.sim.answering import TruthWalk, answer_as_players
from companion.sim.simulate import CameraNoise, SimGame, SimInput, simulate
from companion.tracking import Tracker, TrackerOptions, board_key
from companion.tracking.belief import Hypothesis, Step, belief_steps, capped
from companion.tracking.noise import Target
from companion.tracking.reconcile import explain
from companion.tracking.search import SearchCache

ALL_MODULES = frozenset({"fountain", "web", "witch", "raven", "magic_tower"})
BUDGET = 1500


@pytest.fixture(scope="module")
def game() -> SimGame:
    return simulate(
        Config(player_count=3, modules=ALL_MODULES),
        2000,
        CameraNoise(rate=0.01, gap="turn"),
        "greedy",
    )


def _first_frame_after(sim: SimGame, action: int) -> int:
    """The index of the first observation input showing the table after ``action``."""
    after = sim.truths[action + 1]
    return next(
        i for i, inp in enumerate(sim.inputs) if inp.truth is after and inp.kind == "observation"
    )


def test_a_frame_tries_at_most_its_budget(game: SimGame) -> None:
    """Turn 11 (a tower, a spell and a wizard: a frame whose whole search tries several times
    the budget): the narrowed search stays within the budget (each level may finish the node it
    started: a node's candidates at most) and still finds the true board."""
    truth = game.truths[39]
    idx = _first_frame_after(game, 38)
    root = replace(game.truths[35], cards=None)
    opts = TrackerOptions()
    obs = game.inputs[idx].observation
    assert obs is not None
    target = Target(obs, root.table.length, opts.noise)
    hyp = Hypothesis(root, 0.0, (), (("done",),), False)

    whole = SearchCache()
    explain(whole, (hyp,), target, opts, True, 0)
    assert whole.tried > 3 * BUDGET, "the frame needs a wider search than the budget"
    assert not whole.cut

    srch = SearchCache()
    got = explain(srch, (hyp,), target, opts, True, 0, budget=BUDGET)
    assert srch.cut
    # a level overshoots by at most the candidates of the node it was expanding
    assert srch.tried <= BUDGET + 600
    assert any(board_key(h.state) == board_key(truth) for h in got.hyps)


def test_bounded_caches_and_a_narrowed_search_commit_no_wrong_board() -> None:
    """Five turns of a 3-player base game (seed 2000, from the true table after action 20)
    with a frame budget that narrows the largest frames and small caches: the caches never
    hold more than their bound plus one frame's search (a frame and its recheck), no committed
    board is wrong and the table shown at the end is the true one."""
    sim, start, inputs = _base_segment()
    budget, entries = 8000, 2000
    tr = Tracker(
        replace(sim.truths[start], cards=None),
        TrackerOptions(frame_budget=budget, cache_entries=entries),
    )
    walk = TruthWalk(sim.truths[start:])
    for _ in _replay(tr, inputs, walk):
        srch = tr._srch
        assert srch.tried <= 2 * (budget + 600)
        assert len(srch.applied) <= entries + 2 * (budget + 600)
        assert len(srch.views) <= entries + 2 * (budget + 600)
    assert tr.cut_frames > 0, "the budget was reached (else this tests nothing)"
    assert walk.wrong_board == 0
    assert board_key(tr.state) == board_key(inputs[-1].truth)


def _base_segment() -> tuple[SimGame, int, list[SimInput]]:
    sim = simulate(Config(player_count=3), 2000, CameraNoise(rate=0.01, gap="turn"), "greedy")
    start = 20
    at = {id(t): i for i, t in enumerate(sim.truths)}
    inputs = [inp for inp in sim.inputs if start < at[id(inp.truth)] <= start + 20]
    assert inputs[0].kind == "end_turn" and inputs[-1].kind == "observation"
    return sim, start, inputs


def _replay(tr: Tracker, inputs: list[SimInput], walk: TruthWalk) -> Iterator[SimInput]:
    """Give ``tr`` each input (the players answer its questions truly), check every commit
    against the true game, and yield after each input."""
    for inp in inputs:
        update = answer_as_players(tr, inp.give(tr), inp.truth, [])
        for c in update.committed:
            walk.check(c.state, c.potions)
        yield inp


@pytest.mark.long
def test_a_capped_belief_keeps_the_best_stories_and_the_right_board() -> None:
    """Five turns of a 3-player base game with a belief limit well under what the stories
    hold (about 90 held steps after a turn with a hidden difference): after every input the
    belief holds at most its limit, or only stories a commit must agree with (those are never
    dropped: the players' question decides them); no committed board is wrong and the table
    shown at the end is the true one."""
    sim, start, inputs = _base_segment()
    opts = TrackerOptions(max_belief=30)
    tr = Tracker(replace(sim.truths[start], cards=None), opts)
    walk = TruthWalk(sim.truths[start:])
    for _ in _replay(tr, inputs, walk):
        hyps = tr._hyps
        if belief_steps(hyps) > opts.max_belief:
            assert all(h.cost - hyps[0].cost <= opts.commit_margin for h in hyps)
    assert walk.wrong_board == 0
    assert board_key(tr.state) == board_key(inputs[-1].truth)


def test_the_cap_drops_the_costliest_stories_beyond_the_commit_margin() -> None:
    """:func:`capped`: stories beyond ``commit_margin`` go costliest first until the belief
    fits; the ones within it stay even past the limit."""
    st = simulate(Config(player_count=2), 1, CameraNoise(rate=0.0, gap="turn"), "greedy").start
    step = Step(st, (), (), ())

    def hyp(cost: float, steps: int) -> Hypothesis:
        return Hypothesis(st, cost, (step,) * steps, (), False)

    opts = TrackerOptions(max_belief=10, commit_margin=4.0)
    hyps = (hyp(0.0, 4), hyp(1.0, 4), hyp(6.0, 4), hyp(9.0, 4))
    assert [h.cost for h in capped(hyps, opts)] == [0.0, 1.0]
    near = (hyp(0.0, 6), hyp(3.0, 6), hyp(8.0, 1))
    assert [h.cost for h in capped(near, opts)] == [0.0, 3.0]
    assert capped(hyps, replace(opts, max_belief=0)) == hyps
    assert capped(hyps[:2], opts) == hyps[:2]
