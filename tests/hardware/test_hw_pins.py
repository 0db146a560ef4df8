"""The pin map: defaults, overrides, and bad maps refused naming the pin."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.hardware.pins import (
    BCM_TO_PHYSICAL,
    DEFAULT_PINS,
    PinMapError,
    load_pin_map,
    read_pin_file,
)

REPO = Path(__file__).resolve().parents[2]


def test_default_map_is_valid_and_uses_18_pins() -> None:
    pm = load_pin_map()
    assert len(pm.assignments()) == 18
    assert all(pin in BCM_TO_PHYSICAL for _, pin in pm.assignments())


def test_shipped_pins_toml_is_the_default() -> None:
    assert read_pin_file(REPO / "raspberry-pi" / "pins.toml") == load_pin_map(DEFAULT_PINS)


def test_override_one_pin_keeps_the_rest() -> None:
    pm = load_pin_map({"roll": 9, "pips": {"centre": 10}})
    assert pm.roll == 9 and pm.pips[3] == 10 and pm.done == DEFAULT_PINS["done"]


def test_no_buzzer() -> None:
    assert load_pin_map({"buzzer": -1}).buzzer is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"roll": 27}, r"pins.done = 27: BCM 27 is already used by pins.roll"),
        ({"pips": {"centre": 2}}, r"pins.pips.centre = 2: BCM 2 is reserved \(I2C SDA\)"),
        ({"attention": 0}, r"attention = 0: BCM 0 is reserved \(ID EEPROM"),
        ({"undo": 14}, r"undo = 14: BCM 14 is reserved \(UART TXD"),
        ({"done": 28}, r"done = 28: not a BCM GPIO of the header \(0-27\)"),
        ({"seats": [23, 23]}, r"seats\[1\] = 23: BCM 23 is already used by pins.seats\[0\]"),
        ({"roll": "GPIO17"}, r"pins.roll: expected a BCM number"),
        ({"rol": 5}, r"unknown key\(s\) rol"),
        ({"pips": {"middle": 5}}, r"unknown pip\(s\) middle"),
        ({"seats": list(range(4, 11))}, r"at most 6"),
    ],
)
def test_bad_maps_refused_naming_the_pin(table: dict[str, object], message: str) -> None:
    with pytest.raises(PinMapError, match=message):
        load_pin_map(table)


def test_uart_pins_allowed_when_not_reserved() -> None:
    assert load_pin_map({"undo": 14, "reserve_uart": False}).undo == 14


def test_file_without_pins_table(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text("[hardware]\nbackend = 'mock'\n")
    with pytest.raises(PinMapError, match="no \\[pins\\] table"):
        read_pin_file(f)
