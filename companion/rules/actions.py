"""Actions a player takes, events the engine reports, and the two narrow errors.

Actions are small immutable values that name things the way the table does (colours, wizard ids
``blue-2``, space numbers, tiers) so that an action prints as something you can paste back
(docs/state-model.md §4). Events are the engine's explanation of what happened (§5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple

from companion.rules.model import Card


class IllegalAction(ValueError):  # noqa: N818 - the name is the API (python-chess style)
    """The action breaks a rule; the state it was applied to is unchanged.

    :param reason: what is wrong, in the players' words.
    :param rule: the rule id of ``docs/rules.md`` (e.g. ``R-TOWER-5``).
    """

    def __init__(self, reason: str, rule: str) -> None:
        super().__init__(f"{reason} ({rule})")
        self.reason = reason
        self.rule = rule


class FormatError(ValueError):
    """Malformed JSON for a state, action or event; the message starts with the field path
    (e.g. ``actions[2].steps: expected an integer 1..6``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


# --------------------------------------------------------------------------------------------
# Actions (docs/state-model.md §4)

RavenTiming = Literal["before", "after"]
"""R-MOD-RAVEN-2: the raven moves before or after the move of a die card."""

ActionKind = Literal[
    "move_wizard",
    "move_tower",
    "discard_card",
    "redraw",
    "cast",
    "end_turn",
    "give_potion",
    "exchange_cards",
    "feather",
]
"""The ``kind`` of each action type (its JSON ``kind``, docs/state-model.md §4)."""


@dataclass(frozen=True)
class MoveWizard:
    """Play a card's wizard side: move own visible ``wizard`` ``steps`` spaces clockwise.

    ``rolls`` = every die result in order for a die card (the last one is used, R-CARD-4).
    ``card_committed`` (master variant, R-MASTER-9): the card was already played before a
    spell; if the move has become impossible the card is lost instead of the action refused.

    Expansion fields (docs/state-model.md §4 card fields): ``page`` = the card shows the witch's
    page symbol (R-MOD-WITCH-2; the camera cannot read cards, OPEN-12); ``raven_timing`` =
    ``"before"``/``"after"`` the move for a die card with the raven (R-MOD-RAVEN-2, None =
    after); ``witch_guess`` = ``(space, tier)`` of the tower lifted to release a sealed witch
    (R-MOD-WITCH-9); ``witch_protect`` = colours who spend a feather against a witch effect
    of this action (R-MOD-WITCH-10); ``web_steps`` = 1-3 chosen under *Precise Landing*
    (R-SPELLX-6).
    """

    player: str
    wizard: str
    steps: int
    card: Card
    rolls: tuple[int, ...] = ()
    card_committed: bool = False
    page: bool = False
    raven_timing: RavenTiming | None = None
    witch_guess: tuple[int, int] | None = None
    witch_protect: tuple[str, ...] = ()
    web_steps: int | None = None

    kind: ClassVar[Literal["move_wizard"]] = "move_wizard"


@dataclass(frozen=True)
class MoveTower:
    """Play a card's tower side: lift tower ``tier`` (1 = bottom) on ``space`` with everything
    above and move it ``steps`` spaces clockwise (R-CARD-2, R-TOWER-*).

    ``page``, ``raven_timing``, ``witch_guess``, ``witch_protect`` as for :class:`MoveWizard`.
    ``physically_lifted``: the tower was already lifted at the table; with an expansion module
    an illegal destination then costs the turn (lift penalty R-MOD-GEN-3) instead of being
    refused."""

    player: str
    space: int
    tier: int
    steps: int
    card: Card
    rolls: tuple[int, ...] = ()
    card_committed: bool = False
    page: bool = False
    raven_timing: RavenTiming | None = None
    witch_guess: tuple[int, int] | None = None
    witch_protect: tuple[str, ...] = ()
    physically_lifted: bool = False

    kind: ClassVar[Literal["move_tower"]] = "move_tower"


@dataclass(frozen=True, slots=True)
class DiscardCard:
    """Discard a card as an action without effect (R-TURN-3). ``card`` is needed when the
    hands are known; ``rolls`` = the die results of a die card whose final roll cannot move
    anything (then the card is judged by that roll). ``page``/``witch_guess``/``witch_protect``:
    a discarded page card still moves the witch first (R-MOD-WITCH-2/9)."""

    player: str
    card: Card | None = None
    rolls: tuple[int, ...] = ()
    page: bool = False
    witch_guess: tuple[int, int] | None = None
    witch_protect: tuple[str, ...] = ()

    kind: ClassVar[Literal["discard_card"]] = "discard_card"


@dataclass(frozen=True, slots=True)
class Redraw:
    """Discard the hand, draw 3, and optionally push one tower ``(space, tier)`` 1 space
    clockwise (R-TURN-5)."""

    player: str
    push: tuple[int, int] | None = None

    kind: ClassVar[Literal["redraw"]] = "redraw"


@dataclass(frozen=True, slots=True)
class Cast:
    """Cast a spell (R-SPELL-*, R-MASTER-*).

    Arguments by spell: ``advance_wizard``/``headwind_wizard``: ``wizard``;
    ``advance_tower``/``headwind_tower``: ``space, tier``; ``swap_tower``: ``a, b``;
    ``move_castle``: ``direction`` (``cw``/``ccw``); ``piggyback``: ``rider`` (the caster's
    wizard) and ``then`` (the current player's :class:`MoveWizard`); ``free_wizard``:
    ``space, tier`` (the lifted tower) and ``wizard`` (the freed one, None if none is there).
    ``times`` > 1 repeats the spell (master variant, R-MASTER-8). ``free``: no potions paid
    (expansion: magic tower / feather).

    Expansion spells (R-SPELLX): ``wizard_control``: ``wizard, steps`` (1-3);
    ``wizard_sprint``/``fly_to_magic_tower``: ``wizard``; ``tower_sprint``: ``space, tier``;
    ``witch_control``/``summon_raven``: ``space``; ``fountain_abundance``/``precise_landing``:
    no arguments (they arm the effect for the caster's next wizard landing this turn).
    ``witch_protect``/``web_steps`` as for :class:`MoveWizard`.
    """

    player: str
    spell: str
    wizard: str | None = None
    space: int | None = None
    tier: int | None = None
    a: int | None = None
    b: int | None = None
    direction: str | None = None
    rider: str | None = None
    then: MoveWizard | None = None
    times: int = 1
    free: bool = False
    steps: int | None = None
    witch_protect: tuple[str, ...] = ()
    web_steps: int | None = None

    kind: ClassVar[Literal["cast"]] = "cast"


@dataclass(frozen=True, slots=True)
class Feather:
    """Raven module: spend feathers on one's own turn, once per turn (R-MOD-RAVEN-6, OPEN-13).

    ``use``: ``"extra_card"`` (a 3rd move card this turn), ``"free_spell"`` (the next spell
    of this turn costs no potions) or ``"move_wizard"`` (any visible ``wizard`` 1-6
    ``steps`` clockwise, normal rules). ``witch_protect``/``web_steps`` as for
    :class:`MoveWizard`.
    """

    player: str
    use: str
    wizard: str | None = None
    steps: int | None = None
    witch_protect: tuple[str, ...] = ()
    web_steps: int | None = None

    kind: ClassVar[Literal["feather"]] = "feather"


@dataclass(frozen=True, slots=True)
class EndTurn:
    """End the turn: refill the hand, complete the round at the game's end, next player
    (R-TURN-4/8, R-END-2)."""

    kind: ClassVar[Literal["end_turn"]] = "end_turn"


@dataclass(frozen=True, slots=True)
class GivePotion:
    """Team variant: hand ``count`` full potions to the partner (R-TEAM-4, OPEN-06)."""

    player: str
    to: str
    count: int = 1

    kind: ClassVar[Literal["give_potion"]] = "give_potion"


@dataclass(frozen=True, slots=True)
class ExchangeCards:
    """Team variant card help (R-TEAM-2): the current player ``player`` receives ``take`` from
    his partner and gives ``give`` back (cards needed only when the hands are known)."""

    player: str
    partner: str
    take: Card | None = None
    give: Card | None = None

    kind: ClassVar[Literal["exchange_cards"]] = "exchange_cards"


Action = (
    MoveWizard
    | MoveTower
    | DiscardCard
    | Redraw
    | Cast
    | EndTurn
    | GivePotion
    | ExchangeCards
    | Feather
)
"""Any action the engine accepts."""

ACTION_KINDS: tuple[ActionKind, ...] = (
    "move_wizard",
    "move_tower",
    "discard_card",
    "redraw",
    "cast",
    "end_turn",
    "give_potion",
    "exchange_cards",
    "feather",
)


# --------------------------------------------------------------------------------------------
# Events (docs/state-model.md §5)


class Event(NamedTuple):
    """Something that happened, e.g. ``Event("wizards_trapped", {"space": 7, "wizards":
    ["red-1"]})``. ``data`` holds JSON values only (ints, strings, lists, dicts, bools, None);
    ``event["space"]`` reads it. Treat ``data`` as read-only.
    """

    kind: str
    data: dict[str, Any]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self.data[key]
        return tuple.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.data}


_new = object.__new__


def fast_move_wizard(
    player: str, wizard: str, steps: int, card: Card, rolls: tuple[int, ...]
) -> MoveWizard:
    """``MoveWizard(player, wizard, steps, card, rolls)`` without the dataclass overhead
    (legal action enumeration); the other fields keep their class defaults."""
    a: MoveWizard = _new(MoveWizard)
    d = a.__dict__
    d["player"] = player
    d["wizard"] = wizard
    d["steps"] = steps
    d["card"] = card
    d["rolls"] = rolls
    return a


def fast_move_tower(
    player: str, space: int, tier: int, steps: int, card: Card, rolls: tuple[int, ...]
) -> MoveTower:
    """``MoveTower(player, space, tier, steps, card, rolls)`` without the dataclass overhead."""
    a: MoveTower = _new(MoveTower)
    d = a.__dict__
    d["player"] = player
    d["space"] = space
    d["tier"] = tier
    d["steps"] = steps
    d["card"] = card
    d["rolls"] = rolls
    return a
