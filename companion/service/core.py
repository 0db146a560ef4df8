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
from companion.service.driver import (
    DiceRoll,
    GameDriver,
    PublishedGame,
    QuestionView,
    TableMemory,
)
from companion.service.game import GameSettings
from companion.service.handoff import JOURNAL_ERRORS, TrackerHandoff, dice_display
from companion.service.heartbeat import Heartbeats
from companion.service.inputs import (
    GAME_INPUTS,
    CameraStatusInput,
    CandidateInput,
    CommandInput,
    CommandResult,
    DiceInput,
    DoneInput,
    NoteInput,
    ObservationInput,
    Outcome,
    PanelInput,
    ServiceInput,
    StopInput,
    TrackedInput,
    UndoInput,
)
from companion.service.journal_check import JournalDamage
from companion.service.memory import IdleCollector
from companion.service.packs import dice_profile, game_driver, settings_from_command
from companion.service.tracked import JournalRefused, TrackedDriver
from companion.service.worker import TrackerWorker
from companion.web.service import (
    PLAYER_COMMANDS,
    Audience,
    Command,
    CommandError,
    HealthReport,
    Snapshot,
)
from companion.web.snapshot import build_snapshot
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


def ring_problem(panel: Mapping[str, object]) -> str:
    """Why the LED ring in a panel snapshot (``Hardware.snapshot``) does not work, "" when it
    does or none is configured: the port and the link's error."""
    ring = panel.get("ring")
    if not isinstance(ring, Mapping) or not ring.get("error"):
        return ""
    return f"LED ring {ring.get('port')}: {ring.get('error')}"


class CompanionService(TrackerHandoff):
    """The table service (see the module doc). Thread-safe.

    :param config: the validated :class:`~companion.config.Config`.
    :param heartbeats: shared heartbeat record.
    :param driver_factory: builds the game driver for a new game (default
        :func:`companion.service.packs.game_driver`: the tracker, or a game pack).
    :param clock: monotonic seconds.
    """

    def __init__(
        self,
        config: Config,
        heartbeats: Heartbeats | None = None,
        *,
        driver_factory: DriverFactory = game_driver,
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
        self._version_reserved = 0  # kept in the journal; a restart continues above it
        self._epoch = secrets.token_hex(4)
        self._host_token = secrets.token_urlsafe(16)
        self._tokens: dict[str, str] = {}  # colour -> token
        self._revoked: set[str] = set()  # hashes of revoked tokens
        self._damage: JournalDamage | None = None
        self._memory: TableMemory | None = None
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
        self._snap_cache: dict[tuple[int, Audience], Snapshot] = {}  # the latest versions'
        self._audiences: dict[Audience, float] = {}  # audience -> monotonic s last asked for
        self._listeners: list[Callable[[CompanionService], None]] = []
        self._hooks: dict[str, CommandHook] = {}
        self.hardware: Hardware | None = None
        self.hardware_problem = ""
        """Why the hardware does not run as configured ("" = it does), e.g. GPIO pins missing
        and the page's virtual panel standing in (set by the companion at start)."""
        self._journal_error = ""
        self._failing: tuple[str, ...] = ()
        self.extra_status: Callable[[], dict[str, object]] | None = None
        self.on_input: Callable[[ServiceInput], None] | None = None
        """Called (service thread) with each input before it is handled (the recorder)."""
        self.on_new_game: Callable[[GameSettings], GameSettings | None] | None = None
        self.on_result: Callable[[ServiceInput, Outcome], None] | None = None
        """Called (service thread) after each input with what it did (the recorder)."""
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
            self._audiences[audience] = time.monotonic()
            return self._snapshot_locked(audience)

    def snapshots_since(self, since: int, audience: Audience) -> list[Snapshot]:
        with self._cond:
            self._audiences[audience] = time.monotonic()
            return self._snapshots_since_locked(since, audience)

    def _snapshot_locked(self, audience: Audience) -> Snapshot:
        key = (self._version, audience)
        cached = self._snap_cache.get(key)
        if cached is None:
            cached = self._snap_cache[key] = self._build_snapshot(audience)
        return cached

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
            damage = self._damage
            restored = self._memory is not None and self._memory.restored
        if damage is not None:
            report["ok"] = False
            report["journal"] = {**damage.to_json(), "ok": False, "detail": damage.line()}
        else:
            detail = "restored" if restored else ("new game" if self._driver else "no game yet")
            report["journal"] = {"ok": True, "detail": detail}
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

    def post_note(self, text: str) -> None:
        """A line for the log and the journal (any thread; e.g. what the colours learnt)."""
        self.post(NoteInput(text))

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
            except JournalRefused as exc:
                with self._cond:
                    self._generation -= 1  # the old game (if any) goes on
                if not restore:
                    raise
                # a damaged journal: no game over it until the host sets one up
                log.error("%s", exc.damage.line())
                with self._cond:
                    self._damage = exc.damage
                    self._health_line = exc.damage.line()
                    self._log.append("journal damaged: no game started (see the host page)")
                    self._bump_locked()
                return
            except BaseException:
                with self._cond:
                    self._generation -= 1  # the old game goes on
                raise
            memory = driver if isinstance(driver, TableMemory) else None
            restored = memory is not None and memory.restored
            kept = memory.recall() if memory is not None and restored else {}
            with self._cond:
                old = self._driver
                self._settings = driver.settings
                self._driver = driver
                self._memory = memory
                self._damage = memory.damage if memory is not None else None
                self._seen = None
                self._checking = False
                self._take_kept(kept, list(driver.settings.colours))
            if old is not None and old is not driver:
                old.close()
        self._keep_tokens()
        if restored:
            line = "game restored: " + ", ".join(driver.settings.colours)
            again = self.hand_on_untaken(driver)
            if again:
                line += f" (boards and presses from before the restart to work out: {again})"
        else:
            line = "new game: " + ", ".join(driver.settings.colours)
            kept_as = getattr(driver, "kept_damaged", "")
            if kept_as:
                line += f" (the damaged journal is kept as {kept_as.rsplit('/', 1)[-1]})"
        self._sync_from_driver([line])
        if self.hardware is not None:
            try:
                self.hardware.set_seats(list(driver.settings.colours))
                default = self.config.hardware.profile
                self.hardware.set_profile(dice_profile(driver.settings, default))
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
        self._coalesce(True)  # one version for the changes of one press (service/publish.py)
        try:
            while not stop.is_set():
                try:
                    item = self._queue.get(timeout=self._wait_s(tick_s))
                except queue.Empty:
                    self._idle()
                    self._flush(settled=worker.idle())
                    if worker.idle():
                        self.collector.idle()
                    continue
                if isinstance(item, StopInput):
                    break
                self._handle(item)
                self._idle()
                self._flush(settled=self._queue.empty() and worker.idle())
                # a tracker that never rests still gets a full collection now and then
                every = 6 * self.collector.every_s
                self.collector.idle(wait_s=every if worker.idle() else max(every, BUSY_GC_S))
        finally:
            self._stopping = True  # the tracker drops what is still queued
            self._coalesce(False)
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
        self._beat_journal()
        self._check_hardware()
        failing = tuple(n for n, p in self.heartbeats.report()["parts"].items() if not p["ok"])
        with self._cond:
            if failing != self._failing:  # the pages' health changed: show it
                self._failing = failing
                self._bump_locked()

    def _check_hardware(self) -> None:
        hw = self.hardware
        if hw is None:
            return
        try:
            panel = hw.snapshot()
        except HARDWARE_ERRORS as exc:
            self.heartbeats.trouble("hardware", f"panel: {exc}")
            return
        problem = self.hardware_problem or ring_problem(panel)
        self.heartbeats.beat("hardware", problem or str(hw.backend), working=not problem)
        with self._cond:
            if panel != self._panel:
                self._panel = panel
                self._bump_locked()

    def _beat_journal(self) -> None:
        """The ``journal`` part: open and the last write went through, or why not."""
        driver = self._driver
        if driver is None:
            self.heartbeats.trouble("journal", "no game yet")
        elif self._journal_error:
            self.heartbeats.trouble("journal", self._journal_error)
        else:
            path = getattr(driver, "journal_path", None)
            self.heartbeats.beat("journal", f"writing {path}" if path else "in memory")

    def _handle(self, item: ServiceInput) -> None:
        """One item, at the top of the service thread: whatever goes wrong is logged, the state
        is kept and the loop goes on (a waiting page gets an internal error, never a hang)."""
        try:
            if self._handle_item(item):
                self._journal_error = ""  # it reached the driver, which journals first
        except Exception as exc:  # the thread's top: log, keep the service alive
            log.exception("service: handling %s failed; state kept", item.kind)
            if isinstance(exc, JOURNAL_ERRORS):
                self._journal_error = f"cannot write: {type(exc).__name__}: {exc}"
                self.heartbeats.trouble("journal", self._journal_error)
            self.heartbeats.trouble("tracker", f"error while handling {item.kind}")
            if isinstance(item, CommandInput) and not item.future.done():
                item.future.set_exception(
                    CommandError(f"internal error: {type(exc).__name__}: {exc}", 500)
                )
        finally:
            self._done(item)

    def _handle_item(self, item: ServiceInput) -> bool:
        """Handle one item; True when a game input reached the driver on this thread (an
        input handed to the tracker's thread reports its journal from there)."""
        if isinstance(item, TrackedInput):
            self._tracked(item)
            return False
        if isinstance(item, CandidateInput):
            self._prepare(item.observation)
            return False
        watched = not isinstance(item, PanelInput | CameraStatusInput | NoteInput)
        if self.on_input is not None and watched:
            self.on_input(item)
        if isinstance(item, GAME_INPUTS) and self._to_tracker(item):
            return False  # its result comes back as a TrackedInput
        driver_before = self._driver.last_update if self._driver is not None else None
        match item:
            case CommandInput(command=command, audience=audience, future=future):
                try:
                    result = self._command(command, audience)
                except CommandError as exc:
                    future.set_exception(exc)
                else:
                    with self._cond:
                        answer: CommandResult = {"ok": True, "version": self._next_version_locked()}
                    future.set_result({**answer, **(result or {})})
            # no game yet (with a game, _to_tracker took these): only what the pages show
            case ObservationInput():
                self.last_observation_at = self._clock()
            case DiceInput(roll=roll):
                with self._cond:
                    self._dice = dice_display(roll)
            case DoneInput() | UndoInput():
                pass
            case CameraStatusInput(text=text):
                with self._cond:
                    if self._camera_status != text:
                        self._camera_status = text
                        self._bump_locked()
            case NoteInput(text=text):
                self._remember({"lines": [text]})
                with self._cond:
                    self._log.append(text)
                    self._bump_locked()
            case PanelInput() | StopInput():
                pass
        if self.on_result is not None and watched:
            update = self._driver.last_update if self._driver is not None else None
            self.on_result(item, Outcome(update if update is not driver_before else None))
        return isinstance(item, GAME_INPUTS) and self._driver is not None

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

    def _sync_from_driver(
        self, lines: list[str], extra: dict[str, object] | None = None, force: bool = False
    ) -> None:
        driver = self._driver
        if driver is None:
            return
        if lines or extra:
            self._remember({**(extra or {}), **({"lines": lines} if lines else {})})
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

    def _update_leds(self) -> None:
        hw = self.hardware
        published = self._published
        if hw is None or published is None:
            return
        try:
            hw.show_player(published.seat)
            hw.set_attention(published.attention)
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
                settings = settings_from_command(cmd, self._settings)
                if self.on_new_game is not None:
                    # a simulated table lays the game out first and says what it laid (the
                    # spells it drew when the host left them to the rules)
                    settings = self.on_new_game(settings) or settings
                self.start_game(settings, restore=False)
                return {"players": list(self._settings.colours)}
            case "roll" | "keep" | "dice_mode":
                return self._dice_command(name, cmd)
            case "reissue_tokens":
                return self._reissue(str(cmd.get("who", "")))
            case "accept_journal":
                return self._accept_journal()
        driver = self._driver
        if driver is None:
            raise CommandError("no game is set up yet", 409)
        if name in ("report_spell", "report_page_card"):
            self._report(cmd, audience, name)
        self._sync_from_driver(driver.command(cmd, audience))
        return None

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
        damage = self._damage
        health = self.heartbeats.report()
        failing = {n: p["detail"] or "not ok" for n, p in health["parts"].items() if not p["ok"]}
        base_line = self._health_line
        if damage is not None and self._driver is not None:
            base_line = f"{base_line} · journal damaged: see the host page"
        if audience.role == "host":  # the host page says why, with ports and errors
            line = " · ".join([base_line, *(f"{n}: {d}" for n, d in failing.items())])
        elif failing:  # the players' pages name what is wrong, the host page says more
            line = f"{base_line} · not ok: {', '.join(failing)} (see the host page)"
        else:
            line = base_line
        if audience.role == "host":
            host = {
                "settings": self._settings.to_json(),
                "source": self.config.camera.source,
                "parts": health["parts"],
            }
            if damage is not None:
                host["journal"] = {
                    **damage.to_json(),
                    "line": damage.line(),
                    "kept_name": damage.kept_as.rsplit("/", 1)[-1],
                    "game": self._driver is not None,
                }
            if self.extra_status is not None:
                host.update(self.extra_status())
        published = self._published
        return build_snapshot(
            version=self._version,
            epoch=self._epoch,
            audience=audience,
            phase=published.phase if published is not None else "setup",
            memory_aid=self._settings.memory_aid,
            state=published.state if published is not None else None,
            dice=self._dice,
            panel=self._panel,
            question=published.question if published is not None else None,
            health_ok=health["ok"] and damage is None,
            health_line=line,
            log=self._log,
            reports=self._reports,
            camera=self._camera_status,
            host=host,
            pack=published.pack.view_for(audience)
            if published is not None and published.pack is not None
            else None,
            seen=self._seen if self._checking else None,
            potions_unsure=published.potions_unsure if published is not None else None,
            hidden_unsure=published.hidden_unsure if published is not None else None,
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
