"""The games the companion can carry, by name: :data:`GAMES` and :func:`pack_for`.

``wandering-towers`` is the camera-tracked game of :mod:`companion.rules` (its driver is the
tracker with its journal); the others are the button-and-phone packs of this package, each a
:class:`~companion.packs.base.PackGame` (docs/architecture.md, "Game packs").
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from companion.packs.base import PackGame
from companion.packs.errors import PackError
from companion.packs.princess.game import PrincessPack
from companion.packs.siege.game import SiegePack
from companion.packs.wizwar.game import WizWarPack

WANDERING_TOWERS = "wandering-towers"
"""The default game: The Wandering Towers, tracked by the camera."""

PACKS: Mapping[str, PackGame] = MappingProxyType(
    {p.name: p for p in (SiegePack(), PrincessPack(), WizWarPack())}
)
"""Name -> pack of every button-and-phone game."""

GAMES: tuple[str, ...] = (WANDERING_TOWERS, *PACKS)
"""Every game the host can choose, the default first."""


def pack_for(name: str) -> PackGame:
    """The pack called ``name``.

    :raises PackError: not one of :data:`PACKS` (names the field ``game``).
    """
    pack = PACKS.get(name)
    if pack is None:
        raise PackError("game", "setup", f"{str(name)[:24]!r} is not one of {', '.join(GAMES)}")
    return pack
