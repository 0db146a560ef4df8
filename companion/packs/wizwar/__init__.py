"""*Wiz-War*: hit points, forced rest, hand, movement, attacks, obstacles, dice (G4-…)."""

from __future__ import annotations

from companion.packs.wizwar.rules import (
    D4_DIRECTIONS,
    D4_FACES,
    HAND_LIMIT,
    OBSTACLE_HP,
    START_HP,
    Direction,
    Obstacle,
    ObstacleHP,
    Rest,
    RestTable,
    TurnAttacks,
    Wizard,
    cards_to_discard,
    cards_to_draw,
    direction_for,
    movement,
    roll_start_order,
    start_order,
)

__all__ = [
    "D4_DIRECTIONS",
    "D4_FACES",
    "HAND_LIMIT",
    "OBSTACLE_HP",
    "START_HP",
    "Direction",
    "Obstacle",
    "ObstacleHP",
    "Rest",
    "RestTable",
    "TurnAttacks",
    "Wizard",
    "cards_to_discard",
    "cards_to_draw",
    "direction_for",
    "movement",
    "roll_start_order",
    "start_order",
]
