"""The optional serial LED ring (a Raspberry Pi Pico with a WS2812 ring, see
``raspberry-pi/firmware/``) driven through pyserial.

:class:`SerialPeripheral` owns one thread that opens the port, runs the sans-I/O
:class:`~companion.hardware.protocol.HostLink`, and reopens the port after an unplug (every
``reconnect_s``). The LED state given to :meth:`SerialPeripheral.show` is never lost: it is kept
as the desired state and sent again after every reconnect or device reset.

Ports: ``"auto"`` picks the first of :func:`find_ports` (``/dev/serial/by-id`` names with
"MicroPython" or "Pico" in them, then USB ports with the Raspberry Pi vendor id 0x2E8A); a path
or a pyserial URL is used as given.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Protocol, TypedDict

import serial
from serial.tools import list_ports

from companion.hardware.panel import COLOURS, PanelState
from companion.hardware.protocol import HostLink, LedState

log = logging.getLogger(__name__)

BAUD = 115200
RASPBERRY_PI_VID = 0x2E8A
BY_ID_MATCH = ("MicroPython", "Pico")


class LinkStatus(TypedDict):
    """:meth:`SerialPeripheral.status`: the port, the link state and its counters."""

    port: str
    open: bool
    link: str  # LinkState value
    in_sync: bool
    connects: int
    disconnects: int
    error: str  # "" = none
    frames_in: int
    bad_frames: int
    resends: int
    naks: int
    hellos: int


class Port(Protocol):
    """The part of ``serial.Serial`` the link uses."""

    def read(self, size: int = 1) -> bytes: ...
    def write(self, data: bytes) -> int | None: ...
    def close(self) -> None: ...

    @property
    def in_waiting(self) -> int: ...


def find_ports(by_id_dir: str = "/dev/serial/by-id") -> list[str]:
    """Candidate ports for the LED ring, best first (stable by-id names preferred)."""
    found = [
        p
        for p in sorted(glob.glob(os.path.join(by_id_dir, "*")))
        if any(m.lower() in os.path.basename(p).lower() for m in BY_ID_MATCH)
    ]
    for info in list_ports.comports():
        if info.vid == RASPBERRY_PI_VID and info.device not in found:
            found.append(info.device)
    return found


def open_port(port: str, timeout_s: float = 0.02) -> Port:
    """Open ``port`` (path or pyserial URL) at 115200 8N1, or the first :func:`find_ports`
    when ``port == "auto"``.

    :raises serial.SerialException: cannot open, or "auto" found nothing."""
    if port == "auto":
        ports = find_ports()
        if not ports:
            raise serial.SerialException("no LED ring found (no MicroPython/Pico serial port)")
        port = ports[0]
    p: Port = serial.serial_for_url(port, baudrate=BAUD, timeout=timeout_s, write_timeout=0.5)
    return p


def led_state(state: PanelState, brightness: int = 64) -> LedState:
    """The ring's view of a panel state."""
    mask = sum(1 << i for i, on in enumerate(state.pips) if on)
    return LedState(
        pips=mask,
        current=state.current,
        attention=state.attention,
        seats=tuple(COLOURS[c] for c in state.seats),
        brightness=brightness,
    )


class SerialPeripheral:
    """LED ring over a serial port (see module doc). ``opener`` builds the port (tests pass an
    in-memory link); ``clock`` is monotonic seconds."""

    def __init__(
        self,
        port: str = "auto",
        opener: Callable[[], Port] | None = None,
        clock: Callable[[], float] = time.monotonic,
        link: HostLink | None = None,
        reconnect_s: float = 1.0,
    ) -> None:
        self.port_name = port
        self.opener = opener or (lambda: open_port(port))
        self.clock = clock
        self.link = link or HostLink()
        self.reconnect_s = reconnect_s
        self.connects = 0
        self.disconnects = 0
        self.last_error = ""
        self._port: Port | None = None
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- LedOutput ---------------------------------------------------------------------------
    def show(self, state: PanelState) -> None:
        """Set the whole LED state (returns at once; sent by the link thread)."""
        self.set_led_state(led_state(state))

    def set_led_state(self, state: LedState) -> None:
        """Set the whole LED state; written at once when the link is idle (pyserial allows a
        write from this thread while the link thread reads), else when the link is free."""
        with self._lock:
            self.link.set_state(state)
            out = self.link.poll(self.clock()) if self._port is not None else b""
        if out:
            self._write(out)

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            port = self._port
            if port is None:
                return
            # on an error the link thread sees it at its next read and reconnects
            with contextlib.suppress(OSError, serial.SerialException):
                port.write(data)

    @property
    def connected(self) -> bool:
        return self._port is not None and self.link.ready

    def status(self) -> LinkStatus:
        """JSON-ready link status for the page/log."""
        with self._lock:
            stats = self.link.stats
            return {
                "port": self.port_name,
                "open": self._port is not None,
                "link": self.link.state.value,
                "in_sync": self.link.in_sync,
                "connects": self.connects,
                "disconnects": self.disconnects,
                "error": self.link.error or self.last_error,
                "frames_in": stats["frames_in"],
                "bad_frames": stats["bad_frames"],
                "resends": stats["resends"],
                "naks": stats["naks"],
                "hellos": stats["hellos"],
            }

    # -- thread ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="led-ring", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the thread and close the port (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        self._drop_port()

    def _drop_port(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            with contextlib.suppress(OSError, serial.SerialException):
                port.close()
        with self._lock:
            self.link.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._port is None:
                try:
                    self._port = self.opener()
                except (OSError, serial.SerialException) as e:
                    self.last_error = f"cannot open {self.port_name}: {e}"
                    self._stop.wait(self.reconnect_s)
                    continue
                self.connects += 1
                self.last_error = ""
                with self._lock:
                    self.link.open(self.clock())
            try:
                self._pump()
            except (OSError, serial.SerialException) as e:
                log.warning("LED ring lost: %s", e)
                self.last_error = f"lost {self.port_name}: {e}"
                self.disconnects += 1
                self._drop_port()
                self._stop.wait(self.reconnect_s)

    def _pump(self) -> None:
        port = self._port
        assert port is not None
        data = port.read(max(1, port.in_waiting))  # blocks up to the port timeout
        now = self.clock()
        with self._lock:
            if data:
                self.link.receive(data, now)
            out = self.link.poll(now)
        if out:
            with self._write_lock:
                port.write(out)
