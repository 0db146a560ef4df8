"""While the tracker works on a still board no full garbage collection runs (it would hold back
the result the players are waiting for), and the service stays ``free``: the tracker works on
its own thread, so the detector (which waits for ``free``, see test_pipeline) goes on reading
the camera meanwhile; collections resume once the service and the tracker are idle."""

from __future__ import annotations

import gc
import threading

from companion.rules import Config, Observation, observe, setup
from companion.service.core import CompanionService
from companion.service.driver import PublishedGame
from companion.service.game import GameSettings
from companion.service.heartbeat import Heartbeats
from companion.service.inputs import ObservationInput
from companion.service.memory import IdleCollector
from companion.sim.testing import sim_config, wait_until


class AllocatingDriver:
    """A tracker stand-in whose work on a board builds ~300 000 objects in reference cycles that
    stay alive while it works (as a belief does), and notes what else ran meanwhile."""

    def __init__(self, service: CompanionService, settings: GameSettings, restore: bool) -> None:
        self.service = service
        self.settings = settings
        self.state = setup(Config(player_count=settings.players), 1)
        self.published = PublishedGame(self.state, None, "ok", "playing")
        self.last_update = None
        self.full_collections = 0
        self.free_while_working: list[bool] = []

    def close(self) -> None:
        pass

    def observe(self, obs: Observation) -> list[str]:
        def count(phase: str, info: dict) -> None:
            if phase == "start" and info["generation"] == 2:
                self.full_collections += 1

        gc.callbacks.append(count)
        try:
            self.free_while_working.append(self.service.free.is_set())
            belief = []
            for _ in range(100_000):
                a: list = []
                b = [a]
                a.append(b)
                belief.append(a)
        finally:
            gc.callbacks.remove(count)
        return ["board explained"]


def test_no_full_collection_while_a_board_is_tracked_then_one_when_idle(tmp_path):
    svc = CompanionService(
        sim_config(tmp_path / "data"), heartbeats=Heartbeats(60.0), driver_factory=AllocatingDriver
    )
    svc.collector.every_s = 0.0
    svc.start_game()
    driver = svc.driver
    stop = threading.Event()
    loop = threading.Thread(target=svc.run, args=(stop, 0.05), daemon=True)
    saved = gc.get_threshold()
    loop.start()
    try:
        obs = observe(driver.state)
        for _ in range(3):
            svc.post(ObservationInput(obs))
        wait_until(lambda: len(driver.free_while_working) == 3, 30, "three boards tracked")
        wait_until(lambda: svc.collector.collections >= 1, 10, "a collection once idle")
    finally:
        stop.set()
        loop.join(5)
    assert driver.full_collections == 0
    assert driver.free_while_working == [True, True, True]
    assert svc.free.is_set()
    assert gc.get_threshold() == saved  # the collector's settings are put back


def test_two_services_in_one_process_put_the_collector_back_when_both_stopped():
    saved = gc.get_threshold()
    a, b = IdleCollector(), IdleCollector()
    a.install()
    b.install()
    assert gc.get_threshold()[2] == IdleCollector.NEVER
    a.uninstall()
    assert gc.get_threshold()[2] == IdleCollector.NEVER  # b still runs
    b.uninstall()
    assert gc.get_threshold() == saved
    assert gc.get_freeze_count() == 0
