"""Helpers to drive a companion on the simulated table from tests and benchmarks.

``sim_config(data_dir, seed=4, players=3)`` is a configuration that runs the simulated table flat
out (speed 1e6), one game, web on a free loopback port; :func:`simulated_companion` builds a
companion on the simulated table; :func:`finish_game` waits until the simulated game is over and
the service has handled every input; :class:`HostPhoneAnswerer` is a player on the host's phone
who answers the tracker's questions with the simulated truth.
"""

from __future__ import annotations

import functools
import http.client
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from companion.config import Config, with_overrides
from companion.service.app import Companion
from companion.service.driver import QuestionView
from companion.service.record import Recorder
from companion.service.sdnotify import SystemdNotifier
from companion.service.webclient import PhoneClient, WebError
from companion.sim.simulation import SimulatedTable


def sim_config(data_dir: Path, seed: int = 4, players: int = 3, **sections: Any) -> Config:
    """A validated config for a flat-out simulated game in ``data_dir`` (``sections`` override
    keys per section, e.g. ``simulation={"speed": 50.0}``)."""
    changes: dict[str, dict[str, Any]] = {
        "camera": {"source": "simulated"},
        "web": {"host": "127.0.0.1", "port": 0},
        "simulation": {"speed": 1e6, "seed": seed, "games": 1},
        "data": {"dir": str(data_dir)},
        "game": {"players": players, "colours": []},
        "service": {"status_every_s": 0.0},
    }
    for k, v in sections.items():
        changes[k] = {**changes.get(k, {}), **v}
    return with_overrides(Config(), **changes)


def simulated_companion(
    config: Config,
    *,
    without_picture: str = "",
    answer_questions: bool = True,
    web: bool = True,
    recorder: Recorder | None = None,
    notifier: SystemdNotifier | None = None,
    print_qr: bool = False,
    out: TextIO | None = None,
) -> Companion:
    """A companion (not started) whose table, without a camera, is the simulated one.

    :param without_picture: why the simulated camera's picture is left out (the tracker then
        gets the ideal view of the board, and the heartbeats name the reason); "" = render it.
    :param answer_questions: the simulated players answer the tracker's questions.
    """
    simulation = functools.partial(
        SimulatedTable, without_picture=without_picture, answer_questions=answer_questions
    )
    return Companion(
        config,
        simulation=simulation,
        web=web,
        recorder=recorder,
        notifier=notifier,
        print_qr=print_qr,
        out=out,
    )


def table_of(companion: Companion) -> SimulatedTable:
    """The companion's simulated table. :raises TypeError: it runs on a camera."""
    table = companion.table
    if not isinstance(table, SimulatedTable):
        raise TypeError("the companion does not run on the simulated table")
    return table


def wait_until(cond: Callable[[], bool], timeout_s: float = 60.0, what: str = "it") -> None:
    """Poll ``cond`` every 20 ms. :raises TimeoutError: naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.02)


def settle(companion: Companion, quiet_s: float = 1.0, timeout_s: float = 60.0) -> None:
    """Wait until the vision worker has no frame left and the service queue is empty and the
    published version stayed the same for ``quiet_s``. The quiet outlasts the stability
    gate's wait for a still view (``StabilityConfig.settle_s``, 0.6 s): with a shorter one
    the last board could still be on its way, and a finished game changed after it had
    "settled" (a read-only service test saw its log move, once, under load)."""
    svc = companion.service
    deadline = time.monotonic() + timeout_s
    v = -1
    while time.monotonic() < deadline:
        cam = companion.camera
        busy = svc.queue_size() > 0 or (cam is not None and cam.buffered() > 0)
        if not busy and v == svc.version:
            return
        v = svc.version
        time.sleep(quiet_s)
    raise TimeoutError("the service did not settle")


def finish_game(companion: Companion, timeout_s: float = 120.0) -> None:
    """Wait until the simulated game is over and everything it produced is handled."""
    table = table_of(companion)
    wait_until(
        lambda: table.cursor is not None and table.cursor.finished,
        timeout_s,
        "the end of the simulated game",
    )
    settle(companion, timeout_s=timeout_s)


class HostPhoneAnswerer:
    """A player at the simulated table who knows what really happened and answers the tracker's
    questions on the host's phone, through the web API, as a person would: the phone follows the
    host page's event stream (``/events?as=host``); a new question is answered ``delay_s`` after
    the phone received it (reading it, picking an option), with the option whose stories show
    the true table (:meth:`~companion.sim.simtable.SimulatedGame.answer_for`).

    Counts (read after :meth:`stop`): ``seen`` (questions the phone received), ``answered``
    (``(question id, option)`` the companion took), ``withdrawn`` (gone before the answer came:
    a later frame or press decided it, HTTP 409), ``unanswerable`` (no option shows the truth;
    left open, as a player who sees none of them right would) and ``errors`` (anything else).
    Needs the companion's web server and its simulated table.
    """

    def __init__(self, companion: Companion, delay_s: float = 0.0) -> None:
        self.c = companion
        self.table = table_of(companion)
        self.delay_s = max(0.0, float(delay_s))
        self.phone = PhoneClient(companion.url)
        status = self.phone.join(companion.service.host_token)
        if status not in (200, 303):
            raise RuntimeError(f"the host's join link answered HTTP {status}")
        self.seen: list[str] = []
        self.answered: list[tuple[str, str]] = []
        self.withdrawn: list[str] = []
        self.unanswerable: list[str] = []
        self.errors: list[str] = []
        self._latest: tuple[QuestionView, float] | None = None  # (question, received at)
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, name="host-phone-events", daemon=True)
        self._answerer = threading.Thread(target=self._answer, name="host-phone", daemon=True)

    def start(self) -> HostPhoneAnswerer:
        self._reader.start()
        self._answerer.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        self._answerer.join(timeout=10)
        self._reader.join(timeout=1)  # blocked on the stream until the server closes it

    def _read(self) -> None:
        try:
            self._follow()
        except Exception as exc:  # the thread's top: note it; the test then sees the error
            self.errors.append(f"event stream reader: {type(exc).__name__}: {exc}")

    def _follow(self) -> None:
        while not self._stop.is_set():
            try:
                with self.phone.opener.open(self.phone.base + "/events?as=host", timeout=30) as r:
                    data: list[str] = []
                    for raw in r:
                        if self._stop.is_set():
                            return
                        line = raw.decode("utf-8").rstrip("\n")
                        if line.startswith("data: "):
                            data.append(line[6:])
                        elif not line and data:
                            snap = json.loads("".join(data))
                            data = []
                            self._received(snap.get("question"))
            except (OSError, http.client.HTTPException, ValueError) as exc:
                # the server closing the stream: reconnect unless stopping
                if self._stop.wait(0.2):
                    return
                self.errors.append(f"event stream: {type(exc).__name__}: {exc}")

    def _received(self, question: QuestionView | None) -> None:
        with self._changed:
            if question is None:
                self._latest = None
            elif self._latest is None or self._latest[0]["id"] != question["id"]:
                self.seen.append(str(question["id"]))
                self._latest = (question, time.monotonic())
            self._changed.notify_all()

    def _answer(self) -> None:
        try:
            self._answer_questions()
        except Exception as exc:  # the thread's top: note it; the test then sees the error
            self.errors.append(f"answerer: {type(exc).__name__}: {exc}")

    def _answer_questions(self) -> None:
        done: set[str] = set()
        while not self._stop.is_set():
            with self._changed:
                latest = self._latest
                if latest is None or latest[0]["id"] in done:
                    self._changed.wait(0.5)
                    continue
            question, received = latest
            if self._stop.wait(max(0.0, received + self.delay_s - time.monotonic())):
                return
            qid = str(question["id"])
            done.add(qid)
            driver = self.c.service.driver
            open_now = self.c.service.question
            game = self.table.game
            if driver is None or game is None or open_now is None or open_now["id"] != qid:
                self.withdrawn.append(qid)  # decided meanwhile by a later frame or press
                continue
            option = game.answer_for(question, driver.candidates(question))
            if option is None:
                self.unanswerable.append(qid)
                continue
            try:
                self.phone.command({"command": "answer", "question": qid, "option": option})
                self.answered.append((qid, option))
            except WebError as exc:
                if exc.status == 409:  # already decided by a later frame or press
                    self.withdrawn.append(qid)
                else:
                    self.errors.append(str(exc))
            except (OSError, http.client.HTTPException) as exc:  # the server is stopping
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def unhandled(self) -> list[str]:
        """Questions the phone received and has not answered or given up on yet."""
        handled = {q for q, _ in self.answered} | {*self.withdrawn, *self.unanswerable}
        return [q for q in self.seen if q not in handled]

    def counts(self) -> dict[str, int]:
        return {
            "seen": len(self.seen),
            "answered": len(self.answered),
            "withdrawn": len(self.withdrawn),
            "unanswerable": len(self.unanswerable),
            "errors": len(self.errors),
        }
