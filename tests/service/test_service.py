"""The service: one queue in, journalled and published snapshots out; bad input changes nothing."""

from __future__ import annotations

import pytest

from companion.config import ConfigError, load_config
from companion.service.cli import run_main
from companion.service.game import GameSettings
from companion.service.record import hidden_positions, same_table
from companion.web.service import Audience, CommandError, TableService


def test_the_service_implements_the_web_contract(direct_companion):
    c = direct_companion()
    assert isinstance(c.service, TableService)
    snap = c.service.snapshot(Audience.public())
    assert snap["version"] == c.service.version
    assert snap["state"]["track"]["length"] == 16
    assert {"health", "question", "dice", "panel", "log", "phase"} <= set(snap)


def test_a_simulated_game_is_tracked_to_the_truth_including_every_hidden_wizard(
    finished_game,
):
    c = finished_game
    truth = c.table.game.state
    tracked = c.service.state
    assert truth.game.over and tracked.game.over
    assert same_table(tracked, truth)
    assert hidden_positions(tracked) == hidden_positions(truth)
    assert hidden_positions(truth), "the game should end with trapped wizards to check"


def test_public_and_host_views_hide_trapped_wizards_players_see_their_own(finished_game):
    c = finished_game
    trapped = hidden_positions(c.service.state)
    colours = {colour for colour, _, _ in trapped}
    assert colours
    for audience in (Audience.public(), Audience.host()):
        shown = c.service.snapshot(audience)["state"]["wizards"]
        for wid, pos in shown.items():
            assert pos == "castle" or pos["tier"] == len(
                c.service.snapshot(audience)["state"]["stacks"].get(str(pos["space"]), [])
            ), f"{audience} sees trapped {wid}"
    colour = sorted(colours)[0]
    mine = c.service.snapshot(Audience.player(colour))["state"]["wizards"]
    own_hidden = [w for w in mine if w.startswith(colour + "-")]
    assert len(own_hidden) >= sum(1 for col, _, _ in trapped if col == colour)


def test_commands_are_checked_before_anything_changes(finished_game):
    c = finished_game
    svc = c.service

    def game() -> dict[str, object]:
        # what a command could change; the camera line, health and LEDs go on by themselves
        snap = svc.snapshot(Audience.host())
        return {k: snap[k] for k in ("state", "log", "question", "reports", "dice", "phase")}

    before = game()
    bad = [
        ({"command": "fly"}, Audience.host(), 400),
        ({"command": "setup"}, Audience.public(), 403),
        ({"command": "setup", "players": 9}, Audience.host(), 400),
        ({"command": "setup", "players": 2, "colours": ["blue", "red"]}, Audience.host(), 400),
        ({"command": "undo"}, Audience.player("blue"), 403),
        ({"command": "answer", "question": "q99", "option": "0"}, Audience.host(), 409),
        ({"command": "correct_space", "space": 99}, Audience.host(), 400),
        ({"command": "dice_mode", "dice": 5}, Audience.host(), 400),
        ({"command": "setup", "modules": ["dragons"]}, Audience.host(), 400),
        ({"command": "setup", "options": {"no_such_rule": True}}, Audience.host(), 400),
    ]
    for cmd, audience, status in bad:
        with pytest.raises(CommandError) as info:
            svc.submit(cmd, audience)
        assert info.value.status == status, (cmd, info.value.message)
    assert game() == before


def test_the_host_sets_up_a_new_game_with_new_join_tokens(direct_companion):
    c = direct_companion(simulation={"speed": 1.0})
    old_tokens = dict(c.service.player_tokens())
    result = c.service.submit(
        {"command": "setup", "players": 4, "colours": ["green", "red", "blue", "yellow"]},
        Audience.host(),
    )
    assert result["ok"] is True
    tokens = c.service.player_tokens()
    assert list(tokens) == ["green", "red", "blue", "yellow"]
    assert not set(tokens.values()) & set(old_tokens.values())
    assert c.service.player_for_token(tokens["red"]) == "red"
    assert c.service.player_for_token("nope") is None
    state = c.service.state
    assert state.table.colours == ("green", "red", "blue", "yellow")
    assert not hidden_positions(state)
    # the simulated players cleared the table and play the new game
    assert c.table.game.initial_state.table.colours == ("green", "red", "blue", "yellow")


def test_the_host_sets_up_a_4_player_game_with_every_module_on_the_simulated_table(
    direct_companion,
):
    c = direct_companion(simulation={"speed": 1.0})
    modules = ["fountain", "web", "witch", "raven", "magic_tower"]
    assert c.service.submit(
        {"command": "setup", "players": 4, "modules": modules}, Audience.host()
    )["ok"]
    assert c.service.settings.players == 4 and list(c.service.settings.modules) == modules
    host = c.service.snapshot(Audience.host())
    assert host["host"]["settings"]["modules"] == modules
    assert len(c.service.state.table.colours) == 4
    # the simulated players set the expansion up: the witch and the raven are on the board
    state = c.table.game.initial_state
    assert state.modules is not None and state.modules.witch and state.modules.raven
    assert c.service.state.modules is not None


def test_the_tracker_knows_the_spells_laid_out_on_the_table(direct_companion):
    # with the magic tower the players draw the spells on display (R-MOD-MAGICTOWER-1): the
    # simulated players lay out a seeded draw, and the companion tracks with exactly those
    # (a Cast of a spell the tracker thinks is not on the table would never be explained)
    c = direct_companion(simulation={"speed": 1.0}, game={"modules": ["magic_tower"]})
    drawn = c.table.game.initial_state.table.spells
    assert len(drawn) == 5
    assert c.service.state.table.spells == drawn
    assert c.service.settings.spells == drawn
    # the host names the tiles on the table at setup; the tracker and the table use them
    chosen = ["piggyback", "free_wizard", "advance_tower", "swap_tower", "headwind_tower"]
    assert c.service.submit(
        {"command": "setup", "players": 3, "modules": ["magic_tower"], "spells": chosen},
        Audience.host(),
    )["ok"]
    assert c.service.state.table.spells == tuple(chosen)
    assert c.table.game.initial_state.table.spells == tuple(chosen)
    assert c.service.snapshot(Audience.host())["host"]["settings"]["spells"] == chosen
    # what the journal keeps for a restart reads back the same
    settings = c.service.settings
    assert GameSettings.from_json(settings.to_json()) == settings


def test_health_names_every_part(direct_companion):
    c = direct_companion()
    report = c.service.health()
    assert set(report["parts"]) == {"camera", "detector", "tracker", "hardware", "journal", "web"}
    # without the renderer the simulated camera gives no picture: reported, not hidden
    assert report["parts"]["detector"]["ok"] is False
    assert "renderer left out" in report["parts"]["detector"]["detail"]


def test_run_refuses_a_bad_config_naming_the_key(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[web]\nport = "eighty"\n')
    assert run_main(["--config", str(bad)]) == 2
    assert "web.port" in capsys.readouterr().err
    with pytest.raises(ConfigError):
        load_config(bad)


def test_calibration_commands_say_when_there_is_no_camera_frame(direct_companion):
    c = direct_companion()
    for name in ("calibrate_board", "calibrate_profile", "calibrate_reset"):
        with pytest.raises(CommandError) as info:
            c.service.submit({"command": name}, Audience.host())
        assert info.value.status == 409 and "camera" in info.value.message
    host = c.service.snapshot(Audience.host())["host"]
    assert host["calibration"]["mode"] == "simulated"
