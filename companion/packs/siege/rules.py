"""攻城奇策 (seed S2): the counters and orders a companion keeps for the siege race.

* the 2d6 table that says how many armies a move card moves (G2-DICE-1);
* full-rules rounds with the 8 deployment cards: shuffle, 2 set aside unseen, picking order,
  calling order (G2-ROUND-1, G2-ROUND-2) and the Pope's override (G2-ROUND-3);
* simple rules: turns clockwise from the start player (G2-ROUND-4);
* draw at the start of a turn (G2-TURN-1) and the hand limit of 6 (G2-TURN-3);
* the supply of barrier, mud and bomb tokens (G2-COMP-1, G2-TOK-1..5).

Players are named by strings (``"red"``); clockwise seating is a sequence of them. The dice
faces are those of the ``siege-2d6`` dice profile of the dice button: two d6, summed.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import product
from types import MappingProxyType

from companion.packs.errors import PackError

DIE_FACES: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
"""Faces of one of the two six-sided dice (G2-COMP-1)."""

ARMY_TABLE: Mapping[int, int] = MappingProxyType(
    {2: 1, 3: 1, 4: 4, 5: 2, 6: 3, 7: 2, 8: 3, 9: 3, 10: 4, 11: 1, 12: 2}
)
"""Sum of 2d6 -> number of armies that carry out the move card (G2-DICE-1, printed table)."""

DEPLOYMENT_NUMBERS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
"""The 8 deployment cards (G2-COMP-1)."""

SET_ASIDE = 2
"""Deployment cards set aside face down, unused for the round (G2-ROUND-1)."""

POPE = 4
"""The deployment card that may override the next round's picking order (G2-ROUND-3)."""

HAND_LIMIT = 6
"""Cards a player keeps after his actions (G2-TURN-3)."""

MAX_PLAYERS = 4
"""4 armies and 4 city-states: at most 4 players (G2-COMP-2; the count is not printed)."""


def armies_for(total: int) -> int:
    """Number of armies (1-4) that move for a 2d6 ``total`` (G2-DICE-1).

    :raises PackError: ``total`` outside 2..12.
    """
    if total not in ARMY_TABLE:
        raise PackError("total", "G2-DICE-1", f"a 2d6 sum is 2..12, got {total}")
    return ARMY_TABLE[total]


def armies_for_roll(first: int, second: int) -> int:
    """Number of armies for the two dice faces ``first`` and ``second`` (G2-DICE-1).

    :raises PackError: a face outside 1..6.
    """
    for name, face in (("first", first), ("second", second)):
        if face not in DIE_FACES:
            raise PackError(name, "G2-DICE-1", f"a d6 face is 1..6, got {face}")
    return ARMY_TABLE[first + second]


def army_distribution() -> dict[int, Fraction]:
    """Exact probability of each army count, enumerating the 36 equally likely rolls
    (G2-DICE-1): 1 army 5/36, 2 armies 11/36, 3 armies 14/36, 4 armies 6/36."""
    counts: dict[int, int] = {}
    for first, second in product(DIE_FACES, repeat=2):
        armies = ARMY_TABLE[first + second]
        counts[armies] = counts.get(armies, 0) + 1
    rolls = len(DIE_FACES) ** 2
    return {armies: Fraction(n, rolls) for armies, n in sorted(counts.items())}


def _check_players(players: Sequence[str], rule: str) -> tuple[str, ...]:
    seated = tuple(players)
    if not 1 <= len(seated) <= MAX_PLAYERS:
        raise PackError("players", rule, f"1..{MAX_PLAYERS} players, got {len(seated)}")
    if len(set(seated)) != len(seated):
        raise PackError("players", rule, f"a player is seated twice: {list(seated)}")
    return seated


def clockwise_from(players: Sequence[str], start: str) -> tuple[str, ...]:
    """One round of turns clockwise from ``start``; ``players`` in clockwise seating order.

    Simple rules play these turns again and again until someone wins (G2-ROUND-4); the full
    rules' first round picks deployment cards in this order (G2-ROUND-1).

    :raises PackError: ``start`` is not seated, a player is seated twice, more than 4 players.
    """
    seated = _check_players(players, "G2-ROUND-4")
    if start not in seated:
        raise PackError("start", "G2-ROUND-4", f"{start!r} is not seated at {list(seated)}")
    i = seated.index(start)
    return seated[i:] + seated[:i]


def next_player(players: Sequence[str], current: str) -> str:
    """The player after ``current`` clockwise (simple rules, G2-ROUND-4).

    :raises PackError: as :func:`clockwise_from`.
    """
    order = clockwise_from(players, current)
    return order[1 % len(order)]


def cards_to_draw(hand_size: int) -> int:
    """Cards drawn at the start of a turn: 1, or 2 from an empty hand (G2-TURN-1).

    :raises PackError: a negative hand size.
    """
    if hand_size < 0:
        raise PackError("hand_size", "G2-TURN-1", f"must be 0 or more, got {hand_size}")
    return 2 if hand_size == 0 else 1


def cards_to_discard(hand_size: int) -> int:
    """Cards to discard after the actions to keep :data:`HAND_LIMIT` = 6 (G2-TURN-3).

    :raises PackError: a negative hand size.
    """
    if hand_size < 0:
        raise PackError("hand_size", "G2-TURN-3", f"must be 0 or more, got {hand_size}")
    return max(0, hand_size - HAND_LIMIT)


@dataclass(frozen=True)
class DeploymentRound:
    """One full-rules round (G2-ROUND-1..3).

    * ``picking_order``: who picks a deployment card face down, first to last; the first picker
      calls the numbers (G2-ROUND-2);
    * ``unused``: the 2 numbers set aside unseen; the companion keeps them to itself and skips
      them silently when calling;
    * ``held``: player -> deployment number, filled as the cards are revealed.

    Build one with :func:`deal_round`.

    :raises PackError: (at construction) not 1-4 distinct players, ``unused`` is not 2 of the
        deployment numbers.
    """

    picking_order: tuple[str, ...]
    unused: frozenset[int]
    held: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        _check_players(self.picking_order, "G2-ROUND-1")
        if len(self.unused) != SET_ASIDE or not self.unused <= set(DEPLOYMENT_NUMBERS):
            raise PackError(
                "unused", "G2-ROUND-1", f"2 of the numbers 1..8, got {sorted(self.unused)}"
            )
        object.__setattr__(self, "held", MappingProxyType(dict(self.held)))

    @property
    def caller(self) -> str:
        """The first picker, who calls the numbers 1 -> 8 (G2-ROUND-2)."""
        return self.picking_order[0]

    @property
    def calling_order(self) -> tuple[int, ...]:
        """The numbers the caller calls, 1 -> 8 without the 2 set aside (G2-ROUND-2).

        A called number nobody took is simply passed over; the holder of a called number
        reveals it and takes his turn.
        """
        return tuple(n for n in DEPLOYMENT_NUMBERS if n not in self.unused)

    def reveal(self, player: str, number: int) -> DeploymentRound:
        """Record that ``player`` revealed deployment card ``number`` (G2-ROUND-2).

        :raises PackError: ``player`` is not in the round or already revealed, ``number`` is
            not a deployment number, was set aside, or is held by another player.
        """
        if player not in self.picking_order:
            raise PackError("player", "G2-ROUND-2", f"{player!r} is not in this round")
        if player in self.held:
            raise PackError("player", "G2-ROUND-2", f"{player!r} already holds {self.held[player]}")
        if number not in DEPLOYMENT_NUMBERS:
            raise PackError("number", "G2-ROUND-2", f"deployment numbers are 1..8, got {number}")
        if number in self.unused:
            raise PackError("number", "G2-ROUND-1", f"{number} was set aside for this round")
        if number in self.held.values():
            raise PackError("number", "G2-ROUND-2", f"{number} is already held")
        return replace(self, held=MappingProxyType({**self.held, player: number}))

    def next_picking_order(self, pope_order: Sequence[str] | None = None) -> tuple[str, ...]:
        """Picking order of the next round: ascending by the numbers held this round
        (G2-ROUND-1), or the order the Pope's holder imposes (``pope_order``, G2-ROUND-3).

        :raises PackError: a player has not revealed yet; ``pope_order`` is given but nobody
            held the Pope (4) this round, or it is not an order of this round's players.
        """
        missing = [p for p in self.picking_order if p not in self.held]
        if missing:
            raise PackError("held", "G2-ROUND-2", f"not revealed yet: {missing}")
        if pope_order is None:
            return tuple(sorted(self.picking_order, key=lambda p: self.held[p]))
        if POPE not in self.held.values():
            raise PackError("pope_order", "G2-ROUND-3", "nobody held the Pope (4) this round")
        order = tuple(pope_order)
        if sorted(order) != sorted(self.picking_order):
            raise PackError(
                "pope_order",
                "G2-ROUND-3",
                f"must order exactly {sorted(self.picking_order)}, got {list(order)}",
            )
        return order


def deal_round(rng: random.Random, picking_order: Sequence[str]) -> DeploymentRound:
    """Start a full-rules round: shuffle the 8 deployment cards with ``rng`` and set 2 aside
    unseen (G2-ROUND-1).

    ``picking_order``: round 1 is :func:`clockwise_from` the start player, later rounds
    :meth:`DeploymentRound.next_picking_order`.

    :raises PackError: as :func:`clockwise_from` (1-4 distinct players).
    """
    order = _check_players(picking_order, "G2-ROUND-1")
    deck = list(DEPLOYMENT_NUMBERS)
    rng.shuffle(deck)
    return DeploymentRound(picking_order=order, unused=frozenset(deck[:SET_ASIDE]))


class Token(enum.Enum):
    """The token kinds of the board (G2-COMP-1)."""

    BARRIER = "barrier"
    MUD = "mud"
    BOMB = "bomb"


SUPPLY: Mapping[Token, int] = MappingProxyType({Token.BARRIER: 15, Token.MUD: 5, Token.BOMB: 7})
"""Tokens in the box (G2-COMP-1)."""

_SUPPLY_RULE = {Token.BARRIER: "G2-TOK-1", Token.MUD: "G2-TOK-3", Token.BOMB: "G2-TOK-2"}


@dataclass(frozen=True)
class TokenSupply:
    """Tokens still off the board; a full supply at the start (G2-COMP-1).

    :raises PackError: (at construction) a count below 0 or above the box's count.
    """

    barrier: int = SUPPLY[Token.BARRIER]
    mud: int = SUPPLY[Token.MUD]
    bomb: int = SUPPLY[Token.BOMB]

    def __post_init__(self) -> None:
        for token in Token:
            count = self.count(token)
            if not 0 <= count <= SUPPLY[token]:
                raise PackError(
                    token.value,
                    _SUPPLY_RULE[token],
                    f"supply must be 0..{SUPPLY[token]}, got {count}",
                )

    def count(self, token: Token) -> int:
        """Tokens of ``token`` in the supply."""
        return int(getattr(self, token.value))

    def on_board(self, token: Token) -> int:
        """Tokens of ``token`` on the board (box count minus supply)."""
        return SUPPLY[token] - self.count(token)

    def take(self, token: Token, n: int = 1) -> TokenSupply:
        """Take ``n`` tokens to place them: a giant barrier places 3 barriers (G2-TOK-1), a
        bomb or a mud trap 1 (G2-TOK-2, G2-TOK-3).

        :raises PackError: ``n`` < 1, or fewer than ``n`` left. For barriers the rule then
            lets the player move barriers already on the board (G2-TOK-1): take what is left,
            then move the others on the board, which changes no count.
        """
        rule = _SUPPLY_RULE[token]
        if n < 1:
            raise PackError("n", rule, f"take at least 1 token, got {n}")
        left = self.count(token)
        if n > left:
            hint = "; move barriers already on the board instead" if token is Token.BARRIER else ""
            raise PackError(token.value, rule, f"only {left} left in the supply, need {n}{hint}")
        return replace(self, **{token.value: left - n})

    def give_back(self, token: Token, n: int = 1) -> TokenSupply:
        """Return ``n`` tokens from the board: a stepped-on bomb or mud trap (G2-TOK-2,
        G2-TOK-3), a teleport onto one (G2-TOK-4), the prayer artefact's removal (G2-TOK-5).

        :raises PackError: ``n`` < 1, or more than are on the board.
        """
        rule = "G2-TOK-5" if token is Token.BARRIER else _SUPPLY_RULE[token]
        if n < 1:
            raise PackError("n", rule, f"return at least 1 token, got {n}")
        if n > self.on_board(token):
            raise PackError(
                token.value, rule, f"only {self.on_board(token)} on the board, cannot return {n}"
            )
        return replace(self, **{token.value: self.count(token) + n})
