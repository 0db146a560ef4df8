"""The tracker works beside the service thread: a still board is on the pages at once as the
camera read it ("checking"), a button press or a page is answered while the tracker is still
searching, every input reaches the tracker in the order it came, and a new game drops what was
queued for the old one."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import Any

import pytest

from companion import rules
from companion.service.core import CompanionService
from companion.service.driver import DiceRoll, PublishedGame
from companion.service.game import GameSettings
from companion.service.heartbeat import Heartbeats
from companion.service.inputs import CommandInput, DoneInput, ObservationInput
from companion.sim.testing import sim_config, wait_until
from companion.web.service import Audience, CommandError


class GatedDriver:
    """A tracker stand-in that works on each input only when the test lets it (``go``), and
    notes the inputs in the order it got them."""

    def __init__(self, service: CompanionService, settings: GameSettings, restore: bool) -> None:
        self.settings = settings
        self.state = rules.setup(rules.Config(player_count=settings.players), 3)
        self.published = PublishedGame(self.state, None, "ok", "playing")
        self.last_update = None
        self.got: list[str] = []
        self.go = threading.Semaphore(0)
        self.closed = False

    def _work(self, what: str) -> list[str]:
        assert self.go.acquire(timeout=30), "the test never let the tracker work"
        self.got.append(what)
        return [what]

    def observe(self, obs: rules.Observation) -> list[str]:
        return self._work(f"board {obs.frame}")

    def dice(self, roll: DiceRoll) -> list[str]:
        return self._work("dice")

    def end_turn(self) -> list[str]:
        return self._work("done")

    def undo(self) -> list[str]:
        return self._work("undo")

    def command(self, cmd: Mapping[str, object], audience: Audience) -> list[str]:
        if cmd["command"] == "undo":
            self._work("undo refused")
            raise CommandError("nothing to undo", 409)
        return self._work(str(cmd["command"]))

    def prepare(self, obs: rules.Observation) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def running(tmp_path: Any) -> Iterator[tuple[CompanionService, GatedDriver]]:
    svc = CompanionService(
        sim_config(tmp_path / "data"), heartbeats=Heartbeats(60.0), driver_factory=GatedDriver
    )
    svc.start_game()
    driver = svc.driver
    assert isinstance(driver, GatedDriver)
    stop = threading.Event()
    loop = threading.Thread(target=svc.run, args=(stop, 0.05), daemon=True)
    loop.start()
    yield svc, driver
    for _ in range(20):
        driver.go.release()
    stop.set()
    loop.join(5)


def _seen_frame(svc: CompanionService) -> int | None:
    seen = svc.snapshot(Audience.public())["seen"]
    return None if seen is None else int(seen["frame"])  # type: ignore[call-overload]


def _board(state: rules.GameState, frame: int) -> rules.Observation:
    obs = rules.observe(state)
    return rules.Observation(spaces=obs.spaces, time=float(frame), frame=frame)


def test_the_cameras_board_is_published_before_the_tracker_answers(running):
    svc, driver = running
    seen = _board(driver.state, 7)
    v0 = svc.version
    svc.post(ObservationInput(seen))
    # the pages get the camera's board while the tracker has not answered (the publication
    # waits at most a few tens of ms for the tracker, service/publish.py)
    wait_until(
        lambda: svc.snapshot(Audience.public())["checking"] is True, 5, "the board on the pages"
    )
    snap = svc.snapshot(Audience.public())
    assert snap["checking"] is True and snap["version"] > v0
    assert snap["seen"]["frame"] == 7
    assert snap["seen"]["spaces"]["1"]["towers"] == seen.spaces[1].towers
    assert snap["state"] is not None  # hidden facts stay the belief's meanwhile
    assert driver.got == []  # the tracker has not answered
    # a DONE press and a page are answered while the tracker works
    svc.post(DoneInput())
    wait_until(lambda: svc.free.is_set(), 5, "the service thread to take DONE")
    assert svc.snapshot(Audience.host())["checking"] is True
    assert svc.queue_size() == 2  # the board and DONE wait for the tracker, in order
    driver.go.release()
    wait_until(
        lambda: svc.snapshot(Audience.public())["checking"] is False, 5, "the tracker to agree"
    )
    assert svc.snapshot(Audience.public())["seen"] is None
    driver.go.release()
    wait_until(lambda: svc.queue_size() == 0, 5, "DONE handled")
    assert driver.got == ["board 7", "done"]
    assert svc.log_lines()[-2:] == ["board 7", "done"]


def test_a_board_with_a_withheld_space_is_published_without_that_space(running):
    # the detector withheld space 4 as unsure: the pages get the board at once, space 4
    # absent (unknown: drawn from the belief, never empty), and the tracker gets it too
    svc, driver = running
    obs = rules.observe(driver.state)
    spaces = {s: o for s, o in obs.spaces.items() if s != 4}
    svc.post(ObservationInput(rules.Observation(spaces=spaces, time=8.0, frame=8)))
    wait_until(lambda: _seen_frame(svc) == 8, 5, "the partial board on the pages")
    seen = svc.snapshot(Audience.public())["seen"]
    assert "4" not in seen["spaces"] and len(seen["spaces"]) == len(obs.spaces) - 1
    driver.go.release()
    wait_until(lambda: driver.got == ["board 8"], 5, "the tracker to get the board")


def test_every_input_reaches_the_tracker_in_order_and_a_refused_command_changes_nothing(
    running,
):
    svc, driver = running
    for frame in (1, 2, 3):
        svc.post(ObservationInput(_board(driver.state, frame)))
    fut: Future[dict[str, object]] = Future()
    svc.post(CommandInput({"command": "undo"}, Audience.host(), fut))
    svc.post(ObservationInput(_board(driver.state, 4)))
    wait_until(lambda: _seen_frame(svc) == 4, 5, "the latest board")
    for _ in range(5):
        driver.go.release()
    with pytest.raises(CommandError, match="nothing to undo"):
        fut.result(timeout=5)
    wait_until(lambda: not svc.checking, 5, "the tracker to catch up")
    assert driver.got == ["board 1", "board 2", "board 3", "undo refused", "board 4"]


def test_a_new_game_drops_what_was_queued_for_the_old_one(running, tmp_path):
    svc, old = running
    svc.post(ObservationInput(_board(old.state, 1)))
    svc.post(ObservationInput(_board(old.state, 2)))
    fut: Future[dict[str, object]] = Future()
    svc.post(CommandInput({"command": "end_turn"}, Audience.host(), fut))
    wait_until(lambda: _seen_frame(svc) is not None, 5, "a board")
    number = svc.game_number

    def finish_the_board_once_setup_started() -> None:
        wait_until(lambda: svc.game_number > number, 10, "the setup to start")
        old.go.release()  # the board in progress finishes; what is queued behind it is dropped

    threading.Thread(target=finish_the_board_once_setup_started, daemon=True).start()
    result = svc.submit({"command": "setup", "players": 2}, Audience.host())
    assert result["ok"] and old.closed
    with pytest.raises(CommandError, match="new game"):
        fut.result(timeout=5)
    assert old.got == ["board 1"]
    new = svc.driver
    assert isinstance(new, GatedDriver) and new is not old and new.got == []
    assert svc.checking is False and svc.queue_size() == 0


def test_a_reading_that_is_not_this_tracks_board_is_never_shown(running):
    svc, driver = running
    full = _board(driver.state, 5)
    # (a board of a longer track: spaces this track does not have; a board that lacks some
    # of this track's spaces is a partial board, shown without them)
    extra = rules.SpaceObservation(0, "plain-space")
    long = rules.Observation(spaces={**full.spaces, 17: extra, 18: extra}, time=5.0, frame=5)
    svc.post(ObservationInput(long))
    wait_until(lambda: svc.free.is_set(), 5, "the service thread to take the reading")
    # nothing shown as the camera's board (the version may move: the health line is published)
    assert not svc.checking
    assert svc.snapshot(Audience.public())["seen"] is None
    driver.go.release()  # the tracker gets it all the same (and refuses it: its health line)
    wait_until(lambda: svc.queue_size() == 0, 5, "the tracker")
    assert driver.got == ["board 5"] and not svc.checking
