"""*The Princess and Magic Tile* (seed S3): steps of a declaration and the score track.

The track runs from START (space 0) to GOAL (:data:`GOAL_SPACE` = 25: the seed's example
reaches GOAL with 2 steps from space 23). A player is named by a string (``"red"``).

* steps of one declaration (G3-STEP-1);
* the princess penalty (G3-STEP-2): the leading player past space 13 carries her and every
  advance of his loses 2 steps (never below 1); a move that passes her also loses 2 and never
  ends behind her;
* the secret passages 8 -> 12 and 10 -> 14 once anyone has reached space 20 (G3-STEP-3);
* GOAL: placement bonus 10/5/3/1 plus the excess steps; the princess is rescued (G3-STEP-4);
* the end of the game (G3-END-1, G3-END-2).

Points the seed leaves open are settings of :class:`TrackSettings` with stated defaults.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from companion.packs.errors import PackError

START_SPACE = 0
GOAL_SPACE = 25
"""GOAL is the 25th position: 2 steps from space 23 reach it (G3-STEP-4)."""

PRINCESS_SPACE = 13
"""Where the princess waits at the start (G3-SETUP-1)."""

PRINCESS_PENALTY = 2
"""Steps the princess costs per advance (G3-STEP-2)."""

PASSAGES_OPEN_AT = 20
"""The secret passages open once any player has reached this space (G3-STEP-3)."""

PASSAGES: Mapping[int, int] = MappingProxyType({8: 12, 10: 14})
"""Secret passages, entrance -> exit (G3-STEP-3)."""

PLACEMENT_BONUS: tuple[int, ...] = (10, 5, 3, 1)
"""Points for the 1st, 2nd, 3rd and 4th arrival at GOAL (G3-STEP-4)."""

MAX_GEMS = 5
"""Gem cubes per player; each completed card takes one, so a declaration has 1..5 cards
(G3-SETUP-1, G3-RUNE-1)."""

MAX_CARD_STEPS = 9
"""Sanity bound of a card's printed step value (a single digit; the seed lists no cards)."""

MAX_PLAYERS = 4
MIN_PLAYERS = 2
"""2-4 players (G3-COMP-1)."""


def declaration_steps(card_steps: Sequence[int]) -> int:
    """Steps of one declaration: the sum of the completed cards' step values plus
    ``k - 1`` for ``k`` cards completed together (G3-STEP-1); ``[2, 2, 3]`` -> 9.

    A two-number card gives its smaller number when exactly one different tile is mixed in
    (G3-RUNE-1): pass the number that applies.

    :raises PackError: no card, more than 5 cards (one gem cube each), a step value outside
        1..9.
    """
    steps = tuple(card_steps)
    if not 1 <= len(steps) <= MAX_GEMS:
        raise PackError("card_steps", "G3-STEP-1", f"1..{MAX_GEMS} cards, got {len(steps)}")
    for value in steps:
        if not 1 <= value <= MAX_CARD_STEPS:
            raise PackError(
                "card_steps", "G3-STEP-1", f"a card gives 1..{MAX_CARD_STEPS} steps, got {value}"
            )
    return sum(steps) + len(steps) - 1


def carried_steps(steps: int) -> int:
    """An advance of the princess's carrier: ``max(1, steps - 2)`` (G3-STEP-2); 4 -> 2, 2 -> 1.

    The seed states the 2 -> 1 case; ``max(1, …)`` extends it to every small count.

    :raises PackError: ``steps`` < 1.
    """
    if steps < 1:
        raise PackError("steps", "G3-STEP-2", f"an advance is 1 step or more, got {steps}")
    return max(1, steps - PRINCESS_PENALTY)


class Overtake(enum.Enum):
    """What a move that passes the carried princess costs (G3-STEP-2; the seed is unclear
    once someone carries her).

    * ``PENALISED`` (default, the seed's words read literally): the mover loses 2 steps like
      the carrier (never below 1), never ends behind the princess, and takes her over when he
      ends strictly ahead;
    * ``FREE``: only the first pick-up at space 13 is penalised; passing the carrier costs
      nothing, and the new leader takes the princess over.
    """

    PENALISED = "penalised"
    FREE = "free"


class PassageUse(enum.Enum):
    """When a secret passage is taken (G3-STEP-3; the seed is unclear).

    * ``LAND`` (default): a move that ends exactly on an entrance (8 or 10) goes on to its
      exit (12 or 14);
    * ``PASS``: a move that reaches or passes an entrance takes the passage for free and
      walks its remaining steps from the exit.
    """

    LAND = "land"
    PASS = "pass"


def _distance_to_goal(space: int) -> int:
    return space - GOAL_SPACE


@dataclass(frozen=True)
class TrackSettings:
    """Settings for what the seed leaves open.

    * ``overtake``: :class:`Overtake` (default ``PENALISED``);
    * ``passage_use``: :class:`PassageUse` (default ``LAND``);
    * ``carry_on_13``: a leader who ends exactly on space 13 already carries the princess. The
      seed says she is carried "after advancing to space 13" (前進到13格之後), which may or
      may not include landing on 13; the default ``False`` follows the reference reading
      "once past space 13" (G3-STEP-2);
    * ``track_values``: printed score of the track spaces for players who did not reach GOAL
      (G3-SCORE-2). The seed prints only space 23 -> -2; pass the other printed values here.
      A space not listed scores ``space - 25`` (its distance to GOAL, negative): it fits the
      printed value, and the seed puts GOAL at the "30/0" mark of the outer score ring, so the
      track counts up to 0 at GOAL.
    """

    overtake: Overtake = Overtake.PENALISED
    passage_use: PassageUse = PassageUse.LAND
    carry_on_13: bool = False
    track_values: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({23: -2}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "track_values", MappingProxyType(dict(self.track_values)))

    def track_value(self, space: int) -> int:
        """Score of a non-finisher on ``space`` (G3-SCORE-2).

        :raises PackError: ``space`` outside START..24.
        """
        if not START_SPACE <= space < GOAL_SPACE:
            raise PackError(
                "space",
                "G3-SCORE-2",
                f"a track space is {START_SPACE}..{GOAL_SPACE - 1}, got {space}",
            )
        return self.track_values.get(space, _distance_to_goal(space))


@dataclass(frozen=True)
class Advance:
    """What one declaration did: ``start`` -> ``end`` (:data:`GOAL_SPACE` when arrived).

    ``declared``: the declaration's steps; ``walked``: the steps it moved after the princess
    (including excess steps past GOAL; a secret passage is not counted); ``penalised``: the
    princess cost steps; ``passage``: a secret passage was taken; ``place`` (1-4) and
    ``score`` (placement bonus + excess steps) on arrival at GOAL.
    """

    player: str
    start: int
    end: int
    declared: int
    walked: int
    penalised: bool
    passage: bool
    place: int | None = None
    score: int | None = None


@dataclass(frozen=True)
class Track:
    """The score track: cube positions, the princess, the passages, the arrivals.

    * ``positions``: player -> space (0 = START; a finisher stays at 25 and scores from
      ``goal_scores``);
    * ``carrier``: who carries the princess (``None``: she waits on space 13, or she is
      rescued once ``arrivals`` is not empty);
    * ``passages_open``: someone has reached space 20 (G3-STEP-3);
    * ``arrivals``: finishers in arrival order; ``goal_scores``: finisher -> bonus + excess.

    Build one with :meth:`Track.start`.

    :raises PackError: (at construction) a space outside START..GOAL, a carrier who is not
        playing.
    """

    positions: Mapping[str, int]
    carrier: str | None = None
    passages_open: bool = False
    arrivals: tuple[str, ...] = ()
    goal_scores: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    settings: TrackSettings = field(default_factory=TrackSettings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "positions", MappingProxyType(dict(self.positions)))
        object.__setattr__(self, "goal_scores", MappingProxyType(dict(self.goal_scores)))
        for player, space in self.positions.items():
            if not START_SPACE <= space <= GOAL_SPACE:
                raise PackError(
                    "positions", "G3-STEP-1", f"{player!r} on {space}, spaces are 0..{GOAL_SPACE}"
                )
        if self.carrier is not None and self.carrier not in self.positions:
            raise PackError("carrier", "G3-STEP-2", f"{self.carrier!r} is not playing")

    @classmethod
    def start(cls, players: Sequence[str], settings: TrackSettings | None = None) -> Track:
        """Every cube on START, the princess on 13 (G3-SETUP-1).

        :raises PackError: not 2-4 distinct players.
        """
        seated = tuple(players)
        if not MIN_PLAYERS <= len(seated) <= MAX_PLAYERS or len(set(seated)) != len(seated):
            raise PackError("players", "G3-COMP-1", f"2-4 distinct players, got {list(seated)}")
        return cls(
            positions=MappingProxyType(dict.fromkeys(seated, START_SPACE)),
            settings=settings or TrackSettings(),
        )

    @property
    def rescued(self) -> bool:
        """Someone reached GOAL: the princess no longer slows anyone (G3-STEP-4)."""
        return bool(self.arrivals)

    @property
    def princess_space(self) -> int | None:
        """Where the princess is: space 13, the carrier's space, or ``None`` once rescued."""
        if self.rescued:
            return None
        return PRINCESS_SPACE if self.carrier is None else self.positions[self.carrier]

    def position(self, player: str) -> int:
        """Space of ``player``.

        :raises PackError: unknown player.
        """
        if player not in self.positions:
            raise PackError("player", "G3-STEP-1", f"{player!r} is not playing")
        return self.positions[player]

    def advance(self, player: str, steps: int, max_steps: int = 30) -> tuple[Track, Advance]:
        """Move ``player`` by a declaration of ``steps`` (G3-STEP-1..4).

        ``max_steps`` (default 30) is a sanity bound, more than the whole 25-space track: the
        seed prints no card values, so a slip such as 40 is refused rather than scored.

        :raises PackError: unknown player, a finisher, ``steps`` outside 1..``max_steps``.
        """
        start = self.position(player)
        if player in self.arrivals:
            raise PackError("player", "G3-STEP-4", f"{player!r} has already reached GOAL")
        if not 1 <= steps <= max_steps:
            raise PackError(
                "steps", "G3-STEP-1", f"a declaration is 1..{max_steps} steps, got {steps}"
            )
        end, penalised = self._walk(player, start, steps)
        walked = end - start
        passage = False
        if self.passages_open and end < GOAL_SPACE:
            end, passage = self._passage(start, end)
        moved = {**self.positions, player: min(end, GOAL_SPACE)}
        carrier = self.carrier
        arrivals = self.arrivals
        goal_scores = dict(self.goal_scores)
        place: int | None = None
        score: int | None = None
        if end >= GOAL_SPACE:
            arrivals = (*arrivals, player)
            place = len(arrivals)
            score = PLACEMENT_BONUS[place - 1] + end - GOAL_SPACE
            goal_scores[player] = score
            carrier = None
        elif not self.rescued:
            carrier = self._carrier_after(player, moved)
        track = replace(
            self,
            positions=MappingProxyType(moved),
            carrier=carrier,
            passages_open=self.passages_open or end >= PASSAGES_OPEN_AT,
            arrivals=arrivals,
            goal_scores=MappingProxyType(goal_scores),
        )
        return track, Advance(
            player, start, min(end, GOAL_SPACE), steps, walked, penalised, passage, place, score
        )

    def _walk(self, player: str, start: int, steps: int) -> tuple[int, bool]:
        """End space (may pass GOAL) and whether the princess cost steps (G3-STEP-2)."""
        princess = self.princess_space
        if princess is None:
            return start + steps, False
        if player == self.carrier:
            return start + carried_steps(steps), True
        if start + steps <= princess:
            return start + steps, False
        if self.carrier is not None and self.settings.overtake is Overtake.FREE:
            return start + steps, False
        return max(princess, start + carried_steps(steps)), True

    def _passage(self, start: int, end: int) -> tuple[int, bool]:
        """Apply a secret passage to a move ``start`` -> ``end`` (G3-STEP-3)."""
        for entrance, exit_ in PASSAGES.items():
            if self.settings.passage_use is PassageUse.LAND and end == entrance:
                return exit_, True
            if self.settings.passage_use is PassageUse.PASS and start < entrance <= end:
                return exit_ + end - entrance, True
        return end, False

    def _carrier_after(self, mover: str, positions: Mapping[str, int]) -> str | None:
        """The leading player past space 13 carries; on a tie whoever got there first
        keeps her (G3-STEP-2)."""
        space = positions[mover]
        if self.carrier is None:
            first = PRINCESS_SPACE if self.settings.carry_on_13 else PRINCESS_SPACE + 1
            leads = space >= first and space == max(positions.values())
            return mover if leads else None
        return mover if space > positions[self.carrier] else self.carrier


@dataclass(frozen=True)
class EndCheck:
    """Whether the game is over (G3-END-1, G3-END-2).

    * ``players``: clockwise seating;
    * ``final_turns``: after the first arrival at GOAL, the players still owed their one last
      turn, in order (G3-END-1);
    * ``over`` / ``rescued``: the game has ended, and whether the princess was rescued (the
      element tiles ran out before any arrival: not rescued, G3-END-2). Scoring happens either
      way (G3-SCORE-1). Once someone has arrived, running out of tiles changes nothing: the
      owed last turns are still played (chosen; the seed gives the tile end only for a game
      nobody has finished).
    """

    players: tuple[str, ...]
    first_finisher: str | None = None
    final_turns: tuple[str, ...] = ()
    over: bool = False
    rescued: bool = False

    def end_of_turn(self, player: str, *, reached_goal: bool, tiles_left: int) -> EndCheck:
        """Record the end of ``player``'s turn, after his rune declaration.

        ``reached_goal``: he is at GOAL now; ``tiles_left``: element tiles left to reveal.

        :raises PackError: the game is over, ``player`` is not playing or is not the one owed
            the next last turn, ``tiles_left`` < 0.
        """
        if self.over:
            raise PackError("player", "G3-END-1", "the game is already over")
        if player not in self.players:
            raise PackError("player", "G3-END-1", f"{player!r} is not playing")
        if tiles_left < 0:
            raise PackError("tiles_left", "G3-END-2", f"must be 0 or more, got {tiles_left}")
        if self.first_finisher is None:
            if reached_goal:
                i = self.players.index(player)
                owed = self.players[i + 1 :] + self.players[:i]
                return replace(
                    self, first_finisher=player, final_turns=owed, over=not owed, rescued=True
                )
            if tiles_left == 0:
                return replace(self, over=True, rescued=False)
            return self
        if player != self.final_turns[0]:
            raise PackError(
                "player",
                "G3-END-1",
                f"{self.final_turns[0]!r} plays the next last turn, not {player!r}",
            )
        owed = self.final_turns[1:]
        return replace(self, final_turns=owed, over=not owed)
