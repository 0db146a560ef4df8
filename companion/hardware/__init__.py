"""Hardware: dice buttons, pip/seat/attention LEDs, optional buzzer and serial LED ring.

The service uses only this facade::

    hw = create_hardware(config, events_out=queue.put)
    hw.set_seats(["blue", "yellow", "red"]); hw.show_player(0); hw.set_attention(True)
    hw.select_dice(2)            # the phone picked a 2-dice card (optional: ROLL presses do it)
    hw.panel.snapshot()          # JSON for the page;  hw.panel.render_text() for a terminal
    hw.press("roll")             # the page's virtual ROLL button (tap); hw.press("roll", 0.9) keeps
    hw.close()

Events passed to ``events_out`` (from the hardware thread; it must return quickly):
``{"type": "dice", "rolls": [4, 2], "used": 2, "dice_allowed": 2}``, ``{"type": "done"}``,
``{"type": "undo"}``.

Config (a mapping, e.g. the parsed companion TOML):

* ``[pins]`` — pin map overrides, see ``raspberry-pi/pins.toml`` (:mod:`.pins`);
* ``[hardware]`` — ``backend = "auto" | "gpio" | "mock"`` (auto: real gpiozero pins when
  ``/proc/device-tree/model`` says "Raspberry Pi", otherwise gpiozero ``MockFactory``);
  ``seats = ["blue", …]``; ``profile = "wandering-towers"`` (:data:`.dice.PROFILES`);
  ``buzzer = true``; ``serial_port = "none" | "auto" | "/dev/ttyACM0" | URL`` (LED ring, see
  ``raspberry-pi/firmware/PROTOCOL.md``; default "none").

:raises ValueError: (from :func:`create_hardware`) bad config — the message names the key.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from companion.hardware.dice import (
    DEFAULT_TIMING,
    PROFILES,
    DiceMachine,
    DiceTiming,
    HardwareEvent,
    Rng,
)
from companion.hardware.panel import PanelJson, VirtualPanel, check_seats
from companion.hardware.pins import PinMap, PinMapError, load_pin_map
from companion.hardware.runner import LedOutput, PanelRunner

if TYPE_CHECKING:  # gpiozero and pyserial are loaded only when a panel is built
    from companion.hardware.gpio import GpioPanel
    from companion.hardware.serial_link import SerialPeripheral

__all__ = ["Hardware", "PinMapError", "create_hardware", "on_raspberry_pi"]

Backend = Literal["gpio", "mock"]
"""Real gpiozero pins (a Pi) or gpiozero's ``MockFactory``."""

DEVICE_TREE_MODEL = Path("/proc/device-tree/model")
HARDWARE_KEYS = {"backend", "seats", "profile", "buzzer", "serial_port"}


def on_raspberry_pi(model_file: Path = DEVICE_TREE_MODEL) -> bool:
    """True when ``model_file`` (the device-tree model) names a Raspberry Pi."""
    try:
        return "Raspberry Pi" in model_file.read_bytes().decode("ascii", "replace")
    except OSError:
        return False


class Hardware:
    """The panel facade (see the module doc). Thread-safe; a context manager."""

    def __init__(
        self,
        runner: PanelRunner,
        panel: VirtualPanel,
        backend: Backend,
        pin_map: PinMap,
        gpio: GpioPanel | None = None,
        serial: SerialPeripheral | None = None,
    ) -> None:
        self.runner = runner
        self.panel = panel
        self.backend = backend
        self.pin_map = pin_map
        self.gpio = gpio  # GpioPanel (real or mock pins)
        self.serial = serial  # SerialPeripheral or None

    @property
    def machine(self) -> DiceMachine:
        return self.runner.machine

    def set_seats(self, colours: list[str]) -> None:
        """Seat LED colours, seat 1 first (wizard colours).

        :raises ValueError: more than 6 seats or an unknown colour; nothing changes."""
        seats = check_seats(colours)
        current = self.panel.state.current
        self.runner.update_panel(
            seats=seats, current=current if current is not None and current < len(seats) else None
        )

    def show_player(self, seat: int | None) -> None:
        """Light the LED of ``seat`` (0-based index into the seats), or none.

        :raises ValueError: no such seat; nothing changes."""
        n = len(self.panel.state.seats)
        if seat is not None and not 0 <= seat < n:
            raise ValueError(f"seat {seat} does not exist (seats 0-{n - 1})")
        self.runner.update_panel(current=seat)

    def set_attention(self, on: bool) -> None:
        """Blink the "look at your phone" LED (a question waits on the page) or stop it."""
        self.runner.update_panel(attention=bool(on))

    def select_dice(self, dice_allowed: int) -> None:
        """The phone picked the die card (1, 2 or 3 dice).

        :raises companion.hardware.dice.DiceError: a roll is under way, or no such mode."""
        self.runner.call(lambda t: self.machine.select_mode(t, dice_allowed))

    def set_profile(self, name: str) -> None:
        """Use the dice of another game (a key of :data:`.dice.PROFILES`); no change when it
        is the one in use.

        :raises ValueError: unknown profile. :raises DiceError: a roll is under way."""
        profile = PROFILES.get(name)
        if profile is None:
            raise ValueError(f"dice profile {name!r} unknown; known: {sorted(PROFILES)}")
        if self.machine.profile != profile:
            self.runner.call(lambda t: self.machine.set_profile(t, profile))

    def keep(self) -> None:
        """Keep the face shown. :raises DiceError: nothing to keep."""
        self.runner.call(self.machine.keep)

    def reroll(self) -> None:
        """Reroll. :raises DiceError: nothing to reroll."""
        self.runner.call(self.machine.reroll)

    def cancel_dice(self) -> None:
        """Drop a picked mode before the first roll. :raises DiceError: a roll is under way."""
        self.runner.call(self.machine.cancel)

    def show_face(self, value: int | None) -> None:
        """Show a value on the pips (e.g. a roll typed on the phone), or blank them.

        :raises DiceError: a roll is under way. :raises ValueError: no pips for that value."""
        self.runner.call(lambda t: self.machine.show(t, value))

    def press(self, button: str, hold_s: float = 0.12) -> None:
        """Press a virtual button (see :meth:`VirtualPanel.press`)."""
        self.panel.press(button, hold_s)

    def snapshot(self) -> PanelJson:
        """The virtual panel's JSON (:meth:`VirtualPanel.snapshot`) plus ``backend`` and, with
        an LED ring configured, ``ring``: ``{"port", "link", "in_sync", "error"}``."""
        snap = self.panel.snapshot()
        snap["backend"] = self.backend
        if self.serial is not None:
            st = self.serial.status()
            snap["ring"] = {
                "port": st["port"],
                "link": st["link"],
                "in_sync": st["in_sync"],
                "error": st["error"],
            }
        return snap

    def render_text(self) -> str:
        return self.panel.render_text()

    def close(self) -> None:
        """Stop the thread and release pins and the serial port (idempotent)."""
        self.runner.stop()
        if self.serial is not None:
            self.serial.close()
            self.serial = None
        if self.gpio is not None:
            self.gpio.close()
            self.gpio = None

    def __enter__(self) -> Hardware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def create_hardware(
    config: Mapping[str, Mapping[str, object]] | None,
    events_out: Callable[[HardwareEvent], None],
    *,
    rng: Rng | None = None,
    clock: Callable[[], float] = time.monotonic,
    pin_factory: object = None,
    timing: DiceTiming = DEFAULT_TIMING,
    start: bool = True,
) -> Hardware:
    """Build the panel from ``config`` (see the module doc) and start its thread.

    ``config`` is the parsed TOML (``[pins]`` and ``[hardware]`` tables; values are checked
    here). ``events_out`` receives every :data:`~companion.hardware.dice.HardwareEvent`.

    ``rng`` defaults to ``random.SystemRandom()``; ``pin_factory`` overrides the choice of
    gpiozero factory (tests pass a ``MockFactory``).

    :raises PinMapError: bad ``[pins]`` (names the pin). :raises ValueError: bad
        ``[hardware]`` key or value. :raises gpiozero.GPIOZeroError: a pin cannot be opened.
    """
    config = config or {}
    pin_map = load_pin_map(config.get("pins"))
    hw_cfg = dict(config.get("hardware") or {})
    unknown = sorted(set(hw_cfg) - HARDWARE_KEYS)
    if unknown:
        raise ValueError(f"hardware: unknown key(s) {unknown}; known: {sorted(HARDWARE_KEYS)}")
    chosen = hw_cfg.get("backend", "auto")
    if chosen not in ("auto", "gpio", "mock"):
        raise ValueError(f"hardware.backend must be auto, gpio or mock, got {chosen!r}")
    real_pins = chosen == "gpio" or (chosen == "auto" and on_raspberry_pi())
    backend: Backend = "gpio" if real_pins else "mock"
    profile_name = hw_cfg.get("profile", "wandering-towers")
    if not isinstance(profile_name, str) or profile_name not in PROFILES:
        raise ValueError(f"hardware.profile {profile_name!r} unknown; known: {sorted(PROFILES)}")
    seats_in = hw_cfg.get("seats", [])
    if not isinstance(seats_in, list | tuple):
        raise ValueError(f"hardware.seats must be a list of colours, got {seats_in!r}")
    seats = check_seats(list(seats_in))
    if len(seats) > len(pin_map.seats):
        raise ValueError(f"hardware.seats: {len(seats)} seats but {len(pin_map.seats)} seat LEDs")
    serial_port = hw_cfg.get("serial_port", "none")
    if not isinstance(serial_port, str):
        raise ValueError("hardware.serial_port must be a string: none, auto, a path or a URL")

    machine = DiceMachine(PROFILES[profile_name], rng or random.SystemRandom(), timing)
    panel = VirtualPanel()
    panel.update(seats=seats)
    outputs: list[LedOutput] = []
    runner = PanelRunner(machine, panel, outputs, events_out, clock=clock)
    panel.inject = runner.inject

    if pin_factory is None and backend == "mock":
        from gpiozero.pins.mock import MockFactory

        pin_factory = MockFactory()
    from companion.hardware.gpio import GpioPanel

    gpio = GpioPanel(pin_map, runner.edge, pin_factory, use_buzzer=bool(hw_cfg.get("buzzer", True)))
    outputs.append(gpio)
    runner.on_result = lambda ev: gpio.beep(1)
    serial = None
    with contextlib.ExitStack() as on_failure:  # release the pins and the port if a step fails
        on_failure.callback(gpio.close)
        if serial_port != "none":
            from companion.hardware.serial_link import SerialPeripheral

            serial = SerialPeripheral(serial_port)
            on_failure.callback(serial.close)
            outputs.append(serial)
            serial.start()
        hw = Hardware(runner, panel, backend, pin_map, gpio=gpio, serial=serial)
        if start:
            runner.start()
        on_failure.pop_all()
    return hw
