"""A fake LED-ring device speaking the serial protocol, and links to reach it without a board.

* :class:`MemoryLink` — an in-memory serial cable (like pyserial's ``loop://`` but with two
  ends) with faults to inject: dropped or corrupted frames, garbage, unplug/replug.
* :class:`PtyLink` — a real pseudo-terminal pair (``os.openpty``): the host opens
  :attr:`PtyLink.port_name` with pyserial like a real ``/dev/ttyACM0``.
* :class:`FakeRingDevice` — a thread running :class:`~companion.hardware.protocol.DeviceLink`
  on a device end; it greets with HELLO when started (like a board that resets on open) and
  again after a replug (power cycle: its LED state is gone until the host resends it).
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections.abc import Callable
from typing import Protocol

import serial

from companion.hardware.protocol import DeviceLink, LedState


class DeviceEnd(Protocol):
    def read(self, size: int = 1) -> bytes: ...
    def write(self, data: bytes) -> int | None: ...


class _Pipe:
    def __init__(self) -> None:
        self.buf = bytearray()
        self.cond = threading.Condition()

    def put(self, data: bytes) -> None:
        with self.cond:
            self.buf += data
            self.cond.notify_all()

    def get(self, size: int, timeout: float, alive: Callable[[], bool]) -> bytes:
        with self.cond:
            if not self.buf:
                self.cond.wait(timeout)
            if not alive():
                raise serial.SerialException("device disconnected")
            data = bytes(self.buf[:size])
            del self.buf[:size]
            return data


class MemoryPort:
    """One end of a :class:`MemoryLink`; quacks like ``serial.Serial`` (read/write/
    in_waiting/close). Reads wait up to ``timeout`` s."""

    def __init__(self, link: MemoryLink, rx: _Pipe, is_host: bool, timeout: float) -> None:
        self.link = link
        self.rx = rx
        self.is_host = is_host
        self.timeout = timeout
        self.generation = link.generation
        self.closed = False

    def _alive(self) -> bool:
        if self.closed:
            return False
        return not self.is_host or (self.link.plugged and self.generation == self.link.generation)

    @property
    def in_waiting(self) -> int:
        if not self._alive():
            raise serial.SerialException("device disconnected")
        return len(self.rx.buf)

    def read(self, size: int = 1) -> bytes:
        if not self._alive():
            raise serial.SerialException("device disconnected")
        return self.rx.get(size, self.timeout, self._alive)

    def write(self, data: bytes) -> int:
        if not self._alive():
            raise serial.SerialException("device disconnected")
        self.link._transfer(data, to_device=self.is_host)
        return len(data)

    def close(self) -> None:
        self.closed = True


class MemoryLink:
    """In-memory cable between a host port and a device end, with fault injection.

    ``opener()`` gives a new host port (raises ``SerialException`` while unplugged), so it can
    be passed to :class:`~companion.hardware.serial_link.SerialPeripheral`."""

    def __init__(self, timeout: float = 0.01) -> None:
        self.timeout = timeout
        self.to_device = _Pipe()
        self.to_host = _Pipe()
        self.plugged = True
        self.generation = 0
        self.device = MemoryPort(self, self.to_device, is_host=False, timeout=timeout)
        self.drop_frames = 0  # host -> device frames to drop
        self.corrupt_frames = 0  # host -> device frames to corrupt (one byte flipped)
        self.drop_replies = 0  # device -> host frames to drop
        self.on_replug: Callable[[], None] | None = None
        self._partial = {True: bytearray(), False: bytearray()}
        self._lock = threading.Lock()

    def opener(self) -> MemoryPort:
        if not self.plugged:
            raise serial.SerialException("no such port (unplugged)")
        return MemoryPort(self, self.to_host, is_host=True, timeout=self.timeout)

    def inject(self, data: bytes, to_device: bool = True) -> None:
        """Raw bytes on the line (garbage), bypassing the fault filters."""
        (self.to_device if to_device else self.to_host).put(data)

    def unplug(self) -> None:
        """Pull the cable: host reads/writes fail, bytes in flight are lost."""
        self.plugged = False
        self.generation += 1
        with self._lock:
            for p in (self.to_device, self.to_host):
                with p.cond:
                    p.buf.clear()
                    p.cond.notify_all()
            for b in self._partial.values():
                b.clear()

    def replug(self) -> None:
        """Plug it back: the device powers up again (``on_replug``) and the port reappears."""
        self.plugged = True
        if self.on_replug is not None:
            self.on_replug()

    def _transfer(self, data: bytes, to_device: bool) -> None:
        if not self.plugged:
            return
        with self._lock:
            buf = self._partial[to_device]
            buf += data
            out = bytearray()
            while (i := buf.find(b"\x00")) >= 0:
                frame = bytes(buf[: i + 1])
                del buf[: i + 1]
                if to_device and self.drop_frames > 0 and len(frame) > 1:
                    self.drop_frames -= 1
                    continue
                if not to_device and self.drop_replies > 0 and len(frame) > 1:
                    self.drop_replies -= 1
                    continue
                if to_device and self.corrupt_frames > 0 and len(frame) > 3:
                    self.corrupt_frames -= 1
                    b = bytearray(frame)
                    b[len(b) // 2] ^= 0x5A
                    if b[len(b) // 2] == 0:
                        b[len(b) // 2] = 0x01
                    frame = bytes(b)
                out += frame
        (self.to_device if to_device else self.to_host).put(bytes(out))


class PtyLink:
    """A pseudo-terminal pair: the host opens :attr:`port_name`; the device end reads and
    writes the master side. Raw mode, so bytes pass unchanged."""

    def __init__(self, timeout: float = 0.01) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.port_name = os.ttyname(self._slave)
        self.timeout = timeout
        self.device = self

    def read(self, size: int = 1) -> bytes:
        r, _, _ = select.select([self.master], [], [], self.timeout)
        if not r:
            return b""
        try:
            return os.read(self.master, size)
        except OSError:  # EIO while no one holds the other side open
            time.sleep(self.timeout)
            return b""

    def write(self, data: bytes) -> int:
        return os.write(self.master, data)

    def close(self) -> None:
        for fd in (self.master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)


class FakeRingDevice:
    """The LED-ring board, simulated: a thread answering the protocol on ``end``.

    ``state`` is the LED state it shows (None after power-up until the host sends one)."""

    def __init__(self, end: DeviceEnd, hello_on_start: bool = True) -> None:
        self.end = end
        self.hello_on_start = hello_on_start
        self.link = DeviceLink()
        self.boots = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def state(self) -> LedState | None:
        return self.link.state

    def power_up(self) -> None:
        """Boot: LED state lost, HELLO sent."""
        with self._lock:
            self.link = DeviceLink()
            self.boots += 1
            if self.hello_on_start:
                self.end.write(self.link.hello())

    def start(self) -> FakeRingDevice:
        self.power_up()
        self._thread = threading.Thread(target=self._run, name="fake-ring", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.end.read(256)
            except serial.SerialException:
                continue
            if data:
                with self._lock:
                    reply = self.link.receive(data)
                if reply:
                    self.end.write(reply)
