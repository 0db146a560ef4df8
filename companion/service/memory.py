"""The service's memory: frames and the detector's per-frame arrays are big and short-lived."""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable


def return_big_buffers_to_the_system() -> bool:
    """glibc only: freed multi-megabyte buffers (frames, the detector's per-frame arrays) go back
    to the system instead of staying in the allocator.

    By default glibc raises its mmap threshold after the first big buffer is freed, so later
    frames are carved from per-thread heaps (arenas) that keep their memory; with several
    threads handling frames the service's RSS grows by tens of MB. A fixed 256 KiB threshold
    and at most 2 arenas keep it down. Returns False where this is not glibc (nothing changed).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # only here: the C library is reached on Linux alone, once at start

        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold, m_arena_max = -3, -8  # <malloc.h>
    return bool(mallopt(m_mmap_threshold, 256 * 1024)) and bool(mallopt(m_arena_max, 2))


class IdleCollector:
    """Full collections of the cyclic garbage collector only while the service is idle.

    A full collection walks every object the process holds — the tracker's belief alone is
    ~200 000 — and took up to 0.3 s on this machine (``companion bench e2e``); left to the
    allocation counters it runs where the most is allocated: inside the tracker's work on a
    still board, straight onto the time the phones wait. Between :meth:`install` and
    :meth:`uninstall` the collector's young generations run as usual (a few ms each) but the
    full collection waits for :meth:`idle` (the service thread with an empty queue), at most
    every ``every_s`` seconds. Objects alive at :meth:`install` (modules, the rules tables, the
    detector, the web app, the restored game) are frozen (``gc.freeze``): reference counting
    still frees them, full collections no longer walk them.

    Process-wide (the collector is): with several services in one process (tests) the first
    :meth:`install` sets it up and the last :meth:`uninstall` puts the thresholds back.
    """

    NEVER = 1 << 30
    _lock = threading.Lock()
    _installed = 0
    _saved_threshold: tuple[int, int, int] = (700, 10, 10)

    def __init__(self, every_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self._clock = clock
        self._on = False
        self._last = clock()
        self.collections = 0

    def install(self) -> None:
        if self._on:
            return
        cls = IdleCollector
        with cls._lock:
            if cls._installed == 0:
                gc.collect()
                gc.freeze()
                cls._saved_threshold = gc.get_threshold()
                young, middle, _ = cls._saved_threshold
                gc.set_threshold(young, middle, self.NEVER)
            cls._installed += 1
        self._on = True
        self._last = self._clock()

    def idle(self, wait_s: float | None = None) -> bool:
        """Run a full collection if ``wait_s`` (default ``every_s``) passed since the last; True
        if it ran. The service calls it with a longer ``wait_s`` after busy inputs, so a table
        that never leaves the queue empty still collects."""
        wait = self.every_s if wait_s is None else wait_s
        if not self._on or self._clock() - self._last < wait:
            return False
        gc.collect()
        self._last = self._clock()
        self.collections += 1
        return True

    def uninstall(self) -> None:
        if not self._on:
            return
        self._on = False
        cls = IdleCollector
        with cls._lock:
            cls._installed -= 1
            if cls._installed == 0:
                gc.set_threshold(*cls._saved_threshold)
                gc.unfreeze()
