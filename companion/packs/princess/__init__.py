"""*The Princess and Magic Tile*: declaration steps, score track, end and scoring (G3-…)."""

from __future__ import annotations

from companion.packs.princess.rules import (
    GOAL_SPACE,
    PASSAGES,
    PLACEMENT_BONUS,
    PRINCESS_SPACE,
    Advance,
    EndCheck,
    Overtake,
    PassageUse,
    Track,
    TrackSettings,
    carried_steps,
    declaration_steps,
)
from companion.packs.princess.scoring import (
    SKY,
    BonusCard,
    Element,
    MajorityTies,
    PlayerEnd,
    ScoreRow,
    ScoreSheet,
    majority_points,
    score_sheet,
    spirit_points,
)

__all__ = [
    "GOAL_SPACE",
    "PASSAGES",
    "PLACEMENT_BONUS",
    "PRINCESS_SPACE",
    "SKY",
    "Advance",
    "BonusCard",
    "Element",
    "EndCheck",
    "MajorityTies",
    "Overtake",
    "PassageUse",
    "PlayerEnd",
    "ScoreRow",
    "ScoreSheet",
    "Track",
    "TrackSettings",
    "carried_steps",
    "declaration_steps",
    "majority_points",
    "score_sheet",
    "spirit_points",
]
