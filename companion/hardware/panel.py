"""The LED panel's state and the virtual panel that stands in for it without a Pi.

:class:`PanelState` is what every LED output shows (gpiozero LEDs, the serial LED ring, the
phone page). :class:`VirtualPanel` holds the current one, renders it as JSON
(:meth:`VirtualPanel.snapshot`) or text (:meth:`VirtualPanel.render_text`), and "presses" its
virtual buttons for the page's dice controls.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NotRequired, TypedDict

from companion.hardware.dice import BLANK, Pattern
from companion.hardware.pins import BUTTONS, MAX_SEATS, PIPS

#: Seat colours (the wizard colours of R-COMP-1) as RGB for the LED ring and the page.
COLOURS: dict[str, tuple[int, int, int]] = {
    "blue": (0, 90, 255),
    "yellow": (255, 200, 0),
    "red": (230, 20, 20),
    "green": (0, 180, 40),
    "orange": (255, 100, 0),
    "purple": (150, 0, 200),
}
#: Attention LED blink: on and off times (s).
BLINK_ON_S = 0.5
BLINK_OFF_S = 0.5


@dataclass(frozen=True)
class PanelState:
    """Everything the LEDs show. ``pips``: 7 bools in PIPS order; ``seats``: colour name per
    seat LED (seat 1 first); ``current``: index into ``seats`` of the player whose turn it is,
    or None; ``attention``: the "look at your phone" LED blinks; ``dice``: the dice status of
    :meth:`~companion.hardware.dice.DiceMachine.status` (page only, not an LED)."""

    pips: Pattern = BLANK
    seats: tuple[str, ...] = ()
    current: int | None = None
    attention: bool = False
    dice: Mapping[str, object] = field(default_factory=dict, compare=False)

    def leds_equal(self, other: PanelState) -> bool:
        """True when the LEDs show the same (the dice status aside)."""
        return (self.pips, self.seats, self.current, self.attention) == (
            other.pips,
            other.seats,
            other.current,
            other.attention,
        )


def check_seats(seats: Sequence[object]) -> tuple[str, ...]:
    """Validate seat colours (R-COMP-1 wizard colours), seat 1 first.

    :raises ValueError: more than 6 seats, or a colour that is not a wizard colour."""
    if len(seats) > MAX_SEATS:
        raise ValueError(f"at most {MAX_SEATS} seats, got {len(seats)}")
    checked: list[str] = []
    for c in seats:
        if not isinstance(c, str) or c not in COLOURS:
            raise ValueError(f"unknown seat colour {c!r}; colours: {sorted(COLOURS)}")
        checked.append(c)
    return tuple(checked)


Injector = Callable[[str, bool, float], None]  # (button, pressed, delay_s)


class Unchanged(enum.Enum):
    """The value of a :meth:`VirtualPanel.update` field that stays as it is."""

    UNCHANGED = "unchanged"


UNCHANGED = Unchanged.UNCHANGED


class SeatJson(TypedDict):
    seat: int  # 1 = first seat
    colour: str
    rgb: list[int]
    on: bool


class AttentionJson(TypedDict):
    on: bool
    blink: list[float]  # [on, off] s


class RingJson(TypedDict):
    """The serial LED ring's link (part of ``SerialPeripheral.status``)."""

    port: str
    link: str  # companion.hardware.protocol.LinkState value
    in_sync: bool
    error: str  # "" = none


class PanelJson(TypedDict):
    """:meth:`VirtualPanel.snapshot` (``backend`` and ``ring`` added by the hardware facade)."""

    pips: dict[str, bool]
    face_pips: list[int]
    seats: list[SeatJson]
    current: int | None
    attention: AttentionJson
    dice: dict[str, object]
    backend: NotRequired[str]
    ring: NotRequired[RingJson]


class VirtualPanel:
    """The panel as an object: current :class:`PanelState` plus virtual buttons.

    Thread-safe. ``inject`` (set by the hardware facade) receives virtual button edges as
    ``(button, pressed, delay_s)``; without it pressing raises ``RuntimeError``.
    """

    def __init__(self, state: PanelState | None = None, inject: Injector | None = None) -> None:
        self._lock = threading.Lock()
        self._state = state or PanelState()
        self.inject = inject

    @property
    def state(self) -> PanelState:
        with self._lock:
            return self._state

    def set_state(self, state: PanelState) -> None:
        with self._lock:
            self._state = state

    def update(
        self,
        *,
        seats: tuple[str, ...] | None = None,
        current: int | None | Unchanged = UNCHANGED,
        attention: bool | None = None,
    ) -> PanelState:
        """Replace the seats, the current seat (None = no seat lit) or the attention LED of the
        state; what is not given stays. Returns the new state."""
        with self._lock:
            st = self._state
            self._state = replace(
                st,
                seats=st.seats if seats is None else seats,
                current=st.current if isinstance(current, Unchanged) else current,
                attention=st.attention if attention is None else attention,
            )
            return self._state

    # -- virtual buttons ---------------------------------------------------------------------
    def press(self, button: str, hold_s: float = 0.12) -> None:
        """Press ``button`` (``roll``, ``done``, ``undo``) for ``hold_s`` seconds (a tap by
        default; ``hold_s >= 0.8`` on ROLL = keep).

        :raises ValueError: unknown button or negative time. :raises RuntimeError: no facade."""
        if button not in BUTTONS:
            raise ValueError(f"unknown button {button!r}; buttons are {list(BUTTONS)}")
        if not 0 < hold_s <= 5:
            raise ValueError(f"hold_s must be in (0, 5] s, got {hold_s}")
        if self.inject is None:
            raise RuntimeError("virtual panel is not connected to a dice machine")
        self.inject(button, True, 0.0)
        self.inject(button, False, hold_s)

    def roll(self) -> None:
        """Tap ROLL."""
        self.press("roll")

    def keep(self) -> None:
        """Hold ROLL long enough to keep (0.9 s)."""
        self.press("roll", 0.9)

    def done(self) -> None:
        self.press("done")

    def undo(self) -> None:
        self.press("undo")

    # -- views -------------------------------------------------------------------------------
    def snapshot(self) -> PanelJson:
        """JSON-ready view, e.g.::

        {"pips": {"top_left": false, ..., "centre": true, ...}, "face_pips": [0,0,0,1,0,0,0],
         "seats": [{"seat": 1, "colour": "blue", "rgb": [0, 90, 255], "on": true}, ...],
         "current": 0, "attention": {"on": true, "blink": [0.5, 0.5]},
         "dice": {...DiceMachine.status()...}}
        """
        st = self.state
        return {
            "pips": dict(zip(PIPS, st.pips, strict=True)),
            "face_pips": [int(p) for p in st.pips],
            "seats": [
                {"seat": i + 1, "colour": c, "rgb": list(COLOURS[c]), "on": i == st.current}
                for i, c in enumerate(st.seats)
            ],
            "current": st.current,
            "attention": {"on": st.attention, "blink": [BLINK_ON_S, BLINK_OFF_S]},
            "dice": dict(st.dice),
        }

    def render_text(self) -> str:
        """The panel for a terminal: the die face (``●`` lit, ``·`` dark), seats (current one
        in brackets), attention LED and the dice status."""
        st = self.state
        lit = dict(zip(PIPS, st.pips, strict=True))

        def p(name: str) -> str:
            return "●" if lit[name] else "·"

        face = [
            f"  {p('top_left')}   {p('top_right')}",
            f"  {p('middle_left')} {p('centre')} {p('middle_right')}",
            f"  {p('bottom_left')}   {p('bottom_right')}",
        ]
        seats = " ".join(
            f"[{c.upper()}]" if i == st.current else f" {c} " for i, c in enumerate(st.seats)
        )
        dice = st.dice
        line = f"dice: {dice.get('state', '-')}"
        if dice.get("dice_allowed"):
            line += f", {dice['dice_allowed']} dice"
        if dice.get("rolls"):
            line += f", rolls {dice['rolls']}"
        if dice.get("can_keep"):
            line += " — tap ROLL to reroll, hold to keep"
        return "\n".join(
            [
                "+-----------+",
                *face,
                "+-----------+",
                f"seats: {seats or '(none)'}",
                f"attention: {'BLINKING — look at your phone' if st.attention else 'off'}",
                line,
            ]
        )
