"""Turns from the board, not from the button (docs/architecture.md, "The tracker"): a DONE
press that players forget, or that reaches the tracker after the frame showing the next
player's first move, never turns a right board into a wrong one."""

from __future__ import annotations

import pytest

from companion.rules.actions import EndTurn
from companion.rules.model import Config
from companion.sim.answering import TruthWalk, answer_as_players
from companion.sim.simulate import CameraNoise, SimInput, simulate
from companion.tracking import Tracker, TrackerOptions, board_key


def _play(start, truths, inputs: list[SimInput]) -> tuple[Tracker, TruthWalk, list[int]]:
    """Feed ``inputs``, answering questions with the truth; the stops (last frame of each
    still board) whose shown board or turn was not the truth's."""
    tracker = Tracker(start, TrackerOptions(board_turns=True))
    walk = TruthWalk(truths)
    wrong_stops: list[int] = []
    for i, inp in enumerate(inputs):
        update = answer_as_players(tracker, inp.give(tracker), inp.truth)
        for c in update.committed:
            walk.check(c.state, c.potions)
        last = inp.kind == "observation" and (
            i + 1 == len(inputs) or inputs[i + 1].kind != "observation"
        )
        if last:
            st = tracker.state
            if board_key(st) != board_key(inp.truth) or st.turn.player != inp.truth.turn.player:
                wrong_stops.append(i)
    return tracker, walk, wrong_stops


@pytest.mark.long
def test_a_forgotten_done_still_shows_every_board_and_whose_turn():
    # whole-turn frames, DONE pressed after about half the turns
    sim = simulate(
        Config(player_count=2),
        5,
        CameraNoise(rate=0.0, gap="turn", done_rate=0.5),
        max_actions=16,
    )
    ends = sum(1 for a in sim.actions if isinstance(a, EndTurn))
    presses = sum(1 for i in sim.inputs if i.kind == "end_turn")
    assert presses < ends, "some DONE presses are forgotten"
    inputs = list(sim.inputs)
    tracker, walk, wrong_stops = _play(sim.start, sim.truths, inputs)
    assert wrong_stops == [], "the board tells the turn is over: the next player's turn shows"
    assert walk.wrong_board == 0
    final = sim.inputs[-1].truth
    assert board_key(tracker.state) == board_key(final)
    assert tracker.state.turn.player == final.turn.player


def test_a_late_done_is_placed_before_the_next_players_first_move():
    # a frame after every move; the first two DONE presses reach the tracker only after the
    # frame that shows the next player's first move
    sim = simulate(
        Config(player_count=2),
        5,
        CameraNoise(rate=0.0, gap="action", done_rate=1.0, frames_per_stop=1),
        max_actions=16,
    )
    inputs = list(sim.inputs)
    late = 0
    i = 0
    while i + 1 < len(inputs) and late < 2:
        if inputs[i].kind == "end_turn" and inputs[i + 1].kind == "observation":
            inputs[i], inputs[i + 1] = inputs[i + 1], inputs[i]
            late += 1
            i += 2
            continue
        i += 1
    assert late == 2
    tracker, walk, _ = _play(sim.start, sim.truths, inputs)
    assert walk.wrong_board == 0
    final = inputs[-1].truth
    st = tracker.state
    assert board_key(st) == board_key(final)
    assert st.turn.player == final.turn.player
    # the moves are given to the players who made them: the potions they filled are theirs
    assert st.potions == final.potions


@pytest.mark.long
def test_a_turn_end_nobody_pressed_is_shown_but_committed_only_after_the_next_move():
    # three players who never press DONE, whole-turn frames: the table shows the next
    # player's turn after every complete turn, and a turn end is committed only once the
    # next player's move showed it (every committed state happened, in order)
    sim = simulate(
        Config(player_count=3),
        11,
        CameraNoise(rate=0.0, gap="turn", done_rate=0.0),
        max_actions=24,
    )
    assert not any(i.kind == "end_turn" for i in sim.inputs)
    tracker, walk, wrong_stops = _play(sim.start, sim.truths, list(sim.inputs))
    assert wrong_stops == []
    assert walk.wrong == 0
    ends = [c for c in tracker.history if isinstance(c.action, EndTurn)]
    assert ends, "the turn ends the next players' moves showed are committed"
