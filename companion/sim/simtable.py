"""The simulated table: seeded bots play a real game, the renderer films it.

This is the companion's embedded default on a machine without a camera: it stands where the
players and the camera would be. :class:`SimulatedGame` lets the rules core's bots
(``companion.sim.bots``) play a legal, seeded game and turns every action into **scenes** the
way people at a table produce them: whoever has a die card presses ROLL (a dice event), a hand
reaches over the piece, the piece moves while the hand is still there, the hand leaves, the board
stays still until the next action; at the end of a turn the player presses DONE.
:class:`SimulatedTableSource` is a :class:`~companion.vision.sources.FrameSource` that renders
those scenes with ``companion.sim.render`` (perspective, light, noise, hands) — the frames then
go through the *real* detector and tracker like camera frames.

Timing is counted in frames, not read from a clock: a scene lasts a fixed number of frames and
frame ``i`` carries the time ``t0 + i / fps``. Everything is therefore reproducible from the seed;
the camera thread decides how fast frames are taken (human pace, or flat out in tests).

The simulated players also answer the tracker's questions on their phones (they know the truth):
see :meth:`SimulatedGame.answer_for`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from companion import rules
from companion.rules import Action, Config, Event, GameState
from companion.sim.bots import BOTS
from companion.tracking import board_key

PanelEvent = Mapping[str, object]
"""A button event as the hardware facade sends it: ``{"type": "dice", "rolls": [4], "used": 4,
"dice_allowed": 1}`` or ``{"type": "done"}``."""


@dataclass(frozen=True)
class Hand:
    """A hand and arm over the board: reaching for ``space`` (1..N) from the ``side`` of the
    table nearest to the player's seat."""

    space: int
    seat: int
    phase: str  # "reach" (over the piece before it moves) | "place" (at the destination)


@dataclass(frozen=True)
class Scene:
    """What the camera sees for ``frames`` consecutive frames.

    :param state: the true game state on the table.
    :param hand: a hand over the board, or None (a still board).
    :param frames: how many frames the scene lasts.
    :param events: button events that happen as the scene starts (``{"type": "dice", …}``,
        ``{"type": "done"}``), as the hardware facade would send them.
    :param step: index of the action this scene belongs to (-1 = the setup position).
    """

    state: GameState
    hand: Hand | None
    frames: int
    events: tuple[PanelEvent, ...] = ()
    step: int = -1


@dataclass
class SimTiming:
    """Scene lengths in frames. ``still_frames`` is the quiet board between two actions (at
    8 fps and 3 s per action, about 20); the stability gate needs a few still frames to emit."""

    hand_frames: int = 3
    still_frames: int = 20

    @classmethod
    def human(cls, fps: float, seconds_per_action: float) -> SimTiming:
        """Scene lengths for a real-time table: ``seconds_per_action`` per action at ``fps``."""
        total = max(5, round(fps * seconds_per_action))
        hand = max(1, total // 6)
        return cls(hand_frames=hand, still_frames=max(3, total - 2 * hand))


@dataclass
class SimRecord:
    """The truth kept aside for tests and the bench: every applied action and state."""

    actions: list[Action] = field(default_factory=list)
    states: list[GameState] = field(default_factory=list)
    events: list[list[Event]] = field(default_factory=list)


class SimulatedGame:
    """A seeded game played by bots, as a stream of :class:`Scene`.

    :param rules_config: the rules core's ``Config``.
    :param seed: deals the cards and seeds the bots.
    :param bot: ``greedy`` or ``random`` (``companion.sim.bots.BOTS``).
    :param timing: scene lengths.
    :param press_done: the players press DONE at the end of each turn (real players often do).
    :param max_actions: end the game early: after so many actions the players finish the turn
        in play (pressing DONE as usual) and stop, so the table is left where a real pause
        comes, at the end of a turn, and stays still.
    :raises KeyError: ``bot`` is not a bot's name.
    """

    def __init__(
        self,
        rules_config: Config,
        seed: int,
        bot: str = "greedy",
        timing: SimTiming | None = None,
        press_done: bool = True,
        max_actions: int = 5000,
        hands: bool = True,
    ) -> None:
        self.seed = seed
        self.timing = timing or SimTiming()
        self.press_done = press_done
        self.max_actions = max_actions
        self.hands = hands
        self.state = rules.setup(rules_config, seed)
        self.initial_state = self.state
        n = rules_config.player_count
        self._bots = [BOTS[bot](seed * 7 + i + 1) for i in range(n)]
        self.record = SimRecord(states=[self.state])
        self._lock = threading.Lock()
        self._history: deque[GameState] = deque(maxlen=64)  # recent true states (answers)

    @property
    def over(self) -> bool:
        if self.state.game.over:
            return True
        actions = self.record.actions
        return len(actions) >= self.max_actions and type(actions[-1]).__name__ == "EndTurn"

    def advance(self, actions: int) -> None:
        """Play ``actions`` actions without scenes (resuming a simulated game after a restart:
        the seeded bots replay the same moves)."""
        for _ in range(actions):
            if self.over:
                return
            before = self.state
            action = self._bots[int(before.turn.player)].choose(before)
            after, events = rules.apply(before, action)
            with self._lock:
                self.state = after
                self._history.append(after)
                self.record.actions.append(action)
                self.record.states.append(after)
                self.record.events.append(events)

    def scenes(self) -> Iterator[Scene]:
        """The setup position, then the scenes of every action until the game is over."""
        yield Scene(self.state, None, self.timing.still_frames, (), -1)
        while not self.over:
            before = self.state
            seat = int(before.turn.player)
            action = self._bots[seat].choose(before)
            after, events = rules.apply(before, action)
            with self._lock:
                self.state = after
                self._history.append(after)
                self.record.actions.append(action)
                self.record.states.append(after)
                self.record.events.append(events)
            yield from self._scenes_for(len(self.record.actions) - 1, before, after, action, seat)
        actions = self.record.actions
        if actions and type(actions[-1]).__name__ == "EndTurn":
            # the players stop after their DONE press: the camera sees the board stand still
            yield Scene(self.state, None, self.timing.still_frames, (), len(actions) - 1)

    def _scenes_for(
        self, step: int, before: GameState, after: GameState, action: Action, seat: int
    ) -> Iterator[Scene]:
        t = self.timing
        kind = type(action).__name__
        if kind == "EndTurn":
            if self.press_done:
                yield Scene(after, None, 1, ({"type": "done"},), step)
            return
        events: tuple[PanelEvent, ...] = ()
        rolls = getattr(action, "rolls", None)
        if rolls:
            card = getattr(action, "card", None)
            dice = int(getattr(card, "dice", 0) or len(rolls))
            events = (
                {
                    "type": "dice",
                    "rolls": list(rolls),
                    "used": int(rolls[-1]),
                    "dice_allowed": dice,
                },
            )
        if rules.observe(before) == rules.observe(after):
            # nothing a camera could see (a discard, a redraw without push, a potion)
            if events:
                yield Scene(after, None, 1, events, step)
            return
        src, dst = _moved_spaces(before, after)
        if self.hands:
            yield Scene(before, Hand(src, seat, "reach"), t.hand_frames, events, step)
            yield Scene(after, Hand(dst, seat, "place"), t.hand_frames, (), step)
            yield Scene(after, None, t.still_frames, (), step)
        else:
            yield Scene(after, None, t.still_frames, events, step)

    def truth_at(self, index: int) -> GameState:
        """The true state after action ``index`` (-1 = setup)."""
        with self._lock:
            return self.record.states[index + 1]

    def answer_for(
        self, question: Mapping[str, object], candidates: Mapping[str, list[GameState]]
    ) -> str | None:
        """The option a player who knows the truth picks: the option one of whose states shows
        the true board (towers, wizards of each colour with their tiers, castle) of the most
        recent matching moment; ties broken by the potions."""
        with self._lock:
            recent = list(self._history)[::-1] or [self.state]
        for truth in recent:
            key = board_key(truth)
            matching = [
                o for o, states in candidates.items() if any(board_key(s) == key for s in states)
            ]
            if len(matching) > 1:
                matching = [
                    o for o in matching if any(s.potions == truth.potions for s in candidates[o])
                ] or matching
            if matching:
                return matching[0]
        return None


def _moved_spaces(before: GameState, after: GameState) -> tuple[int, int]:
    """Where a hand reaches (a space whose view changed, before) and places (after)."""
    ob, oa = rules.observe(before), rules.observe(after)
    changed = [
        s for s in sorted(set(ob.spaces) | set(oa.spaces)) if ob.spaces.get(s) != oa.spaces.get(s)
    ]
    if not changed:
        return 1, 1
    lost = [s for s in changed if oa.spaces[s].towers < ob.spaces[s].towers]
    gained = [s for s in changed if oa.spaces[s].towers > ob.spaces[s].towers]
    src = lost[0] if lost else changed[0]
    dst = gained[0] if gained else changed[-1]
    return src, dst


class SceneCursor:
    """Walks a scene stream frame by frame (thread-safe). ``on_events`` receives each scene's
    button events when its first frame is taken."""

    def __init__(
        self,
        scenes: Iterator[Scene],
        on_events: Callable[[dict[str, object]], None] | None = None,
    ) -> None:
        self._scenes = scenes
        self._on_events = on_events
        self._lock = threading.Lock()
        self._scene: Scene | None = None
        self._left = 0
        self.frames = 0
        self.finished = False
        self.scene_started = False

    def next(self) -> Scene | None:
        """The scene of the next frame; None once the game is over and its last scene shown
        (the last scene then stays: call :meth:`current`)."""
        with self._lock:
            self.scene_started = False
            while self._left <= 0:
                try:
                    scene = next(self._scenes)
                except StopIteration:
                    self.finished = True
                    self._left = 1 << 60
                    break
                self._scene = scene
                self._left = scene.frames
                self.scene_started = True
                if self._on_events is not None:
                    for ev in scene.events:
                        self._on_events(dict(ev))
            self._left -= 1
            self.frames += 1
            return self._scene

    def current(self) -> Scene | None:
        with self._lock:
            return self._scene
