"""The game driver: the tracker with its journal (implements :class:`GameDriver` and
:class:`TableMemory`).

Every input goes through ``companion.journal.JournaledTracker``: it is on disk (SQLite, WAL,
``synchronous=FULL``) before the service publishes its result, and a restart replays the journal
to the identical belief — the same state and the same hidden wizards. The game's settings, the
join tokens, the pages' epoch and version and what the pages showed beside the game (log lines,
reports, dice) are kept in the same journal (``meta`` table and ``page`` records), so phones that
had joined keep working after a restart; the settings are also written beside it as
``<journal>.game.json`` for people reading the data directory.

A restart first checks the journal on a copy (:mod:`companion.service.journal_check`). A damaged
journal is never replaced silently: what can be read is salvaged into a fresh journal and the
damaged files are kept as ``<journal>.damaged-<n>``; when nothing can be salvaged no game starts
(:class:`JournalRefused`) until the host sets one up. A new game from the host archives the old
journal as ``<journal>.<n>`` and starts a fresh one.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.config import Config
from companion.journal import Journal, JournaledTracker, JournalError, restore, untaken
from companion.rules import GameState, Observation, SpaceObservation, dump_event, observe
from companion.service.driver import (
    DiceRoll,
    DriverOutputs,
    OptionView,
    PublishedGame,
    QuestionView,
)
from companion.service.game import GameSettings, describe_events
from companion.service.heartbeat import Heartbeats
from companion.service.journal_check import (
    JournalDamage,
    check_journal,
    keep_damaged,
    kept_name,
    salvage,
)
from companion.tracking import Committed, Question, Tracker, TrackerUpdate, describe
from companion.web.service import Audience, CommandError

log = logging.getLogger(__name__)

RESTORE_ERRORS = (OSError, ValueError, KeyError, TypeError, JournalError, sqlite3.Error)
"""What reading back a damaged journal or its settings can raise."""

PAGE_MEMORY = 200
"""``page`` records read back at a restart (the pages keep fewer log lines than this)."""


class JournalRefused(CommandError):
    """The journal at the configured path is damaged and nothing could be salvaged (or the
    path is a directory): no game is started over it without the host's say (409)."""

    def __init__(self, damage: JournalDamage) -> None:
        super().__init__(damage.line(), 409)
        self.damage = damage


def meta_path(journal_path: Path) -> Path:
    """``<journal>.game.json``: the game's settings beside its journal, for people reading the
    data directory."""
    return journal_path.with_name(journal_path.name + ".game.json")


def write_json_atomic(path: Path, data: object) -> None:
    """Write ``data`` as JSON to ``path`` through a synced temporary file (never half
    written). :raises OSError: the directory cannot be written."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _settings_from_start(tracker: Tracker, config: Config) -> GameSettings:
    """The settings a journal's start state stands for (memory aid from the config: the rules
    core does not keep it)."""
    table = tracker.initial_state.table
    c = table.config
    return GameSettings(
        players=c.player_count,
        colours=tuple(table.colours),
        variant=c.variant,
        teams=c.teams,
        modules=tuple(sorted(c.modules)),
        memory_aid=GameSettings.from_config(config.game).memory_aid,
        options=dict(c.options),
        spells=tuple(table.spells),
    )


class JournalMemory(DriverOutputs):
    """What the pages keep across a restart, in a driver's journal (the
    :class:`~companion.service.driver.TableMemory` part of every driver: the tracker's and a
    game pack's), with the outputs every driver has."""

    journal: Journal
    damage: JournalDamage | None

    def recall(self) -> dict[str, Any]:
        """What the journal keeps for the pages: ``tokens`` (``host``, ``players``), ``epoch``,
        ``version``, ``revoked``, the players' latest ``reports``, and the latest ``page``
        records (log ``lines``, ``report``, ``dice``) oldest first; empty for a new game."""
        j = self.journal
        out: dict[str, Any] = {}
        for key in ("tokens", "epoch", "version", "revoked", "reports"):
            try:
                out[key] = j.get_meta(key)
            except RESTORE_ERRORS:
                out[key] = None
        try:
            out["page"] = [r.payload for r in j.recent("page", PAGE_MEMORY)]
        except RESTORE_ERRORS:
            out["page"] = []
        return out

    def keep(self, key: str, value: object) -> None:
        """Keep a page setting (tokens, epoch, version, revoked, reports) in the journal."""
        self.journal.set_meta(key, value)

    def remember(self, entry: Mapping[str, object]) -> None:
        """Journal what the pages showed beside the game (``lines``, ``report``, ``dice``)."""
        self.journal.append("page", dict(entry))

    def accept_damage(self) -> None:
        """The host took note of the salvaged journal: stop reporting it."""
        self.damage = None
        self.journal.set_meta("damage", None)


class TrackedDriver(JournalMemory):
    """Tracker + journal for one game (see the module doc).

    :param config: the companion's configuration (``data.journal_path()``).
    :param heartbeats: where a journal that cannot be restored is reported (``tracker``).
    :param restore: continue the game in the journal when there is one.
    :raises JournalRefused: (restore) the journal is damaged beyond salvage, or (either) the
        journal path is a directory; nothing was changed on disk.
    :raises CommandError: the rules core refuses the settings (400).
    :raises OSError: the data directory cannot be written.
    """

    def __init__(
        self,
        config: Config,
        heartbeats: Heartbeats,
        settings: GameSettings,
        restore: bool = True,
    ) -> None:
        path = config.data.journal_path()
        if path.is_dir():
            raise JournalRefused(
                JournalDamage(f"{path} is a directory, not a journal file", str(path))
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        self.journal_path = path
        meta = meta_path(path)
        self.restored = False
        self.damage: JournalDamage | None = None
        self.kept_damaged = ""
        """Where a damaged journal found at a new game's start was kept ("" = none)."""
        restored = self._restore(path, meta, config) if restore and path.exists() else None
        if restored is not None:
            settings, tracker, journal = restored
            self.restored = True
            heartbeats.beat("tracker", "journal restored")
        else:
            tracker = Tracker.new(settings.rules_config())
            self._archive(path)
            journal = Journal(path)
            journal.set_meta("settings", settings.to_json())
            write_json_atomic(meta, settings.to_json())
        self._settings = settings
        self.tracker = tracker
        self.journal = journal
        self.jt = JournaledTracker(tracker, journal)
        self.commits = 0
        self._last_update: TrackerUpdate | None = None
        self._published = PublishedGame(
            state=tracker.state,
            question=self._question_view(tracker.question),
            health_line="ok",
            phase="over" if tracker.state.game.over else "playing",
        )

    def _restore(
        self, path: Path, meta: Path, config: Config
    ) -> tuple[GameSettings, Tracker, Journal] | None:
        """Continue the journal at ``path``: whole, or salvaged into a fresh one.

        :raises JournalRefused: damaged and nothing salvageable (the file is left as it was).
        """
        problem = check_journal(path)
        if not problem:
            journal = Journal(path, create=False)
            if journal.count() == 0:  # created, then stopped before the game began: no game
                journal.close()
                return None
            try:
                tracker = restore(journal)
            except RESTORE_ERRORS as exc:
                journal.close()
                problem = f"does not replay: {exc}"
            else:
                self.damage = JournalDamage.from_json(journal.get_meta("damage"))
                settings = self._settings_of(journal, meta, tracker, config, path)
                return settings, tracker, journal
        return self._salvage(path, meta, config, problem)

    def _settings_of(
        self, journal: Journal, meta: Path, tracker: Tracker, config: Config, path: Path
    ) -> GameSettings:
        """The game's settings: ``.game.json``, else the journal's copy, else the start state
        (a missing or unreadable ``.game.json`` is noted as damage and written again)."""
        try:
            return GameSettings.from_json(json.loads(meta.read_text()))
        except RESTORE_ERRORS as exc:
            why = "missing" if isinstance(exc, FileNotFoundError) else f"unreadable ({exc})"
        try:
            settings = GameSettings.from_json(journal.get_meta("settings"))
            source = "the settings were read from the journal"
        except RESTORE_ERRORS:
            settings = _settings_from_start(tracker, config)
            source = "the settings were read from the start of the game (memory aid from config)"
        log.error("journal %s: %s is %s; %s", path, meta.name, why, source)
        if self.damage is None:
            self.damage = JournalDamage(f"{meta.name} beside it was {why}; {source}", str(path))
            journal.set_meta("damage", self.damage.to_json())
        journal.set_meta("settings", settings.to_json())
        write_json_atomic(meta, settings.to_json())
        return settings

    def _salvage(
        self, path: Path, meta: Path, config: Config, problem: str
    ) -> tuple[GameSettings, Tracker, Journal]:
        kept = kept_name(path)
        log.error("journal %s damaged: %s; salvaging", path, problem)
        found = salvage(path)
        if found.tracker is None:
            raise JournalRefused(JournalDamage(problem, str(kept)))
        keep_damaged(path, kept)
        journal = Journal(path)
        journal.append_many(found.rows)
        for key, value in found.meta.items():
            if key != "damage":
                journal.set_meta(key, value)
        self.damage = JournalDamage(problem, str(kept), found.inputs)
        journal.set_meta("damage", self.damage.to_json())
        tracker = found.tracker
        journal._inputs_since_snapshot = found.inputs
        try:
            settings = GameSettings.from_json(json.loads(meta.read_text()))
        except RESTORE_ERRORS:
            try:
                settings = GameSettings.from_json(found.meta.get("settings") or {})
            except RESTORE_ERRORS:
                settings = _settings_from_start(tracker, config)
        journal.set_meta("settings", settings.to_json())
        write_json_atomic(meta, settings.to_json())
        log.error("journal %s: %d inputs salvaged; kept as %s", path, found.inputs, kept)
        return settings, tracker, journal

    def _archive(self, path: Path) -> None:
        """Move an old journal aside for a new game (:func:`archive_journal`); a damaged one's
        new name is kept in :attr:`kept_damaged`."""
        kept = archive_journal(path)
        if kept is not None:
            self.kept_damaged = kept

    def close(self) -> None:
        self.journal.close()

    # -- outputs ------------------------------------------------------------------------------

    @property
    def last_update(self) -> TrackerUpdate | None:
        return self._last_update

    @property
    def state(self) -> GameState:
        """The tracked best state (what the pages show)."""
        state = self._published.state
        assert state is not None  # the tracker always publishes a state
        return state

    def _set_health(self, line: str) -> None:
        self._published = dataclasses.replace(self._published, health_line=line)

    def _question_view(self, q: Question | None) -> QuestionView | None:
        if q is None:
            return None
        options: list[OptionView] = [
            {"id": str(i), "label": label} for i, label in enumerate(q.options)
        ]
        return {
            "id": q.id,
            "to": self.tracker.committed_state.current_player,
            "text": q.text,
            "options": options,
        }

    def _apply(self, update: TrackerUpdate) -> list[str]:
        self._last_update = update
        self._published = PublishedGame(
            state=update.state,
            question=self._question_view(update.question),
            health_line=str(update.health),
            phase="over" if update.state.game.over else "playing",
            potions_unsure=update.potions_unsure,
            hidden_unsure=update.hidden_unsure,
        )
        lines: list[str] = []
        for c in update.committed:
            self.commits += 1
            if c.action is None:
                unseen = [e for e in c.events if e.kind == "order_unseen"]
                if unseen:
                    n = len(unseen[0].get("options") or ())
                    lines.append(f"moves seen only together ({n} possible orders)")
                elif any(e.kind == "reanchor" for e in c.events):
                    lines.append("moves not followed: the board as the camera reads it")
                else:
                    lines.append("host corrected the board")
                continue
            lines.append(describe(c.action, self._before_of(c)) or type(c.action).__name__)
            lines.extend(describe_events(c.events, dump_event))
        for c in update.undone:
            lines.append("undone: " + type(c.action).__name__ if c.action else "undone")
        return lines

    def _before_of(self, committed: Committed) -> GameState:
        history = self.tracker.history
        for i, c in enumerate(history):
            if c is committed:
                return history[i - 1].state if i else self.tracker.initial_state
        return self.state

    # -- the inputs handed to the tracker's thread (InputLedger) ------------------------------

    def receive(self, kind: str, payload: Any) -> None:
        self.jt.receive(kind, payload)

    def taking(self, received: bool) -> None:
        self.jt.taking = received

    def took(self) -> None:
        self.jt.took()

    def untaken(self) -> list[tuple[str, Any]]:
        """The received inputs the tracker never took, oldest first: ``(kind, payload)`` as
        :meth:`receive` wrote them."""
        return [
            (str(r.payload.get("input")), r.payload.get("payload")) for r in untaken(self.journal)
        ]

    # -- inputs (service thread) -------------------------------------------------------------

    def prepare(self, obs: Observation) -> bool:
        """Work out a still board's reading ahead (the stability gate's early candidate); the
        belief and the journal are unchanged. See ``JournaledTracker.prepare``."""
        return self.jt.prepare(obs)

    def observe(self, obs: Observation) -> list[str]:
        try:
            return self._apply(self.jt.observe(obs))
        except ValueError as exc:  # ObservationError: nothing changed
            self._set_health(f"observation refused: {exc}")
            return []

    def dice(self, roll: DiceRoll) -> list[str]:
        try:
            lines = self._apply(self.jt.dice(roll.rolls, roll.dice_allowed))
        except ValueError as exc:
            self._set_health(f"dice refused: {exc}")
            return []
        return [f"dice: {' → '.join(map(str, roll.rolls))}", *lines]

    def end_turn(self) -> list[str]:
        try:
            return ["DONE", *self._apply(self.jt.end_turn())]
        except ValueError as exc:
            raise CommandError(f"end of turn refused: {exc}", 409) from None

    def undo(self) -> list[str]:
        try:
            return ["undo", *self._apply(self.jt.undo())]
        except ValueError as exc:
            raise CommandError(f"nothing to undo: {exc}", 409) from None

    def command(self, cmd: Mapping[str, object], audience: Audience) -> list[str]:
        name = cmd["command"]
        match name:
            case "answer":
                return self._answer(cmd, audience)
            case "end_turn":
                return self.end_turn()
            case "undo":
                return self.undo()
            case "correct_space":
                return self._correct_space(cmd)
            case "report_spell" | "report_page_card":
                who = audience.colour or "host"
                return [f"{who} reported {name.removeprefix('report_').replace('_', ' ')}"]
        raise CommandError(f"{name}: not available here", 409)

    def _answer(self, cmd: Mapping[str, object], audience: Audience) -> list[str]:
        q = self._published.question
        if q is None:
            raise CommandError("there is no open question", 409)
        if cmd.get("question") != q["id"]:
            raise CommandError("that question has already been answered", 409)
        option = cmd.get("option")
        ids = [o["id"] for o in q["options"]]
        if isinstance(option, int) and not isinstance(option, bool):
            option = str(option)
        if not isinstance(option, str) or option not in ids:
            raise CommandError(f"option: {option!r} is not one of {', '.join(ids)}")
        if audience.role == "player" and q["to"] and audience.colour != q["to"]:
            raise CommandError("this question is for another player", 403)
        label = q["options"][ids.index(option)]["label"]
        try:
            lines = self._apply(self.jt.answer(q["id"], int(option)))
        except ValueError as exc:
            raise CommandError(f"answer refused: {exc}", 409) from None
        return [f"{audience.colour or 'host'} answered: {label}", *lines]

    def _correct_space(self, cmd: Mapping[str, object]) -> list[str]:
        state = self.state
        space = cmd.get("space")
        length = state.table.length
        if not isinstance(space, int) or isinstance(space, bool) or not 1 <= space <= length:
            raise CommandError(f"space: expected a space number 1..{length}")
        wizards = cmd.get("wizards", {})
        if not isinstance(wizards, dict):
            raise CommandError("wizards: expected an object of colour -> count")
        try:
            seen = SpaceObservation(
                towers=cmd.get("towers"),  # type: ignore[arg-type]  # checked by SpaceObservation
                top=cmd.get("top"),  # type: ignore[arg-type]
                wizards=dict(wizards),
                castle=bool(cmd.get("castle", False)),
            )
        except (ValueError, TypeError) as exc:
            raise CommandError(str(exc)) from None
        expected = observe(state)
        spaces = dict(expected.spaces)
        spaces[space] = seen
        obs = Observation(spaces=spaces, time=expected.time, frame=expected.frame)
        lines = self.observe(obs)
        return [f"host corrected space {space}: the tracker re-checks it", *lines]

    # -- for the simulated players -------------------------------------------------------------

    def candidates(self, question: QuestionView) -> dict[str, list[GameState]]:
        """Option id -> the states answering with it stands for (for players who know the
        truth: the simulated table and tests)."""
        groups = self.tracker.question_candidates()
        return {str(i): list(states) for i, states in enumerate(groups)}


def archive_journal(path: Path) -> str | None:
    """Move an old journal aside for a new game: ``<journal>.<n>``, or when it is damaged
    ``<journal>.damaged-<n>``; returns the damaged journal's new path, else None. Nothing
    but a file at ``path`` is moved (a directory there is left alone)."""
    if not path.is_file():
        return None
    if check_journal(path):
        target = kept_name(path)
        keep_damaged(path, target)
        return str(target)
    n = 1
    while path.with_name(f"{path.name}.{n}").exists():
        n += 1
    target = path.with_name(f"{path.name}.{n}")
    for suffix in ("", "-wal", "-shm"):
        src = path.with_name(path.name + suffix)
        if src.is_file():
            os.replace(src, target.with_name(target.name + suffix))
    return None
