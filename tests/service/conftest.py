"""Fixtures: a companion on the simulated table, run flat out, without the camera picture."""

from __future__ import annotations

import io

import pytest

from companion.service.app import Companion
from companion.sim.testing import finish_game, sim_config, simulated_companion

NO_PICTURE = "renderer left out in these tests"
"""Why the simulated camera's picture is left out: the tracker gets the ideal view."""


@pytest.fixture
def direct_companion(tmp_path):
    """A started companion whose simulated table feeds the tracker the ideal view (no renderer),
    web and QR codes off. Yields a factory taking config overrides."""
    made: list[Companion] = []

    def make(seed: int = 4, players: int = 3, web=False, **sections):
        cfg = sim_config(tmp_path / "data", seed=seed, players=players, **sections)
        c = simulated_companion(cfg, without_picture=NO_PICTURE, web=web, out=io.StringIO())
        made.append(c)
        c.start()
        return c

    yield make
    for c in made:
        c.stop()


@pytest.fixture(scope="module")
def finished_game(tmp_path_factory):
    """One simulated 3-player game (seed 4) played to its end without the camera picture and
    tracked; shared by the tests of a module that only read it."""
    cfg = sim_config(tmp_path_factory.mktemp("finished") / "data", seed=4, players=3)
    c = simulated_companion(cfg, without_picture=NO_PICTURE, web=False, out=io.StringIO())
    c.start()
    try:
        finish_game(c)
        yield c
    finally:
        c.stop()
