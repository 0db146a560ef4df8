"""Heartbeats of the running parts (camera, detector, tracker, hardware, journal, web).

Each part calls :meth:`Heartbeats.beat` when it did its job (a frame read, a frame analysed, a
queue item handled, the LED panel answered, the journal written, the page served). A part that
runs but not as configured (GPIO pins missing and the page's virtual panel standing in, an LED
ring that cannot be opened) beats with ``working=False``: ``/healthz`` and the pages say it is
not ok, with why. The systemd watchdog is fed while every part is alive
(:meth:`Heartbeats.all_fresh`): a missing LED ring is shown, not restarted over and over.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from companion.web.service import HealthReport, PartHealth

PARTS: tuple[str, ...] = ("camera", "detector", "tracker", "hardware", "journal", "web")


@dataclass(frozen=True)
class Beat:
    """The last news of one part: ``at`` (monotonic s, None = never), ``ok`` = the last news was
    good, ``detail`` = a short text for the page ("8.0 fps", "no signal", "missing: …"),
    ``working`` = False when the part runs but not as configured (the detail says how)."""

    at: float | None
    ok: bool
    detail: str
    working: bool = True


class Heartbeats:
    """Thread-safe record of each part's last heartbeat.

    :param stale_s: a part whose last good beat is older than this (seconds) is stale.
    :param clock: monotonic clock in seconds (injected in tests).
    :param parts: the parts that must be fresh for the service to count as healthy.
    """

    def __init__(
        self,
        stale_s: float = 15.0,
        clock: Callable[[], float] = time.monotonic,
        parts: Iterable[str] = PARTS,
    ) -> None:
        self._stale_s = stale_s
        self._clock = clock
        self._lock = threading.Lock()
        self._beats: dict[str, Beat] = {p: Beat(None, False, "not started") for p in parts}

    def beat(self, part: str, detail: str = "", *, working: bool = True) -> None:
        """Record that ``part`` is alive now; ``working=False``: alive but not as configured
        (not ok on the pages and ``/healthz``; ``detail`` says why)."""
        with self._lock:
            self._beats[part] = Beat(self._clock(), True, detail, working)

    def trouble(self, part: str, detail: str) -> None:
        """Record bad news from ``part``: it stays unhealthy until its next :meth:`beat` (the
        time of its last good beat is kept)."""
        with self._lock:
            last = self._beats.get(part, Beat(None, False, ""))
            self._beats[part] = Beat(last.at, False, detail)

    def part_ok(self, part: str) -> bool:
        with self._lock:
            b = self._beats[part]
            fresh = b.at is not None and self._clock() - b.at <= self._stale_s
            return b.ok and b.working and fresh

    def all_ok(self) -> bool:
        """True when every part is alive and works as configured (the pages' health)."""
        return self.report()["ok"]

    def all_fresh(self) -> bool:
        """True when every part's last news was good and younger than ``stale_s`` (alive; a
        part beating with ``working=False`` counts: the systemd watchdog is fed)."""
        now = self._clock()
        with self._lock:
            return all(
                b.ok and b.at is not None and now - b.at <= self._stale_s
                for b in self._beats.values()
            )

    def report(self) -> HealthReport:
        """``{"ok": bool, "parts": {part: {"ok", "age_s", "detail"}}}`` (age None = never; ok =
        alive, fresh and working as configured)."""
        now = self._clock()
        parts: dict[str, PartHealth] = {}
        with self._lock:
            for name, b in self._beats.items():
                age = None if b.at is None else round(now - b.at, 3)
                fresh = b.ok and age is not None and age <= self._stale_s
                detail = b.detail
                if b.ok and not fresh and age is not None:
                    detail = f"stale: silent for {age:.0f} s" + (f" ({detail})" if detail else "")
                parts[name] = {"ok": fresh and b.working, "age_s": age, "detail": detail}
        return {"ok": all(p["ok"] for p in parts.values()), "parts": parts}
