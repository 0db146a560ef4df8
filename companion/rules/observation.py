"""What a camera can see of the table: the Observation contract between vision and the tracker.

The JSON shape is fixed by ``docs/architecture.md`` ("The two JSON contracts")::

    {"time": 1732270000.25, "frame": 1841,
     "spaces": {"1": {"towers": 0, "top": "crest-space", "wizards": {"blue": 1},
                      "castle": true, "witch": false, "raven": false, "confidence": 0.97}},
     "unstable": false}

``towers`` is the number of towers on the space (the raven castle is not a tower); ``top`` is the
top surface: ``crest-space``, ``plain-space``, ``fountain``, ``web`` (no tower) or ``crest``,
``plain``, ``magic`` (roof of the top tower); ``wizards`` counts the *visible* wizards on the top
surface by colour. Hidden wizards, hands, potions in the box are never part of an observation
(docs/state-model.md §3).

This module is pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

COLOURS: tuple[str, ...] = ("blue", "yellow", "red", "green", "orange", "purple")
"""The six wizard colours (R-COMP-1), in the rulebook's order."""

TRACK_TOPS: frozenset[str] = frozenset({"crest-space", "plain-space", "fountain", "web"})
"""Top kinds of a space with no tower."""

ROOF_TOPS: frozenset[str] = frozenset({"crest", "plain", "magic"})
"""Top kinds of a space whose top surface is a tower roof."""

TOP_KINDS: frozenset[str] = TRACK_TOPS | ROOF_TOPS

MAX_WIZARDS_ON_TOP = 6
"""R-WIZ-4: a top surface holds at most 6 wizards."""

MAX_TOWERS = 10
"""Nine towers, ten with the magic tower (R-COMP-1, R-COMP-3)."""


class ObservationError(ValueError):
    """A malformed observation; the message names the offending field (e.g. ``spaces.7.towers``)."""


@dataclass(frozen=True, slots=True)
class SpaceObservation:
    """What the camera sees on one space of the track.

    :param towers: number of towers standing on the space, 0..10.
    :param top: top-surface kind, one of :data:`TOP_KINDS`.
    :param wizards: visible wizards on the top surface, colour -> count (counts 1..6, sum <= 6).
    :param castle: the raven castle stands on this space (on the track or on the top roof).
    :param witch: the witch token is visible on the top surface (expansion).
    :param raven: the raven token is on the top surface (expansion).
    :param confidence: detector confidence for the whole space, 0..1.
    """

    towers: int
    top: str
    wizards: Mapping[str, int] = field(default_factory=dict)
    castle: bool = False
    witch: bool = False
    raven: bool = False
    confidence: float = 1.0

    def __post_init__(self) -> None:
        _check_space(self, "space")
        # freeze the mapping and drop zero counts so equal observations compare equal
        clean = {c: int(n) for c, n in sorted(self.wizards.items()) if n}
        object.__setattr__(self, "wizards", _FrozenDict(clean))

    def to_json(self) -> dict[str, Any]:
        return {
            "towers": self.towers,
            "top": self.top,
            "wizards": dict(self.wizards),
            "castle": self.castle,
            "witch": self.witch,
            "raven": self.raven,
            "confidence": self.confidence,
        }


class _FrozenDict(dict[str, int]):
    """A dict that refuses mutation and can be hashed (for frozen dataclasses)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("observation wizard counts are immutable")

    def __reduce__(self) -> tuple[type[_FrozenDict], tuple[dict[str, int]]]:
        # pickled whole (the detector's process sends its readings), never item by item
        return (_FrozenDict, (dict(self),))

    __setitem__ = _refuse
    __delitem__ = _refuse
    update = _refuse
    pop = _refuse  # type: ignore[assignment]
    clear = _refuse
    setdefault = _refuse  # type: ignore[assignment]
    popitem = _refuse  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Observation:
    """One stable frame's view of the whole track (vision -> tracker).

    :param spaces: space number (1..N) -> :class:`SpaceObservation`; a space may be missing when the
        detector could not read it or withheld it as unsure (a partial board, docs/state-model.md
        §3): the tracker then treats it as unknown, never as empty.
    :param time: capture time, seconds since the epoch (supplied by the caller; never read here).
    :param frame: frame counter of the source.
    :param unstable: True when the board was not still; the tracker ignores such observations.
    """

    spaces: Mapping[int, SpaceObservation]
    time: float = 0.0
    frame: int = 0
    unstable: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "frame": self.frame,
            "spaces": {str(s): o.to_json() for s, o in sorted(self.spaces.items())},
            "unstable": self.unstable,
        }

    @classmethod
    def from_json(cls, data: Any, track_length: int | None = None) -> Observation:
        """Parse and validate the JSON form.

        :param track_length: when given, space numbers must lie in ``1..track_length``.
        :raises ObservationError: naming the bad field, e.g. ``spaces.7.wizards.pink``.
        """
        if not isinstance(data, Mapping):
            raise ObservationError("observation: expected an object")
        spaces_raw = data.get("spaces")
        if not isinstance(spaces_raw, Mapping):
            raise ObservationError("spaces: expected an object of space number -> space")
        spaces: dict[int, SpaceObservation] = {}
        for key, raw in spaces_raw.items():
            try:
                num = int(key)
            except (TypeError, ValueError):
                raise ObservationError(f"spaces.{key}: space numbers are integers") from None
            if num < 1 or (track_length is not None and num > track_length):
                raise ObservationError(f"spaces.{key}: no such space on this track")
            spaces[num] = _space_from_json(raw, f"spaces.{key}")
        time_ = data.get("time", 0.0)
        frame = data.get("frame", 0)
        unstable = data.get("unstable", False)
        if not isinstance(time_, int | float) or isinstance(time_, bool):
            raise ObservationError("time: expected a number of seconds")
        if not isinstance(frame, int) or isinstance(frame, bool) or frame < 0:
            raise ObservationError("frame: expected a non-negative integer")
        if not isinstance(unstable, bool):
            raise ObservationError("unstable: expected true or false")
        return cls(spaces=spaces, time=float(time_), frame=frame, unstable=unstable)


def _space_from_json(raw: Any, where: str) -> SpaceObservation:
    if not isinstance(raw, Mapping):
        raise ObservationError(f"{where}: expected an object")
    unknown = set(raw) - {"towers", "top", "wizards", "castle", "witch", "raven", "confidence"}
    if unknown:
        raise ObservationError(f"{where}.{sorted(unknown)[0]}: unknown field")
    wizards = raw.get("wizards", {})
    if not isinstance(wizards, Mapping):
        raise ObservationError(f"{where}.wizards: expected an object of colour -> count")
    for name in ("castle", "witch", "raven"):
        if not isinstance(raw.get(name, False), bool):
            raise ObservationError(f"{where}.{name}: expected true or false")
    space = SpaceObservation.__new__(SpaceObservation)
    for name, value in (
        ("towers", raw.get("towers")),
        ("top", raw.get("top")),
        ("wizards", wizards),
        ("castle", raw.get("castle", False)),
        ("witch", raw.get("witch", False)),
        ("raven", raw.get("raven", False)),
        ("confidence", raw.get("confidence", 1.0)),
    ):
        object.__setattr__(space, name, value)
    _check_space(space, where)
    return SpaceObservation(
        towers=space.towers,
        top=space.top,
        wizards=dict(wizards),
        castle=space.castle,
        witch=space.witch,
        raven=space.raven,
        confidence=float(space.confidence),
    )


def _check_space(s: SpaceObservation, where: str) -> None:
    if not isinstance(s.towers, int) or isinstance(s.towers, bool):
        raise ObservationError(f"{where}.towers: expected an integer")
    if not 0 <= s.towers <= MAX_TOWERS:
        raise ObservationError(f"{where}.towers: {s.towers} is outside 0..{MAX_TOWERS}")
    if s.top not in TOP_KINDS:
        raise ObservationError(f"{where}.top: {s.top!r} is not one of {sorted(TOP_KINDS)}")
    if (s.towers == 0) != (s.top in TRACK_TOPS):
        raise ObservationError(
            f"{where}.top: {s.top!r} does not fit {s.towers} tower(s) "
            "(track tops need 0 towers, roofs need at least 1)"
        )
    total = 0
    for colour, n in s.wizards.items():
        if colour not in COLOURS:
            raise ObservationError(f"{where}.wizards.{colour}: unknown colour")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ObservationError(f"{where}.wizards.{colour}: expected a count >= 0")
        total += n
    if total > MAX_WIZARDS_ON_TOP:
        raise ObservationError(f"{where}.wizards: {total} wizards exceed the top's 6 (R-WIZ-4)")
    conf = s.confidence
    if not isinstance(conf, int | float) or isinstance(conf, bool) or not 0.0 <= conf <= 1.0:
        raise ObservationError(f"{where}.confidence: expected a number in 0..1")
