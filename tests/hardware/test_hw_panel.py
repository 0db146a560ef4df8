"""Buttons and LEDs on gpiozero's MockFactory through the Hardware facade, and the virtual
panel the phone page shows."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from companion.hardware import Hardware, create_hardware, on_raspberry_pi
from companion.hardware.dice import COUNT_PATTERNS, FACES, DiceError, DiceTiming
from companion.hardware.pins import PinMapError

FAST = DiceTiming(hold_s=0.5, select_window_s=0.3, roll_anim_s=0.08, frame_s=0.02)


def wait_for(cond: Callable[[], bool], timeout: float = 3.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    Device.pin_factory = MockFactory()
    yield Device.pin_factory
    Device.pin_factory.reset()
    Device.pin_factory = None


@pytest.fixture
def hw(factory: MockFactory) -> Iterator[tuple[Hardware, list[dict[str, Any]]]]:
    events: list[dict[str, Any]] = []
    h = create_hardware(
        {"hardware": {"seats": ["blue", "yellow", "red"], "backend": "mock"}},
        events.append,
        rng=random.Random(5),
        pin_factory=factory,
        timing=FAST,
    )
    yield h, events
    h.close()


def pip_leds(h: Hardware) -> tuple[bool, ...]:
    return tuple(bool(led.pin.state) for led in h.gpio.pips)


def tap(pin: Any, s: float = 0.05) -> None:
    pin.drive_low()
    time.sleep(s)
    pin.drive_high()


def test_roll_button_lights_the_pips_with_the_result(hw: tuple[Hardware, list]) -> None:
    h, events = hw
    roll = h.gpio.buttons["roll"].pin
    roll.drive_low()
    assert wait_for(lambda: pip_leds(h) == COUNT_PATTERNS[1], 1.0)
    roll.drive_high()
    assert wait_for(lambda: any(e["type"] == "dice" for e in events))
    [ev] = events
    assert ev["dice_allowed"] == 1 and ev["used"] == ev["rolls"][0]
    assert wait_for(lambda: pip_leds(h) == FACES[ev["used"]], 1.0)
    assert h.panel.snapshot()["dice"]["last"] == ev


def test_two_presses_then_hold_keeps(hw: tuple[Hardware, list]) -> None:
    h, events = hw
    roll = h.gpio.buttons["roll"].pin
    tap(roll)
    time.sleep(0.06)
    tap(roll)
    assert wait_for(lambda: h.machine.status()["can_keep"])
    first = h.machine.rolls[0]
    tap(roll, 0.8)  # hold >= 0.5 s in FAST timing = keep
    assert wait_for(lambda: bool(events))
    assert events == [{"type": "dice", "rolls": [first], "used": first, "dice_allowed": 2}]


def test_done_and_undo_buttons(hw: tuple[Hardware, list]) -> None:
    h, events = hw
    tap(h.gpio.buttons["done"].pin)
    assert wait_for(lambda: events == [{"type": "done"}])
    tap(h.gpio.buttons["undo"].pin)
    assert wait_for(lambda: events == [{"type": "done"}, {"type": "undo"}])


def test_gpio_callback_only_enqueues(factory: MockFactory) -> None:
    threads: list[threading.Thread] = []
    release = threading.Event()

    def slow_consumer(ev: dict[str, Any]) -> None:
        threads.append(threading.current_thread())
        release.wait(2)

    h = create_hardware({}, slow_consumer, rng=random.Random(1), pin_factory=factory, timing=FAST)
    try:
        t0 = time.monotonic()
        tap(h.gpio.buttons["done"].pin, 0.02)
        assert time.monotonic() - t0 < 0.5  # the consumer blocks (2 s), the pin callbacks do not
        assert wait_for(lambda: bool(threads))
        assert threads[0] is not threading.current_thread()
    finally:
        release.set()
        h.close()


def test_seat_leds_follow_the_current_player(hw: tuple[Hardware, list]) -> None:
    h, _ = hw
    h.show_player(1)
    assert [led.is_lit for led in h.gpio.seats] == [False, True, False, False, False, False]
    snap = h.panel.snapshot()
    assert [s["on"] for s in snap["seats"]] == [False, True, False]
    assert snap["seats"][1]["colour"] == "yellow"
    h.show_player(None)
    assert not any(led.is_lit for led in h.gpio.seats)


def test_attention_led_blinks_until_cleared(hw: tuple[Hardware, list]) -> None:
    h, _ = hw
    pin = h.gpio.attention.pin
    pin.clear_states()
    h.set_attention(True)  # blink 0.5 s on / 0.5 s off
    assert wait_for(lambda: [s.state for s in pin.states][1:4] == [True, False, True], 4.0)
    assert h.panel.snapshot()["attention"]["on"] is True
    h.set_attention(False)
    assert wait_for(lambda: not h.gpio.attention.is_lit)


def test_bad_requests_change_nothing(hw: tuple[Hardware, list]) -> None:
    h, _ = hw
    h.show_player(2)
    before = h.panel.snapshot()
    with pytest.raises(ValueError, match="seat 5 does not exist"):
        h.show_player(5)
    with pytest.raises(ValueError, match="unknown seat colour 'pink'"):
        h.set_seats(["blue", "pink"])
    with pytest.raises(DiceError, match="not a mode"):
        h.select_dice(4)
    with pytest.raises(DiceError, match="nothing to keep"):
        h.keep()
    assert h.panel.snapshot() == before


def test_virtual_panel_buttons_and_phone_mode(hw: tuple[Hardware, list]) -> None:
    h, events = hw
    h.select_dice(3)
    assert wait_for(lambda: pip_leds(h) == COUNT_PATTERNS[3])
    h.press("roll")
    assert wait_for(lambda: h.machine.status()["can_keep"])
    h.reroll()
    assert wait_for(lambda: h.machine.status()["can_keep"] and len(h.machine.rolls) == 2)
    h.panel.keep()
    assert wait_for(lambda: bool(events), 3)
    assert len(events[0]["rolls"]) == 2 and events[0]["dice_allowed"] == 3
    h.panel.done()
    assert wait_for(lambda: events[-1] == {"type": "done"})


def test_snapshot_is_json_and_text_shows_the_face(hw: tuple[Hardware, list]) -> None:
    h, _ = hw
    h.show_face(5)
    h.show_player(0)
    snap = json.loads(json.dumps(h.snapshot()))
    assert snap["face_pips"] == [1, 1, 0, 1, 0, 1, 1]
    text = h.render_text()
    assert "●   ●" in text and "[BLUE]" in text and text.count("●") == 5


def test_bad_pin_map_refused_and_pins_left_free(factory: MockFactory) -> None:
    with pytest.raises(PinMapError, match="BCM 3 is reserved"):
        create_hardware({"pins": {"done": 3}}, print, pin_factory=factory)
    with pytest.raises(ValueError, match="hardware.backend"):
        create_hardware({"hardware": {"backend": "pi"}}, print, pin_factory=factory)
    h = create_hardware({}, print, rng=random.Random(1), pin_factory=factory)
    h.close()


def test_pin_already_taken_releases_the_others(factory: MockFactory) -> None:
    from gpiozero import LED

    blocker = LED(16, pin_factory=factory)  # pip bottom_right's pin in the default map
    try:
        with pytest.raises(Exception, match="16|in use"):
            create_hardware({}, print, rng=random.Random(1), pin_factory=factory)
    finally:
        blocker.close()
    create_hardware({}, print, rng=random.Random(1), pin_factory=factory).close()


def test_raspberry_pi_detection(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert on_raspberry_pi(model)
    model.write_bytes(b"QEMU Virtual Machine\x00")
    assert not on_raspberry_pi(model)
    assert not on_raspberry_pi(tmp_path / "absent")


def test_late_worker_keeps_the_edges_apart() -> None:
    """Edges queued while the worker was busy keep their own times: a release and the next
    press 40 ms apart stay two presses even if the worker only looks 300 ms later."""
    from companion.hardware.dice import DiceMachine
    from companion.hardware.panel import VirtualPanel
    from companion.hardware.runner import PanelRunner

    now = [0.0]
    events: list[dict[str, Any]] = []
    runner = PanelRunner(
        DiceMachine(rng=random.Random(1)), VirtualPanel(), [], events.append, clock=lambda: now[0]
    )
    for t, level in [(1.0, True), (1.1, False), (1.14, True), (1.2, False)]:
        now[0] = t
        runner.edge("roll", level)
    now[0] = 1.5  # the worker wakes late
    runner.step()
    assert runner.machine.status()["selecting"] == 2
    now[0] = 3.0
    runner.step()
    assert runner.machine.status()["dice_allowed"] == 2 and runner.machine.can_choose()
    assert runner.panel.snapshot()["dice"]["can_keep"] is True and events == []


def test_buzzer_beeps_on_a_result(hw: tuple[Hardware, list]) -> None:
    h, events = hw
    buzzer = h.gpio.buzzer.pin
    buzzer.clear_states()
    h.select_dice(1)
    h.press("roll")
    assert wait_for(lambda: bool(events))
    assert wait_for(lambda: [s.state for s in buzzer.states][1:3] == [True, False])


def test_snapshot_reports_the_led_ring(factory: MockFactory) -> None:
    h = create_hardware(
        {"hardware": {"serial_port": "/nonexistent/ttyACM7"}},
        print,
        rng=random.Random(1),
        pin_factory=factory,
    )
    try:
        assert h.snapshot()["backend"] == "mock"
        assert wait_for(lambda: "cannot open" in h.snapshot()["ring"]["error"])
        assert h.snapshot()["ring"]["in_sync"] is False
    finally:
        h.close()


def test_panel_state_reaches_the_led_ring_over_a_pty(factory: MockFactory) -> None:
    from companion.hardware.fake_device import FakeRingDevice, PtyLink

    try:
        pty = PtyLink()
    except OSError as e:
        pytest.skip(f"no pseudo-terminal available: {e}")
    dev = FakeRingDevice(pty).start()
    h = create_hardware(
        {"hardware": {"serial_port": pty.port_name, "seats": ["blue", "red"]}},
        print,
        rng=random.Random(1),
        pin_factory=factory,
    )
    try:
        h.show_player(1)
        h.show_face(6)
        assert wait_for(
            lambda: dev.state is not None and dev.state.current == 1 and dev.state.pips == 0b1110111
        )
        assert dev.state is not None and dev.state.seats == ((0, 90, 255), (230, 20, 20))
        assert wait_for(lambda: h.snapshot()["ring"]["in_sync"] is True)
    finally:
        h.close()
        dev.stop()
        pty.close()
