"""Serial LED-ring protocol, version 1 (specified in ``raspberry-pi/firmware/PROTOCOL.md``).

Frame on the wire: ``COBS(version, seq, type, payload…, crc_hi, crc_lo) 0x00`` where the CRC
is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF; ``binascii.crc_hqx(data, 0xFFFF)``) over
version, seq, type and payload. COBS comes from the ``cobs`` package.

This module is sans-I/O: :class:`FrameReader` turns a byte stream into frames (resyncing on
the next 0x00 after garbage), :class:`HostLink` is the host's protocol engine: feed it bytes
and the time, ask it what to send. :class:`DeviceLink` is the device side (used by the fake
device; the MicroPython firmware implements the same behaviour).
"""

from __future__ import annotations

import binascii
import enum
from dataclasses import dataclass

from cobs import cobs  # type: ignore[import-untyped]

VERSION = 1
MAX_FRAME = 250  # bytes of an encoded frame, delimiter excluded
DEVICE_NAME = b"wt-ring"


class MsgType(enum.IntEnum):
    HELLO = 0x01  # host: "who are you?" / device: "ready", payload = [version] + name
    PING = 0x02  # host -> device, 1 Hz; answered by ACK
    ACK = 0x03  # device -> host, seq = acknowledged seq
    NAK = 0x04  # device -> host, seq = refused seq, payload = [reason]
    SET_STATE = 0x05  # host -> device, payload = whole LED state (idempotent)


class Nak(enum.IntEnum):
    CRC = 1
    BAD_PAYLOAD = 2
    UNKNOWN_TYPE = 3
    BAD_VERSION = 4


class FrameError(ValueError):
    """A packet that is not a valid frame (COBS, length or CRC); the reason is the message.
    ``header`` holds ``(version, seq, type)`` when at least that much decoded."""

    def __init__(self, reason: str, header: tuple[int, int, int] | None = None) -> None:
        super().__init__(reason)
        self.header = header


@dataclass(frozen=True)
class Frame:
    version: int
    seq: int
    type: int
    payload: bytes = b""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data``."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(msg_type: int, seq: int, payload: bytes = b"", version: int = VERSION) -> bytes:
    """One frame, COBS-encoded, with the trailing 0x00 delimiter.

    :raises ValueError: seq/type/version outside 0-255 or a frame longer than MAX_FRAME."""
    for name, v in (("seq", seq), ("type", msg_type), ("version", version)):
        if not 0 <= v <= 255:
            raise ValueError(f"{name} must be 0-255, got {v}")
    body = bytes((version, seq, msg_type)) + payload
    body += crc16(body).to_bytes(2, "big")
    packet: bytes = cobs.encode(body)
    if len(packet) > MAX_FRAME:
        raise ValueError(f"frame of {len(packet)} bytes exceeds {MAX_FRAME}")
    return packet + b"\x00"


def decode_frame(packet: bytes) -> Frame:
    """Decode one packet (delimiter removed).

    :raises FrameError: bad COBS, too short, or CRC mismatch."""
    try:
        body = cobs.decode(packet)
    except cobs.DecodeError as e:
        raise FrameError(f"bad COBS: {e}") from None
    if len(body) < 5:
        raise FrameError(f"frame too short ({len(body)} bytes)")
    header = (body[0], body[1], body[2])
    if crc16(body[:-2]) != int.from_bytes(body[-2:], "big"):
        raise FrameError("CRC mismatch", header)
    return Frame(body[0], body[1], body[2], bytes(body[3:-2]))


class FrameReader:
    """Split a byte stream at 0x00 into frames. Garbage, overlong runs and bad frames become
    :class:`FrameError` items; the reader always resyncs at the next delimiter."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._overflow = False

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        """Bytes in; the frames (or errors) completed by them out. Empty packets (two 0x00 in a
        row, used to flush the line) are skipped silently."""
        out: list[Frame | FrameError] = []
        start = 0
        while True:
            i = data.find(b"\x00", start)
            if i < 0:
                self._append(data[start:])
                return out
            self._append(data[start:i])
            start = i + 1
            if self._overflow:
                out.append(FrameError("overlong packet dropped"))
            elif self._buf:
                try:
                    out.append(decode_frame(bytes(self._buf)))
                except FrameError as e:
                    out.append(e)
            self._buf.clear()
            self._overflow = False

    def _append(self, chunk: bytes) -> None:
        if self._overflow:
            return
        if len(self._buf) + len(chunk) > MAX_FRAME:
            self._buf.clear()
            self._overflow = True
        else:
            self._buf += chunk


@dataclass(frozen=True)
class LedState:
    """The whole LED state sent to the ring (idempotent: sending it twice is harmless).

    ``pips``: 7-bit mask (bit i = PIPS[i]); ``current``: seat index or None; ``attention``:
    blink; ``seats``: RGB per seat (0-255 each); ``brightness``: 0-255."""

    pips: int = 0
    current: int | None = None
    attention: bool = False
    seats: tuple[tuple[int, int, int], ...] = ()
    brightness: int = 64

    def encode(self) -> bytes:
        """Payload: pips, current (0xFF none), attention, brightness, n, n × (r, g, b)."""
        out = bytes(
            (
                self.pips & 0x7F,
                0xFF if self.current is None else self.current,
                int(self.attention),
                self.brightness,
                len(self.seats),
            )
        )
        for rgb in self.seats:
            out += bytes(rgb)
        return out

    @classmethod
    def decode(cls, payload: bytes) -> LedState:
        """:raises ValueError: malformed payload (length, ranges)."""
        if len(payload) < 5:
            raise ValueError("LED state too short")
        pips, current, attention, brightness, n = payload[:5]
        if len(payload) != 5 + 3 * n or n > 6:
            raise ValueError("LED state: seat count and length disagree")
        if pips > 0x7F or attention > 1 or (current != 0xFF and current >= n):
            raise ValueError("LED state: field out of range")
        seats = tuple(
            (payload[5 + 3 * i], payload[6 + 3 * i], payload[7 + 3 * i]) for i in range(n)
        )
        return cls(pips, None if current == 0xFF else current, bool(attention), seats, brightness)


class LinkState(enum.Enum):
    CLOSED = "closed"
    WAIT_HELLO = "wait-hello"
    READY = "ready"
    INCOMPATIBLE = "incompatible"


@dataclass
class _InFlight:
    seq: int
    type: int
    payload: bytes
    sent_at: float
    tries: int
    state: LedState | None


class HostLink:
    """Host side of the protocol, sans-I/O. Times are seconds from any monotonic clock.

    * :meth:`open` after the port opened: sends HELLO and waits for the device's HELLO (a board
      that resets on open sends one when ready; others answer ours). HELLO is repeated every
      ``hello_interval_s``.
    * Stop-and-wait: one frame in flight, resent after ``ack_timeout_s`` or on NAK;
      after ``max_tries`` sends the device is taken as gone: back to WAIT_HELLO.
    * The LED state is a whole-state SET_STATE: only the newest desired state is sent; a device
      HELLO at any time (it reset) makes the host send the state again.
    * PING every ``ping_interval_s`` when idle.

    Counters in :attr:`stats`: ``frames_in``, ``bad_frames``, ``resends``, ``naks``, ``hellos``.
    """

    def __init__(
        self,
        ack_timeout_s: float = 0.2,
        ping_interval_s: float = 1.0,
        hello_interval_s: float = 1.0,
        max_tries: int = 5,
    ) -> None:
        self.ack_timeout_s = ack_timeout_s
        self.ping_interval_s = ping_interval_s
        self.hello_interval_s = hello_interval_s
        self.max_tries = max_tries
        self.state = LinkState.CLOSED
        self.desired: LedState | None = None
        self.acked: LedState | None = None
        self.device_version: int | None = None
        self.device_name = b""
        self.error = ""
        self.reader = FrameReader()
        self._seq = 0
        self._inflight: _InFlight | None = None
        self._last_hello = float("-inf")
        self._last_ping = float("-inf")
        self._out = bytearray()
        self.stats = {"frames_in": 0, "bad_frames": 0, "resends": 0, "naks": 0, "hellos": 0}
        self.round_trips: list[float] = []

    @property
    def ready(self) -> bool:
        return self.state is LinkState.READY

    @property
    def in_sync(self) -> bool:
        """True when the device has acknowledged the newest desired state."""
        return self.ready and self.desired == self.acked and self._inflight is None

    def open(self, now: float) -> None:
        """The port was (re)opened: forget the device, greet it."""
        self.state = LinkState.WAIT_HELLO
        self.reader = FrameReader()
        self._inflight = None
        self.acked = None
        self._last_hello = float("-inf")
        self._out.clear()

    def close(self) -> None:
        self.state = LinkState.CLOSED
        self._inflight = None
        self.acked = None

    def set_state(self, state: LedState) -> None:
        """The newest LED state to show; sent when the link is free."""
        self.desired = state

    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the device."""
        for item in self.reader.feed(data):
            if isinstance(item, FrameError):
                self.stats["bad_frames"] += 1
                continue
            self.stats["frames_in"] += 1
            self._frame(item, now)

    def _frame(self, f: Frame, now: float) -> None:
        if f.type == MsgType.HELLO:
            self.stats["hellos"] += 1
            version = f.payload[0] if f.payload else f.version
            self.device_version = version
            self.device_name = f.payload[1:]
            if version != VERSION:
                self.state = LinkState.INCOMPATIBLE
                self.error = f"device speaks protocol version {version}, we speak {VERSION}"
                return
            self.state = LinkState.READY  # a (re)started device: its LEDs are unknown
            self.acked = None
            self._inflight = None
            self._last_ping = now
            return
        if f.version != VERSION or self._inflight is None or f.seq != self._inflight.seq:
            return  # stale or foreign: ignore
        if f.type == MsgType.ACK:
            self.round_trips.append(now - self._inflight.sent_at)
            if self._inflight.type == MsgType.SET_STATE:
                self.acked = self._inflight.state
            self._inflight = None
        elif f.type == MsgType.NAK:
            self.stats["naks"] += 1
            self._send_inflight(now, resend=True)

    def _next_seq(self) -> int:
        self._seq = (self._seq + 1) % 256
        return self._seq

    def _send_inflight(self, now: float, resend: bool) -> None:
        f = self._inflight
        assert f is not None
        if resend:
            self.stats["resends"] += 1
        f.tries += 1
        f.sent_at = now
        self._out += encode_frame(f.type, f.seq, f.payload)

    def _send(self, msg_type: int, payload: bytes, now: float, state: LedState | None) -> None:
        self._inflight = _InFlight(self._next_seq(), msg_type, payload, now, 0, state)
        self._send_inflight(now, resend=False)

    def poll(self, now: float) -> bytes:
        """Everything to write now (may be empty)."""
        if self.state is LinkState.WAIT_HELLO and now - self._last_hello >= self.hello_interval_s:
            self._last_hello = now
            # a leading delimiter ends whatever half frame the device may hold
            self._out += b"\x00" + encode_frame(MsgType.HELLO, 0, bytes((VERSION,)) + b"host")
        if self.state is LinkState.READY:
            f = self._inflight
            if f is not None and now - f.sent_at >= self.ack_timeout_s:
                if f.tries >= self.max_tries:
                    self.state = LinkState.WAIT_HELLO  # device gone or reset silently
                    self._inflight = None
                    self.acked = None
                    self._last_hello = float("-inf")
                    return self.poll(now)
                self._send_inflight(now, resend=True)
            if self._inflight is None:
                if self.desired is not None and self.desired != self.acked:
                    self._send(MsgType.SET_STATE, self.desired.encode(), now, self.desired)
                elif now - self._last_ping >= self.ping_interval_s:
                    self._last_ping = now
                    self._send(MsgType.PING, b"", now, None)
        out = bytes(self._out)
        self._out.clear()
        return out

    def next_deadline(self) -> float:
        """When :meth:`poll` next has something to do (s)."""
        if self.state is LinkState.WAIT_HELLO:
            return self._last_hello + self.hello_interval_s
        if self.state is LinkState.READY:
            if self._inflight is not None:
                return self._inflight.sent_at + self.ack_timeout_s
            if self.desired is not None and self.desired != self.acked:
                return float("-inf")
            return self._last_ping + self.ping_interval_s
        return float("inf")


class DeviceLink:
    """Device side, sans-I/O (the fake device; ``firmware/main.py`` behaves the same).

    :meth:`hello` is what a device sends when ready; :meth:`receive` returns the reply bytes.
    ``state`` is the LED state shown; ``applied`` counts SET_STATE frames applied."""

    def __init__(self, version: int = VERSION, name: bytes = DEVICE_NAME) -> None:
        self.version = version
        self.name = name
        self.reader = FrameReader()
        self.state: LedState | None = None
        self.applied = 0
        self.pings = 0
        self.bad_frames = 0

    def hello(self) -> bytes:
        return encode_frame(MsgType.HELLO, 0, bytes((self.version,)) + self.name, self.version)

    def receive(self, data: bytes) -> bytes:
        out = b""
        for item in self.reader.feed(data):
            if isinstance(item, FrameError):
                self.bad_frames += 1
                if item.header is not None and str(item) == "CRC mismatch":
                    out += encode_frame(MsgType.NAK, item.header[1], bytes((Nak.CRC,)))
                continue
            out += self._frame(item)
        return out

    def _frame(self, f: Frame) -> bytes:
        if f.type == MsgType.HELLO:  # answered whatever the version: that is how it is told
            return self.hello()
        if f.version != self.version:
            return encode_frame(MsgType.NAK, f.seq, bytes((Nak.BAD_VERSION,)), self.version)
        if f.type == MsgType.PING:
            self.pings += 1
            return encode_frame(MsgType.ACK, f.seq)
        if f.type == MsgType.SET_STATE:
            try:
                self.state = LedState.decode(f.payload)
            except ValueError:
                return encode_frame(MsgType.NAK, f.seq, bytes((Nak.BAD_PAYLOAD,)))
            self.applied += 1
            return encode_frame(MsgType.ACK, f.seq)
        return encode_frame(MsgType.NAK, f.seq, bytes((Nak.UNKNOWN_TYPE,)))
