"""Random scenes for the renderer: the camera tilt, light colour and intensity buckets the
benchmarks and tests sample tables from, and legal game states reached by seeded bots.

Stands in for the world (a table in play); nothing here runs on the Pi.
"""

from __future__ import annotations

import random
from dataclasses import replace

from companion.rules import Config, setup
from companion.rules.model import GameState, space_of, tier_of
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


def crowded(state: GameState, rng: random.Random, gathers: int = 2) -> GameState:
    """``state`` with up to ``gathers`` tops each given one or two more wizards of a colour
    that already stands there: two or three touching wizards of one colour on one top surface,
    what the wizard network reads worst (docs/vision.md, "Wizards") and what seeded play shows
    on about 2 % of the tops. A scene for the renderer, not a position of play (the wizards are
    taken from wherever they were, the raven castle included); never more than six wizards on
    a top (R-WIZ-4).

    :param rng: Python ``random.Random`` (seeded by the caller).
    """
    pos = list(state.wizards)
    colour = state.table.wizard_owner
    for _ in range(gathers):
        # a wizard on a top surface (not trapped, not in the castle)
        on_top = [
            i for i, p in enumerate(pos) if p and tier_of(p) == len(state.stacks[space_of(p) - 1])
        ]
        if not on_top:
            break
        i = rng.choice(on_top)
        there = sum(1 for p in pos if p == pos[i])
        others = [j for j, p in enumerate(pos) if colour[j] == colour[i] and p != pos[i]]
        for j in rng.sample(others, min(len(others), rng.randint(1, 2), 6 - there)):
            pos[j] = pos[i]
    return replace(state, wizards=tuple(pos))
