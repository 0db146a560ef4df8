"""``companion bench tracking``: how well the tracker follows seeded bot games through a noisy
simulated camera (figures, never a timed test).

    companion bench tracking --games 20 --players 4 --noise 0.01 --gap turn --seed 1 --json

Questions are answered by an oracle that knows the truth (and counted). Printed figures:
``games``, ``turns``, ``turns_correct`` (turns after which the tracker's best state equals the
truth: board with hidden wizards and tiers, whose turn), ``turns_potions_correct`` (the same and
every player's potions), ``games_exact_hidden`` (every
hidden wizard and tier right at the end), ``potions_exact``, ``wrong_commits`` (committed states
that are not in the truth's history in order, potions and turn included),
``wrong_board_commits`` (of those, the ones whose board with hidden wizards is wrong too),
``questions_per_game`` (mean, median),
``reconcile_ms_p50`` / ``reconcile_ms_p99`` (time of one ``observe`` call), ``rss_mb``.
With expansion modules the board includes the witch and raven tokens (a sealed witch too).
``--pages 0.1667`` lets the bots play page cards with the witch (as ``companion rules play``
does); the simulator alone plays none.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from companion.rules.actions import Action
from companion.rules.expansion import page_cards
from companion.rules.model import MODULES, Config, GameState
from companion.sim.bots import BOTS, Bot, _mark_page
from companion.sim.simulate import GAPS, CameraNoise, SimGame, simulate, truth_key
from companion.tracking.tracker import Question, Tracker, TrackerUpdate, board_key


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

    A commit is wrong when its :func:`~companion.sim.simulate.truth_key` (board with hidden
    wizards and tiers, potions, whose turn) is not among the true states from the previous
    right commit on; a wrong board commit is one whose board is not among them either.
    """

    def __init__(self, states: Sequence[GameState]) -> None:
        self.states = states
        self._keys = [truth_key(s) for s in states]
        self._pointer = 0
        self._board_pointer = 0
        self.wrong = 0
        self.wrong_board = 0

    def check(self, state: GameState) -> bool:
        """Count one committed state; True when it is in the true history."""
        k = truth_key(state)
        j = self._pointer
        while j < len(self._keys) and self._keys[j] != k:
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


def run_game(sim: SimGame, timings: list[float]) -> dict[str, Any]:
    """Feed one simulated game to a fresh tracker; returns per-game figures."""
    tracker = Tracker(sim.start)
    walk = TruthWalk(sim.truths)
    questions: set[str] = set()
    turn_ok: dict[int, bool] = {}
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
        asked: list[Question] = []
        update = answer_as_players(tracker, update, inp.truth, asked)
        questions.update(q.id for q in asked)
        for c in update.committed:
            walk.check(c.state)
        last_of_stop = inp.kind == "observation" and (
            idx + 1 == len(inputs) or inputs[idx + 1].kind != "observation"
        )
        if last_of_stop and not inp.mid_move:
            best = tracker.state
            ok = board_key(best) == board_key(inp.truth) and (
                best.turn.player == inp.truth.turn.player
            )
            pot_ok = ok and best.potions == inp.truth.potions
            for t in range(inp.turns + 1):
                if t not in turn_ok:
                    turn_ok[t] = ok
                    turn_pot[t] = pot_ok
    final = sim.truths[-1]
    best = tracker.state
    return {
        "turns": len(turn_ok),
        "turns_correct": sum(turn_ok.values()),
        "turns_potions_correct": sum(turn_pot.values()),
        "exact_hidden": board_key(best) == board_key(final),
        "potions_exact": best.potions == final.potions,
        "wrong_commits": walk.wrong,
        "wrong_board_commits": walk.wrong_board,
        "questions": len(questions),
    }


class _PageBot(Bot):
    """A seat's bot whose played page cards move the witch first (R-MOD-WITCH-2): the marking
    of ``companion.sim.bots.play`` (a seeded share of the deck shows the page symbol,
    OPEN-12; a sealed witch is released with the right tower 4 times in 5)."""

    def __init__(self, inner: Bot, pages: frozenset[str], rng: random.Random) -> None:
        super().__init__(0)
        self.inner = inner
        self.pages = pages
        self.table_rng = rng

    def choose(self, state: GameState) -> Action:
        action = self.inner.choose(state)
        if state.modules is not None and state.modules.witch is not None:
            action = _mark_page(state, action, self.pages, self.table_rng, 0.8)
        return action


def _bots(kind: str, seed: int, players: int, share: float) -> str | list[Bot]:
    """The seats' bots as ``simulate`` builds them, wrapped in :class:`_PageBot` when a
    ``share`` of the deck is page cards."""
    if share <= 0:
        return kind
    pages = page_cards(seed, share)
    rng = random.Random(f"table/{seed}")
    return [_PageBot(BOTS[kind](seed * 7 + i + 1), pages, rng) for i in range(players)]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="companion bench tracking", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--modules", default="", help="comma-separated expansion modules")
    ap.add_argument("--variant", default="base", choices=("base", "master"))
    ap.add_argument("--noise", type=float, default=0.01, help="per-field error rate")
    ap.add_argument("--gap", default="turn", choices=GAPS)
    ap.add_argument("--frames", type=int, default=2, help="stable frames per still board")
    ap.add_argument("--mid-move", type=float, default=0.0, help="chance of a mid-move frame")
    ap.add_argument("--done-rate", type=float, default=1.0, help="chance DONE is pressed")
    ap.add_argument("--bots", default="greedy", choices=("greedy", "random"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--pages",
        type=float,
        default=0.0,
        help="with the witch: share of the deck that are page cards (0 = none; bots.play: 1/6)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    modules = frozenset(m for m in args.modules.split(",") if m)
    unknown = modules - set(MODULES)
    if unknown:
        print(f"--modules: unknown module {sorted(unknown)[0]!r}", file=sys.stderr)
        return 2
    try:
        config = Config(player_count=args.players, variant=args.variant, modules=modules)
        noise = CameraNoise(
            rate=args.noise,
            gap=args.gap,
            frames_per_stop=args.frames,
            mid_move_rate=args.mid_move,
            done_rate=args.done_rate,
        )
    except ValueError as exc:
        print(f"bench tracking: {exc}", file=sys.stderr)
        return 2
    timings: list[float] = []
    per_game: list[dict[str, Any]] = []
    for g in range(args.games):
        try:
            seed = args.seed * 1000 + g
            share = args.pages if "witch" in modules else 0.0
            sim = simulate(config, seed, noise, _bots(args.bots, seed, args.players, share))
        except ValueError as exc:
            print(f"bench tracking: {exc}", file=sys.stderr)
            return 2
        per_game.append(run_game(sim, timings))
    timings.sort()

    def pct(p: float) -> float:
        if not timings:
            return 0.0
        return round(timings[min(len(timings) - 1, int(p * len(timings)))], 2)

    turns = sum(g["turns"] for g in per_game)
    correct = sum(g["turns_correct"] for g in per_game)
    qs = [g["questions"] for g in per_game]
    pot_turns = sum(g["turns_potions_correct"] for g in per_game)
    out = {
        "games": args.games,
        "players": args.players,
        "noise": args.noise,
        "gap": args.gap,
        "turns": turns,
        "turns_correct": correct,
        "turns_correct_pct": round(100.0 * correct / turns, 3) if turns else 0.0,
        "turns_potions_correct": pot_turns,
        "games_exact_hidden": sum(1 for g in per_game if g["exact_hidden"]),
        "games_exact_hidden_pct": round(
            100.0 * sum(1 for g in per_game if g["exact_hidden"]) / max(1, args.games), 2
        ),
        "potions_exact": sum(1 for g in per_game if g["potions_exact"]),
        "wrong_commits": sum(g["wrong_commits"] for g in per_game),
        "wrong_board_commits": sum(g["wrong_board_commits"] for g in per_game),
        "questions_per_game": {
            "mean": round(statistics.fmean(qs), 3) if qs else 0.0,
            "median": statistics.median(qs) if qs else 0,
        },
        "reconcile_ms_p50": pct(0.50),
        "reconcile_ms_p99": pct(0.99),
        "reconcile_ms_max": round(timings[-1], 2) if timings else 0.0,
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
    }
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        for k, v in out.items():
            print(f"{k:24} {v}")
    return 0
