"""``kill -9`` the running companion mid-game, start it again: same state, same hidden wizards.

The companion runs as a real process (``companion demo``) on the simulated table with the ideal
camera view (``simulation.picture = false``: this test is about the journal and the restart, not
about vision). The table page's JSON is read over HTTP; with memory aid ``all`` it shows every
trapped wizard.

The simulated players pause at the end of a turn (``simulation.max_actions``) and the power goes
once the page shows that board as the tracker worked it out, so the board the page showed last
is the table's, and the game the restart continues is the one the players play on. (At 40 times
the human pace the tracker can be many inputs behind the table; a power cut then is
``tests/service/test_restart_backlog.py``.)
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from companion.journal import INPUT_KINDS, Journal, apply_input, restore
from companion.rules import Config, dump_state
from companion.service.record import hidden_positions, same_table
from companion.service.webclient import PhoneClient
from companion.sim.simtable import SimTiming, SimulatedGame
from companion.tracking import Tracker, board_key

from .conftest import start_demo, write_config

pytestmark = pytest.mark.e2e

SEED = 6
PAUSE = 70  # the players stop at the end of the turn in play after so many actions


def progress(data: Path) -> int:
    try:
        return int(json.loads((data / "simulation.json").read_text())["actions"])
    except (OSError, ValueError, KeyError):
        return 0


def published_states(journal: Journal) -> list:
    """The tracker's best state after every journaled input (what the page could have shown)."""
    start = journal.last("start")
    tracker = Tracker.from_json(start.payload)
    out = [tracker.state]
    for rec in journal.records(after=start.seq):
        if rec.kind in INPUT_KINDS:
            apply_input(tracker, rec)
            out.append(tracker.state)
    return out


def shown(snapshot: dict) -> tuple[dict, list]:
    """Stacks and trapped wizards (colour, space, tier) as the table page shows them."""
    st = snapshot["state"]
    hidden = []
    for wid, pos in st["wizards"].items():
        if pos != "castle" and pos["tier"] < len(st["stacks"].get(str(pos["space"]), [])):
            hidden.append([wid.rsplit("-", 1)[0], pos["space"], pos["tier"]])
    return st["stacks"], sorted(hidden)


def caught_up(snapshot: dict, stacks: dict) -> bool:
    """The page shows ``stacks`` as the tracker has them (not the camera's reading, "checking…")."""
    return snapshot["seen"] is None and snapshot["state"]["stacks"] == stacks


def test_kill_9_mid_game_then_restart_keeps_state_and_hidden_wizards(tmp_path):
    sim = {"seed": SEED, "speed": 40.0, "games": 1, "picture": False}
    cfg = write_config(
        tmp_path,
        {"game": {"players": 3, "memory_aid": "all"}, "simulation": {**sim, "max_actions": PAUSE}},
    )
    paused = SimulatedGame(Config(player_count=3), SEED, "greedy", SimTiming(), max_actions=PAUSE)
    paused.advance(5000)
    pause_actions = len(paused.record.actions)
    pause_stacks = dump_state(paused.state)["stacks"]
    data = tmp_path / "data"
    log = tmp_path / "companion.log"
    proc, url = start_demo(cfg, log)
    phone = PhoneClient(url)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, (
                f"the page did not show the paused table ({progress(data)} actions played)"
            )
            if progress(data) == pause_actions and caught_up(phone.state("public"), pause_stacks):
                time.sleep(1.0)  # the DONE that ended the turn reaches the tracker too
                seen = phone.state("public")
                if caught_up(seen, pause_stacks):
                    break
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # everything the page showed before the kill is in the journal
    journal = Journal(data / "journal.sqlite3")
    before = restore(journal)
    states = published_states(journal)
    journal.close()
    assert same_table(states[-1], before.state)
    seen_stacks, seen_hidden = shown(seen)
    assert any(
        dump_state(s)["stacks"] == seen_stacks and hidden_positions(s) == seen_hidden
        for s in states
    ), "a state shown on the page before the kill is missing from the journal"

    # start again (the players play on to the end): it continues from the journal, and the page
    # shows the restored state
    cfg = write_config(tmp_path, {"game": {"players": 3, "memory_aid": "all"}, "simulation": sim})
    proc, url = start_demo(cfg, log)
    phone = PhoneClient(url)
    try:
        first = phone.state("public")
        restored_states = [*states, before.state]
        assert (
            any(
                shown(first) == (dump_state(s)["stacks"], hidden_positions(s))
                for s in restored_states
            )
            or first["version"] > 1
        )
        deadline = time.monotonic() + 150
        while (snap := phone.state("public"))["phase"] != "over" or snap["question"]:
            assert time.monotonic() < deadline, "the restarted game did not finish"
            assert proc.poll() is None, log.read_text()
            time.sleep(0.2)
        final_page = phone.state("public")
        proc.send_signal(signal.SIGTERM)  # a clean stop
        assert proc.wait(timeout=30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    truth_game = SimulatedGame(Config(player_count=3), SEED, "greedy", SimTiming())
    truth_game.advance(5000)
    truth = truth_game.state
    assert truth.game.over
    journal = Journal(data / "journal.sqlite3")
    final = restore(journal)
    journal.close()
    # the board with every trapped wizard and its tier, and the castle (potions are not on the
    # board: the camera cannot see them, the tracker only estimates them)
    assert board_key(final.state) == board_key(truth)
    assert hidden_positions(final.state) == hidden_positions(truth)
    assert shown(final_page)[1] == hidden_positions(truth)
    assert "resumed game seed" in log.read_text()
