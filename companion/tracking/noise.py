"""How far a camera's :class:`Observation` is from what a :class:`GameState` would look like.

The tracker never trusts a frame: it scores every candidate state's *expected view* against the
observed one with a noise model and keeps the candidates that explain the picture best
(docs/architecture.md, "The tracker"; docs/state-model.md §3).

Scores are costs in nats (``-ln p`` of the errors the camera would have had to make), so they add
up over spaces and over frames, and a difference of ``d`` between two candidates means the better
one is ``e**d`` times more likely.

Expected views are computed straight from the state's tuples (no Observation objects), and the
per-space cost is memoised per target observation, so scoring one candidate is a few dictionary
look-ups.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from companion.rules.model import GameState, Table, space_of, tier_of
from companion.rules.observation import COLOURS, Observation, SpaceObservation

COLOUR_INDEX: Mapping[str, int] = {c: i for i, c in enumerate(COLOURS)}

CONFUSABLE: frozenset[frozenset[str]] = frozenset(
    {
        frozenset({"yellow", "orange"}),
        frozenset({"red", "orange"}),
        frozenset({"blue", "purple"}),
    }
)
"""Colour pairs a camera confuses under warm or dim light (the three near pairs of R-COMP-1)."""

_CONFUSE_IDX: tuple[tuple[int, int], ...] = tuple(
    sorted(
        (min(COLOUR_INDEX[a], COLOUR_INDEX[b]), max(COLOUR_INDEX[a], COLOUR_INDEX[b]))
        for a, b in (tuple(p) for p in CONFUSABLE)
    )
)

SpaceView = tuple[int, str, tuple[int, ...], bool, bool, bool]
"""What one space looks like: ``(towers, top, wizard counts per colour of COLOURS, castle,
witch, raven)`` (the expansion's witch and raven tokens when on the top surface)."""


@dataclass(frozen=True, slots=True)
class NoiseModel:
    """Per-field error probabilities of the camera, used as costs ``-ln p`` (nats).

    :param tower_count: the number of towers on a space is read one too high or too low.
    :param tower_count_far: the count is off by two or more.
    :param top: the top-surface kind is read wrong (crest / plain / magic / track).
    :param colour_confusion: one wizard is read as its near colour (yellow/orange, red/orange,
        blue/purple).
    :param colour_other: one wizard is read as an unrelated colour.
    :param wizard_missing: a visible wizard is not seen (occluded, glare).
    :param wizard_extra: a wizard is seen that is not there (a reflection, a stray piece).
    :param castle: the raven castle's presence on a space is read wrong.
    :param token: the witch or raven token's presence on a space is read wrong (expansion).
    :param bad_frame: above this total cost (nats) a frame is "not explained" by a candidate…
    :param bad_frame_per_space: …plus this much per space read (nats): the more pieces in view,
        the more misread fields an honest frame holds (two misread fields in a frame of 16
        spaces is common at a 1 % error rate, and must not cost the turn).
    """

    tower_count: float = 0.02
    tower_count_far: float = 0.002
    top: float = 0.02
    colour_confusion: float = 0.03
    colour_other: float = 0.004
    wizard_missing: float = 0.02
    wizard_extra: float = 0.01
    castle: float = 0.01
    token: float = 0.01
    bad_frame: float = 8.0
    bad_frame_per_space: float = 0.25

    def __post_init__(self) -> None:
        for name in (
            "tower_count",
            "tower_count_far",
            "top",
            "colour_confusion",
            "colour_other",
            "wizard_missing",
            "wizard_extra",
            "castle",
            "token",
        ):
            p = getattr(self, name)
            if not isinstance(p, int | float) or not 0.0 < float(p) < 1.0:
                raise ValueError(f"noise.{name}: expected a probability in (0, 1), got {p!r}")
        if self.bad_frame <= 0:
            raise ValueError("noise.bad_frame: expected a positive cost in nats")
        if self.bad_frame_per_space < 0:
            raise ValueError("noise.bad_frame_per_space: expected a cost in nats >= 0")

    def cost(self, name: str) -> float:
        """``-ln p`` of one error of kind ``name`` (a field of this model)."""
        p: float = getattr(self, name)
        return -math.log(p)


def space_views(state: GameState) -> list[SpaceView]:
    """The expected camera view of every space of ``state``: index ``space - 1``.

    Visible wizards are those whose tier equals the space's height (docs/state-model.md §2.1);
    hidden wizards, a sealed witch and the castle's contents never show (docs/state-model.md
    §3).
    """
    tb = state.table
    stacks = state.stacks
    length = tb.length
    counts = [[0] * 6 for _ in range(length)]
    owner = tb.wizard_owner
    colour_idx = _table_colour_index(tb)
    for i, p in enumerate(state.wizards):
        if p == 0:
            continue
        s = space_of(p)
        if tier_of(p) == len(stacks[s - 1]):
            counts[s - 1][colour_idx[owner[i]]] += 1
    witch = raven = 0
    ms = state.modules
    if ms is not None:
        # a token shows when it stands on the top surface (a sealed witch is covered)
        w = ms.witch
        ws = 0 if w is None else space_of(w)
        if w is not None and 1 <= ws <= length and tier_of(w) == len(stacks[ws - 1]):
            witch = ws
        if ms.raven is not None and 1 <= space_of(ms.raven) <= length:
            raven = space_of(ms.raven)
    out: list[SpaceView] = []
    for idx in range(length):
        st = stacks[idx]
        if st:
            top = tb.towers[st[-1]].kind
        else:
            sp = tb.special[idx + 1]
            top = (
                sp
                if sp is not None
                else ("crest-space" if tb.crest_space[idx + 1] else "plain-space")
            )
        out.append(
            (
                len(st),
                top,
                tuple(counts[idx]),
                state.castle == idx + 1,
                witch == idx + 1,
                raven == idx + 1,
            )
        )
    return out


_COLOUR_IDX_CACHE: dict[tuple[str, ...], tuple[int, ...]] = {}
"""Seat -> colour index, per seating (keyed by the colours themselves: a table object's ``id``
may be reused by a later game's table with other colours)."""

_MEMO_LIMIT = 20000
"""Entries a :class:`Target`'s per-space memo holds before it starts over (~3 MB)."""


def _table_colour_index(tb: Table) -> tuple[int, ...]:
    key = tuple(tb.colours)
    got = _COLOUR_IDX_CACHE.get(key)
    if got is None:
        got = tuple(COLOUR_INDEX[c] for c in key)
        if len(_COLOUR_IDX_CACHE) > 64:
            _COLOUR_IDX_CACHE.clear()
        _COLOUR_IDX_CACHE[key] = got
    return got


def view_to_space_observation(view: SpaceView) -> SpaceObservation:
    """The noiseless :class:`SpaceObservation` of an expected view."""
    towers, top, counts, castle, witch, raven = view
    wizards = {COLOURS[i]: n for i, n in enumerate(counts) if n}
    return SpaceObservation(
        towers=towers, top=top, wizards=wizards, castle=castle, witch=witch, raven=raven
    )


def expected_observation(state: GameState) -> Observation:
    """What a perfect camera would report for ``state`` (docs/state-model.md §3)."""
    return Observation(
        spaces={i + 1: view_to_space_observation(v) for i, v in enumerate(space_views(state))}
    )


class Target:
    """An observation prepared for fast scoring, with a per-space memo of costs.

    :param obs: the observation; spaces it lacks are unknown and cost nothing.
    :param length: the track length N (spaces ``1..N``).
    :param noise: the noise model.
    :raises ObservationError: never (the observation is validated on construction).
    :raises ValueError: when the observation names a space beyond ``length``.
    """

    __slots__ = ("obs", "length", "noise", "bad_frame", "unknown", "_spaces", "_memo", "_c")

    def __init__(self, obs: Observation, length: int, noise: NoiseModel) -> None:
        self.obs = obs
        self.length = length
        self.noise = noise
        self.bad_frame = noise.bad_frame + noise.bad_frame_per_space * len(obs.spaces)
        """Above this cost (nats) the frame is not explained by a candidate."""
        spaces: list[tuple[int, str, tuple[int, ...], bool, bool, bool, float] | None]
        spaces = [None] * length
        for s, so in obs.spaces.items():
            if not 1 <= s <= length:
                raise ValueError(f"spaces.{s}: no such space on a track of {length}")
            counts = [0] * 6
            for colour, n in so.wizards.items():
                counts[COLOUR_INDEX[colour]] = n
            spaces[s - 1] = (
                so.towers,
                so.top,
                tuple(counts),
                so.castle,
                so.witch,
                so.raven,
                float(so.confidence),
            )
        self._spaces = spaces
        self.unknown = frozenset(i + 1 for i, v in enumerate(spaces) if v is None)
        """Spaces (1..N) the observation lacks (withheld by the detector as unsure): anything
        may stand there, so a move may start or end there (docs/state-model.md §3)."""
        self._memo: dict[tuple[int, SpaceView], float] = {}
        c = noise.cost
        self._c = (
            c("tower_count"),
            c("tower_count_far"),
            c("top"),
            c("colour_confusion"),
            c("colour_other"),
            c("wizard_missing"),
            c("wizard_extra"),
            c("castle"),
            c("token"),
        )

    def space_cost(self, idx: int, view: SpaceView) -> float:
        """Cost of seeing this target's space ``idx + 1`` when ``view`` is the truth."""
        key = (idx, view)
        got = self._memo.get(key)
        if got is not None:
            return got
        obs = self._spaces[idx]
        cost = 0.0 if obs is None else self._raw_cost(obs, view)
        if len(self._memo) >= _MEMO_LIMIT:
            # a deep search meets tens of thousands of views: keep the memory bounded
            self._memo.clear()
        self._memo[key] = cost
        return cost

    def _raw_cost(
        self, obs: tuple[int, str, tuple[int, ...], bool, bool, bool, float], view: SpaceView
    ) -> float:
        c_count, c_far, c_top, c_conf, c_other, c_miss, c_extra, c_castle, c_token = self._c
        o_towers, o_top, o_counts, o_castle, o_witch, o_raven, conf = obs
        towers, top, counts, castle, witch, raven = view
        cost = 0.0
        dt = abs(o_towers - towers)
        if dt == 1:
            cost += c_count
        elif dt > 1:
            cost += c_far + (dt - 2) * c_count
        if o_top != top and not (o_towers == 0 < towers):
            # a stack not seen at all shows the space under it: its "top" is the space's
            # surface, which follows from the count and is not a second error. (A tower seen
            # where there is none stays charged for its top too: a wrong story that moves a
            # tower away must not buy a misread top for the price of a misread count.)
            cost += c_top
        if o_castle != castle:
            cost += c_castle
        if o_witch != witch:
            cost += c_token
        if o_raven != raven:
            cost += c_token
        if o_counts != counts:
            d = [o - e for o, e in zip(o_counts, counts, strict=True)]
            for a, b in _CONFUSE_IDX:
                while d[a] > 0 and d[b] < 0:
                    d[a] -= 1
                    d[b] += 1
                    cost += c_conf
                while d[a] < 0 and d[b] > 0:
                    d[a] += 1
                    d[b] -= 1
                    cost += c_conf
            extra = sum(x for x in d if x > 0)
            missing = -sum(x for x in d if x < 0)
            swaps = min(extra, missing)
            cost += swaps * min(c_other, c_extra + c_miss)
            cost += (extra - swaps) * c_extra + (missing - swaps) * c_miss
        # a detector that is unsure of a space makes its evidence weaker (never stronger)
        return cost * max(0.05, min(1.0, conf))

    def same_reading(self, other: Target, idx: int) -> bool:
        """This frame and ``other`` read space ``idx + 1`` alike (towers, top, wizards, castle,
        tokens; the confidence aside); False when either did not read it."""
        a = self._spaces[idx]
        b = other._spaces[idx] if idx < len(other._spaces) else None
        return a is not None and b is not None and a[:6] == b[:6]

    def reading(self, idx: int) -> tuple[SpaceView, float] | None:
        """What this frame read on space ``idx + 1`` as a view (:data:`SpaceView`) and the
        detector's confidence for it (0..1); None when the space was not read."""
        got = self._spaces[idx] if 0 <= idx < len(self._spaces) else None
        if got is None:
            return None
        towers, top, counts, castle, witch, raven, conf = got
        return (towers, top, counts, castle, witch, raven), conf

    def cost(self, views: list[SpaceView]) -> float:
        """Total cost (nats) of the whole observation given the expected ``views``."""
        total = 0.0
        sc = self.space_cost
        for idx, v in enumerate(views):
            total += sc(idx, v)
        return total

    def mismatched(self, views: list[SpaceView]) -> list[int]:
        """Space numbers whose observation differs from the expected view."""
        sc = self.space_cost
        return [idx + 1 for idx, v in enumerate(views) if sc(idx, v) > 0.0]

    def changed_from(self, views: list[SpaceView]) -> frozenset[int]:
        """Spaces (1..N) where this observation disagrees with ``views`` at all."""
        return frozenset(self.mismatched(views))
