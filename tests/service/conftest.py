"""Fixtures: a companion on the simulated table, run flat out, without the camera picture."""

from __future__ import annotations

import io

import pytest

from companion.service.app import Companion
from companion.service.parts import Parts
from companion.sim.testing import sim_config


@pytest.fixture
def direct_companion(tmp_path):
    """A started companion whose simulated table feeds the tracker the ideal view (no renderer),
    web and QR codes off. Yields a factory taking config overrides."""
    made: list[Companion] = []

    def make(seed: int = 4, players: int = 3, disabled=("render",), web=False, **sections):
        cfg = sim_config(tmp_path / "data", seed=seed, players=players, **sections)
        c = Companion(
            cfg, Parts(disabled=frozenset(disabled)), web=web, print_qr=False, out=io.StringIO()
        )
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
    from companion.sim.testing import finish_game

    cfg = sim_config(tmp_path_factory.mktemp("finished") / "data", seed=4, players=3)
    c = Companion(
        cfg, Parts(disabled=frozenset({"render"})), web=False, print_qr=False, out=io.StringIO()
    )
    c.start()
    try:
        finish_game(c)
        yield c
    finally:
        c.stop()
