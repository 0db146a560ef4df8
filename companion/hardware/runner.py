"""The thread that drives the dice machine in real time and pushes its state to the LEDs.

Button edges arrive from any thread (gpiozero callbacks, the virtual panel) through
:meth:`PanelRunner.edge`, which only enqueues. One worker thread feeds them to the pure
:class:`~companion.hardware.dice.DiceMachine` stamped with the injected clock, calls its
``tick`` at its deadlines, shows the result on every LED output, and passes events on.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from companion.hardware.dice import DiceMachine, DiceResult, HardwareEvent
from companion.hardware.panel import UNCHANGED, PanelState, Unchanged, VirtualPanel

log = logging.getLogger(__name__)

Event = HardwareEvent


class LedOutput(Protocol):
    """Something that shows a :class:`PanelState` (gpiozero LEDs, the serial LED ring)."""

    def show(self, state: PanelState) -> None: ...


class PanelRunner:
    """Worker thread around a :class:`DiceMachine` (see module doc).

    ``clock``: monotonic seconds (``time.monotonic``). ``on_result``: called (worker thread) for
    each dice result, e.g. to beep. ``on_applied``: called with ``clock()`` right after the
    LEDs were set (used by the latency bench).
    """

    def __init__(
        self,
        machine: DiceMachine,
        panel: VirtualPanel,
        outputs: list[LedOutput],
        events_out: Callable[[Event], None],
        clock: Callable[[], float] = time.monotonic,
        on_result: Callable[[DiceResult], None] | None = None,
    ) -> None:
        self.machine = machine
        self.panel = panel
        self.outputs = outputs
        self.events_out = events_out
        self.clock = clock
        self.on_result = on_result
        self.on_applied: Callable[[float], None] | None = None
        self._q: queue.SimpleQueue[tuple[float, str, bool]] = queue.SimpleQueue()
        self._lock = threading.RLock()
        self._scheduled: list[tuple[float, int, str, bool]] = []
        self._seq = itertools.count()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown: PanelState | None = None

    # -- any thread --------------------------------------------------------------------------
    def edge(self, button: str, pressed: bool) -> None:
        """Record a raw edge now; returns at once (safe from gpiozero's callback thread)."""
        self._q.put((self.clock(), button, pressed))

    def inject(self, button: str, pressed: bool, delay_s: float) -> None:
        """A virtual edge ``delay_s`` seconds from now."""
        if delay_s <= 0:
            self.edge(button, pressed)
            return
        with self._lock:
            heapq.heappush(
                self._scheduled, (self.clock() + delay_s, next(self._seq), button, pressed)
            )
        self._q.put((self.clock(), "", False))  # wake the worker to re-plan

    def call(self, fn: Callable[[float], list[Event]]) -> None:
        """Run ``fn(now)`` on the machine under the lock (errors propagate to the caller with
        the machine unchanged), then publish."""
        now = self.clock()
        events: list[Event] = []
        try:
            with self._lock:
                events += self._drain_locked(now, [])
                try:
                    events += fn(max(now, self.machine.now))
                finally:
                    self._publish_locked()
        finally:
            self._emit(events)  # outside the lock; edges drained before fn still count
            self._q.put((self.clock(), "", False))

    def update_panel(
        self,
        *,
        seats: tuple[str, ...] | None = None,
        current: int | None | Unchanged = UNCHANGED,
        attention: bool | None = None,
    ) -> None:
        """Change the seats, the current seat or the attention LED of the panel state (what is
        not given stays) and show them."""
        with self._lock:
            self.panel.update(seats=seats, current=current, attention=attention)
            self._publish_locked()

    # -- worker ------------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            self._publish_locked()
        self._thread = threading.Thread(target=self._run, name="dice-panel", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._q.put((self.clock(), "", False))
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def step(self, item: tuple[float, str, bool] | None = None) -> None:
        """Process ``item``, every queued edge and everything due by now. Public for tests
        that drive the runner without its thread."""
        now = self.clock()
        with self._lock:
            events = self._drain_locked(now, [] if item is None else [item])
            events += self.machine.tick(max(now, self.machine.now))
            self._publish_locked()
        self._emit(events)

    def _drain_locked(self, now: float, items: list[tuple[float, str, bool]]) -> list[Event]:
        # every edge stamped up to now goes in before the machine's clock moves to now: a late
        # worker must not see a release and the next press closer together than they were
        while True:
            try:
                items.append(self._q.get_nowait())
            except queue.Empty:
                break
        while self._scheduled and self._scheduled[0][0] <= now:
            t, _, button, pressed = heapq.heappop(self._scheduled)
            items.append((t, button, pressed))
        events: list[Event] = []
        for t, button, pressed in sorted(items, key=lambda i: i[0]):
            if button:
                events += self._feed(t, button, pressed)
        return events

    def _feed(self, t: float, button: str, pressed: bool) -> list[Event]:
        try:
            return self.machine.edge(max(t, self.machine.now), button, pressed)
        except ValueError:
            log.exception("dropped edge of unknown button %r", button)
            return []

    def _timeout(self) -> float | None:
        with self._lock:
            times = [t for t in (self.machine.next_deadline(),) if t is not None]
            if self._scheduled:
                times.append(self._scheduled[0][0])
        if not times:
            return None
        return max(0.0, min(times) - self.clock())

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                item: tuple[float, str, bool] | None = self._q.get(timeout=self._timeout())
            except queue.Empty:
                item = None
            try:
                self.step(item)
            except Exception:  # a bug must not kill the buttons; keep the state, log it
                log.exception("dice panel step failed")

    def _publish_locked(self) -> None:
        state = replace(self.panel.state, pips=self.machine.pips, dice=self.machine.status())
        self.panel.set_state(state)
        if self._shown is None or not self._shown.leds_equal(state):
            for out in self.outputs:
                try:
                    out.show(state)
                except Exception:  # one broken output (closed pin, lost port) must not
                    # stop the dice or the other outputs: log it, keep going (like a thread top)
                    log.exception("LED output %r failed", out)
            self._shown = state
            if self.on_applied is not None:
                self.on_applied(self.clock())

    def _emit(self, events: list[Event]) -> None:
        for ev in events:
            if ev["type"] == "dice" and self.on_result is not None:
                self.on_result(ev)
            self.events_out(ev)
