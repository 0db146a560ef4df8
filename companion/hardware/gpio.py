"""Buttons, LEDs and buzzer through gpiozero (2.0; lgpio pin factory on a Pi 5, ``MockFactory``
in tests and in the demo).

The gpiozero callback thread only enqueues: each button callback is
``on_edge(button, pressed)`` and must return at once (the hardware runner puts it on a queue).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from typing import Protocol

from companion.hardware.panel import BLINK_OFF_S, BLINK_ON_S, PanelState
from companion.hardware.pins import BUTTONS, PinMap


class _Device(Protocol):
    """A gpiozero device: holds its pin until closed."""

    def close(self) -> None: ...


class _Button(_Device, Protocol):
    when_pressed: Callable[[], None] | None
    when_released: Callable[[], None] | None


class _Output(_Device, Protocol):
    """A gpiozero LED or buzzer (``value`` 1/True = on)."""

    value: int | bool

    def blink(
        self,
        on_time: float = ...,
        off_time: float = ...,
        n: int | None = ...,
        background: bool = ...,
    ) -> None: ...

    def off(self) -> None: ...


class GpioPanel:
    """The physical panel for a :class:`~companion.hardware.pins.PinMap`.

    ``pin_factory``: a gpiozero pin factory (e.g. ``MockFactory()``) or None for gpiozero's
    default (lgpio on a Pi 5). Buttons: pull-up, pressed = low, no gpiozero bounce time
    (debounce happens in the dice machine). LEDs active high.

    :raises gpiozero.GPIOZeroError: a pin cannot be opened (in use, no such pin).
    """

    def __init__(
        self,
        pin_map: PinMap,
        on_edge: Callable[[str, bool], None],
        pin_factory: object = None,
        use_buzzer: bool = True,
    ) -> None:
        from gpiozero import LED, Button, Buzzer

        self.pin_map = pin_map
        self._devices: list[_Device] = []
        with contextlib.ExitStack() as on_failure:  # a pin that cannot be opened frees the rest
            on_failure.callback(self.close)
            self.buttons: dict[str, _Button] = {}
            for name in BUTTONS:
                b: _Button = Button(
                    getattr(pin_map, name), pull_up=True, bounce_time=None, pin_factory=pin_factory
                )
                self._devices.append(b)
                b.when_pressed = partial(on_edge, name, True)
                b.when_released = partial(on_edge, name, False)
                self.buttons[name] = b
            self.pips = [self._led(LED, p, pin_factory) for p in pin_map.pips]
            self.seats = [self._led(LED, p, pin_factory) for p in pin_map.seats]
            self.attention = self._led(LED, pin_map.attention, pin_factory)
            self.buzzer: _Output | None = None
            if use_buzzer and pin_map.buzzer is not None:
                self.buzzer = Buzzer(pin_map.buzzer, pin_factory=pin_factory)
                self._devices.append(self.buzzer)
            on_failure.pop_all()
        self._shown: PanelState | None = None

    def _led(self, cls: Callable[..., _Output], pin: int, factory: object) -> _Output:
        led = cls(pin, pin_factory=factory)
        self._devices.append(led)
        return led

    def show(self, state: PanelState) -> None:
        """Drive the LEDs to ``state`` (only the LEDs that change)."""
        old = self._shown
        for i, (led, on) in enumerate(zip(self.pips, state.pips, strict=True)):
            if old is None or old.pips[i] != on:
                led.value = on
        for i, led in enumerate(self.seats):
            on = i < len(state.seats) and state.current == i
            if led.value != on:
                led.value = on
        if old is None or old.attention != state.attention:
            if state.attention:
                self.attention.blink(on_time=BLINK_ON_S, off_time=BLINK_OFF_S, background=True)
            else:
                self.attention.off()
        self._shown = state

    def beep(self, n: int = 1) -> None:
        """Short beeps (0.06 s each) if a buzzer is fitted; returns at once."""
        if self.buzzer is not None:
            self.buzzer.blink(on_time=0.06, off_time=0.08, n=n, background=True)

    def close(self) -> None:
        """Release every pin (idempotent)."""
        for d in reversed(self._devices):
            d.close()
        self._devices.clear()
