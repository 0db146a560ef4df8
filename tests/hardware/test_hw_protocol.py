"""The serial LED-ring protocol, sans-I/O on a fake clock: framing, handshake, faults."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.hardware.protocol import (
    MAX_FRAME,
    VERSION,
    DeviceLink,
    Frame,
    FrameError,
    FrameReader,
    HostLink,
    LedState,
    LinkState,
    MsgType,
    crc16,
    decode_frame,
    encode_frame,
)

STATE_A = LedState(pips=0b0001000, current=1, seats=((0, 90, 255), (255, 200, 0)))
STATE_B = LedState(pips=0b1100011, current=None, attention=True, seats=((230, 20, 20),))


class TestFraming:
    def test_crc_is_ccitt_false(self) -> None:
        assert crc16(b"123456789") == 0x29B1  # the standard check value of CRC-16/CCITT-FALSE

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(t=st.integers(0, 255), seq=st.integers(0, 255), payload=st.binary(max_size=200))
    def test_roundtrip_and_single_delimiter(self, t: int, seq: int, payload: bytes) -> None:
        wire = encode_frame(t, seq, payload)
        assert wire.endswith(b"\x00") and b"\x00" not in wire[:-1]
        assert decode_frame(wire[:-1]) == Frame(VERSION, seq, t, payload)

    def test_flipped_byte_is_a_crc_error(self) -> None:
        wire = bytearray(encode_frame(MsgType.SET_STATE, 7, STATE_A.encode()))
        wire[4] ^= 0x10
        with pytest.raises(FrameError, match="CRC|COBS"):
            decode_frame(bytes(wire[:-1]))

    def test_too_long_refused(self) -> None:
        with pytest.raises(ValueError, match="exceeds"):
            encode_frame(MsgType.SET_STATE, 1, bytes(300))

    @settings(max_examples=100, deadline=None, derandomize=True)
    @given(garbage=st.binary(max_size=600), split=st.integers(1, 40))
    def test_reader_resyncs_after_garbage(self, garbage: bytes, split: int) -> None:
        good = encode_frame(MsgType.PING, 3)
        stream = garbage + b"\x00" + good
        reader = FrameReader()
        items = []
        for i in range(0, len(stream), split):
            items += reader.feed(stream[i : i + split])
        assert items[-1] == Frame(VERSION, 3, MsgType.PING)

    def test_overlong_run_dropped(self) -> None:
        reader = FrameReader()
        items = reader.feed(b"\x01" * (MAX_FRAME + 10) + b"\x00" + encode_frame(MsgType.PING, 1))
        assert isinstance(items[0], FrameError) and items[1] == Frame(VERSION, 1, MsgType.PING)

    def test_led_state_payload(self) -> None:
        assert LedState.decode(STATE_A.encode()) == STATE_A
        for bad in (
            b"",
            b"\x00\xff\x00\x40\x02\x01",
            b"\x80\xff\x00\x40\x00",
            b"\x00\x03\x00\x40\x00",
        ):
            with pytest.raises(ValueError):
                LedState.decode(bad)


class Wire:
    """Host and device on a fake clock; ``to_device``/``to_host`` filters model the line."""

    def __init__(self, device: DeviceLink | None = None, host: HostLink | None = None) -> None:
        self.t = 0.0
        self.host = host or HostLink()
        self.device = device or DeviceLink()
        self.to_device: Callable[[bytes], bytes] = lambda b: b
        self.to_host: Callable[[bytes], bytes] = lambda b: b
        self.host.open(self.t)

    def run(self, seconds: float, dt: float = 0.01) -> None:
        end = self.t + seconds
        while self.t < end:
            out = self.host.poll(self.t)
            if out:
                reply = self.device.receive(self.to_device(out))
                if reply:
                    self.host.receive(self.to_host(reply), self.t + 0.002)
            self.t += dt


def test_handshake_then_state_delivered() -> None:
    w = Wire()
    w.host.set_state(STATE_A)
    w.run(0.1)
    assert w.host.state is LinkState.READY and w.host.in_sync
    assert w.device.state == STATE_A and w.device.applied == 1


def test_board_that_greets_on_reset_is_accepted() -> None:
    w = Wire()
    w.host.receive(w.device.hello(), 0.0)
    assert w.host.ready and w.host.device_name == b"wt-ring"


def test_ping_every_second_when_idle() -> None:
    w = Wire()
    w.run(5.0)
    assert 4 <= w.device.pings <= 6


def test_newest_state_wins() -> None:
    w = Wire()
    w.run(0.05)
    w.host.set_state(STATE_A)
    w.host.poll(w.t)  # A in flight, its ACK never arrives
    w.host.set_state(STATE_B)
    w.run(1.0)
    assert w.device.state == STATE_B and w.host.in_sync


def test_dropped_frames_are_resent() -> None:
    w = Wire()
    w.run(0.05)
    dropped = [0]

    def drop_two(b: bytes) -> bytes:
        if dropped[0] < 2:
            dropped[0] += 1
            return b""
        return b

    w.to_device = drop_two
    w.host.set_state(STATE_A)
    w.run(1.0)
    assert w.device.state == STATE_A and w.host.in_sync and w.host.stats["resends"] >= 2


def test_lost_ack_resend_is_harmless() -> None:
    w = Wire()
    w.run(0.05)
    lost = [False]

    def lose_first_ack(b: bytes) -> bytes:
        if not lost[0]:
            lost[0] = True
            return b""
        return b

    w.to_host = lose_first_ack
    w.host.set_state(STATE_A)
    w.run(1.0)
    assert w.device.applied == 2 and w.device.state == STATE_A and w.host.in_sync


def test_crc_error_is_naked_and_resent() -> None:
    w = Wire()
    w.run(0.05)
    hit = [False]

    def flip_crc(b: bytes) -> bytes:
        if not hit[0] and len(b) > 6:
            hit[0] = True
            x = bytearray(b)
            x[-2] ^= 0x01 if x[-2] != 0x01 else 0x03  # last CRC byte, never a 0x00
            return bytes(x)
        return b

    w.to_device = flip_crc
    w.host.set_state(STATE_A)
    w.run(0.05)
    assert w.host.stats["naks"] == 1 and w.device.bad_frames == 1
    assert w.device.state == STATE_A and w.host.in_sync


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_garbage_and_corruption_never_lose_the_state(seed: int) -> None:
    rng = random.Random(seed)

    def noisy(b: bytes) -> bytes:
        r = rng.random()
        if r < 0.2:
            return b""
        if r < 0.4:
            x = bytearray(b)
            x[rng.randrange(len(x))] = rng.randrange(256)
            return bytes(x)
        if r < 0.55:
            return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))) + b
        return b

    w = Wire()
    w.to_device = noisy
    w.to_host = noisy
    states = [LedState(pips=rng.randrange(128), current=None) for _ in range(5)]
    for s in states:
        w.host.set_state(s)
        w.run(0.3)
    w.to_device = w.to_host = lambda b: b
    w.run(3.0)
    assert w.device.state == states[-1] and w.host.in_sync


def test_device_reset_gets_the_state_again() -> None:
    w = Wire()
    w.host.set_state(STATE_A)
    w.run(0.1)
    w.device = DeviceLink()  # unplugged and plugged back: power cycle, LEDs dark
    w.host.open(w.t)  # the port was reopened
    w.run(1.5)
    assert w.device.state == STATE_A and w.host.in_sync


def test_silent_device_sends_hello_again() -> None:
    w = Wire()
    w.host.set_state(STATE_A)
    w.run(0.1)
    w.to_device = lambda b: b""
    w.host.set_state(STATE_B)
    w.run(2.0)
    assert w.host.state is LinkState.WAIT_HELLO and w.host.desired == STATE_B
    w.to_device = lambda b: b
    w.run(2.0)
    assert w.device.state == STATE_B and w.host.in_sync


def test_wrong_protocol_version_refused_with_a_message() -> None:
    w = Wire(device=DeviceLink(version=2))
    w.host.set_state(STATE_A)
    w.run(0.5)
    assert w.host.state is LinkState.INCOMPATIBLE
    assert "version 2" in w.host.error and w.device.state is None
