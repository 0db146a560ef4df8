"""The host form's choice of game: :func:`game_choices` (``games`` of
``GET /api/setup-choices``).

Each pack names its players, seat colours and settings with their stated defaults (the pack's
``setup_choices``); the pages hold no rule of their own (docs/architecture.md, "Game packs").
"""

from __future__ import annotations

from typing import Any

from companion.packs.base import SEAT_COLOURS
from companion.packs.registry import PACKS, WANDERING_TOWERS


def game_choices() -> list[dict[str, Any]]:
    """Every game the host can set up, the Wandering Towers first (its form is the usual one):
    ``[{"name", "title", "players": [lo, hi], "colours", "settings", "dice"}, …]``."""
    games: list[dict[str, Any]] = [{"name": WANDERING_TOWERS, "title": "The Wandering Towers"}]
    for pack in PACKS.values():
        games.append(
            {
                "name": pack.name,
                "title": pack.title,
                "players": list(pack.players),
                "colours": list(SEAT_COLOURS),
                "settings": pack.setup_choices(),
                "dice": pack.dice_profile,
            }
        )
    return games
