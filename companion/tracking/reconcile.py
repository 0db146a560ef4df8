"""Explaining one frame: every hypothesis' stories that explain the picture
(:func:`explain`), and the *recheck* of a frame whose best story the camera contradicts twice
(:func:`contradicted`, :func:`recheck`).

A misread field costs 3.5-4.6 nats, well under a frame's ``bad_frame``, so a wrong story that
needs one misread "explains" a frame when the search's beam lost the true story (a turn whose
tower is staged on a space and moved on by a spell ranks far behind shorter stories until its
last move). Camera errors are independent from frame to frame, a wrong story is not: it
disagrees with the next frame on the same space in the same way. Such a frame is searched
again from the belief before the previous frame with a wider beam, and both frames are
explained anew (docs/architecture.md, "The tracker").

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from companion.rules.actions import EndTurn
from companion.rules.model import GameState
from companion.tracking.belief import (
    Hypothesis,
    Key,
    Marker,
    Path,
    Step,
    board_key,
    prune,
    seen_key,
    state_key,
)
from companion.tracking.noise import SpaceView, Target
from companion.tracking.options import TrackerOptions
from companion.tracking.search import Node, SearchCache, other_paths, replay, search_frame

QUICK_SHARE = 0.2
"""The share of a frame's budget a quick pass may try (the full pass gets the rest)."""
ROOT_SHARE = 0.5
"""The share of what its pass has left that each searched root may try (at least its equal
share among the roots still to search)."""


@dataclass(frozen=True, slots=True)
class Explained:
    """What :func:`explain` found: the stories (``hyps``, costs in the base of the searched
    hypotheses, not yet pruned), the best picture cost among them (``best_obs``, nats) and the
    spaces where the best-fitting story disagrees with the picture (``mismatch``)."""

    hyps: tuple[Hypothesis, ...]
    best_obs: float
    mismatch: tuple[int, ...]


def explain(
    srch: SearchCache,
    hyps: Sequence[Hypothesis],
    target: Target,
    opts: TrackerOptions,
    modules: bool,
    unexplained: int,
    wide: bool = False,
    budget: float = float("inf"),
) -> Explained:
    """Every hypothesis' stories that explain ``target``: from the quick passes, else the full
    pass, else the deep pass after an unexplained frame (``unexplained``: frames in a row the
    tracker could not explain; :func:`~companion.tracking.search.search_frame`), with the
    quick passes' stories of the roots a later pass did not search. ``wide``:
    the full pass only, with ``recheck_beam`` (:func:`recheck`); otherwise the full and deep
    passes rank with ``full_beam``. ``modules``: expansion
    modules are in play (longer turns). ``budget``: transitions the passes may try in all
    (``TrackerOptions.frame_budget``): each quick pass a fifth of what is left, the full pass
    the rest (half of it with a deep pass after it; the staged pass what the full pass left),
    and within a pass each searched root,
    the likeliest first, half of what its pass has left (the last root all of it)."""
    # expansion turns are longer: a feather's extra card, free spells, fountain casts
    more = opts.module_depth if modules else 0
    # (destinations anywhere, depth, good enough, roots): the quick passes only end moves
    # on spaces that changed; the full pass anywhere, since a piece staged on a space and
    # moved on in the same turn (two moves of one tower, 16 -> 4 -> 8) leaves that space
    # unchanged, and a guided search then finds only wrong stories (another root's hidden
    # wizards, moves after the DONE): the 2-player bench lost 40 % of its turns to them
    # (…, staged): the staged pass searches the full pass's turns again, its beam ranking a
    # piece staged on a space the picture shows unchanged as "still to explain" after any
    # move, not only after a spell (search_frame). Towers carried by a card on to an empty
    # space and on by another card, in a turn that also holds a spell, leave that space
    # empty: the plain beam charges the stop in full, the three-move turn falls out of it,
    # and a wrong story that needs a misread or two explains the frame instead. So when the
    # full pass finds no exact picture, the staged pass (from the best ``deep_roots``) adds
    # its stories, and the two passes' stories compete
    passes: list[tuple[bool, int, float, int, bool]] = [
        (False, d, opts.exact, len(hyps), False) for d in opts.quick_depths
    ] + [
        (True, opts.depth + more, opts.exact, opts.full_roots, False),
        (True, opts.depth + more, target.bad_frame, opts.deep_roots, True),
    ]
    if wide:
        passes = [(True, opts.depth + more, target.bad_frame, opts.full_roots, True)]
        opts = replace(opts, beam=opts.recheck_beam)
    elif unexplained >= 1:
        # the previous frame was not explained either: not a hand in the picture but more
        # happened than a turn (or a piece moved far): search deeper, destinations anywhere
        deep = opts.deep_depth
        if unexplained >= 2 and any(sum(m[0] == "done" for m in h.pending) >= 2 for h in hyps):
            # a stop's frames were all too noisy, then DONE was pressed again: two whole
            # turns to cross, and with spells a turn takes ``depth`` transitions (6-player
            # games lost the rest of the game to this)
            deep = max(deep, 2 * opts.depth)
        passes.append((True, deep, target.bad_frame, opts.deep_roots, False))
    out: list[Hypothesis] = []
    origin: list[tuple[int, Hypothesis, Node]] = []
    best_obs = float("inf")
    best_mismatch: tuple[int, ...] = ()
    # a quick pass's story ends the search by its picture cost plus its root's distance
    # from the best root: an exact picture from a root 11 nats behind (another story of
    # the last frame) is not what the full pass from the best roots would keep
    base = min(h.cost for h in hyps)
    best_near = float("inf")
    left = budget
    # the quick passes' stories, each with the root it grew from (id) and its search node
    # (None for a replay): a later pass that searches only the likeliest roots keeps those of
    # the roots it leaves out (below)
    quick: list[tuple[int, Hypothesis, tuple[Hypothesis, Node] | None]] = []
    searched: set[int] = set()
    for k, (anywhere, depth, good, nroots, staged) in enumerate(passes):
        # the staged pass runs only when the full pass found no exact picture: the passes
        # before it share the budget as if it were not there, and it takes what they left
        later = sum(1 for p in passes[k + 1 :] if not p[4])
        pass_left = left * (QUICK_SHARE if not anywhere else 1.0 / (1 + later))
        spent = 0.0
        if not staged or not out:
            if not anywhere:
                quick.clear()
            searched.clear()
            out = []
            origin.clear()
            best_obs = float("inf")
            best_near = float("inf")
        # the full pass runs only on frames the quick passes left without an exact picture;
        # it ranks with a wider beam (``full_beam``, as the deep pass): a turn whose moves
        # must come in one order (a wizard leaves a stack before a tower lands on it) explains
        # its spaces in that order, and its prefix ranked behind thirty shorter stories that
        # explain more spaces at once and then dead-end (a 4-player game lost its board at
        # turn 5 and never found it)
        popts = replace(opts, beam=opts.full_beam) if anywhere and not staged else opts
        roots = sorted(hyps, key=lambda h: h.cost)
        # hypotheses that differ only in potions share one search: the best of them is
        # searched, the others replay its explanations (a spell they cannot pay fails);
        # ``nroots`` limits the searches, not the replays: every potion story of a searched
        # board is replayed (the stories it found that can survive the prune), else the true
        # potions, a spell or two behind the cheapest stories of a board, fall out, and every
        # later commit shows the potions wrong
        # (the exact wizards, not only the board: an action names its wizard, and two stories
        # that show the same board may have moved different wizards of a colour there, so the
        # lead's "red-2" is another piece in a member's state and its replay another story;
        # the member's own continuation was then never searched)
        groups: dict[Key, list[Hypothesis]] = {}
        for i, h in enumerate(roots):
            t = h.state.turn
            gkey = (board_key(h.state), h.state.wizards, t, h.state.game, h.pending, h.implicit)
            if gkey in groups:
                groups[gkey].append(h)
            elif i < nroots:
                groups[gkey] = [h]
        # within a board, only stories whose players to move can pay the same spells share a
        # search (_casts): a lead with no full potion finds card stories only, and a member
        # that could pay Advance a Tower had its spell only "repaired" at ``cost_repair``
        # more, out of the belief (6-player game: the true turn, a spell and two tower cards,
        # lost for the rest of the game). A board still counts once against ``nroots``
        # whatever its stories can pay: its potion stories are all carried on
        searches: list[list[Hypothesis]] = []
        for members in groups.values():
            by_casts: dict[tuple[int, ...], list[Hypothesis]] = {}
            for h in members:
                by_casts.setdefault(_casts(h.state), []).append(h)
            searches.extend(by_casts.values())
        for g, members in enumerate(searches):
            lead = members[0]
            searched.update(id(h) for h in members)
            # the likeliest root may take half of what is left, every other root at least its
            # equal share: a narrowed search still follows the best story as far as a whole
            # turn needs, and keeps the other likely stories' continuations
            srch.allow((pass_left - spent) * max(ROOT_SHARE, 1.0 / (len(searches) - g)))
            before = srch.tried
            found = search_frame(srch, lead, target, popts, depth, anywhere, staged)
            spent += srch.tried - before
            for n in found:
                if n.obs_cost < best_obs:
                    best_obs = n.obs_cost
                    best_mismatch = tuple(target.mismatched(srch.view(n.state)))
                best_near = min(best_near, lead.cost - base + n.obs_cost)
                origin.append((len(out), lead, n))
                step = Step(n.state, n.actions, n.events, n.states, n.alts, n.late)
                out.append(lead.extended(n.state, lead.cost + n.score, step, n.pending, n.implicit))
                if not anywhere:
                    quick.append((id(lead), out[-1], (lead, n)))
            low = min((n.score for n in found), default=0.0)
            for j, h in enumerate(members[1:], 1):
                for n in found:
                    if j >= opts.keep_per_board and n.score > low + opts.margin:
                        continue  # pruned anyway: beyond ``margin`` of the board's best
                    replayed = replay(srch, h.state, n.actions)
                    if replayed is None:
                        continue
                    rst, revs, rsts = replayed
                    alt_paths: list[Path] = []
                    for a, _e, _s in n.alts:
                        got_r = replay(srch, h.state, a)
                        if got_r is not None and state_key(got_r[0]) == state_key(rst):
                            alt_paths.append((a, got_r[1], got_r[2]))
                    step = Step(rst, n.actions, revs, rsts, tuple(alt_paths), n.late)
                    out.append(h.extended(rst, h.cost + n.score, step, n.pending, n.implicit))
                    if not anywhere:
                        quick.append((id(h), out[-1], None))
        srch.allow(float("inf"))
        left -= spent
        if (best_obs if anywhere else best_near) <= good:
            break
    if out and searched and quick:
        # the full pass searches the likeliest ``full_roots`` boards only; the stories the
        # quick pass found from the others (above all "nothing moved, the camera misread")
        # stay: camera errors are independent from frame to frame, so two ghost towers in
        # two frames in a row, each explained by a cheap wrong move from the best story,
        # put the true story a few nats behind, out of the searched roots, and without its
        # quick stories it fell out of the belief for good (the next frames, read right,
        # contradict every story then held and only a re-anchor finds the board again)
        for rid, h, src in quick:
            if rid in searched:
                continue
            if src is not None:
                origin.append((len(out), src[0], src[1]))
                n = src[1]
                if n.obs_cost < best_obs:
                    best_obs = n.obs_cost
                    best_mismatch = tuple(target.mismatched(srch.view(n.state)))
            out.append(h)
    _other_paths(srch, out, origin, opts)
    return Explained(tuple(out), best_obs, best_mismatch)


def _casts(st: GameState) -> tuple[int, ...]:
    """The full potions (R-POTION-3) of the players who may cast in a frame's search, capped at
    what two casts of the dearest spell cost: the player to move and the next one (a frame may
    show the next turn's first moves), every player in the master variant (R-SPELL-2)."""
    tb = st.table
    cap = 2 * max((tb.config.spell_costs[sp] for sp in tb.spells), default=0)
    n = len(tb.colours)
    p = st.turn.player
    seats = range(n) if tb.master else (p, (p + 1) % n)
    return tuple(min(st.potions[s][0], cap) for s in seats)


ALT_STORIES = 2
"""The likeliest stories of a frame whose step :func:`_other_paths` searches other paths for."""


def _other_paths(
    srch: SearchCache,
    out: list[Hypothesis],
    origin: Sequence[tuple[int, Hypothesis, Node]],
    opts: TrackerOptions,
) -> None:
    """The newest step of the ``ALT_STORIES`` likeliest stories of ``out`` (those within
    ``commit_margin`` of the best, moving more than once) with the other paths to its state
    (:func:`~companion.tracking.search.other_paths`), in place; ``origin``: each searched
    story's index in ``out``, the hypothesis it grew from and its search node. The other
    potion stories of the same table that search finds are appended to ``out`` (each potion
    count once, unless ``out`` has it as cheaply), at the story's picture cost plus the larger
    of their own prior and the story's."""
    if not out:
        return
    have: dict[Key, float] = {}
    for h in out:
        k = (state_key(h.state), h.pending, h.implicit)
        have[k] = min(h.cost, have.get(k, h.cost))
    best = min(h.cost for h in out)
    picked = sorted(
        (o for o in origin if out[o[0]].cost <= best + opts.commit_margin),
        key=lambda o: out[o[0]].cost,
    )
    searched = 0
    for i, lead, n in picked:
        if searched >= ALT_STORIES:
            break
        if sum(1 for a in n.actions if not isinstance(a, EndTurn)) < 2:
            continue
        searched += 1
        variants = other_paths(srch, lead, n, opts)
        h = out[i]
        step = replace(h.trail[-1], alts=n.alts)
        out[i] = replace(
            h, trail=h.trail[:-1] + (step,), alts=tuple(a[:-1] + (step,) for a in h.alts)
        )
        for m in variants:
            # never cheaper than the story it was found beside: the variant holds the potion
            # doubt open, it does not overrule the frame's search (a cheaper path found on the
            # side had dropped the true story, a spell with both cards discarded, out of
            # ``potion_margin``); a story ``out`` holds as cheaply is left as it is, one held
            # dearer is replaced when the prune merges the two
            k = (state_key(m.state), m.pending, m.implicit)
            cost = lead.cost + max(m.prior, n.prior) + n.obs_cost
            if cost >= have.get(k, float("inf")):
                continue
            have[k] = cost
            vstep = Step(m.state, m.actions, m.events, m.states, m.alts, m.late)
            out.append(lead.extended(m.state, cost, vstep, m.pending, m.implicit))


def contradicted(
    target: Target, before: Target, st_views: Sequence[SpaceView], opts: TrackerOptions
) -> tuple[int, ...]:
    """The spaces (1..N) where two frames in a row read the same thing (``before``, then
    ``target``) and both disagree with the expected views ``st_views`` (a story's,
    :meth:`~companion.tracking.search.SearchCache.view`) by at least ``recheck_cost`` nats:
    not a misread (those come and go) but a story the camera contradicts."""
    out: list[int] = []
    for idx, v in enumerate(st_views):
        if not target.same_reading(before, idx):
            continue
        need = opts.recheck_cost
        if target.space_cost(idx, v) >= need and before.space_cost(idx, v) >= need:
            out.append(idx + 1)
    return tuple(out)


def cut(hyps: Sequence[Hypothesis], steps: int, root_key: Key) -> tuple[Hypothesis, ...]:
    """``hyps`` after their first ``steps`` steps were committed, ending in a state whose
    :func:`~companion.tracking.belief.seen_key` is ``root_key``: the trails that pass through
    it, cut there (costs kept); the others dropped."""
    if steps <= 0:
        return tuple(hyps)
    out: list[Hypothesis] = []
    for h in hyps:
        trails = [
            t[steps:]
            for t in h.paths()
            if len(t) >= steps and seen_key(t[steps - 1].state) == root_key
        ]
        if trails:
            out.append(Hypothesis(h.state, h.cost, trails[0], h.pending, h.implicit))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Saved:
    """The belief before the last explained frame, cut at what was committed since
    (``hyps``, costs in the base that frame's explanation had before its prune, minus
    ``offset``), that frame's ``target``, and the inputs (dice, DONE) given since
    (``markers``, to add to the hypotheses' pending ones)."""

    hyps: tuple[Hypothesis, ...]
    target: Target
    offset: float
    markers: tuple[Marker, ...] = ()


def recheck(
    srch: SearchCache,
    saved: Saved,
    target: Target,
    opts: TrackerOptions,
    modules: bool,
    budget: float = float("inf"),
) -> tuple[Hypothesis, ...]:
    """The stories a wider search finds for the last two frames (``saved.target``, then
    ``target``) from the belief before them (``saved``), costs in the base of the current
    belief (before its prune): they compete with the current stories, and the better ones
    stay. Empty when the wider search explains the earlier frame no better. ``budget``:
    transitions both searches may try (two thirds for the wider one)."""
    roots = tuple(replace(h, pending=h.pending + saved.markers) for h in saved.hyps)
    if not roots:
        return ()
    before = srch.tried
    first = explain(srch, roots, saved.target, opts, modules, 0, wide=True, budget=budget * 2 / 3)
    if not first.hyps or first.best_obs > saved.target.bad_frame:
        return ()
    low = min(h.cost for h in first.hyps)
    kept = prune(first.hyps, opts, modules, ())
    # back in the base of the current belief (its costs are relative to the best story of
    # the earlier frame, ``saved.offset`` above the saved belief's base)
    shift = low - saved.offset
    mid = tuple(replace(h, cost=h.cost + shift) for h in kept)
    second = explain(srch, mid, target, opts, modules, 0, budget=budget - (srch.tried - before))
    if second.best_obs > target.bad_frame:
        return ()
    return second.hyps
