"""Random scenes for the renderer: the camera tilt, light colour and intensity buckets the
benchmarks and tests sample tables from, and legal game states reached by seeded bots.

Stands in for the world (a table in play); nothing here runs on the Pi.
"""

from __future__ import annotations

import random

from companion.rules import Config, setup
from companion.rules.model import GameState
from companion.sim.bots import play

TILT_BUCKETS = ((0.0, 10.0), (10.0, 20.0), (20.0, 35.0))
KELVIN_BUCKETS = ((2700.0, 4000.0), (4000.0, 5500.0), (5500.0, 6500.0))
INTENSITY_BUCKETS = ((0.3, 0.6), (0.6, 1.0), (1.0, 1.5))


def random_game_state(
    rng: random.Random,
    players: int,
    max_actions: int = 120,
    modules: frozenset[str] = frozenset(),
) -> GameState:
    """A legal game state reached by the rules engine's seeded bots (random or greedy players,
    ``companion.sim.bots.play``) after a random number of actions from the setup.

    :param rng: Python ``random.Random`` (seeded by the caller).
    :param modules: expansion modules in play (R-MOD-GEN-1); none = the base game.
    """
    config = Config(player_count=players, modules=modules)
    seed = rng.randrange(1 << 30)
    stop = rng.randint(0, max_actions)
    state = setup(config, seed)
    if stop == 0:
        return state
    for i, step in enumerate(play(config, seed, bots=rng.choice(["random", "greedy"]))):
        state = step.state
        if i + 1 >= stop:
            break
    return state
