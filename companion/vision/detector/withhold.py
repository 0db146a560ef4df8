"""Withhold an unsure space, not the whole board (docs/state-model.md §3, "A partial board").

The detector reads every space with a calibrated confidence. A space it is unsure of (its
reported confidence below ``DetectorConfig.withhold_below``, or a lamp's glare on its top) is
left *out* of the emitted Observation: the space is then unknown to the tracker (its noise
model charges nothing for a space an observation lacks) and to the stability gate, and the page
draws it as not read. Every withheld space gets a reason a player understands ("space 7: can't
tell 2 or 3 towers", "glare on space 5"). The board is refused whole only for what is wrong
with the whole frame, or when more than ``withhold_max`` of its spaces are withheld (see
:func:`withhold`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from companion.rules.observation import Observation, SpaceObservation
from companion.vision.detector.config import DetectorConfig, SpaceDetail
from companion.vision.quality import space_ranges

_TOPS = {
    "crest": "a crest roof from a plain one",
    "plain": "a crest roof from a plain one",
    "magic": "the magic roof from another",
    "crest-space": "the crest mark on the track",
    "plain-space": "the crest mark on the track",
}


@dataclass(frozen=True)
class Withheld:
    """What :func:`withhold` made of a reading.

    :param observation: the reading without the withheld spaces.
    :param reasons: space -> why it was withheld, in a player's words.
    :param refusal: why the whole board is refused ("" when it is not).
    """

    observation: Observation
    reasons: dict[int, str]
    refusal: str = ""


def space_reason(
    space: int, o: SpaceObservation, d: SpaceDetail | None, cfg: DetectorConfig
) -> str:
    """Why the detector is unsure of one space, in a player's words: the least sure of its
    tower count (with the next likely count), its top kind and its wizard counts (the colour
    nearest a count boundary)."""
    if d is None:
        return f"space {space}: can't read it"
    worst = min(d.height_confidence, d.top_sure, cfg.wizard_sure(d.wizard_margin))
    if worst == d.height_confidence:
        if d.forced:
            return f"space {space}: the tower count does not add up ({_towers(o.towers, d)})"
        return f"space {space}: can't tell {_towers(o.towers, d)}"
    if worst == d.top_sure:
        return f"space {space}: can't tell {_TOPS.get(o.top, 'what is on top')}"
    if d.clipped > 0:
        return f"glare on space {space}"
    colour = _nearest_boundary(d.wizard_area, cfg.wizard_min)
    if colour is None:
        return f"space {space}: can't count the wizards"
    n = o.wizards.get(colour, 0)
    frac = (d.wizard_area[colour] - cfg.wizard_min) % 1.0
    other = n - 1 if frac < 0.5 and n > 0 else n + 1
    lo, hi = sorted((n, other))
    return f"space {space}: can't tell {lo} or {hi} {colour} wizards"


REASON_KINDS = ("tower total", "tower count", "top kind", "glare", "wizards", "not read")
"""The kinds of :func:`space_reason`'s messages (:func:`reason_kind`), as the vision bench
tallies the withheld spaces."""


def reason_kind(reason: str) -> str:
    """The kind (one of :data:`REASON_KINDS`) of a withheld space's reason as
    :func:`space_reason` or :func:`withhold` words it."""
    if reason.startswith("glare on"):
        return "glare"
    if "does not add up" in reason:
        return "tower total"
    if reason.endswith(" towers"):
        return "tower count"
    if "wizards" in reason:
        return "wizards"
    if "can't tell" in reason:
        return "top kind"
    return "not read"


def _towers(n: int, d: SpaceDetail) -> str:
    rival = d.rival_towers
    if rival < 0 or rival == n:
        return f"{n} towers"
    lo, hi = sorted((n, rival))
    return f"{lo} or {hi} towers"


def _nearest_boundary(areas: Mapping[str, float], wizard_min: float) -> str | None:
    """The wizard colour whose measured area lies nearest a count boundary."""
    best, colour = 2.0, None
    for c, a in areas.items():
        if c in ("witch", "raven"):
            continue
        frac = (a - wizard_min) % 1.0
        dist = min(frac, 1.0 - frac)
        if dist < best:
            best, colour = dist, c
    return colour


def withhold(
    obs: Observation,
    details: Mapping[int, SpaceDetail],
    cfg: DetectorConfig,
    glare: Mapping[int, float],
) -> Withheld:
    """Leave the unsure spaces out of a reading.

    A space is withheld when its reported confidence is below ``cfg.withhold_below`` or it is
    in ``glare`` (space -> share of clipped pixels on its top, already at the refusal share).
    The board is refused when more than ``cfg.withhold_max`` of its spaces are withheld:
    when most of a board is unsure, something is wrong with the whole frame (light, focus, a
    hand, a lamp) and the confidences of the rest, calibrated on ordinary frames, are not to
    be trusted either; the few spaces left would tell the tracker little.

    :param obs: the full reading (every space).
    :param details: the detector's diagnostics per space.
    :returns: the :class:`Withheld` (its observation keeps ``obs``'s time and frame).
    """
    reasons: dict[int, str] = {}
    for s, o in sorted(obs.spaces.items()):
        if s in glare:
            reasons[s] = f"glare on space {s}"
        elif o.confidence < cfg.withhold_below:
            reasons[s] = space_reason(s, o, details.get(s), cfg)
    kept = {s: o for s, o in obs.spaces.items() if s not in reasons}
    out = replace(obs, spaces=kept)
    if obs.spaces and len(reasons) > cfg.withhold_max * len(obs.spaces):
        why = f"can't read {len(reasons)} of {len(obs.spaces)} spaces"
        lit = sorted(s for s in reasons if s in glare)
        if lit:
            why += f" (glare on {space_ranges(lit)}: move the lamp or dim it)"
        return Withheld(out, reasons, f"{why}: re-checking the board")
    return Withheld(out, reasons)


def withheld_message(reasons: Mapping[int, str]) -> str:
    """The detection's message for a board read with spaces withheld: ``"not read: space 7:
    can't tell 2 or 3 towers; glare on space 5"`` ("" when none is)."""
    if not reasons:
        return ""
    return "not read: " + "; ".join(reasons[s] for s in sorted(reasons))
