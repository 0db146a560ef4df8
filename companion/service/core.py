"""The running companion's service: one queue in, journalled and published state out.

Every change — a stable camera observation, a dice result or DONE from the buttons, a command
from a phone — is an item on one queue (:mod:`companion.service.inputs`). A single service thread
takes them in order and publishes: a new version of every audience's snapshot (the phone pages
wait on it), the LEDs (whose turn, "look at your phone") and a line on the terminal.

The game driver (the tracker, :class:`~companion.service.driver.GameDriver`, which writes the
journal before anything is shown) runs beside it on its own thread
(:class:`~companion.service.worker.TrackerWorker`) while the loop runs: the service thread hands
it every game input in order and goes on at once, so the tracker's search never stands in front
of a button press or a page. A still board is published **at once** as the camera read it
(``seen``, with ``checking`` set) and the table pages draw it; when the tracker has worked the
board out, its result (the belief: trapped wizards, potions, whose turn, questions) is published
and ``checking`` clears. Driven by :meth:`CompanionService.step` (tests, no threads) the driver
runs inline.

Web threads only read published snapshots and put commands on the queue, waiting for their
result; a bad command raises :class:`~companion.web.service.CommandError` and changes nothing.

:class:`CompanionService` implements :class:`companion.web.service.TableService`.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeAlias

from companion.config import Config
from companion.hardware import Hardware
from companion.rules import GameState, Observation
from companion.service.driver import DiceRoll, GameDriver, PublishedGame, QuestionView
from companion.service.game import GameSettings
from companion.service.heartbeat import Heartbeats
from companion.service.inputs import (
    GAME_INPUTS,
    CameraStatusInput,
    CandidateInput,
    CommandInput,
    CommandResult,
    DiceInput,
    DoneInput,
    GameInput,
    ObservationInput,
    PanelInput,
    ServiceInput,
    StopInput,
    TrackedInput,
    UndoInput,
)
from companion.service.memory import IdleCollector
from companion.service.tracked import TrackedDriver
from companion.service.worker import TrackerWorker
from companion.tracking import TrackerUpdate
from companion.web.service import (
    PLAYER_COMMANDS,
    Audience,
    Command,
    CommandError,
    HealthReport,
    Snapshot,
)
from companion.web.snapshot import SeatTokens, build_snapshot
from companion.web.validate import check_command, command_name

log = logging.getLogger(__name__)

LOG_LINES = 40
"""Log lines kept for the pages (newest last)."""

BUSY_GC_S = 60.0
"""While the tracker works without a rest, the service thread still runs a full garbage
collection after an input this often at most (s), so the belief's discarded cycles are freed."""

COMMAND_TIMEOUT_S = 10.0
"""How long a web thread waits for the service thread to carry out its command."""

HARDWARE_ERRORS = (OSError, RuntimeError, ValueError)
"""What the panel facade raises when its pins, serial LED ring or dice machine refuse."""

DriverFactory: TypeAlias = "Callable[[CompanionService, GameSettings, bool], GameDriver]"
"""Builds the game driver for a new game: ``(service, settings, restore) -> driver``."""

CommandHook: TypeAlias = Callable[[Mapping[str, object]], CommandResult | None]
"""Handles a command outside the game driver (``calibrate_board`` …)."""


def tracked_driver(service: CompanionService, settings: GameSettings, restore: bool) -> GameDriver:
    """The default :data:`DriverFactory`: the tracker with its journal."""
    return TrackedDriver(service.config, service.heartbeats, settings, restore=restore)


class CompanionService(SeatTokens):
    """The table service (see the module doc). Thread-safe.

    :param config: the validated :class:`~companion.config.Config`.
    :param heartbeats: shared heartbeat record.
    :param driver_factory: builds the game driver for a new game (:func:`tracked_driver`).
    :param clock: monotonic seconds.
    """

    def __init__(
        self,
        config: Config,
        heartbeats: Heartbeats | None = None,
        *,
        driver_factory: DriverFactory = tracked_driver,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.heartbeats = heartbeats or Heartbeats(config.service.heartbeat_stale_s, clock)
        self._driver_factory = driver_factory
        self._clock = clock
        self._queue: queue.Queue[ServiceInput] = queue.Queue()
        self.collector = IdleCollector()
        self._pending_inputs = 0  # game inputs queued for the service thread or being handled
        self._pending_lock = threading.Lock()
        self.free = threading.Event()
        """Set while no game input waits for the service thread (the vision worker waits for
        it before its next frame). The tracker's search is not waited for: it runs on its own
        thread, and the pages show the camera's board meanwhile."""
        self.free.set()
        self._worker: TrackerWorker | None = None
        self._generation = 0  # the game's number: inputs queued for a replaced game are dropped
        self._driver_lock = threading.Lock()  # the driver is used by one thread at a time
        self._seen: Observation | None = None  # the camera's latest still board
        self._checking = False  # the tracker has not worked out ``_seen`` yet
        self._stopping = False
        self._cond = threading.Condition()
        self._version = 1
        self._host_token = secrets.token_urlsafe(16)
        self._tokens: dict[str, str] = {}  # colour -> token
        self._settings = GameSettings.from_config(config.game)
        self._driver: GameDriver | None = None
        self._published: PublishedGame | None = None
        self._health_line = "starting"
        self._dice: dict[str, object] | None = None
        self._panel: Mapping[str, object] = {"source": "none", "leds": {}}
        self._log: deque[str] = deque(maxlen=LOG_LINES)
        self._reports: deque[dict[str, object]] = deque(maxlen=20)
        self._camera_status = "no camera yet"
        self._camera_jpeg: Callable[[], bytes | None] | None = None
        self._snap_cache: dict[tuple[int, Audience], Snapshot] = {}
        self._listeners: list[Callable[[CompanionService], None]] = []
        self._hooks: dict[str, CommandHook] = {}
        self.hardware: Hardware | None = None
        self.extra_status: Callable[[], dict[str, object]] | None = None
        self.on_input: Callable[[ServiceInput], None] | None = None
        """Called (service thread) with each input before it is handled (the recorder)."""
        self.on_new_game: Callable[[GameSettings], GameSettings | None] | None = None
        self.on_result: Callable[[ServiceInput, TrackerUpdate | None], None] | None = None
        """Called (service thread) after each input with the tracker's update it caused."""
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

    def snapshot(self, audience: Audience) -> Snapshot:
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

    def submit(self, command: Command, audience: Audience) -> CommandResult:
        """Check ``command`` (:func:`companion.web.validate.check_command`: known name, fields,
        types, lengths, rules-core names) and carry it out on the service thread.

        :raises CommandError: refused before it is queued (nothing changes), or by the game.
        """
        name = command_name(dict(command) if isinstance(command, Mapping) else command)
        if audience.role == "public":
            raise CommandError("the public table page cannot send commands", 403)
        if audience.role == "player" and name not in PLAYER_COMMANDS:
            raise CommandError(f"command {name!r} is for the host only", 403)
        checked = check_command(dict(command))
        fut: Future[CommandResult] = Future()
        self.post(CommandInput(checked, audience, fut))
        try:
            return fut.result(timeout=COMMAND_TIMEOUT_S)
        except FutureTimeout:
            raise CommandError("the companion is busy; try again", 503) from None

    def camera_jpeg(self) -> bytes | None:
        fn = self._camera_jpeg
        return fn() if fn is not None else None

    def health(self) -> HealthReport:
        report = self.heartbeats.report()
        with self._cond:
            report["line"] = self._health_line
            report["camera_status"] = self._camera_status
            report["version"] = self._version
        return report

    # ------------------------------------------------------------------------------------------
    # inputs from other threads

    def post(self, item: ServiceInput) -> None:
        """Put an item on the service queue (any thread; returns at once)."""
        if isinstance(item, GAME_INPUTS):
            with self._pending_lock:
                self._pending_inputs += 1
                self.free.clear()
        self._queue.put(item)

    def post_observation(self, obs: Observation) -> None:
        """A still board from the stability gate (vision thread)."""
        self.post(ObservationInput(obs))

    def post_candidate(self, obs: Observation) -> None:
        """A still board's early reading, to work out ahead (vision thread)."""
        self.post(CandidateInput(obs))

    def post_camera_status(self, text: str) -> None:
        """The camera's status changed (camera thread)."""
        self.post(CameraStatusInput(text))

    def _done(self, item: ServiceInput) -> None:
        if isinstance(item, GAME_INPUTS):
            with self._pending_lock:
                self._pending_inputs -= 1
                if self._pending_inputs <= 0:
                    self._pending_inputs = 0
                    self.free.set()

    def hardware_event(self, event: Mapping[str, Any]) -> None:
        """``events_out`` of the hardware facade: dice results, DONE, UNDO (enqueues only; a
        malformed dice event is logged and dropped, the game unchanged)."""
        match event.get("type"):
            case "dice":
                try:
                    roll = DiceRoll.from_event(event)
                except (TypeError, ValueError) as exc:
                    log.error("panel: malformed dice event %r dropped: %s", event, exc)
                    return
                self.post(DiceInput(roll))
            case "done":
                self.post(DoneInput(dict(event)))
            case "undo":
                self.post(UndoInput(dict(event)))
            case _:
                self.post(PanelInput(dict(event)))

    def set_camera_jpeg(self, fn: Callable[[], bytes | None]) -> None:
        self._camera_jpeg = fn

    def add_listener(self, fn: Callable[[CompanionService], None]) -> None:
        """Called on the service thread after every publish (terminal printer, recorder)."""
        self._listeners.append(fn)

    def set_command_hook(self, name: str, fn: CommandHook) -> None:
        """Handle a command (e.g. ``calibrate_board``) outside the game driver."""
        self._hooks[name] = fn

    # ------------------------------------------------------------------------------------------
    # the service thread

    def start_game(self, settings: GameSettings | None = None, restore: bool = True) -> None:
        """Set up a game (on the calling thread; used before the loop runs and by ``setup``).

        :param restore: first try to continue the game kept in the journal.
        :raises CommandError: the rules core refuses the settings.
        """
        settings = settings or self._settings
        # the old game's queued inputs are dropped from now on; the one in progress finishes
        # (its journal closes after it), then the new game is made
        with self._cond:
            self._generation += 1
        with self._driver_lock:
            try:
                driver = self._driver_factory(self, settings, restore)
            except BaseException:
                with self._cond:
                    self._generation -= 1  # the old game goes on
                raise
            with self._cond:
                old = self._driver
                self._settings = driver.settings
                self._driver = driver
                self._seen = None
                self._checking = False
                self._tokens = {c: secrets.token_urlsafe(16) for c in driver.settings.colours}
            if old is not None and old is not driver:
                old.close()
        self._sync_from_driver(["new game: " + ", ".join(driver.settings.colours)])
        if self.hardware is not None:
            try:
                self.hardware.set_seats(list(driver.settings.colours))
            except HARDWARE_ERRORS as exc:
                self.heartbeats.trouble("hardware", f"seats: {exc}")
            self._update_leds()

    def run(self, stop: threading.Event, tick_s: float = 0.5) -> None:
        """The service loop: handle queue items until ``stop`` is set or a stop item comes.

        While it runs, full garbage collections happen only when the queue has been empty for
        ``tick_s`` and the tracker has no input (:class:`~companion.service.memory.IdleCollector`;
        at most every :data:`BUSY_GC_S` while the tracker never rests). The tracker's thread runs
        as long as the loop does.
        """
        self.collector.install()
        self._stopping = False
        worker = self._worker = TrackerWorker(self._track).start()
        try:
            while not stop.is_set():
                try:
                    item = self._queue.get(timeout=tick_s)
                except queue.Empty:
                    self._idle()
                    if worker.idle():
                        self.collector.idle()
                    continue
                if isinstance(item, StopInput):
                    break
                self._handle(item)
                self._idle()
                # a tracker that never rests still gets a full collection now and then
                every = 6 * self.collector.every_s
                self.collector.idle(wait_s=every if worker.idle() else max(every, BUSY_GC_S))
        finally:
            self._stopping = True  # the tracker drops what is still queued
            worker.stop()
            self._worker = None
            self.collector.uninstall()

    def step(self, timeout_s: float = 0.0) -> bool:
        """Handle one queue item if there is one (tests drive the service without threads)."""
        try:
            item = self._queue.get(timeout=timeout_s) if timeout_s else self._queue.get_nowait()
        except queue.Empty:
            return False
        if not isinstance(item, StopInput):
            self._handle(item)
        return True

    def drain(self) -> int:
        n = 0
        while self.step():
            n += 1
        return n

    def stop(self) -> None:
        self._queue.put(StopInput())

    def close(self) -> None:
        """Release the game's journal (after the service thread stopped)."""
        driver = self._driver
        if driver is not None:
            with self._driver_lock:  # after the tracker's input in progress
                driver.close()

    def wake_all(self) -> None:
        """Wake every page waiting for a change (their event streams then notice a stop)."""
        with self._cond:
            self._version += 1
            self._snap_cache.clear()
            self._cond.notify_all()

    def _idle(self) -> None:
        self.heartbeats.beat("tracker", self._health_line)
        hw = self.hardware
        if hw is None:
            return
        try:
            panel = hw.snapshot()
        except HARDWARE_ERRORS as exc:
            self.heartbeats.trouble("hardware", f"panel: {exc}")
            return
        self.heartbeats.beat("hardware", str(hw.backend))
        with self._cond:
            if panel != self._panel:
                self._panel = panel
                self._bump_locked()

    def _handle(self, item: ServiceInput) -> None:
        """One item, at the top of the service thread: whatever goes wrong is logged, the state
        is kept and the loop goes on (a waiting page gets an internal error, never a hang)."""
        try:
            self._handle_item(item)
        except Exception as exc:  # the thread's top: log, keep the service alive
            log.exception("service: handling %s failed; state kept", item.kind)
            self.heartbeats.trouble("tracker", f"error while handling {item.kind}")
            if isinstance(item, CommandInput) and not item.future.done():
                item.future.set_exception(
                    CommandError(f"internal error: {type(exc).__name__}: {exc}", 500)
                )
        finally:
            self._done(item)

    def _handle_item(self, item: ServiceInput) -> None:
        if isinstance(item, TrackedInput):
            self._tracked(item)
            return
        if isinstance(item, CandidateInput):
            self._prepare(item.observation)
            return
        watched = not isinstance(item, PanelInput | CameraStatusInput)
        if self.on_input is not None and watched:
            self.on_input(item)
        if isinstance(item, GAME_INPUTS) and self._to_tracker(item):
            return  # its result comes back as a TrackedInput
        driver_before = self._driver.last_update if self._driver is not None else None
        match item:
            case CommandInput(command=command, audience=audience, future=future):
                try:
                    result = self._command(command, audience)
                except CommandError as exc:
                    future.set_exception(exc)
                else:
                    with self._cond:
                        answer: CommandResult = {"ok": True, "version": self._version}
                    future.set_result({**answer, **(result or {})})
            case ObservationInput(observation=obs):
                self.last_observation_at = self._clock()
                if self._driver is not None:
                    self._sync_from_driver(self._driver.observe(obs))
            case DiceInput(roll=roll):
                with self._cond:
                    self._dice = {
                        "mode": roll.event.get("dice_allowed", 1),
                        "rolls": list(roll.rolls),
                        "final": True,
                        "value": roll.event.get("used"),
                    }
                if self._driver is not None:
                    self._sync_from_driver(self._driver.dice(roll))
            case DoneInput():
                if self._driver is not None:
                    self._sync_from_driver(self._driver.end_turn())
            case UndoInput():
                if self._driver is not None:
                    self._sync_from_driver(self._driver.undo())
            case CameraStatusInput(text=text):
                with self._cond:
                    if self._camera_status != text:
                        self._camera_status = text
                        self._bump_locked()
            case PanelInput() | StopInput():
                pass
        if self.on_result is not None and watched:
            update = self._driver.last_update if self._driver is not None else None
            self.on_result(item, update if update is not driver_before else None)

    def _prepare(self, obs: Observation) -> None:
        """A still board's early reading (the stability gate still waits): the tracker works it
        out now, so that the confirmed observation is answered at once. Skipped when other
        input is waiting (the work would be stale); never changes the game."""
        driver = self._driver
        if driver is None or not self._queue.empty():
            return
        worker = self._worker
        if worker is None:
            driver.prepare(obs)
        elif worker.idle():
            worker.put(CandidateInput(obs), self._generation)

    # ------------------------------------------------------------------------------------------
    # the tracker's inputs: handed on in order (service thread), worked out (tracker thread),
    # published (service thread)

    def _to_tracker(self, item: GameInput) -> bool:
        """Hand a game input to the tracker; False when the service thread handles it itself
        (setup, the dice panel's commands, hooks, or no game yet)."""
        if self._driver is None:
            return False
        match item:
            case ObservationInput(observation=obs):
                self.last_observation_at = self._clock()
                published = self._published
                length = published.state.table.length if published is not None else 0
                if set(obs.spaces) == set(range(1, length + 1)):
                    with self._cond:  # the camera's board, at once: the pages need not wait
                        self._seen = obs
                        self._checking = True
                        self._bump_locked()
                # else not a board of this track: the tracker refuses it (health line)
            case DiceInput(roll=roll):
                with self._cond:
                    self._dice = {
                        "mode": roll.event.get("dice_allowed", 1),
                        "rolls": list(roll.rolls),
                        "final": True,
                        "value": roll.event.get("used"),
                    }
                    self._bump_locked()
            case CommandInput(command=command, audience=audience):
                name = str(command["command"])
                if name in self._hooks or name in ("setup", "roll", "keep", "dice_mode"):
                    return False
                if name in ("report_spell", "report_page_card"):
                    self._report(command, audience, name)
        worker = self._worker
        if worker is not None:
            worker.put(item, self._generation)
        else:
            self._track(item, self._generation, inline=True)
        return True

    def _track(
        self, item: GameInput | CandidateInput, generation: int, inline: bool = False
    ) -> None:
        """Give one input to the driver (the tracker's thread; ``inline``: the service thread
        without the loop) and put its result on the service queue (``inline``: publish it). An
        input meant for a game replaced since, or queued when the service stops, is dropped (a
        waiting phone command is refused)."""
        with self._driver_lock:
            driver = self._driver
            if driver is None or generation != self._generation or self._stopping:
                if isinstance(item, CommandInput) and not item.future.done():
                    item.future.set_exception(CommandError("a new game was set up", 409))
                return
            if isinstance(item, CandidateInput):
                driver.prepare(item.observation)
                return
            before = driver.last_update
            lines: list[str] | None = None
            error: CommandError | None = None
            try:
                lines = self._drive(driver, item)
            except CommandError as exc:
                error = exc
            except Exception as exc:  # a tracker bug on one input: logged, the belief kept
                log.exception("tracker: handling %s failed; state kept", item.kind)
                error = CommandError(f"internal error: {type(exc).__name__}: {exc}", 500)
            update = driver.last_update
        result = TrackedInput(item, generation, lines, update if update is not before else None)
        if error is not None:
            result = dataclasses.replace(result, error=error)
        if inline:
            self._tracked(result)
        else:
            self._queue.put(result)

    @staticmethod
    def _drive(driver: GameDriver, item: GameInput) -> list[str]:
        match item:
            case ObservationInput(observation=obs):
                return driver.observe(obs)
            case DiceInput(roll=roll):
                return driver.dice(roll)
            case DoneInput():
                return driver.end_turn()
            case UndoInput():
                return driver.undo()
            case CommandInput(command=command, audience=audience):
                return driver.command(command, audience)

    def _tracked(self, result: TrackedInput) -> None:
        """Publish the tracker's result of one input (service thread): the belief, and
        ``checking`` cleared once the camera's latest board is worked out."""
        item = result.item
        if result.generation != self._generation:
            if isinstance(item, CommandInput) and not item.future.done():
                item.future.set_exception(CommandError("a new game was set up", 409))
            return
        agreed = False
        with self._cond:
            if isinstance(item, ObservationInput) and item.observation is self._seen:
                self._checking = False
                agreed = True
        self._sync_from_driver(result.lines or [], force=agreed)
        error = result.error
        if isinstance(item, CommandInput):
            if error is not None:
                item.future.set_exception(error)
            else:
                with self._cond:
                    answer: CommandResult = {"ok": True, "version": self._version}
                item.future.set_result(answer)
        elif error is not None:
            log.error("service: %s refused: %s", item.kind, error.message)
            self.heartbeats.trouble("tracker", f"{item.kind} refused: {error.message}")
        if self.on_result is not None:
            self.on_result(item, result.update)

    def _sync_from_driver(self, lines: list[str], force: bool = False) -> None:
        driver = self._driver
        if driver is None:
            return
        published = driver.published
        with self._cond:
            changed = force or bool(lines) or published != self._published
            self._published = published
            self._health_line = published.health_line
            self._log.extend(lines)
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
            fn(self)

    def _update_leds(self) -> None:
        hw = self.hardware
        published = self._published
        if hw is None or published is None:
            return
        state = published.state
        try:
            hw.show_player(int(state.turn.player) if not state.over else None)
            hw.set_attention(published.question is not None)
        except HARDWARE_ERRORS as exc:
            self.heartbeats.trouble("hardware", f"LEDs: {exc}")

    # ------------------------------------------------------------------------------------------
    # commands (service thread)

    def _command(self, cmd: Mapping[str, object], audience: Audience) -> CommandResult | None:
        name = str(cmd["command"])
        hook = self._hooks.get(name)
        if hook is not None:
            result = hook(cmd)
            with self._cond:
                self._bump_locked()
            return result
        match name:
            case "setup":
                if audience.role != "host":
                    raise CommandError("only the host sets up a game", 403)
                settings = GameSettings.from_command(cmd, self._settings)
                if self.on_new_game is not None:
                    # a simulated table lays the game out first and says what it laid (the
                    # spells it drew when the host left them to the rules)
                    settings = self.on_new_game(settings) or settings
                self.start_game(settings, restore=False)
                return {"players": list(self._settings.colours)}
            case "roll" | "keep" | "dice_mode":
                return self._dice_command(name, cmd)
        driver = self._driver
        if driver is None:
            raise CommandError("no game is set up yet", 409)
        if name in ("report_spell", "report_page_card"):
            self._report(cmd, audience, name)
        self._sync_from_driver(driver.command(cmd, audience))
        return None

    def _report(self, cmd: Mapping[str, object], audience: Audience, name: str) -> None:
        """Keep a player's spell or page card report for the pages."""
        who = audience.colour if audience.role == "player" else cmd.get("player")
        entry = {k: v for k, v in cmd.items() if k != "command"}
        entry.update({"kind": name, "by": who or "host"})
        with self._cond:
            self._reports.append(entry)
            self._bump_locked()

    def _dice_command(self, name: str, cmd: Mapping[str, object]) -> CommandResult | None:
        hw = self.hardware
        if hw is None:
            raise CommandError("no dice panel (hardware not available)", 409)
        dice = 0
        if name == "dice_mode":
            chosen = cmd.get("dice")
            if not isinstance(chosen, int) or chosen not in (1, 2, 3):
                raise CommandError("dice_mode.dice: expected 1, 2 or 3")
            dice = int(chosen)
        try:
            match name:
                case "dice_mode":
                    hw.select_dice(dice)
                case "roll":
                    hw.press("roll")
                case _:
                    hw.keep()
        except ValueError as exc:  # DiceError is a ValueError
            raise CommandError(str(exc), 409) from None
        return None

    # ------------------------------------------------------------------------------------------
    # snapshots (under self._cond)

    def _build_snapshot(self, audience: Audience) -> Snapshot:
        host: dict[str, object] | None = None
        if audience.role == "host":
            host = {"settings": self._settings.to_json(), "source": self.config.camera.source}
            if self.extra_status is not None:
                host.update(self.extra_status())
        published = self._published
        return build_snapshot(
            version=self._version,
            audience=audience,
            phase=published.phase if published is not None else "setup",
            memory_aid=self._settings.memory_aid,
            state=published.state if published is not None else None,
            dice=self._dice,
            panel=self._panel,
            question=published.question if published is not None else None,
            health_ok=self.heartbeats.all_fresh(),
            health_line=self._health_line,
            log=self._log,
            reports=self._reports,
            camera=self._camera_status,
            host=host,
            seen=self._seen if self._checking else None,
        )

    # ------------------------------------------------------------------------------------------
    # read access for the terminal, tests and benches

    @property
    def published(self) -> PublishedGame | None:
        """What the pages show of the game now; None before setup."""
        with self._cond:
            return self._published

    @property
    def state(self) -> GameState | None:
        """The tracked state now, None before setup."""
        with self._cond:
            return self._published.state if self._published is not None else None

    @property
    def question(self) -> QuestionView | None:
        with self._cond:
            return self._published.question if self._published is not None else None

    @property
    def health_line(self) -> str:
        with self._cond:
            return self._health_line

    @property
    def driver(self) -> GameDriver | None:
        return self._driver

    @property
    def settings(self) -> GameSettings:
        return self._settings

    def log_lines(self) -> list[str]:
        with self._cond:
            return list(self._log)

    def queue_size(self) -> int:
        """Items waiting for the service thread plus inputs the tracker has not finished."""
        worker = self._worker
        return self._queue.qsize() + (worker.backlog() if worker is not None else 0)

    @property
    def game_number(self) -> int:
        """Games set up so far (counted from the moment a setup starts: the tracker drops the
        inputs queued for an older one)."""
        with self._cond:
            return self._generation

    @property
    def checking(self) -> bool:
        """The pages show the camera's latest still board, not yet worked out by the tracker."""
        with self._cond:
            return self._checking
