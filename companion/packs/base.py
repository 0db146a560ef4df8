"""What every game pack offers the companion: the :class:`PackGame` protocol.

A pack is one game the companion can carry with the buttons, the LEDs and the phones. Its game
is a pure value: a JSON object (``dict`` of str, int, bool, lists and dicts) that only the
pack's own functions read, so the service can journal it, replay it and undo it without
knowing the game (docs/architecture.md, "Game packs").

* :meth:`PackGame.settings` checks the host's setup choices and fills in every default;
* :meth:`PackGame.new_game` deals the first position (a ``random.Random`` decides what the
  rules leave to chance);
* :meth:`PackGame.resolve` draws what a command leaves to chance (a deployment card, the next
  round's cards) and writes it into the command, so the journal holds only deterministic
  commands and a replay reaches the same game;
* :meth:`PackGame.apply` carries a resolved command out: a new game and the public log lines,
  or :class:`PackError` naming the field with nothing changed;
* :meth:`PackGame.view` is what one audience may see (a player's secret deployment number
  only on his own phone);
* :meth:`PackGame.leds` says whose seat LED is lit and whether "look at your phone" blinks.

Players are named by seat colours (:data:`SEAT_COLOURS`, the colours of the seat LEDs).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from companion.packs.errors import PackError

SEAT_COLOURS: tuple[str, ...] = ("blue", "yellow", "red", "green", "orange", "purple")
"""Colours of the seat LEDs; a pack's players are named by them."""

Game = dict[str, Any]
"""A pack's game: a JSON object only the pack reads (see the module doc)."""

Command = Mapping[str, Any]
"""A pack command: ``{"action": NAME, ...arguments}``."""


class PackConflict(PackError):
    """A well-formed command the game refuses now (not this player's turn, a second attack):
    the web answers 409 instead of 400."""


@dataclass(frozen=True)
class Who:
    """Who sends a command: the host (``colour`` None) or one player's phone."""

    role: Literal["host", "player", "public"]
    colour: str | None = None

    @property
    def host(self) -> bool:
        return self.role == "host"


@dataclass(frozen=True)
class Leds:
    """What the panel shows: the lit seat (index into the seated colours; None = none) and the
    "look at your phone" LED."""

    seat: int | None
    attention: bool = False


class PackGame(Protocol):
    """One game the companion can carry (see the module doc)."""

    @property
    def name(self) -> str:
        """Short id: ``"siege"``, ``"princess"``, ``"wizwar"``."""
        ...

    @property
    def title(self) -> str:
        """The game's name for people."""
        ...

    @property
    def dice_profile(self) -> str:
        """Name of the dice button's profile (``companion.hardware.dice.PROFILES``)."""
        ...

    @property
    def players(self) -> tuple[int, int]:
        """Fewest and most players."""
        ...

    def setup_choices(self) -> dict[str, Any]:
        """The host form's fields: name -> ``{"label", "default", "choices"?, "rule"?}``."""
        ...

    def settings(self, raw: Mapping[str, Any], colours: Sequence[str]) -> dict[str, Any]:
        """The checked settings with every default filled in.

        :raises PackError: naming the setting.
        """
        ...

    def new_game(
        self, settings: Mapping[str, Any], colours: Sequence[str], rng: random.Random
    ) -> Game:
        """The first position for ``colours`` (seat order, start player first)."""
        ...

    def resolve(self, game: Game, command: Command, rng: random.Random) -> dict[str, Any]:
        """``command`` with what it leaves to chance drawn with ``rng``: keys are only added,
        never changed, so a replay can check a recorded command against what was sent.

        :raises PackError: the command names a value chance decides.
        """
        ...

    def apply(self, game: Game, command: Command, who: Who) -> tuple[Game, list[str]]:
        """Carry out a resolved command; ``game`` is left unchanged.

        :raises PackError: naming the field (:class:`PackConflict` when it is refused now).
        """
        ...

    def view(self, game: Game, who: Who) -> dict[str, Any]:
        """What ``who`` may see of the game (JSON)."""
        ...

    def leds(self, game: Game) -> Leds:
        """The panel's seat and attention LEDs for this game."""
        ...

    def over(self, game: Game) -> bool:
        """The game has ended."""
        ...


# ------------------------------------------------------------------------------------------
# argument helpers shared by the packs (every error names the field)


def copy_game(game: Game) -> Game:
    """A deep copy to change: :meth:`PackGame.apply` never changes the game it is given."""
    return copy.deepcopy(game)


def arg_int(
    command: Command, field: str, rule: str, lo: int, hi: int, default: int | None = None
) -> int:
    """The whole number ``command[field]`` in ``lo..hi``.

    :raises PackError: missing (without a default), not a whole number, or out of range.
    """
    value = command.get(field, default)
    if value is None:
        raise PackError(field, rule, "missing")
    if isinstance(value, bool) or not isinstance(value, int):
        raise PackError(field, rule, f"expected a whole number, got {value!r}"[:80])
    if not lo <= value <= hi:
        raise PackError(field, rule, f"must be {lo}..{hi}, got {value}")
    return value


def arg_choice(
    command: Command, field: str, rule: str, choices: Sequence[str], default: str | None = None
) -> str:
    """``command[field]``, one of ``choices``.

    :raises PackError: missing (without a default) or not one of ``choices``.
    """
    value = command.get(field, default)
    if value is None:
        raise PackError(field, rule, "missing")
    if not isinstance(value, str) or value not in choices:
        raise PackError(field, rule, f"{str(value)[:24]!r} is not one of {', '.join(choices)}")
    return value


def arg_player(command: Command, field: str, rule: str, players: Sequence[str], who: Who) -> str:
    """The player ``command[field]`` names; a player's phone that leaves it out means itself.

    :raises PackError: missing (from the host), or not a player of this game.
    """
    value = command.get(field)
    if value is None and who.colour is not None:
        return who.colour
    if value is None:
        raise PackError(field, rule, "missing: which player?")
    if not isinstance(value, str) or value not in players:
        raise PackError(field, rule, f"{str(value)[:24]!r} is not playing ({', '.join(players)})")
    return value


def arg_bool(command: Command, field: str, default: bool = False) -> bool:
    """``command[field]`` as true/false.

    :raises PackError: not ``true``/``false``.
    """
    value = command.get(field, default)
    if not isinstance(value, bool):
        raise PackError(field, "setup", f"expected true or false, got {value!r}"[:80])
    return value


def check_seats(colours: Sequence[str], lo: int, hi: int, rule: str) -> tuple[str, ...]:
    """The seated colours, ``lo..hi`` of them, distinct, each a seat LED colour.

    :raises PackError: naming ``colours``.
    """
    seated = tuple(colours)
    if not lo <= len(seated) <= hi:
        raise PackError("colours", rule, f"{lo}-{hi} players, got {len(seated)}")
    if len(set(seated)) != len(seated):
        raise PackError("colours", rule, f"a colour is seated twice: {list(seated)}")
    for c in seated:
        if c not in SEAT_COLOURS:
            raise PackError(
                "colours", rule, f"{str(c)[:24]!r} is not one of {', '.join(SEAT_COLOURS)}"
            )
    return seated


def check_setup(
    raw: Mapping[str, Any],
    colours: Sequence[str],
    known: Iterable[str],
    players: tuple[int, int],
    rule: str,
) -> tuple[str, ...]:
    """The start of every :meth:`PackGame.settings`: the seats (:func:`check_seats`, ``players``
    = fewest and most) and that ``raw`` names only the settings in ``known``.

    :returns: the seated colours.
    :raises PackError: naming ``colours``, or ``pack.<setting>`` for an unknown setting.
    """
    seated = check_seats(colours, *players, rule)
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise PackError(f"pack.{unknown[0]}", "setup", "unknown setting")
    return seated


def own_turn(game: Game, player: str, who: Who, rule: str) -> None:
    """A player's phone acts only for its own player.

    :raises PackConflict: a phone acting for someone else.
    """
    if who.colour is not None and who.colour != player:
        raise PackConflict("player", rule, f"{who.colour}'s phone cannot act for {player}")
