"""The game the service keeps: rules configuration, the tracker, and the views it publishes.

:class:`GameSession` wraps the tracker (``companion.rules.tracker.Tracker``) behind the inputs of
architecture.md — observations, dice, DONE, answers, undo, corrections — and turns its updates into
what the service publishes: the tracked state, the open question, a health line and log lines.
When the tracker is not installed the session still sets the game up and shows the setup position,
and says on every page that tracking is missing.

Views: the public table and the host see no hidden wizard (unless the table agreed on memory aid
``all``); a player sees what ``companion.rules.view(state, colour, memory_aid)`` allows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.config import GameConfig, allowed_colours
from companion.service.parts import Parts
from companion.web.service import CommandError


@dataclass
class GameSettings:
    """The choices of one game (the host page's setup, or ``[game]`` of the config)."""

    players: int = 3
    colours: tuple[str, ...] = ()
    variant: str = "base"
    teams: bool = False
    modules: tuple[str, ...] = ()
    memory_aid: str = "own"
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, game: GameConfig) -> GameSettings:
        return cls(
            players=game.players,
            colours=tuple(game.colours) or allowed_colours(game.players)[: game.players],
            variant=game.variant,
            teams=game.teams,
            modules=tuple(game.modules),
            memory_aid=game.memory_aid,
            options=dict(game.options),
        )

    @classmethod
    def from_command(cls, cmd: Mapping[str, Any], base: GameSettings) -> GameSettings:
        """Parse the host's ``setup`` command (missing keys keep ``base``'s values).

        :raises CommandError: naming the bad field (400).
        """
        known = {
            "command",
            "players",
            "colours",
            "variant",
            "teams",
            "modules",
            "memory_aid",
            "options",
            "spells",
        }
        unknown = sorted(set(cmd) - known)
        if unknown:
            raise CommandError(f"setup.{unknown[0]}: unknown field")
        players = cmd.get("players", base.players)
        if not isinstance(players, int) or isinstance(players, bool) or not 1 <= players <= 6:
            raise CommandError("setup.players: expected 1..6")
        colours = cmd.get("colours")
        if colours is None:
            colours = (
                base.colours if len(base.colours) == players else allowed_colours(players)[:players]
            )
        if not isinstance(colours, list | tuple) or not all(isinstance(c, str) for c in colours):
            raise CommandError("setup.colours: expected a list of colours")
        colours = tuple(colours)
        if len(colours) != players:
            raise CommandError(f"setup.colours: {len(colours)} colours for {players} players")
        if len(set(colours)) != len(colours):
            raise CommandError("setup.colours: a colour is chosen twice")
        allowed = allowed_colours(players)
        for c in colours:
            if c not in allowed:
                raise CommandError(
                    f"setup.colours: {c!r} has too few wizards for {players} players "
                    f"(R-COMP-2 allows {', '.join(allowed)})"
                )
        variant = cmd.get("variant", base.variant)
        if variant not in ("base", "master"):
            raise CommandError("setup.variant: expected 'base' or 'master'")
        teams = cmd.get("teams", base.teams)
        if not isinstance(teams, bool):
            raise CommandError("setup.teams: expected true or false")
        if teams and players not in (4, 6):
            raise CommandError("setup.teams: the team variant needs 4 or 6 players (R-TEAM-1)")
        modules = cmd.get("modules", list(base.modules))
        if not isinstance(modules, list | tuple) or not all(isinstance(m, str) for m in modules):
            raise CommandError("setup.modules: expected a list of module names")
        memory_aid = cmd.get("memory_aid", base.memory_aid)
        if memory_aid not in ("off", "own", "all"):
            raise CommandError("setup.memory_aid: expected 'off', 'own' or 'all'")
        options = cmd.get("options", dict(base.options))
        if not isinstance(options, Mapping):
            raise CommandError("setup.options: expected an object of OPEN option -> value")
        return cls(
            players=players,
            colours=colours,
            variant=variant,
            teams=teams,
            modules=tuple(modules),
            memory_aid=memory_aid,
            options=dict(options),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "colours": list(self.colours),
            "variant": self.variant,
            "teams": self.teams,
            "modules": list(self.modules),
            "memory_aid": self.memory_aid,
            "options": dict(self.options),
        }

    def rules_config(self, parts: Parts) -> Any:
        """The rules core's ``Config``.

        :raises CommandError: the rules core refuses the combination (its message names the
            field), or the rules core is missing (503).
        """
        rules = parts.get("rules")
        if rules is None or not hasattr(rules, "Config"):
            raise CommandError(
                "the rules core is not installed: " + parts.missing_line("rules"), 503
            )
        try:
            return rules.Config(
                player_count=self.players,
                variant=self.variant,
                teams=self.teams,
                colours=self.colours,
                modules=frozenset(self.modules),
                options=dict(self.options),
            )
        except ValueError as exc:
            raise CommandError(f"setup: {exc}") from None


def _colour(wizard: object) -> str:
    """``"blue-3"`` -> ``"blue"``: log lines never name individual wizards (they would let anyone
    follow a trapped wizard under its tower, whatever the memory aid allows)."""
    return str(wizard).split("-", 1)[0]


def _count(wizards: Sequence[Any]) -> str:
    n = len(wizards)
    return f"{n} wizard{'s' if n != 1 else ''}"


def describe_events(events: Sequence[Any], dump_event: Any) -> list[str]:
    """Short public log lines for committed events (newest last), in the game's words.

    The log is shown on every page, so it says only what everybody at the table saw: a wizard's
    colour when it moves in view, and how many wizards were trapped or freed — never which ones.
    """
    lines: list[str] = []
    for ev in events:
        try:
            data = dump_event(ev)
        except Exception:
            data = {"kind": getattr(ev, "kind", "event")}
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
