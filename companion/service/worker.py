"""The tracker's own thread: the search runs beside the service thread, never in front of it.

The service thread hands every game input (a still board, dice, DONE, UNDO, a phone's game
command) to a :class:`TrackerWorker` and goes on at once: the pages get the camera's confirmed
reading of the board straight away (marked "checking…", docs/architecture.md, "Threads"); the
buttons and the pages never wait for the tracker's search. The worker gives the inputs to the
game driver **one by one, in the order they came** (the tracker's belief depends on that order;
none is dropped or merged) and puts each result back on the service's queue as a
:class:`~companion.service.inputs.TrackedInput`, which the service thread publishes.

A game's inputs carry the game's ``generation``: inputs queued for a game that a new setup has
replaced are not given to the new game (a waiting phone command is refused, 409).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from companion.service.inputs import CandidateInput, GameInput

log = logging.getLogger(__name__)

TrackJob = tuple["GameInput | CandidateInput", int, bool]
"""One input for the driver, the generation of the game it was meant for, and whether it was
journaled ahead (``received``, docs/architecture.md, "Restart")."""


class TrackerWorker:
    """Runs ``handle(item, generation, received)`` for each queued job, in order, on its own
    thread.

    :param handle: the service's driver call (it posts the result back itself); an exception
        it lets out is logged and the worker goes on with the next job.
    """

    def __init__(self, handle: Callable[[GameInput | CandidateInput, int, bool], None]) -> None:
        self._handle = handle
        self._jobs: queue.Queue[TrackJob | None] = queue.Queue()
        self._lock = threading.Lock()
        self._backlog = 0  # queued + in progress
        self._thread: threading.Thread | None = None

    def start(self) -> TrackerWorker:
        t = threading.Thread(target=self._run, name="tracker", daemon=True)
        t.start()
        self._thread = t
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        """Let the jobs queued so far finish, then end the thread (waits ``timeout_s`` at
        most: a search in progress is not interrupted)."""
        self._jobs.put(None)
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)

    def put(
        self, item: GameInput | CandidateInput, generation: int, received: bool = False
    ) -> None:
        """Queue one job (any thread; returns at once)."""
        with self._lock:
            self._backlog += 1
        self._jobs.put((item, generation, received))

    def backlog(self) -> int:
        """Jobs queued or in progress."""
        with self._lock:
            return self._backlog

    def idle(self) -> bool:
        """No job queued or in progress."""
        return self.backlog() == 0

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                self._handle(*job)
            except Exception:  # the thread's top: log, take the next input
                log.exception("tracker worker: %s failed", job[0].kind)
            finally:
                with self._lock:
                    self._backlog -= 1
