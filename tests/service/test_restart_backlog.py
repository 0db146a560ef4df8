"""A power cut while the tracker still works through a backlog loses none of the camera's
boards or the panel's presses: each is journaled as it is handed to the tracker's thread, and a
restart gives the tracker the ones it had not taken, in their order (docs/architecture.md,
"Restart")."""

from __future__ import annotations

import dataclasses
import json

import pytest

from companion import rules
from companion.journal import Journal, untaken
from companion.rules.actions import EndTurn
from companion.service.core import CompanionService
from companion.service.driver import DiceRoll
from companion.service.game import GameSettings
from companion.service.inputs import (
    DiceInput,
    DoneInput,
    GameInput,
    ObservationInput,
    UndoInput,
    from_ledger,
    payload_json,
)
from companion.service.worker import TrackerWorker
from companion.sim.simtable import SimTiming, SimulatedGame
from companion.sim.testing import sim_config
from companion.tracking import board_key

SEED = 12
ACTIONS = 24  # about two rounds of a 3-player game
TAKEN = 10  # the tracker took these before the power went


def the_game() -> tuple[GameSettings, list[GameInput], list[rules.GameState]]:
    """The settings, the boards and DONE presses of the first ``ACTIONS`` actions of a seeded
    game (one still board after each move, DONE at each turn's end), and the true state after
    each input."""
    settings = GameSettings(players=3, colours=("blue", "yellow", "red"))
    game = SimulatedGame(settings.rules_config(), SEED, "greedy", SimTiming())
    settings = dataclasses.replace(settings, spells=tuple(game.initial_state.table.spells))
    game.advance(ACTIONS)
    inputs: list[GameInput] = []
    states = []
    for i, (action, state) in enumerate(
        zip(game.record.actions, game.record.states[1:], strict=True)
    ):
        if isinstance(action, EndTurn):
            inputs.append(DoneInput({"type": "done"}))
        else:
            inputs.append(ObservationInput(rules.observe(state, float(i), i)))
        states.append(state)
    return settings, inputs, states


@pytest.fixture
def cfg(tmp_path):
    return sim_config(tmp_path / "data", players=3)


def test_boards_and_presses_the_tracker_had_not_taken_are_worked_out_after_a_restart(cfg):
    settings, inputs, truth = the_game()
    assert sum(isinstance(i, DoneInput) for i in inputs[TAKEN:]) >= 1, "the backlog has a DONE"
    svc = CompanionService(cfg)
    svc.start_game(settings, restore=True)
    for item in inputs[:TAKEN]:  # taken at once (no tracker thread: on this thread)
        svc.post(item)
    svc.drain()
    assert board_key(svc.state) == board_key(truth[TAKEN - 1])
    # the tracker's thread is busy: what comes now waits in its queue
    svc._worker = TrackerWorker(svc._track)  # never started: it takes nothing more
    for item in inputs[TAKEN:]:
        svc.post(item)
    svc.drain()
    assert board_key(svc.state) == board_key(truth[TAKEN - 1]), "the backlog was not waiting"
    journal_path = cfg.data.journal_path()
    svc.close()  # the power goes: the queue is lost, nothing more is written

    with Journal(journal_path, create=False) as journal:
        waiting = untaken(journal)
    assert [r.payload["input"] for r in waiting] == [i.kind for i in inputs[TAKEN:]]

    again = CompanionService(cfg)
    again.start_game(settings, restore=True)
    assert again.drain() == len(inputs) - TAKEN
    assert board_key(again.state) == board_key(truth[-1])
    log = again.log_lines()
    assert any(f"before the restart to work out: {len(inputs) - TAKEN})" in line for line in log)
    with Journal(journal_path, create=False) as journal:
        assert untaken(journal) == []  # taken now: a second restart does not repeat them
    again.close()

    third = CompanionService(cfg)
    third.start_game(settings, restore=True)
    assert third.drain() == 0
    assert board_key(third.state) == board_key(truth[-1])
    third.close()


def test_a_press_the_tracker_refused_is_not_handed_on_again(cfg):
    settings, inputs, truth = the_game()
    svc = CompanionService(cfg)
    svc.start_game(settings, restore=True)
    svc.post(UndoInput({"type": "undo"}))  # UNDO before anything happened: refused
    svc.post(inputs[0])
    svc.drain()
    assert "undo refused" in svc.heartbeats.report()["parts"]["tracker"]["detail"]
    svc.close()
    with Journal(cfg.data.journal_path(), create=False) as journal:
        marks = [r.kind for r in journal.records() if r.kind in ("received", "taken", "undo")]
        assert marks == ["received", "taken", "received", "taken"]  # the refused one: its mark
        assert untaken(journal) == []
    again = CompanionService(cfg)
    again.start_game(settings, restore=True)
    assert again.drain() == 0
    assert board_key(again.state) == board_key(truth[0])
    again.close()


def test_every_kind_of_board_and_press_reads_back_as_it_was_handed_on():
    _, inputs, _ = the_game()
    roll = DiceRoll.from_event({"type": "dice", "rolls": [2, 5], "used": 5, "dice_allowed": 2})
    items = [inputs[0], DiceInput(roll), DoneInput({"type": "done"}), UndoInput(None)]
    for item in items:
        back = from_ledger(item.kind, json.loads(json.dumps(payload_json(item))))
        assert back == item and back.received
    with pytest.raises(ValueError, match="unknown received input"):
        from_ledger("command", {})
