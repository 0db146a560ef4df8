"""The Pico firmware's framing behaves exactly like ours (its pure part runs under CPython)."""

from __future__ import annotations

import py_compile
import random
from pathlib import Path
from types import ModuleType

import pytest
from cobs import cobs
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.hardware.protocol import (
    DeviceLink,
    LedState,
    MsgType,
    crc16,
    encode_frame,
)

FIRMWARE = Path(__file__).resolve().parents[2] / "raspberry-pi" / "firmware" / "main.py"


@pytest.fixture(scope="module")
def fw(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = tmp_path_factory.mktemp("fw") / "main.pyc"
    py_compile.compile(str(FIRMWARE), cfile=str(out), doraise=True)
    mod = ModuleType("wt_ring_firmware")
    mod.__file__ = str(FIRMWARE)
    # defines only: run() (the hardware loop) is not called when __name__ != "__main__"
    exec(compile(FIRMWARE.read_text(), str(FIRMWARE), "exec"), mod.__dict__)
    return mod


@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.binary(max_size=600))
def test_cobs_and_crc_identical(fw: ModuleType, data: bytes) -> None:
    assert fw.cobs_encode(data) == cobs.encode(data)
    assert fw.cobs_decode(cobs.encode(data)) == data
    assert fw.crc16(data) == crc16(data)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(packet=st.binary(min_size=1, max_size=300).filter(lambda b: 0 not in b))
def test_cobs_decode_accepts_and_refuses_the_same(fw: ModuleType, packet: bytes) -> None:
    try:
        ours = cobs.decode(packet)
    except cobs.DecodeError:
        with pytest.raises(ValueError):
            fw.cobs_decode(packet)
    else:
        assert fw.cobs_decode(packet) == ours


@settings(max_examples=200, deadline=None, derandomize=True)
@given(t=st.integers(0, 255), seq=st.integers(0, 255), payload=st.binary(max_size=100))
def test_frames_identical(fw: ModuleType, t: int, seq: int, payload: bytes) -> None:
    assert fw.encode_frame(t, seq, payload) == encode_frame(t, seq, payload)


def _stream(rng: random.Random) -> bytes:
    out = b""
    for _ in range(rng.randrange(1, 12)):
        r = rng.random()
        seq = rng.randrange(256)
        if r < 0.3:
            st = LedState(pips=rng.randrange(128), current=None, attention=rng.random() < 0.5)
            frame = encode_frame(MsgType.SET_STATE, seq, st.encode())
        elif r < 0.45:
            frame = encode_frame(MsgType.PING, seq)
        elif r < 0.5:
            frame = encode_frame(MsgType.HELLO, 0, b"\x01host")
        elif r < 0.6:
            frame = encode_frame(rng.randrange(6, 256), seq)  # unknown type
        elif r < 0.65:
            frame = encode_frame(MsgType.PING, seq, version=rng.randrange(2, 256))
        elif r < 0.72:
            frame = encode_frame(MsgType.SET_STATE, seq, bytes([1, 5, 0, 9, 1]))  # bad payload
        else:
            frame = encode_frame(MsgType.SET_STATE, seq, LedState(pips=3).encode())
        if rng.random() < 0.2:  # corruption
            b = bytearray(frame)
            b[rng.randrange(len(b) - 1)] = rng.randrange(1, 256)
            frame = bytes(b)
        if rng.random() < 0.15:  # garbage, sometimes overlong
            frame = bytes(rng.randrange(256) for _ in range(rng.choice([5, 40, 300]))) + frame
        out += frame
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.integers(1, 64))
def test_device_replies_identical_on_any_stream(fw: ModuleType, seed: int, chunk: int) -> None:
    rng = random.Random(seed)
    stream = _stream(rng)
    ours, theirs = DeviceLink(), fw.Device()
    for i in range(0, len(stream), chunk):
        part = stream[i : i + chunk]
        assert fw_reply(theirs, part) == ours.receive(part)
    assert theirs.applied == ours.applied
    if ours.state is None:
        assert theirs.state is None
    else:
        s = ours.state
        assert theirs.state == (s.pips, s.current, s.attention, s.brightness, list(s.seats))
    assert fw.Device().hello() == DeviceLink().hello()


def fw_reply(device: object, part: bytes) -> bytes:
    reply: bytes = device.receive(part)  # type: ignore[attr-defined]
    return reply


def test_ring_shows_current_seat_bright_and_pips_white(fw: ModuleType) -> None:
    state = (0b0001000, 1, False, 255, [(0, 90, 255), (230, 20, 20)])
    px = fw.ring_colours(state, 16, True)
    assert px[12] == (230, 20, 20)  # seat 2 (current) full brightness
    assert px[0] == (0, 11, 31)  # seat 1 at an eighth
    assert px[(3 * 16) // 7] == (255, 255, 255)  # the centre pip
    amber = fw.ring_colours((0, None, True, 255, []), 16, True)
    assert amber == [(255, 153, 0)] * 16
    assert fw.ring_colours(None, 16, True) == [(0, 0, 0)] * 16
