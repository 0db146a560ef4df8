"""A game's settings and the log lines every page shows.

:class:`GameSettings` holds the choices of one game (the host page's setup, or ``[game]`` of the
config) and builds the rules core's ``Config`` from them; :func:`describe_events` words the
committed events for the public log (docs/architecture.md). What a page shows of the state comes
from ``companion.rules.view`` alone: the public table and the host see no hidden wizard (unless
the table agreed on memory aid ``all``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.config import GameConfig, allowed_colours
from companion.rules import Config as RulesConfig
from companion.rules import Event
from companion.web.gamesetup import memory_aid_of, parse_setup
from companion.web.service import CommandError, MemoryAid


def _memory_aid(value: object) -> MemoryAid:
    """``value`` as a memory-aid mode.

    :raises ValueError: ``value`` is not ``off``, ``own`` or ``all``.
    """
    aid = memory_aid_of(value)
    if aid is None:
        raise ValueError(f"memory_aid: expected off, own or all, not {value!r}")
    return aid


@dataclass
class GameSettings:
    """The choices of one game (the host page's setup, or ``[game]`` of the config)."""

    players: int = 3
    colours: tuple[str, ...] = ()
    variant: str = "base"
    teams: bool = False
    modules: tuple[str, ...] = ()
    memory_aid: MemoryAid = "own"
    options: Mapping[str, Any] = field(default_factory=dict)
    spells: tuple[str, ...] | None = None
    """The spell tiles on the table; None = as the rules say (R-SETUP-4; drawn by the players
    with the magic tower or the master variant, which the tracker cannot know: then it uses
    the rules core's default draw)."""
    game: str = "wandering-towers"
    """Which game (``companion.packs.registry.GAMES``); the others are played with the buttons
    and the phones (``companion.service.packs``)."""
    pack: Mapping[str, Any] = field(default_factory=dict)
    """The checked settings of a pack game (its ``PackGame.settings``); empty for this game."""

    @classmethod
    def from_config(cls, game: GameConfig) -> GameSettings:
        return cls(
            players=game.players,
            colours=tuple(game.colours) or allowed_colours(game.players)[: game.players],
            variant=game.variant,
            teams=game.teams,
            modules=tuple(game.modules),
            memory_aid=_memory_aid(game.memory_aid),
            options=dict(game.options),
            spells=None if game.spells is None else tuple(game.spells),
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameSettings:
        """The inverse of :meth:`to_json` (a journal's or recording's saved settings; ones saved
        before ``spells`` existed mean "as the rules say").

        :raises KeyError, TypeError, ValueError: a field is missing or of the wrong type.
        """
        spells = data.get("spells")
        game = str(data.get("game", "wandering-towers"))
        return cls(
            game=game,
            pack=dict(data.get("pack") or {}),
            players=int(data["players"]),
            colours=tuple(data["colours"]),
            variant=str(data["variant"]),
            teams=bool(data["teams"]),
            modules=tuple(data["modules"]),
            memory_aid=_memory_aid(data["memory_aid"]),
            options=dict(data["options"]),
            spells=None if spells is None else tuple(spells),
        )

    @classmethod
    def from_command(cls, cmd: Mapping[str, Any], base: GameSettings) -> GameSettings:
        """Parse the host's ``setup`` command (missing keys keep ``base``'s values; the colours
        only while the number of players stays) with the web's own setup check
        (``companion.web.gamesetup.parse_setup``, which asks the rules core).

        :raises CommandError: naming the bad field (400).
        """
        if not isinstance(cmd, Mapping):
            raise CommandError("setup: expected an object")
        merged: dict[str, Any] = {**base.to_json(), **cmd}
        if "colours" not in cmd and len(base.colours) != merged["players"]:
            merged["colours"] = []
        choice = parse_setup(merged)
        c = choice.config
        players = c.player_count
        modules = merged.get("modules") or ()
        return cls(
            players=players,
            colours=tuple(c.colours or allowed_colours(players)[:players]),
            variant=c.variant,
            teams=c.teams,
            modules=tuple(modules),
            memory_aid=choice.memory_aid,
            options=dict(c.options),
            spells=c.spells,
        )

    def to_json(self) -> dict[str, Any]:
        """JSON of the settings; ``game`` and ``pack`` only for a pack game (the Wandering
        Towers' settings read as before)."""
        pack: dict[str, Any] = {}
        if self.game != "wandering-towers":
            pack = {"game": self.game, "pack": dict(self.pack)}
        return {
            **pack,
            "players": self.players,
            "colours": list(self.colours),
            "variant": self.variant,
            "teams": self.teams,
            "modules": list(self.modules),
            "memory_aid": self.memory_aid,
            "options": dict(self.options),
            "spells": None if self.spells is None else list(self.spells),
        }

    def rules_config(self) -> RulesConfig:
        """The rules core's ``Config``.

        :raises CommandError: the rules core refuses the combination (its message names the
            field; 400).
        """
        try:
            return RulesConfig(
                player_count=self.players,
                variant=self.variant,
                teams=self.teams,
                colours=self.colours,
                modules=frozenset(self.modules),
                options=dict(self.options),
                spells=self.spells,
            )
        except ValueError as exc:
            raise CommandError(f"setup: {exc}") from None


def _colour(wizard: object) -> str:
    """``"blue-3"`` -> ``"blue"``: log lines never name individual wizards (they would let anyone
    follow a trapped wizard under its tower, whatever the memory aid allows)."""
    return str(wizard).split("-", 1)[0]


def _count(wizards: Sequence[object]) -> str:
    n = len(wizards)
    return f"{n} wizard{'s' if n != 1 else ''}"


def describe_events(
    events: Sequence[Event], dump_event: Callable[[Event], Mapping[str, Any]]
) -> list[str]:
    """Short public log lines for committed events (newest last), in the game's words.

    The log is shown on every page, so it says only what everybody at the table saw: a wizard's
    colour when it moves in view, and how many wizards were trapped or freed — never which ones.
    """
    lines: list[str] = []
    for ev in events:
        data = dump_event(ev)
        kind = data.get("kind") or data.get("type") or "event"
        if kind == "wizard_moved":
            colour = _colour(data.get("wizard"))
            lines.append(
                f"a {colour} wizard moved {data.get('from')} → {data.get('to')}"
                + (" (into the castle)" if data.get("into_castle") else "")
            )
        elif kind == "tower_moved":
            towers = data.get("towers") or []
            lines.append(
                f"{len(towers)} tower{'s' if len(towers) != 1 else ''} moved "
                f"{data.get('from')} → {data.get('to')}"
            )
        elif kind == "wizards_trapped":
            lines.append(f"{_count(data.get('wizards', []))} trapped on space {data.get('space')}")
        elif kind == "wizards_revealed":
            lines.append(
                f"{_count(data.get('wizards', []))} uncovered on space {data.get('space')}"
            )
        elif kind == "castle_moved":
            lines.append(f"the raven castle moved {data.get('from')} → {data.get('to')}")
        elif kind == "next_player":
            lines.append(f"{data.get('player', 'next player')}'s turn")
        elif kind == "game_over":
            lines.append(f"game over: {', '.join(data.get('winners', []))} win")
        elif kind == "potion_filled":
            lines.append(f"{data.get('player')} filled a potion")
        elif kind == "castle_entered":
            lines.append(f"a {_colour(data.get('wizard'))} wizard entered the raven castle")
        elif kind == "spell_cast":
            times = data.get("times") or 1
            lines.append(
                f"{data.get('player')} cast {str(data.get('spell', 'a spell')).replace('_', ' ')}"
                + (f" ×{times}" if times != 1 else "")
            )
        elif kind == "dice_rolled":
            lines.append(f"die: {data.get('rolls')} → {data.get('used')}")
    return lines
