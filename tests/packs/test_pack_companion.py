"""The whole companion on its simulated table (no camera picture): the host switches to a pack
game, the simulated Wandering Towers players stop, and a restart continues the pack game."""

from __future__ import annotations

import io
from pathlib import Path

from companion.sim.testing import sim_config, simulated_companion, table_of, wait_until
from companion.web.service import Audience


def test_a_pack_game_replaces_the_simulated_table_and_survives_a_restart(tmp_path: Path) -> None:
    cfg = sim_config(tmp_path / "data", simulation={"speed": 20.0})
    c = simulated_companion(cfg, without_picture="not needed here", web=False, out=io.StringIO())
    c.start()
    try:
        assert c.service.settings.game == "wandering-towers"
        c.service.submit(
            {
                "command": "setup",
                "game": "wizwar",
                "colours": ["red", "blue"],
                "pack": {"start_order": "seating"},
            },
            Audience.host(),
        )
        assert c.service.settings.game == "wizwar"
        assert table_of(c).cursor is None  # the simulated players cleared the table
        assert c.hardware is not None and c.hardware.machine.profile.name == "wizwar-d4"
        c.service.submit(
            {"command": "pack", "action": "damage", "args": {"wizard": "blue", "amount": 6}},
            Audience.player("red"),
        )
        table_of(c).check()  # the supervisor's round: the idle camera is no trouble
        assert c.heartbeats.part_ok("camera") and c.heartbeats.part_ok("detector")
        assert c.service.published is not None and c.service.published.seat == 0
    finally:
        c.stop()
    again = simulated_companion(
        cfg, without_picture="not needed here", web=False, out=io.StringIO()
    )
    again.start()
    try:
        wait_until(lambda: again.service.published is not None, 10, "the restored game")
        assert again.service.settings.game == "wizwar"
        pack = again.service.snapshot(Audience.public())["pack"]
        assert pack["hp"] == {"red": 15, "blue": 9}
        assert table_of(again).cursor is None  # no simulated Wandering Towers under it
    finally:
        again.stop()
