"""The truth simulator: seeded bot games seen through a noisy camera, for tests and the bench.

The rules core's bots (:mod:`companion.sim.bots`) play a seeded game; the truth state after
every action is kept aside. What the tracker would receive at the table is produced in order as
:class:`SimInput` values:

* ``dice`` — the dice buttons' rolls whenever a die card is played (R-CARD-4), before its move;
* ``end_turn`` — the DONE button after a turn (pressed with probability ``done_rate``);
* ``observation`` — ``frames_per_stop`` noisy camera frames of the truth each time the board is
  still: after every action (``gap="action"``), every turn (``"turn"``) or every second turn
  (``"2turns"``); optionally also frames taken mid-move (a tower or a wizard in a hand) that
  slipped past the stability gate.

Noise (:class:`CameraNoise`): per field and frame, with probability ``rate``, a tower count off by
one, a wrong roof kind, a wizard read as its near colour (yellow/orange, red/orange,
blue/purple) or another colour, a missing or an extra wizard, a castle seen on the wrong space.

Pure and seeded: all randomness comes from ``random.Random`` instances built from the seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol, TypeVar

from companion.rules.actions import Action, Cast, EndTurn, MoveTower, MoveWizard
from companion.rules.engine import apply, setup
from companion.rules.model import Config, GameState, position
from companion.rules.observation import COLOURS, Observation, SpaceObservation
from companion.sim.bots import BOTS, Bot
from companion.tracking.noise import space_views, view_to_space_observation

GAPS: tuple[str, ...] = ("action", "turn", "2turns")

_NEAR: dict[str, tuple[str, ...]] = {
    "yellow": ("orange",),
    "orange": ("yellow", "red"),
    "red": ("orange",),
    "blue": ("purple",),
    "purple": ("blue",),
    "green": (),
}


@dataclass(frozen=True, slots=True)
class CameraNoise:
    """How the simulated camera errs and when it takes frames.

    :param rate: per-field error probability per frame (0 = a perfect camera).
    :param gap: ``"action"``, ``"turn"`` or ``"2turns"`` between stable frames.
    :param frames_per_stop: stable frames taken while the board is still (each noised anew).
    :param mid_move_rate: probability per move of an extra frame with the piece in a hand.
    :param done_rate: probability that the players press DONE at the end of a turn.
    :raises ValueError: for values out of range.
    """

    rate: float = 0.01
    gap: str = "turn"
    frames_per_stop: int = 2
    mid_move_rate: float = 0.0
    done_rate: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 0.5:
            raise ValueError("noise.rate: expected 0..0.5")
        if self.gap not in GAPS:
            raise ValueError(f"noise.gap: expected one of {GAPS}")
        if self.frames_per_stop < 1:
            raise ValueError("noise.frames_per_stop: at least 1")
        if not 0.0 <= self.mid_move_rate <= 1.0 or not 0.0 <= self.done_rate <= 1.0:
            raise ValueError("noise: rates are probabilities 0..1")


U = TypeVar("U", covariant=True)


class FedTracker(Protocol[U]):
    """What :meth:`SimInput.give` feeds: a tracker's three inputs, each returning an update
    (``U``, the tracker's ``TrackerUpdate``)."""

    def observe(self, obs: Observation, /) -> U: ...

    def dice(self, rolls: list[int], dice_allowed: int, /) -> U: ...

    def end_turn(self) -> U: ...


@dataclass(frozen=True, slots=True)
class SimInput:
    """One input to the tracker, with the truth at that moment.

    :param kind: ``"observation"``, ``"dice"`` or ``"end_turn"``.
    :param truth: the true state when the input happens.
    :param turns: turns completed in the truth so far.
    :param observation: the frame (kind ``observation``).
    :param rolls: the rolls (kind ``dice``); :param dice_allowed: the card's dice count.
    :param mid_move: the frame shows a piece in a hand (not a still board).
    """

    kind: str
    truth: GameState
    turns: int
    observation: Observation | None = None
    rolls: tuple[int, ...] = ()
    dice_allowed: int = 0
    mid_move: bool = False

    def give(self, tracker: FedTracker[U]) -> U:
        """Feed this input to ``tracker`` (a ``Tracker`` or anything with its ``observe``,
        ``dice`` and ``end_turn``, e.g. a journaled one) and return its ``TrackerUpdate``."""
        if self.kind == "observation":
            assert self.observation is not None
            return tracker.observe(self.observation)
        if self.kind == "dice":
            return tracker.dice(list(self.rolls), self.dice_allowed)
        return tracker.end_turn()


@dataclass(frozen=True, slots=True)
class SimGame:
    """A simulated game: the tracker's starting state (hands unknown), the truth's trajectory
    (setup first) and the inputs."""

    start: GameState
    truths: tuple[GameState, ...]
    actions: tuple[Action, ...]
    inputs: tuple[SimInput, ...]


def tracker_config(truth: GameState) -> Config:
    """The truth's configuration with its spells on display made explicit (the tracker does not
    know the seed that drew them)."""
    c = truth.table.config
    return Config(
        player_count=c.player_count,
        variant=c.variant,
        teams=c.teams,
        colours=c.colours,
        modules=c.modules,
        spells=truth.table.spells,
        spell_costs=dict(c.spell_costs),
        feather_costs=dict(c.feather_costs),
        options=dict(c.options),
        track=c.track,
    )


def noisy_observation(
    state: GameState, rate: float, rng: random.Random, frame: int = 0
) -> Observation:
    """The camera's view of ``state`` with per-field errors at ``rate`` (see the module doc)."""
    spaces: dict[int, SpaceObservation] = {}
    length = state.table.length
    for idx, view in enumerate(space_views(state)):
        so = view_to_space_observation(view)
        if rate > 0:
            so = _noise_space(so, rate, rng, length)
        spaces[idx + 1] = so
    if rate > 0 and rng.random() < rate / 2:
        # the castle seen on a neighbouring space as well
        s = rng.randint(1, length)
        old = spaces[s]
        spaces[s] = SpaceObservation(
            old.towers, old.top, dict(old.wizards), not old.castle, old.witch, old.raven
        )
    if rate > 0 and rng.random() < rate / 2:
        # a witch or raven token seen where there is none (or missed)
        s = rng.randint(1, length)
        old = spaces[s]
        witch, raven = old.witch, old.raven
        if rng.random() < 0.5:
            witch = not witch
        else:
            raven = not raven
        spaces[s] = SpaceObservation(
            old.towers, old.top, dict(old.wizards), old.castle, witch, raven
        )
    return Observation(spaces=spaces, time=float(frame), frame=frame)


def _noise_space(
    so: SpaceObservation, rate: float, rng: random.Random, length: int
) -> SpaceObservation:
    towers, top = so.towers, so.top
    if rng.random() < rate:
        towers = max(0, towers + rng.choice((-1, 1)))
        if towers == 0 and so.towers > 0:
            top = "plain-space"
        elif towers > 0 and so.towers == 0:
            top = rng.choice(("crest", "plain"))
    if rng.random() < rate:
        top = {
            "crest": "plain",
            "plain": "crest",
            "crest-space": "plain-space",
            "plain-space": "crest-space",
        }.get(top, top)
    wizards: dict[str, int] = {}
    for colour, n in so.wizards.items():
        for _ in range(n):
            r = rng.random()
            if r < rate:
                near = _NEAR[colour]
                if near and rng.random() < 0.7:
                    c2 = rng.choice(near)
                elif rng.random() < 0.5:
                    continue  # missed
                else:
                    c2 = rng.choice(COLOURS)
                wizards[c2] = wizards.get(c2, 0) + 1
            else:
                wizards[colour] = wizards.get(colour, 0) + 1
    if rng.random() < rate / 2 and sum(wizards.values()) < 6:
        c3 = rng.choice(COLOURS)
        wizards[c3] = wizards.get(c3, 0) + 1
    while sum(wizards.values()) > 6:
        k = max(wizards, key=lambda c: wizards[c])
        wizards[k] -= 1
    castle = so.castle
    if rng.random() < rate / 2:
        castle = not castle
    return SpaceObservation(
        towers, top, {c: n for c, n in wizards.items() if n}, castle, so.witch, so.raven
    )


def _mid_move(
    before: GameState, action: Action, rng: random.Random, rate: float
) -> Observation | None:
    """A frame with the moved piece lifted off the board (in a hand)."""
    obs = noisy_observation(before, rate, rng)
    sp = dict(obs.spaces)
    if isinstance(action, MoveTower):
        s, k = action.space, action.tier
        rest = before.stacks[s - 1][: k - 1]
        if rest:
            top = before.table.towers[rest[-1]].kind
        else:
            top = "crest-space" if before.table.crest_space[s] else "plain-space"
        code = position(s, k - 1)
        wiz: dict[str, int] = {}
        for i, p in enumerate(before.wizards):
            if p == code:
                c = before.table.colours[before.table.wizard_owner[i]]
                wiz[c] = wiz.get(c, 0) + 1
        sp[s] = SpaceObservation(len(rest), top, wiz, False)
    elif isinstance(action, MoveWizard):
        pos = before.wizard_position(action.wizard)
        if pos is None:
            return None
        old = sp[pos[0]]
        w = dict(old.wizards)
        colour = action.player
        if w.get(colour):
            w[colour] -= 1
        sp[pos[0]] = SpaceObservation(old.towers, old.top, w, old.castle, old.witch, old.raven)
    else:
        return None
    return Observation(spaces=sp)


def _rolls_of(action: Action) -> tuple[tuple[int, ...], int]:
    if isinstance(action, MoveWizard | MoveTower) and action.card.dice:
        return action.rolls, action.card.dice
    if isinstance(action, Cast) and action.then is not None and action.then.card.dice:
        return action.then.rolls, action.then.card.dice
    return (), 0


def simulate(
    config: Config,
    seed: int,
    noise: CameraNoise | None = None,
    bots: str | list[Bot] = "greedy",
    max_actions: int = 3000,
) -> SimGame:
    """Play one seeded bot game and produce the tracker's inputs.

    :param config: the game (``spells`` may be None: the seed draws them).
    :param seed: seeds the deal, the bots and the camera noise.
    :param noise: the camera (default :class:`CameraNoise`).
    :param bots: a bot kind (``"random"``, ``"greedy"``) for every seat, or one bot per seat.
    :param max_actions: stop a game that runs longer (its truth is simply not over).
    """
    noise = noise or CameraNoise()
    rng = random.Random(seed * 7919 + 17)
    truth = setup(config, seed)
    start = setup(tracker_config(truth), None)
    if isinstance(bots, str):
        players = [BOTS[bots](seed * 7 + i + 1) for i in range(config.player_count)]
    else:
        players = bots
    truths = [truth]
    actions: list[Action] = []
    inputs: list[SimInput] = []
    turns = 0
    frame = 0
    since_stop = 0

    def stop(st: GameState) -> None:
        nonlocal frame
        for _ in range(noise.frames_per_stop):
            frame += 1
            obs = noisy_observation(st, noise.rate, rng, frame)
            inputs.append(SimInput("observation", st, turns, observation=obs))

    stop(truth)
    for _ in range(max_actions):
        if truth.game.over:
            break
        action = players[truth.turn.player].choose(truth)
        rolls, allowed = _rolls_of(action)
        if rolls:
            inputs.append(SimInput("dice", truth, turns, rolls=rolls, dice_allowed=allowed))
        if noise.mid_move_rate and rng.random() < noise.mid_move_rate:
            mid = _mid_move(truth, action, rng, noise.rate)
            if mid is not None:
                inputs.append(SimInput("observation", truth, turns, observation=mid, mid_move=True))
        before = truth
        truth, _ = apply(truth, action)
        truths.append(truth)
        actions.append(action)
        if isinstance(action, EndTurn):
            turns += 1
            if rng.random() < noise.done_rate:
                inputs.append(SimInput("end_turn", truth, turns))
            since_stop += 1
            if (
                truth.game.over
                or noise.gap == "turn"
                or (noise.gap == "2turns" and since_stop >= 2)
            ):
                stop(truth)
                since_stop = 0
        elif noise.gap == "action" and _visible_change(before, truth):
            stop(truth)
    if since_stop and not (inputs and inputs[-1].kind == "observation"):
        stop(truth)
    return SimGame(start, tuple(truths), tuple(actions), tuple(inputs))


def _visible_change(a: GameState, b: GameState) -> bool:
    return a.stacks != b.stacks or a.wizards != b.wizards or a.castle != b.castle


def truth_key(st: GameState) -> tuple[object, ...]:
    """What the bench compares between truth and tracker: board (tower kinds, wizards per colour
    incl. hidden tiers, castle), potions, whose turn, game over."""
    tb = st.table
    stacks = tuple(tuple(tb.towers[t].kind for t in s) for s in st.stacks)
    wiz = tuple(tuple(sorted(st.wizards[lo:hi])) for lo, hi in tb.wiz_range)
    return (stacks, wiz, st.castle, st.potions, st.turn.player, st.game.over)
