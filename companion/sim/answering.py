"""Players who answer the tracker's questions, and the truth the tracker is scored against, for
simulated games (tests and ``companion bench tracking`` share them).

* :func:`true_option` / :func:`answer_as_players` — the option of an open question that holds
  the truth, and answering with it as the players at the table would;
* :class:`TruthWalk` — scores committed states against the true history;
* :func:`run_game` — feeds one :class:`~companion.sim.simulate.SimGame` to a fresh tracker and
  returns the per-game figures of the bench.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TypedDict

from companion.rules.model import GameState
from companion.service.memory import IdleCollector
from companion.sim.simulate import SimGame, truth_key
from companion.tracking import Question, Tracker, TrackerOptions, TrackerUpdate, board_key
from companion.tracking.belief import Potions, trapped_places


def true_option(tracker: Tracker, update: TrackerUpdate, truth: GameState) -> int | None:
    """The option of the open question that holds the truth: the one with the true state (board,
    potions, turn), else the true board and potions, else the true board (None if none does)."""
    if update.question is None:
        return None
    cands = tracker.question_candidates()
    tests = (
        lambda s: truth_key(s) == truth_key(truth),
        lambda s: board_key(s) == board_key(truth) and s.potions == truth.potions,
        lambda s: board_key(s) == board_key(truth),
    )
    for test in tests:
        for i, states in enumerate(cands):
            if any(test(s) for s in states):
                return i
    return None


def answer_as_players(
    tracker: Tracker,
    update: TrackerUpdate,
    truth: GameState,
    asked: list[Question] | None = None,
    limit: int = 5,
) -> TrackerUpdate:
    """Answer the open question, and any that follows it (at most ``limit`` in a row), with the
    option that holds the truth (:func:`true_option`), as the players at the table would.

    :param asked: when given, each question put is appended to it.
    :returns: the update after the last answer; its question is still open when no option
        holds the truth (or after ``limit`` answers).
    """
    for _ in range(limit):
        if update.question is None:
            break
        if asked is not None:
            asked.append(update.question)
        option = true_option(tracker, update, truth)
        if option is None:
            break
        update = tracker.answer(update.question.id, option)
    return update


class TruthWalk:
    """Scores committed states against the true history (``states``: after the setup and after
    each true action, in order), walked forward as the commits come.

    A commit is wrong (``wrong``) when what it shows is not among the true states from the
    previous right commit on: its :func:`~companion.sim.simulate.truth_key` (board with hidden
    wizards and tiers, potions, whose turn), where a commit whose potions are shown as
    alternatives (``Committed.potions``) shows each player's potions as one of the counts that
    player has among them (the pages list them per player: ``potions_unsure``), so it is right
    when every player's true count is one of his. ``wrong_joint`` counts by the older, stricter
    reading: the true potions of all the players together must be one of the alternatives
    (the combination, not each count). A wrong board commit (``wrong_board``) is one whose
    board is not among the true states either.
    """

    def __init__(self, states: Sequence[GameState]) -> None:
        self.states = states
        self._keys = [truth_key(s) for s in states]
        self._tables = [truth_key(replace(s, potions=())) for s in states]
        self._pointer = 0
        self._joint_pointer = 0
        self._board_pointer = 0
        self.wrong = 0
        self.wrong_joint = 0
        self.wrong_board = 0

    def check(self, state: GameState, potions: Sequence[Potions] = ()) -> bool:
        """Count one committed state (shown with the potion alternatives ``potions``, none:
        certain); True when it is in the true history (each player's count one of his)."""
        options = tuple(potions) or (state.potions,)
        ks = {truth_key(replace(state, potions=p)) for p in options}
        j = self._joint_pointer
        while j < len(self._keys) and self._keys[j] not in ks:
            j += 1
        if j < len(self._keys):
            self._joint_pointer = j
        else:
            self.wrong_joint += 1
        table = truth_key(replace(state, potions=()))
        counts = [{p[seat] for p in options} for seat in range(len(state.potions))]
        j = self._pointer
        while j < len(self._keys) and not (
            self._tables[j] == table
            and all(p in c for p, c in zip(self.states[j].potions, counts, strict=True))
        ):
            j += 1
        if j < len(self._keys):
            self._pointer = j
            return True
        self.wrong += 1
        bk = board_key(state)
        at = next(
            (
                i
                for i in range(self._board_pointer, len(self.states))
                if board_key(self.states[i]) == bk
            ),
            None,
        )
        if at is None:
            self.wrong_board += 1
        else:
            self._board_pointer = at
        return False


def shown_right(
    state: GameState,
    truth: GameState,
    hidden_unsure: Mapping[str, Sequence[tuple[tuple[int, int], ...]]],
) -> bool:
    """``state`` shows the truth's table, its trapped wizards as the alternatives
    ``hidden_unsure`` lists (``TrackerUpdate.hidden_unsure``): the towers of every stack, the
    castle, whose turn and every wizard in view are right, and each colour's trapped wizards
    are right or the true placement is one of the listed ones."""
    tb = state.table
    if (
        board_key(state)[0] != board_key(truth)[0]
        or state.castle != truth.castle
        or state.turn.player != truth.turn.player
    ):
        return False
    for seat, colour in enumerate(tb.colours):
        lo, hi = tb.wiz_range[seat]
        if sorted(state.wizards[lo:hi]) == sorted(truth.wizards[lo:hi]):
            continue
        if trapped_places(truth, seat) not in hidden_unsure.get(colour, ()):
            return False
        got, want = trapped_places(state, seat), trapped_places(truth, seat)
        seen = sorted(p for p in state.wizards[lo:hi] if (p >> 4, p & 15) not in got)
        true_seen = sorted(p for p in truth.wizards[lo:hi] if (p >> 4, p & 15) not in want)
        if seen != true_seen:
            return False
    return True


class GameFigures(TypedDict):
    """One game's figures (see ``companion bench tracking``)."""

    turns: int
    turns_correct: int
    turns_shown_correct: int
    turns_potions_correct: int
    exact_hidden: bool
    potions_exact: bool
    potions_shown: bool
    wrong_commits: int
    wrong_commits_joint: int
    wrong_board_commits: int
    questions: int
    questions_by_kind: dict[str, int]
    reanchors: int
    narrowed_frames: int


def run_game(
    sim: SimGame, timings: list[float], options: TrackerOptions | None = None
) -> GameFigures:
    """Feed one simulated game to a fresh tracker, answering its questions with the truth.

    Garbage is collected as the service collects it
    (:class:`~companion.service.memory.IdleCollector`): the young generations as usual, full
    collections only between inputs, never inside an ``observe`` call. A full collection
    walks every object alive, the search's caches included; left to Python's allocation
    counters, full collections took 9-25 % of the tracker's time in all-modules games, in
    pauses of up to 2.7 s (on a loaded machine) counted as its own.

    :param timings: each ``observe`` call's time (ms) is appended to it.
    :param options: the tracker's options (default: :class:`TrackerOptions`).
    :returns: the game's figures.
    """
    collector = IdleCollector()
    collector.install()
    try:
        return _run_game(sim, timings, options, collector)
    finally:
        collector.uninstall()


def _run_game(
    sim: SimGame, timings: list[float], options: TrackerOptions | None, collector: IdleCollector
) -> GameFigures:
    tracker = Tracker(sim.start, options)
    walk = TruthWalk(sim.truths)
    questions: dict[str, str] = {}
    turn_ok: dict[int, bool] = {}
    turn_shown: dict[int, bool] = {}
    turn_pot: dict[int, bool] = {}
    inputs = sim.inputs
    for idx, inp in enumerate(inputs):
        if inp.kind == "observation":
            assert inp.observation is not None
            t0 = time.perf_counter()
            update = tracker.observe(inp.observation)
            timings.append((time.perf_counter() - t0) * 1000.0)
        elif inp.kind == "dice":
            update = tracker.dice(inp.rolls, inp.dice_allowed)
        else:
            update = tracker.end_turn()
        collector.idle()  # between inputs, as the service's idle loop
        asked: list[Question] = []
        update = answer_as_players(tracker, update, inp.truth, asked)
        questions.update((q.id, q.kind) for q in asked)
        for c in update.committed:
            walk.check(c.state, c.potions)
        last_of_stop = inp.kind == "observation" and (
            idx + 1 == len(inputs) or inputs[idx + 1].kind != "observation"
        )
        if last_of_stop and not inp.mid_move:
            best = tracker.state
            ok = board_key(best) == board_key(inp.truth) and (
                best.turn.player == inp.truth.turn.player
            )
            pot_ok = ok and best.potions == inp.truth.potions
            shown = ok or shown_right(best, inp.truth, update.hidden_unsure)
            for t in range(inp.turns + 1):
                if t not in turn_ok:
                    turn_ok[t] = ok
                    turn_shown[t] = shown
                    turn_pot[t] = pot_ok
    final = sim.truths[-1]
    best = tracker.state
    unsure = tracker.potions_unsure
    # each player's true count is the one shown, or one of the counts the page lists for him
    shown_pots = all(
        true == p or true in unsure.get(colour, ())
        for colour, p, true in zip(best.table.colours, best.potions, final.potions, strict=True)
    )
    return {
        "turns": len(turn_ok),
        "turns_correct": sum(turn_ok.values()),
        "turns_shown_correct": sum(turn_shown.values()),
        "turns_potions_correct": sum(turn_pot.values()),
        "exact_hidden": board_key(best) == board_key(final),
        "potions_exact": best.potions == final.potions,
        "potions_shown": shown_pots,
        "wrong_commits": walk.wrong,
        "wrong_commits_joint": walk.wrong_joint,
        "wrong_board_commits": walk.wrong_board,
        "questions": len(questions),
        "questions_by_kind": dict(Counter(questions.values())),
        "reanchors": tracker.reanchors,
        "narrowed_frames": tracker.cut_frames,
    }
