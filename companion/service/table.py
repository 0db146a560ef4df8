"""What the service needs from a simulated table: the :class:`TableSimulation` protocol.

Without a camera the companion runs on a simulated table (seeded players, a rendered camera,
the panel's presses). The simulation lives outside the run-time packages (``companion.sim``):
the composition root (``companion.cli``) builds it and hands the service a factory, so the
service never imports it. The table drives the service through the companion's public methods
(``Companion.start_pipeline``, ``CompanionService.post_observation``, ``hardware_event``).
"""

from __future__ import annotations

from typing import Protocol

from companion.service.game import GameSettings


class TableSimulation(Protocol):
    """A simulated table for one companion (see the module doc)."""

    @property
    def table_settings(self) -> GameSettings:
        """The settings of the game laid out on the table (with the spells its players drew):
        what the companion is told at setup."""
        ...

    @property
    def finished(self) -> bool:
        """The game on the table is over and no further game follows (``--exit-when-over``)."""
        ...

    def prepare(self) -> None:
        """Lay out the game (resuming a saved one of the same settings)."""
        ...

    def start(self) -> None:
        """Start playing: frames and presses begin to reach the service."""
        ...

    def check(self) -> None:
        """Called every half second by the supervisor (the players look at their phones)."""
        ...

    def restart(self, settings: GameSettings) -> GameSettings:
        """The host set up a new game: clear the table and lay it out.

        :returns: the settings as laid out (with the drawn spells).
        """
        ...

    def stop(self) -> None:
        """Stop every thread and process of the table (idempotent)."""
        ...
