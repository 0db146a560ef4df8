"""A stop whose frames are each too noisy to explain (docs/architecture.md, "The tracker"):
two frames of one still board that misread different spaces still show the board on the
spaces they read alike, and the turn is followed there, not left to be crossed with the
next one."""

from __future__ import annotations

from dataclasses import replace

from test_ambiguity import T, play

from companion.rules.actions import EndTurn, MoveTower
from companion.rules.engine import setup
from companion.rules.model import Config, GameState
from companion.rules.observation import Observation
from companion.tracking import Tracker, board_key
from companion.tracking.noise import expected_observation
from companion.tracking.reconcile import agreed


def _misread(st: GameState, spaces: tuple[int, ...]) -> Observation:
    """The exact picture of ``st`` with two towers too many counted on each of ``spaces``."""
    exact = expected_observation(st)
    out = dict(exact.spaces)
    for s in spaces:
        out[s] = replace(out[s], towers=out[s].towers + 2)
    return Observation(spaces=out)


def _turn() -> tuple[GameState, GameState]:
    """Blue moves P4 from space 9 to 13 and R4 from space 8 on to space 10, and presses DONE."""
    start = setup(Config(player_count=2), None)
    moves = (MoveTower("blue", 9, 1, 4, T[4]), MoveTower("blue", 8, 1, 2, T[2]))
    return start, play(start, *moves, EndTurn())


def test_two_frames_each_with_three_misreads_show_the_turn() -> None:
    start, truth = _turn()
    # the stacks the turn did not touch, each frame misreading three of them
    towers = [2, 4, 6, 3, 5, 7]
    first, second = _misread(truth, tuple(towers[:3])), _misread(truth, tuple(towers[3:6]))
    tr = Tracker(start)
    tr.end_turn()
    assert not tr.observe(first).explained, "three misread stacks are too many for one frame"
    u = tr.observe(second)
    assert u.explained
    assert board_key(tr.state) == board_key(truth)
    assert tr.state.current_player == "yellow"


def test_frames_with_a_press_between_are_not_read_together() -> None:
    """A DONE press between two unexplained frames: the board may have changed in between,
    and what the two frames read alike is not one still board."""
    start, truth = _turn()
    towers = [2, 4, 6, 3, 5, 7]
    tr = Tracker(start)
    tr.end_turn()
    assert not tr.observe(_misread(truth, tuple(towers[:3]))).explained
    before = tr.to_json()
    tr.end_turn()
    assert not tr.observe(_misread(truth, tuple(towers[3:6]))).explained
    assert before["hypotheses"][0]["state"] == tr.to_json()["hypotheses"][0]["state"]


def test_the_spaces_two_frames_read_alike_are_kept_the_others_left_unknown() -> None:
    _, truth = _turn()
    exact = expected_observation(truth)
    towers = [s for s, v in exact.spaces.items() if v.towers]
    a = _misread(truth, (towers[0],))
    b = Observation(
        spaces={
            **_misread(truth, (towers[1],)).spaces,
            towers[2]: replace(exact.spaces[towers[2]], confidence=0.4),
        }
    )
    both = agreed(a, b)
    assert set(both.spaces) == set(exact.spaces) - {towers[0], towers[1]}
    assert both.spaces[towers[2]].confidence == 0.4
    assert all(both.spaces[s] == exact.spaces[s] for s in both.spaces if s != towers[2])
