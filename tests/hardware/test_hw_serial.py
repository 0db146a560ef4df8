"""The LED ring through pyserial and the fake device: in memory with faults, and on a pty."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial

from companion.hardware.fake_device import FakeRingDevice, MemoryLink, PtyLink
from companion.hardware.panel import PanelState
from companion.hardware.protocol import HostLink, LedState
from companion.hardware.serial_link import SerialPeripheral, find_ports, led_state

A = LedState(pips=0b0001000, current=0, seats=((0, 90, 255), (255, 200, 0)))
B = LedState(pips=0b1010101, current=1, attention=True, seats=((0, 90, 255), (255, 200, 0)))
C = LedState(pips=0b0100010, current=None, seats=((230, 20, 20),))


def wait_for(cond: Callable[[], bool], timeout: float = 3.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


@pytest.fixture
def mem() -> Iterator[tuple[MemoryLink, FakeRingDevice, SerialPeripheral]]:
    link = MemoryLink()
    dev = FakeRingDevice(link.device).start()
    link.on_replug = dev.power_up
    sp = SerialPeripheral(
        "memory", opener=link.opener, link=HostLink(ack_timeout_s=0.05), reconnect_s=0.05
    )
    sp.start()
    yield link, dev, sp
    sp.close()
    dev.stop()


def test_handshake_and_state(mem: tuple[MemoryLink, FakeRingDevice, SerialPeripheral]) -> None:
    link, dev, sp = mem
    sp.set_led_state(A)
    assert wait_for(lambda: sp.link.in_sync)
    assert dev.state == A and sp.status()["link"] == "ready"


def test_garbage_crc_errors_and_drops(
    mem: tuple[MemoryLink, FakeRingDevice, SerialPeripheral],
) -> None:
    link, dev, sp = mem
    sp.set_led_state(A)
    assert wait_for(lambda: sp.link.in_sync)
    rng = random.Random(3)
    link.inject(bytes(rng.randrange(1, 256) for _ in range(300)))  # no delimiter: overlong
    link.inject(b"\x02\xff\xee\x00", to_device=False)  # garbage towards the host
    link.corrupt_frames = 1
    link.drop_frames = 1
    sp.set_led_state(B)
    assert wait_for(lambda: sp.link.in_sync and dev.state == B)
    st = sp.status()
    assert st["resends"] >= 1 and st["bad_frames"] >= 1 and dev.link.bad_frames >= 1


def test_unplug_and_replug_restores_the_leds(
    mem: tuple[MemoryLink, FakeRingDevice, SerialPeripheral],
) -> None:
    link, dev, sp = mem
    sp.set_led_state(A)
    assert wait_for(lambda: sp.link.in_sync)
    link.unplug()
    assert wait_for(lambda: sp.disconnects == 1)
    sp.set_led_state(C)  # changed while unplugged: kept, not lost
    time.sleep(0.15)
    assert not sp.connected and "unplugged" in sp.status()["error"]
    link.replug()  # the board powers up dark and greets
    assert wait_for(lambda: sp.link.in_sync and dev.state == C)
    assert dev.boots == 2 and sp.connects == 2


def test_panel_state_maps_to_ring_state() -> None:
    st = led_state(PanelState(pips=(True,) + (False,) * 6, seats=("blue", "red"), current=1))
    assert st.pips == 1 and st.current == 1 and st.seats == ((0, 90, 255), (230, 20, 20))


def test_over_a_real_pty() -> None:
    try:
        pty = PtyLink()
    except OSError as e:  # a sandbox without /dev/ptmx
        pytest.skip(f"no pseudo-terminal available: {e}")
    dev = FakeRingDevice(pty).start()
    sp = SerialPeripheral(pty.port_name, link=HostLink(ack_timeout_s=0.05))
    try:
        sp.start()
        sp.set_led_state(B)
        assert wait_for(lambda: sp.link.in_sync)
        assert dev.state == B
        n = len(sp.link.round_trips)
        assert wait_for(lambda: len(sp.link.round_trips) > n)  # PINGs answered
    finally:
        sp.close()
        dev.stop()
        pty.close()


def test_missing_port_keeps_retrying_without_raising() -> None:
    sp = SerialPeripheral("/nonexistent/ttyACM9", reconnect_s=0.02)
    sp.start()
    try:
        sp.set_led_state(A)
        assert wait_for(lambda: "cannot open" in sp.status()["error"])
        assert not sp.connected
    finally:
        sp.close()


def test_find_ports_prefers_by_id_names(tmp_path: Path) -> None:
    (tmp_path / "usb-MicroPython_Board_in_FS_mode_e6614c-if00").touch()
    (tmp_path / "usb-FTDI_FT232R-if00").touch()
    ports = find_ports(str(tmp_path))
    assert ports[0].endswith("usb-MicroPython_Board_in_FS_mode_e6614c-if00")
    assert not any("FTDI" in p for p in ports)


def test_auto_port_without_a_board_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from companion.hardware import serial_link

    monkeypatch.setattr(serial_link, "find_ports", lambda: [])
    with pytest.raises(serial.SerialException, match="no LED ring found"):
        serial_link.open_port("auto")
