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
