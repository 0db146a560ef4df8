"""The committed history never claims a state the tracker does not know.

With a still frame after every move (the companion's simulated table, a slow real table) the
DONE press comes after a frame that showed the turn's last move, and the next frame often shows
the next player's first move already: a story that shifts every turn end by one move must not
become cheaper than the truth. Stories that reach the same table by another order of moves (or
a card and a spell swapped) are committed as one entry telling all of them.
"""

from __future__ import annotations

import pytest

from companion.rules.model import Config
from companion.sim.answering import run_game
from companion.sim.simulate import CameraNoise, simulate
from companion.tracking import Tracker


def _action_frames(seed: int):
    return simulate(
        Config(player_count=3), seed, CameraNoise(rate=0.0, gap="action"), "greedy", max_actions=60
    )


@pytest.mark.parametrize("seed", [1, 3])
def test_frames_after_every_move_commit_only_what_happened(seed):
    """Seeds 1 and 3 committed 20 and 35 states that never happened when every move seen after
    a DONE press cost 2 nats per turn (``TrackerOptions.action_pace``)."""
    got = run_game(_action_frames(seed), [])
    assert got["wrong_commits"] == 0
    assert got["turns_correct"] == got["turns"]
    assert got["exact_hidden"]


def test_a_restored_tracker_keeps_the_stories_it_holds():
    """The journal's snapshot (to_json/from_json) keeps the alternative stories: the restored
    tracker commits exactly what the running one commits."""
    sim = _action_frames(3)
    live = Tracker(sim.start)
    restored: Tracker | None = None
    told = 0
    for inp in sim.inputs:
        ups = []
        for tr in (live, restored):
            if tr is None:
                continue
            if inp.kind == "observation":
                assert inp.observation is not None
                ups.append(tr.observe(inp.observation))
            elif inp.kind == "dice":
                ups.append(tr.dice(inp.rolls, inp.dice_allowed))
            else:
                ups.append(tr.end_turn())
        if restored is not None:
            assert ups[0].committed_json() == ups[1].committed_json()
            told += sum(1 for c in ups[0].committed if c.action is None)
        if ups[0].question is not None:
            break
        if restored is None and any(h.alts or any(s.alts for s in h.trail) for h in live._hyps):
            restored = Tracker.from_json(live.to_json())
    assert restored is not None, "the game never held two stories of one table"
    assert told, "the stories were committed as one entry"
