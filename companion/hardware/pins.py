"""The BCM pin map of the table panel: three buttons, seven pip LEDs, six seat LEDs, one
attention LED and an optional buzzer.

The default map lives in ``raspberry-pi/pins.toml`` (and, identically, in :data:`DEFAULT_PINS`
so an installed package needs no file). A companion config may carry the same keys as its
``[pins]`` table; any key given there overrides the default.

Wiring assumed by the defaults (see ``raspberry-pi/wiring.svg``): each button between its GPIO
and ground (internal pull-up, pressed = low); each LED from its GPIO through a 330 ohm resistor
to ground (active high); an active buzzer from its GPIO to ground.

Validation (:func:`load_pin_map`) refuses, naming the pin: a BCM number outside 0-27, a pin used
twice, the HAT ID EEPROM pins 0/1, the I2C pins 2/3, and the UART pins 14/15 while
``reserve_uart`` is true (the default: a serial console or a UART peripheral may use them).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

#: Pip LEDs of the die face, in this order everywhere (bit i of a pip mask = PIPS[i])::
#:
#:     top_left     .       top_right
#:     middle_left  centre  middle_right
#:     bottom_left  .       bottom_right
PIPS: tuple[str, ...] = (
    "top_left",
    "top_right",
    "middle_left",
    "centre",
    "middle_right",
    "bottom_left",
    "bottom_right",
)
BUTTONS: tuple[str, ...] = ("roll", "done", "undo")
MAX_SEATS = 6

#: BCM pins that are never available, with the reason shown in the error.
RESERVED: dict[int, str] = {
    0: "ID EEPROM (ID_SD) of HATs",
    1: "ID EEPROM (ID_SC) of HATs",
    2: "I2C SDA",
    3: "I2C SCL",
}
#: Reserved too while ``reserve_uart`` is true.
UART: dict[int, str] = {14: "UART TXD (serial console)", 15: "UART RXD (serial console)"}

#: BCM GPIO -> physical pin on the 40-pin header (Raspberry Pi B+ and later, incl. Pi 5).
BCM_TO_PHYSICAL: dict[int, int] = {
    2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18,
    10: 19, 9: 21, 25: 22, 11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32,
    13: 33, 19: 35, 16: 36, 26: 37, 20: 38, 21: 40,
}  # fmt: skip


class PinTable(TypedDict):
    """A whole ``[pins]`` table (BCM numbers): buttons, LEDs, buzzer (-1 / false = none)."""

    roll: int
    done: int
    undo: int
    attention: int
    buzzer: int | bool
    reserve_uart: bool
    pips: dict[str, int]  # pip name (PIPS) -> BCM
    seats: list[int]  # seat 1 first


DEFAULT_PINS: PinTable = {
    "roll": 17,
    "done": 27,
    "undo": 22,
    "attention": 4,
    "buzzer": 18,
    "reserve_uart": True,
    "pips": {
        "top_left": 5,
        "top_right": 6,
        "middle_left": 13,
        "centre": 19,
        "middle_right": 26,
        "bottom_left": 12,
        "bottom_right": 16,
    },
    "seats": [23, 24, 25, 8, 20, 21],
}


class PinMapError(ValueError):
    """A pin map that cannot be used; the message names the offending key and pin."""


@dataclass(frozen=True)
class PinMap:
    """A validated BCM pin map. ``buzzer`` is None when no buzzer is fitted; ``seats`` has one
    pin per seat LED (0-6 of them, seat 1 first)."""

    roll: int
    done: int
    undo: int
    attention: int
    pips: tuple[int, ...]
    seats: tuple[int, ...]
    buzzer: int | None = None
    reserve_uart: bool = True

    def assignments(self) -> list[tuple[str, int]]:
        """Every used pin as ``(role, bcm)``, roles named as config keys: ``roll``,
        ``pips.centre``, ``seats[0]`` …"""
        out: list[tuple[str, int]] = [(b, getattr(self, b)) for b in BUTTONS]
        out += [(f"pips.{name}", pin) for name, pin in zip(PIPS, self.pips, strict=True)]
        out += [(f"seats[{i}]", pin) for i, pin in enumerate(self.seats)]
        out.append(("attention", self.attention))
        if self.buzzer is not None:
            out.append(("buzzer", self.buzzer))
        return out


def _pin(role: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PinMapError(f"pins.{role}: expected a BCM number 0-27, got {value!r}")
    return value


def load_pin_map(table: Mapping[str, object] | None = None) -> PinMap:
    """Merge ``table`` (a ``[pins]`` table: keys as in ``raspberry-pi/pins.toml``) over
    :data:`DEFAULT_PINS` and validate it.

    ``pips`` may be given partly (a mapping of pip names); ``seats`` is a whole list;
    ``buzzer = -1`` or ``false`` means no buzzer.

    :raises PinMapError: unknown key, a pin that is not an int in 0-27, a reserved pin, a pin
        used twice — the message names the key(s) and the BCM number.
    """
    table = dict(table or {})
    known = set(DEFAULT_PINS)
    unknown = sorted(set(table) - known)
    if unknown:
        raise PinMapError(f"pins: unknown key(s) {', '.join(unknown)}; known: {sorted(known)}")
    pips_in = table.get("pips", {})
    if not isinstance(pips_in, Mapping):
        raise PinMapError("pins.pips: expected a table of pip name = BCM number")
    bad_pips = sorted(set(pips_in) - set(PIPS))
    if bad_pips:
        raise PinMapError(f"pins.pips: unknown pip(s) {', '.join(bad_pips)}; known: {PIPS}")
    pips = {**DEFAULT_PINS["pips"], **pips_in}
    seats_in = table.get("seats", DEFAULT_PINS["seats"])
    if not isinstance(seats_in, list | tuple) or len(seats_in) > MAX_SEATS:
        raise PinMapError(f"pins.seats: expected a list of at most {MAX_SEATS} BCM numbers")
    buzzer_in = table.get("buzzer", DEFAULT_PINS["buzzer"])
    buzzer = None if buzzer_in is False or buzzer_in == -1 or buzzer_in is None else buzzer_in
    reserve_uart = table.get("reserve_uart", DEFAULT_PINS["reserve_uart"])
    if not isinstance(reserve_uart, bool):
        raise PinMapError(f"pins.reserve_uart: expected true or false, got {reserve_uart!r}")
    pin_map = PinMap(
        roll=_pin("roll", table.get("roll", DEFAULT_PINS["roll"])),
        done=_pin("done", table.get("done", DEFAULT_PINS["done"])),
        undo=_pin("undo", table.get("undo", DEFAULT_PINS["undo"])),
        attention=_pin("attention", table.get("attention", DEFAULT_PINS["attention"])),
        pips=tuple(_pin(f"pips.{n}", pips[n]) for n in PIPS),
        seats=tuple(_pin(f"seats[{i}]", p) for i, p in enumerate(seats_in)),
        buzzer=None if buzzer is None else _pin("buzzer", buzzer),
        reserve_uart=reserve_uart,
    )
    validate(pin_map)
    return pin_map


def validate(pin_map: PinMap) -> None:
    """Check a :class:`PinMap`.

    :raises PinMapError: naming the first bad pin (role and BCM number).
    """
    used: dict[int, str] = {}
    for role, pin in pin_map.assignments():
        if not 0 <= pin <= 27:
            raise PinMapError(f"pins.{role} = {pin}: not a BCM GPIO of the header (0-27)")
        if pin in RESERVED:
            raise PinMapError(f"pins.{role} = {pin}: BCM {pin} is reserved ({RESERVED[pin]})")
        if pin_map.reserve_uart and pin in UART:
            raise PinMapError(
                f"pins.{role} = {pin}: BCM {pin} is reserved ({UART[pin]}); "
                "set pins.reserve_uart = false if the UART is not used"
            )
        if pin in used:
            raise PinMapError(f"pins.{role} = {pin}: BCM {pin} is already used by {used[pin]}")
        used[pin] = f"pins.{role}"


def read_pin_file(path: str | Path) -> PinMap:
    """Load a TOML file whose ``[pins]`` table is a pin map (like ``raspberry-pi/pins.toml``).

    :raises PinMapError: no ``[pins]`` table, or an invalid map.
    :raises OSError: the file cannot be read. :raises tomllib.TOMLDecodeError: bad TOML.
    """
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    table = doc.get("pins")
    if not isinstance(table, dict):
        raise PinMapError(f"{Path(path).name}: no [pins] table")
    return load_pin_map(table)
