"""*Wiz-War* (seed S4): the counters a companion keeps for the wizards' duel.

* hit points: 15 per wizard, damage and heal, out at 0 (G4-HP-1, G4-LOSE-1);
* forced rest that adds up and counts down on the caster's turns (G4-REST-1);
* the hand limit of 7 and drawing at most 2 at the end of a turn (G4-HAND-1);
* movement: 3 spaces plus one number card (G4-MOVE-1, G4-COMP-1);
* one attack per turn (G4-ATK-1);
* hit points of walls, doors and thornbushes (G4-HP-1);
* the d4 for random directions (G4-DICE-1) and the start order by a roll (G4-SETUP-1).

Wizards are named by strings (``"green"``). The d4 faces are those of the ``wizwar-d4`` dice
profile of the dice button.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from companion.packs.errors import PackError

START_HP = 15
"""Hit points of a wizard at the start (G4-SETUP-1, G4-HP-1)."""

FIST_DAMAGE = 1
"""A fist does 1 damage on the same space (G4-ATK-1)."""

BASE_MOVE = 3
"""Spaces a wizard moves per turn before number cards (G4-MOVE-1)."""

NUMBER_CARDS: Mapping[int, int] = MappingProxyType({6: 1, 5: 4, 4: 7, 3: 10, 2: 12})
"""Number card value -> copies in the classic deck (G4-COMP-1)."""

HAND_LIMIT = 7
"""Cards a wizard may hold (G4-HAND-1); magic stones can raise it."""

MAX_DRAW = 2
"""Cards drawn at most at the end of a turn (G4-HAND-1)."""

D4_FACES: tuple[int, ...] = (1, 2, 3, 4)
"""Faces of the d4 for random directions (G4-DICE-1)."""


class Direction(enum.Enum):
    """A direction on the maze."""

    NORTH = "north"
    EAST = "east"
    SOUTH = "south"
    WEST = "west"


D4_DIRECTIONS: Mapping[int, Direction] = MappingProxyType(
    {1: Direction.NORTH, 2: Direction.EAST, 3: Direction.SOUTH, 4: Direction.WEST}
)
"""d4 face -> direction (G4-DICE-1). The seed names the die, not the faces: clockwise from
north is a stated default; pass another mapping to :func:`direction_for` to change it."""


@dataclass(frozen=True)
class Wizard:
    """A wizard's hit points, 0..``max_hp`` (G4-HP-1); out at 0 (G4-LOSE-1).

    ``max_hp``: the seed gives the start value only; healing is capped there (stated default).

    :raises PackError: (at construction) ``hp`` outside 0..``max_hp``.
    """

    name: str
    hp: int = START_HP
    max_hp: int = START_HP

    def __post_init__(self) -> None:
        if self.max_hp < 1:
            raise PackError("max_hp", "G4-HP-1", f"must be 1 or more, got {self.max_hp}")
        if not 0 <= self.hp <= self.max_hp:
            raise PackError("hp", "G4-HP-1", f"must be 0..{self.max_hp}, got {self.hp}")

    @property
    def out(self) -> bool:
        """Hit points are gone: the wizard is out of the game (G4-LOSE-1)."""
        return self.hp == 0

    def damage(self, amount: int) -> Wizard:
        """Take ``amount`` damage; hit points stop at 0 (G4-LOSE-1).

        :raises PackError: ``amount`` < 0, or the wizard is already out.
        """
        if amount < 0:
            raise PackError("amount", "G4-HP-1", f"damage is 0 or more, got {amount}")
        if self.out:
            raise PackError("hp", "G4-LOSE-1", f"{self.name!r} is already out")
        return replace(self, hp=max(0, self.hp - amount))

    def heal(self, amount: int) -> Wizard:
        """Regain ``amount`` hit points, up to ``max_hp``.

        :raises PackError: ``amount`` < 0, or the wizard is out (no coming back, G4-LOSE-1).
        """
        if amount < 0:
            raise PackError("amount", "G4-HP-1", f"healing is 0 or more, got {amount}")
        if self.out:
            raise PackError("hp", "G4-LOSE-1", f"{self.name!r} is out and cannot heal")
        return replace(self, hp=min(self.max_hp, self.hp + amount))


@dataclass(frozen=True)
class Rest:
    """Forced rest on one wizard: ``turns`` left, counted down on ``caster``'s turns."""

    caster: str
    turns: int


@dataclass(frozen=True)
class RestTable:
    """Forced rest of every wizard (G4-REST-1).

    A rest lasts from its casting until the caster's turn has come round ``turns`` times, so
    it counts down when the caster's turn starts. Rests on the same wizard add up: a new rest
    adds its turns to what is left, and from then on counts down on the new caster's turns
    (the seed says rests add up, not on whose turns the sum counts: the latest caster is the
    stated choice). A resting wizard plays only counteractions; discarding and drawing still
    happen (G4-REST-1, G4-HAND-1).
    """

    rests: Mapping[str, Rest] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "rests", MappingProxyType(dict(self.rests)))

    def turns_left(self, wizard: str) -> int:
        """Rest turns left for ``wizard`` (0: not resting)."""
        rest = self.rests.get(wizard)
        return 0 if rest is None else rest.turns

    def resting(self, wizard: str) -> bool:
        """``wizard`` is under forced rest."""
        return self.turns_left(wizard) > 0

    def add(self, wizard: str, caster: str, turns: int) -> RestTable:
        """``caster`` puts ``wizard`` to rest for ``turns`` of his turns; rests add up.

        :raises PackError: ``turns`` < 1.
        """
        if turns < 1:
            raise PackError("turns", "G4-REST-1", f"a rest lasts 1 turn or more, got {turns}")
        total = self.turns_left(wizard) + turns
        return replace(self, rests=MappingProxyType({**self.rests, wizard: Rest(caster, total)}))

    def turn_started(self, player: str) -> RestTable:
        """``player``'s turn starts: every rest he cast counts down by one; a rest at 0 ends."""
        rests = {
            wizard: Rest(rest.caster, rest.turns - (rest.caster == player))
            for wizard, rest in self.rests.items()
        }
        return replace(
            self, rests=MappingProxyType({w: r for w, r in rests.items() if r.turns > 0})
        )

    def caster_out(self, caster: str) -> RestTable:
        """``caster`` is out of the game: the rests he cast count down on the resting wizard's
        own turns from now on (the seed leaves this open; this keeps them finite)."""
        rests = {
            wizard: Rest(wizard, rest.turns) if rest.caster == caster else rest
            for wizard, rest in self.rests.items()
        }
        return replace(self, rests=MappingProxyType(rests))


def cards_to_discard(hand_size: int, limit: int = HAND_LIMIT) -> int:
    """Cards to discard at once when items push the hand over the limit (G4-HAND-1, G4-ITEM-1).

    :raises PackError: a negative hand size, a limit below 1.
    """
    _check_hand(hand_size, limit)
    return max(0, hand_size - limit)


def cards_to_draw(hand_size: int, limit: int = HAND_LIMIT) -> int:
    """Cards drawn at the end of a turn, after discarding: at most 2, never above the limit
    (G4-HAND-1).

    :raises PackError: a negative hand size, a limit below 1.
    """
    _check_hand(hand_size, limit)
    return max(0, min(MAX_DRAW, limit - hand_size))


def _check_hand(hand_size: int, limit: int) -> None:
    if hand_size < 0:
        raise PackError("hand_size", "G4-HAND-1", f"must be 0 or more, got {hand_size}")
    if limit < 1:
        raise PackError("limit", "G4-HAND-1", f"must be 1 or more, got {limit}")


def movement(number_cards: Sequence[int] = (), *, add: bool = False) -> int:
    """Spaces a wizard may move this turn: 3 plus the number card played for movement
    (G4-MOVE-1). More than one card only with the ADD spell (``add=True``).

    :raises PackError: a value that is no number card (2-6, G4-COMP-1), two or more cards
        without ADD.
    """
    cards = tuple(number_cards)
    for value in cards:
        if value not in NUMBER_CARDS:
            raise PackError("number_cards", "G4-MOVE-1", f"number cards are 2..6, got {value}")
    if len(cards) > 1 and not add:
        raise PackError(
            "number_cards", "G4-MOVE-1", f"one number card per turn without ADD, got {len(cards)}"
        )
    return BASE_MOVE + sum(cards)


@dataclass(frozen=True)
class TurnAttacks:
    """The one attack of a turn (G4-ATK-1): attack spell, fist, thrown dagger or large rock,
    or a wall brought down on someone. Neutral spells are unlimited; counteractions are
    played in other players' turns."""

    wizard: str
    attack: str | None = None

    def attack_with(self, what: str) -> TurnAttacks:
        """Record the turn's attack (``"fist"``, a spell's name).

        :raises PackError: the wizard already attacked this turn.
        """
        if self.attack is not None:
            raise PackError(
                "attack",
                "G4-ATK-1",
                f"{self.wizard!r} already attacked with {self.attack!r} this turn",
            )
        return replace(self, attack=what)


class Obstacle(enum.Enum):
    """Fixed objects of the maze (G4-HP-1)."""

    WALL = "wall"
    DOOR = "door"
    THORNBUSH = "thornbush"
    SOLID_STONE = "solid stone"
    ILLUSION_WALL = "illusion wall"


OBSTACLE_HP: Mapping[Obstacle, int] = MappingProxyType(
    {Obstacle.WALL: 20, Obstacle.DOOR: 15, Obstacle.THORNBUSH: 5}
)
"""Hit points of the attackable objects; solid stone and illusion walls cannot be attacked
(G4-HP-1)."""


@dataclass(frozen=True)
class ObstacleHP:
    """A wall, door or thornbush under attack; destroyed at 0 (G4-HP-1).

    Build an undamaged one with :meth:`fresh`.

    :raises PackError: (at construction) an object that cannot be attacked, ``hp`` outside
        0..its start value.
    """

    kind: Obstacle
    hp: int

    def __post_init__(self) -> None:
        if self.kind not in OBSTACLE_HP:
            raise PackError("kind", "G4-HP-1", f"{self.kind.value} cannot be attacked")
        if not 0 <= self.hp <= OBSTACLE_HP[self.kind]:
            raise PackError(
                "hp",
                "G4-HP-1",
                f"a {self.kind.value} has 0..{OBSTACLE_HP[self.kind]} HP, got {self.hp}",
            )

    @classmethod
    def fresh(cls, kind: Obstacle) -> ObstacleHP:
        """An undamaged ``kind``: wall 20, door 15, thornbush 5 HP (G4-HP-1).

        :raises PackError: solid stone or an illusion wall (cannot be attacked).
        """
        if kind not in OBSTACLE_HP:
            raise PackError("kind", "G4-HP-1", f"{kind.value} cannot be attacked")
        return cls(kind, OBSTACLE_HP[kind])

    @property
    def destroyed(self) -> bool:
        """Hit points are gone."""
        return self.hp == 0

    def damage(self, amount: int) -> ObstacleHP:
        """Take ``amount`` damage; stops at 0.

        :raises PackError: ``amount`` < 0, or already destroyed.
        """
        if amount < 0:
            raise PackError("amount", "G4-HP-1", f"damage is 0 or more, got {amount}")
        if self.destroyed:
            raise PackError("hp", "G4-HP-1", f"the {self.kind.value} is already destroyed")
        return replace(self, hp=max(0, self.hp - amount))


def direction_for(face: int, directions: Mapping[int, Direction] = D4_DIRECTIONS) -> Direction:
    """The random direction a d4 ``face`` gives (G4-DICE-1).

    :raises PackError: a face outside 1..4.
    """
    if face not in directions:
        raise PackError("face", "G4-DICE-1", f"a d4 face is 1..4, got {face}")
    return directions[face]


def start_order(rolls: Mapping[str, int]) -> tuple[str, ...]:
    """Turn order from one start roll each, highest first (G4-SETUP-1).

    :raises PackError: fewer than 2 wizards, a roll below 1, or a tie (the message names the
        tied wizards, who roll again: :func:`roll_start_order` does it).
    """
    if len(rolls) < 2:
        raise PackError("rolls", "G4-SETUP-1", f"2 or more wizards, got {len(rolls)}")
    for name, value in rolls.items():
        if value < 1:
            raise PackError(
                "rolls", "G4-SETUP-1", f"{name!r} rolled {value}, a die shows 1 or more"
            )
    values = list(rolls.values())
    tied = sorted(name for name, value in rolls.items() if values.count(value) > 1)
    if tied:
        raise PackError("rolls", "G4-SETUP-1", f"tied rolls, roll again: {tied}")
    return tuple(sorted(rolls, key=lambda name: -rolls[name]))


def roll_start_order(
    wizards: Sequence[str], rng: random.Random, faces: Sequence[int] = (1, 2, 3, 4, 5, 6)
) -> tuple[str, ...]:
    """Roll for the turn order with ``rng``, highest first; tied wizards roll again among
    themselves for their places (G4-SETUP-1). The seed does not name the die: a d6 is the
    stated default (``faces``).

    :raises PackError: fewer than 2 or repeated wizards, fewer than 2 faces.
    """
    names = tuple(wizards)
    if len(names) < 2 or len(set(names)) != len(names):
        raise PackError("wizards", "G4-SETUP-1", f"2 or more distinct wizards, got {list(names)}")
    if len(set(faces)) < 2:
        raise PackError("faces", "G4-SETUP-1", f"a die needs 2 or more faces, got {list(faces)}")
    return _order_by_rolls(names, rng, tuple(faces))


def _order_by_rolls(
    names: tuple[str, ...], rng: random.Random, faces: tuple[int, ...]
) -> tuple[str, ...]:
    if len(names) == 1:
        return names
    rolls = {name: rng.choice(faces) for name in names}
    order: list[str] = []
    for value in sorted(set(rolls.values()), reverse=True):
        group = tuple(name for name in names if rolls[name] == value)
        order.extend(_order_by_rolls(group, rng, faces))
    return tuple(order)
