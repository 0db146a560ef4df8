"""Game drivers: what the service thread calls for each input of a game.

A driver keeps the game's tracked state and turns inputs (observations, dice, DONE, undo, host
and player commands) into log lines, with the journal written before anything is published.

* :class:`TrackedDriver` — the real thing: ``companion.tracking.tracker.Tracker`` plus the journal
  (``companion.journal``), restored from the journal at start.
* :class:`UntrackedDriver` — stands in while the tracker is not installed: it sets the game up
  and shows the setup position (or, on the simulated table, the simulator's own truth, clearly
  labelled), and says on every page which part is missing.

Both expose ``settings``, ``state``, ``question``, ``health_line``, ``phase`` and the methods
``observe(obs)``, ``dice(event)``, ``end_turn()``, ``undo()``, ``command(cmd, audience)``, each
returning log lines.
"""

from __future__ import annotations

from typing import Any

from companion.service.game import GameSettings
from companion.web.service import Audience, CommandError


def make_driver(service: Any, settings: GameSettings, restore: bool = True) -> Any:
    """The best driver the installed parts allow (see the module doc).

    :raises CommandError: the rules core is missing or refuses the settings.
    """
    parts = service.parts
    if parts.has("tracker", "Tracker"):
        from companion.service.tracked import TrackedDriver

        return TrackedDriver(service, settings, restore=restore)
    return UntrackedDriver(service, settings)


class UntrackedDriver:
    """The game without a tracker (see the module doc)."""

    def __init__(self, service: Any, settings: GameSettings) -> None:
        self.service = service
        self.parts = service.parts
        self.settings = settings
        rules = self.parts.get("rules")
        self._rules = rules
        self.state = rules.setup(settings.rules_config(self.parts), None)
        self.question: dict[str, Any] | None = None
        self.phase = "playing"
        self._missing = self.parts.missing_line("tracker")
        self.health_line = f"not tracking: {self._missing}"
        self.observations = 0
        self._following = False

    def observe(self, obs: Any) -> list[str]:
        self.observations += 1
        shown = "simulator's truth shown, not tracked" if self._following else "not tracking"
        self.health_line = f"{shown} ({self.observations} observations seen): {self._missing}"
        return []

    def follow_truth(self, state: Any) -> list[str]:
        """Show the simulator's own state (simulated table only, while no tracker exists)."""
        self.state = state
        self._following = True
        self.phase = "over" if state.game.over else "playing"
        self.health_line = f"simulator's truth shown, not tracked: {self._missing}"
        return []

    def dice(self, event: dict[str, Any]) -> list[str]:
        return [f"dice: {event.get('rolls')} (used {event.get('used')})"]

    def end_turn(self) -> list[str]:
        return ["DONE pressed"]

    def undo(self) -> list[str]:
        return []

    def command(self, cmd: dict[str, Any], audience: Audience) -> list[str]:
        name = cmd["command"]
        if name in ("report_spell", "report_page_card"):
            return [f"{audience} reported {name.removeprefix('report_').replace('_', ' ')}"]
        if name == "end_turn":
            return self.end_turn()
        raise CommandError(f"{name}: not possible without the tracker ({self._missing})", 409)
