"""*The Princess and Magic Tile* (seed S3): the final scoring sheet (G3-SCORE-1..6).

Final score = track or GOAL score + element majority + spirit cards + bonus cards; the highest
total wins (G3-SCORE-1). Tile counts are of the **visible top** tiles of a player's area,
start board included (G3-SCORE-3).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from companion.packs.errors import PackError
from companion.packs.princess.rules import PLACEMENT_BONUS, TrackSettings


class Element(enum.Enum):
    """The 7 kinds of element tile (G3-COMP-2): four elements and three of the sky."""

    EARTH = "earth"
    WATER = "water"
    FIRE = "fire"
    WIND = "wind"
    MOON = "moon"
    STAR = "star"
    SUN = "sun"


SKY: tuple[Element, ...] = (Element.MOON, Element.STAR, Element.SUN)
"""The kinds scored for majority (G3-SCORE-3)."""

MAJORITY_POINTS = (5, 2)
"""Most and second most of a sky kind, 3+ players (G3-SCORE-3)."""

TWO_PLAYER_MAJORITY = 3
"""Most of a sky kind with 2 players; no second place (G3-SCORE-3)."""

SPIRIT_USES = 2
"""Uses of a spirit card; each unused use scores 2 (G3-SCORE-4)."""

SPIRIT_CARDS = 2
"""Spirit cards per player, one of each kind (G3-SETUP-1)."""


class MajorityTies(enum.Enum):
    """Who is "second most" when several players tie for the most (G3-SCORE-3; unclear).

    * ``DENSE`` (default): the next lower count is second most and scores 2;
    * ``SKIP``: a tie for the most uses up second place; nobody scores 2.
    """

    DENSE = "dense"
    SKIP = "skip"


def majority_points(
    counts: Mapping[str, int], ties: MajorityTies = MajorityTies.DENSE
) -> dict[str, int]:
    """Points of every player for one sky kind (G3-SCORE-3).

    ``counts``: player -> visible top tiles of the kind. 3-4 players: most 5, second most 2;
    2 players: most 3 only; everyone tied shares the points in full. A player with no tile
    of the kind scores nothing (chosen: having none is no majority).

    :raises PackError: fewer than 2 or more than 4 players, a negative count.
    """
    if not 2 <= len(counts) <= 4:
        raise PackError("counts", "G3-SCORE-3", f"2-4 players, got {len(counts)}")
    for player, n in counts.items():
        if n < 0:
            raise PackError("counts", "G3-SCORE-3", f"{player!r} has {n} tiles, must be 0 or more")
    ladder = sorted({n for n in counts.values() if n > 0}, reverse=True)
    if len(counts) == 2:
        points: tuple[int, ...] = (TWO_PLAYER_MAJORITY,)
    else:
        points = MAJORITY_POINTS
        top = ladder[:1]
        if ties is MajorityTies.SKIP and top and sum(n == top[0] for n in counts.values()) > 1:
            points = points[:1]
    scored = dict(zip(ladder, points, strict=False))
    return {player: scored.get(n, 0) for player, n in counts.items()}


def spirit_points(uses_left: Sequence[int]) -> int:
    """2 points per remaining use of each spirit card (G3-SCORE-4); an unused card = 4.

    :raises PackError: more than 2 cards, a card's uses outside 0..2.
    """
    if len(uses_left) > SPIRIT_CARDS:
        raise PackError(
            "spirit_uses", "G3-SCORE-4", f"at most {SPIRIT_CARDS} cards, got {len(uses_left)}"
        )
    for uses in uses_left:
        if not 0 <= uses <= SPIRIT_USES:
            raise PackError(
                "spirit_uses", "G3-SCORE-4", f"a card has 0..{SPIRIT_USES} uses left, got {uses}"
            )
    return 2 * sum(uses_left)


@dataclass(frozen=True)
class BonusCard:
    """A bonus card (G3-SCORE-5): most (``most=True``) or fewest visible top tiles of
    ``element`` scores ``points``; everyone tied scores."""

    element: Element
    most: bool
    points: int = 3

    def award(self, tiles: Mapping[str, Mapping[Element, int]]) -> dict[str, int]:
        """Player -> points of this card."""
        counts = {player: kinds.get(self.element, 0) for player, kinds in tiles.items()}
        target = max(counts.values()) if self.most else min(counts.values())
        return {player: self.points if n == target else 0 for player, n in counts.items()}


@dataclass(frozen=True)
class PlayerEnd:
    """One player at the end of the game.

    * ``goal_score``: placement bonus + excess steps if he reached GOAL (G3-STEP-4), else
      ``None`` and ``space`` is his track space (G3-SCORE-2);
    * ``tiles``: visible top tiles per kind, start board included (G3-SCORE-3);
    * ``spirit_uses``: uses left on each spirit card (G3-SCORE-4).
    """

    name: str
    goal_score: int | None = None
    space: int = 0
    tiles: Mapping[Element, int] = field(default_factory=lambda: MappingProxyType({}))
    spirit_uses: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tiles", MappingProxyType(dict(self.tiles)))
        if self.goal_score is not None and not min(PLACEMENT_BONUS) <= self.goal_score:
            raise PackError(
                "goal_score", "G3-STEP-4", f"at least {min(PLACEMENT_BONUS)}, got {self.goal_score}"
            )
        for kind, n in self.tiles.items():
            if n < 0:
                raise PackError(
                    "tiles", "G3-SCORE-3", f"{kind.value}: {n} tiles, must be 0 or more"
                )


@dataclass(frozen=True)
class ScoreRow:
    """One player's line of the sheet (G3-SCORE-1)."""

    name: str
    track: int
    majority: int
    spirit: int
    bonus: int

    @property
    def total(self) -> int:
        """Sum of the four parts."""
        return self.track + self.majority + self.spirit + self.bonus


@dataclass(frozen=True)
class ScoreSheet:
    """The final scoring sheet, one :class:`ScoreRow` per player in seating order."""

    rows: tuple[ScoreRow, ...]

    def row(self, name: str) -> ScoreRow:
        """The row of ``name``.

        :raises PackError: no such player.
        """
        for row in self.rows:
            if row.name == name:
                return row
        raise PackError(
            "name", "G3-SCORE-1", f"{name!r} is not on the sheet {[r.name for r in self.rows]}"
        )

    def total(self, name: str) -> int:
        """Total of ``name`` (G3-SCORE-1).

        :raises PackError: no such player.
        """
        return self.row(name).total

    @property
    def winners(self) -> tuple[str, ...]:
        """Everyone with the highest total (the seed's example has two winners)."""
        best = max(row.total for row in self.rows)
        return tuple(row.name for row in self.rows if row.total == best)


def score_sheet(
    players: Sequence[PlayerEnd],
    bonus_cards: Sequence[BonusCard] = (),
    *,
    majority: bool = True,
    ties: MajorityTies = MajorityTies.DENSE,
    settings: TrackSettings | None = None,
) -> ScoreSheet:
    """The final scores (G3-SCORE-1..5).

    ``majority=False`` leaves out the element majority (first-game rules, G3-SCORE-3);
    ``settings.track_values`` gives the printed values of the track (G3-SCORE-2).

    :raises PackError: not 2-4 distinct players, a bad part (see :func:`majority_points`,
        :func:`spirit_points`, :meth:`TrackSettings.track_value`).
    """
    names = [p.name for p in players]
    if not 2 <= len(names) <= 4 or len(set(names)) != len(names):
        raise PackError("players", "G3-COMP-1", f"2-4 distinct players, got {names}")
    track_settings = settings or TrackSettings()
    tiles = {p.name: p.tiles for p in players}
    sky = {name: 0 for name in names}
    if majority:
        for kind in SKY:
            for name, points in majority_points(
                {n: t.get(kind, 0) for n, t in tiles.items()}, ties
            ).items():
                sky[name] += points
    bonus = {name: 0 for name in names}
    for card in bonus_cards:
        for name, points in card.award(tiles).items():
            bonus[name] += points
    rows = tuple(
        ScoreRow(
            name=p.name,
            track=p.goal_score if p.goal_score is not None else track_settings.track_value(p.space),
            majority=sky[p.name],
            spirit=spirit_points(p.spirit_uses),
            bonus=bonus[p.name],
        )
        for p in players
    )
    return ScoreSheet(rows)
