"""The running companion's service: one queue in, journalled and published state out.

Every change — a stable camera observation, a dice result or DONE from the buttons, a command
from a phone — is an item on one queue. A single service thread takes them in order, feeds the
tracker, writes the journal (before anything is shown) and publishes: a new version of every
audience's snapshot (the phone pages wait on it), the LEDs (whose turn, "look at your phone") and
a line on the terminal. Web threads only read published snapshots and put commands on the queue,
waiting for their result; a bad command raises :class:`~companion.web.service.CommandError` and
changes nothing.

:class:`CompanionService` implements :class:`companion.web.service.TableService`.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from companion.config import Config
from companion.service.game import GameSettings
from companion.service.heartbeat import Heartbeats
from companion.service.memory import IdleCollector
from companion.service.parts import Parts
from companion.web.service import HOST_COMMANDS, PLAYER_COMMANDS, Audience, CommandError
from companion.web.snapshot import SeatTokens, build_snapshot

log = logging.getLogger(__name__)

LOG_LINES = 40
"""Log lines kept for the pages (newest last)."""

COMMAND_TIMEOUT_S = 10.0
"""How long a web thread waits for the service thread to carry out its command."""

GAME_INPUTS = frozenset({"observation", "dice", "done", "undo", "command", "truth"})
"""Queue items the tracker works on (the page waits for their result); see
``CompanionService.free``."""


@dataclass
class Item:
    """One entry of the service queue: ``kind`` (``observation``, ``dice``, ``done``, ``undo``,
    ``command``, ``camera``, ``candidate`` — a still board's early reading, worked out ahead —,
    ``stop``), its payload, and a Future for commands."""

    kind: str
    payload: Any = None
    future: Future[dict[str, Any]] | None = None
    audience: Audience | None = None
    posted_at: float = field(default_factory=time.monotonic)


class CompanionService(SeatTokens):
    """The table service (see the module doc). Thread-safe.

    :param config: the validated :class:`~companion.config.Config`.
    :param parts: the installed parts (lazy imports).
    :param heartbeats: shared heartbeat record.
    :param tracker_factory: builds the game driver for a new game
        (``companion.service.tracking.make_driver`` by default).
    :param clock: monotonic seconds; ``wall``: seconds since the epoch (journal, observations).
    """

    def __init__(
        self,
        config: Config,
        parts: Parts | None = None,
        heartbeats: Heartbeats | None = None,
        *,
        driver_factory: Callable[..., Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        from companion.service.tracking import make_driver

        self.config = config
        self.parts = parts or Parts()
        self.heartbeats = heartbeats or Heartbeats(config.service.heartbeat_stale_s, clock)
        self._driver_factory = driver_factory or make_driver
        self._clock = clock
        self._wall = wall
        self._queue: queue.Queue[Item] = queue.Queue()
        self.collector = IdleCollector()
        self._pending_inputs = 0  # GAME_INPUTS items queued or being handled
        self._pending_lock = threading.Lock()
        self.free = threading.Event()
        """Set while no game input is queued or being handled: the vision worker waits for it
        before its next frame, so the tracker's work on a still board (what the phones wait
        for) does not share the interpreter with the detector."""
        self.free.set()
        self._cond = threading.Condition()
        self._version = 1
        self._host_token = secrets.token_urlsafe(16)
        self._tokens: dict[str, str] = {}  # colour -> token
        self._settings = GameSettings.from_config(config.game)
        self._driver: Any = None
        self._state: Any = None
        self._phase = "setup"
        self._question: dict[str, Any] | None = None
        self._health_line = "starting"
        self._dice: dict[str, Any] | None = None
        self._panel: dict[str, Any] = {"source": "none", "leds": {}}
        self._log: deque[str] = deque(maxlen=LOG_LINES)
        self._reports: deque[dict[str, Any]] = deque(maxlen=20)
        self._camera_status = "no camera yet"
        self._camera_jpeg: Callable[[], bytes | None] | None = None
        self._snap_cache: dict[tuple[int, Audience], dict[str, Any]] = {}
        self._listeners: list[Callable[[CompanionService], None]] = []
        self._hooks: dict[str, Callable[[Mapping[str, Any]], dict[str, Any] | None]] = {}
        self.hardware: Any = None
        self.journal: Any = None
        self.extra_status: Callable[[], dict[str, Any]] | None = None
        self.on_input: Callable[[Item], None] | None = None
        self.on_new_game: Callable[[GameSettings], GameSettings | None] | None = None
        self.on_result: Callable[[Item, Any], None] | None = None
        self.published_at: float = clock()
        self.last_observation_at: float | None = None

    # ------------------------------------------------------------------------------------------
    # TableService

    def wait_for_change(self, since: int, timeout_s: float) -> int:
        deadline = self._clock() + max(0.0, timeout_s)
        with self._cond:
            while self._version == since:
                left = deadline - self._clock()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._version

    def snapshot(self, audience: Audience) -> dict[str, Any]:
        with self._cond:
            key = (self._version, audience)
            cached = self._snap_cache.get(key)
            if cached is not None:
                return cached
            snap = self._build_snapshot(audience)
            if len(self._snap_cache) > 64:
                self._snap_cache.clear()
            self._snap_cache[key] = snap
            return snap

    def submit(self, command: Mapping[str, Any], audience: Audience) -> dict[str, Any]:
        if not isinstance(command, Mapping):
            raise CommandError('command: expected an object like {"command": "roll"}')
        name = command.get("command")
        if not isinstance(name, str) or name not in HOST_COMMANDS:
            raise CommandError(f"command: {name!r} is not a command")
        if audience.role == "public":
            raise CommandError("the public table page cannot send commands", 403)
        if audience.role == "player" and name not in PLAYER_COMMANDS:
            raise CommandError(f"command {name!r} is for the host only", 403)
        fut: Future[dict[str, Any]] = Future()
        self._put(Item("command", dict(command), fut, audience))
        try:
            return fut.result(timeout=COMMAND_TIMEOUT_S)
        except FutureTimeout:
            raise CommandError("the companion is busy; try again", 503) from None

    def camera_jpeg(self) -> bytes | None:
        fn = self._camera_jpeg
        return fn() if fn is not None else None

    def health(self) -> dict[str, Any]:
        report = self.heartbeats.report()
        with self._cond:
            report["line"] = self._health_line
            report["camera_status"] = self._camera_status
            report["version"] = self._version
        missing = {n: s for n, s in self.parts.report().items() if not s["ok"]}
        if missing:
            report["missing_parts"] = missing
        return report

    # ------------------------------------------------------------------------------------------
    # inputs from other threads

    def post(self, kind: str, payload: Any = None) -> None:
        """Put an item on the service queue (any thread; returns at once)."""
        self._put(Item(kind, payload))

    def _put(self, item: Item) -> None:
        if item.kind in GAME_INPUTS:
            with self._pending_lock:
                self._pending_inputs += 1
                self.free.clear()
        self._queue.put(item)

    def _done(self, item: Item) -> None:
        if item.kind in GAME_INPUTS:
            with self._pending_lock:
                self._pending_inputs -= 1
                if self._pending_inputs <= 0:
                    self._pending_inputs = 0
                    self.free.set()

    def hardware_event(self, event: Mapping[str, Any]) -> None:
        """``events_out`` of the hardware facade: dice results, DONE, UNDO (enqueues only)."""
        kind = event.get("type")
        if kind in ("dice", "done", "undo"):
            self.post(str(kind), dict(event))
        else:
            self.post("panel", dict(event))

    def set_camera_jpeg(self, fn: Callable[[], bytes | None]) -> None:
        self._camera_jpeg = fn

    def add_listener(self, fn: Callable[[CompanionService], None]) -> None:
        """Called on the service thread after every publish (terminal printer, recorder)."""
        self._listeners.append(fn)

    def set_command_hook(
        self, name: str, fn: Callable[[Mapping[str, Any]], dict[str, Any] | None]
    ) -> None:
        """Handle a command (e.g. ``calibrate_board``) outside the game driver."""
        self._hooks[name] = fn

    # ------------------------------------------------------------------------------------------
    # the service thread

    def start_game(self, settings: GameSettings | None = None, restore: bool = True) -> None:
        """Set up a game (on the calling thread; used before the loop runs and by ``setup``).

        :param restore: first try to continue the game kept in the journal.
        :raises CommandError: the rules core refuses the settings, or is missing.
        """
        settings = settings or self._settings
        driver = self._driver_factory(self, settings, restore=restore)
        with self._cond:
            self._settings = driver.settings
            self._driver = driver
            self._tokens = {c: secrets.token_urlsafe(16) for c in driver.settings.colours}
        self._sync_from_driver(["new game: " + ", ".join(driver.settings.colours)])
        if self.hardware is not None:
            with contextlib.suppress(Exception):
                self.hardware.set_seats(list(driver.settings.colours))
            self._update_leds()

    def run(self, stop: threading.Event, tick_s: float = 0.5) -> None:
        """The service loop: handle queue items until ``stop`` is set or a ``stop`` item comes.

        While it runs, full garbage collections happen only when the queue has been empty for
        ``tick_s`` (:class:`~companion.service.memory.IdleCollector`), never during an input.
        """
        self.collector.install()
        try:
            while not stop.is_set():
                try:
                    item = self._queue.get(timeout=tick_s)
                except queue.Empty:
                    self._idle()
                    self.collector.idle()
                    continue
                if item.kind == "stop":
                    break
                self._handle(item)
                self._idle()
                self.collector.idle(wait_s=6 * self.collector.every_s)
        finally:
            self.collector.uninstall()

    def step(self, timeout_s: float = 0.0) -> bool:
        """Handle one queue item if there is one (tests drive the service without threads)."""
        try:
            item = self._queue.get(timeout=timeout_s) if timeout_s else self._queue.get_nowait()
        except queue.Empty:
            return False
        if item.kind != "stop":
            self._handle(item)
        return True

    def drain(self) -> int:
        n = 0
        while self.step():
            n += 1
        return n

    def stop(self) -> None:
        self._queue.put(Item("stop"))

    def wake_all(self) -> None:
        """Wake every page waiting for a change (their event streams then notice a stop)."""
        with self._cond:
            self._version += 1
            self._snap_cache.clear()
            self._cond.notify_all()

    def _idle(self) -> None:
        self.heartbeats.beat("tracker", self._health_line)
        if self.hardware is not None:
            try:
                panel = self.hardware.snapshot()
                self.heartbeats.beat("hardware", str(getattr(self.hardware, "backend", "")))
            except Exception as exc:
                self.heartbeats.trouble("hardware", f"panel: {exc}")
                return
            with self._cond:
                if panel != self._panel:
                    self._panel = panel
                    self._bump_locked()

    def _handle(self, item: Item) -> None:
        try:
            self._handle_item(item)
        finally:
            self._done(item)

    def _handle_item(self, item: Item) -> None:
        if item.kind == "candidate":
            self._prepare(item.payload)
            return
        if self.on_input is not None and item.kind not in ("panel", "camera"):
            try:
                self.on_input(item)
            except Exception:
                log.exception("input listener failed")
        driver_before = getattr(self._driver, "last_update", None)
        try:
            if item.kind == "command":
                assert item.future is not None and item.audience is not None
                try:
                    result = self._command(item.payload, item.audience)
                except CommandError as exc:
                    item.future.set_exception(exc)
                except Exception as exc:  # a bug must not kill the loop nor hang the page
                    log.exception("command %r failed", item.payload)
                    item.future.set_exception(
                        CommandError(f"internal error: {type(exc).__name__}: {exc}", 500)
                    )
                else:
                    with self._cond:
                        result = {"ok": True, "version": self._version, **(result or {})}
                    item.future.set_result(result)
            elif item.kind == "observation":
                self.last_observation_at = self._clock()
                self._drive("observe", item.payload)
            elif item.kind == "dice":
                ev = item.payload
                with self._cond:
                    self._dice = {
                        "mode": ev.get("dice_allowed", 1),
                        "rolls": list(ev.get("rolls", [])),
                        "final": True,
                        "value": ev.get("used"),
                    }
                self._drive("dice", ev)
            elif item.kind == "done":
                self._drive("end_turn", None)
            elif item.kind == "undo":
                self._drive("undo", None)
            elif item.kind == "camera":
                with self._cond:
                    if self._camera_status != item.payload:
                        self._camera_status = str(item.payload)
                        self._bump_locked()
            elif item.kind == "truth":
                follow = getattr(self._driver, "follow_truth", None)
                if follow is not None:
                    self._sync_from_driver(follow(item.payload) or [])
            elif item.kind == "panel":
                pass
            else:
                log.warning("unknown queue item %r", item.kind)
        except Exception:
            log.exception("service: handling %s failed; state kept", item.kind)
            self.heartbeats.trouble("tracker", f"error while handling {item.kind}")
        if self.on_result is not None and item.kind not in ("panel", "camera"):
            update = getattr(self._driver, "last_update", None)
            try:
                self.on_result(item, update if update is not driver_before else None)
            except Exception:
                log.exception("result listener failed")

    def _prepare(self, obs: Any) -> None:
        """A still board's early reading (the stability gate still waits): the tracker works it
        out now, so that the confirmed observation is answered at once. Skipped when other
        input is waiting (the work would be stale); never changes the game."""
        driver = self._driver
        prepare = getattr(driver, "prepare", None)
        if prepare is None or not self._queue.empty():
            return
        try:
            prepare(obs)
        except Exception:
            log.exception("service: preparing a still board failed; nothing changed")

    def _drive(self, method: str, payload: Any) -> None:
        driver = self._driver
        if driver is None:
            return
        lines = (
            getattr(driver, method)(payload) if payload is not None else getattr(driver, method)()
        )
        self._sync_from_driver(lines or [])

    def _sync_from_driver(self, lines: list[str]) -> None:
        driver = self._driver
        with self._cond:
            changed = bool(lines)
            for attr, value in (
                ("_state", driver.state),
                ("_question", driver.question),
                ("_health_line", driver.health_line),
                ("_phase", driver.phase),
            ):
                if getattr(self, attr) is not value and getattr(self, attr) != value:
                    setattr(self, attr, value)
                    changed = True
            for line in lines:
                self._log.append(line)
            if changed:
                self._bump_locked()
        if changed:
            self._update_leds()

    def _bump_locked(self) -> None:
        self._version += 1
        self.published_at = self._clock()
        self._snap_cache.clear()
        self._cond.notify_all()
        for fn in self._listeners:
            try:
                fn(self)
            except Exception:
                log.exception("listener failed")

    def _update_leds(self) -> None:
        hw = self.hardware
        state = self._state
        if hw is None or state is None:
            return
        try:
            hw.show_player(int(state.turn.player) if not state.over else None)
            hw.set_attention(self._question is not None)
        except Exception as exc:
            self.heartbeats.trouble("hardware", f"LEDs: {exc}")

    # ------------------------------------------------------------------------------------------
    # commands (service thread)

    def _command(self, cmd: dict[str, Any], audience: Audience) -> dict[str, Any] | None:
        name = cmd["command"]
        if name in self._hooks:
            result = self._hooks[name](cmd)
            with self._cond:
                self._bump_locked()
            return result
        if name == "setup":
            if audience.role != "host":
                raise CommandError("only the host sets up a game", 403)
            settings = GameSettings.from_command(cmd, self._settings)
            if self.on_new_game is not None:
                # a simulated table lays the game out first and says what it laid (the spells
                # it drew when the host left them to the rules)
                settings = self.on_new_game(settings) or settings
            self.start_game(settings, restore=False)
            return {"players": list(self._settings.colours)}
        if name in ("roll", "keep", "dice_mode"):
            return self._dice_command(name, cmd)
        if self._driver is None:
            raise CommandError("no game is set up yet", 409)
        if name in ("report_spell", "report_page_card"):
            who = audience.colour if audience.role == "player" else cmd.get("player")
            entry = {k: v for k, v in cmd.items() if k != "command"}
            entry.update({"kind": name, "by": who or "host"})
            with self._cond:
                self._reports.append(entry)
                self._bump_locked()
        lines = self._driver.command(cmd, audience)
        self._sync_from_driver(lines or [])
        return None

    def _dice_command(self, name: str, cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        hw = self.hardware
        if hw is None:
            raise CommandError("no dice panel (hardware part missing)", 409)
        try:
            if name == "dice_mode":
                dice = cmd.get("dice")
                if dice not in (1, 2, 3):
                    raise CommandError("dice_mode.dice: expected 1, 2 or 3")
                hw.select_dice(int(dice))
            elif name == "roll":
                hw.press("roll")
            else:
                hw.keep()
        except CommandError:
            raise
        except ValueError as exc:  # DiceError is a ValueError
            raise CommandError(str(exc), 409) from None
        return None

    # ------------------------------------------------------------------------------------------
    # snapshots (under self._cond)

    def _build_snapshot(self, audience: Audience) -> dict[str, Any]:
        host: dict[str, Any] | None = None
        if audience.role == "host":
            host = {
                "settings": self._settings.to_json(),
                "source": self.config.camera.source,
                "parts": {n: s["reason"] for n, s in self.parts.report().items() if not s["ok"]},
            }
            if self.extra_status is not None:
                with contextlib.suppress(Exception):
                    host.update(self.extra_status())
        have_rules = self.parts.get("rules") is not None
        return build_snapshot(
            version=self._version,
            audience=audience,
            phase=self._phase,
            memory_aid=self._settings.memory_aid,
            state=self._state if have_rules else None,
            dice=self._dice,
            panel=self._panel,
            question=self._question,
            health_ok=self.heartbeats.all_fresh(),
            health_line=self._health_line,
            log=self._log,
            reports=self._reports,
            camera=self._camera_status,
            host=host,
        )

    # ------------------------------------------------------------------------------------------
    # read access for the terminal, tests and benches

    @property
    def state(self) -> Any:
        """The tracked state now (a ``GameState``), None before setup."""
        with self._cond:
            return self._state

    @property
    def question(self) -> dict[str, Any] | None:
        with self._cond:
            return self._question

    @property
    def health_line(self) -> str:
        with self._cond:
            return self._health_line

    @property
    def driver(self) -> Any:
        return self._driver

    @property
    def settings(self) -> GameSettings:
        return self._settings

    def log_lines(self) -> list[str]:
        with self._cond:
            return list(self._log)

    def queue_size(self) -> int:
        return self._queue.qsize()
