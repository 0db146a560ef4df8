"""The service queue's items: one frozen dataclass per kind of input, handled by ``match``.

Game inputs (:data:`GameInput`: observations, dice, DONE, UNDO, commands) go to the game driver
(on the tracker's own thread, :mod:`companion.service.worker`, whose results come back as
:class:`TrackedInput`); the others report the camera's status or the LED panel, or
stop the loop. ``kind`` names each class in recordings (``inputs.jsonl``) and bench figures.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.rules import Observation
from companion.service.driver import DiceRoll, PackShown
from companion.tracking import TrackerUpdate
from companion.web.service import Audience, CommandError

CommandResult = dict[str, object]
"""What a command answers the page: ``{"ok": True, "version": 42, …}``."""


@dataclass(frozen=True)
class ObservationInput:
    """A still board the stability gate reported (a camera frame's reading)."""

    observation: Observation
    kind: ClassVar[str] = "observation"
    posted_at: float = field(default_factory=time.monotonic, compare=False)
    received: bool = field(default=False, compare=False)
    """Already journaled as handed to the tracker (a restart hands it on again)."""


@dataclass(frozen=True)
class CandidateInput:
    """A still board's early reading (the gate still waits): the tracker works it out ahead;
    never changes the game."""

    observation: Observation
    kind: ClassVar[str] = "candidate"
    posted_at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True)
class DiceInput:
    """A dice result from the panel (R-DICE-*)."""

    roll: DiceRoll
    kind: ClassVar[str] = "dice"
    posted_at: float = field(default_factory=time.monotonic, compare=False)
    received: bool = field(default=False, compare=False)
    """Already journaled as handed to the tracker (a restart hands it on again)."""


@dataclass(frozen=True)
class DoneInput:
    """DONE pressed on the panel; ``event`` is the panel's event (None from elsewhere)."""

    event: Mapping[str, object] | None = None
    kind: ClassVar[str] = "done"
    posted_at: float = field(default_factory=time.monotonic, compare=False)
    received: bool = field(default=False, compare=False)
    """Already journaled as handed to the tracker (a restart hands it on again)."""


@dataclass(frozen=True)
class UndoInput:
    """UNDO pressed on the panel; ``event`` is the panel's event (None from elsewhere)."""

    event: Mapping[str, object] | None = None
    kind: ClassVar[str] = "undo"
    posted_at: float = field(default_factory=time.monotonic, compare=False)
    received: bool = field(default=False, compare=False)
    """Already journaled as handed to the tracker (a restart hands it on again)."""


@dataclass(frozen=True)
class CommandInput:
    """A phone's command (``{"command": NAME, …}``, already checked against the audience's
    rights); its result or :class:`~companion.web.service.CommandError` goes to ``future``."""

    command: Mapping[str, object]
    audience: Audience
    future: Future[CommandResult] = field(compare=False)
    kind: ClassVar[str] = "command"
    posted_at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True)
class CameraStatusInput:
    """The camera's status changed (``"ok"``, ``"no signal"``, ``"error: …"``)."""

    text: str
    kind: ClassVar[str] = "camera"
    posted_at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True)
class NoteInput:
    """A line for the log and the journal from outside the game (e.g. what the colour profile
    learnt from a committed board, :mod:`companion.service.learning`)."""

    text: str
    kind: ClassVar[str] = "note"
    posted_at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True)
class PanelInput:
    """Any other panel event (the LED panel's snapshot is read when idle)."""

    event: Mapping[str, object]
    kind: ClassVar[str] = "panel"
    posted_at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True)
class StopInput:
    """Ends the service loop."""

    kind: ClassVar[str] = "stop"
    posted_at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True)
class Outcome:
    """What one input did, as the recorder keeps it: ``update`` the tracker's (None when it
    caused none); ``record`` what a driver that draws chance itself (a game pack,
    :class:`~companion.service.driver.RecordedGame`) carried out, chance drawn (None when it
    changed nothing); ``shown`` what that game's pages showed right after it."""

    update: TrackerUpdate | None = None
    record: Mapping[str, Any] | None = None
    shown: PackShown | None = None


@dataclass(frozen=True)
class TrackedInput:
    """The driver's result of one game input, back on the service queue (worker -> service).

    :param item: the input as it came.
    :param generation: the game it was handled for (a result of a replaced game is dropped).
    :param lines: the log lines it produced (None when it was refused).
    :param outcome: what it did, for the recorder (the tracker's update, a pack's record).
    :param error: why a phone command was refused (its page gets it), else None.
    """

    item: GameInput
    generation: int
    lines: list[str] | None
    outcome: Outcome
    error: CommandError | None = None
    kind: ClassVar[str] = "tracked"
    posted_at: float = field(default_factory=time.monotonic, compare=False)


GameInput = ObservationInput | DiceInput | DoneInput | UndoInput | CommandInput
"""Inputs the game driver works on (the vision worker waits while one waits for the service
thread; not while the tracker works on it)."""

ServiceInput = (
    GameInput
    | CandidateInput
    | CameraStatusInput
    | NoteInput
    | PanelInput
    | StopInput
    | TrackedInput
)
"""Every item of the service queue."""

GAME_INPUTS = (ObservationInput, DiceInput, DoneInput, UndoInput, CommandInput)
"""The classes of :data:`GameInput`, for ``isinstance``."""


LEDGER_INPUTS = (ObservationInput, DiceInput, DoneInput, UndoInput)
"""The camera's boards and the panel's presses: journaled as they are handed to the tracker's
thread (:class:`~companion.service.driver.InputLedger`), so a power cut loses none the
service had received. A phone's command is not: its page waits for the answer and sends it
again after a restart."""


def from_ledger(kind: str, payload: Any) -> GameInput:
    """The camera board or press the journal kept ahead (its ``kind`` and
    :func:`payload_json`), marked ``received``.

    :raises ValueError, KeyError, TypeError: an unknown kind or a malformed payload.
    """
    match kind:
        case "observation":
            return ObservationInput(Observation.from_json(payload), received=True)
        case "dice":
            return DiceInput(DiceRoll.from_event(payload), received=True)
        case "done":
            return DoneInput(payload, received=True)
        case "undo":
            return UndoInput(payload, received=True)
    raise ValueError(f"unknown received input {kind!r}")


def payload_json(item: ServiceInput) -> object:
    """The item's payload as a recording keeps it (``inputs.jsonl``): the observation's JSON, the
    panel's event, the command; None when the item has none."""
    match item:
        case ObservationInput(observation=obs) | CandidateInput(observation=obs):
            return obs.to_json()
        case DiceInput(roll=roll):
            return dict(roll.event)
        case DoneInput(event=event) | UndoInput(event=event):
            return None if event is None else dict(event)
        case CommandInput(command=command):
            return dict(command)
        case CameraStatusInput(text=text) | NoteInput(text=text):
            return text
        case PanelInput(event=event):
            return dict(event)
        case StopInput() | TrackedInput():
            return None
