"""A refused action leaves nothing for the garbage collector.

The tracker's search tries hundreds of thousands of actions a game that the rules refuse
(``IllegalAction``). An exception that ends up referring to a frame that refers back to it (raised
from a local variable, or re-raised by a helper that received it) forms a reference cycle: the
frame, its states and events then stay in memory until a full garbage collection, which stops
every thread of the service — the camera's board reached the phones up to 0.9 s late while one
ran (docs/architecture.md, "Threads"). Without cycles, reference counting frees them at once.
"""

from __future__ import annotations

import gc
from collections import Counter

import pytest

from companion.rules import MODULES, Config, IllegalAction, apply, legal_actions
from companion.sim.simulate import CameraNoise, simulate


@pytest.mark.parametrize(
    "config",
    [
        Config(player_count=3),
        Config(player_count=4, variant="master"),
        Config(player_count=4, modules=frozenset(MODULES)),
    ],
    ids=["base", "master", "all-modules"],
)
def test_refused_actions_leave_no_reference_cycles(config: Config) -> None:
    sim = simulate(config, 4242, CameraNoise(rate=0.0), "greedy", max_actions=80)
    states = sim.truths[:50]
    refused: Counter[str] = Counter()
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        # the actions legal one step earlier, tried on the state after: many are refused now
        for before, after in zip(states, states[1:], strict=False):
            for action in legal_actions(before):
                try:
                    apply(after, action)
                except IllegalAction as exc:
                    refused[exc.rule] += 1
        unreachable = gc.collect()
    finally:
        if enabled:
            gc.enable()
    assert sum(refused.values()) >= 100, refused
    assert unreachable == 0, f"{unreachable} objects in reference cycles; refused: {refused}"
