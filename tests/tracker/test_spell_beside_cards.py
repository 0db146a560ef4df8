"""A spell and the cards beside it that add up to what fewer cards do (docs/architecture.md,
"The tracker"): the table is the same, the potions are not, and the tracker must hold both
stories, so that what it commits shows the caster's potions as "one of these", never the
cheaper story's count as certain (R-SPELL-1, R-SPELL-6)."""

from __future__ import annotations

from companion.rules.actions import Cast, EndTurn, MoveTower
from companion.rules.model import Config
from companion.sim.simulate import CameraNoise, simulate, truth_key
from companion.tracking import Tracker


def test_advance_a_tower_then_two_dice_moves_keeps_the_true_potions() -> None:
    """Three players (greedy bots, 1 % misreads, two frames a stop; seed 10931000). Blue casts
    Advance a Tower on the top of the stack on space 7 (to 9), carries it on to 11 with one
    die and the rest of stack 7 to 9 with the other. Two dice moves alone (all of stack 7 to
    9, then its top on to 11) show the same table without the spell; that cheaper story was
    the only one held, and every later commit showed blue with the potion he had spent."""
    sim = simulate(
        Config(player_count=3), 10931000, CameraNoise(rate=0.01, gap="turn", frames_per_stop=2)
    )
    turn = sim.actions[12:16]
    assert isinstance(turn[0], Cast) and turn[0].spell == "advance_tower"
    assert all(isinstance(a, MoveTower) for a in turn[1:3]) and isinstance(turn[3], EndTurn)
    kinds = [inp.kind for inp in sim.inputs[12:16]]
    assert kinds == ["dice", "dice", "end_turn", "observation"]
    truth = sim.truths[16]
    assert sim.inputs[15].truth == truth

    tracker = Tracker(sim.truths[12])
    for inp in sim.inputs[12:16]:
        update = inp.give(tracker)
    assert update.explained
    held = {truth_key(st) for st, _cost in tracker.hypotheses}
    assert truth_key(truth) in held, "the spell's story is held beside the cheaper cards'"
    cheaper = [st for st, _cost in tracker.hypotheses if st.potions != truth.potions]
    assert cheaper, "the two dice moves without the spell are held too"
