"""One change at the table, one version for the pages: the service's publications coalesced.

A press or a still board often changes what the pages show twice within a few milliseconds:
the dice display at once and then the tracker's result, or the camera's board ("checking…")
and then the tracker's agreement, or the game and then the LEDs of the panel. Published one by
one, each would be a version of its own that lives a few milliseconds: the event streams skip
all but the last (they send the newest snapshot when they wake), polling pages never see it,
and every phone gets two messages where one would do.

So on the service thread a change only marks a publication *pending*; the service loop
publishes it — one new version, the snapshot cache dropped, the pages and listeners woken —
as soon as nothing more is in flight (no input queued for the service thread and the tracker's
thread idle), and at the latest :data:`PUBLISH_WINDOW_S` after the first change it holds, so a
long search never holds back what the camera or the dice already show (the page-never-waits
rule, docs/architecture.md, "Threads"); and never sooner than :data:`MIN_LIFE_S` after the
version before, so every version lives long enough for the streams to send it. Changes made on
any other thread, or while the service is driven without its loop (tests, ``step``), are
published at once.

Each publication also builds the new version's snapshot for every audience a page asked for in
the last minute, and the snapshots of the last :data:`HISTORY_VERSIONS` versions are kept: an
event stream whose thread wakes only after the next version is out (a busy machine) still sends
every version in order (:meth:`~companion.service.core.CompanionService.snapshots_since`).

:class:`Publications` is the part of :class:`~companion.service.core.CompanionService` that
does this; the service creates the attributes declared here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from companion.service.driver import TableMemory
from companion.web.service import Audience, Snapshot

VERSION_BLOCK = 256
"""Versions reserved in the journal at a time: a restart continues above the last reserved
one, so a page that saw version ``n`` before a restart takes every later snapshot, at the cost
of one journal write per this many changes."""

PUBLISH_WINDOW_S = 0.05
"""Changes on the service thread within this many seconds of the first pending one share one
version (s); below what a person notices, above the few ms the tracker's quick answers take."""

MIN_LIFE_S = 0.05
"""A version published by the service loop stays current at least this long (s): a tracker
answer that comes just after the window ran out waits this much rather than replace, within
a few ms, the version the streams are sending."""


HISTORY_VERSIONS = 16
"""Versions whose snapshots are kept for the event streams that have not sent them yet."""

AUDIENCE_IDLE_S = 60.0
"""An audience (public, host, a seat) no page asked a snapshot of for this long (s) is no longer
built at each publication."""


class Publications:
    """Pending and published versions of a ``CompanionService`` (see the module doc). Methods
    named ``_…_locked`` expect the service's condition ``_cond`` held."""

    _cond: threading.Condition
    _version: int
    _version_reserved: int
    _memory: TableMemory | None
    _snap_cache: dict[tuple[int, Audience], Snapshot]
    _audiences: dict[Audience, float]
    _listeners: list[Callable[[Any], None]]
    _clock: Callable[[], float]
    published_at: float

    _pending_since: float | None = None  # monotonic s of the first unpublished change
    _published_mono = 0.0  # monotonic s of the last publication
    _loop_thread: int | None = None  # the service loop's thread while it coalesces

    def _keep(self, key: str, value: object) -> None:
        raise NotImplementedError

    def _snapshot_locked(self, audience: Audience) -> Snapshot:
        raise NotImplementedError

    def _snapshots_since_locked(self, since: int, audience: Audience) -> list[Snapshot]:
        """The kept snapshots of ``audience`` newer than version ``since``, oldest first, the
        current one last (built if it is not kept yet); under ``_cond``."""
        kept = sorted(
            (v, snap)
            for (v, who), snap in self._snap_cache.items()
            if who == audience and since < v < self._version
        )
        return [snap for _, snap in kept] + [self._snapshot_locked(audience)]

    def _bump_locked(self) -> None:
        """Something the pages show changed (under ``_cond``): published at once, or, on the
        service loop's thread, when the loop's in-flight work is done (:meth:`_flush`)."""
        if self._pending_since is None:
            self._pending_since = time.monotonic()
        if self._loop_thread != threading.get_ident():
            self._publish_locked()

    def _next_version_locked(self) -> int:
        """The version under which the changes made so far will be (or were) published: what
        a command's answer reports (under ``_cond``)."""
        return self._version + (1 if self._pending_since is not None else 0)

    def _publish_locked(self) -> None:
        self._pending_since = None
        self._published_mono = time.monotonic()
        self._version += 1
        if self._memory is not None and self._version > self._version_reserved:
            self._version_reserved = self._version + VERSION_BLOCK
            self._keep("version", self._version_reserved)
        self.published_at = self._clock()
        # every version an event stream may still be sending stays; the pages in use get
        # this version's snapshot now, so a stream that wakes late still sends each in order
        oldest = self._version - HISTORY_VERSIONS
        for key in [k for k in self._snap_cache if k[0] <= oldest]:
            del self._snap_cache[key]
        now = time.monotonic()
        for audience, asked in list(self._audiences.items()):
            if now - asked > AUDIENCE_IDLE_S:
                del self._audiences[audience]
            else:
                self._snapshot_locked(audience)
        self._cond.notify_all()
        for fn in self._listeners:
            fn(self)

    def _coalesce(self, on: bool) -> None:
        """Start (on the service loop's thread) or end coalescing; ending publishes what is
        pending."""
        with self._cond:
            self._loop_thread = threading.get_ident() if on else None
            if not on and self._pending_since is not None:
                self._publish_locked()

    def _flush(self, settled: bool) -> None:
        """Publish the pending change when ``settled`` (nothing queued, the tracker idle) or
        when it has waited :data:`PUBLISH_WINDOW_S`, and the last version has been current for
        :data:`MIN_LIFE_S`."""
        with self._cond:
            since = self._pending_since
            now = time.monotonic()
            if since is None or now - self._published_mono < MIN_LIFE_S:
                return
            if settled or now - since >= PUBLISH_WINDOW_S:
                self._publish_locked()

    def _wait_s(self, tick_s: float) -> float:
        """How long the service loop may wait for its next input (s): ``tick_s``, or less
        while a publication is pending (until the last version's :data:`MIN_LIFE_S` is over,
        then until the window closes)."""
        since = self._pending_since
        if since is None:
            return tick_s
        now = time.monotonic()
        life_over = self._published_mono + MIN_LIFE_S
        wake = life_over if now < life_over else since + PUBLISH_WINDOW_S
        return max(0.0, min(tick_s, wake - now))
