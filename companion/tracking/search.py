"""The search of one frame: from one hypothesis, the action sequences (a beam over
:func:`~companion.tracking.candidates.transitions`, level by level) whose end states explain the
picture, scored by prior cost plus picture cost (nats).

:func:`search_frame` runs one pass; :class:`SearchCache` holds what the passes of one tracker
share (applied actions, expected views); :func:`close_turn` ends a turn as the DONE button does;
:func:`replay` applies a found story to another hypothesis.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    Feather,
    IllegalAction,
)
from companion.rules.engine import apply
from companion.rules.model import GameState
from companion.tracking.belief import (
    MAX_ALTS,
    Hypothesis,
    Key,
    Marker,
    Path,
    Step,
    board_key,
    seen_key,
    state_key,
)
from companion.tracking.candidates import (
    WITCH_HITS,
    protect_variants,
    spaces_of,
    transitions,
    turn_complete,
)
from companion.tracking.noise import SpaceView, Target, expected_observation, space_views
from companion.tracking.options import TrackerOptions

HARD_ENTRIES = 50000
"""The expected-views cache is emptied whenever it grows past this, within a frame too."""
HARD_APPLIED = 20000
"""The applied-actions cache is emptied whenever it grows past this, within a frame too: an
entry holds a new state (~1.1 KB with every module) and few are asked for again (about one
apply in nine in a 4-player game with every module), where nine views in ten are."""


class SearchCache:
    """Shared caches for one tracker (applied actions, expected views) and the frame's search
    budget.

    The caches are bounded: :meth:`start_frame` empties one that holds more than ``entries``
    (``TrackerOptions.cache_entries``), a frame adds at most its budget's worth, and either is
    emptied within a frame past :data:`HARD_APPLIED` / :data:`HARD_ENTRIES`. The budget
    (``TrackerOptions.frame_budget``) counts the transitions a frame's passes try
    (:meth:`spend`); :attr:`cut` tells that it ran out and a search was narrowed
    (docs/architecture.md, "The tracker")."""

    def __init__(self, entries: int = 0) -> None:
        self.applied: dict[tuple[GameState, Action], tuple[GameState, tuple[Event, ...]] | None]
        self.applied = {}
        self.views: dict[Key, list[SpaceView]] = {}
        # most spaces look the same in most searched states: one tuple per distinct space view
        # (the cached views held ~930k tuples, 82 MB, in a 4-player game with every module)
        self.shared: dict[SpaceView, SpaceView] = {}
        self.entries = entries
        self.left: float = float("inf")
        """Transitions the running search may still try (:meth:`allow`)."""
        self.cut = False
        """A search of this frame ran out of its budget and left nodes unexpanded."""
        self.tried = 0
        """Transitions tried by the searches of this frame (:meth:`start_frame` resets it)."""

    def start_frame(self) -> None:
        """Before a frame's search: caches past their bound are emptied (whole: the entries a
        frame reuses are the ones it adds itself), the budget flag reset."""
        self.cut = False
        self.tried = 0
        self.left = float("inf")
        if self.entries <= 0:
            return
        if len(self.applied) > self.entries:
            self.applied.clear()
        if len(self.views) > self.entries:
            self.views.clear()
            self.shared.clear()

    def allow(self, n: float) -> float:
        """Let the next search try at most ``n`` transitions (inf: no bound); the previous
        allowance left unspent is returned."""
        was = self.left
        self.left = n
        return was

    def apply(self, st: GameState, a: Action) -> tuple[GameState, tuple[Event, ...]] | None:
        """The rules engine's ``apply(st, a)`` (state after, events), or None when the engine
        refuses ``a`` as illegal; remembered."""
        key = (st, a)
        if key in self.applied:
            return self.applied[key]
        try:
            nxt, ev = apply(st, a)
            got: tuple[GameState, tuple[Event, ...]] | None = (nxt, tuple(ev))
        except IllegalAction:
            got = None
        if len(self.applied) > HARD_APPLIED:
            self.applied.clear()
        self.applied[key] = got
        return got

    def view(self, st: GameState) -> list[SpaceView]:
        """The expected camera view of every space of ``st`` (index ``space - 1``,
        :func:`~companion.tracking.noise.space_views`); remembered per board."""
        ms = st.modules
        key = (st.stacks, st.wizards, st.castle, None if ms is None else (ms.witch, ms.raven))
        got = self.views.get(key)
        if got is None:
            if len(self.views) > HARD_ENTRIES:
                self.views.clear()
                self.shared.clear()
            shared = self.shared
            got = [shared.setdefault(v, v) for v in space_views(st)]
            self.views[key] = got
        return got


@dataclass(slots=True)
class Node:
    """A search node: ``state`` reached from the searched hypothesis by ``actions`` (with the
    events of each and the state after each), at ``prior`` cost (nats), with the inputs
    ``pending`` still to use. ``score`` is prior plus picture cost (``obs_cost``); ``rank``
    counts changed spaces not yet explained as "still to explain" (the beam's order)."""

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
    alts: tuple[Path, ...] = ()
    """Other paths (actions, events, states) to this node's state about as likely
    (within ``commit_margin``): kept so a commit never claims one of them as fact."""
    late: float = 0.0
    """The prior paid for the first unannounced turn end of the path (0: none, or a DONE
    press was used after it): refunded when a DONE press that reaches the tracker after the
    frame is placed there (:attr:`~companion.tracking.belief.Step.late`)."""


def _path_print(states: Sequence[GameState]) -> Key:
    """What a path claims: the state after each of its actions."""
    return tuple(state_key(s) for s in states)


def _extend_paths(
    alts: tuple[Path, ...],
    actions: tuple[Action, ...],
    events: tuple[tuple[Event, ...], ...],
    states: tuple[GameState, ...],
) -> tuple[Path, ...]:
    """Each of the paths ``alts`` continued by the same actions."""
    return tuple((a + actions, e + events, s + states) for a, e, s in alts)


def _merge_paths(lo: Node, hi: Node) -> None:
    """Keep ``hi``'s paths as alternatives of ``lo`` (same state) where they claim other
    intermediate states."""
    alts = list(lo.alts)
    mine = None
    for path in ((hi.actions, hi.events, hi.states), *hi.alts):
        if len(alts) >= MAX_ALTS:
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


def close_turn(
    srch: SearchCache, st: GameState, opts: TrackerOptions
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


def search_frame(
    srch: SearchCache,
    hyp: Hypothesis,
    target: Target,
    opts: TrackerOptions,
    depth: int,
    anywhere: bool,
    staged: bool = False,
) -> list[Node]:
    """Terminal nodes reachable from ``hyp`` that explain ``target`` (all DONE markers used).

    Moves start on spaces the picture changed or the story touched; with ``anywhere`` they may
    end on any space (a space passed through in the turn looks unchanged), else only there. A
    space the picture lacks (withheld as unsure) may have changed: it counts as changed.
    ``staged``: a piece staged on a space the picture shows unchanged is "still to explain"
    after any move, not only after a spell (the recheck's wider search,
    :func:`~companion.tracking.reconcile.recheck`)."""
    root_views = srch.view(hyp.state)
    changed = target.changed_from(root_views) | target.unknown
    root = Node(hyp.state, 0.0, (), (), (), hyp.pending, hyp.implicit)
    root.obs_cost = target.cost(root_views)
    root.score = root.obs_cost
    root.rank = root.score
    terminals: list[Node] = []
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
        if anywhere and (spell or staged):
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

    def terminal_ok(n: Node) -> bool:
        if opts.board_turns and n.implicit and n is not root:
            # a turn ended unannounced with nothing moved after it: the board cannot show
            # that yet (a spell may follow, or the press). The turn stays open, the next
            # player's first move or the press ends it (_close_at_start), and the table
            # shows a complete turn as ended meanwhile (Tracker.state)
            return False
        return all(m[0] != "done" for m in n.pending)

    seen: dict[Key, Node] = {}
    keep_paths = opts.commit_margin

    def score(child: Node) -> None:
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
            # the same state by another path about as likely: kept beside (Hypothesis.alts)
            _merge_paths(lo, hi)
        seen[key] = lo

    if terminal_ok(root):
        terminals.append(root)
    level = [root]
    shut = _close_at_start(srch, root, opts)
    if shut is not None:
        score(shut)
        if terminal_ok(shut):
            terminals.append(shut)
        level.append(shut)
    # the frame's budget (SearchCache.allow): each level may try its share of what is left,
    # so a narrowed search still reaches the whole turn's depth with its best-ranked nodes
    # (a beam cut short at the first levels would keep only short, wrong stories)
    allowance = srch.left
    used = 0
    for lvl in range(depth):
        seen = {}
        # a move ending on a space the picture shows unchanged must be moved on again: never on
        # the last level
        far = anywhere and lvl < depth - 1
        queue = list(level)
        share = (allowance - used) / (depth - lvl)
        tried = 0
        for node in queue:
            if tried >= share:
                # the level's nodes come best-ranked first: the rest are left unexpanded
                srch.cut = True
                break
            node_views = srch.view(node.state)
            touched = frozenset(
                i + 1 for i, (v, r) in enumerate(zip(node_views, root_views, strict=True)) if v != r
            ) | frozenset(s for a in node.actions for s in spaces_of(a, node.state.table))
            allowed = changed | touched
            dests: frozenset[int] | None = None if far else allowed
            if not allowed and (not node.pending or node.pending[0][0] != "done"):
                # nothing changed and no DONE to consume: only a turn close can matter
                allowed = frozenset()
            for base, action, prior, pending, implicit in transitions(
                node.state, node.pending, node.implicit, allowed, dests, opts
            ):
                tried += 1
                if action is None:
                    if implicit and node is root and shut is not None:
                        continue  # closed before the first level (_close_at_start)
                    if node.implicit and not implicit and len(pending) < len(node.pending):
                        # the DONE of a turn already ended unannounced, nothing played
                        # since: the press is used up, the new turn goes on
                        child = Node(
                            node.state,
                            node.prior + prior,
                            node.actions,
                            node.events,
                            node.states,
                            pending,
                            False,
                            closes=node.closes,
                            alts=node.alts,
                            late=node.late,
                        )
                        score(child)
                        continue
                    if opts.board_turns and implicit and node.closes:
                        prior = opts.cost_implicit_end  # a second turn end in one frame
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
                    if opts.board_turns and node.implicit and _off_turn(base, action):
                        # a turn end nobody announced shows only by the next player's move:
                        # a spell of another player right after it (master variant) tells
                        # nothing of it, and the end is as unlikely as any unannounced one
                        late += opts.cost_implicit_end
                    child = Node(
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
                        late=node.late,
                    )
                    if base.modules is not None and any(e.kind in WITCH_HITS for e in ev):
                        # a player hit by the witch may spend a feather against it
                        for pa in protect_variants(base, action, ev):
                            got_p = srch.apply(base, pa)
                            if got_p is not None:
                                pst, pev = got_p
                                score(
                                    Node(
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
                    if isinstance(action, Feather) and (
                        action.use == "free_spell"
                        or (
                            action.use == "extra_card"
                            and t.cards_used >= base.table.actions_per_turn + t.extra_card
                        )
                    ):
                        # a feather's extra card or free spell changes nothing the camera sees:
                        # the card or the spell it pays for is searched at this level too, not
                        # one level later (a turn of two cards, a spell, the feather and its
                        # card is longer than the pass; a turn end, the feather and its spell
                        # is longer than a quick pass, which then ends the search with the
                        # spell paid in potions)
                        queue.append(child)
                score(child)
        used += tried
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
    srch.left = allowance - used
    srch.tried += used
    return terminals


ALT_BUDGET = 6000
"""Transitions :func:`other_paths` may try for one story's step."""


def other_paths(srch: SearchCache, hyp: Hypothesis, node: Node, opts: TrackerOptions) -> list[Node]:
    """Add to ``node.alts`` the other paths from ``hyp`` to exactly ``node``'s state (the same
    pending inputs) whose prior is within ``commit_margin`` of ``node``'s; return the paths
    to the same table with other potions (:func:`~companion.tracking.belief.seen_key` equal,
    the potions not) whose prior is within ``potion_margin`` of ``node``'s, the cheapest per
    potion count, each with its own other paths.

    Between two whole-turn frames the camera sees where the turn ends, not how it got there:
    a tower carried three spaces by a card, or two by Advance a Tower (R-SPELL-6) and one by
    a card; a wizard moved before or after the tower it stands on. The frame's beam keeps one
    path per state and drops the rest by their picture on the way, so the committed entries
    claimed the order and the intermediate boards of whichever path it kept. A second search
    towards the exact state (its picture known, so every step of it ranks by what is still to
    explain) finds the others, and the commit then claims only what they share
    (:func:`~companion.tracking.commit.shared_stretch`). It may try ``ALT_BUDGET``
    transitions and does not count against the frame's budget.

    The search ranks a piece staged on a space the picture shows unchanged as still to
    explain (``staged``): a tower carried by two cards may have stopped on wizards between
    them, trapping them for a potion (R-TOWER-9), and left again; that stop looks unlike the
    picture until the second move, and the frame's beam drops it behind the order of the
    same two cards that stops on an empty space. The table is the same, the mover's potions
    are not (R-POTION-2), so that path is another potion story of the table, not another path
    to the state; without it the belief held only the cheaper potions and committed them as
    certain."""
    tb = hyp.state.table
    target = Target(expected_observation(node.state), tb.length, opts.noise)
    was, cut, tried = srch.allow(ALT_BUDGET), srch.cut, srch.tried
    try:
        found = search_frame(
            srch, hyp, target, opts, len(node.actions) + 1, anywhere=True, staged=True
        )
    finally:
        srch.allow(was)
        srch.cut, srch.tried = cut, tried
    key = state_key(node.state)
    table = seen_key(node.state)
    by_state: dict[Key, list[Node]] = {}  # the nodes per state, cheapest first
    for m in sorted(found, key=lambda m: m.prior):
        if m.pending == node.pending and m.implicit == node.implicit:
            by_state.setdefault(state_key(m.state), []).append(m)
    _gather(node, by_state.pop(key, ()), opts)
    variants: list[Node] = []
    for v, *others in by_state.values():
        if v.prior > node.prior + opts.potion_margin or seen_key(v.state) != table:
            continue
        # a variant's own order is unseen too: its other paths go with it, and its commit
        # claims only what they share
        _gather(v, others, opts)
        variants.append(v)
    return variants


def _gather(node: Node, others: Iterable[Node], opts: TrackerOptions) -> None:
    """Add to ``node.alts`` the paths of ``others`` (nodes of ``node``'s state, cheapest first)
    whose prior is within ``commit_margin`` of ``node``'s, each path once, at most
    ``MAX_ALTS``."""
    have = {_path_print(node.states), *(_path_print(a[2]) for a in node.alts)}
    alts = list(node.alts)
    for m in others:
        if m.prior > node.prior + opts.commit_margin:
            continue
        for path in ((m.actions, m.events, m.states), *m.alts):
            fp = _path_print(path[2])
            if fp not in have and len(alts) < MAX_ALTS:
                have.add(fp)
                alts.append(path)
    node.alts = tuple(alts)


def _closed(
    srch: SearchCache,
    node: Node,
    opts: TrackerOptions,
    prior: float,
    pending: tuple[Marker, ...],
    implicit: bool,
) -> Node | None:
    """``node`` with its turn closed (DONE pressed, or ``implicit``: the next player's move
    shows it), ``prior`` (nats) added; None when the turn cannot end there."""
    got = close_turn(srch, node.state, opts)
    if got is None:
        return None
    nst, acts, evs, sts, extra = got
    if not implicit and opts.cost_before_done and _moved_this_turn(node.actions):
        extra += opts.cost_before_done
    return Node(
        nst,
        node.prior + prior + extra,
        node.actions + acts,
        node.events + evs,
        node.states + sts,
        pending,
        implicit,
        closes=node.closes + (opts.cost_after_close if implicit else opts.cost_after_done),
        alts=_extend_paths(node.alts, acts, evs, sts) if node.alts else (),
        late=(node.late or prior) if implicit else 0.0,
    )


def _close_at_start(srch: SearchCache, root: Node, opts: TrackerOptions) -> Node | None:
    """The searched hypothesis' complete turn ended unannounced before the frame's first move
    (``board_turns``; :func:`~companion.tracking.candidates.turn_complete`): the player has
    nothing left to play but a spell, so the next player's moves may follow at once
    (``cost_complete_end``, R-TURN-2/5/6/8). It takes no search level (the next player's
    whole turn fits the frame's passes as after a press), and the camera saw the board
    between the two turns (the frame before), so the moves after it are not charged
    ``cost_after_close``. None when the turn is not complete, the frames are not known to
    show whole turns (``cost_complete_end`` no cheaper than ``cost_implicit_end``), the game
    is over or the turn cannot end. A pending DONE press is then the next player's (the press
    that would have ended this turn before the frame was forgotten). A story never ends a
    frame on such a close: the turn stays open until a press or the next player's move shows
    it ended (docs/architecture.md, "The tracker")."""
    st = root.state
    if not opts.board_turns or st.game.over or root.implicit or not played(st):
        return None
    if opts.cost_complete_end >= opts.cost_implicit_end:
        # the frames are not known to show whole turns (the tracker's pace): the press
        # follows the frame of the turn's last move, and the turn ends as any other
        return None
    # a turn that shows fewer moves than cards (two moves of one tower told as one card, a
    # card discarded) ends the same way, its unplayed cards discarded (``cost_discard``
    # each, close_turn): the camera cannot count the cards
    shut = _closed(srch, root, opts, opts.cost_complete_end, root.pending, True)
    if shut is not None:
        shut.closes = 0.0
    return shut


def played(st: GameState) -> bool:
    """The current player's turn is complete (:func:`~companion.tracking.candidates.
    turn_complete`) or has a card or a spell played: in frames of whole turns the frame that
    shows it was taken at its end (the camera cannot count the cards: two moves of one tower
    look like one card)."""
    t = st.turn
    return turn_complete(st) or t.cards_used > 0 or bool(t.casts)


def _off_turn(st: GameState, a: Action) -> bool:
    """``a`` is made by another player than the current one (an off-turn spell)."""
    player = getattr(a, "player", None)
    return player is not None and player != st.table.colours[st.turn.player]


def shown_ended(hyp: Hypothesis, pace: bool | None, opts: TrackerOptions) -> bool:
    """``board_turns``: the table shows ``hyp``'s turn as ended (the next player's, R-TURN-8)
    though no DONE press is pending (a dice press then is the next player's): its turn is
    complete (every card it allows played, redrawn, or ended by a move, R-TURN-2/5/6) and the
    frames show whole turns (``pace`` False: fewer frames than moves, ``action_pace``), so
    the press, which usually comes before the frame, was forgotten (a frame after every move
    shows the turn's last move before its press). Only shown: the belief keeps the turn open
    (a spell may still come) until the press or the next player's first move ends it
    (:func:`_close_at_start`), so nothing is committed on this guess (docs/architecture.md,
    "The tracker")."""
    st = hyp.state
    if (
        not opts.board_turns
        or hyp.implicit
        or st.game.over
        or any(m[0] == "done" for m in hyp.pending)
        or not played(st)
    ):
        return False
    return pace is False


def next_moved(trail: Sequence[Step], at: int) -> bool:
    """The first turn end of step ``at`` of ``trail`` is followed by a move of the player whose
    turn it began (in that step or the next one shown): the board showed that turn end, so a
    DONE press arriving now may be the one it missed (``cost_late_done``). A spell of the
    player before (off-turn, the master variant) shows no turn end."""
    after: list[Action] = []
    began: GameState | None = None
    for step in trail[at:]:
        for a, st in zip(step.actions, step.states, strict=True):
            if began is None:
                if isinstance(a, EndTurn):
                    began = st
                continue
            after.append(a)
    if began is None:
        return False
    colour = began.table.colours[began.turn.player]
    for a in after:
        if isinstance(a, EndTurn):
            return False
        if not isinstance(a, DiscardCard) and getattr(a, "player", None) is not None:
            return bool(a.player == colour)
    return False


def _select(nodes: Iterable[Node], beam: int, per_board: int) -> list[Node]:
    """The ``beam`` best nodes by rank, at most ``per_board`` of them per board: variants that
    differ only in turn counters, pending dice or potions must not crowd out other boards (a
    kept board's other potion counts come on top, up to ``per_board``). With
    the expansion a board's second node must differ from the first in more than the order of
    its spells and cards (e.g. in feathers: the raven moved before or after the move)."""
    out: list[Node] = []
    count: dict[Key, int] = {}
    outcomes: set[Key] = set()
    pots: set[Key] = set()
    more: list[Node] = []
    for n in sorted(nodes, key=lambda n: n.rank):
        st = n.state
        k = (board_key(st), st.turn.player)
        c = count.get(k, 0)
        ms = st.modules
        # the hidden counters a later action of the frame may need: potions, and with the
        # expansion the feathers, armed spells and free casts (a feather spent on a free
        # spell changes nothing the camera sees, and the spell it pays for comes after it)
        pk: Key = (
            (k, st.potions) if ms is None else (k, st.potions, ms.feathers, ms.armed, ms.free_casts)
        )
        if pk not in pots and 0 < c < 2 * per_board and (len(out) >= beam or c >= per_board):
            # another potion count of a kept board, on top of the beam: a spell the camera
            # cannot tell from a card (R-SPELL-6) must not fall out behind the cards of other
            # boards, nor behind its own board's other stories (a spell between two moves ranks
            # far down among the stories of many players' boards; with modules more spells are
            # invisible)
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


def replay(
    srch: SearchCache, st: GameState, actions: Sequence[Action]
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


def _moved_this_turn(actions: Sequence[Action]) -> bool:
    """A move among ``actions`` after their last turn end."""
    for a in reversed(actions):
        if isinstance(a, EndTurn):
            return False
        if not isinstance(a, DiscardCard):
            return True
    return False
