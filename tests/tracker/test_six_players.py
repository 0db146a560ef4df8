"""Six players: a turn with a spell takes four steps (a spell, two moves, the turn's end). When
the camera's frames after one turn are all too blurred to explain, the next frame shows two such
turns at once and the DONE button was pressed twice: the tracker must find both turns, not lose
the table for the rest of the game."""

from __future__ import annotations

from dataclasses import replace

import pytest

from companion.rules.actions import Cast, EndTurn
from companion.rules.model import Config
from companion.rules.observation import Observation
from companion.sim.simulate import CameraNoise, simulate
from companion.tracking import Tracker, board_key
from companion.tracking.noise import expected_observation


def _blurred(obs: Observation) -> Observation:
    """Every stack read one tower too high: far more misread fields than an honest frame holds
    (a hand over the table, a glare)."""
    sp = dict(obs.spaces)
    for s in [s for s in sp if sp[s].towers]:
        sp[s] = replace(sp[s], towers=sp[s].towers + 1)
    return Observation(sp)


@pytest.mark.long
def test_two_turns_with_spells_after_a_blurred_stop_are_followed():
    """Seed 1: the fifth and sixth turns each move twice and cast a spell. The two frames after
    the fifth turn are blurred; the frames after the sixth turn must show its board, with the
    hidden pieces, and the first player to move again on the phones, and so must the next
    turn's."""
    sim = simulate(Config(player_count=6), 1, CameraNoise(rate=0.0, gap="turn"), "greedy", 40)
    turns: list[list[type]] = [[]]
    for a in sim.actions:
        turns[-1].append(type(a))
        if isinstance(a, EndTurn):
            turns.append([])
    assert all(len(t) == 4 and Cast in t for t in turns[4:6])
    tr = Tracker(sim.start)
    seen: list[int] = []
    for inp in sim.inputs:
        if inp.turns == 8:
            break
        if inp.kind == "observation" and inp.turns == 5:
            assert inp.observation is not None
            u = tr.observe(_blurred(inp.observation))
            assert not u.explained
            continue
        u = inp.give(tr)
        if inp.kind == "observation" and inp.turns >= 6:
            assert u.explained and u.health == "ok"
            assert expected_observation(tr.state) == expected_observation(inp.truth)
            assert board_key(tr.state) == board_key(inp.truth)
            assert tr.state.turn.player == inp.truth.turn.player == inp.turns % 6
            seen.append(inp.turns)
    assert seen == [6, 6, 7, 7]
