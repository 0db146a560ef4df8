"""Committing: turning what every likely story agrees on into history.

:func:`commit` takes, oldest first, the steps that every hypothesis within ``commit_margin`` of
the best claims (and their alternative trails) and returns them as :class:`Committed` entries;
a stretch where the stories agree on where they end but not on the way there becomes one
``order_unseen`` entry (:func:`shared_stretch`). The history never claims a state the tracker
does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from companion.rules.actions import Action, DiscardCard, Event
from companion.rules.model import GameState
from companion.rules.serialize import dump_action, dump_event
from companion.tracking.belief import (
    MAX_STORIES,
    Hypothesis,
    Key,
    Path,
    Potions,
    Step,
    board_key,
    near_stories,
    potion_options,
    same_now,
    same_seen,
    seen_key,
    state_key,
    step_print,
    with_alts,
)
from companion.tracking.options import TrackerOptions
from companion.tracking.questions import lag_question
from companion.tracking.words import describe


@dataclass(frozen=True, slots=True)
class Committed:
    """One committed action and the events that explain it (docs/state-model.md §4/§5).

    ``action`` is None for a correction from the host page (event ``correction``), for a
    re-anchor on the board the camera reads (event ``reanchor`` with the ``spaces`` that
    every story disagreed with and the number of ``stories`` held after it,
    :mod:`companion.tracking.anchor`) and for
    moves whose order the camera could not see (event ``order_unseen`` with ``options``, the
    stories in players' words, and ``stories``, their actions); ``state`` then holds the
    state after them.

    ``potions``: when the stories that reach this table disagree on the players' potions (a
    move by a card or by a spell looks the same, R-SPELL-6), every potion count they allow
    (``state``'s first): only the board, the turn and the game's progress are claimed then,
    the potions are "one of these". Empty when the potions are certain too.
    """

    action: Action | None
    events: tuple[Event, ...]
    state: GameState
    potions: tuple[Potions, ...] = ()

    @property
    def certain(self) -> bool:
        """Every story agrees on the whole table after this entry, potions included."""
        return len(self.potions) <= 1

    def to_json(self) -> dict[str, Any]:
        """``{"action": …, "events": […]}``, or ``{"correction": true, …}`` /
        ``{"unseen": true, …}`` for an entry without an action; with ``"potions_unsure"``
        (``{colour: [[full, empty, spent], …]}``, the players whose potions are not certain)
        when ``potions`` holds alternatives."""
        if self.action is None:
            kinds = {e.kind for e in self.events}
            kind = next((k for k in ("correction", "reanchor") if k in kinds), "unseen")
            out: dict[str, Any] = {kind: True, "events": [dump_event(e) for e in self.events]}
        else:
            out = {
                "action": dump_action(self.action),
                "events": [dump_event(e) for e in self.events],
            }
        if not self.certain:
            out["potions_unsure"] = unsure_json(self.state, self.potions)
        return out


def unsure_json(state: GameState, options: Sequence[Potions]) -> dict[str, list[list[int]]]:
    """``{colour: [[full, empty, spent], …]}`` for every player whose potions differ between
    ``options`` (each count once, in the order given)."""
    out: dict[str, list[list[int]]] = {}
    for seat, colour in enumerate(state.table.colours):
        vals: list[list[int]] = []
        for pots in options:
            v = list(pots[seat])
            if v not in vals:
                vals.append(v)
        if len(vals) > 1:
            out[colour] = vals
    return out


def advance(hyps: Sequence[Hypothesis], m: int, base: float) -> tuple[Hypothesis, ...]:
    """The hypotheses after their first ``m`` steps were committed (the best's state after
    step ``m`` is now the root, its potions perhaps one of several): the stories (trails)
    that pass through that table (:func:`~companion.tracking.belief.seen_key`: potions
    aside), cut there; costs relative to ``base``. A hypothesis none of whose stories passes
    through it is dropped."""
    best = min(hyps, key=lambda h: h.cost)
    key = seen_key(best.trail[m - 1].state)
    out: list[Hypothesis] = []
    for h in hyps:
        trails = [t[m:] for t in h.paths() if seen_key(t[m - 1].state) == key]
        if not trails:
            continue
        nh = Hypothesis(h.state, h.cost - base, trails[0], h.pending, h.implicit)
        out.append(with_alts(nh, trails[1:]))
    return tuple(out)


def _meeting(
    paths: Sequence[Sequence[Step]],
    limit: int,
    key_of: Callable[[GameState], Key] = seen_key,
) -> int | None:
    """The first step (below ``limit``) after which every trail of ``paths`` is in the same
    state (the same ``key_of``; potions aside by default), or None."""
    for j in range(limit):
        key = key_of(paths[0][j].state)
        if all(key_of(t[j].state) == key for t in paths[1:]):
            return j
    return None


def _table_key(st: GameState) -> Key:
    """The board, whose turn and the game's progress (the potions are committed as
    alternatives where the stories disagree on them)."""
    return (board_key(st), st.turn.player, st.game)


def _with_potions(
    entries: Sequence[Committed], hyps: Sequence[Hypothesis], steps: int
) -> list[Committed]:
    """``entries`` (committed from the first ``steps`` steps of ``hyps``) with the potions of
    every story that shows the same table there (:func:`potion_options`): a card and a spell
    that look alike leave the potions "one of these", never the cheaper story's as certain."""
    pool: dict[Key, list[GameState]] = {}
    for h in hyps:
        for t in h.paths():
            for step in t[:steps]:
                for path in step.paths():
                    for st in path[2]:
                        pool.setdefault(seen_key(st), []).append(st)
    out: list[Committed] = []
    for c in entries:
        opts = potion_options(pool.get(seen_key(c.state), ()), c.state)
        out.append(replace(c, potions=opts) if len(opts) > 1 else c)
    return out


def shared_stretch(
    paths: Sequence[Sequence[Step]], best: Sequence[Step], meet: int, root: GameState
) -> list[Committed]:
    """The commits for the first ``meet + 1`` steps of stories that all end them in the same
    state: the actions they share at the start (same action, same state after it), then one
    entry (action None, event ``order_unseen``) for the rest, ending in the shared state."""
    seqs: list[list[tuple[Action, tuple[Event, ...], GameState, GameState]]] = []
    for t in paths:
        combos: list[list[Path]] = [[]]
        for step in t[: meet + 1]:
            combos = [c + [p] for c in combos for p in step.paths()][:MAX_STORIES]
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
        q[p][0] == lead[p][0] and seen_key(q[p][2]) == seen_key(lead[p][2]) for q in seqs[1:]
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


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What :func:`commit` decided: the ``committed`` entries in order, the new ``root`` (the
    state every hypothesis agrees on), the remaining ``hyps`` (trails cut at the root, costs
    relative to the best) and the committed ``steps`` (for the tracker's move pace)."""

    committed: tuple[Committed, ...]
    root: GameState
    hyps: tuple[Hypothesis, ...]
    steps: tuple[Step, ...]


def commit(
    hyps: tuple[Hypothesis, ...],
    root: GameState,
    opts: TrackerOptions,
    asking: bool,
    force: bool = False,
) -> CommitResult:
    """Commit, oldest first, what every story within ``commit_margin`` of the best claims
    (hypotheses and their alternative trails, :class:`~companion.tracking.belief.Hypothesis`):
    the states after each action of a step. Worse rivals are dropped then. The newest step
    waits for one more frame (unless ``force``: an answer). ``asking``: a question is open.

    Stories that agree on the table now but not on how it got there (two moves in another
    order, a card and a spell swapped between frames) can never be told apart by a later
    frame: what they share is committed at once, and the stretch where they differ as
    one entry (action None, event ``order_unseen`` with the stories in players' words)
    that ends in the state they all reach.

    Stories that disagree about the table now are held: a later frame, a lifted tower, the
    DONE press or a spell's cost decides them. After ``max_lag`` held steps, stories that
    disagree only in what no player could tell (a card count) are committed up to where they
    meet again, as above; those that disagree on what the players can see (hidden pieces,
    potions, whose turn: :func:`~companion.tracking.questions.lag_question`) stay held, never
    taken on the best's cost, until they resolve or the players are asked when it matters
    (:func:`~companion.tracking.questions.pick_question`: the end of the game, the belief's
    ``max_hold`` / ``hold_boards`` limits).

    Potions are never claimed from the cheaper story alone: every committed entry lists the
    potions of all the stories (any cost) that show its table (``Committed.potions``), and
    the stories that differ only in potions (a card or a spell the camera cannot tell apart,
    R-SPELL-6) stay in the belief after the commit, to be decided by a spell's cost, or
    asked when they grow too many or the game ends
    (:func:`~companion.tracking.questions.potions_question`)."""
    committed: list[Committed] = []
    steps: list[Step] = []
    while True:
        n = min(len(h.trail) for h in hyps)
        limit = n if force else n - 1
        if limit <= 0:
            break
        best = min(hyps, key=lambda h: h.cost)
        near = (
            near_stories(hyps, opts.commit_margin)
            if opts.defer
            else [h for h in hyps if h.cost - best.cost <= opts.commit_margin]
        )
        paths = [t for h in near for t in h.paths()]
        first = best.trail[0]
        fp0 = step_print(first)
        if not first.alts and all(t[0] is first or step_print(t[0]) == fp0 for t in paths):
            steps.append(first)
            got = [
                Committed(a, ev, st)
                for a, ev, st in zip(first.actions, first.events, first.states, strict=True)
            ]
            committed.extend(_with_potions(got, hyps, 1))
            root = first.state
            hyps = advance(hyps, 1, best.cost)
            continue
        key0 = state_key(first.state)
        if all(state_key(t[0].state) == key0 for t in paths):
            # they agree where the step ends, not on the way there
            steps.append(first)
            committed.extend(_with_potions(shared_stretch(paths, best.trail, 0, root), hyps, 1))
            root = first.state
            hyps = advance(hyps, 1, best.cost)
            continue
        if not same_now(near):
            if n <= opts.max_lag or asking:
                break
            if opts.lag_questions and lag_question(near, root) is not None:
                # the rivals disagree about the table as it is now (hidden pieces, whose
                # turn): the players are asked, the best is never taken on its cost alone
                break
            # held too long, and they differ in the potions at most: what they agree on is
            # committed, the potions as alternatives (a card and a spell look alike)
        meet = _meeting(paths, limit)
        if meet is None and not same_seen(near):
            # they never meet in one state (a move of the next player already, or not),
            # but from some step on they agree on all the players can see: what comes
            # before is committed as one stretch, not the best's steps
            meet = _meeting(paths, limit, _table_key)
        if meet is None:
            if same_seen(near):
                break  # they meet in the newest step: one more frame
            # what they disagree about no player can see and never ends (a card count):
            # the best's step is taken
            steps.append(first)
            got = [
                Committed(a, ev, st)
                for a, ev, st in zip(first.actions, first.events, first.states, strict=True)
            ]
            committed.extend(_with_potions(got, hyps, 1))
            root = first.state
            hyps = advance(hyps, 1, best.cost)
            continue
        steps.extend(best.trail[: meet + 1])
        committed.extend(
            _with_potions(shared_stretch(paths, best.trail, meet, root), hyps, meet + 1)
        )
        root = best.trail[meet].state
        hyps = advance(hyps, meet + 1, best.cost)
    return CommitResult(tuple(committed), root, hyps, tuple(steps))
