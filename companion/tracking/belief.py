"""The belief's pieces: hypotheses (:class:`Hypothesis`, full game states with a cost in nats and
the trail of :class:`Step` that led there from the last commit), what makes two of them the same
(:func:`board_key`, :func:`state_key`, :func:`same_now`), and :func:`prune`, which merges equal
states, drops the unlikely and keeps other boards from being crowded out.

A step's and a hypothesis' ``alts`` are other paths to the same state about as likely (two moves
in the other order, a card and a spell swapped): no later frame can tell them apart, so a commit
claims only what they share (:mod:`companion.tracking.commit`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from companion.rules.actions import Action, DiscardCard, EndTurn, Event
from companion.rules.model import GameState
from companion.rules.serialize import (
    dump_action,
    dump_event,
    dump_state,
    load_action,
    load_event,
    load_state,
)
from companion.tracking.options import TrackerOptions

DiceMarker = tuple[Literal["dice"], tuple[int, ...], int]
"""The dice buttons: ``("dice", rolls, dice_allowed)`` (R-CARD-4/5)."""
DoneMarker = tuple[Literal["done"]]
"""The DONE button: ``("done",)`` (R-TURN-4/8)."""
Marker = DiceMarker | DoneMarker
"""A pending input, not yet explained by a move the camera saw."""

Key = tuple[object, ...]
"""What two states are compared by (:func:`board_key`, :func:`state_key`): equal keys, the same
thing for the purpose at hand; hashable."""

Path = tuple[tuple[Action, ...], tuple[tuple[Event, ...], ...], tuple[GameState, ...]]
"""One way between two states: the actions, the events of each, the state after each."""


@dataclass(frozen=True, slots=True)
class Step:
    """What one hypothesis says happened between two accepted frames. ``alts``: other paths
    (actions, events, states) from the same state to ``state`` about as likely (two moves in
    the other order, a card and a spell swapped)."""

    state: GameState
    actions: tuple[Action, ...]
    events: tuple[tuple[Event, ...], ...]
    states: tuple[GameState, ...]
    alts: tuple[Path, ...] = ()
    late: float = 0.0
    """The prior (nats) the step paid for its first unannounced turn end (0: none, or a DONE
    press used after it). A DONE press that reaches the tracker after this frame may be that
    turn's (pressed late: the frame showed the next player's first move before it), and the
    story then gets this back (``cost_late_done`` instead, :meth:`Tracker.end_turn
    <companion.tracking.tracker.Tracker.end_turn>`)."""

    def paths(self) -> tuple[Path, ...]:
        """The step's own path first, then its alternatives."""
        return ((self.actions, self.events, self.states), *self.alts)


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """One story of the table. ``alts`` are other trails (one step per accepted frame, like
    ``trail``) that reach the same state at about the same cost (within ``commit_margin``):
    another order of the same moves, a card instead of a spell and a spell later. No later
    frame can tell them apart (they share the future), so the commit claims only what they
    all share (:func:`companion.tracking.commit.commit`)."""

    state: GameState
    cost: float
    trail: tuple[Step, ...]
    pending: tuple[Marker, ...]
    implicit: bool
    alts: tuple[tuple[Step, ...], ...] = ()

    def paths(self) -> tuple[tuple[Step, ...], ...]:
        """The hypothesis' own trail first, then its alternative trails."""
        return (self.trail, *self.alts)

    def extended(
        self,
        state: GameState,
        cost: float,
        step: Step,
        pending: tuple[Marker, ...],
        implicit: bool,
    ) -> Hypothesis:
        """This story with one more step (its alternatives share it)."""
        return Hypothesis(
            state,
            cost,
            self.trail + (step,),
            pending,
            implicit,
            tuple(a + (step,) for a in self.alts),
        )


MAX_ALTS = 6
"""At most this many alternative trails are kept per hypothesis (Hypothesis), and alternative paths
per step (Step)."""
MAX_STORIES = 24
"""At most this many stories are told in one ``order_unseen`` entry."""


def step_print(step: Step) -> Key | frozenset[Key]:
    """What a committed step claims: the state after each of its actions (a set of such
    sequences when it has alternative paths)."""
    main = tuple(state_key(s) for s in step.states)
    if not step.alts:
        return main
    return frozenset([main, *(tuple(state_key(s) for s in p[2]) for p in step.alts)])


def with_alts(h: Hypothesis, trails: Iterable[tuple[Step, ...]]) -> Hypothesis:
    """``h`` with the trails that claim other paths than its own added as alternatives."""
    alts = list(h.alts)
    for t in trails:
        if len(alts) >= MAX_ALTS:
            break
        if not same_path(t, h.trail) and not any(same_path(t, a) for a in alts):
            alts.append(t)
    if len(alts) == len(h.alts):
        return h
    return replace(h, alts=tuple(alts))


def same_path(a: Sequence[Step], b: Sequence[Step]) -> bool:
    """The two trails claim the same states frame by frame and action by action."""
    if len(a) != len(b):
        return False
    return all(x is y or step_print(x) == step_print(y) for x, y in zip(a, b, strict=True))


def late_step(trail: Sequence[Step]) -> int | None:
    """The index of the step whose unannounced turn end a DONE press arriving now may be
    (:attr:`Step.late`), placed at most one frame before the press: the newest frame's
    (the next player moved after it in that frame), or the frame's before when it ended
    with that turn end and the newest frame shows only the next player's moves; None when
    there is none."""
    shown = [i for i in range(len(trail)) if trail[i].actions]
    if not shown:
        return None
    i = shown[-1]
    if trail[i].late > 0:
        return i
    if len(shown) < 2 or any(isinstance(a, EndTurn) for a in trail[i].actions):
        return None
    j = shown[-2]
    step = trail[j]
    return j if step.late > 0 and isinstance(step.actions[-1], EndTurn) else None


_KIND_STACKS: dict[tuple[tuple[int, ...], ...], tuple[tuple[str, ...], ...]] = {}
_WIZ_KEYS: dict[Key, tuple[tuple[int, ...], ...]] = {}
"""Wizard positions -> the sorted positions per colour (a search meets the same few again)."""


def board_key(st: GameState) -> Key:
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


def state_key(st: GameState) -> Key:
    """:func:`board_key` plus potions, the turn and the game progress (never the card count);
    with expansion modules also the witch vials, feathers, armed spells and free spells (what
    the camera cannot see but later moves depend on)."""
    g = st.game
    ms = st.modules
    base = (*board_key(st), st.potions, st.turn, g.end_triggered_by, g.remaining_turns, g.over)
    if ms is None:
        return base
    return (*base, ms.witch_vials, ms.witch_vial_supply, ms.feathers, ms.armed, ms.free_casts)


def seen_key(st: GameState) -> Key:
    """:func:`state_key` without the potions: what a later frame, the DONE button and the turn's
    course can tell. Two stories equal in this and unequal in potions differ only in whether a
    move was a card or a spell the camera cannot tell apart (R-SPELL-6, R-POTION-1): the
    tracker commits what they share and keeps their potions as alternatives
    (:func:`potion_options`) until a spell's cost, a later move or the end decides them."""
    g = st.game
    ms = st.modules
    base = (*board_key(st), st.turn, g.end_triggered_by, g.remaining_turns, g.over)
    if ms is None:
        return base
    return (*base, ms.witch_vials, ms.witch_vial_supply, ms.feathers, ms.armed, ms.free_casts)


def trapped_places(st: GameState, seat: int) -> tuple[tuple[int, int], ...]:
    """``(space, tier)`` of every trapped wizard of the colour of ``seat`` (under a tower,
    R-WIZ-3), sorted: the wizards of one colour are interchangeable."""
    lo, hi = st.table.wiz_range[seat]
    out = []
    for p in st.wizards[lo:hi]:
        space, tier = p >> 4, p & 15
        if p and tier < len(st.stacks[space - 1]):
            out.append((space, tier))
    return tuple(sorted(out))


Potions = tuple[tuple[int, int, int], ...]
"""Every player's potions (full, empty, spent) in seat order (``GameState.potions``)."""


def potion_options(states: Iterable[GameState], shown: GameState) -> tuple[Potions, ...]:
    """The potions a committed ``shown`` state may have: ``shown``'s first, then the other
    potions of ``states`` (the same table by other stories), each once. One entry: certain."""
    out = [shown.potions]
    for st in states:
        if st.potions not in out:
            out.append(st.potions)
    return tuple(out)


def moves_shown(actions: Iterable[Action]) -> int:
    """The moves among ``actions`` a frame can show (not turn ends and discards)."""
    return sum(1 for a in actions if not isinstance(a, EndTurn | DiscardCard))


def same_story(a: Hypothesis, b: Hypothesis) -> bool:
    """The two hypotheses are one story: the same object, or the same state with the same
    inputs pending."""
    return a is b or (state_key(a.state) == state_key(b.state) and a.pending == b.pending)


def same_now(hyps: Sequence[Hypothesis]) -> bool:
    """Every hypothesis of ``hyps`` stands for the same table now (board, potions, turn)."""
    key = state_key(hyps[0].state)
    return all(state_key(h.state) == key for h in hyps[1:])


def same_seen(hyps: Sequence[Hypothesis]) -> bool:
    """Every hypothesis of ``hyps`` stands for the same table now but perhaps the potions
    (:func:`seen_key`)."""
    key = seen_key(hyps[0].state)
    return all(seen_key(h.state) == key for h in hyps[1:])


def family_key(h: Hypothesis) -> Key:
    """A hypothesis' potion family: stories that show the same table now with the same inputs
    pending (:func:`seen_key`) and differ at most in the potions, i.e. in which moves were
    cards and which spells the camera cannot tell apart (R-SPELL-6)."""
    return (seen_key(h.state), h.pending)


def families(hyps: Iterable[Hypothesis]) -> list[list[Hypothesis]]:
    """``hyps`` by potion family (:func:`family_key`), each best first, the cheapest family
    first."""
    groups: dict[Key, list[Hypothesis]] = {}
    for h in sorted(hyps, key=lambda h: (h.cost, len(h.pending))):
        groups.setdefault(family_key(h), []).append(h)
    return list(groups.values())


def near_stories(hyps: Sequence[Hypothesis], margin: float) -> list[Hypothesis]:
    """The stories of ``hyps`` as near the best as the doubt they stand for (within ``margin``
    by :func:`doubt_costs`), best first. A story in which several players cast spells at once
    costs their spells' prices together, far behind the one in which none did, while each
    player's spell alone is about as likely as his card: that combination must not be committed
    away on its summed cost (:func:`~companion.tracking.commit.commit`)."""
    if not hyps:
        return []
    costs = doubt_costs(hyps)
    best = min(costs.values())
    out = [h for h in hyps if costs[id(h)] - best <= margin]
    out.sort(key=lambda h: (h.cost, len(h.pending)))
    return out


def doubt_costs(hyps: Iterable[Hypothesis]) -> dict[int, float]:
    """Per story (by ``id``) the cost of the doubt it stands for: its potion family's cheapest
    (:func:`family_key`) plus the largest of its players' own potion costs (:func:`_plausible`):
    each player's count depends only on his own moves, so the players' doubts are independent
    and a combination is as plausible as its least plausible player."""
    out: dict[int, float] = {}
    for fam in families(hyps):
        low = fam[0].cost
        for h, extra in zip(fam, _seat_costs(fam), strict=True):
            out[id(h)] = low + extra
    return out


def _seat_costs(fam: Sequence[Hypothesis]) -> list[float]:
    """For each story of one potion family (best first): the largest, over the players, of
    what that player's count costs on its own (the cheapest story of the family with it,
    above the family's best)."""
    low = fam[0].cost
    seats = len(fam[0].state.potions)
    marg: list[dict[tuple[int, int, int], float]] = [{} for _ in range(seats)]
    for h in fam:
        c = h.cost - low
        for seat, p in enumerate(h.state.potions):
            if c < marg[seat].get(p, float("inf")):
                marg[seat][p] = c
    return [max(marg[seat][p] for seat, p in enumerate(h.state.potions)) for h in fam]


def _plausible(fam: Sequence[Hypothesis], margin: float) -> list[Hypothesis]:
    """The stories of one potion family (best first) whose every player's potions cost at most
    ``margin`` on their own (:func:`_seat_costs`), whatever their costs add up to: a spell is
    paid and a trapping reward is earned by the caster alone (R-SPELL-1, R-TOWER-9)."""
    return [h for h, c in zip(fam, _seat_costs(fam), strict=True) if c <= margin]


POTION_FLOOR = 8
"""Every kept table holds at least this many of its potion stories (three players'
card-or-spell doubts at once), also beyond ``TrackerOptions.potion_stories``."""


def _by_family(
    alive: Sequence[Hypothesis], opts: TrackerOptions, modules: bool
) -> tuple[Hypothesis, ...]:
    """The belief's prune (``alive`` best first, costs relative to the best): potion families
    (:func:`family_key`) take the ``keep`` slots, one slot each with all their plausible potion
    stories (:func:`_plausible`), so the potions of several players' card-or-spell doubts at
    once stay together with their table instead of crowding it and each other out; at most
    ``potion_stories`` stories in all, but at least :data:`POTION_FLOOR` for each table. With
    expansion ``modules`` at most ``keep_per_board`` families per board while other boards wait.
    With ``defer``, then the best family of up to ``hold_boards`` other boards within
    ``commit_margin`` (hidden pieces held, not asked about)."""
    fams = [_plausible(f, opts.potion_margin) for f in families(alive)]
    out: list[Hypothesis] = []
    taken: list[bool] = [False] * len(fams)
    per_board: dict[Key, int] = {}
    slots = 0

    def take(i: int) -> None:
        nonlocal slots
        # a table further behind still holds the combinations of a few players' doubts:
        # it may become the best, and its lost potions could then not be had back
        room = max(opts.potion_stories - len(out), POTION_FLOOR)
        out.extend(fams[i][:room])
        taken[i] = True
        slots += 1
        k = board_key(fams[i][0].state)
        per_board[k] = per_board.get(k, 0) + 1

    for i, fam in enumerate(fams):
        if slots >= opts.keep:
            break
        if modules and per_board.get(board_key(fam[0].state), 0) >= opts.keep_per_board:
            continue
        take(i)
    for i in range(len(fams)):
        if slots >= opts.keep:
            break
        if not taken[i]:
            take(i)
    boards = opts.hold_boards if opts.defer else 0
    for i, fam in enumerate(fams):
        if boards <= 0 or fam[0].cost - alive[0].cost > opts.commit_margin:
            break
        if not taken[i] and board_key(fam[0].state) not in per_board:
            take(i)
            boards -= 1
    out.sort(key=lambda h: (h.cost, len(h.pending)))
    return tuple(out)


def belief_steps(hyps: Iterable[Hypothesis]) -> int:
    """The size of a belief: the held steps of all its stories' trails, alternative trails
    included (each step holds a state or more; ``TrackerOptions.max_belief``)."""
    return sum(len(h.trail) * (1 + len(h.alts)) for h in hyps)


def capped(hyps: tuple[Hypothesis, ...], opts: TrackerOptions) -> tuple[Hypothesis, ...]:
    """``hyps`` (best first, costs relative to the best) within ``max_belief`` held steps:
    the costliest stories beyond ``commit_margin`` dropped until it fits, the best-scored
    kept. The stories a commit must agree with are never dropped (a commit then could claim
    what one of them denies): a belief of those alone past the limit is left to the players'
    question (``max_lag``, ``max_hold``)."""
    if opts.max_belief <= 0:
        return hyps
    size = belief_steps(hyps)
    if size <= opts.max_belief:
        return hyps
    out = list(hyps)
    while size > opts.max_belief and len(out) > 1 and out[-1].cost > opts.commit_margin:
        size -= belief_steps(out[-1:])
        out.pop()
    return tuple(out)


def prune(
    hyps: Iterable[Hypothesis],
    opts: TrackerOptions,
    modules: bool,
    fallback: tuple[Hypothesis, ...],
) -> tuple[Hypothesis, ...]:
    """The belief made of ``hyps``: one hypothesis per state (with pending inputs), the others
    that reach it within ``commit_margin`` kept as its alternative trails; costs relative to the
    best; those beyond ``margin`` dropped; best first (ties: fewer pending inputs first);
    ``keep`` potion families with their plausible potion stories (:func:`_by_family`; with
    expansion ``modules`` at most ``keep_per_board`` families per board while other boards
    wait; with ``defer`` also the best story of up to ``hold_boards`` other boards). Then
    within ``max_belief`` held steps (:func:`capped`). ``fallback`` when ``hyps`` is empty."""
    merged: dict[Key, Hypothesis] = {}
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
            lo = with_alts(lo, hi.paths())
        merged[key] = lo
    if not merged:
        return fallback
    best = min(h.cost for h in merged.values())
    # stories that show the same table and differ only in the potions (a card or a spell the
    # camera cannot tell apart) share one of the ``keep`` slots: one story per combination of
    # several players' doubts crowded the true combination out of ``keep`` (with five or six
    # players, or spells cast in one round by several of them), and every later commit then
    # showed potions the table never had
    alive = [
        replace(h, cost=h.cost - best) for h in merged.values() if h.cost - best <= opts.margin
    ]
    alive.sort(key=lambda h: (h.cost, len(h.pending)))
    return capped(_by_family(alive, opts, modules), opts)


def potions_from(d: Sequence[Sequence[int]]) -> tuple[tuple[int, int, int], ...]:
    """One potion alternative of a committed entry: ``[[full, empty, spent], …]`` per seat."""
    out: list[tuple[int, int, int]] = []
    for p in d:
        full, empty, spent = (int(x) for x in p)
        out.append((full, empty, spent))
    return tuple(out)


def marker_json(m: Marker) -> dict[str, Any]:
    """A pending input as JSON (the journal's snapshots)."""
    if m[0] == "dice":
        return {"kind": "dice", "rolls": list(m[1]), "dice_allowed": m[2]}
    return {"kind": "done"}


def marker_from(d: Mapping[str, Any]) -> Marker:
    """A pending input from :func:`marker_json`'s JSON.

    :raises ValueError: an unknown marker."""
    if d.get("kind") == "dice":
        return ("dice", tuple(int(r) for r in d["rolls"]), int(d["dice_allowed"]))
    if d.get("kind") == "done":
        return ("done",)
    raise ValueError(f"tracker.pending: unknown marker {d!r}")


def _step_json(s: Step, state: Callable[[GameState], Any] = dump_state) -> dict[str, Any]:
    """``s`` as JSON, each state written by ``state`` (in full, or a :class:`Pool` index)."""
    return {
        "state": state(s.state),
        "actions": [dump_action(a) for a in s.actions],
        "events": [[dump_event(e) for e in ev] for ev in s.events],
        "states": [state(x) for x in s.states],
        "alts": [
            {
                "actions": [dump_action(a) for a in acts],
                "events": [[dump_event(e) for e in ev] for ev in evs],
                "states": [state(x) for x in sts],
            }
            for acts, evs, sts in s.alts
        ],
        **({"late": s.late} if s.late else {}),
    }


def hypothesis_json(h: Hypothesis) -> dict[str, Any]:
    """A hypothesis as JSON with every state written out (the snapshots of version 1, still
    read by :func:`hypothesis_from`; version 2 pools them, :class:`Pool`)."""
    return {
        "state": dump_state(h.state),
        "cost": h.cost,
        "trail": [_step_json(s) for s in h.trail],
        "pending": [marker_json(m) for m in h.pending],
        "implicit": h.implicit,
        "alts": [[_step_json(s) for s in t] for t in h.alts],
    }


def _step_from(d: Mapping[str, Any], state: Callable[[Any], GameState] = load_state) -> Step:
    """A step from :func:`_step_json`'s JSON, each state read by ``state``."""
    return Step(
        state(d["state"]),
        tuple(load_action(a) for a in d["actions"]),
        tuple(tuple(load_event(e) for e in ev) for ev in d["events"]),
        tuple(state(x) for x in d["states"]),
        tuple(
            (
                tuple(load_action(a) for a in p["actions"]),
                tuple(tuple(load_event(e) for e in ev) for ev in p["events"]),
                tuple(state(x) for x in p["states"]),
            )
            for p in d.get("alts", [])
        ),
        float(d.get("late", 0.0)),
    )


def hypothesis_from(h: Mapping[str, Any]) -> Hypothesis:
    """A hypothesis from :func:`hypothesis_json`'s JSON.

    :raises ValueError: (or ``FormatError``, ``KeyError``) for malformed data."""
    return Hypothesis(
        load_state(h["state"]),
        float(h["cost"]),
        tuple(_step_from(s) for s in h["trail"]),
        tuple(marker_from(m) for m in h["pending"]),
        bool(h["implicit"]),
        tuple(tuple(_step_from(s) for s in t) for t in h.get("alts", [])),
    )


class Pool:
    """The states and steps of a snapshot's hypotheses, each written once
    (:meth:`~companion.tracking.tracker.Tracker.to_json`; read back by :class:`Unpool`).

    Held stories share most of their trails (each frame's stories extend the same earlier
    steps), so a belief that held 56 stories for 68 actions wrote each shared step 56 times:
    a 480 MB snapshot, and the service's memory rose past 4.9 GB while it was built. Written
    once each and named by index, the snapshot grows with the distinct steps, not with the
    stories times their length. Objects are told apart by identity (the stories share the
    objects themselves) and equal ones by content (a story's steps are rebuilt when it is
    replayed or merged)."""

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self._state_ids: dict[int, int] = {}
        self._state_dumps: dict[GameState, int] = {}
        self._step_ids: dict[int, int] = {}
        self._step_dumps: dict[object, int] = {}
        self._alive: list[object] = []  # keeps ``id`` keys unique while the pool is filled

    def state(self, st: GameState) -> int:
        """The index of ``st`` in :attr:`states`."""
        got = self._state_ids.get(id(st))
        if got is not None:
            return got
        got = self._state_dumps.get(st)  # a frozen value: equal states hash alike
        if got is None:
            got = self._state_dumps[st] = len(self.states)
            self.states.append(dump_state(st))
        self._state_ids[id(st)] = got
        self._alive.append(st)
        return got

    def step(self, s: Step) -> int:
        """The index of ``s`` in :attr:`steps`."""
        got = self._step_ids.get(id(s))
        if got is not None:
            return got
        st = self.state
        # equal steps found before any is written (actions are immutable values; events carry
        # dicts, compared by their text: equal ones written in another key order only cost
        # a second entry)
        key = (
            st(s.state),
            s.actions,
            repr(s.events),
            tuple(st(x) for x in s.states),
            tuple((acts, repr(evs), tuple(st(x) for x in sts)) for acts, evs, sts in s.alts),
            s.late,
        )
        got = self._step_dumps.get(key)
        if got is not None:
            self._step_ids[id(s)] = got
            self._alive.append(s)
            return got
        d = _step_json(s, st)
        got = self._step_dumps[key] = len(self.steps)
        self.steps.append(d)
        self._step_ids[id(s)] = got
        self._alive.append(s)
        return got

    def hypothesis(self, h: Hypothesis) -> dict[str, Any]:
        """``h`` as JSON whose states and steps are indices into this pool."""
        return {
            "state": self.state(h.state),
            "cost": h.cost,
            "trail": [self.step(s) for s in h.trail],
            "pending": [marker_json(m) for m in h.pending],
            "implicit": h.implicit,
            "alts": [[self.step(s) for s in t] for t in h.alts],
        }

    def to_json(self) -> dict[str, Any]:
        """``{"states": [...], "steps": [...]}``: what the hypotheses' indices name (call after
        every hypothesis is written)."""
        return {"states": self.states, "steps": self.steps}


class Unpool:
    """Reads :class:`Pool` JSON back: each state and step built once and shared by the
    hypotheses that name it (as they were when written).

    :raises ValueError: (or ``FormatError``, ``KeyError``, ``IndexError``) for malformed data."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._states = [load_state(d) for d in data["states"]]
        self._steps = [_step_from(d, self._state) for d in data["steps"]]

    def _state(self, i: object) -> GameState:
        if not isinstance(i, int) or not 0 <= i < len(self._states):
            raise ValueError(f"pool: no state {i!r}")
        return self._states[i]

    def _step(self, i: object) -> Step:
        if not isinstance(i, int) or not 0 <= i < len(self._steps):
            raise ValueError(f"pool: no step {i!r}")
        return self._steps[i]

    def hypothesis(self, h: Mapping[str, Any]) -> Hypothesis:
        """A hypothesis from :meth:`Pool.hypothesis`'s JSON."""
        return Hypothesis(
            self._state(h["state"]),
            float(h["cost"]),
            tuple(self._step(i) for i in h["trail"]),
            tuple(marker_from(m) for m in h["pending"]),
            bool(h["implicit"]),
            tuple(tuple(self._step(i) for i in t) for t in h.get("alts", [])),
        )


def potions_unsure(
    st: GameState, hyps: Sequence[Hypothesis]
) -> dict[str, tuple[tuple[int, int, int], ...]]:
    """The players whose potions are not certain in the belief ``hyps`` whose shown state is
    ``st`` (``Tracker.potions_unsure``): ``{colour: ((full, empty, spent), …)}``, ``st``'s
    count first, then the others of the stories that show the same table (:func:`seen_key`;
    a card or a spell the camera cannot tell apart, R-SPELL-6). Empty when they agree."""
    key = seen_key(st)
    best = min(hyps, key=lambda h: h.cost)
    others = [h.state for h in hyps if h is not best and seen_key(h.state) == key]
    if best.state is not st:
        # the state a pending DONE leaves: the other stories' potions as they are now (a
        # turn close changes no potion)
        others = [h.state for h in hyps if seen_key(h.state) == seen_key(best.state)]
    out: dict[str, tuple[tuple[int, int, int], ...]] = {}
    for seat, colour in enumerate(st.table.colours):
        vals = [st.potions[seat]]
        for o in others:
            if o.potions[seat] not in vals:
                vals.append(o.potions[seat])
        if len(vals) > 1:
            out[colour] = tuple(vals)
    return out


def hidden_unsure(
    st: GameState, hyps: Sequence[Hypothesis], margin: float
) -> dict[str, tuple[tuple[tuple[int, int], ...], ...]]:
    """The colours whose trapped wizards are not certain (``Tracker.hidden_unsure``):
    ``{colour: (((space, tier), …), …)}``, every placement of that colour's trapped wizards
    (:func:`trapped_places`) the stories within ``margin`` nats of the best allow, ``st``'s
    first. Empty when they all agree."""
    hs = sorted(hyps, key=lambda h: h.cost)
    near = [h.state for h in hs if h.cost - hs[0].cost <= margin]
    out: dict[str, tuple[tuple[tuple[int, int], ...], ...]] = {}
    for seat, colour in enumerate(st.table.colours):
        vals = [trapped_places(st, seat)]
        for o in near:
            v = trapped_places(o, seat)
            if v not in vals:
                vals.append(v)
        if len(vals) > 1:
            out[colour] = tuple(vals)
    return out
