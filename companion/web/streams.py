"""Open event streams of the phone pages: how many, whose, and which ones are dead.

Every open stream holds one waitress worker thread, so their number is bounded
(:func:`stream_capacity`). Three rules keep the slots for the phones that read them:

* **One stream per page of a device.** A stream is keyed by the device (its CSRF cookie, or
  its address without one), the audience and the page's tab id: a page that reconnects
  replaces its own older stream at once instead of waiting for that one to time out, and one
  device (by cookie) holds at most :data:`PER_DEVICE` streams (its oldest is ended first).
* **Dead and stalled streams end quickly.** Waitress is asked to keep reading a connection
  while its request runs (``channel_request_lookahead``), so a phone that closes its page is
  seen at the stream's next check (about a second); a stream whose written bytes stay unsent
  or unacknowledged for ``write_timeout_s`` (a phone that went to sleep or left the network,
  or a client that stopped reading) is stalled and ends too.
* **A new phone is never locked out.** With every slot taken, a new stream takes the slot of
  the stream least recently seen alive (older than ``min_age_s``; stalled ones first); the
  ended page is told (``event: evicted``) to poll and to try streaming again later. Only when
  every stream is younger than ``min_age_s`` is a new stream refused (503; the page polls and
  retries), so pages cannot take each other's slots in a loop.
"""

from __future__ import annotations

import fcntl
import termios
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

PER_DEVICE = 4
"""Streams one device (browser) may hold at once: a few tabs of the pages."""

REQUEST_THREADS = 4
"""Waitress worker threads kept free of event streams for the ordinary requests."""

Probe = Callable[[], int]
"""Bytes a stream has written that its client has not yet received (acknowledged)."""


def stream_capacity(threads: int) -> int:
    """Event streams at most for ``threads`` waitress worker threads (the rest serve requests)."""
    return max(1, threads - REQUEST_THREADS)


class StreamsFull(Exception):
    """Every slot holds a stream younger than the registry's ``min_age_s``: poll instead."""


@dataclass(eq=False)
class StreamSlot:
    """One open event stream: its key and the signs of life of its client.

    ``ended`` is set when the registry takes the slot back (``reason`` says why: ``replaced``,
    ``evicted``); the stream's loop then ends.
    """

    key: tuple[str, str, str]
    device: str
    opened: float
    probe: Probe | None = None
    last_alive: float = 0.0
    pending_since: float | None = None
    reason: str = ""
    ended: threading.Event = field(default_factory=threading.Event)

    def stalled(self, now: float, write_timeout_s: float) -> bool:
        """Check the client's signs of life at ``now`` (monotonic s): True when bytes written to
        it have stayed unsent or unacknowledged for more than ``write_timeout_s`` seconds."""
        if self.probe is None:
            return False
        try:
            pending = self.probe()
        except (OSError, ValueError, AttributeError):
            return False  # the socket is going away: the next write ends the stream
        if pending <= 0:
            self.pending_since = None
            self.last_alive = now
            return False
        if self.pending_since is None:
            self.pending_since = now
        return now - self.pending_since > write_timeout_s


class StreamRegistry:
    """The open event streams of one application (thread-safe).

    :param capacity: streams at most (:func:`stream_capacity` of the waitress threads).
    :param per_device: streams one device may hold (:data:`PER_DEVICE`).
    :param min_age_s: a stream younger than this is never evicted for a new one (s).
    :raises ValueError: a capacity or per-device limit below 1, a negative age.
    """

    def __init__(self, capacity: int, per_device: int = PER_DEVICE, min_age_s: float = 10.0):
        if capacity < 1 or per_device < 1:
            raise ValueError("streams: capacity and per-device limit must be at least 1")
        if min_age_s < 0:
            raise ValueError("streams: min_age_s must not be negative")
        self.capacity = capacity
        self.per_device = per_device
        self.min_age_s = min_age_s
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str, str], StreamSlot] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)

    def open(
        self, key: tuple[str, str, str], device: str, probe: Probe | None = None
    ) -> StreamSlot:
        """Register a new stream under ``key`` (device, audience, tab), ending the streams it
        replaces: the same key, the ``device``'s oldest beyond ``per_device`` (``""``: a
        device not known by cookie, no such limit), and with every slot taken the one least
        recently seen alive.

        :raises StreamsFull: every slot holds a stream younger than ``min_age_s``.
        """
        now = time.monotonic()
        slot = StreamSlot(key, device, now, probe, last_alive=now)
        with self._lock:
            old = self._open.pop(key, None)
            if old is not None:
                self._end(old, "replaced")
            mine = sorted(
                (s for s in self._open.values() if device and s.device == device),
                key=lambda s: s.opened,
            )
            for s in mine[: max(0, len(mine) - self.per_device + 1)]:
                self._end(self._open.pop(s.key), "replaced")
            if len(self._open) >= self.capacity:
                victim = self._victim(now)
                if victim is None:
                    raise StreamsFull("every stream slot is taken by a page that just opened")
                self._end(self._open.pop(victim.key), "evicted")
            self._open[key] = slot
        return slot

    def close(self, slot: StreamSlot) -> None:
        """The stream ended (its client left or it was ended): free its slot (idempotent)."""
        with self._lock:
            if self._open.get(slot.key) is slot:
                del self._open[slot.key]
        slot.ended.set()

    def end_all(self) -> None:
        """End every open stream (the server is stopping)."""
        with self._lock:
            for s in self._open.values():
                self._end(s, "stopping")
            self._open.clear()

    def _victim(self, now: float) -> StreamSlot | None:
        """The stream to give up its slot: stalled ones first, then the one least recently
        seen alive, then the oldest; never one younger than ``min_age_s``."""
        old = [s for s in self._open.values() if now - s.opened >= self.min_age_s]
        if not old:
            return None
        return min(
            old,
            key=lambda s: (s.pending_since is None, s.last_alive, s.opened),
        )

    @staticmethod
    def _end(slot: StreamSlot, reason: str) -> None:
        slot.reason = reason
        slot.ended.set()


# ------------------------------------------------------------------------------------------
# what waitress tells about a stream's connection


def client_gone(environ: Mapping[str, object]) -> Callable[[], bool]:
    """A check "has the client closed the connection?" for a request's WSGI ``environ``
    (waitress with ``channel_request_lookahead`` > 0); always False under other servers."""
    check = environ.get("waitress.client_disconnected")
    if callable(check):
        return lambda: bool(check())
    return lambda: False


def waitress_probe(environ: Mapping[str, object]) -> Probe | None:
    """A :data:`Probe` for a request served by waitress: the bytes still in waitress's output
    buffer plus those in the kernel's send queue not yet acknowledged by the client (Linux
    ``TIOCOUTQ``). None when the request is not served by waitress (the test client)."""
    check = environ.get("waitress.client_disconnected")
    channel = getattr(check, "__self__", None)  # the connection's waitress channel
    sock = getattr(channel, "socket", None)
    if channel is None or sock is None or not hasattr(channel, "total_outbufs_len"):
        return None

    def pending() -> int:
        if not getattr(channel, "connected", False):
            return 0
        buffered = int(getattr(channel, "total_outbufs_len", 0))
        queued = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        return buffered + int.from_bytes(queued, "little", signed=True)

    return pending
