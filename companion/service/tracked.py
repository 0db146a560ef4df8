"""The game driver: the tracker with its journal (implements :class:`GameDriver`).

Every input goes through ``companion.journal.JournaledTracker``: it is on disk (SQLite, WAL,
``synchronous=FULL``) before the service publishes its result, and a restart replays the journal
to the identical belief — the same state and the same hidden wizards. The game's settings that
the rules core does not hold (memory aid) are kept beside the journal in ``<journal>.game.json``.

A new game (the host's setup) archives the old journal as ``<journal>.<n>`` and starts a fresh
one.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from companion.config import Config
from companion.journal import Journal, JournaledTracker, JournalError, restore
from companion.rules import GameState, Observation, SpaceObservation, dump_event, observe
from companion.service.driver import DiceRoll, OptionView, PublishedGame, QuestionView
from companion.service.game import GameSettings, describe_events
from companion.service.heartbeat import Heartbeats
from companion.tracking import Committed, Question, Tracker, TrackerUpdate, describe
from companion.web.service import Audience, CommandError

log = logging.getLogger(__name__)

RESTORE_ERRORS = (OSError, ValueError, KeyError, TypeError, JournalError, sqlite3.Error)
"""What reading back a damaged journal or its ``.game.json`` can raise (then a new game starts
and the old journal is kept aside)."""


def _meta_path(journal_path: Path) -> Path:
    return journal_path.with_name(journal_path.name + ".game.json")


def _write_json_atomic(path: Path, data: object) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class TrackedDriver:
    """Tracker + journal for one game (see the module doc).

    :param config: the companion's configuration (``data.journal_path()``).
    :param heartbeats: where a journal that cannot be restored is reported (``tracker``).
    :param restore: continue the game in the journal when there is one.
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
        path.parent.mkdir(parents=True, exist_ok=True)
        self.journal_path = path
        meta = _meta_path(path)
        self.restored = False
        restored = self._restore(path, meta, heartbeats) if restore else None
        if restored is not None:
            settings, tracker, journal = restored
            self.restored = True
        else:
            tracker = Tracker.new(settings.rules_config())
            self._archive(path)
            journal = Journal(path)
            _write_json_atomic(meta, settings.to_json())
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

    @staticmethod
    def _restore(
        path: Path, meta: Path, heartbeats: Heartbeats
    ) -> tuple[GameSettings, Tracker, Journal] | None:
        if not (path.exists() and meta.exists()):
            return None
        journal: Journal | None = None
        try:
            settings = GameSettings.from_json(json.loads(meta.read_text()))
            journal = Journal(path)
            return settings, restore(journal), journal
        except RESTORE_ERRORS as exc:  # unreadable journal: keep it aside, start afresh
            log.error("journal %s not restorable (%s); starting a new game", path, exc)
            heartbeats.trouble("tracker", f"journal not restorable: {exc}")
            if journal is not None:
                journal.close()
            return None

    @staticmethod
    def _archive(path: Path) -> None:
        if not path.exists():
            return
        n = 1
        while path.with_name(f"{path.name}.{n}").exists():
            n += 1
        target = path.with_name(f"{path.name}.{n}")
        for suffix in ("", "-wal", "-shm"):
            src = path.with_name(path.name + suffix)
            if src.exists():
                os.replace(src, target.with_name(target.name + suffix))

    def close(self) -> None:
        self.journal.close()

    # -- outputs ------------------------------------------------------------------------------

    @property
    def settings(self) -> GameSettings:
        return self._settings

    @property
    def published(self) -> PublishedGame:
        return self._published

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
        p = self._published
        self._published = PublishedGame(p.state, p.question, line, p.phase)

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
        )
        lines: list[str] = []
        for c in update.committed:
            self.commits += 1
            if c.action is None:
                unseen = [e for e in c.events if e.kind == "order_unseen"]
                if unseen:
                    n = len(unseen[0].get("options") or ())
                    lines.append(f"moves seen only together ({n} possible orders)")
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
