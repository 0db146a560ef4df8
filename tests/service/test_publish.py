"""One press, one version: the changes a press makes within a moment (the dice display at once,
then the tracker's answer) reach the pages as one snapshot, never as a version that lives a few
milliseconds and that the event streams skip; a tracker still searching does not hold back what
the dice already show (docs/architecture.md, "Threads")."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from companion.service import publish
from companion.service.core import CompanionService
from companion.service.driver import DiceRoll
from companion.service.heartbeat import Heartbeats
from companion.service.inputs import DiceInput
from companion.sim.testing import sim_config, wait_until
from companion.web import create_app
from companion.web.service import Audience
from tests.service.test_tracker_thread import GatedDriver


def _roll(value: int) -> DiceRoll:
    return DiceRoll.from_event({"type": "dice", "rolls": [value], "used": value, "dice_allowed": 1})


@pytest.fixture
def service(tmp_path: Any) -> Iterator[tuple[CompanionService, GatedDriver, list[int]]]:
    svc = CompanionService(
        sim_config(tmp_path / "data"), heartbeats=Heartbeats(60.0), driver_factory=GatedDriver
    )
    svc.start_game()
    driver = svc.driver
    assert isinstance(driver, GatedDriver)
    published: list[int] = []
    svc.add_listener(lambda s: published.append(s.version))
    stop = threading.Event()
    loop = threading.Thread(target=svc.run, args=(stop, 0.05), daemon=True)
    loop.start()
    yield svc, driver, published
    for _ in range(20):
        driver.go.release()
    stop.set()
    loop.join(5)


def test_a_press_the_tracker_answers_at_once_is_one_version_with_all_it_changed(
    service: tuple[CompanionService, GatedDriver, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, driver, published = service
    # a window no press reaches: only "nothing more in flight" may publish here
    monkeypatch.setattr(publish, "PUBLISH_WINDOW_S", 30.0)
    for _ in range(4):
        driver.go.release()  # the tracker answers each input as it comes
    wait_until(lambda: svc.queue_size() == 0 and published == [], 5, "a quiet service")
    svc.post(DiceInput(_roll(5)))
    wait_until(lambda: len(published) >= 1, 5, "the press to reach the pages")
    wait_until(lambda: svc.queue_size() == 0, 5, "the tracker's answer handled")
    snap = svc.snapshot(Audience.public())
    assert published == [snap["version"]], "the dice display and the answer came apart"
    assert snap["dice"]["value"] == 5  # type: ignore[index]
    assert snap["log"][-1] == "dice"  # type: ignore[index]


def test_the_dice_show_while_the_tracker_still_searches(
    service: tuple[CompanionService, GatedDriver, list[int]],
) -> None:
    svc, driver, published = service
    svc.post(DiceInput(_roll(3)))
    # the tracker is held: the dice display is published when the window runs out
    wait_until(lambda: len(published) == 1, 5, "the dice on the pages")
    snap = svc.snapshot(Audience.public())
    assert snap["dice"]["value"] == 3 and driver.got == []  # type: ignore[index]
    driver.go.release()
    wait_until(lambda: len(published) == 2, 5, "the tracker's answer on the pages")
    assert svc.snapshot(Audience.public())["log"][-1] == "dice"  # type: ignore[index]
    assert published[1] == published[0] + 1


def test_a_version_stays_current_long_enough_for_the_streams_to_send_it(
    service: tuple[CompanionService, GatedDriver, list[int]],
) -> None:
    svc, driver, published = service
    times: list[float] = []
    svc.add_listener(lambda s: times.append(time.monotonic()))
    svc.post(DiceInput(_roll(4)))
    wait_until(lambda: len(times) == 1, 5, "the dice on the pages")
    driver.go.release()  # the tracker answers just after the window ran out
    wait_until(lambda: len(times) == 2, 5, "the tracker's answer on the pages")
    assert times[1] - times[0] >= publish.MIN_LIFE_S * 0.99


def test_a_commands_answer_names_the_version_that_shows_it(
    service: tuple[CompanionService, GatedDriver, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, driver, published = service
    monkeypatch.setattr(publish, "PUBLISH_WINDOW_S", 30.0)
    driver.go.release()
    answer = svc.submit({"command": "end_turn"}, Audience.host())
    wait_until(lambda: svc.version >= answer["version"], 5, "the answer's version published")
    snap = svc.snapshot(Audience.public())
    assert snap["version"] == answer["version"]
    assert snap["log"][-1] == "end_turn"  # type: ignore[index]


def test_a_stopping_service_publishes_what_is_pending(tmp_path: Any) -> None:
    svc = CompanionService(
        sim_config(tmp_path / "data"), heartbeats=Heartbeats(60.0), driver_factory=GatedDriver
    )
    svc.start_game()
    driver = svc.driver
    assert isinstance(driver, GatedDriver)
    driver.go.release()
    v0 = svc.version
    svc._coalesce(True)  # as the service loop does on its thread
    svc.post(DiceInput(_roll(2)))
    svc.step()
    assert svc.version == v0  # pending: the loop would publish it with the tracker's answer
    svc._coalesce(False)
    assert svc.version == v0 + 1
    snap = svc.snapshot(Audience.public())
    assert snap["dice"]["value"] == 2 and snap["log"][-1] == "dice"  # type: ignore[index]


def _camera_lines(svc: CompanionService, texts: list[str]) -> None:
    for text in texts:
        svc.post_camera_status(text)
        svc.step()  # without the loop: each change is a version of its own


def test_the_service_keeps_each_recent_version_for_the_pages_in_use(tmp_path: Any) -> None:
    svc = CompanionService(
        sim_config(tmp_path / "data"), heartbeats=Heartbeats(60.0), driver_factory=GatedDriver
    )
    svc.start_game()
    v0 = svc.snapshot(Audience.public())["version"]  # a page shows the public view
    _camera_lines(svc, ["hand over the board", "moving", "ok"])
    kept = svc.snapshots_since(v0, Audience.public())  # type: ignore[arg-type]
    assert [s["version"] for s in kept] == [v0 + 1, v0 + 2, v0 + 3]  # type: ignore[operator]
    assert [s["camera"] for s in kept] == ["hand over the board", "moving", "ok"]
    # an audience no page asked for is built when asked: only its current version
    assert [s["version"] for s in svc.snapshots_since(v0, Audience.player("red"))] == [v0 + 3]  # type: ignore[arg-type,operator]
    # a bounded history: the oldest versions go
    _camera_lines(svc, [f"line {i}" for i in range(2 * publish.HISTORY_VERSIONS)])
    kept = svc.snapshots_since(v0, Audience.public())  # type: ignore[arg-type]
    assert len(kept) == publish.HISTORY_VERSIONS
    assert kept[-1]["version"] == svc.version


def test_an_event_stream_that_wakes_late_sends_every_version_in_order(tmp_path: Any) -> None:
    svc = CompanionService(
        sim_config(tmp_path / "data"), heartbeats=Heartbeats(60.0), driver_factory=GatedDriver
    )
    svc.start_game()
    app = create_app({"TESTING": True, "SSE_HEARTBEAT_S": 0.5}, svc)
    resp = app.test_client().get("/events?as=public&tab=t1", buffered=False)
    chunks = iter(resp.response)
    first = json.loads(next(chunks).decode().split("data: ", 1)[1])
    # three changes while the stream's thread is away (it runs only when read here)
    _camera_lines(svc, ["hand over the board", "moving", "ok"])
    got = []
    while len(got) < 3:
        text = next(chunks).decode()
        if "event: snapshot" in text:
            got.append(json.loads(text.split("data: ", 1)[1]))
    resp.close()
    assert [s["version"] for s in got] == [first["version"] + i for i in (1, 2, 3)]
    assert [s["camera"] for s in got] == ["hand over the board", "moving", "ok"]
