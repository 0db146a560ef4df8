"""Game packs in the running service: :class:`PackDriver` and the choice of driver.

A pack game (``companion.packs``: the siege race, The Princess and Magic Tile, Wiz-War) is
driven like the tracked Wandering Towers, through the :class:`~companion.service.driver.
GameDriver` protocol, so the service, the pages, the LEDs and the buttons need no code of
their own per game (docs/architecture.md, "Game packs"):

* the game is **event-sourced** in the same SQLite journal as the tracker's (WAL,
  ``synchronous=FULL``): a ``pack_start`` record holds the settings and the first position,
  each command a ``pack_input`` record *as carried out* (what it left to chance already drawn,
  :meth:`~companion.packs.base.PackGame.resolve`), an undo a ``pack_undo`` record. Every record
  is on disk before the service publishes, so a restart — after a kill -9 too — replays the
  journal to the same game;
* a command the pack refuses raises :class:`~companion.web.service.CommandError` naming the
  field (400, or 409 when refused now) and changes nothing, journal included;
* the buttons: ROLL's result becomes the pack's ``dice`` command, DONE its ``end_turn``, UNDO
  takes back the last command; the LEDs light the seat the pack names.

:func:`game_driver` is the service's default driver factory: it continues the game kept in the
journal, whichever game it is, or starts the game the settings name.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from companion.config import Config
from companion.journal import Journal, JournalError
from companion.packs import PackError
from companion.packs.base import SEAT_COLOURS, Game, PackConflict, PackGame, Who
from companion.packs.registry import GAMES, PACKS, WANDERING_TOWERS, pack_for
from companion.rules import GameState, Observation
from companion.service.driver import DiceRoll, GameDriver, PackShown, PublishedGame, QuestionView
from companion.service.game import GameSettings
from companion.service.heartbeat import Heartbeats
from companion.service.journal_check import JournalDamage, wal_problem
from companion.service.tracked import (
    RESTORE_ERRORS,
    JournalMemory,
    TrackedDriver,
    archive_journal,
    meta_path,
    write_json_atomic,
)
from companion.tracking import TrackerUpdate
from companion.web.service import Audience, CommandError, MemoryAid


class ServiceParts(Protocol):
    """What :func:`game_driver` needs of the service: its configuration and heartbeats."""

    config: Config
    heartbeats: Heartbeats


log = logging.getLogger(__name__)


def _refused(exc: PackError, action: str) -> CommandError:
    """A pack's refusal as the web answers it: ``"<action>.<field>: <rule>: <why>"``."""
    return CommandError(f"{action}.{exc}", 409 if isinstance(exc, PackConflict) else 400)


class PackDriver(JournalMemory):
    """One pack game with its journal (see the module doc). Implements ``GameDriver``.

    :param config: the companion's configuration (``data.journal_path()``).
    :param heartbeats: where a journal that cannot be restored is reported (``tracker``).
    :param settings: the game's settings (``settings.game`` names the pack).
    :param restore: continue the pack game in the journal (its own settings win).
    :param rng: what decides chance (deployment cards, the start order); ``SystemRandom``
        unless a test seeds it.
    :raises CommandError: ``settings.game`` is not a pack, or ``restore`` finds no pack game.
    """

    def __init__(
        self,
        config: Config,
        heartbeats: Heartbeats,
        settings: GameSettings,
        restore: bool = True,
        rng: random.Random | None = None,
    ) -> None:
        self._rng = rng if rng is not None else random.SystemRandom()
        path = config.data.journal_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.journal_path = path
        self.restored = False
        restored = self._restore(path, heartbeats) if restore else None
        if restored is not None:
            settings, journal, history = restored
            self.pack = self._pack(settings.game)
            self.restored = True
        else:
            self.pack = self._pack(settings.game)
            try:
                first = self.pack.new_game(settings.pack, settings.colours, self._rng)
            except PackError as exc:
                raise CommandError(f"setup.{exc}") from None
            archive_journal(path)
            journal = Journal(path, snapshot_every=0)
            journal.append(
                "pack_start",
                {"game": settings.game, "settings": settings.to_json(), "state": first},
            )
            write_json_atomic(meta_path(path), settings.to_json())
            history = [first]
        self._settings = settings
        self.journal = journal
        self.damage: JournalDamage | None = None
        self._history: list[Game] = history
        self._carried: Mapping[str, Any] = self.start_record()
        self._health = f"{self.pack.title}: played with the buttons and the phones (no camera)"
        self._published = self._publish()

    @staticmethod
    def _pack(game: str) -> PackGame:
        try:
            return pack_for(game)
        except PackError as exc:
            raise CommandError(f"setup.{exc}") from None

    @staticmethod
    def _restore(
        path: Path, heartbeats: Heartbeats
    ) -> tuple[GameSettings, Journal, list[Game]] | None:
        if not path.exists():
            return None
        journal: Journal | None = None
        try:
            journal = Journal(path, snapshot_every=0)
            start = journal.last("pack_start")
            if start is None:
                journal.close()
                return None
            settings = GameSettings.from_json(start.payload["settings"])
            return settings, journal, replay_pack(journal)
        except RESTORE_ERRORS as exc:  # unreadable journal: keep it aside, start afresh
            log.error("pack journal %s not restorable (%s); starting a new game", path, exc)
            heartbeats.trouble("tracker", f"journal not restorable: {exc}")
            if journal is not None:
                journal.close()
            return None

    def close(self) -> None:
        self.journal.close()

    # -- outputs ------------------------------------------------------------------------------

    @property
    def last_update(self) -> TrackerUpdate | None:
        return None

    @property
    def game(self) -> Game:
        """The pack's game now (its JSON)."""
        return self._history[-1]

    @property
    def carried_out(self) -> Mapping[str, Any]:
        """The journal record of the latest change (``pack_start`` with the whole history
        after the game was set up or restored, then ``pack_input`` / ``pack_undo``); a new
        object for each change (:class:`~companion.service.driver.RecordedGame`)."""
        return self._carried

    def start_record(self) -> dict[str, Any]:
        """The game as it is now, for a recording: ``{"kind": "pack_start", "game",
        "settings", "history"}`` (every position still in force, first position first)."""
        return {
            "kind": "pack_start",
            "game": self._settings.game,
            "settings": self._settings.to_json(),
            "history": list(self._history),
        }

    def _publish(self) -> PublishedGame:
        shown = pack_shown(self.pack, self.game, self._settings)
        over = self.pack.over(self.game)
        return PublishedGame(None, None, self._health, "over" if over else "playing", shown)

    # -- inputs (service thread) -------------------------------------------------------------

    def _carry_out(self, change: Mapping[str, Any]) -> list[str]:
        """Resolve, apply, journal, then publish a ``pack_input`` change (:func:`pack_change`);
        a refusal raises and changes nothing."""
        command, by = change["command"], change["by"]
        who = Who(by["role"], by["colour"])
        action = str(command.get("action", "?"))[:24]
        try:
            resolved = self.pack.resolve(self.game, command, self._rng)
            game, lines = self.pack.apply(self.game, resolved, who)
        except PackError as exc:
            raise _refused(exc, action) from None
        record = {"command": resolved, "by": dict(by)}
        self.journal.append("pack_input", record)
        self._history.append(game)
        self._carried = {"kind": "pack_input", **record}
        self._published = self._publish()
        return lines

    def prepare(self, obs: Observation) -> bool:
        return False

    def observe(self, obs: Observation) -> list[str]:
        return []  # no camera reading for the pack games

    def dice(self, roll: DiceRoll) -> list[str]:
        change = pack_change("dice", roll.event, None)
        assert change is not None  # a dice roll always asks for the pack's dice command
        try:
            return self._carry_out(change)
        except CommandError as exc:  # a game without dice, or one that is over
            shown = " + ".join(map(str, change["command"]["faces"]))
            why = "no dice in this game" if exc.status == 400 else exc.message
            return [f"dice: {shown} (not used: {why})"]

    def end_turn(self) -> list[str]:
        change = pack_change("done", None, None)
        assert change is not None
        return ["DONE", *self._carry_out(change)]

    def undo(self) -> list[str]:
        if len(self._history) < 2:
            raise CommandError("nothing to undo: the game has just been set up", 409)
        self.journal.append("pack_undo", {})
        self._history.pop()
        self._carried = {"kind": "pack_undo"}
        self._published = self._publish()
        return ["undo: the last change is taken back"]

    def command(self, cmd: Mapping[str, object], audience: Audience) -> list[str]:
        name = cmd["command"]
        if name == "pack" and not isinstance(cmd.get("args") or {}, Mapping):
            raise CommandError("pack.args: expected an object")
        change = pack_change("command", cmd, audience.to_json())
        if change is None:
            raise CommandError(f"{name}: not available in {self.pack.title}", 409)
        if change["kind"] == "pack_undo":
            return self.undo()
        lines = self._carry_out(change)
        return ["DONE", *lines] if name == "end_turn" else lines

    def candidates(self, question: QuestionView) -> dict[str, list[GameState]]:
        return {}


def replay_pack(journal: Journal) -> list[Game]:
    """Replay a pack journal: the game after every command still in force (undos applied),
    first position first. Deterministic: chance was drawn before the commands were written.

    :raises JournalError: no ``pack_start`` record, or a record the pack refuses.
    """
    start = journal.last("pack_start")
    if start is None:
        raise JournalError(f"{journal.path}: no pack_start record")
    pack = pack_for(str(start.payload["game"]))
    history: list[Game] = []
    for rec in journal.records(after=start.seq - 1):
        try:
            apply_change(pack, history, {**rec.payload, "kind": rec.kind})
        except (PackError, KeyError, TypeError) as exc:
            raise JournalError(f"record {rec.seq} ({rec.kind}): {exc}") from exc
    return history


def apply_change(pack: PackGame, history: list[Game], change: Mapping[str, Any]) -> None:
    """Carry one journal record (``{"kind": ..., **payload}``) out on ``history`` (changed in
    place): ``pack_start`` sets the first position (``state``) or, from a recording, the whole
    ``history``; ``pack_input`` applies its resolved ``command`` for ``by``; ``pack_undo``
    takes the last position back (never the first). Other kinds change nothing. The same
    code replays a journal (:func:`replay_pack`) and a recording
    (``companion.service.record``).

    :raises PackError: the pack refuses the command (``history`` unchanged).
    :raises KeyError, TypeError: a record of the wrong shape (``history`` unchanged).
    """
    match change["kind"]:
        case "pack_start":
            if "history" in change:
                games = change["history"]
                if not isinstance(games, list) or not games:
                    raise TypeError("pack_start.history: expected a list of positions")
                history[:] = games
            else:
                history[:] = [change["state"]]
        case "pack_input":
            by = change.get("by") or {}
            who = Who(by.get("role", "host"), by.get("colour"))
            command = change["command"]
            if not isinstance(command, Mapping):
                raise TypeError("pack_input.command: expected an object")
            history.append(pack.apply(history[-1], command, who)[0])
        case "pack_undo":
            if len(history) > 1:
                history.pop()


def pack_change(kind: str, payload: object, audience: object) -> dict[str, Any] | None:
    """The change a service input asks of a pack game, before chance is drawn: ``{"kind":
    "pack_input", "command": {...}, "by": {"role", "colour"}}``, ``{"kind": "pack_undo"}``, or
    None when it asks none (a camera reading, the host's setup). The driver carries these out
    live; a replay checks that a recording's carried-out change is this one with chance drawn
    (:meth:`~companion.packs.base.PackGame.resolve` only adds what chance decides).

    :param kind: the input's kind (``dice``, ``done``, ``undo``, ``command`` …).
    :param payload: the input's payload as a recording keeps it (the dice panel's event, the
        phone's command).
    :param audience: who sent a command (``Audience.to_json()``); None = the host (the panel).
    """
    host = {"role": "host", "colour": None}
    by = dict(audience) if isinstance(audience, Mapping) else host
    match kind:
        case "dice":
            event = payload if isinstance(payload, Mapping) else {}
            raw, rolls = event.get("dice"), event.get("rolls")
            faces: list[object] = [rolls[-1]] if isinstance(rolls, list) and rolls else []
            if isinstance(raw, list) and raw and isinstance(raw[-1], list):
                faces = list(raw[-1])
            return {"kind": "pack_input", "command": {"action": "dice", "faces": faces}, "by": host}
        case "done":
            return {"kind": "pack_input", "command": {"action": "end_turn"}, "by": host}
        case "undo":
            return {"kind": "pack_undo"}
        case "command" if isinstance(payload, Mapping):
            match payload.get("command"):
                case "pack":
                    args = payload.get("args") or {}
                    if not isinstance(args, Mapping):
                        return None
                    command = {**args, "action": payload.get("action")}
                    return {"kind": "pack_input", "command": command, "by": by}
                case "end_turn":
                    return {"kind": "pack_input", "command": {"action": "end_turn"}, "by": by}
                case "undo":
                    return {"kind": "pack_undo"}
    return None


def pack_shown(pack: PackGame, game: Game, settings: GameSettings) -> PackShown:
    """What the pages and the LEDs show of a pack game: the public and host views, each seated
    player's own view, the lit seat and the attention LED (docs/architecture.md, "Game
    packs")."""
    views: dict[str, Mapping[str, object]] = {
        "public": pack.view(game, Who("public")),
        "host": pack.view(game, Who("host")),
    }
    for colour in settings.colours:
        views[f"player:{colour}"] = pack.view(game, Who("player", colour))
    leds = pack.leds(game)
    return PackShown(settings.game, views, leds.seat, leds.attention)


# --------------------------------------------------------------------------------------------
# choosing the driver and the settings


def saved_pack(config: Config) -> GameSettings | None:
    """The settings of the pack game the journal keeps, or None (no journal, the tracker's, or
    unreadable settings). A journal whose write-ahead log is damaged is not opened here:
    SQLite would drop such a log on opening, and the tracker's driver must see the damage to
    keep the files and tell the host (docs/architecture.md, "Restart")."""
    path = config.data.journal_path()
    if not path.is_file() or wal_problem(path):
        return None
    try:
        with Journal(path, snapshot_every=0, create=False) as journal:
            start = journal.last("pack_start")
        if start is None:
            return None
        settings = GameSettings.from_json(start.payload["settings"])
    except (*RESTORE_ERRORS, json.JSONDecodeError):
        return None
    return settings if settings.game in PACKS else None


def game_driver(
    service: ServiceParts,
    settings: GameSettings,
    restore: bool,
    rng: random.Random | None = None,
) -> GameDriver:
    """The service's driver factory: continue the game in the journal (a pack's or the
    tracker's) when ``restore``, otherwise start ``settings.game``. A pack journal that cannot
    be replayed is kept aside and the same pack starts afresh (as the tracker's does).

    :raises CommandError: the settings are refused (400).
    """
    config, heartbeats = service.config, service.heartbeats
    saved = saved_pack(config) if restore else None
    if saved is not None:
        return PackDriver(config, heartbeats, saved, restore=True, rng=rng)
    if settings.game == WANDERING_TOWERS:
        return TrackedDriver(config, heartbeats, settings, restore=restore)
    return PackDriver(config, heartbeats, settings, restore=False, rng=rng)


def dice_profile(settings: GameSettings, default: str) -> str:
    """The dice button's profile for the game: the pack's, or ``default`` (the configured
    ``hardware.profile``) for the Wandering Towers."""
    pack = PACKS.get(settings.game)
    return pack.dice_profile if pack is not None else default


def settings_from_command(cmd: Mapping[str, Any], base: GameSettings) -> GameSettings:
    """The host's ``setup`` command as settings: ``game`` (default the Wandering Towers, set up
    by ``GameSettings.from_command``), ``colours`` (seat order, start player first; default
    the first seat colours) and ``pack`` (the pack's settings, defaults filled in).

    :raises CommandError: naming the bad field (400).
    """
    game = cmd.get("game", WANDERING_TOWERS)
    if game not in GAMES:
        raise CommandError(f"setup.game: {str(game)[:24]!r} is not one of {', '.join(GAMES)}")
    if game == WANDERING_TOWERS:
        rest = {k: v for k, v in cmd.items() if k not in ("game", "pack")}
        if base.game != WANDERING_TOWERS:
            base = dataclasses.replace(base, game=WANDERING_TOWERS, pack={})
        return GameSettings.from_command(rest, base)
    pack = PACKS[str(game)]
    low, high = pack.players
    colours = cmd.get("colours") or []
    players = cmd.get("players", len(colours) or max(low, min(high, base.players)))
    if not isinstance(players, int) or isinstance(players, bool) or not low <= players <= high:
        raise CommandError(f"setup.players: {pack.title} is for {low}-{high} players")
    if not colours:
        colours = list(SEAT_COLOURS[:players])
    if not isinstance(colours, list) or len(colours) != players:
        raise CommandError(f"setup.colours: expected {players} seat colours")
    raw = cmd.get("pack") or {}
    if not isinstance(raw, Mapping):
        raise CommandError("setup.pack: expected an object of setting -> value")
    try:
        checked = pack.settings(raw, colours)
    except PackError as exc:
        raise CommandError(f"setup.{exc}") from None
    aid: MemoryAid = base.memory_aid
    return GameSettings(
        players=players, colours=tuple(colours), game=str(game), pack=checked, memory_aid=aid
    )
