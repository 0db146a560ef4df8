"""The TOML configuration is validated before anything runs; every error names its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.config import Config, ConfigError, load_config, with_overrides

REPO = Path(__file__).resolve().parents[2]


def test_the_documented_example_is_valid_and_states_every_default():
    config = load_config(REPO / "companion.example.toml")
    assert config == Config(source_path=str(REPO / "companion.example.toml"))


def test_an_empty_file_gives_the_defaults(tmp_path):
    (tmp_path / "c.toml").write_text("")
    config = load_config(tmp_path / "c.toml")
    assert config.web.port == 8080
    assert config.camera.source == "auto"
    assert config.game.players == 3


def test_the_detector_runs_in_its_own_process_unless_switched_off():
    assert load_config(text="").service.detector_process is True
    off = load_config(text="[service]\ndetector_process = false\n")
    assert off.service.detector_process is False
    with pytest.raises(ConfigError, match="service.detector_process"):
        load_config(text='[service]\ndetector_process = "yes"\n')


def test_a_partial_file_changes_only_its_keys():
    config = load_config(text='[web]\nport = 9000\n[game]\nplayers = 4\nmemory_aid = "off"\n')
    assert config.web.port == 9000
    assert config.web.host == "0.0.0.0"
    assert config.game.players == 4
    assert config.game.memory_aid == "off"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[web]\nport = "eighty"', "web.port"),
        ("[web]\nport = 70000", "web.port"),
        ("[web]\nhots = 1", "web.hots"),
        ("[camrea]\nsource = 1", "camrea"),
        ('[camera]\nsource = "webcam"', "camera.source"),
        ('[camera]\nsource = "usb:"', "camera.source"),
        ("[game]\nplayers = 7", "game.players"),
        ('[game]\nplayers = 2\ncolours = ["blue", "red"]', "game.colours"),
        ('[game]\nplayers = 3\ncolours = ["blue", "yellow"]', "game.colours"),
        ('[game]\nmodules = ["dragons"]', "game.modules"),
        ('[game]\nvariant = "expert"', "game.variant"),
        ("[game]\nplayers = 3\nteams = true", "game.teams"),
        ('[game]\nmemory_aid = "some"', "game.memory_aid"),
        ("[simulation]\nspeed = 0", "simulation.speed"),
        ("[simulation]\nhands = 1", "simulation.hands"),
        ('[hardware]\nbackend = "arduino"', "hardware.backend"),
        ('[data]\ndir = ""', "data.dir"),
        ("pins = 3", "pins"),
    ],
)
def test_a_bad_value_is_refused_naming_its_key(text, key):
    with pytest.raises(ConfigError) as info:
        load_config(text=text)
    assert str(info.value).startswith(key), str(info.value)


def test_toml_syntax_errors_and_missing_files_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(text="[web\nport=1")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.toml")


def test_the_environment_variable_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "c.toml").write_text("[web]\nport = 8123\n")
    monkeypatch.setenv("COMPANION_CONFIG", str(tmp_path / "c.toml"))
    assert load_config().web.port == 8123


def test_overrides_are_validated_again():
    config = with_overrides(Config(), web={"port": 0}, simulation={"speed": 50.0})
    assert config.web.port == 0
    assert config.simulation.speed == 50.0
    with pytest.raises(ConfigError, match="^simulation.speed"):
        with_overrides(config, simulation={"speed": -1.0})


def test_journal_path_is_inside_the_data_directory_unless_absolute(tmp_path):
    config = load_config(text=f'[data]\ndir = "{tmp_path}"\n')
    assert config.data.journal_path() == tmp_path / "journal.sqlite3"
    config = load_config(text=f'[data]\ndir = "{tmp_path}"\njournal = "/elsewhere/j.sqlite3"\n')
    assert config.data.journal_path() == Path("/elsewhere/j.sqlite3")


def test_the_spells_on_the_table_are_read_and_checked():
    config = load_config(
        text='[game]\nmodules = ["magic_tower"]\nspells = ["piggyback", "free_wizard"]'
    )
    assert config.game.spells == ("piggyback", "free_wizard")
    assert load_config(text="[game]\nplayers = 2").game.spells is None
    # leaving them out survives an override round trip (None is not a list)
    assert with_overrides(config, web={"port": 0}).game.spells == ("piggyback", "free_wizard")
    assert with_overrides(Config(), web={"port": 0}).game.spells is None
    for bad in ('["dragon_breath"]', '["piggyback", "piggyback"]', '"piggyback"'):
        with pytest.raises(ConfigError, match="^game.spells"):
            load_config(text=f"[game]\nspells = {bad}")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[game.options]\nno_such_rule = true", "game.options.no_such_rule: unknown option"),
        ('[game.options]\nswap_any_distance = "yes"', "game.options.swap_any_distance"),
        ("[game.options]\nsolo_card_limit = -5", "game.options.solo_card_limit"),
        ("[game.options]\nsolo_card_limit = 1000000", "game.options.solo_card_limit"),
        ("[game.options]\nteam_exchanges_per_turn = true", "game.options.team_exchanges"),
        ("[game.options]\ncolour_limits = 1", "game.options.colour_limits"),
        ('[web]\nhost = "not a host!!"', "web.host"),
        ('[web]\nhost = "-bad-.example"', "web.host"),
        ("[pins]\nroll = " + "[" * 12 + "]" * 12, "pins.roll"),
        ("a = " + "[" * 3000 + "]" * 3000, "config: nested too deeply"),
        ("[web]\nport = " + "9" * 5000, "config: a value cannot be read"),
        ("[web]\nport = " + "9" * 4000, "web.port"),
    ],
)
def test_gaps_are_refused_naming_the_key(text, key):
    with pytest.raises(ConfigError) as info:
        load_config(text=text)
    assert str(info.value).startswith(key), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1", "::", "::1", "table-pi.local", "pi"])
def test_hosts_that_bind_are_accepted(host):
    assert load_config(text=f'[web]\nhost = "{host}"').web.host == host


def test_options_of_the_rules_core_are_read(tmp_path):
    config = load_config(
        text="[game.options]\nswap_any_distance = false\nsolo_card_limit = 20\n"
        "team_exchanges_per_turn = 2"
    )
    assert config.game.options == {
        "swap_any_distance": False,
        "solo_card_limit": 20,
        "team_exchanges_per_turn": 2,
    }


def test_a_journal_path_that_cannot_be_opened_is_refused_before_anything_starts(tmp_path):
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder").mkdir()
    cases = {
        f'journal = "{tmp_path / "a-folder"}"': "data.journal: ",
        f'journal = "{tmp_path / "a-file" / "j.sqlite3"}"': "data.journal: ",
        f'dir = "{tmp_path / "a-file"}"': "data.dir: ",
        f'dir = "{tmp_path / "a-file" / "d"}"': "data.dir: ",
    }
    for line, key in cases.items():
        (tmp_path / "c.toml").write_text(f"[data]\n{line}\n")
        with pytest.raises(ConfigError) as info:
            load_config(tmp_path / "c.toml")
        assert str(info.value).startswith(key), (line, str(info.value))
    assert (tmp_path / "a-folder").is_dir()  # nothing was written over it
    with pytest.raises(ConfigError, match="^data.dir"):
        with_overrides(Config(), data={"dir": str(tmp_path / "a-file")})
    (tmp_path / "c.toml").write_text(f'[data]\ndir = "{tmp_path / "new" / "data"}"\n')
    assert load_config(tmp_path / "c.toml").data.dir == str(tmp_path / "new" / "data")
    assert not (tmp_path / "new").exists()  # checked, not created
