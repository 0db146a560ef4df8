"""A simulated game cut short stops where real players pause: at the end of a turn."""

from __future__ import annotations

import pytest

from companion.rules import Config
from companion.sim.simtable import SimTiming, SimulatedGame


@pytest.mark.parametrize("cut", [5, 12, 20])
def test_a_game_cut_short_ends_its_turn_and_the_board_stays_still(cut):
    game = SimulatedGame(Config(player_count=3), 2, "greedy", SimTiming(), max_actions=cut)
    scenes = list(game.scenes())
    actions = game.record.actions
    assert len(actions) >= cut
    assert type(actions[-1]).__name__ == "EndTurn"
    ended = [i for i, a in enumerate(actions) if type(a).__name__ == "EndTurn"]
    assert [i for i in ended if i >= cut - 1] == [len(actions) - 1]  # the turn in play, no more
    done = [i for i, s in enumerate(scenes) if {"type": "done"} in s.events]
    last = scenes[-1]
    assert done and done[-1] == len(scenes) - 2  # the DONE press, then the still board
    assert last.hand is None and last.frames == SimTiming().still_frames
    assert last.state is game.state
