"""What the service needs from the game: the :class:`GameDriver` protocol and what it publishes.

The service thread hands every game input to a driver (the tracker with its journal,
:class:`~companion.service.tracked.TrackedDriver`) and publishes what the driver then shows: one
frozen :class:`PublishedGame` — the tracked state, the open question, the health line and the
phase — which the pages render through ``companion.web`` (docs/architecture.md, "Threads in the
running service").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from companion.rules import GameState, Observation
from companion.service.game import GameSettings
from companion.service.journal_check import JournalDamage
from companion.tracking import TrackerUpdate
from companion.web.service import Audience


class OptionView(TypedDict):
    """One answer of an open question as the pages show it: ``id`` (``"0"``, ``"1"`` …, the
    option's index) and its ``label`` in the players' words."""

    id: str
    label: str


class QuestionView(TypedDict):
    """The tracker's open question as published: ``id`` (``q1`` …), ``to`` (the colour of the
    player it is addressed to, None = anybody at the table), ``text`` and ``options``."""

    id: str
    to: str | None
    text: str
    options: list[OptionView]


@dataclass(frozen=True)
class DiceRoll:
    """A dice result from the panel (R-DICE-*): ``rolls`` in the order thrown (1..6), ``used``
    the value that counts (None = not chosen yet), ``dice_allowed`` how many dice the move card
    allows (1-3); ``event`` is the panel's event as it came (kept for recordings)."""

    rolls: tuple[int, ...]
    used: int | None
    dice_allowed: int
    event: Mapping[str, object]

    @classmethod
    def from_event(cls, event: Mapping[str, object]) -> DiceRoll:
        """Read a hardware facade ``dice`` event.

        :raises TypeError, ValueError: a field of the wrong type.
        """
        raw_rolls = event.get("rolls", [])
        if not isinstance(raw_rolls, list | tuple):
            raise TypeError("dice event: rolls must be a list")
        rolls = tuple(_int(r) for r in raw_rolls)
        used = event.get("used")
        return cls(
            rolls=rolls,
            used=None if used is None else _int(used),
            dice_allowed=_int(event.get("dice_allowed", len(rolls) or 1)),
            event=dict(event),
        )


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str | float):
        raise TypeError(f"expected a number, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class PackShown:
    """What a game pack shows (docs/architecture.md, "Game packs"): its ``game`` name, the view
    of every audience (``"public"``, ``"host"``, ``"player:<colour>"``; JSON made by the pack
    itself, so a phone never receives what its player may not see), the lit seat (index into
    the seated colours, None = none) and the "look at your phone" LED."""

    game: str
    views: Mapping[str, Mapping[str, object]]
    seat: int | None
    attention: bool

    def view_for(self, audience: Audience) -> Mapping[str, object] | None:
        """The view ``audience`` may see (a player of another game's seating: the public one)."""
        if audience.role == "player":
            return self.views.get(f"player:{audience.colour}", self.views.get("public"))
        return self.views.get(audience.role)


@dataclass(frozen=True)
class PublishedGame:
    """What a driver shows after an input (the pages render it).

    :param state: the tracked best state (R-... positions, hidden wizards included; the web
        layer shows it through ``companion.rules.view``); None for a game pack.
    :param question: the open question, or None.
    :param health_line: ``"ok"``, ``"waiting for a still board"``, ``"observation refused: …"``.
    :param phase: ``"playing"`` or ``"over"``.
    :param pack: what a game pack shows (None for the tracked Wandering Towers).
    :param potions_unsure: the players whose potions the tracker cannot tell (a card and a spell
        look alike, R-SPELL-6), with every count it holds, ``state``'s first
        (``TrackerUpdate.potions_unsure``); the pages show them as "one of these".
    :param hidden_unsure: the colours whose trapped wizards the tracker holds several stories
        of, with every placement they allow (``TrackerUpdate.hidden_unsure``); the pages that
        show trapped wizards show them as "one of these".
    """

    state: GameState | None
    question: QuestionView | None
    health_line: str
    phase: Literal["playing", "over"]
    pack: PackShown | None = None
    potions_unsure: Mapping[str, tuple[tuple[int, int, int], ...]] = field(default_factory=dict)
    hidden_unsure: Mapping[str, tuple[tuple[tuple[int, int], ...], ...]] = field(
        default_factory=dict
    )

    @property
    def seat(self) -> int | None:
        """The seat whose LED is lit: the player on turn (R-TURN-1), or the pack's choice."""
        if self.pack is not None:
            return self.pack.seat
        if self.state is None or self.state.over:
            return None
        return int(self.state.turn.player)

    @property
    def attention(self) -> bool:
        """Blink "look at your phone": a question waits, or the pack asks for it."""
        return self.question is not None or (self.pack is not None and self.pack.attention)


class DriverOutputs:
    """The two outputs every driver keeps the same way: :attr:`settings` and :attr:`published`
    (of :class:`GameDriver`), held in ``_settings`` and ``_published``."""

    _settings: GameSettings
    _published: PublishedGame

    @property
    def settings(self) -> GameSettings:
        return self._settings

    @property
    def published(self) -> PublishedGame:
        return self._published


class GameDriver(Protocol):
    """One game as the service thread drives it. Every input returns the public log lines it
    produced (newest last; never a wizard's id); a refused command raises
    :class:`~companion.web.service.CommandError` and changes nothing."""

    @property
    def settings(self) -> GameSettings:
        """The game's settings (what the journal keeps beside the tracker)."""
        ...

    @property
    def published(self) -> PublishedGame:
        """What the pages show now."""
        ...

    @property
    def last_update(self) -> TrackerUpdate | None:
        """The tracker's outcome of the most recent input that reached it (recorder, bench)."""
        ...

    def prepare(self, obs: Observation) -> bool:
        """Work out a still board's early reading ahead; nothing visible changes."""
        ...

    def observe(self, obs: Observation) -> list[str]: ...

    def dice(self, roll: DiceRoll) -> list[str]: ...

    def end_turn(self) -> list[str]:
        """DONE pressed (R-TURN-*). :raises CommandError: refused (409)."""
        ...

    def undo(self) -> list[str]:
        """:raises CommandError: nothing to undo (409)."""
        ...

    def command(self, cmd: Mapping[str, object], audience: Audience) -> list[str]:
        """A phone's game command (answer, end_turn, undo, correct_space, reports).

        :raises CommandError: naming the bad field or why it is refused.
        """
        ...

    def candidates(self, question: QuestionView) -> dict[str, list[GameState]]:
        """Option id -> the states answering with it stands for (players who know the truth)."""
        ...

    def close(self) -> None:
        """Release the journal."""
        ...


@runtime_checkable
class TableMemory(Protocol):
    """A driver that keeps, with its journal, what the pages need after a restart: the join
    tokens, the pages' epoch and version, the log lines, reports and dice they showed, and a
    note on a damaged journal it salvaged (:class:`~companion.service.tracked.TrackedDriver`).
    """

    restored: bool
    """The game was continued from the journal (not a new game)."""

    damage: JournalDamage | None
    """A damaged journal's note not yet accepted by the host, or None."""

    def recall(self) -> dict[str, Any]:
        """What was kept: ``tokens``, ``epoch``, ``version``, ``revoked``, ``page`` records."""
        ...

    def keep(self, key: str, value: object) -> None:
        """Keep one page setting (JSON), durable on return."""
        ...

    def remember(self, entry: Mapping[str, object]) -> None:
        """Journal what the pages showed beside the game."""
        ...

    def accept_damage(self) -> None:
        """The host took note of the salvaged journal."""
        ...


@runtime_checkable
class InputLedger(Protocol):
    """A driver that journals each camera board and button press as it is handed to the
    tracker's thread, and marks it when taken, so a restart hands the tracker what it had not
    taken yet (:class:`~companion.service.tracked.TrackedDriver`; docs/architecture.md,
    "Restart"). ``kind`` is an input's kind (``observation``, ``dice``, ``done``, ``undo``)."""

    def receive(self, kind: str, payload: Any) -> None:
        """Journal an input ahead (service thread; its payload as a recording keeps it,
        ``companion.service.inputs.payload_json``), durable on return."""
        ...

    def taking(self, received: bool) -> None:
        """The next input given to the driver was journaled ahead (tracker thread)."""
        ...

    def took(self) -> None:
        """Done with that input: its mark, if its own record did not carry it."""
        ...

    def untaken(self) -> list[tuple[str, Any]]:
        """The received inputs a restored game's tracker never took, oldest first."""
        ...


@runtime_checkable
class RecordedGame(Protocol):
    """A driver that draws chance itself (a game pack, ``companion.service.packs``): it says
    what each input carried out with chance drawn, so a recording replays the game without
    the same dice or shuffles (``companion.service.record``). The tracker's inputs need no
    such record: they are replayed as they came."""

    @property
    def carried_out(self) -> Mapping[str, Any]:
        """The journal record of the latest change (``{"kind": ..., **payload}``); a new
        object for each change, so a caller sees whether an input changed the game."""
        ...

    def start_record(self) -> dict[str, Any]:
        """The game as it is now, as a record a replay starts from (``kind``, ``game``,
        ``settings`` and the positions still in force)."""
        ...
