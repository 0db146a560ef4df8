"""``commit_check``: how many committed states a game never went through, and after which true
action the first came (the end-to-end tests and ``companion bench e2e`` share it)."""

from __future__ import annotations

from dataclasses import replace

from companion.rules import Config
from companion.service.record import commit_check
from companion.sim.simtable import SimulatedGame
from companion.tracking import Committed, board_key


def _game(seed: int, actions: int) -> list:
    game = SimulatedGame(Config(player_count=3), seed)
    game.advance(actions)
    return list(game.record.states)


def _commits(states) -> list:
    return [Committed(None, (), s) for s in states]


def test_a_history_of_true_states_has_no_wrong_commit():
    truths = _game(5, 16)
    # every true state committed, or only some of them (moves committed together)
    assert commit_check(_commits(truths[1:]), truths) == (0, None)
    assert commit_check(_commits(truths[2::3]), truths) == (0, None)


def test_a_state_of_another_game_is_wrong_and_named_after_the_last_right_one():
    truths = _game(5, 16)
    other = next(s for s in _game(6, 16)[1:] if s not in truths)
    committed = _commits([*truths[1:6], other, *truths[6:10]])
    assert commit_check(committed, truths) == (1, 4)  # after the 5th true action (index 4)


def test_going_back_to_an_earlier_state_is_a_wrong_commit():
    truths = _game(5, 16)
    # the table of action 2 again after action 7: this game never went back there
    key = (board_key(truths[3]), truths[3].potions)
    assert all((board_key(t), t.potions) != key for t in truths[4:])
    committed = _commits([*truths[1:9], truths[3]])
    assert commit_check(committed, truths) == (1, 7)


def test_potions_shown_as_one_of_several_counts_are_wrong_only_when_none_is_true():
    truths = _game(5, 16)
    last = truths[-1]
    other = tuple((f + 1, e, sp) for f, e, sp in last.potions)
    state = replace(last, potions=other)
    assert commit_check([Committed(None, (), state, (other, last.potions))], truths) == (0, None)
    assert commit_check([Committed(None, (), state)], truths)[0] == 1
