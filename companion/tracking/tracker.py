"""The tracker: what happened on the table, explained as legal moves, from an unreliable camera.

A *belief* is a small set of weighted full :class:`GameState` hypotheses. Each one was derived
move by move from the setup, so each knows exactly which wizard is trapped under which tower at
which tier (docs/architecture.md, "The tracker"; docs/state-model.md §3). On every stable
frame the tracker

1. searches, from every hypothesis, the legal action sequences that can have happened since the
   last frame (card moves with unknown values 1-5, die moves with the value from the dice
   buttons, the redraw push, spells — off-turn ones too in the master variant —, castle entries
   and relocations, turn ends by the DONE button or implied), guided by the spaces where the
   picture changed;
2. scores each reachable state's expected view against the observation with a
   :class:`~companion.tracking.noise.NoiseModel` and keeps the best few;
3. **commits** the moves on which every surviving hypothesis agrees (one frame later, so a misread
   frame is never committed on its own), **holds** hypotheses that explain the picture equally
   well and differ in what is hidden (shown as alternatives, :attr:`Tracker.hidden_unsure`,
   until a lifted tower or a later move tells them apart), **asks** the players only when that
   difference is about to matter (the end of the game, the belief's limits:
   :func:`~companion.tracking.questions.pick_question`), and **waits** (keeping the belief)
   when nothing explains the picture, naming the spaces that don't match after a few frames;
4. **re-anchors** a lost belief: when every held story disagrees with what several successive
   frames read alike, the belief becomes the board the camera reads, its hidden pieces kept
   where they are consistent (:mod:`~companion.tracking.anchor`, :meth:`Tracker._way_back`).

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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from companion.rules.actions import Action, Event
from companion.rules.engine import setup
from companion.rules.model import Config, GameState
from companion.rules.observation import Observation, ObservationError
from companion.rules.serialize import (
    dump_action,
    dump_event,
    dump_state,
    load_action,
    load_event,
    load_state,
)
from companion.tracking.anchor import doubted, find_way_back, lost_now
from companion.tracking.belief import (
    Hypothesis,
    Marker,
    Pool,
    Step,
    Unpool,
    hidden_unsure,
    hypothesis_from,
    late_step,
    marker_from,
    marker_json,
    moves_shown,
    potions_from,
    potions_unsure,
    prune,
    same_story,
    seen_key,
)
from companion.tracking.commit import Committed, commit
from companion.tracking.noise import Target
from companion.tracking.options import TrackerOptions
from companion.tracking.questions import Question, answer_key, pick_question
from companion.tracking.reconcile import Saved, contradicted, cut, explain, recheck
from companion.tracking.search import SearchCache, close_turn, next_moved, shown_ended

__all__ = ["Tracker", "TrackerUpdate"]

_REANCHORED = "re-anchored on the board the camera reads"  # health (Tracker._way_back)


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
    :param potions_unsure: the players whose potions the stories that show ``state``'s table
        disagree on (a card and a spell look alike, R-SPELL-6), with every count they allow:
        ``{colour: ((full, empty, spent), …)}``, ``state``'s first; the page shows "one of
        these", never ``state``'s alone as certain (:attr:`Tracker.potions_unsure`).
    :param hidden_unsure: the colours whose trapped wizards the stories held together disagree
        on (hidden pieces the camera cannot see, not yet asked about), with every placement
        they allow: ``{colour: (((space, tier), …), …)}``, ``state``'s first
        (:attr:`Tracker.hidden_unsure`).
    """

    committed: tuple[Committed, ...]
    undone: tuple[Committed, ...]
    state: GameState
    question: Question | None
    health: str
    hypotheses: int
    explained: bool = True
    potions_unsure: Mapping[str, tuple[tuple[int, int, int], ...]] = field(default_factory=dict)
    hidden_unsure: Mapping[str, tuple[tuple[tuple[int, int], ...], ...]] = field(
        default_factory=dict
    )

    def committed_json(self) -> list[dict[str, Any]]:
        """The committed entries as JSON (:meth:`Committed.to_json`)."""
        return [c.to_json() for c in self.committed]

    def events_json(self) -> list[dict[str, Any]]:
        """The events of the committed entries, in order, as JSON."""
        return [dump_event(e) for c in self.committed for e in c.events]

    def to_json(self) -> dict[str, Any]:
        """The whole update as JSON (the state as ``dump_state`` writes it)."""
        return {
            "committed": self.committed_json(),
            "undone": [c.to_json() for c in self.undone],
            "state": dump_state(self.state),
            "question": None if self.question is None else self.question.to_json(),
            "health": self.health,
            "hypotheses": self.hypotheses,
            "explained": self.explained,
            "potions_unsure": {c: [list(p) for p in v] for c, v in self.potions_unsure.items()},
            "hidden_unsure": {
                c: [[list(w) for w in alt] for alt in v] for c, v in self.hidden_unsure.items()
            },
        }


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
        self._hyps: tuple[Hypothesis, ...] = (Hypothesis(state, 0.0, (), (), False),)
        self._history: tuple[Committed, ...] = ()
        self._question: Question | None = None
        self._question_groups: tuple[tuple[Hypothesis, ...], ...] = ()
        self._qcount = 0
        self._committed_count = 0
        self._unexplained = 0
        self._last_mismatch: tuple[int, ...] = ()
        self._last_obs: Observation | None = None
        self._pace = (0, 0)
        """Committed frames that showed moves, and their moves (``action_pace``)."""
        self._srch = SearchCache(self.options.cache_entries)
        self._saved: Saved | None = None
        """The belief before the last explained frame (:func:`~companion.tracking.reconcile.
        recheck`)."""
        self._recent: tuple[Target, ...] = ()  # the last frames, oldest first (_way_back)
        self._lost: tuple[int, ...] = ()  # spaces every story disagreed with a frame ago
        self._reanchors = 0
        self._cut_frames = 0

    @classmethod
    def new(cls, config: Config, options: TrackerOptions | None = None) -> Tracker:
        """A tracker for a new game of ``config`` at its setup (hands unknown, R-SETUP-*)."""
        return cls(setup(config, None), options)

    # -- read-only views ---------------------------------------------------------------------

    @property
    def state(self) -> GameState:
        """The best current hypothesis. With a DONE press waiting for the next frame, the state
        that press leaves (the turn closed, R-TURN-4/8: the next player's turn), so the table
        answers the press at once; moves of the closed turn that the next frame still shows are
        then put before the DONE (:meth:`end_turn`)."""
        best = min(self._hyps, key=lambda h: h.cost)
        st = best.state
        pressed = best.pending == (("done",),) and not (
            best.implicit and not st.turn.cards_used and not st.turn.casts and not st.turn.redrawn
        )
        if pressed or shown_ended(best, self._pace_now(guess=True), self.options):
            closed = close_turn(self._srch, st, self.options)
            if closed is not None:
                return closed[0]
        return st

    @property
    def initial_state(self) -> GameState:
        """The state the tracker started from (before the first committed step; the setup for
        a new game), which undoing every committed step returns to."""
        return self._initial

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
        """The open question, if any."""
        return self._question

    @property
    def uncommitted(self) -> tuple[Action, ...]:
        """What the best hypothesis says happened since the last commit (not yet certain)."""
        best = min(self._hyps, key=lambda h: h.cost)
        return tuple(a for step in best.trail for a in step.actions)

    @property
    def potions_unsure(self) -> dict[str, tuple[tuple[int, int, int], ...]]:
        """The players whose potions are not certain: ``{colour: ((full, empty, spent), …)}``
        with :attr:`state`'s count first, then the others of the stories that show the same
        table (:func:`~companion.tracking.belief.seen_key`; a card or a spell the camera
        cannot tell apart, R-SPELL-6). Empty when every such story agrees."""
        return potions_unsure(self.state, self._hyps)

    @property
    def hidden_unsure(self) -> dict[str, tuple[tuple[tuple[int, int], ...], ...]]:
        """The colours whose trapped wizards are not certain: ``{colour: (((space, tier), …),
        …)}``, every placement of that colour's trapped wizards (sorted, tier 0 = under the
        bottom tower) the stories within ``commit_margin`` of the best allow, :attr:`state`'s
        first. Such stories are held together, not asked about, until a lifted tower or a
        later move tells them apart (:func:`~companion.tracking.questions.pick_question`);
        the pages show "under the tower on space 8 or 13", never one of them as certain.
        Empty when they all agree."""
        return hidden_unsure(self.state, self._hyps, self.options.commit_margin)

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
        """:attr:`state` as JSON."""
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
        if self.options.anchor_frames > 0:
            self._recent = (self._recent + (target,))[-self.options.anchor_frames :]
        before = self._hyps
        new = self._reconcile(target)
        self._cut_frames += self._srch.cut
        if new is None:
            self._unexplained += 1
            if self._unexplained >= self.options.wait_frames and self._last_mismatch:
                spaces = ", ".join(str(s) for s in self._last_mismatch)
                health = f"board doesn't match at spaces {spaces}"
            else:
                health = "waiting for a still board"
            back = self._way_back()
            if back is not None:
                return self._update((back,), (), _REANCHORED)
            return self._update((), (), health, explained=False)
        self._unexplained = 0
        self._last_obs = parsed
        self._hyps = new[0]
        # every story disagrees with what the last frames read alike: nothing is committed
        # until the next frames tell a misread from a lost belief (anchor.doubted)
        hold = doubted(self._recent, self._hyps, self._srch.view, self.options)
        committed, steps = ((), 0) if hold else self._commit()
        # the belief before this frame, for a recheck of this frame and the next
        saved = cut(before, steps, seen_key(self._root))
        self._saved = Saved(saved, target, new[1]) if saved else None
        back = self._way_back()
        if back is not None:
            return self._update(committed + (back,), (), _REANCHORED)
        self._maybe_ask()
        return self._update(committed, (), "ok")

    def _way_back(self) -> Committed | None:
        """Re-anchor a lost belief on the last frames (:func:`~companion.tracking.anchor.
        find_way_back`): the ``reanchor`` entry (added to the history), or None. Only on spaces
        that every story disagreed with on the frame before too."""
        before = self._lost
        self._lost = lost_now(self._recent[-1:], self._hyps, self._srch.view, self.options)
        if not self._lost:
            return None
        got = find_way_back(
            self._recent, self._hyps, self._srch.view, self.options, self._closed_turn, before
        )
        if got is None:
            return None
        spaces, hyps = got
        self._reset(hyps[0].state)
        self._hyps, self._root, self._last_mismatch = hyps, hyps[0].state, ()
        self._reanchors += 1
        data = {"spaces": list(spaces), "stories": len(hyps)}
        c = Committed(None, (Event("reanchor", data),), self._root)
        self._history = (self._history + (c,))[-500:]
        self._committed_count += 1
        return c

    def _closed_turn(self, st: GameState) -> GameState | None:
        got = close_turn(self._srch, st, self.options)
        return None if got is None else got[0]

    @property
    def cut_frames(self) -> int:
        """Frames whose search ran out of ``TrackerOptions.frame_budget`` and was narrowed."""
        return self._cut_frames

    @property
    def reanchors(self) -> int:
        """How many times the belief was re-anchored on the camera's board (:meth:`_way_back`)."""
        return self._reanchors

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
        self._saved_marker(marker)
        self._follow_question()
        return self._update((), (), "ok")

    def end_turn(self) -> TrackerUpdate:
        """The DONE button: the current player's turn is over (R-TURN-4/8).

        Moves the camera has not seen yet may still belong to this turn, so the DONE is kept
        pending and the next frame's explanation closes the turn after them. A DONE is a hint
        with a time uncertainty: it may also be the press of a turn the tracker already ended
        unannounced with nothing moved since (``cost_pending_done``), or of a turn it ended
        unannounced in the last frame before the next player's first move there (a late
        press: the frame came before it; the unannounced end's cost is given back for
        ``cost_late_done``). Each such story is kept beside the pending press and competes.
        """
        out: list[Hypothesis] = []
        marker: Marker = ("done",)
        opts = self.options
        for h in self._hyps:
            out.append(replace(h, pending=h.pending + (marker,)))
            t = h.state.turn
            quiet = h.implicit and not t.cards_used and not t.casts and not t.redrawn
            late = opts.board_turns and not h.pending and not quiet
            at = late_step(h.trail) if late else None
            if at is not None and not next_moved(h.trail, at):
                at = None  # the turn end was not shown by the next player's move
            if at is not None:
                step = h.trail[at]
                fee = opts.cost_late_done
                trail = h.trail[:at] + (replace(step, late=0.0),) + h.trail[at + 1 :]
                out.append(
                    replace(
                        h,
                        cost=h.cost - step.late + fee,
                        trail=trail,
                        pending=(),
                        implicit=False,
                    )
                )
            elif not h.pending and quiet:
                out.append(
                    replace(
                        h, cost=h.cost + self.options.cost_pending_done, pending=(), implicit=False
                    )
                )
        self._hyps = self._prune(out)
        self._saved_marker(marker)
        self._follow_question()
        return self._update((), (), "ok")

    def _saved_marker(self, marker: Marker) -> None:
        """A dice or DONE press is pending in the belief before the last frame too."""
        if self._saved is not None:
            self._saved = replace(self._saved, markers=self._saved.markers + (marker,))

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
        split = answer_key(groups)
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
        self._saved = None  # the stories the players ruled out stay out
        committed, _ = self._commit(force=True)
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
        self._hyps = (Hypothesis(st, 0.0, (), (), False),)
        self._saved = None
        self._question = None
        self._question_groups = ()
        self._unexplained = 0
        self._recent = ()
        self._lost = ()

    def _pace_now(self, guess: bool = False) -> bool | None:
        """True when the camera has seen the table after about every move so far
        (``action_pace``: the committed frames and the best story's held ones), False when
        after more moves per frame (whole turns), None before ``pace_frames`` frames with
        moves; ``guess``: judged on the frames so far once one showed moves (where a turn
        end is read from the board: a frame after every move shows one move)."""
        frames, moves = self._pace
        best = min(self._hyps, key=lambda h: h.cost)
        for step in best.trail:
            k = moves_shown(step.actions)
            if k:
                frames += 1
                moves += k
        opts = self.options
        if frames < (1 if guess else opts.pace_frames):
            return None
        return moves <= opts.action_pace * frames

    def _count_pace(self, steps: Iterable[Step]) -> None:
        frames, moves = self._pace
        for step in steps:
            k = moves_shown(step.actions)
            if k:
                frames += 1
                moves += k
        self._pace = (frames, moves)

    def _reconcile(self, target: Target) -> tuple[tuple[Hypothesis, ...], float] | None:
        """The belief after a frame (``target``) and the cost its prune took off (the base of
        the stories before it): every hypothesis' stories that explain it
        (:func:`~companion.tracking.reconcile.explain`), with the stories of the last two
        frames searched again when the camera contradicts the best one twice in a row
        (:func:`~companion.tracking.reconcile.recheck`); None when nothing explains it well
        enough (the mismatching spaces are kept for the health message)."""
        opts = self.options
        srch = self._srch
        modules = self._root.modules is not None
        pace = self._pace_now()
        if self._pace_now(guess=True) is not False:
            # a complete turn ends cheaply without a press only where the frames show whole
            # turns: with a frame after every move the press follows the frame
            opts = replace(opts, cost_complete_end=opts.cost_implicit_end)
        if pace:
            # the turn's last move is seen before its press, which then follows: a turn end
            # without one is no likelier after a complete turn
            opts = replace(
                opts,
                cost_after_done=0.0,
                cost_before_done=opts.cost_after_done,
                cost_complete_end=opts.cost_implicit_end,
            )
        srch.start_frame()
        budget = float(opts.frame_budget) if opts.frame_budget > 0 else float("inf")
        got = explain(srch, self._hyps, target, opts, modules, self._unexplained, budget=budget)
        if not got.hyps or got.best_obs > target.bad_frame:
            mismatch = got.mismatch
            if not mismatch:
                best = min(self._hyps, key=lambda h: h.cost)
                mismatch = tuple(target.mismatched(srch.view(best.state)))
            self._last_mismatch = mismatch
            return None
        out = list(got.hyps)
        saved = self._saved
        if saved is not None:
            best = min(out, key=lambda h: h.cost)
            if contradicted(target, saved.target, srch.view(best.state), opts):
                out.extend(recheck(srch, saved, target, opts, modules, budget))
        offset = min(h.cost for h in out)
        return self._prune(out), offset

    def _prune(self, hyps: Iterable[Hypothesis]) -> tuple[Hypothesis, ...]:
        """:func:`~companion.tracking.belief.prune` with this tracker's options (the current
        belief when ``hyps`` is empty)."""
        return prune(hyps, self.options, self._root.modules is not None, self._hyps)

    def _commit(self, force: bool = False) -> tuple[tuple[Committed, ...], int]:
        """Commit what every likely story agrees on (:func:`~companion.tracking.commit.commit`;
        ``force`` after an answer: the newest step too) and add it to the history; with the
        number of steps committed."""
        got = commit(self._hyps, self._root, self.options, self._question is not None, force)
        self._count_pace(got.steps)
        self._root = got.root
        self._hyps = got.hyps
        committed = got.committed
        if committed:
            self._history = (self._history + committed)[-500:]
            self._committed_count += len(committed)
        return committed, len(got.steps)

    def _maybe_ask(self) -> None:
        """Ask when hypotheses close to the best differ in hidden pieces (or, at the end of the
        game, in potions): :func:`~companion.tracking.questions.pick_question`."""
        if self._question is not None:
            # keep the question if its groups are all still alive
            kept = tuple(
                tuple(h for h in self._hyps if any(same_story(h, g) for g in grp))
                for grp in self._question_groups
            )
            if all(kept) and len(kept) > 1:
                self._question_groups = kept
                return
            self._question = None
            self._question_groups = ()
        picked = pick_question(self._hyps, self._root, self.options)
        if picked is None:
            return
        text, options, groups, kind = picked
        self._qcount += 1
        self._question = Question(f"q{self._qcount}", text, options, kind)
        self._question_groups = groups

    def _update(
        self,
        committed: tuple[Committed, ...],
        undone: tuple[Committed, ...],
        health: str,
        explained: bool = True,
    ) -> TrackerUpdate:
        return TrackerUpdate(
            committed=committed,
            undone=undone,
            state=self.state,
            question=self._question,
            health=health,
            hypotheses=len(self._hyps),
            explained=explained,
            potions_unsure=self.potions_unsure,
            hidden_unsure=self.hidden_unsure,
        )

    # -- JSON ------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Everything needed to restore this exact belief (journal snapshots; the stories'
        states and steps written once each, :class:`~companion.tracking.belief.Pool`)."""
        pool = Pool()
        return {
            "version": 2,
            "options": self.options.to_json(),
            "initial": dump_state(self._initial),
            "root": dump_state(self._root),
            "hypotheses": [pool.hypothesis(h) for h in self._hyps],
            "history": [
                {
                    "action": None if c.action is None else dump_action(c.action),
                    "events": [dump_event(e) for e in c.events],
                    "state": dump_state(c.state),
                    "potions": [[list(p) for p in pots] for pots in c.potions],
                }
                for c in self._history[-20:]
            ],
            "history_length": self._committed_count,
            "question": None if self._question is None else self._question.to_json(),
            "question_kind": None if self._question is None else self._question.kind,
            "question_groups": [
                [self._hyps.index(h) for h in g if h in self._hyps] for g in self._question_groups
            ],
            "qcount": self._qcount,
            "unexplained": self._unexplained,
            "pace": list(self._pace),
            "last_mismatch": list(self._last_mismatch),
            "recent": [t.obs.to_json() for t in self._recent],
            "lost": list(self._lost),
            "reanchors": self._reanchors,
            "saved": None
            if self._saved is None
            else {
                "hypotheses": [pool.hypothesis(h) for h in self._saved.hyps],
                "observation": self._saved.target.obs.to_json(),
                "offset": self._saved.offset,
                "markers": [marker_json(m) for m in self._saved.markers],
            },
            "pool": pool.to_json(),  # last: filled by the hypotheses above
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tracker:
        """:raises ValueError: (or ``FormatError``) for malformed data. Version 1 (every
        story written out in full) is still read."""
        if not isinstance(data, Mapping) or data.get("version") not in (1, 2):
            raise ValueError("tracker: expected a version 1 or 2 tracker object")
        load = hypothesis_from if data["version"] == 1 else Unpool(data["pool"]).hypothesis
        options = TrackerOptions.from_json(data.get("options", {}))
        tr = cls(load_state(data["initial"]), options)
        tr._root = load_state(data["root"])

        hyps = [load(h) for h in data["hypotheses"]]
        if not hyps:
            raise ValueError("tracker.hypotheses: at least one is needed")
        tr._hyps = tuple(hyps)
        tr._history = tuple(
            Committed(
                None if c["action"] is None else load_action(c["action"]),
                tuple(load_event(e) for e in c["events"]),
                load_state(c["state"]),
                tuple(potions_from(pots) for pots in c.get("potions", [])),
            )
            for c in data.get("history", [])
        )
        q = data.get("question")
        if q is not None:
            tr._question = Question(
                str(q["id"]),
                str(q["text"]),
                tuple(q["options"]),
                str(data.get("question_kind") or "hidden"),
            )
            tr._question_groups = tuple(
                tuple(tr._hyps[i] for i in g) for g in data.get("question_groups", [])
            )
        tr._qcount = int(data.get("qcount", 0))
        tr._committed_count = int(data.get("history_length", len(tr._history)))
        tr._unexplained = int(data.get("unexplained", 0))
        pace = data.get("pace", [0, 0])
        tr._pace = (int(pace[0]), int(pace[1]))
        tr._last_mismatch = tuple(int(s) for s in data.get("last_mismatch", []))
        length = tr._root.table.length
        recent = (Observation.from_json(o, length) for o in data.get("recent", []))
        tr._recent = tuple(Target(o, length, options.noise) for o in recent)
        tr._lost = tuple(int(x) for x in data.get("lost", []))
        tr._reanchors = int(data.get("reanchors", 0))
        sv = data.get("saved")
        if sv is not None:
            obs = Observation.from_json(sv["observation"], length)
            tr._saved = Saved(
                tuple(load(h) for h in sv["hypotheses"]),
                Target(obs, length, options.noise),
                float(sv["offset"]),
                tuple(marker_from(m) for m in sv.get("markers", [])),
            )
        return tr

    def restore_json(self, data: Mapping[str, Any]) -> None:
        """Replace this tracker's belief by :meth:`to_json` data (in place)."""
        other = Tracker.from_json(data)
        self.rollback(other.checkpoint())
