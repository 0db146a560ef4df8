"""Finding the way back: a belief the camera steadily contradicts is re-anchored on the board
the camera reads (docs/architecture.md, "The tracker", "A lost game finds its way back").

A story that needs one misread field explains a frame (a misread costs 3.5-4.6 nats, well under
a frame's ``bad_frame``), so a belief that lost the true story (a turn its search could not
reach, an answer that ruled the truth out) can go on "explaining" frame after frame, each
with the same misread, and commit wrong boards as certain. Camera errors come and go from frame
to frame; a wrong belief does not. :func:`lost_spaces` finds the spaces that several successive
frames read alike, with confidence, and that every held story disagrees with;
:func:`anchor_states` builds the legal states (``check_invariants`` of the rules core is the
judge) that show what the camera reads there, keeping the belief's hidden pieces (trapped
wizards, potions, the cards played) wherever they are consistent with it, and whose turn after
the DONE presses the lost belief collected (:func:`presses_done`). A
wizard the camera no longer shows and whose place the belief cannot tell is placed every way
the board allows, one state each (held together and shown as unsure, like any hidden
difference).

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from itertools import combinations, product

from companion.rules.invariants import check_invariants
from companion.rules.model import MAX_ON_TOP, GameState, position, space_of, tier_of
from companion.tracking.belief import Hypothesis, Marker
from companion.tracking.noise import COLOUR_INDEX, SpaceView, Target, space_views
from companion.tracking.options import TrackerOptions

Reading = tuple[SpaceView | None, ...]
"""What the camera steadily read on each space (index ``space - 1``), None where it did not."""


def steady_reading(recent: Sequence[Target], min_confidence: float) -> Reading:
    """Per space, the view every frame of ``recent`` (oldest first) read alike with at least
    ``min_confidence``, else None. Empty frames list: every space None."""
    if not recent:
        return ()
    last = recent[-1]
    out: list[SpaceView | None] = []
    for idx in range(last.length):
        got = last.reading(idx)
        if got is None or got[1] < min_confidence:
            out.append(None)
            continue
        if all(t.same_reading(last, idx) and _conf(t, idx) >= min_confidence for t in recent):
            out.append(got[0])
        else:
            out.append(None)
    return tuple(out)


def current_reading(recent: Sequence[Target], min_confidence: float) -> Reading:
    """The board the camera reads now: per space, what the last two frames of ``recent`` read
    alike with at least ``min_confidence`` (one still board seen twice); where they differ,
    the reading of either that an earlier frame of ``recent`` shares (the other was a
    misread: a space no move changed since); else None (a misread of one frame is never
    taken)."""
    if not recent:
        return ()
    last = recent[-1]
    older = recent[:-2]
    out: list[SpaceView | None] = []
    for idx in range(last.length):
        got = _alike(last, recent[-2], idx, min_confidence) if len(recent) >= 2 else None
        for x in reversed(recent[-2:]):
            for y in older:
                if got is None:
                    got = _alike(x, y, idx, min_confidence)
        out.append(got)
    return tuple(out)


def _alike(x: Target, y: Target, idx: int, least: float) -> SpaceView | None:
    """``x``'s reading of space ``idx + 1`` when ``y`` read it alike, both with at least
    ``least`` confidence; else None."""
    got = x.reading(idx)
    if got is None or not x.same_reading(y, idx) or min(got[1], _conf(y, idx)) < least:
        return None
    return got[0]


def _conf(t: Target, idx: int) -> float:
    got = t.reading(idx)
    return -1.0 if got is None else got[1]


def lost_spaces(
    reading: Reading,
    target: Target,
    states: Sequence[GameState],
    view: Callable[[GameState], Sequence[SpaceView]],
    cost: float,
) -> tuple[int, ...]:
    """The spaces (1..N) of the steady ``reading`` that the best of ``states`` (every held
    story, best first) disagrees with by at least ``cost`` nats on ``target`` (the newest frame),
    when every one of ``states`` disagrees so with the steady reading somewhere; else ``()``
    (some held story agrees with what the camera keeps showing). ``view``: a state's expected
    views (:meth:`~companion.tracking.search.SearchCache.view`)."""
    steady = [i for i, r in enumerate(reading) if r is not None]
    if not steady or not states:
        return ()
    first: tuple[int, ...] = ()
    for k, st in enumerate(states):
        views = view(st)
        bad = tuple(i + 1 for i in steady if target.space_cost(i, views[i]) >= cost)
        if not bad:
            return ()
        if k == 0:
            first = bad
    return first


def lost_now(
    recent: Sequence[Target],
    hyps: Sequence[Hypothesis],
    view: Callable[[GameState], Sequence[SpaceView]],
    opts: TrackerOptions,
) -> tuple[int, ...]:
    """The spaces that every frame of ``recent`` (oldest first) read alike with confidence and
    every story of ``hyps`` disagrees with on the newest frame (:func:`lost_spaces`), or
    ``()``."""
    if opts.anchor_frames <= 0 or not recent or not hyps:
        return ()
    reading = steady_reading(recent, opts.anchor_confidence)
    states = [h.state for h in sorted(hyps, key=lambda h: h.cost)]
    return lost_spaces(reading, recent[-1], states, view, opts.recheck_cost)


def find_way_back(
    recent: Sequence[Target],
    hyps: Sequence[Hypothesis],
    view: Callable[[GameState], Sequence[SpaceView]],
    opts: TrackerOptions,
    close: Callable[[GameState], GameState | None] | None,
    before: Collection[int],
) -> tuple[tuple[int, ...], tuple[Hypothesis, ...]] | None:
    """The re-anchored belief when ``hyps`` (every held story) is lost: the spaces that the
    ``anchor_frames`` frames of ``recent`` (oldest first) read alike with confidence and every
    story disagrees with (:func:`lost_now`) and that the belief after the frame before
    disagreed with on that frame too (``before``: :func:`lost_now` of that frame alone). A steady
    reading alone is no proof of a lost belief: a move of the newest turn can change what a
    space should show (a wizard entering the raven castle moves it, R-RAVEN-3) while the camera
    misreads that space as it was, and every story then disagrees with a reading that the
    frames before agreed with; a lost belief disagrees frame after frame. Then the stories of
    the board the camera reads
    now (:func:`current_reading`, :func:`anchor_states`: the best story's hidden pieces kept
    where consistent), likeliest first, equally likely. The best story's pending presses came
    before the frames the board is read from, so the board shows what they did: each DONE
    press ends a turn (``close``: the turn ended as the button does, R-TURN-4/8; a turn the
    story already ended unannounced uses up one press), the dice presses were for moves on
    that board, and none stays pending (:func:`presses_done`). None when some story agrees with
    the camera, too few frames were seen, or no legal board shows the reading (the belief is
    kept)."""
    if len(recent) < opts.anchor_frames:
        return None
    spaces = tuple(s for s in lost_now(recent, hyps, view, opts) if s in before)
    if not spaces:
        return None
    best = min(hyps, key=lambda h: h.cost)
    # the board the camera reads now: the spaces of the last turn too (read alike in the last
    # frames), else the towers a turn moved would not add up with the steady spaces
    now = current_reading(recent, opts.anchor_confidence)
    states = anchor_states(best.state, now, opts.keep)
    if not states:
        return None
    if close is None:
        return spaces, tuple(Hypothesis(st, 0.0, (), best.pending, best.implicit) for st in states)
    out = [presses_done(st, best.pending, best.implicit, close) for st in states]
    return spaces, tuple(Hypothesis(st, 0.0, (), (), False) for st in out)


def presses_done(
    state: GameState,
    pending: Sequence[Marker],
    implicit: bool,
    close: Callable[[GameState], GameState | None],
) -> GameState:
    """``state`` after the DONE presses among ``pending`` (each ends the turn: ``close``),
    the first of them used up by a turn that already ended unannounced (``implicit``). A
    lost belief collects the presses of the turns it could not explain; a board anchored on
    the frames after them that kept them pending would have every one of those turns still
    to end in the next frame's search, and the next frames would stay unexplained (the
    belief re-anchored again and again, whose turn wrong). A turn that cannot end (the game
    is over) stays as it is."""
    st = state
    used = implicit
    for m in pending:
        if m[0] != "done":
            continue
        if used:
            used = False
            continue
        got = close(st)
        if got is None:
            break
        st = got
    return st


def doubted(
    recent: Sequence[Target],
    hyps: Sequence[Hypothesis],
    view: Callable[[GameState], Sequence[SpaceView]],
    opts: TrackerOptions,
) -> bool:
    """Every story of ``hyps`` disagrees with what the last two frames of ``recent`` read
    alike (:func:`lost_spaces`) while their trails are short (at most ``max_lag`` held steps):
    the tracker then commits nothing until the next frames tell a misread, a wrong story
    (the recheck) and a lost belief (the re-anchor) apart: a wrong board is never committed
    as certain on a story the camera keeps contradicting."""
    if opts.anchor_frames <= 0 or len(recent) < 2 or not hyps:
        return False
    if min(len(h.trail) for h in hyps) > opts.max_lag:
        return False
    reading = steady_reading(recent[-2:], opts.anchor_confidence)
    states = [h.state for h in sorted(hyps, key=lambda h: h.cost)]
    return bool(lost_spaces(reading, recent[-1], states, view, opts.recheck_cost))


def anchor_states(best: GameState, reading: Reading, limit: int) -> tuple[GameState, ...]:
    """Legal states (at most ``limit``) that show the steady ``reading`` where it has one and
    ``best``'s view elsewhere, with ``best``'s hidden pieces where they are consistent with it:
    towers kept in their stacks where a space's height and top agree, trapped wizards kept
    where their stack still covers them, potions, turn, progress and expansion tokens kept.
    The first is the likeliest (a wizard that vanished from view trapped where a tower landed
    on it); more than one when a vanished wizard's place is unknown. Empty when no legal state
    shows the reading (a reading the tracker cannot trust: nothing is anchored)."""
    tb = best.table
    views = space_views(best)
    want = [r if r is not None else v for r, v in zip(reading, views, strict=False)]
    if len(want) != tb.length or want == views:
        return ()
    stacks = _stacks(best, want)
    if stacks is None:
        return ()
    castles = [i + 1 for i, w in enumerate(want) if w[3]]
    castle = castles[0] if len(castles) == 1 else best.castle
    choices = _wizards(best, stacks, want)
    if choices is None:
        return ()
    out: list[GameState] = []
    for wizards in choices:
        st = replace(best, stacks=stacks, wizards=wizards, castle=castle)
        if check_invariants(st):
            continue
        got = space_views(st)
        if any(r is not None and g != r for g, r in zip(got, reading, strict=True)):
            continue
        out.append(st)
        if len(out) >= limit:
            break
    return tuple(out)


def _stacks(best: GameState, want: Sequence[SpaceView]) -> tuple[tuple[int, ...], ...] | None:
    """The towers rearranged to ``want``'s heights and top kinds: stacks that already agree are
    kept; of the others, the buried towers stay where they are (under the new top, as far as
    the new height goes: the camera sees roofs, not what they cover, and moves take towers
    from the top) and the rest are dealt out again, old tops first for the new tops (magic
    roofs first), the magic tower only on top (invariant 3). None when the towers of the
    disagreeing spaces cannot make them."""
    tb = best.table
    kinds = [t.kind for t in tb.towers]
    old = best.stacks
    out: list[tuple[int, ...]] = [()] * tb.length
    redo: list[int] = []
    for i, stack in enumerate(old):
        h, top = want[i][0], want[i][1]
        if len(stack) == h and (h == 0 or kinds[stack[-1]] == top):
            out[i] = stack
        else:
            redo.append(i)
    if sum(want[i][0] for i in redo) != sum(len(old[i]) for i in redo):
        return None
    below: dict[int, list[int]] = {}
    free: list[int] = []
    for i in redo:
        h = want[i][0]
        keep = list(old[i][: max(0, min(h - 1, len(old[i])))])
        if any(kinds[t] == "magic" for t in keep):
            keep = keep[: [kinds[t] for t in keep].index("magic")]
        below[i] = keep
        free.extend(t for t in old[i] if t not in keep)
    was_top = {old[i][-1] for i in redo if old[i]}
    for i in sorted(redo, key=lambda i: (want[i][1] != "magic", i)):
        h, top = want[i][0], want[i][1]
        if h == 0:
            continue
        fits = sorted((t not in was_top, t) for t in free if kinds[t] == top)
        if not fits:
            return None
        pick = fits[0][1]
        free.remove(pick)
        out[i] = (pick,)
    for i in redo:
        h = want[i][0]
        if h == 0:
            continue
        under = below[i]
        while len(under) < h - 1:
            mine = [t for t in free if t in old[i] and kinds[t] != "magic"]
            rest = sorted(t for t in free if kinds[t] != "magic")
            if not mine and not rest:
                return None
            t = (mine or rest)[0]
            free.remove(t)
            under.append(t)
        out[i] = (*under, *out[i])
    if free:
        return None
    return tuple(out)


def _wizards(
    best: GameState, stacks: Sequence[tuple[int, ...]], want: Sequence[SpaceView]
) -> list[tuple[int, ...]] | None:
    """Every way (likeliest first, at most 64) to place the wizards so the visible ones are
    ``want``'s counts on ``stacks``: wizards seen where they were stay; trapped ones stay where
    their stack still covers them; the camera's new wizards come from the wizards it no
    longer shows and the trapped ones the new stacks uncover, else from the other trapped ones
    (which of them the camera cannot tell: one way each); a wizard no longer shown is trapped
    where a tower now covers its place, else every place the changed stacks allow. None when
    the counts cannot be met."""
    tb = best.table
    old = best.stacks
    wiz = list(best.wizards)
    per_seat: list[list[list[tuple[int, int]]]] = []
    for seat, colour in enumerate(tb.colours):
        lo, hi = tb.wiz_range[seat]
        ci = COLOUR_INDEX[colour]
        need = {i + 1: w[2][ci] for i, w in enumerate(want) if w[2][ci]}
        shown: dict[int, list[int]] = {}
        kept: list[int] = []  # trapped and still covered
        loose: list[int] = []  # trapped, no longer covered
        for k in range(lo, hi):
            p = wiz[k]
            if p == 0:
                continue  # inside the raven castle: never seen, kept
            s, t = space_of(p), tier_of(p)
            if t == len(old[s - 1]):
                shown.setdefault(s, []).append(k)
            elif t < len(stacks[s - 1]):
                kept.append(k)
            else:
                loose.append(k)
        moved: list[int] = []
        for s, ks in shown.items():
            stay = min(len(ks), need.get(s, 0))
            for k in ks[:stay]:
                wiz[k] = position(s, len(stacks[s - 1]))
                need[s] -= 1
            moved.extend(ks[stay:])
        targets = [position(s, len(stacks[s - 1])) for s in sorted(need) for _ in range(need[s])]
        free = moved + loose
        if len(free) >= len(targets):
            fills = [list(c) for c in combinations(free, len(targets))]
        elif len(targets) - len(free) <= len(kept):
            fills = [free + list(c) for c in combinations(kept, len(targets) - len(free))]
        else:
            return None
        ways: list[list[tuple[int, int]]] = []
        for fill in fills:
            placed = list(zip(fill, targets, strict=True))
            hide: list[list[tuple[int, int]]] = []
            for k in free:
                if k in fill:
                    continue
                s, t = space_of(wiz[k]), tier_of(wiz[k])
                if t < len(stacks[s - 1]):
                    hide.append([(k, wiz[k])])  # a tower landed on it
                    continue
                places = [
                    position(s2 + 1, tier)
                    for s2, st in enumerate(stacks)
                    if st != old[s2]
                    for tier in range(len(st))
                ]
                hide.append([(k, p) for p in places])
            for combo in product(*hide):
                ways.append(placed + list(combo))
                if len(ways) >= 64:
                    break
        if not ways:
            return None
        per_seat.append(ways)
    out: list[tuple[int, ...]] = []
    for combo2 in product(*per_seat):
        w = list(wiz)
        for way in combo2:
            for k, p in way:
                w[k] = p
        if any(w.count(position(s + 1, len(st))) > MAX_ON_TOP for s, st in enumerate(stacks)):
            continue
        out.append(tuple(w))
        if len(out) >= 64:
            break
    return out
