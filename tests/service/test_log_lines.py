"""The game log is on every page: it names colours and counts, never an individual wizard, so it
cannot be used to follow a trapped wizard under its tower (memory aid "off" must mean off)."""

from __future__ import annotations

import re

from companion.rules import Config, dump_event
from companion.service.game import describe_events
from companion.sim import bots

WIZARD_ID = re.compile(r"\b(blue|yellow|red|green|orange|purple)-\d\b")


def _events_of_a_bot_game(seed: int) -> list[object]:
    events: list[object] = []
    for step in bots.play(Config(player_count=4), seed, "greedy", max_actions=400):
        events.extend(step.events)
    return events


def test_log_lines_never_name_a_wizard_but_do_tell_trappings():
    events = _events_of_a_bot_game(3)
    lines = describe_events(events, dump_event)
    assert lines, "a bot game produces log lines"
    assert not [line for line in lines if WIZARD_ID.search(line)]
    trapped = [line for line in lines if "trapped on space" in line]
    assert trapped, "the greedy bots trap wizards in 400 actions"
    assert all(re.match(r"\d+ wizards? trapped on space \d+$", line) for line in trapped)
    moved = [line for line in lines if " wizard moved " in line]
    assert moved and all(re.match(r"a (blue|yellow|red|green) wizard moved", m) for m in moved)
