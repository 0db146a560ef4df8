"""The dice button as a pure state machine: debounce, tap/hold, mode selection, rolls, pips.

No clock and no global random: every input carries its time ``t`` (seconds, any monotonic
origin), the caller calls :meth:`DiceMachine.tick` at :meth:`DiceMachine.next_deadline`, and the
random source is injected (``random.SystemRandom()`` in production, a seeded ``random.Random``
in tests). Nothing here imports gpiozero.

How a player uses the ROLL button (Wandering Towers, R-CARD-4):

* **Choose the die card**: press ROLL once, twice or three times quickly for a card with one,
  two or three dice. Each further press must start within ``select_window_s`` (0.45 s) of the
  previous release being recognised (``release_s`` = 25 ms after the contacts stopped
  bouncing); the first roll starts ``select_window_s`` after the last release. While
  counting, the middle row of pips shows the count (1, 2 or 3 pips from the left). The phone
  can pick the mode instead (:meth:`DiceMachine.select_mode`); then the next press rolls at
  once.
* **Roll**: the pips run a short chase (``roll_anim_s``) and then show the face.
* **Reroll or keep** (2 and 3 dice only, while rolls are left): tap ROLL (< ``hold_s`` = 0.8 s)
  to reroll — the reroll replaces the value, results are never added — or hold ROLL for 0.8 s
  to keep the face shown. While the button is down the pips go dark; they light the kept face
  when the hold is recognised. The last allowed roll is final (1 die: the only roll; 2 dice: the
  second; 3 dice: the third). DONE while a die rolls or waits for reroll-or-keep uses that
  value; DONE or UNDO while the die card is only being picked (presses counted, or a mode
  chosen on the phone and not yet rolled) drops the pick — UNDO then goes no further.
* Result: ``{"type": "dice", "rolls": [...], "used": n, "dice_allowed": k}``; then DONE gives
  ``{"type": "done"}`` and UNDO ``{"type": "undo"}``.

Debounce (:class:`Debouncer`) acts on the leading edge (a press shows on the pips at once) and
refuses to see a release until the line has been released without interruption for
``release_s``; chatter inside a press is absorbed once the line has stayed pressed for
``settle_s``. Tap versus hold is measured from the first contact to the first break of the
final release burst, so bounce at either end does not change the verdict. A contact that is
never pressed ``min_press_s`` (5 ms) in total is a spike, not a press: what its first edge
started on the pips is taken back, and DONE/UNDO only act on confirmed presses.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NotRequired, Protocol, TypedDict

from companion.hardware.pins import PIPS

Pattern = tuple[bool, ...]  # one bool per pip, in PIPS order


def pattern(*names: str) -> Pattern:
    """Pip pattern lighting ``names`` (members of :data:`~companion.hardware.pins.PIPS`).

    :raises ValueError: unknown pip name.
    """
    for n in names:
        if n not in PIPS:
            raise ValueError(f"unknown pip {n!r}; pips are {PIPS}")
    return tuple(p in names for p in PIPS)


BLANK: Pattern = pattern()
_CORNERS = ("top_left", "top_right", "bottom_left", "bottom_right")
#: The usual die faces on seven pips.
FACES: dict[int, Pattern] = {
    1: pattern("centre"),
    2: pattern("top_right", "bottom_left"),
    3: pattern("top_right", "centre", "bottom_left"),
    4: pattern(*_CORNERS),
    5: pattern(*_CORNERS, "centre"),
    6: pattern(*_CORNERS, "middle_left", "middle_right"),
}
#: Mode selection: 1, 2 or 3 pips of the middle row from the left (never a die face).
COUNT_PATTERNS: dict[int, Pattern] = {
    1: pattern("middle_left"),
    2: pattern("middle_left", "centre"),
    3: pattern("middle_left", "centre", "middle_right"),
}
#: Rolling animation: one pip chasing clockwise round the edge (never a die face).
ROLL_FRAMES: tuple[Pattern, ...] = tuple(
    pattern(n)
    for n in ("top_left", "top_right", "middle_right", "bottom_right", "bottom_left", "middle_left")
)


class Rng(Protocol):
    """What the machine needs of a random source (``random.Random`` / ``SystemRandom``)."""

    def choice(self, seq: Sequence[int], /) -> int: ...


@dataclass(frozen=True)
class DiceProfile:
    """What a game's dice are.

    * ``faces``: the faces of one die (``(1, …, 6)`` for a d6, ``(1, 2, 3, 4)`` for a d4);
    * ``dice``: dice thrown together in one roll (their faces are summed);
    * ``modes``: allowed numbers of rolls per card; the reroll policy is the game's R-CARD-4
      one: a reroll replaces the previous result, the last allowed roll is final;
    * ``lookup``: optional table total -> used value (e.g. 2d6 -> number of armies);
    * ``display``: used value -> pip pattern (defaults to the usual die faces).

    :raises ValueError: (at construction) a reachable used value has no pip pattern, or a mode
        is not a positive count.
    """

    name: str
    faces: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    dice: int = 1
    modes: tuple[int, ...] = (1,)
    lookup: Mapping[int, int] | None = None
    display: Mapping[int, Pattern] = field(default_factory=lambda: dict(FACES))
    source: str = ""

    def __post_init__(self) -> None:
        if not self.faces or self.dice < 1:
            raise ValueError(f"profile {self.name}: needs faces and at least one die")
        if not self.modes or min(self.modes) < 1 or max(self.modes) > 3:
            raise ValueError(f"profile {self.name}: modes must be roll counts 1-3")
        for total in self.totals():
            if self.used(total) not in self.display:
                raise ValueError(f"profile {self.name}: value {self.used(total)} has no pips")

    def totals(self) -> list[int]:
        """Every total one roll can give."""
        sums = {0}
        for _ in range(self.dice):
            sums = {s + f for s in sums for f in self.faces}
        return sorted(sums)

    def used(self, total: int) -> int:
        """The value the game uses for a roll total (lookup table or the total itself).

        :raises KeyError: the total is not in the lookup table."""
        return self.lookup[total] if self.lookup is not None else total

    def throw(self, rng: Rng) -> tuple[int, ...]:
        """One roll: a face per die, each chosen uniformly by ``rng``."""
        return tuple(rng.choice(self.faces) for _ in range(self.dice))


#: Wandering Towers: one d6; die cards show 1, 2 or 3 dice = allowed rolls (R-CARD-4, S0).
WANDERING_TOWERS = DiceProfile(
    name="wandering-towers", modes=(1, 2, 3), source="R-CARD-4 (seed S0)"
)
#: 攻城奇策: 2d6, the sum looked up as the number of armies that move (G2-DICE-1, seed S2).
SIEGE_2D6 = DiceProfile(
    name="siege-2d6",
    dice=2,
    lookup={2: 1, 3: 1, 4: 4, 5: 2, 6: 3, 7: 2, 8: 3, 9: 3, 10: 4, 11: 1, 12: 2},
    source="G2-DICE-1 (seed S2)",
)
#: Wiz-War: a d4 for random directions (G4-DICE-1, seed S4).
WIZWAR_D4 = DiceProfile(name="wizwar-d4", faces=(1, 2, 3, 4), source="G4-DICE-1 (seed S4)")
PROFILES: dict[str, DiceProfile] = {p.name: p for p in (WANDERING_TOWERS, SIEGE_2D6, WIZWAR_D4)}


@dataclass(frozen=True)
class DiceTiming:
    """Times in seconds. ``release_s``: a release counts after the line stayed released this
    long; ``settle_s``: chatter inside a press ends after the line stayed pressed this long;
    ``min_press_s``: pressed time (in total) that makes a contact a press, not a spike;
    ``hold_s``: a press this long is a hold (keep); ``select_window_s``: gap allowed between
    mode-selection presses; ``roll_anim_s`` / ``frame_s``: rolling animation length and frame."""

    release_s: float = 0.025
    settle_s: float = 0.025
    min_press_s: float = 0.005
    hold_s: float = 0.8
    select_window_s: float = 0.45
    roll_anim_s: float = 0.6
    frame_s: float = 0.06


DEFAULT_TIMING = DiceTiming()


ButtonEventKind = Literal["down", "press", "hold", "up", "glitch"]


@dataclass(frozen=True)
class ButtonEvent:
    """A debounced button event. ``kind``: ``down`` (first contact), ``press`` (confirmed:
    pressed ``min_press_s`` in total), ``hold`` (still down ``hold_s`` after contact), ``up``
    (``duration`` = first contact to final release, s) or ``glitch`` (ended unconfirmed)."""

    kind: ButtonEventKind
    t: float
    duration: float = 0.0


class Debouncer:
    """Debounce one button from raw edges ``(t, pressed)``.

    Events (:class:`ButtonEvent`), in time order:

    * ``down`` at the first contact edge — no added latency, for immediate feedback;
    * ``press`` once the line has been pressed for ``min_press_s`` in total since that contact
      (5 ms; an integrator, so chatter only delays it): the press is real;
    * ``hold`` at ``t_down + hold_s`` when the line is down and not chattering then, otherwise
      as soon as the chatter settles pressed;
    * ``up`` after an uninterrupted release of ``release_s``, dated at the first break of that
      final release burst (``duration`` = first contact to that break), or ``glitch`` instead
      of ``press``/``up`` when the line was never pressed ``min_press_s`` in total (a spike
      picked up by a long lead).
    """

    def __init__(self, timing: DiceTiming = DEFAULT_TIMING) -> None:
        self.timing = timing
        self.level = False  # raw line, True = pressed
        self.down = False  # debounced
        self.t_down = 0.0
        self.last_edge = float("-inf")
        self.first_break: float | None = None  # start of unresolved chatter while down
        self.held = False
        self.confirmed = False
        self.pressed_total = 0.0  # s pressed since t_down, up to the last release edge

    def _due(self) -> list[tuple[float, str]]:
        due: list[tuple[float, str]] = []
        if not self.down:
            return due
        if self.first_break is not None:
            wait = self.timing.settle_s if self.level else self.timing.release_s
            due.append((self.last_edge + wait, "resolve"))
        if not self.confirmed and self.level:
            due.append((self.last_edge + self.timing.min_press_s - self.pressed_total, "press"))
        if not self.held and self.first_break is None:
            due.append((self.t_down + self.timing.hold_s, "hold"))
        return due

    def next_deadline(self) -> float | None:
        """When :meth:`tick` must next be called (s), or None."""
        due = self._due()
        return min(d[0] for d in due) if due else None

    def tick(self, t: float) -> list[ButtonEvent]:
        """Advance to time ``t``; returns the events that became certain, oldest first."""
        out: list[ButtonEvent] = []
        while True:
            due = [d for d in self._due() if d[0] <= t]
            if not due:
                return out
            when, what = min(due)
            if what == "press":
                self.confirmed = True
                out.append(ButtonEvent("press", when))
            elif what == "hold":
                self.held = True
                out.append(ButtonEvent("hold", when))
            elif self.level:  # chatter settled pressed
                self.first_break = None
                if not self.held and when >= self.t_down + self.timing.hold_s:
                    self.held = True
                    out.append(ButtonEvent("hold", when))
            else:  # released for good
                assert self.first_break is not None
                kind: ButtonEventKind = "up" if self.confirmed else "glitch"
                out.append(ButtonEvent(kind, self.first_break, self.first_break - self.t_down))
                self.down = False
                self.first_break = None

    def edge(self, t: float, pressed: bool) -> list[ButtonEvent]:
        """A raw edge at ``t`` (True = pressed). Repeated levels are ignored."""
        out = self.tick(t)
        if pressed == self.level:
            return out
        if not pressed and self.down:
            self.pressed_total += t - self.last_edge
        self.level = pressed
        self.last_edge = t
        if pressed and not self.down:
            self.down, self.t_down, self.first_break = True, t, None
            self.held = self.confirmed = False
            self.pressed_total = 0.0
            out.append(ButtonEvent("down", t))
        elif not pressed and self.down and self.first_break is None:
            self.first_break = t
        return out


class DiceState(enum.Enum):
    IDLE = "idle"  # no roll under way (the last face may still be shown)
    SELECTING = "selecting"  # counting ROLL presses to pick the mode
    ROLLING = "rolling"  # animation running, the value is already drawn
    CHOOSING = "choosing"  # a face is shown; tap = reroll, hold = keep


class DiceResult(TypedDict):
    """A finished roll: every roll of the card, the value used (R-CARD-4), the dice allowed;
    ``dice`` (each roll's faces) with more than one die, ``profile`` for another game's."""

    type: Literal["dice"]
    rolls: list[int]
    used: int
    dice_allowed: int
    dice: NotRequired[list[list[int]]]
    profile: NotRequired[str]


class ButtonAction(TypedDict):
    """DONE (the turn ends) or UNDO (take back the last change in the game)."""

    type: Literal["done", "undo"]


HardwareEvent = DiceResult | ButtonAction
"""What the panel tells the service (from the hardware thread)."""


class DiceStatus(TypedDict):
    """:meth:`DiceMachine.status`: the dice part of the page's panel."""

    state: Literal["idle", "selecting", "rolling", "choosing"]
    profile: str
    dice_allowed: int | None
    rolls: list[int]
    can_keep: bool
    selecting: int
    last: DiceResult | None


class DiceError(ValueError):
    """A dice command that does not fit the current state; nothing was changed."""


class DiceMachine:
    """ROLL/DONE/UNDO buttons + pips for one :class:`DiceProfile` (see the module doc).

    Inputs: :meth:`edge` (raw button edges), :meth:`tick`, :meth:`select_mode`, :meth:`keep`,
    :meth:`reroll`, :meth:`cancel`. Each returns the events (dicts) it produced. Outputs:
    :attr:`pips` (pattern to show now), :meth:`status` (JSON-ready for the page).
    """

    def __init__(
        self,
        profile: DiceProfile = WANDERING_TOWERS,
        rng: Rng | None = None,
        timing: DiceTiming = DEFAULT_TIMING,
    ) -> None:
        if rng is None:
            raise ValueError("DiceMachine needs an injected rng (random.SystemRandom() in use)")
        self.profile = profile
        self.rng = rng
        self.timing = timing
        self.buttons = {b: Debouncer(timing) for b in ("roll", "done", "undo")}
        self.state = DiceState.IDLE
        self.preset: int | None = None  # mode picked on the phone
        self.mode: int | None = None
        self.count = 0
        self.last_up = 0.0
        self.rolls: list[int] = []
        self.dice_faces: list[tuple[int, ...]] = []
        self.anim_start = 0.0
        self.press_active = False  # ROLL went down in CHOOSING and is not yet consumed
        self.ignore_press = False  # ROLL went down while rolling: ignore its up/hold
        self.face: Pattern = BLANK
        self.now = 0.0
        self.last_result: DiceResult | None = None
        self._before_down: dict[str, object] | None = None  # undo of an unconfirmed ROLL contact

    # -- outputs ---------------------------------------------------------------------------
    @property
    def pips(self) -> Pattern:
        """The pip pattern to show at the last time given."""
        if self.state is DiceState.ROLLING:
            n = int(max(0.0, self.now - self.anim_start) / self.timing.frame_s + 1e-9)
            return ROLL_FRAMES[n % len(ROLL_FRAMES)]
        if self.state is DiceState.SELECTING:
            return COUNT_PATTERNS[self.count]
        if self.state is DiceState.CHOOSING and self.press_active:
            return BLANK
        if self.state is DiceState.IDLE and self.preset is not None and not self.rolls:
            return COUNT_PATTERNS[self.preset]
        return self.face

    def status(self) -> DiceStatus:
        """JSON-ready: ``state``, ``profile``, ``dice_allowed`` (None until chosen), ``rolls``
        so far, ``can_keep``, ``selecting`` (presses counted), ``last`` (last result event)."""
        allowed = self.mode if self.mode is not None else self.preset
        return {
            "state": self.state.value,
            "profile": self.profile.name,
            "dice_allowed": allowed,
            "rolls": list(self.rolls),
            "can_keep": self.state is DiceState.CHOOSING,
            "selecting": self.count if self.state is DiceState.SELECTING else 0,
            "last": self.last_result,
        }

    def can_choose(self) -> bool:
        """True while a face waits for reroll-or-keep."""
        return self.state is DiceState.CHOOSING

    def next_deadline(self) -> float | None:
        """Absolute time (s) at which :meth:`tick` must run next, or None."""
        times = [d for b in self.buttons.values() if (d := b.next_deadline()) is not None]
        if self.state is DiceState.SELECTING and not self.buttons["roll"].down:
            times.append(self.last_up + self.timing.select_window_s)
        if self.state is DiceState.ROLLING:
            end = self.anim_start + self.timing.roll_anim_s
            k = int((self.now - self.anim_start) / self.timing.frame_s + 1e-9) + 1
            frame = self.anim_start + self.timing.frame_s * k
            while frame <= self.now:  # float rounding at a frame boundary
                frame += self.timing.frame_s
            times.append(min(end, frame))
        return min(times) if times else None

    # -- inputs ----------------------------------------------------------------------------
    def edge(self, t: float, button: str, pressed: bool) -> list[HardwareEvent]:
        """A raw edge of ``button`` (``roll``, ``done``, ``undo``) at ``t`` s.

        :raises ValueError: unknown button."""
        if button not in self.buttons:
            raise ValueError(f"unknown button {button!r}; buttons are {sorted(self.buttons)}")
        out = self.tick(t)
        self.now = max(self.now, t)
        for ev in self.buttons[button].edge(t, pressed):
            out += self._button(button, ev)
        return out

    def tick(self, t: float) -> list[HardwareEvent]:
        """Advance to ``t`` s: debounce timers, selection window, animation end."""
        out: list[HardwareEvent] = []
        while True:
            # the earliest pending internal event up to t, in time order: (time, order, what)
            cands: list[tuple[float, int, str]] = []
            for i, (name, deb) in enumerate(self.buttons.items()):
                d = deb.next_deadline()
                if d is not None and d <= t:
                    cands.append((d, i, name))
            if self.state is DiceState.SELECTING and not self.buttons["roll"].down:
                d = self.last_up + self.timing.select_window_s
                if d <= t:
                    cands.append((d, 10, "window"))
            if self.state is DiceState.ROLLING:
                d = self.anim_start + self.timing.roll_anim_s
                if d <= t:
                    cands.append((d, 11, "animation"))
            if not cands:
                break
            when, _, what = min(cands)
            self.now = max(self.now, when)
            if what == "window":
                out += self._start_sequence(when, self.count)
            elif what == "animation":
                out += self._anim_done(when)
            else:
                out += self._deb_tick(what, self.buttons[what], when)
        self.now = max(self.now, t)
        return out

    def select_mode(self, t: float, dice_allowed: int) -> list[HardwareEvent]:
        """Pick the die card from the phone: ``dice_allowed`` = 1, 2 or 3 rolls.

        :raises DiceError: a roll is under way, or the profile has no such mode."""
        out = self.tick(t)
        if dice_allowed not in self.profile.modes:
            raise DiceError(
                f"{self.profile.name}: {dice_allowed} dice is not a mode "
                f"(modes: {list(self.profile.modes)})"
            )
        if self.state in (DiceState.ROLLING, DiceState.CHOOSING):
            raise DiceError("a roll is under way: keep or reroll it first")
        self._before_down = None  # a command settles the state
        self.state = DiceState.IDLE
        self.count = 0
        self.preset = dice_allowed
        self.rolls = []
        return out

    def set_profile(self, t: float, profile: DiceProfile) -> list[HardwareEvent]:
        """Change the game's dice (another game was set up): the pips go dark and a picked
        mode is dropped.

        :raises DiceError: a roll is under way (its result belongs to the old game)."""
        out = self.tick(t)
        if self.state in (DiceState.ROLLING, DiceState.CHOOSING):
            raise DiceError("a roll is under way: keep it before changing the game")
        self._before_down = None  # a command settles the state
        self.profile = profile
        self.state, self.preset, self.mode, self.count = DiceState.IDLE, None, None, 0
        self.rolls, self.dice_faces, self.face = [], [], BLANK
        self.last_result = None
        return out

    def cancel(self, t: float) -> list[HardwareEvent]:
        """Forget a mode picked (by presses or phone) before the first roll.

        :raises DiceError: a roll is under way (its result belongs to the game)."""
        out = self.tick(t)
        if self.state in (DiceState.ROLLING, DiceState.CHOOSING):
            raise DiceError("a roll is under way and cannot be cancelled")
        self._before_down = None  # a command settles the state
        self.state, self.preset, self.count = DiceState.IDLE, None, 0
        return out

    def keep(self, t: float) -> list[HardwareEvent]:
        """Keep the face shown (the phone's "keep").

        :raises DiceError: no face is waiting for reroll-or-keep."""
        out = self.tick(t)
        if self.state is not DiceState.CHOOSING:
            raise DiceError("nothing to keep: no roll is waiting for reroll or keep")
        self._before_down = None  # a command settles the state
        self.press_active = False
        return out + self._finish()

    def reroll(self, t: float) -> list[HardwareEvent]:
        """Reroll (the phone's "reroll").

        :raises DiceError: no face is waiting for reroll-or-keep."""
        out = self.tick(t)
        if self.state is not DiceState.CHOOSING:
            raise DiceError("nothing to reroll: no roll is waiting for reroll or keep")
        self._before_down = None  # a command settles the state
        self.press_active = False
        self._roll(t)
        return out

    def show(self, t: float, value: int | None) -> list[HardwareEvent]:
        """Show ``value`` on the pips while no roll is under way (None = blank).

        :raises DiceError: a roll is under way. :raises ValueError: no pips for ``value``."""
        out = self.tick(t)
        if self.state is not DiceState.IDLE:
            raise DiceError("a roll is under way; the pips show it")
        if value is not None and value not in self.profile.display:
            raise ValueError(f"no pip pattern for {value!r}")
        self._before_down = None  # a command settles the state
        self.face = BLANK if value is None else self.profile.display[value]
        self.preset, self.rolls = None, []
        return out

    # -- internals -------------------------------------------------------------------------
    def _deb_tick(self, name: str, deb: Debouncer, t: float) -> list[HardwareEvent]:
        out: list[HardwareEvent] = []
        for ev in deb.tick(t):
            out += self._button(name, ev)
        return out

    def _button(self, name: str, ev: ButtonEvent) -> list[HardwareEvent]:
        if name == "roll":
            return self._roll_button(ev)
        if ev.kind != "press":  # DONE and UNDO act once the press is confirmed
            return []
        self._before_down = None
        if name == "done":
            out: list[HardwareEvent] = []
            if self.state in (DiceState.ROLLING, DiceState.CHOOSING):
                out = self._finish()  # the value drawn or shown is the one used
            else:
                self._cancel_selection()  # the turn ends: a half-picked die card is dropped
            self.press_active = False
            return [*out, {"type": "done"}]
        # undo: first takes back a half-picked die card, then goes to the game
        return [] if self._cancel_selection() else [{"type": "undo"}]

    def _cancel_selection(self) -> bool:
        if self.state is DiceState.SELECTING or (
            self.state is DiceState.IDLE and self.preset is not None
        ):
            self.state, self.preset, self.count = DiceState.IDLE, None, 0
            return True
        return False

    _SAVED = (
        "state", "preset", "mode", "count", "last_up", "rolls", "dice_faces", "anim_start",
        "press_active", "ignore_press", "face",
    )  # fmt: skip

    def _roll_button(self, ev: ButtonEvent) -> list[HardwareEvent]:
        st = self.state
        if ev.kind == "press":
            self._before_down = None  # a real press: what its contact did stands
            return []
        if ev.kind == "glitch":
            before, self._before_down = self._before_down, None
            if before is not None:  # a spike, not a press: take back what its contact did
                for k, v in before.items():
                    setattr(self, k, v)
            return []
        if ev.kind == "down":
            saved: dict[str, object] = {}
            for k in self._SAVED:
                v = getattr(self, k)
                saved[k] = list(v) if isinstance(v, list) else v
            self._before_down = saved
            self.ignore_press = False
            if st is DiceState.IDLE:
                if self.preset is not None:
                    return self._start_sequence(ev.t, self.preset)
                self.state, self.count = DiceState.SELECTING, 1
                self.rolls = []
            elif st is DiceState.SELECTING:
                self.count = min(self.count + 1, max(self.profile.modes))
            elif st is DiceState.CHOOSING:
                self.press_active = True
            else:  # ROLLING: a press during the animation is ignored
                self.ignore_press = True
            return []
        if self.ignore_press:
            return []
        if ev.kind == "hold":
            if st is DiceState.CHOOSING and self.press_active:
                self.press_active = False
                return self._finish()
            return []
        # up
        if st is DiceState.SELECTING:
            self.last_up = max(ev.t, self.now)  # when the release became certain
        elif st is DiceState.CHOOSING and self.press_active:
            self.press_active = False
            self._roll(max(ev.t, self.now))  # animate from now even after a long chatter
        return []

    def _start_sequence(self, t: float, mode: int) -> list[HardwareEvent]:
        if mode not in self.profile.modes:  # e.g. two presses for a one-mode profile
            mode = min(self.profile.modes, key=lambda m: (abs(m - mode), m))
        self.mode, self.preset, self.count = mode, None, 0
        self.rolls, self.dice_faces = [], []
        self.last_result = None
        self._roll(t)
        return []

    def _roll(self, t: float) -> None:
        faces = self.profile.throw(self.rng)
        self.dice_faces.append(faces)
        self.rolls.append(sum(faces))
        self.state = DiceState.ROLLING
        self.anim_start = t

    def _anim_done(self, t: float) -> list[HardwareEvent]:
        total = self.rolls[-1]
        self.face = self.profile.display[self.profile.used(total)]
        assert self.mode is not None
        if len(self.rolls) >= self.mode:
            return self._finish()
        self.state = DiceState.CHOOSING
        return []

    def _finish(self) -> list[HardwareEvent]:
        assert self.mode is not None
        total = self.rolls[-1]
        self.face = self.profile.display[self.profile.used(total)]
        result: DiceResult = {
            "type": "dice",
            "rolls": list(self.rolls),
            "used": self.profile.used(total),
            "dice_allowed": self.mode,
        }
        if self.profile.dice > 1:
            result["dice"] = [list(f) for f in self.dice_faces]
        if self.profile.name != WANDERING_TOWERS.name:
            result["profile"] = self.profile.name
        self.state = DiceState.IDLE
        self.last_result = result
        self.mode = None
        self._before_down = None  # a result went out: nothing is taken back any more
        return [result]
