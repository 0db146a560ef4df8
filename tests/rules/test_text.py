"""Readable sentences for actions and events (pages, logs)."""

from __future__ import annotations

from companion.rules import Config, MoveTower, apply
from companion.rules.text import describe_action, describe_event
from companion.sim.bots import play

from .conftest import T, position


def test_a_trapping_tower_move_reads_like_the_rulebook():
    state = position(2)
    action = MoveTower("blue", 3, 1, 1, T[1])
    assert describe_action(action) == (
        "blue moves the tower on space 3 (tier 1 and up) 1 space clockwise (card T1)"
    )
    _, events = apply(state, action)
    lines = [describe_event(e) for e in events]
    assert lines == [
        "tower P1 moves from space 3 to space 4, carrying blue-3, yellow-2 and yellow-3",
        "blue-4, blue-5 and yellow-4 trapped on space 4",
        "blue fills a potion",
    ]


def test_every_action_and_event_of_whole_games_has_a_sentence():
    for config in (Config(player_count=4, variant="master", teams=True), Config(player_count=1)):
        for step in play(config, seed=2, bots="greedy"):
            assert describe_action(step.action)
            for e in step.events:
                text = describe_event(e)
                assert text and not text.startswith(e.kind + ":"), text
