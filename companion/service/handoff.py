"""The tracker's side of the service: game inputs handed on in order (service thread), worked
out by the driver on the tracker's thread (:class:`~companion.service.worker.TrackerWorker`),
and their results published (service thread), so the search never stands in front of a press
or a page (docs/architecture.md, "Threads").

:class:`TrackerHandoff` is the part of :class:`~companion.service.core.CompanionService` that
does this; the service creates the attributes declared here.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Mapping

from companion.journal import JournalError
from companion.rules import Observation
from companion.service.driver import (
    DiceRoll,
    GameDriver,
    InputLedger,
    PublishedGame,
    RecordedGame,
)
from companion.service.inputs import (
    LEDGER_INPUTS,
    CandidateInput,
    CommandInput,
    CommandResult,
    DiceInput,
    DoneInput,
    GameInput,
    ObservationInput,
    Outcome,
    ServiceInput,
    TrackedInput,
    UndoInput,
    from_ledger,
    payload_json,
)
from companion.service.pagememory import PageMemory
from companion.service.worker import TrackerWorker
from companion.web.service import Audience, CommandError

log = logging.getLogger(__name__)

SERVICE_COMMANDS = frozenset(
    {"setup", "roll", "keep", "dice_mode", "reissue_tokens", "accept_journal"}
)
"""Commands the service thread carries out itself (the game, the dice panel, the join links,
the journal's damage note); every other game command goes to the tracker."""

JOURNAL_ERRORS = (sqlite3.Error, JournalError, OSError)
"""What writing the journal raises (disk full, file gone, database locked)."""


def dice_display(roll: DiceRoll) -> dict[str, object]:
    """The pages' dice display of a panel roll: ``mode`` (dice the move card allows), ``rolls``,
    ``final`` and the ``value`` that counts (None until chosen)."""
    return {
        "mode": roll.event.get("dice_allowed", 1),
        "rolls": list(roll.rolls),
        "final": True,
        "value": roll.event.get("used"),
    }


class TrackerHandoff(PageMemory):
    """Hands game inputs to the tracker and publishes its answers (see the module doc)."""

    _queue: queue.Queue[ServiceInput]
    _driver_lock: threading.Lock
    _generation: int
    _worker: TrackerWorker | None
    _seen: Observation | None
    _checking: bool
    _stopping: bool
    _published: PublishedGame | None
    _hooks: Mapping[str, object]
    _clock: Callable[[], float]
    _journal_error: str
    last_observation_at: float | None
    on_result: Callable[[ServiceInput, Outcome], None] | None

    def _sync_from_driver(
        self, lines: list[str], extra: dict[str, object] | None = None, force: bool = False
    ) -> None:
        raise NotImplementedError

    def post(self, item: ServiceInput) -> None:
        raise NotImplementedError

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
                state = published.state if published is not None else None
                length = state.table.length if state is not None else 0
                # a partial board (spaces withheld as unsure) is shown too: the pages draw
                # the missing spaces from the tracker's belief, never as empty
                if obs.spaces and set(obs.spaces) <= set(range(1, length + 1)):
                    with self._cond:  # the camera's board, at once: the pages need not wait
                        self._seen = obs
                        self._checking = True
                        self._bump_locked()
                # else not a board of this track: the tracker refuses it (health line)
            case DiceInput(roll=roll):
                with self._cond:
                    self._dice = dice_display(roll)
                    self._bump_locked()
            case CommandInput(command=command, audience=audience):
                name = str(command["command"])
                if name in self._hooks or name in SERVICE_COMMANDS:
                    return False
                if name in ("report_spell", "report_page_card"):
                    self._report(command, audience, name)
        received = self._receive(item)
        worker = self._worker
        if worker is not None:
            worker.put(item, self._generation, received)
        else:
            self._track(item, self._generation, received, inline=True)
        return True

    def _receive(self, item: GameInput) -> bool:
        """Journal a camera board or press as it is handed to the tracker (docs/architecture.md,
        "Restart"). True when it is journaled ahead (now, or before a restart); False when the
        driver keeps no such record or the journal cannot be written (the tracker still gets
        it)."""
        driver = self._driver
        if not isinstance(item, LEDGER_INPUTS):
            return False
        if item.received:
            return True
        if not isinstance(driver, InputLedger):
            return False
        try:
            driver.receive(item.kind, payload_json(item))
        except (*JOURNAL_ERRORS, TypeError, ValueError) as exc:
            log.error("journal: %s not written ahead: %s", item.kind, exc)
            self._journal_error = f"cannot write: {type(exc).__name__}: {exc}"
            self.heartbeats.trouble("journal", self._journal_error)
            return False
        return True

    def hand_on_untaken(self, driver: GameDriver) -> int:
        """A restored game: the camera boards and presses received before the restart that its
        tracker never took go to the tracker first, in their order. Returns how many."""
        if not isinstance(driver, InputLedger):
            return 0
        n = 0
        for kind, payload in driver.untaken():
            try:
                item = from_ledger(kind, payload)
            except (KeyError, TypeError, ValueError) as exc:
                log.error("journal: a received %s is unreadable (%s); skipped", kind, exc)
                continue
            self.post(item)
            n += 1
        return n

    def _track(
        self,
        item: GameInput | CandidateInput,
        generation: int,
        received: bool = False,
        inline: bool = False,
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
            carried = driver.carried_out if isinstance(driver, RecordedGame) else None
            lines: list[str] | None = None
            error: CommandError | None = None
            ledger = driver if isinstance(driver, InputLedger) else None
            if ledger is not None:
                ledger.taking(received)  # its input record carries the mark
            try:
                lines = self._drive(driver, item)
            except CommandError as exc:
                error = exc
            except Exception as exc:  # a tracker bug on one input: logged, the belief kept
                log.exception("tracker: handling %s failed; state kept", item.kind)
                error = CommandError(f"internal error: {type(exc).__name__}: {exc}", 500)
                if isinstance(exc, JOURNAL_ERRORS):  # the disk, not the tracker: say so
                    self._journal_error = f"cannot write: {type(exc).__name__}: {exc}"
                    self.heartbeats.trouble("journal", self._journal_error)
            else:
                self._journal_error = ""  # it reached the driver, which journals first
            if received and ledger is not None:
                try:
                    ledger.took()  # refused, or nothing written: the mark alone
                except JOURNAL_ERRORS as exc:  # a restart then gives it to the tracker again
                    log.error("journal: %s not marked taken: %s", item.kind, exc)
            update = driver.last_update
            outcome = Outcome(update if update is not before else None)
            if isinstance(driver, RecordedGame):  # taken here: the next input may change it
                record = driver.carried_out
                shown = driver.published.pack
                outcome = Outcome(outcome.update, record if record is not carried else None, shown)
        result = TrackedInput(item, generation, lines, outcome)
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
        extra: dict[str, object] | None = None
        if isinstance(item, DiceInput):
            with self._cond:
                extra = {"dice": self._dice}  # the dice display, kept for a restart
        self._sync_from_driver(result.lines or [], extra, force=agreed)
        error = result.error
        if isinstance(item, CommandInput):
            if error is not None:
                item.future.set_exception(error)
            else:
                with self._cond:
                    answer: CommandResult = {"ok": True, "version": self._next_version_locked()}
                item.future.set_result(answer)
        elif error is not None:
            log.error("service: %s refused: %s", item.kind, error.message)
            self.heartbeats.trouble("tracker", f"{item.kind} refused: {error.message}")
        if self.on_result is not None:
            self.on_result(item, result.outcome)

    def _report(self, cmd: Mapping[str, object], audience: Audience, name: str) -> None:
        """Keep a player's spell or page card report for the pages."""
        who = audience.colour if audience.role == "player" else cmd.get("player")
        entry = {k: v for k, v in cmd.items() if k != "command"}
        entry.update({"kind": name, "by": who or "host"})
        self._remember({"report": entry})  # on disk before any page shows it
        with self._cond:
            kept = [*self._reports, entry][-(self._reports.maxlen or 1) :]
        # the reports as a whole too: a restart reads only the journal's latest page records
        self._keep("reports", kept)
        with self._cond:
            self._reports.append(entry)
            self._bump_locked()
