"""The tracker: what happened on the table, explained as legal moves, from an unreliable camera.

A *belief* is a small set of weighted full :class:`GameState` hypotheses. Each one was derived
move by move from the setup, so each knows exactly which wizard is trapped under which tower at
which tier (architecture.md, "The tracker"; state-model.md §3). On every stable frame the tracker

1. searches, from every hypothesis, the legal action sequences that can have happened since the
   last frame (card moves with unknown values 1-5, die moves with the value from the dice
   buttons, the redraw push, spells — off-turn ones too in the master variant —, castle entries
   and relocations, turn ends by the DONE button or implied), guided by the spaces where the
   picture changed;
2. scores each reachable state's expected view against the observation with a
   :class:`~companion.tracking.noise.NoiseModel` and keeps the best few;
3. **commits** the moves on which every surviving hypothesis agrees (one frame later, so a misread
   frame is never committed on its own), **asks** the players when hypotheses that explain the
   picture equally well differ in what is hidden, and **waits** (keeping the belief) when nothing
   explains the picture, naming the spaces that don't match after a few frames.

Potions and turn counters the camera cannot see are carried in the hypotheses and decided by
later evidence (a spell that needs potions, the DONE button), or asked at the end of the game.

Inputs: :meth:`Tracker.observe`, :meth:`Tracker.dice`, :meth:`Tracker.end_turn` (the DONE button),
:meth:`Tracker.answer`, :meth:`Tracker.undo`, :meth:`Tracker.correct`. Each returns a
:class:`TrackerUpdate`. Bad input raises (``ObservationError``, ``ValueError``) and changes
nothing.

Pure: no I/O, no clock, no randomness; the same inputs give the same belief
(:meth:`Tracker.to_json` / :meth:`Tracker.from_json` round-trip it for the journal).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    Feather,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.engine import apply, setup
from companion.rules.model import CARD_KINDS, Card, Config, GameState, Table
from companion.rules.observation import Observation, ObservationError
from companion.rules.serialize import (
    dump_action,
    dump_event,
    dump_state,
    load_action,
    load_event,
    load_state,
)
from companion.tracking.noise import NoiseModel, SpaceView, Target, space_views

# --------------------------------------------------------------------------------------------
# Options


@dataclass(frozen=True, slots=True)
class TrackerOptions:
    """Tuning of the belief and the search. Costs are in nats (see ``tracker_noise``).

    :param noise: the camera's noise model.
    :param keep: at most this many hypotheses are kept…
    :param keep_per_board: …with the expansion, at most this many of them per board
        (:func:`board_key`) while other boards are within ``margin``.
    :param margin: hypotheses costing more than the best + ``margin`` are dropped.
    :param ask_margin: hypotheses within this of the best that differ in hidden pieces make the
        tracker ask the players.
    :param beam: search nodes kept per depth.
    :param quick_depths: transitions of the quick passes tried first; their moves only end on
        spaces the picture changed (or a move of the story touched).
    :param exact: a quick pass ends the search with a story whose picture cost, plus how far
        its hypothesis was behind the best one before the frame, is within this (nats): no
        misread field (3.5-3.9 each), grown from a story about as likely as the best. A story
        with one misread (3.91) ended it before the full pass found the true 6-player turn
        with a spell, three steps against the quick pass's two (bench game seed 3001, input
        68); and an exact picture reached from a hypothesis 11 nats behind the best ended it
        with that wrong story alone (4-player all-module game seed 2000, input 4, when only
        the picture counted).
    :param depth: search transitions per frame in the full pass (a whole turn and a bit). Its
        moves may end on any space: a tower or a wizard moved on to a space and away again in
        the same turn leaves that space as it was, and the true story goes through it.
    :param module_depth: extra transitions in the full pass when expansion modules are in
        play.
    :param deep_depth: transitions in the deep pass, used after a frame that the full pass left
        unexplained (a frame after two turns).
    :param wait_frames: unexplained stable frames before the mismatching spaces are reported.
    :param min_spaces: an observation must read at least this fraction of the spaces.
    :param lag_questions: after ``max_lag`` held steps, ask the players what the held
        hypotheses disagree on (potions, hidden pieces, whose turn) instead of committing the
        cheapest story.
    :param expect_done: players press DONE at the end of a turn (an unannounced turn end costs
        ``cost_implicit_end``).
    :param cost_wrong_guess: prior cost of a release guess naming the wrong tower over a sealed
        witch (R-MOD-WITCH-9; ``ln 5``: players find her 4 times in 5).
    :param cost_after_close: prior cost of each move seen in the same frame after a turn end
        nobody announced (the camera usually sees the board between two turns).
    :param cost_after_done: the same after a turn closed by the DONE button: the press came
        somewhere between two frames, and the next player may well have moved before the
        next still frame. Charged while the frames show whole turns; see ``action_pace``.
    :param action_pace: when the frames so far (at least ``pace_frames`` of them with moves)
        showed at most this many moves each on average, the camera sees the table after every
        move, so the turn's last move was seen before its DONE press and a move in the frame
        after the press is the next player's: ``cost_after_done`` is charged instead for a
        move seen in the same frame *before* the press (``cost_before_done``). (Charged every
        turn after the press it made stories that shift each turn end by one move cheaper than
        the truth after a few turns: the seed-3 e2e game committed 8 wrong states of 30.)
    :param cost_before_done: prior cost of a move seen in the same frame before a DONE press
        (0: with whole-turn frames every turn ends so; set from ``action_pace``).
    :param pace_frames: frames with moves needed before ``action_pace`` is judged.
    """

    noise: NoiseModel = field(default_factory=NoiseModel)
    keep: int = 16
    margin: float = 12.0
    commit_margin: float = 4.0
    max_lag: int = 12
    lag_questions: bool = True
    ask_margin: float = 2.5
    beam: int = 30
    beam_per_board: int = 2
    keep_per_board: int = 4
    depth: int = 4
    deep_depth: int = 6
    module_depth: int = 1
    deep_roots: int = 3
    full_roots: int = 6
    quick_depths: tuple[int, ...] = (2,)
    exact: float = 3.0
    wait_frames: int = 3
    min_spaces: float = 0.5
    expect_done: bool = True
    cost_card: float = 0.3
    cost_die_move: float = 0.0
    cost_push: float = 2.5
    cost_spell: float = 1.5
    cost_discard: float = 3.0
    cost_implicit_end: float = 9.0
    cost_pending_done: float = 0.05
    cost_repair: float = 6.0
    cost_after_close: float = 2.0
    cost_after_done: float = 2.0
    cost_before_done: float = 0.0
    action_pace: float = 1.5
    pace_frames: int = 3
    cost_todo: float = 2.0
    page_share: float = 1 / 6
    cost_raven_before: float = 0.1
    cost_protect: float = 1.0
    cost_wrong_guess: float = 1.6

    @property
    def cost_page(self) -> float:
        """Prior cost (nats) of a card being a witch page card: ``-ln page_share``."""
        return -math.log(self.page_share)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            v = getattr(self, name)
            if isinstance(v, NoiseModel):
                v = {n: getattr(v, n) for n in v.__dataclass_fields__}
            out[name] = v
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrackerOptions:
        """:raises ValueError: for an unknown option name or a bad noise model."""
        kw = dict(data)
        unknown = set(kw) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"tracker.options.{sorted(unknown)[0]}: unknown option")
        if "noise" in kw:
            noise = kw["noise"]
            if not isinstance(noise, Mapping):
                raise ValueError("tracker.options.noise: expected an object")
            kw["noise"] = NoiseModel(**noise)
        if "quick_depths" in kw:
            kw["quick_depths"] = tuple(int(d) for d in kw["quick_depths"])
        return cls(**kw)


# --------------------------------------------------------------------------------------------
# Public results


@dataclass(frozen=True, slots=True)
class Committed:
    """One committed action and the events that explain it (state-model.md §4/§5).

    ``action`` is None for a correction from the host page (event ``correction``) and for
    moves whose order the camera could not see (event ``order_unseen`` with ``options``, the
    stories in players' words, and ``stories``, their actions); ``state`` then holds the
    state after them.
    """

    action: Action | None
    events: tuple[Event, ...]
    state: GameState

    def to_json(self) -> dict[str, Any]:
        if self.action is None:
            kind = "correction" if any(e.kind == "correction" for e in self.events) else "unseen"
            return {kind: True, "events": [dump_event(e) for e in self.events]}
        return {"action": dump_action(self.action), "events": [dump_event(e) for e in self.events]}


@dataclass(frozen=True, slots=True)
class Question:
    """A question for the players (phones, LED) when the camera cannot tell hidden things apart.

    :param id: ``q1``, ``q2`` … (answer with this id).
    :param text: worded for players, e.g. "From space 7, did you move the top tower or the top
        two?".
    :param options: one answer text per option; answer with the option's index.
    """

    id: str
    text: str
    options: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "options": list(self.options)}


@dataclass(frozen=True, slots=True)
class TrackerUpdate:
    """The outcome of one tracker input.

    :param committed: actions committed by this input, in order.
    :param undone: actions taken back by an undo, most recent first.
    :param state: the best current state (what the table page shows).
    :param question: the open question, if any.
    :param health: ``"ok"``, ``"waiting for a still board"`` or
        ``"board doesn't match at spaces 7, 9"``.
    :param hypotheses: number of hypotheses held.
    :param explained: the observation was explained (False for an ignored or unexplained frame).
    """

    committed: tuple[Committed, ...]
    undone: tuple[Committed, ...]
    state: GameState
    question: Question | None
    health: str
    hypotheses: int
    explained: bool = True

    def committed_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.committed]

    def events_json(self) -> list[dict[str, Any]]:
        return [dump_event(e) for c in self.committed for e in c.events]

    def to_json(self) -> dict[str, Any]:
        return {
            "committed": self.committed_json(),
            "undone": [c.to_json() for c in self.undone],
            "state": dump_state(self.state),
            "question": None if self.question is None else self.question.to_json(),
            "health": self.health,
            "hypotheses": self.hypotheses,
            "explained": self.explained,
        }


# --------------------------------------------------------------------------------------------
# Internal values

Marker = tuple[Any, ...]
_CardAction = MoveWizard | MoveTower | DiscardCard
"""A pending input: ``("dice", rolls, dice_allowed)`` or ``("done",)``."""


@dataclass(frozen=True, slots=True)
class _Step:
    """What one hypothesis says happened between two accepted frames. ``alts``: other paths
    (actions, events, states) from the same state to ``state`` about as likely (two moves in
    the other order, a card and a spell swapped)."""

    state: GameState
    actions: tuple[Action, ...]
    events: tuple[tuple[Event, ...], ...]
    states: tuple[GameState, ...]
    alts: tuple[_Path, ...] = ()

    def paths(self) -> tuple[_Path, ...]:
        return ((self.actions, self.events, self.states), *self.alts)


@dataclass(frozen=True, slots=True)
class _Hyp:
    """One story of the table. ``alts`` are other trails (one step per accepted frame, like
    ``trail``) that reach the same state at about the same cost (within ``commit_margin``):
    another order of the same moves, a card instead of a spell and a spell later. No later
    frame can tell them apart (they share the future), so the commit claims only what they
    all share (:meth:`Tracker._commit`)."""

    state: GameState
    cost: float
    trail: tuple[_Step, ...]
    pending: tuple[Marker, ...]
    implicit: bool
    alts: tuple[tuple[_Step, ...], ...] = ()

    def paths(self) -> tuple[tuple[_Step, ...], ...]:
        return (self.trail, *self.alts)

    def extended(
        self,
        state: GameState,
        cost: float,
        step: _Step,
        pending: tuple[Marker, ...],
        implicit: bool,
    ) -> _Hyp:
        """This story with one more step (its alternatives share it)."""
        return _Hyp(
            state,
            cost,
            self.trail + (step,),
            pending,
            implicit,
            tuple(a + (step,) for a in self.alts),
        )


_MAX_ALTS = 6
"""At most this many alternative trails are kept per hypothesis (_Hyp), and alternative paths
per step (_Step)."""
_MAX_STORIES = 24
"""At most this many stories are told in one ``order_unseen`` entry."""


def _step_print(step: _Step) -> Any:
    """What a committed step claims: the state after each of its actions (a set of such
    sequences when it has alternative paths)."""
    main = tuple(state_key(s) for s in step.states)
    if not step.alts:
        return main
    return frozenset([main, *(tuple(state_key(s) for s in p[2]) for p in step.alts)])


def _with_alts(h: _Hyp, trails: Iterable[tuple[_Step, ...]]) -> _Hyp:
    """``h`` with the trails that claim other paths than its own added as alternatives."""
    alts = list(h.alts)
    for t in trails:
        if len(alts) >= _MAX_ALTS:
            break
        if not _same_path(t, h.trail) and not any(_same_path(t, a) for a in alts):
            alts.append(t)
    if len(alts) == len(h.alts):
        return h
    return replace(h, alts=tuple(alts))


def _same_path(a: Sequence[_Step], b: Sequence[_Step]) -> bool:
    """The two trails claim the same states frame by frame and action by action."""
    if len(a) != len(b):
        return False
    return all(x is y or _step_print(x) == _step_print(y) for x, y in zip(a, b, strict=True))


_KIND_STACKS: dict[tuple[tuple[int, ...], ...], tuple[tuple[str, ...], ...]] = {}
_WIZ_KEYS: dict[tuple[Any, ...], tuple[tuple[int, ...], ...]] = {}
"""Wizard positions -> the sorted positions per colour (a search meets the same few again)."""


def board_key(st: GameState) -> tuple[Any, ...]:
    """What a player means by "the board": tower kinds per stack, wizard positions per colour
    (wizards of one colour are interchangeable, so are towers of one kind) and the castle."""
    tb = st.table
    stacks = _KIND_STACKS.get(st.stacks)
    if stacks is None:
        kinds = tb.towers
        stacks = tuple(tuple(kinds[t].kind for t in s) for s in st.stacks)
        if len(_KIND_STACKS) > 20000:
            _KIND_STACKS.clear()
        _KIND_STACKS[st.stacks] = stacks
    w = st.wizards
    wkey = (w, tb.wiz_range)
    wiz = _WIZ_KEYS.get(wkey)
    if wiz is None:
        wiz = tuple(tuple(sorted(w[lo:hi])) for lo, hi in tb.wiz_range)
        if len(_WIZ_KEYS) > 20000:
            _WIZ_KEYS.clear()
        _WIZ_KEYS[wkey] = wiz
    ms = st.modules
    if ms is None:
        return (stacks, wiz, st.castle)
    # the expansion's tokens are pieces on the board too (a sealed witch is hidden like a
    # trapped wizard, R-MOD-WITCH-7)
    return (stacks, wiz, st.castle, ms.witch, ms.raven)


def state_key(st: GameState) -> tuple[Any, ...]:
    """:func:`board_key` plus potions, the turn and the game progress (never the card count);
    with expansion modules also the witch vials, feathers, armed spells and free spells (what
    the camera cannot see but later moves depend on)."""
    g = st.game
    ms = st.modules
    base = (*board_key(st), st.potions, st.turn, g.end_triggered_by, g.remaining_turns, g.over)
    if ms is None:
        return base
    return (*base, ms.witch_vials, ms.witch_vial_supply, ms.feathers, ms.armed, ms.free_casts)


# --------------------------------------------------------------------------------------------
# The search


class _Search:
    """Shared caches for one tracker: applied actions and expected views."""

    def __init__(self) -> None:
        self.applied: dict[tuple[GameState, Action], tuple[GameState, tuple[Event, ...]] | None]
        self.applied = {}
        self.views: dict[tuple[Any, ...], list[SpaceView]] = {}
        # most spaces look the same in most searched states: one tuple per distinct space view
        # (the cached views held ~930k tuples, 82 MB, in a 4-player game with every module)
        self.shared: dict[SpaceView, SpaceView] = {}

    def apply(self, st: GameState, a: Action) -> tuple[GameState, tuple[Event, ...]] | None:
        key = (st, a)
        if key in self.applied:
            return self.applied[key]
        try:
            nxt, ev = apply(st, a)
            got: tuple[GameState, tuple[Event, ...]] | None = (nxt, tuple(ev))
        except IllegalAction:
            got = None
        if len(self.applied) > 50000:
            self.applied.clear()
        self.applied[key] = got
        return got

    def view(self, st: GameState) -> list[SpaceView]:
        ms = st.modules
        key = (st.stacks, st.wizards, st.castle, None if ms is None else (ms.witch, ms.raven))
        got = self.views.get(key)
        if got is None:
            if len(self.views) > 50000:
                self.views.clear()
                self.shared.clear()
            shared = self.shared
            got = [shared.setdefault(v, v) for v in space_views(st)]
            self.views[key] = got
        return got


@dataclass(slots=True)
class _Node:
    state: GameState
    prior: float
    actions: tuple[Action, ...]
    events: tuple[tuple[Event, ...], ...]
    states: tuple[GameState, ...]
    pending: tuple[Marker, ...]
    implicit: bool
    score: float = 0.0
    obs_cost: float = 0.0
    closes: float = 0.0
    """The prior cost of each move after the turn closes so far (``cost_after_close`` per
    unannounced end, ``cost_after_done`` per DONE press)."""
    rank: float = 0.0
    alts: tuple[_Path, ...] = ()
    """Other paths (actions, events, states) to this node's state about as likely
    (within ``commit_margin``): kept so a commit never claims one of them as fact."""


_Path = tuple[tuple[Action, ...], tuple[tuple[Event, ...], ...], tuple[GameState, ...]]


def _path_print(states: Sequence[GameState]) -> tuple[Any, ...]:
    return tuple(state_key(s) for s in states)


def _extend_paths(
    alts: tuple[_Path, ...],
    actions: tuple[Action, ...],
    events: tuple[tuple[Event, ...], ...],
    states: tuple[GameState, ...],
) -> tuple[_Path, ...]:
    return tuple((a + actions, e + events, s + states) for a, e, s in alts)


def _merge_paths(lo: _Node, hi: _Node) -> None:
    """Keep ``hi``'s paths as alternatives of ``lo`` (same state) where they claim other
    intermediate states."""
    alts = list(lo.alts)
    mine = None
    for path in ((hi.actions, hi.events, hi.states), *hi.alts):
        if len(alts) >= _MAX_ALTS:
            break
        sts = path[2]
        if sts == lo.states:
            continue
        if mine is None:
            mine = _path_print(lo.states)
        fp = _path_print(sts)
        if fp == mine or any(_path_print(a[2]) == fp for a in alts):
            continue
        alts.append(path)
    lo.alts = tuple(alts)


_VALUE_WIZARD: dict[int, Card] = {
    c.wizard: c for c in CARD_KINDS if c.type == "wizard" and not c.dice and c.wizard
}
_VALUE_TOWER: dict[int, Card] = {
    c.tower: c for c in CARD_KINDS if c.type == "tower" and not c.dice and c.tower
}


def _die_cards(allowed: int) -> tuple[tuple[str, Card], ...]:
    """(side, card) of the die cards with ``allowed`` dice (R-DECK-1)."""
    out: list[tuple[str, Card]] = []
    for c in CARD_KINDS:
        if c.dice == allowed:
            for side in ("wizard", "tower"):
                if c.has_side(side):
                    out.append((side, c))
    return tuple(out)


def _ring(length: int, a: int, b: int) -> int:
    """Clockwise distance from space ``a`` to space ``b`` (0..N-1)."""
    return (b - a) % length


def _children(
    node: _Node,
    allowed: frozenset[int],
    dests: frozenset[int] | None,
    opts: TrackerOptions,
) -> Iterator[tuple[Action | None, float, tuple[Marker, ...], bool]]:
    """Candidate transitions: (action or None for a turn close, prior cost, pending after,
    implicit-end flag). Actions are guided: sources in ``allowed``, destinations in ``dests``
    (None = anywhere)."""
    st = node.state
    tb = st.table
    if st.game.over:
        return
    length = tb.length
    t = st.turn
    seat = t.player
    colour = tb.colours[seat]
    pending = node.pending
    nxt = pending[0] if pending else None
    rest = pending[1:]
    stacks = st.stacks
    wiz = st.wizards

    def dest_ok(d: int) -> bool:
        return dests is None or d in dests

    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    die: list[tuple[str, Card]] = []
    roll: tuple[int, ...] = ()
    if nxt is not None and nxt[0] == "dice":
        roll = tuple(nxt[1])
        die = list(_die_cards(int(nxt[2])))
    # wizard cards move the current player's own wizards (partner's when all are inside)
    ctrl = seat
    if tb.partner[seat] >= 0:
        lo, hi = tb.wiz_range[seat]
        if not any(wiz[lo:hi]):
            ctrl = tb.partner[seat]
    visible: list[tuple[int, int]] = []  # (wizard index, space)
    for i, p in enumerate(wiz):
        if p:
            s = p >> 4
            if p & 15 == len(stacks[s - 1]):
                visible.append((i, s))
    ids = tb.wizard_ids
    owner = tb.wizard_owner
    special = tb.special
    # card actions are collected first: with the expansion each may have hidden variants (a
    # page card moving the witch first, the raven moving before the move, _card_variants)
    cards: list[tuple[_CardAction, float, tuple[Marker, ...]]] = []
    if can_play:
        for i, s in visible:
            if owner[i] != ctrl or s not in allowed:
                continue
            for d in range(1, length + 1):
                # a wizard may stop anywhere on the way (two cards, 6 = 5 + 1): any destination
                if d == s:
                    continue
                steps = _ring(length, s, d)
                if 1 <= steps <= 5:
                    cards.append(
                        (
                            MoveWizard(colour, ids[i], steps, _VALUE_WIZARD[steps]),
                            opts.cost_card,
                            pending,
                        )
                    )
                if roll and steps == roll[-1]:
                    for side, card in die:
                        if side == "wizard":
                            cards.append(
                                (
                                    MoveWizard(colour, ids[i], steps, card, roll),
                                    opts.cost_die_move,
                                    rest,
                                )
                            )
        for s in allowed:
            h = len(stacks[s - 1])
            if not h:
                continue
            for d in range(1, length + 1):
                if d == s:
                    continue
                # guided by where the tower ends: a web sends it on (R-MOD-WEB-2)
                fd = d if special[d] is None else _web_end(tb, s, d)
                if fd == s or not dest_ok(fd) or fd == st.castle:
                    continue
                steps = _ring(length, s, d)
                for k in range(1, h + 1):
                    if 1 <= steps <= 5:
                        cards.append(
                            (
                                MoveTower(colour, s, k, steps, _VALUE_TOWER[steps]),
                                opts.cost_card,
                                pending,
                            )
                        )
                    if roll and steps == roll[-1]:
                        for side, card in die:
                            if side == "tower":
                                cards.append(
                                    (
                                        MoveTower(colour, s, k, steps, card, roll),
                                        opts.cost_die_move,
                                        rest,
                                    )
                                )
                    if steps == 1 and t.cards_used == 0 and not tb.solo:
                        yield Redraw(colour, (s, k)), opts.cost_push, pending, False
        if roll:
            # the die card could move nothing (or nothing the player wanted): discarded
            cards.append((DiscardCard(colour, None), opts.cost_discard, rest))
    if st.modules is None:
        for a, prior, pend in cards:
            yield a, prior, pend, False
    else:
        yield from _card_variants(st, cards, allowed, roll, pending, opts)
    # spells
    casters = range(tb.n) if tb.master else (seat,)
    for cs in casters:
        full = st.potions[cs][0]
        ccol = tb.colours[cs]
        for spell in tb.spells:
            if full < tb.config.spell_costs[spell]:
                continue
            if not tb.master and cs != seat and spell != "free_wizard":
                continue
            if spell in ("advance_wizard", "headwind_wizard"):
                step = 1 if spell == "advance_wizard" else -1
                for i, s in visible:
                    if s in allowed and dest_ok(_step_end(tb, s, step)):
                        yield Cast(ccol, spell, wizard=ids[i]), opts.cost_spell, pending, False
            elif spell in ("advance_tower", "headwind_tower"):
                step = 2 if spell == "advance_tower" else -2
                for s in allowed:
                    # a tower the spell puts on a web goes on by the same two spaces: guided
                    # by where it ends (a headwind from the space after a web skips it)
                    if not dest_ok(_step_end(tb, s, step)):
                        continue
                    for k in range(1, len(stacks[s - 1]) + 1):
                        yield Cast(ccol, spell, space=s, tier=k), opts.cost_spell, pending, False
            elif spell == "swap_tower":
                srcs = sorted(x for x in allowed if stacks[x - 1])
                for x in srcs:
                    for y in srcs:
                        if x < y:
                            yield Cast(ccol, spell, a=x, b=y), opts.cost_spell, pending, False
            elif spell == "move_castle":
                if st.castle in allowed:
                    for direction in ("cw", "ccw"):
                        yield (
                            Cast(ccol, spell, direction=direction),
                            opts.cost_spell,
                            pending,
                            False,
                        )
            elif spell == "free_wizard":
                allowed_owner = tb.team_of(cs)
                for s in allowed:
                    stk = stacks[s - 1]
                    for k in range(1, len(stk) + 1):
                        under = s << 4 | (k - 1)
                        for i, p in enumerate(wiz):
                            if p == under and owner[i] in allowed_owner:
                                yield (
                                    Cast(ccol, spell, space=s, tier=k, wizard=ids[i]),
                                    opts.cost_spell,
                                    pending,
                                    False,
                                )
            elif spell == "piggyback" and can_play:
                for i, s in visible:
                    if owner[i] != ctrl or s not in allowed:
                        continue
                    riders = [r for r, rs in visible if rs == s and r != i and owner[r] == cs]
                    if not riders:
                        continue
                    for d in range(1, length + 1):
                        if d == s or not dest_ok(d if special[d] is None else _web_end(tb, s, d)):
                            continue
                        steps = _ring(length, s, d)
                        if not 1 <= steps <= 5:
                            continue
                        m = MoveWizard(colour, ids[i], steps, _VALUE_WIZARD[steps])
                        for r in riders:
                            yield (
                                Cast(ccol, spell, rider=ids[r], then=m),
                                opts.cost_spell + opts.cost_card,
                                pending,
                                False,
                            )
    if st.modules is not None:
        yield from _module_children(st, allowed, dests, visible, pending, opts)
    # the end of the turn: by the DONE button (next marker) or unannounced
    if nxt is None or nxt[0] == "done":
        if nxt is not None and node.implicit and not t.cards_used and not t.casts and not t.redrawn:
            # the DONE of a turn that already ended unannounced: absorbed
            yield None, 0.0, rest, False
            return
        if nxt is not None:
            yield None, 0.0, rest, False
        else:
            yield None, opts.cost_implicit_end if opts.expect_done else 0.5, pending, True


_BASE_SPELLS = frozenset(
    {
        "advance_wizard",
        "headwind_wizard",
        "advance_tower",
        "headwind_tower",
        "swap_tower",
        "move_castle",
        "free_wizard",
        "piggyback",
    }
)


def _web_end(tb: Table, s: int, d: int) -> int:
    """Where a piece moved clockwise from ``s`` to ``d`` stops after web continuation
    (R-MOD-WEB-2, OPEN-19: again while it ends on a web; at most 8 bounces)."""
    return _step_end(tb, s, _ring(tb.length, s, d))


def _step_end(tb: Table, s: int, step: int) -> int:
    """Where a piece moved ``step`` spaces from ``s`` (negative: counter-clockwise, a headwind
    spell) stops after web continuation in the same direction (R-MOD-WEB-2, OPEN-19)."""
    length = tb.length
    d = (s - 1 + step) % length + 1
    for _ in range(8):
        if tb.special[d] != "web":
            return d
        d = (d - 1 + step) % length + 1
    return d


def _token_end(st: GameState, space: int, steps: int) -> int:
    """Where a witch or raven token moving ``steps`` clockwise from ``space`` stops: it skips
    the castle's space and bounces off webs (R-MOD-WITCH-3, R-MOD-RAVEN-2, R-MOD-WEB-5)."""
    tb = st.table
    length = tb.length
    seg = steps
    dest = (space - 1 + seg) % length + 1
    for _ in range(16):
        if dest == st.castle:
            dest = dest % length + 1
            seg += 1
        elif tb.special[dest] == "web":
            dest = (dest - 1 + seg) % length + 1
        else:
            break
    return dest


def _card_variants(
    st: GameState,
    cards: Sequence[tuple[_CardAction, float, tuple[Marker, ...]]],
    allowed: frozenset[int],
    roll: tuple[int, ...],
    pending: tuple[Marker, ...],
    opts: TrackerOptions,
) -> Iterator[tuple[Action | None, float, tuple[Marker, ...], bool]]:
    """The card actions ``cards`` with the expansion's hidden choices the camera cannot read
    but that change the board:

    * a **page card** (R-MOD-WITCH-2, OPEN-12) moves the witch one space before the move, or
      releases a sealed witch when the right tower is named (R-MOD-WITCH-9): generated only
      when the witch's space or the space she would move to changed in the picture;
      ``cost_page`` = ``-ln page_share``. A discarded page card moves the witch too;
    * a die card with the raven moves the raven **before** the move (R-MOD-RAVEN-2; after is
      the engine's default): ``cost_raven_before``;
    * an armed *Precise Landing* (R-SPELLX-6) chooses 1-3 spaces on a web: ``web_steps``.
    """
    ms = st.modules
    assert ms is not None
    tb = st.table
    seat = st.turn.player
    page: tuple[bool, tuple[int, int] | None] | None = None
    if ms.witch is not None and "witch" in tb.config.modules:
        ws, wt = ms.witch >> 4, ms.witch & 15
        if ws in allowed or _token_end(st, ws, 1) in allowed:
            sealed = wt < len(st.stacks[ws - 1])
            page = (True, (ws, wt + 1) if sealed else None)
    raven = ms.raven is not None
    precise = (seat, "precise_landing") in ms.armed
    cost_page = opts.cost_page
    for a, prior, pend in cards:
        yield a, prior, pend, False
        variants: list[tuple[_CardAction, float]] = []
        if raven and roll and isinstance(a, MoveWizard | MoveTower) and a.card.dice:
            variants.append((replace(a, raven_timing="before"), opts.cost_raven_before))
        if precise and isinstance(a, MoveWizard):
            pos = st.wizards[tb.wizard_index[a.wizard]] >> 4
            if tb.special[(pos - 1 + a.steps) % tb.length + 1] == "web":
                variants.extend((replace(a, web_steps=n), 0.0) for n in (1, 2, 3))
        if page is not None:
            variants += [
                (replace(v, page=True, witch_guess=page[1]), extra + cost_page)
                for v, extra in [(a, 0.0), *variants]
            ]
        for v, extra in variants:
            yield v, prior + extra, pend, False
    t = st.turn
    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    if page is not None and can_play:
        # a page card discarded as unplayable (R-TURN-3) still moves the witch
        yield (
            DiscardCard(tb.colours[seat], None, page=True, witch_guess=page[1]),
            opts.cost_discard + cost_page,
            pending,
            False,
        )
    if can_play and ms.witch is not None and "witch" in tb.config.modules:
        # a page card naming the wrong tower over a sealed witch (R-MOD-WITCH-9): the tower is
        # put back, nothing moves, the turn ends; the camera sees only the turn's end
        wrong = _wrong_guess(st, ms.witch >> 4, ms.witch & 15)
        if wrong is not None:
            yield (
                DiscardCard(tb.colours[seat], None, page=True, witch_guess=wrong),
                opts.cost_card + cost_page + opts.cost_wrong_guess,
                pending,
                False,
            )


def _wrong_guess(st: GameState, ws: int, wt: int) -> tuple[int, int] | None:
    """A tower (space, tier) a release guess can name that does not cover the witch sealed at
    space ``ws`` on tier ``wt`` (any wrong tower ends the turn the same way), or None when she
    is not sealed or no other tower stands."""
    h = len(st.stacks[ws - 1])
    if wt >= h:
        return None
    for k in range(h, 0, -1):
        if k != wt + 1:
            return (ws, k)
    for s, stack in enumerate(st.stacks, 1):
        if s != ws and stack:
            return (s, len(stack))
    return None


def _module_children(
    st: GameState,
    allowed: frozenset[int],
    dests: frozenset[int] | None,
    visible: Sequence[tuple[int, int]],
    pending: tuple[Marker, ...],
    opts: TrackerOptions,
) -> Iterator[tuple[Action | None, float, tuple[Marker, ...], bool]]:
    """Expansion transitions (R-MOD-*, R-SPELLX-*): the new spells (paid or free), free casts
    of the base spells (magic tower, feathers) and feather uses, guided like the base moves.
    Illegal candidates are refused by the engine when applied."""
    tb = st.table
    ms = st.modules
    assert ms is not None
    t = st.turn
    seat = t.player
    ids = tb.wizard_ids
    casters = range(tb.n) if tb.master else (seat,)
    for cs in casters:
        ccol = tb.colours[cs]
        vials = ms.witch_vials[cs][0] if ms.witch_vials is not None else 0
        full = st.potions[cs][0] + vials
        frees = any(fs == cs for fs, _ in ms.free_casts)
        for spell in tb.spells:
            paid = full >= tb.config.spell_costs[spell]
            if spell in _BASE_SPELLS and st.potions[cs][0] >= tb.config.spell_costs[spell]:
                # the paid cast is generated with the base spells; a free one (the magic
                # tower's, a feather's) is not, and leaves the potions full
                paid = False
            variants = ((False,) if paid else ()) + ((True,) if frees else ())
            for free in variants:
                for c in _spell_casts(st, spell, ccol, allowed, dests, visible):
                    yield replace(c, free=free), opts.cost_spell, pending, False
    if ms.feathers is not None and not t.feather_used and ms.feathers[seat] > 0 and not t.ended:
        colour = tb.colours[seat]
        yield Feather(colour, "extra_card"), opts.cost_spell, pending, False
        yield Feather(colour, "free_spell"), opts.cost_spell, pending, False
        for i, s in visible:
            if s not in allowed:
                continue
            for n in range(1, 7):
                yield (
                    Feather(colour, "move_wizard", wizard=ids[i], steps=n),
                    opts.cost_spell,
                    pending,
                    False,
                )


def _spell_casts(
    st: GameState,
    spell: str,
    ccol: str,
    allowed: frozenset[int],
    dests: frozenset[int] | None,
    visible: Sequence[tuple[int, int]],
) -> Iterator[Cast]:
    """Candidate casts of ``spell`` by ``ccol`` touching the ``allowed`` spaces."""
    tb = st.table
    ids = tb.wizard_ids
    stacks = st.stacks
    length = tb.length
    if spell in ("advance_wizard", "headwind_wizard", "wizard_sprint"):
        for i, s in visible:
            if s in allowed:
                yield Cast(ccol, spell, wizard=ids[i])
    elif spell == "wizard_control":
        for i, s in visible:
            if s in allowed:
                for n in (1, 2, 3):
                    yield Cast(ccol, spell, wizard=ids[i], steps=n)
    elif spell == "fly_to_magic_tower":
        lo, hi = tb.wiz_range[tb.colours.index(ccol)]
        for i in range(lo, hi):
            p = st.wizards[i]
            if p and (p >> 4) in allowed:
                yield Cast(ccol, spell, wizard=ids[i])
    elif spell in ("advance_tower", "headwind_tower", "tower_sprint"):
        for s in allowed:
            for k in range(1, len(stacks[s - 1]) + 1):
                yield Cast(ccol, spell, space=s, tier=k)
    elif spell == "swap_tower":
        srcs = sorted(x for x in allowed if stacks[x - 1])
        for x in srcs:
            for y in srcs:
                if x < y:
                    yield Cast(ccol, spell, a=x, b=y)
    elif spell == "move_castle":
        yield Cast(ccol, spell, direction="cw")
        yield Cast(ccol, spell, direction="ccw")
    elif spell == "free_wizard":
        for s in allowed:
            for k in range(1, len(stacks[s - 1]) + 1):
                under = s << 4 | (k - 1)
                found = [i for i, p in enumerate(st.wizards) if p == under]
                for i in found:
                    yield Cast(ccol, spell, space=s, tier=k, wizard=ids[i])
                if not found:
                    yield Cast(ccol, spell, space=s, tier=k)
    elif spell in ("fountain_abundance", "precise_landing"):
        yield Cast(ccol, spell)
    elif spell in ("witch_control", "summon_raven"):
        for s in range(1, length + 1):
            if s in allowed or dests is None:
                yield Cast(ccol, spell, space=s)


def _with_repairs(
    node: _Node, allowed: frozenset[int], dests: frozenset[int] | None, opts: TrackerOptions
) -> Iterator[tuple[GameState, Action | None, float, tuple[Marker, ...], bool]]:
    """The node's children, plus children of two *repaired* versions of its state (at
    ``cost_repair``): one more card this turn (a spell was taken for a card earlier), and enough
    full potions for a spell (a potion was miscounted earlier). The camera's evidence then
    corrects bookkeeping the camera could not see."""
    st = node.state
    for action, prior, pending, implicit in _children(node, allowed, dests, opts):
        yield st, action, prior, pending, implicit
    if not allowed or st.game.over:
        return
    tb = st.table
    t = st.turn
    if not t.ended and not t.redrawn and t.cards_used >= tb.actions_per_turn + t.extra_card:
        fixed = replace(st, turn=t._replace(cards_used=tb.actions_per_turn - 1 + t.extra_card))
        tmp = _Node(fixed, 0.0, (), (), (), node.pending, node.implicit)
        for action, prior, pending, implicit in _children(tmp, allowed, dests, opts):
            if isinstance(action, MoveWizard | MoveTower):
                yield fixed, action, prior + opts.cost_repair, pending, implicit
    need = max((tb.config.spell_costs[sp] for sp in tb.spells), default=0)
    seat = t.player
    f, e, sp_ = st.potions[seat]
    if f < need and e >= need - f:
        pots = st.potions[:seat] + ((need, e - (need - f), sp_),) + st.potions[seat + 1 :]
        fixed = replace(st, potions=pots)
        tmp = _Node(fixed, 0.0, (), (), (), node.pending, node.implicit)
        for action, prior, pending, implicit in _children(tmp, allowed, dests, opts):
            if (
                isinstance(action, Cast)
                and action.player == tb.colours[seat]
                and st.potions[seat][0] < tb.config.spell_costs[action.spell]
            ):
                yield fixed, action, prior + opts.cost_repair, pending, implicit


def _close_turn(
    srch: _Search, st: GameState, opts: TrackerOptions
) -> (
    tuple[
        GameState, tuple[Action, ...], tuple[tuple[Event, ...], ...], tuple[GameState, ...], float
    ]
    | None
):
    """Discard the unplayed cards (unseen) and end the turn; None when impossible."""
    actions: list[Action] = []
    events: list[tuple[Event, ...]] = []
    states: list[GameState] = []
    cost = 0.0
    tb = st.table
    colour = tb.colours[st.turn.player]
    for _ in range(4):
        got = srch.apply(st, EndTurn())
        if got is not None:
            nxt, ev = got
            actions.append(EndTurn())
            events.append(ev)
            states.append(nxt)
            return nxt, tuple(actions), tuple(events), tuple(states), cost
        d = DiscardCard(colour, None)
        got = srch.apply(st, d)
        if got is None:
            return None
        st, ev = got
        actions.append(d)
        events.append(ev)
        states.append(st)
        cost += opts.cost_discard
    return None


def _search(
    srch: _Search, hyp: _Hyp, target: Target, opts: TrackerOptions, depth: int, anywhere: bool
) -> list[_Node]:
    """Terminal nodes reachable from ``hyp`` that explain ``target`` (all DONE markers used).

    Moves start on spaces the picture changed or the story touched; with ``anywhere`` they may
    end on any space (a space passed through in the turn looks unchanged), else only there."""
    root_views = srch.view(hyp.state)
    changed = target.changed_from(root_views)
    root = _Node(hyp.state, 0.0, (), (), (), hyp.pending, hyp.implicit)
    root.obs_cost = target.cost(root_views)
    root.score = root.obs_cost
    root.rank = root.score
    terminals: list[_Node] = []
    changed_idx = tuple(s - 1 for s in sorted(changed))
    changed_set = frozenset(changed_idx)
    todo = opts.cost_todo

    def partial(views: list[SpaceView], full: float, spell: bool = False) -> float:
        # a space where the picture changed and this path does not match it yet costs "still
        # to explain", not a mismatch: a later action of the turn may fix it (mid-turn states
        # look unlike the picture, and the true path must not fall out of the beam for that);
        # a space that matches costs nothing, so progress is rewarded
        out = full
        sc = target.space_cost
        for idx in changed_idx:
            c = sc(idx, views[idx])
            if c > todo:
                out += todo - c
        if anywhere and spell:
            # a piece staged on a space the picture shows unchanged (moved there and on again
            # later in the turn) with a spell cast since is "still to explain" too: charged in
            # full, the true story fell out of the beam behind stories that move the piece on
            # at once (4-player all-module game: a headwind between two moves of one tower).
            # Only after a spell: chains of moves through unchanged spaces charged so keep
            # wrong stories in the beam that explain a frame the search is too short for (the
            # 2-player all-module game then lost its board instead of searching deeper)
            for idx, (v, r) in enumerate(zip(views, root_views, strict=True)):
                if v is not r and v != r and idx not in changed_set:
                    c = sc(idx, v)
                    if c > todo:
                        out += todo - c
        return out

    def terminal_ok(n: _Node) -> bool:
        return all(m[0] != "done" for m in n.pending)

    seen: dict[tuple[Any, ...], _Node] = {}
    keep_paths = opts.commit_margin

    def score(child: _Node) -> None:
        views = srch.view(child.state)
        child.obs_cost = target.cost(views)
        child.score = child.prior + child.obs_cost
        spell = bool(child.actions) and isinstance(child.actions[-1], Cast | Feather)
        child.rank = child.prior + partial(views, child.obs_cost, spell)
        key = (state_key(child.state), child.pending, child.implicit)
        old = seen.get(key)
        if old is None:
            seen[key] = child
            return
        lo, hi = (child, old) if child.score < old.score else (old, child)
        if hi.score - lo.score <= keep_paths:
            # the same state by another path about as likely: kept beside (_Hyp.alts)
            _merge_paths(lo, hi)
        seen[key] = lo

    if terminal_ok(root):
        terminals.append(root)
    level = [root]
    for lvl in range(depth):
        seen = {}
        # a move ending on a space the picture shows unchanged must be moved on again: never on
        # the last level
        far = anywhere and lvl < depth - 1
        queue = list(level)
        for node in queue:
            node_views = srch.view(node.state)
            touched = frozenset(
                i + 1 for i, (v, r) in enumerate(zip(node_views, root_views, strict=True)) if v != r
            ) | frozenset(s for a in node.actions for s in _spaces_of(a, node.state.table))
            allowed = changed | touched
            dests: frozenset[int] | None = None if far else allowed
            if not allowed and (not node.pending or node.pending[0][0] != "done"):
                # nothing changed and no DONE to consume: only a turn close can matter
                allowed = frozenset()
            for base, action, prior, pending, implicit in _with_repairs(node, allowed, dests, opts):
                if action is None:
                    closed = _closed(srch, node, opts, prior, pending, implicit)
                    if closed is None:
                        continue
                    child = closed
                else:
                    got = srch.apply(base, action)
                    if got is None:
                        continue
                    nst, ev = got
                    # players press DONE and the camera sees the board before the next player
                    # moves: moves after a turn end in the same gap are less likely
                    late = node.closes
                    child = _Node(
                        nst,
                        node.prior + prior + late,
                        node.actions + (action,),
                        node.events + (ev,),
                        node.states + (nst,),
                        pending,
                        False,
                        closes=node.closes,
                        alts=(
                            _extend_paths(node.alts, (action,), (ev,), (nst,))
                            if node.alts and base is node.state
                            else ()
                        ),
                    )
                    if base.modules is not None and any(e.kind in _WITCH_HITS for e in ev):
                        # a player hit by the witch may spend a feather against it
                        for pa in _protect_variants(base, action, ev):
                            got_p = srch.apply(base, pa)
                            if got_p is not None:
                                pst, pev = got_p
                                score(
                                    _Node(
                                        pst,
                                        child.prior + opts.cost_protect * len(pa.witch_protect),
                                        node.actions + (pa,),
                                        node.events + (pev,),
                                        node.states + (pst,),
                                        pending,
                                        False,
                                        closes=node.closes,
                                    )
                                )
                    t = base.turn
                    if (
                        isinstance(action, Feather)
                        and action.use == "extra_card"
                        and t.cards_used >= base.table.actions_per_turn + t.extra_card
                    ):
                        # a feather's extra card changes nothing the camera sees: the card it
                        # pays for is searched at this level too, not one level later (a turn of
                        # two cards, a spell, the feather and its card is longer than the pass)
                        queue.append(child)
                score(child)
        if not seen:
            break
        # terminals are judged on the full picture, the beam on the partial cost
        terminals.extend(
            heapq.nsmallest(
                opts.beam, (n for n in seen.values() if terminal_ok(n)), key=lambda n: n.score
            )
        )
        level = _select(seen.values(), opts.beam, opts.beam_per_board)
        # with the DONE pressed, a story that has only to close its turn needs no beam slot for
        # it: the last move of a long turn, seen through a misread, ranks behind shorter stories
        # still to be moved on and fell out just before its close (3-player all-module game:
        # wizard, spell, tower, feather and its card, DONE). Not a level more: a quick pass
        # would then end the search with a turn too short for its invisible spells; nor in the
        # quick passes (their stories would end the search in place of the full pass's)
        if not anywhere:
            continue
        kept = {id(n) for n in level}
        ready = (
            n
            for n in seen.values()
            if n.pending and n.pending[0][0] == "done" and not n.implicit and id(n) not in kept
        )
        for node in heapq.nsmallest(opts.beam, ready, key=lambda n: n.score):
            done = _closed(srch, node, opts, 0.0, node.pending[1:], False)
            if done is None:
                continue
            score(done)
            if terminal_ok(done):
                terminals.append(done)
    return terminals


_WITCH_HITS = frozenset({"potion_emptied", "witch_vial_emptied", "witch_vial_taken"})


def _protect_variants(
    st: GameState, action: Action, events: Sequence[Event]
) -> list[MoveWizard | MoveTower | DiscardCard | Cast | Feather]:
    """``action`` with players who were hit by the witch (R-MOD-WITCH-4/5) spending a feather
    against it instead (R-MOD-WITCH-10): one variant per hit player holding a feather, and one
    with all of them. Feathers and potions are hidden from the camera."""
    ms = st.modules
    if ms is None or ms.feathers is None:
        return []
    if not isinstance(action, MoveWizard | MoveTower | DiscardCard | Cast | Feather):
        return []
    tb = st.table
    hit: list[str] = []
    for e in events:
        if e.kind in _WITCH_HITS and str(e.get("reason", "")).startswith(("witch", "wizard_met")):
            colour = str(e.get("player"))
            seat = tb.colours.index(colour) if colour in tb.colours else -1
            if seat >= 0 and ms.feathers[seat] > 0 and colour not in hit:
                hit.append(colour)
    out = [replace(action, witch_protect=(c,)) for c in hit]
    if len(hit) > 1:
        out.append(replace(action, witch_protect=tuple(hit)))
    return out


def _closed(
    srch: _Search,
    node: _Node,
    opts: TrackerOptions,
    prior: float,
    pending: tuple[Marker, ...],
    implicit: bool,
) -> _Node | None:
    """``node`` with its turn closed (DONE pressed, or ``implicit``: the next player's move
    shows it), ``prior`` (nats) added; None when the turn cannot end there."""
    got = _close_turn(srch, node.state, opts)
    if got is None:
        return None
    nst, acts, evs, sts, extra = got
    if not implicit and opts.cost_before_done and _moved_this_turn(node.actions):
        extra += opts.cost_before_done
    return _Node(
        nst,
        node.prior + prior + extra,
        node.actions + acts,
        node.events + evs,
        node.states + sts,
        pending,
        implicit,
        closes=node.closes + (opts.cost_after_close if implicit else opts.cost_after_done),
        alts=_extend_paths(node.alts, acts, evs, sts) if node.alts else (),
    )


def _select(nodes: Iterable[_Node], beam: int, per_board: int) -> list[_Node]:
    """The ``beam`` best nodes by rank, at most ``per_board`` of them per board: variants that
    differ only in turn counters, pending dice or potions must not crowd out other boards (a
    kept board's other potion counts come on top, up to ``per_board``). With
    the expansion a board's second node must differ from the first in more than the order of
    its spells and cards (e.g. in feathers: the raven moved before or after the move)."""
    out: list[_Node] = []
    count: dict[tuple[Any, ...], int] = {}
    outcomes: set[tuple[Any, ...]] = set()
    pots: set[tuple[Any, ...]] = set()
    more: list[_Node] = []
    for n in sorted(nodes, key=lambda n: n.rank):
        st = n.state
        k = board_key(st)
        c = count.get(k, 0)
        pk = (k, st.potions)
        if pk not in pots and 0 < c < 2 * per_board and (len(out) >= beam or c >= per_board):
            # another potion count of a kept board, on top of the beam: a spell the camera
            # cannot tell from a card (R-SPELL-6) must not fall out behind the cards of other
            # boards, nor behind its own board's other stories (6-player game seed 3001, input
            # 4: a tower move, Advance a Tower, a wizard move; the spell ranked 11th; with
            # modules more spells are invisible)
            pots.add(pk)
            count[k] = c + 1
            more.append(n)
            continue
        if len(out) >= beam:
            continue
        if c >= per_board:
            continue
        pots.add(pk)
        if st.modules is not None:
            # the same table reached by another order of moves (a spell before or after a
            # card: another cast window) is not a second story: with the expansion a hidden
            # counter (feathers after the raven before or after the move) is
            t = st.turn
            spells = tuple(sorted((x[0], x[1]) for x in t.casts))
            o = (k, st.potions, st.modules, *t[:4], spells, *t[5:], st.game)
            if c and o in outcomes:
                continue
            outcomes.add(o)
        count[k] = c + 1
        out.append(n)
    return out + more


def _replay(
    srch: _Search, st: GameState, actions: Sequence[Action]
) -> tuple[GameState, tuple[tuple[Event, ...], ...], tuple[GameState, ...]] | None:
    """Apply ``actions`` in order to ``st``; None when one of them is illegal there."""
    events: list[tuple[Event, ...]] = []
    states: list[GameState] = []
    for a in actions:
        got = srch.apply(st, a)
        if got is None:
            return None
        st, ev = got
        events.append(ev)
        states.append(st)
    return st, tuple(events), tuple(states)


def _spaces_of(a: Action, tb: Table) -> tuple[int, ...]:
    """The spaces a tower action lifts from and lands on (after web continuation)."""
    length = tb.length
    if isinstance(a, MoveTower):
        d = (a.space - 1 + a.steps) % length + 1
        return (a.space, d if tb.special[d] is None else _web_end(tb, a.space, d))
    if isinstance(a, Redraw) and a.push is not None:
        d = a.push[0] % length + 1
        return (a.push[0], d if tb.special[d] is None else _web_end(tb, a.push[0], d))
    if isinstance(a, Cast):
        if a.space is not None:
            step = {"advance_tower": 2, "headwind_tower": -2}.get(a.spell, 0)
            return (a.space, (a.space - 1 + step) % length + 1)
        if a.a is not None and a.b is not None:
            return (a.a, a.b)
    return ()


# --------------------------------------------------------------------------------------------
# Describing actions to players


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def describe(action: Action | None, before: GameState) -> str:
    """An action in players' words, e.g. "moved the top 2 towers from space 7 to space 10"."""
    if action is None:
        return "nothing moved"
    length = before.table.length
    if isinstance(action, MoveTower):
        h = before.height(action.space)
        n = h - action.tier + 1
        what = (
            "the top tower" if n == 1 else ("the whole stack" if n == h else f"the top {n} towers")
        )
        d = (action.space - 1 + action.steps) % length + 1
        moved = f"{action.player} moved {what} from space {action.space} to space {d}"
        return moved + _hidden_choices(action)
    if isinstance(action, MoveWizard):
        pos = before.wizard_position(action.wizard)
        s = pos[0] if pos else 0
        d = (s - 1 + action.steps) % length + 1
        moved = f"{action.player} moved a {action.player} wizard from space {s} to space {d}"
        return moved + _hidden_choices(action)
    if isinstance(action, Redraw):
        if action.push is None:
            return f"{action.player} redrew the hand"
        s, k = action.push
        return f"{action.player} redrew and pushed the tower at tier {k} of space {s} one space"
    if isinstance(action, Cast):
        if action.spell == "free_wizard":
            return (
                f"{action.player} lifted the {_ordinal(action.tier or 0)} tower from the bottom "
                f"on space {action.space} to free a wizard"
            )
        if action.spell == "swap_tower":
            return f"{action.player} swapped the top towers of spaces {action.a} and {action.b}"
        if action.space is not None:
            h = before.height(action.space)
            n = h - (action.tier or 1) + 1
            what = "the top tower" if n == 1 else f"the top {n} towers"
            return f"{action.player} cast {action.spell} on {what} of space {action.space}"
        return f"{action.player} cast {action.spell}"
    if isinstance(action, DiscardCard):
        if action.witch_guess is not None:
            s, k = action.witch_guess
            w = before.modules.witch if before.modules is not None else None
            if w is None or w != (s << 4 | (k - 1)):
                return (
                    f"{action.player} lifted the {_ordinal(k)} tower from the bottom on space "
                    f"{s} to release the witch, but she was not under it (the turn ended)"
                )
        return f"{action.player} discarded a card"
    if isinstance(action, EndTurn):
        return "the turn ended"
    return str(action.kind)


def _hidden_choices(action: MoveTower | MoveWizard) -> str:
    """The expansion's choices of a card move the camera does not see, in players' words, so
    two stories that differ only in them are told apart on the phone."""
    out = ""
    if action.page:
        if action.witch_guess is not None:
            s, k = action.witch_guess
            out += (
                f", played as a page card lifting the {_ordinal(k)} tower from the bottom on "
                f"space {s} to release the witch"
            )
        else:
            out += ", played as a page card (the witch moved one space first)"
    if action.raven_timing == "before":
        out += ", the raven flying before the move"
    if action.witch_protect:
        out += f", {' and '.join(action.witch_protect)} spending a feather against the witch"
    return out


# --------------------------------------------------------------------------------------------
# The tracker


class Tracker:
    """The belief about one game (see the module docstring).

    :param state: the state the table is in (usually the setup, hands unknown:
        ``setup(config, None)``).
    :param options: the :class:`TrackerOptions`.
    """

    def __init__(self, state: GameState, options: TrackerOptions | None = None) -> None:
        self.options = options or TrackerOptions()
        self._initial = state
        self._root = state
        self._hyps: tuple[_Hyp, ...] = (_Hyp(state, 0.0, (), (), False),)
        self._history: tuple[Committed, ...] = ()
        self._question: Question | None = None
        self._question_groups: tuple[tuple[_Hyp, ...], ...] = ()
        self._qcount = 0
        self._committed_count = 0
        self._unexplained = 0
        self._last_mismatch: tuple[int, ...] = ()
        self._last_obs: Observation | None = None
        self._pace = (0, 0)
        """Committed frames that showed moves, and their moves (``action_pace``)."""
        self._srch = _Search()

    @classmethod
    def new(cls, config: Config, options: TrackerOptions | None = None) -> Tracker:
        """A tracker for a new game of ``config`` at its setup (hands unknown, R-SETUP-*)."""
        return cls(setup(config, None), options)

    # -- read-only views ---------------------------------------------------------------------

    @property
    def initial_state(self) -> GameState:
        """The setup position the tracker started from (R-SETUP-*): the state before the first
        committed action."""
        return self._initial

    @property
    def state(self) -> GameState:
        """The best current hypothesis. With a DONE press waiting for the next frame, the state
        that press leaves (the turn closed, R-TURN-4/8: the next player's turn), so the table
        answers the press at once; moves of the closed turn that the next frame still shows are
        then put before the DONE (:meth:`end_turn`)."""
        best = min(self._hyps, key=lambda h: h.cost)
        st = best.state
        if best.pending == (("done",),) and not (
            best.implicit and not st.turn.cards_used and not st.turn.casts and not st.turn.redrawn
        ):
            closed = _close_turn(self._srch, st, self.options)
            if closed is not None:
                return closed[0]
        return st

    @property
    def committed_state(self) -> GameState:
        """The state every hypothesis agrees on (the last commit)."""
        return self._root

    @property
    def hypotheses(self) -> tuple[tuple[GameState, float], ...]:
        """(state, cost in nats above the best) of every hypothesis, best first."""
        hs = sorted(self._hyps, key=lambda h: h.cost)
        return tuple((h.state, h.cost - hs[0].cost) for h in hs)

    @property
    def question(self) -> Question | None:
        return self._question

    @property
    def uncommitted(self) -> tuple[Action, ...]:
        """What the best hypothesis says happened since the last commit (not yet certain)."""
        best = min(self._hyps, key=lambda h: h.cost)
        return tuple(a for step in best.trail for a in step.actions)

    def question_candidates(self) -> tuple[tuple[GameState, ...], ...]:
        """Per option of the open question, the states that answer stands for (host page,
        bench oracle). Empty when no question is open."""
        if self._question is None:
            return ()
        return tuple(tuple(h.state for h in g) for g in self._question_groups)

    @property
    def history(self) -> tuple[Committed, ...]:
        """Every committed action of the game so far."""
        return self._history

    def state_json(self) -> dict[str, Any]:
        return dump_state(self.state)

    # -- cheap rollback (the journal writes after the tracker computed an update) -------------

    def checkpoint(self) -> dict[str, Any]:
        """An opaque copy of the belief (all values immutable, so this is cheap)."""
        return {k: v for k, v in vars(self).items() if k != "_srch"}

    def rollback(self, cp: Mapping[str, Any]) -> None:
        """Return to a :meth:`checkpoint`."""
        for k, v in cp.items():
            setattr(self, k, v)

    # -- inputs --------------------------------------------------------------------------------

    def parse_observation(self, obs: Observation | Mapping[str, Any]) -> Observation:
        """Validate an observation (object or JSON) for this game's track.

        :raises ObservationError: naming the bad field: unknown colour, negative count, a space
            beyond the track, or too few spaces read.
        """
        length = self._root.table.length
        if isinstance(obs, Observation):
            parsed = Observation.from_json(obs.to_json(), length)
        else:
            parsed = Observation.from_json(obs, length)
        need = int(self.options.min_spaces * length + 0.999)
        if not parsed.unstable and len(parsed.spaces) < need:
            raise ObservationError(
                f"spaces: only {len(parsed.spaces)} of {length} spaces were read; "
                f"at least {need} are needed to explain a frame"
            )
        return parsed

    def observe(self, obs: Observation | Mapping[str, Any]) -> TrackerUpdate:
        """Explain one stable frame.

        :raises ObservationError: malformed observation (the belief is unchanged).
        """
        parsed = self.parse_observation(obs)
        if parsed.unstable:
            return self._update((), (), "waiting for a still board", explained=False)
        target = Target(parsed, self._root.table.length, self.options.noise)
        new = self._reconcile(target)
        if new is None:
            self._unexplained += 1
            if self._unexplained >= self.options.wait_frames and self._last_mismatch:
                spaces = ", ".join(str(s) for s in self._last_mismatch)
                health = f"board doesn't match at spaces {spaces}"
            else:
                health = "waiting for a still board"
            return self._update((), (), health, explained=False)
        self._unexplained = 0
        self._last_obs = parsed
        self._hyps = new
        committed = self._commit()
        self._maybe_ask()
        return self._update(committed, (), "ok")

    def dice(self, rolls: Sequence[int], dice_allowed: int) -> TrackerUpdate:
        """The dice buttons rolled ``rolls`` (all results in order; the last is used, R-CARD-4)
        for a card with ``dice_allowed`` dice (1-3).

        :raises ValueError: rolls outside 1..6, none, or more than ``dice_allowed``.
        """
        if type(dice_allowed) is not int or not 1 <= dice_allowed <= 3:
            raise ValueError("dice_allowed: a move card shows 1 to 3 dice (R-DECK-1)")
        rl = tuple(rolls)
        if not rl or len(rl) > dice_allowed:
            raise ValueError(f"rolls: 1 to {dice_allowed} rolls for this card (R-CARD-4)")
        for r in rl:
            if type(r) is not int or not 1 <= r <= 6:
                raise ValueError(f"rolls: a die shows 1 to 6, not {r!r} (R-CARD-5)")
        marker: Marker = ("dice", rl, dice_allowed)
        self._hyps = tuple(replace(h, pending=h.pending + (marker,)) for h in self._hyps)
        self._follow_question()
        return self._update((), (), "ok")

    def end_turn(self) -> TrackerUpdate:
        """The DONE button: the current player's turn is over (R-TURN-4/8).

        Moves the camera has not seen yet may still belong to this turn, so the DONE is kept
        pending and the next frame's explanation closes the turn after them. A DONE right after
        a turn the tracker already ended unannounced may belong to that turn (kept as an
        alternative).
        """
        out: list[_Hyp] = []
        marker: Marker = ("done",)
        for h in self._hyps:
            out.append(replace(h, pending=h.pending + (marker,)))
            t = h.state.turn
            if not h.pending and h.implicit and not t.cards_used and not t.casts and not t.redrawn:
                out.append(
                    replace(
                        h, cost=h.cost + self.options.cost_pending_done, pending=(), implicit=False
                    )
                )
        self._hyps = self._prune(out)
        self._follow_question()
        return self._update((), (), "ok")

    def _follow_question(self) -> None:
        """An open question's options stand for the stories a button press (dice, DONE) just
        extended: the same trail to the same state, with the press pending. An answer given
        after the press keeps it (the groups would otherwise hold the stories from before the
        press, and the answer would drop it). An option none of whose stories survived the
        press withdraws the question."""
        if self._question is None:
            return
        kept = tuple(
            tuple(
                h for h in self._hyps if any(h.trail is g.trail and h.state is g.state for g in grp)
            )
            for grp in self._question_groups
        )
        if all(kept):
            self._question_groups = kept
        else:
            self._question = None
            self._question_groups = ()

    def answer(self, question_id: str, option: int) -> TrackerUpdate:
        """The players' answer to the open question.

        :raises ValueError: no such open question, or the option is out of range.
        """
        q = self._question
        if q is None or q.id != question_id:
            raise ValueError(f"answer: {question_id!r} is not the open question")
        if type(option) is not int or not 0 <= option < len(q.options):
            raise ValueError(f"answer: option must be 0..{len(q.options) - 1}")
        groups = self._question_groups
        keep = groups[option]
        split = _answer_key(groups)
        if split is not None:
            # the answer tells what the players saw (the board, a player's potions, whose
            # turn), nothing more: every story of that turn that agrees with it stays, also
            # those the question left out (further from the best: another potion count of the
            # chosen board, a spell instead of a card), else the true potions are lost with
            # the other options
            chosen = {split(h.state) for h in keep}
            turns = {h.state.turn.player for h in keep}
            keep = keep + tuple(
                h
                for h in self._hyps
                if split(h.state) in chosen
                and h.state.turn.player in turns
                and not any(h is g for g in keep)
            )
        self._hyps = self._prune(keep)
        self._question = None
        self._question_groups = ()
        committed = self._commit(force=True)
        self._maybe_ask()
        return self._update(committed, (), "ok")

    def undo(self) -> TrackerUpdate:
        """Take back the most recent move: uncommitted moves first (back to the last commit),
        else the last committed action (players physically took it back).

        :raises ValueError: nothing to undo (still at the setup).
        """
        best = min(self._hyps, key=lambda h: h.cost)
        if any(step.actions for step in best.trail) or any(h.pending for h in self._hyps):
            undone = tuple(
                Committed(a, ev, s)
                for step in reversed(best.trail)
                for a, ev, s in reversed(
                    list(zip(step.actions, step.events, step.states, strict=True))
                )
            )
            self._reset(self._root)
            return self._update((), undone, "ok")
        if not self._history:
            raise ValueError("undo: nothing to take back")
        last = self._history[-1]
        self._history = self._history[:-1]
        self._committed_count -= 1
        prev = self._history[-1].state if self._history else self._initial
        self._root = prev
        self._reset(prev)
        return self._update((), (last,), "ok")

    def correct(self, state: GameState | Mapping[str, Any]) -> TrackerUpdate:
        """Replace the belief by a full state from the host page.

        :raises FormatError: malformed state JSON; :raises ValueError: another game's state
            (other players or track). The belief is unchanged then.
        """
        st = state if isinstance(state, GameState) else load_state(state)
        old = self._root.table
        if st.table.colours != old.colours or st.table.length != old.length:
            raise ValueError("correct: the state is of another game (players or track differ)")
        c = Committed(None, (Event("correction", {}),), st)
        self._history = self._history + (c,)
        self._committed_count += 1
        self._root = st
        self._reset(st)
        return self._update((c,), (), "ok")

    # -- internals -----------------------------------------------------------------------------

    def _reset(self, st: GameState) -> None:
        self._hyps = (_Hyp(st, 0.0, (), (), False),)
        self._question = None
        self._question_groups = ()
        self._unexplained = 0

    def _per_action(self) -> bool:
        """The camera has seen the table after about every move so far (``action_pace``):
        the committed frames and the best story's held ones."""
        frames, moves = self._pace
        best = min(self._hyps, key=lambda h: h.cost)
        for step in best.trail:
            k = _moves(step.actions)
            if k:
                frames += 1
                moves += k
        opts = self.options
        return frames >= opts.pace_frames and moves <= opts.action_pace * frames

    def _count_pace(self, steps: Iterable[_Step]) -> None:
        frames, moves = self._pace
        for step in steps:
            k = _moves(step.actions)
            if k:
                frames += 1
                moves += k
        self._pace = (frames, moves)

    def _reconcile(self, target: Target) -> tuple[_Hyp, ...] | None:
        opts = self.options
        srch = self._srch
        out: list[_Hyp] = []
        best_obs = float("inf")
        best_mismatch: tuple[int, ...] = ()
        # expansion turns are longer: a feather's extra card, free spells, fountain casts
        more = opts.module_depth if self._root.modules is not None else 0
        # (destinations anywhere, depth, good enough, roots): the quick passes only end moves
        # on spaces that changed; the full pass anywhere, since a piece staged on a space and
        # moved on in the same turn (two moves of one tower, 16 -> 4 -> 8) leaves that space
        # unchanged, and a guided search then finds only wrong stories (another root's hidden
        # wizards, moves after the DONE): the 2-player bench lost 40 % of its turns to them
        passes = [(False, d, opts.exact, len(self._hyps)) for d in opts.quick_depths] + [
            (True, opts.depth + more, target.bad_frame, opts.full_roots),
        ]
        if self._unexplained >= 1:
            # the previous frame was not explained either: not a hand in the picture but more
            # happened than a turn (or a piece moved far): search deeper, destinations anywhere
            deep = opts.deep_depth
            if self._unexplained >= 2 and any(
                sum(m[0] == "done" for m in h.pending) >= 2 for h in self._hyps
            ):
                # a stop's frames were all too noisy, then DONE was pressed again: two whole
                # turns to cross, and with spells a turn takes ``depth`` transitions (6-player
                # games lost the rest of the game to this)
                deep = max(deep, 2 * opts.depth)
            passes.append((True, deep, target.bad_frame, opts.deep_roots))
        if self._per_action():
            opts = replace(opts, cost_after_done=0.0, cost_before_done=opts.cost_after_done)
        # a quick pass's story ends the search by its picture cost plus its root's distance
        # from the best root: an exact picture from a root 11 nats behind (another story of
        # the last frame) is not what the full pass from the best roots would keep
        base = min(h.cost for h in self._hyps)
        for anywhere, depth, good, nroots in passes:
            out = []
            best_obs = float("inf")
            best_near = float("inf")
            roots = sorted(self._hyps, key=lambda h: h.cost)
            # hypotheses that differ only in potions share one search: the best of them is
            # searched, the others replay its explanations (a spell they cannot pay fails);
            # ``nroots`` limits the searches; a searched board's potion stories further down
            # are replayed too (up to ``keep_per_board``): the true potions, a spell or two
            # behind the cheapest story, would be dropped
            groups: dict[tuple[Any, ...], list[_Hyp]] = {}
            for i, h in enumerate(roots):
                t = h.state.turn
                gkey = (board_key(h.state), t, h.state.game, h.pending, h.implicit)
                if gkey in groups:
                    if i < nroots or len(groups[gkey]) < opts.keep_per_board:
                        groups[gkey].append(h)
                elif i < nroots:
                    groups[gkey] = [h]
            for members in groups.values():
                lead = members[0]
                found = _search(srch, lead, target, opts, depth, anywhere)
                for n in found:
                    if n.obs_cost < best_obs:
                        best_obs = n.obs_cost
                        best_mismatch = tuple(target.mismatched(srch.view(n.state)))
                    best_near = min(best_near, lead.cost - base + n.obs_cost)
                    step = _Step(n.state, n.actions, n.events, n.states, n.alts)
                    out.append(
                        lead.extended(n.state, lead.cost + n.score, step, n.pending, n.implicit)
                    )
                for h in members[1:]:
                    for n in found:
                        replayed = _replay(srch, h.state, n.actions)
                        if replayed is None:
                            continue
                        rst, revs, rsts = replayed
                        alt_paths: list[_Path] = []
                        for a, _e, _s in n.alts:
                            got_r = _replay(srch, h.state, a)
                            if got_r is not None and state_key(got_r[0]) == state_key(rst):
                                alt_paths.append((a, got_r[1], got_r[2]))
                        step = _Step(rst, n.actions, revs, rsts, tuple(alt_paths))
                        out.append(h.extended(rst, h.cost + n.score, step, n.pending, n.implicit))
            if (best_obs if anywhere else best_near) <= good:
                break
        if not out or best_obs > target.bad_frame:
            if not best_mismatch:
                best = min(self._hyps, key=lambda h: h.cost)
                best_mismatch = tuple(target.mismatched(srch.view(best.state)))
            self._last_mismatch = best_mismatch
            return None
        return self._prune(out)

    def _prune(self, hyps: Iterable[_Hyp]) -> tuple[_Hyp, ...]:
        opts = self.options
        merged: dict[tuple[Any, ...], _Hyp] = {}
        for h in hyps:
            key = (state_key(h.state), h.pending, h.implicit)
            old = merged.get(key)
            if old is None:
                merged[key] = h
                continue
            lo, hi = (h, old) if h.cost < old.cost else (old, h)
            if hi.cost - lo.cost <= opts.commit_margin:
                # the same table now by another story about as likely: it is kept beside the
                # cheaper one, so a commit never claims a path that was one of several
                lo = _with_alts(lo, hi.paths())
            merged[key] = lo
        if not merged:
            return self._hyps
        best = min(h.cost for h in merged.values())
        alive = [
            replace(h, cost=h.cost - best) for h in merged.values() if h.cost - best <= opts.margin
        ]
        alive.sort(key=lambda h: (h.cost, len(h.pending)))
        if len(alive) <= opts.keep or self._root.modules is None:
            # base game: potion variants of the true board must stay (the end-to-end game
            # seed 3 commits 32 wrong states of 40 with the per-board limit, 10 of 34 without)
            return tuple(alive[: opts.keep])
        # stories that differ only in what the camera cannot see (potions, feathers, the
        # order of moves) must not crowd out another board: a frame that misses a piece makes
        # a wrong board cheapest for a moment, and the true one must survive to the next frame
        out: list[_Hyp] = []
        rest: list[_Hyp] = []
        count: dict[tuple[Any, ...], int] = {}
        pots: set[tuple[Any, ...]] = set()
        for h in alive:
            k = board_key(h.state)
            c = count.get(k, 0)
            pk = (k, h.state.potions)
            # another potion count of a board is another spell story, not a variant of one: it
            # may take a board's slots up to twice (a spell cast between two cards ties with
            # stories of other spells and fell out behind boards 7 nats further)
            limit = opts.keep_per_board * (1 if pk in pots else 2)
            if c < limit and len(out) < opts.keep:
                count[k] = c + 1
                pots.add(pk)
                out.append(h)
            else:
                rest.append(h)
        out.extend(rest[: opts.keep - len(out)])
        out.sort(key=lambda h: (h.cost, len(h.pending)))
        return tuple(out)

    def _commit(self, force: bool = False) -> tuple[Committed, ...]:
        """Commit, oldest first, what every story within ``commit_margin`` of the best claims
        (hypotheses and their alternative trails, :class:`_Hyp`): the states after each action
        of a step. Worse rivals are dropped then. The newest step waits for one more frame
        (unless ``force``: an answer).

        Stories that agree on the table now but not on how it got there (two moves in another
        order, a card and a spell swapped between frames) can never be told apart by a later
        frame: what they share is committed at once, and the stretch where they differ as
        one entry (action None, event ``order_unseen`` with the stories in players' words)
        that ends in the state they all reach. The history never claims a state the tracker
        does not know.

        Stories that disagree about the table now are held: a later frame, the DONE press or a
        spell's cost decides them; after ``max_lag`` held steps the players are asked
        (:meth:`_maybe_ask`) what they can see (hidden pieces, potions, whose turn), and only
        when no player could tell (a card count) the stretch until the stories meet again is
        committed as above."""
        opts = self.options
        hyps = self._hyps
        committed: list[Committed] = []
        while True:
            n = min(len(h.trail) for h in hyps)
            limit = n if force else n - 1
            if limit <= 0:
                break
            best = min(hyps, key=lambda h: h.cost)
            near = [h for h in hyps if h.cost - best.cost <= opts.commit_margin]
            paths = [t for h in near for t in h.paths()]
            first = best.trail[0]
            fp0 = _step_print(first)
            if not first.alts and all(t[0] is first or _step_print(t[0]) == fp0 for t in paths):
                self._count_pace((first,))
                for a, ev, st in zip(first.actions, first.events, first.states, strict=True):
                    committed.append(Committed(a, ev, st))
                self._root = first.state
                hyps = _advance(hyps, 1, best.cost)
                continue
            key0 = state_key(first.state)
            if all(state_key(t[0].state) == key0 for t in paths):
                # they agree where the step ends, not on the way there
                self._count_pace((first,))
                committed.extend(_shared_stretch(paths, best.trail, 0, self._root))
                self._root = first.state
                hyps = _advance(hyps, 1, best.cost)
                continue
            if not _same_now(near):
                if n <= opts.max_lag or self._question is not None:
                    break
                if opts.lag_questions and _lag_question(near, self._root) is not None:
                    # the rivals disagree about the table as it is now (a card or a spell:
                    # potions; or hidden pieces): the players are asked (_maybe_ask), the best
                    # is never taken on its cost alone
                    break
            meet = _meeting(paths, limit)
            if meet is None and not _same_now(near):
                # they never meet in one state (a move of the next player already, or not),
                # but from some step on they agree on all the players can see and count: what
                # comes before is committed as one stretch, not the best's steps (they claim
                # the best's potions: a spell now instead of the true one turns ago)
                meet = _meeting(paths, limit, _table_key)
            if meet is None:
                if _same_now(near):
                    break  # they meet in the newest step: one more frame
                # what they disagree about no player can see and never ends (a card count):
                # the best's step is taken
                self._count_pace((first,))
                for a, ev, st in zip(first.actions, first.events, first.states, strict=True):
                    committed.append(Committed(a, ev, st))
                self._root = first.state
                hyps = _advance(hyps, 1, best.cost)
                continue
            self._count_pace(best.trail[: meet + 1])
            committed.extend(_shared_stretch(paths, best.trail, meet, self._root))
            self._root = best.trail[meet].state
            hyps = _advance(hyps, meet + 1, best.cost)
        self._hyps = hyps
        if committed:
            self._history = (self._history + tuple(committed))[-500:]
            self._committed_count += len(committed)
        return tuple(committed)

    def _maybe_ask(self) -> None:
        """Ask when hypotheses close to the best differ in hidden pieces (or, at the end of the
        game, in potions)."""
        if self._question is not None:
            # keep the question if its groups are all still alive
            kept = tuple(
                tuple(h for h in self._hyps if any(_same(h, g) for g in grp))
                for grp in self._question_groups
            )
            if all(kept) and len(kept) > 1:
                self._question_groups = kept
                return
            self._question = None
            self._question_groups = ()
        opts = self.options
        hyps = sorted(self._hyps, key=lambda h: h.cost)
        if opts.lag_questions and min(len(h.trail) for h in hyps) > opts.max_lag:
            # held too long: what the camera cannot tell (a card or a spell, hidden pieces) is
            # asked about the table as it is now, never taken from the best's cost (_commit)
            near = [h for h in hyps if h.cost - hyps[0].cost <= opts.commit_margin]
            lag = _lag_question(near, self._root)
            if lag is not None:
                text, options, lag_groups = lag
                self._qcount += 1
                self._question = Question(f"q{self._qcount}", text, options)
                self._question_groups = lag_groups
                return
        # rivals that disagree on whose turn it is (a move of the next player already, or not)
        # are decided by the next turns and the DONE button, not by the players
        p0 = hyps[0].state.turn.player
        close = [
            h
            for h in hyps
            if h.cost - hyps[0].cost <= opts.ask_margin and h.state.turn.player == p0
        ]
        if len(close) < 2:
            return
        # only about moves a later frame has confirmed
        if any(len(h.trail) < 2 for h in close):
            over = hyps[0].state.game.over
            if not over:
                return
        groups: dict[tuple[Any, ...], list[_Hyp]] = {}
        for h in close:
            groups.setdefault(board_key(h.state), []).append(h)
        kind = "board"
        if len(groups) < 2:
            if not hyps[0].state.game.over:
                return
            groups = {}
            for h in close:
                groups.setdefault((h.state.potions,), []).append(h)
            kind = "potions"
            if len(groups) < 2:
                return
        ordered = sorted(groups.values(), key=lambda g: min(x.cost for x in g))
        self._qcount += 1
        qid = f"q{self._qcount}"
        if kind == "potions":
            text, options = _potion_question(ordered)
        else:
            text, options = _board_question(ordered, self._root)
        self._question = Question(qid, text, options)
        self._question_groups = tuple(tuple(g) for g in ordered)

    def _update(
        self,
        committed: tuple[Committed, ...],
        undone: tuple[Committed, ...],
        health: str,
        explained: bool = True,
    ) -> TrackerUpdate:
        if health == "ok" and self._question is not None:
            health = "ok"
        return TrackerUpdate(
            committed=committed,
            undone=undone,
            state=self.state,
            question=self._question,
            health=health,
            hypotheses=len(self._hyps),
            explained=explained,
        )

    # -- JSON ------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Everything needed to restore this exact belief (journal snapshots)."""

        def step_json(s: _Step) -> dict[str, Any]:
            return {
                "state": dump_state(s.state),
                "actions": [dump_action(a) for a in s.actions],
                "events": [[dump_event(e) for e in ev] for ev in s.events],
                "states": [dump_state(x) for x in s.states],
                "alts": [
                    {
                        "actions": [dump_action(a) for a in acts],
                        "events": [[dump_event(e) for e in ev] for ev in evs],
                        "states": [dump_state(x) for x in sts],
                    }
                    for acts, evs, sts in s.alts
                ],
            }

        def hyp_json(h: _Hyp) -> dict[str, Any]:
            return {
                "state": dump_state(h.state),
                "cost": h.cost,
                "trail": [step_json(s) for s in h.trail],
                "pending": [_marker_json(m) for m in h.pending],
                "implicit": h.implicit,
                "alts": [[step_json(s) for s in t] for t in h.alts],
            }

        return {
            "version": 1,
            "options": self.options.to_json(),
            "initial": dump_state(self._initial),
            "root": dump_state(self._root),
            "hypotheses": [hyp_json(h) for h in self._hyps],
            "history": [
                {
                    "action": None if c.action is None else dump_action(c.action),
                    "events": [dump_event(e) for e in c.events],
                    "state": dump_state(c.state),
                }
                for c in self._history[-20:]
            ],
            "history_length": self._committed_count,
            "question": None if self._question is None else self._question.to_json(),
            "question_groups": [
                [self._hyps.index(h) for h in g if h in self._hyps] for g in self._question_groups
            ],
            "qcount": self._qcount,
            "unexplained": self._unexplained,
            "pace": list(self._pace),
            "last_mismatch": list(self._last_mismatch),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tracker:
        """:raises ValueError: (or ``FormatError``) for malformed data."""
        if not isinstance(data, Mapping) or data.get("version") != 1:
            raise ValueError("tracker: expected a version 1 tracker object")
        options = TrackerOptions.from_json(data.get("options", {}))
        tr = cls(load_state(data["initial"]), options)
        tr._root = load_state(data["root"])

        def step_from(d: Mapping[str, Any]) -> _Step:
            return _Step(
                load_state(d["state"]),
                tuple(load_action(a) for a in d["actions"]),
                tuple(tuple(load_event(e) for e in ev) for ev in d["events"]),
                tuple(load_state(x) for x in d["states"]),
                tuple(
                    (
                        tuple(load_action(a) for a in p["actions"]),
                        tuple(tuple(load_event(e) for e in ev) for ev in p["events"]),
                        tuple(load_state(x) for x in p["states"]),
                    )
                    for p in d.get("alts", [])
                ),
            )

        hyps = []
        for h in data["hypotheses"]:
            hyps.append(
                _Hyp(
                    load_state(h["state"]),
                    float(h["cost"]),
                    tuple(step_from(s) for s in h["trail"]),
                    tuple(_marker_from(m) for m in h["pending"]),
                    bool(h["implicit"]),
                    tuple(tuple(step_from(s) for s in t) for t in h.get("alts", [])),
                )
            )
        if not hyps:
            raise ValueError("tracker.hypotheses: at least one is needed")
        tr._hyps = tuple(hyps)
        tr._history = tuple(
            Committed(
                None if c["action"] is None else load_action(c["action"]),
                tuple(load_event(e) for e in c["events"]),
                load_state(c["state"]),
            )
            for c in data.get("history", [])
        )
        q = data.get("question")
        if q is not None:
            tr._question = Question(str(q["id"]), str(q["text"]), tuple(q["options"]))
            tr._question_groups = tuple(
                tuple(tr._hyps[i] for i in g) for g in data.get("question_groups", [])
            )
        tr._qcount = int(data.get("qcount", 0))
        tr._committed_count = int(data.get("history_length", len(tr._history)))
        tr._unexplained = int(data.get("unexplained", 0))
        pace = data.get("pace", [0, 0])
        tr._pace = (int(pace[0]), int(pace[1]))
        tr._last_mismatch = tuple(int(s) for s in data.get("last_mismatch", []))
        return tr

    def restore_json(self, data: Mapping[str, Any]) -> None:
        """Replace this tracker's belief by :meth:`to_json` data (in place)."""
        other = Tracker.from_json(data)
        self.rollback(other.checkpoint())


def _moved_this_turn(actions: Sequence[Action]) -> bool:
    """A move among ``actions`` after their last turn end."""
    for a in reversed(actions):
        if isinstance(a, EndTurn):
            return False
        if not isinstance(a, DiscardCard):
            return True
    return False


def _moves(actions: Iterable[Action]) -> int:
    """The moves among ``actions`` a frame can show (not turn ends and discards)."""
    return sum(1 for a in actions if not isinstance(a, EndTurn | DiscardCard))


def _advance(hyps: Sequence[_Hyp], m: int, base: float) -> tuple[_Hyp, ...]:
    """The hypotheses after their first ``m`` steps were committed (the best's state after
    step ``m`` is now the root): the stories (trails) that pass through that state, cut
    there; costs relative to ``base``. A hypothesis none of whose stories passes through it
    is dropped."""
    best = min(hyps, key=lambda h: h.cost)
    key = state_key(best.trail[m - 1].state)
    out: list[_Hyp] = []
    for h in hyps:
        trails = [t[m:] for t in h.paths() if state_key(t[m - 1].state) == key]
        if not trails:
            continue
        nh = _Hyp(h.state, h.cost - base, trails[0], h.pending, h.implicit)
        out.append(_with_alts(nh, trails[1:]))
    return tuple(out)


def _meeting(
    paths: Sequence[Sequence[_Step]],
    limit: int,
    key_of: Callable[[GameState], tuple[Any, ...]] = state_key,
) -> int | None:
    """The first step (below ``limit``) after which every trail of ``paths`` is in the same
    state (the same ``key_of``), or None."""
    for j in range(limit):
        key = key_of(paths[0][j].state)
        if all(key_of(t[j].state) == key for t in paths[1:]):
            return j
    return None


def _table_key(st: GameState) -> tuple[Any, ...]:
    """The board, every player's potions, whose turn and the game's progress."""
    return (board_key(st), st.potions, st.turn.player, st.game)


def _shared_stretch(
    paths: Sequence[Sequence[_Step]], best: Sequence[_Step], meet: int, root: GameState
) -> list[Committed]:
    """The commits for the first ``meet + 1`` steps of stories that all end them in the same
    state: the actions they share at the start (same action, same state after it), then one
    entry (action None, event ``order_unseen``) for the rest, ending in the shared state."""
    seqs: list[list[tuple[Action, tuple[Event, ...], GameState, GameState]]] = []
    for t in paths:
        combos: list[list[_Path]] = [[]]
        for step in t[: meet + 1]:
            combos = [c + [p] for c in combos for p in step.paths()][:_MAX_STORIES]
        for combo in combos:
            seq = []
            before = root
            for acts, evs, sts in combo:
                for a, ev, st in zip(acts, evs, sts, strict=True):
                    seq.append((a, ev, st, before))
                    before = st
            seqs.append(seq)
    out: list[Committed] = []
    p = 0
    lead = seqs[0]
    while p < min(len(q) for q in seqs) and all(
        q[p][0] == lead[p][0] and state_key(q[p][2]) == state_key(lead[p][2]) for q in seqs[1:]
    ):
        out.append(Committed(lead[p][0], lead[p][1], lead[p][2]))
        p += 1
    options: list[str] = []
    stories: list[list[dict[str, Any]]] = []
    for q in seqs:
        rest = q[p:]
        words = "; then ".join(
            describe(a, before)
            for a, _, _, before in rest
            if not isinstance(a, DiscardCard) or a.witch_guess is not None
        )
        words = words or "nothing moved"
        if words not in options:
            options.append(words)
            stories.append([dump_action(a) for a, _, _, _ in rest])
    out.append(
        Committed(
            None,
            (Event("order_unseen", {"options": options, "stories": stories}),),
            best[meet].state,
        )
    )
    return out


def _same(a: _Hyp, b: _Hyp) -> bool:
    return a is b or (state_key(a.state) == state_key(b.state) and a.pending == b.pending)


def _same_now(hyps: Sequence[_Hyp]) -> bool:
    """Every hypothesis of ``hyps`` stands for the same table now (board, potions, turn)."""
    key = state_key(hyps[0].state)
    return all(state_key(h.state) == key for h in hyps[1:])


def _lag_question(
    near: Sequence[_Hyp], root: GameState
) -> tuple[str, tuple[str, ...], tuple[tuple[_Hyp, ...], ...]] | None:
    """The question that splits ``near`` (held hypotheses) by what the players can see on the
    table now: the hidden pieces (asked like :func:`_board_question`), else one player's
    potions (full and empty tokens, R-POTION-1), else whose turn it is. None when they agree."""
    if len(near) < 2 or _same_now(near):
        return None

    def split(key: Any) -> list[list[_Hyp]]:
        groups: dict[Any, list[_Hyp]] = {}
        for h in near:
            groups.setdefault(key(h.state), []).append(h)
        return sorted(groups.values(), key=lambda g: min(x.cost for x in g))

    by_board = split(board_key)
    if len(by_board) > 1:
        text, options = _board_question(by_board, root)
        return text, options, tuple(tuple(g) for g in by_board)
    tb = near[0].state.table
    for seat, colour in enumerate(tb.colours):
        by_pot = split(lambda st, seat=seat: st.potions[seat][:2])
        if len(by_pot) > 1:
            options = tuple(
                f"{_count(g[0].state.potions[seat][0], 'full potion')} and "
                f"{g[0].state.potions[seat][1]} empty"
                for g in by_pot
            )
            return (
                f"How many full potions does {colour} have now?",
                options,
                tuple(tuple(g) for g in by_pot),
            )
    by_turn = split(lambda st: st.turn.player)
    if len(by_turn) > 1:
        options = tuple(tb.colours[g[0].state.turn.player] for g in by_turn)
        return "Whose turn is it now?", options, tuple(tuple(g) for g in by_turn)
    return None


def _answer_key(
    groups: Sequence[Sequence[_Hyp]],
) -> Callable[[GameState], Any] | None:
    """What a question's options differ in (the first of the board, one player's potions, all
    potions, whose turn that no two options share), or None."""
    if not groups or not groups[0]:
        return None

    def seat_potions(seat: int) -> Callable[[GameState], Any]:
        return lambda st: st.potions[seat][:2]

    seats = range(len(groups[0][0].state.table.colours))
    keys: list[Callable[[GameState], Any]] = [board_key]
    keys += [seat_potions(seat) for seat in seats]
    keys += [lambda st: st.potions, lambda st: st.turn.player]
    for key in keys:
        sets = [{key(h.state) for h in g} for g in groups]
        if all(not (a & b) for i, a in enumerate(sets) for b in sets[i + 1 :]):
            return key
    return None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _merge_last(trail: tuple[_Step, ...], step: _Step) -> tuple[_Step, ...]:
    """Append a turn close to the newest step (it happened after that frame)."""
    if not trail:
        return (step,)
    last = trail[-1]
    return trail[:-1] + (
        _Step(
            step.state,
            last.actions + step.actions,
            last.events + step.events,
            last.states + step.states,
        ),
    )


def _marker_json(m: Marker) -> dict[str, Any]:
    if m[0] == "dice":
        return {"kind": "dice", "rolls": list(m[1]), "dice_allowed": m[2]}
    return {"kind": "done"}


def _marker_from(d: Mapping[str, Any]) -> Marker:
    if d.get("kind") == "dice":
        return ("dice", tuple(int(r) for r in d["rolls"]), int(d["dice_allowed"]))
    if d.get("kind") == "done":
        return ("done",)
    raise ValueError(f"tracker.pending: unknown marker {d!r}")


def _first_difference(groups: Sequence[Sequence[_Hyp]]) -> int:
    reps = [g[0] for g in groups]
    n = min(len(h.trail) for h in reps)
    for i in range(n):
        k = {board_key(h.trail[i].state) for h in reps}
        if len(k) > 1:
            return i
    return max(0, n - 1)


def _board_question(
    groups: Sequence[Sequence[_Hyp]], root: GameState
) -> tuple[str, tuple[str, ...]]:
    i = _first_difference(groups)
    reps = [g[0] for g in groups]
    options: list[str] = []
    firsts: list[Action | None] = []
    for h in reps:
        before = h.trail[i - 1].state if i > 0 else root
        acts = h.trail[i].actions if h.trail else ()
        shown = [a for a in acts if not isinstance(a, (EndTurn, DiscardCard))]
        states = [before] + list(h.trail[i].states[:-1]) if h.trail else [before]
        vis_states = [
            s
            for a, s in zip(acts, states, strict=False)
            if not isinstance(a, (EndTurn, DiscardCard))
        ]
        if shown:
            options.append(
                "; then ".join(describe(a, s) for a, s in zip(shown, vis_states, strict=False))
            )
            firsts.append(shown[0])
        else:
            options.append("nothing moved")
            firsts.append(None)
    # the classic cases get the classic wording
    if all(isinstance(a, MoveTower) for a in firsts):
        towers = [a for a in firsts if isinstance(a, MoveTower)]
        if len({a.space for a in towers}) == 1 and len({a.tier for a in towers}) == len(towers):
            s = towers[0].space
            before = reps[0].trail[i - 1].state if i > 0 else root
            height = before.height(s)
            parts = []
            for a in towers:
                n = height - a.tier + 1
                parts.append("the top tower" if n == 1 else f"the top {_word(n)}")
            text = f"From space {s}, did you move " + " or ".join(parts) + "?"
            return text, tuple(options)
    if all(isinstance(a, Cast) and a.spell == "free_wizard" for a in firsts):
        casts = [a for a in firsts if isinstance(a, Cast)]
        text = (
            f"Which tower did {casts[0].player} lift on space {casts[0].space} to free the wizard?"
        )
        return text, tuple(f"the {_ordinal(a.tier or 0)} tower from the bottom" for a in casts)
    return "The camera can't tell which of these happened. Which one was it?", tuple(options)


def _word(n: int) -> str:
    return {2: "two", 3: "three", 4: "four"}.get(n, str(n))


def _potion_question(groups: Sequence[Sequence[_Hyp]]) -> tuple[str, tuple[str, ...]]:
    reps = [g[0].state for g in groups]
    tb = reps[0].table
    for seat, colour in enumerate(tb.colours):
        vals = {s.potions[seat] for s in reps}
        if len(vals) > 1:
            opts = tuple(
                f"{s.potions[seat][0]} full, {s.potions[seat][1]} empty, {s.potions[seat][2]} spent"
                for s in reps
            )
            return f"How many potions does {colour} have?", opts
    return "Which potions are right?", tuple(str(s.potions) for s in reps)
