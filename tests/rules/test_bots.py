"""Seeded bots play whole legal games, reproducibly."""

from __future__ import annotations

import random

import pytest

from companion.rules import Config, check_invariants
from companion.rules.bots import GreedyBot, RandomBot, play


@pytest.mark.parametrize("bot", ["random", "greedy"])
@pytest.mark.parametrize(
    "config",
    [
        Config(player_count=2),
        Config(player_count=5, variant="master"),
        Config(player_count=6, teams=True),
        Config(player_count=1),
    ],
    ids=["2p", "5p-master", "6p-teams", "solo"],
)
def test_bots_play_a_complete_game(bot, config):
    steps = list(play(config, seed=3, bots=bot))
    last = steps[-1].state
    assert last.over and last.game.result is not None
    assert not check_invariants(last)


def test_a_seeded_game_is_reproducible_move_for_move():
    first = [s.action for s in play(Config(player_count=4), seed=8, bots="greedy")]
    again = [s.action for s in play(Config(player_count=4), seed=8, bots="greedy")]
    other = [s.action for s in play(Config(player_count=4), seed=9, bots="greedy")]
    assert first == again and first != other


def test_bots_never_touch_the_global_random():
    random.seed(1)
    before = random.random()
    random.seed(1)
    list(play(Config(player_count=3), seed=2, bots=[RandomBot(1), GreedyBot(2), RandomBot(3)]))
    assert random.random() == before


def test_greedy_beats_random_more_often_than_not():
    wins = 0
    for seed in range(6):
        bots = [GreedyBot(seed), RandomBot(seed + 100)]
        last = list(play(Config(player_count=2), seed=seed, bots=bots))[-1].state
        wins += 0 in last.game.result.winners
    assert wins >= 4
