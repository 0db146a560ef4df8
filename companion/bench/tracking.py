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

from companion.rules.actions import Action
from companion.rules.expansion import page_cards
from companion.rules.model import MODULES, Config, GameState
from companion.sim.answering import GameFigures, run_game
from companion.sim.bots import BOTS, Bot, _mark_page
from companion.sim.simulate import GAPS, CameraNoise, simulate


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
    per_game: list[GameFigures] = []
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
