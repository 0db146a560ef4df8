"""The game driver with the real tracker and its journal.

Every input goes through ``companion.journal.JournaledTracker``: it is on disk (SQLite, WAL,
``synchronous=FULL``) before the service publishes its result, and a restart replays the journal
to the identical belief — the same state and the same hidden wizards. The game's settings that
the rules core does not hold (memory aid) are kept beside the journal in ``<journal>.game.json``.

A new game (the host's setup) archives the old journal as ``<journal>.<n>`` and starts a fresh
one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from companion.service.game import GameSettings, describe_events
from companion.web.service import Audience, CommandError

log = logging.getLogger(__name__)


def _meta_path(journal_path: Path) -> Path:
    return journal_path.with_name(journal_path.name + ".game.json")


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class TrackedDriver:
    """Tracker + journal for one game (see the module doc).

    :param restore: continue the game in the journal when there is one.
    :raises CommandError: the rules core refuses the settings.
    """

    def __init__(self, service: Any, settings: GameSettings, restore: bool = True) -> None:
        self.service = service
        self.parts = service.parts
        tracker_mod = self.parts.get("tracker")
        journal_mod = self.parts.get("journal")
        self._rules = self.parts.get("rules")
        assert tracker_mod is not None and self._rules is not None
        self._tracker_mod = tracker_mod
        path = service.config.data.journal_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.journal_path = path
        meta = _meta_path(path)
        self.restored = False
        tracker = None
        self.journal: Any = None
        if journal_mod is None:
            self.journal_missing = self.parts.missing_line("journal")
        else:
            self.journal_missing = ""
        if restore and journal_mod is not None and path.exists() and meta.exists():
            try:
                saved = json.loads(meta.read_text())
                settings = GameSettings.from_json(saved)
                self.journal = journal_mod.Journal(path)
                tracker = journal_mod.restore(self.journal)
                self.restored = True
            except Exception as exc:  # unreadable journal: keep it aside, start afresh
                log.error("journal %s not restorable (%s); starting a new game", path, exc)
                service.heartbeats.trouble("tracker", f"journal not restorable: {exc}")
                if self.journal is not None:
                    with contextlib.suppress(Exception):
                        self.journal.close()
                self.journal = None
                tracker = None
        if tracker is None:
            rules_config = settings.rules_config(self.parts)
            tracker = tracker_mod.Tracker.new(rules_config)
            if journal_mod is not None:
                self._archive(path)
                self.journal = journal_mod.Journal(path)
                _write_json_atomic(meta, settings.to_json())
        self.settings = settings
        self.tracker = tracker
        if self.journal is not None:
            self.jt = journal_mod.JournaledTracker(tracker, self.journal)
        else:
            self.jt = tracker
        self.state = tracker.state
        self.question: dict[str, Any] | None = None
        self.phase = "over" if self.state.game.over else "playing"
        self.health_line = (
            "ok"
            if not self.journal_missing
            else (f"tracking, but not journalled: {self.journal_missing}")
        )
        self.commits = 0
        self.last_update: Any = None
        self._set_question(tracker.question)

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
        if self.journal is not None:
            self.journal.close()

    # -- outputs ------------------------------------------------------------------------------

    def _set_question(self, q: Any) -> None:
        if q is None:
            self.question = None
            return
        to = None
        with contextlib.suppress(Exception):
            to = self.tracker.committed_state.current_player
        self.question = {
            "id": q.id,
            "to": to,
            "text": q.text,
            "options": [{"id": str(i), "label": label} for i, label in enumerate(q.options)],
        }

    def _apply(self, update: Any) -> list[str]:
        self.last_update = update
        self.state = update.state
        self._set_question(update.question)
        self.phase = "over" if update.state.game.over else "playing"
        health = str(update.health)
        if self.journal_missing:
            health += f" (not journalled: {self.journal_missing})"
        self.health_line = health
        lines: list[str] = []
        dump_event = self._rules.dump_event
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
            desc = ""
            describe = getattr(self._tracker_mod, "describe", None)
            if describe is not None:
                with contextlib.suppress(Exception):
                    desc = describe(c.action, self._before_of(c))
            lines.append(desc or type(c.action).__name__)
            lines.extend(describe_events(c.events, dump_event))
        for c in getattr(update, "undone", ()):
            lines.append("undone: " + type(c.action).__name__ if c.action else "undone")
        return lines

    def _before_of(self, committed: Any) -> Any:
        history = self.tracker.history
        for i, c in enumerate(history):
            if c is committed:
                return history[i - 1].state if i else self.tracker.initial_state
        return self.state

    # -- inputs (service thread) -------------------------------------------------------------

    def prepare(self, obs: Any) -> bool:
        """Work out a still board's reading ahead (the stability gate's early candidate); the
        belief and the journal are unchanged. See ``JournaledTracker.prepare``."""
        prepare = getattr(self.jt, "prepare", None)
        return bool(prepare(obs)) if prepare is not None else False

    def observe(self, obs: Any) -> list[str]:
        try:
            return self._apply(self.jt.observe(obs))
        except ValueError as exc:  # ObservationError: nothing changed
            self.health_line = f"observation refused: {exc}"
            return []

    def dice(self, event: dict[str, Any]) -> list[str]:
        rolls = tuple(int(r) for r in event.get("rolls", []))
        allowed = int(event.get("dice_allowed", len(rolls) or 1))
        try:
            lines = self._apply(self.jt.dice(rolls, allowed))
        except ValueError as exc:
            self.health_line = f"dice refused: {exc}"
            return []
        return [f"dice: {' → '.join(map(str, rolls))}", *lines]

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

    def command(self, cmd: dict[str, Any], audience: Audience) -> list[str]:
        name = cmd["command"]
        if name == "answer":
            return self._answer(cmd, audience)
        if name == "end_turn":
            return self.end_turn()
        if name == "undo":
            return self.undo()
        if name == "correct_space":
            return self._correct_space(cmd)
        if name in ("report_spell", "report_page_card"):
            who = audience.colour or "host"
            return [f"{who} reported {name.removeprefix('report_').replace('_', ' ')}"]
        raise CommandError(f"{name}: not available here", 409)

    def _answer(self, cmd: dict[str, Any], audience: Audience) -> list[str]:
        q = self.question
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
        if audience.role == "player" and q.get("to") and audience.colour != q["to"]:
            raise CommandError("this question is for another player", 403)
        label = q["options"][ids.index(option)]["label"]
        try:
            lines = self._apply(self.jt.answer(q["id"], int(option)))
        except ValueError as exc:
            raise CommandError(f"answer refused: {exc}", 409) from None
        return [f"{audience.colour or 'host'} answered: {label}", *lines]

    def _correct_space(self, cmd: dict[str, Any]) -> list[str]:
        rules = self._rules
        state = self.state
        space = cmd.get("space")
        length = state.table.length
        if not isinstance(space, int) or isinstance(space, bool) or not 1 <= space <= length:
            raise CommandError(f"space: expected a space number 1..{length}")
        wizards = cmd.get("wizards", {})
        if not isinstance(wizards, dict):
            raise CommandError("wizards: expected an object of colour -> count")
        try:
            seen = rules.SpaceObservation(
                towers=cmd.get("towers"),
                top=cmd.get("top"),
                wizards=dict(wizards),
                castle=bool(cmd.get("castle", False)),
            )
        except (ValueError, TypeError) as exc:
            raise CommandError(str(exc)) from None
        expected = rules.observe(state)
        spaces = dict(expected.spaces)
        spaces[space] = seen
        obs = rules.Observation(spaces=spaces, time=expected.time, frame=expected.frame)
        lines = self.observe(obs)
        return [f"host corrected space {space}: the tracker re-checks it", *lines]

    # -- for the simulated players -------------------------------------------------------------

    def candidates(self, question: dict[str, Any]) -> dict[str, list[Any]]:
        """Option id -> the states answering with it stands for (for players who know the
        truth: the simulated table and tests)."""
        groups = self.tracker.question_candidates()
        return {str(i): list(states) for i, states in enumerate(groups)}
