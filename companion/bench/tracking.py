"""``companion bench tracking``: how well the tracker follows seeded bot games through a noisy
simulated camera (figures, never a timed test).

    companion bench tracking --games 20 --players 4 --noise 0.01 --gap turn --seed 1 --json
    companion bench tracking --seeds 500-519 --players 2-6 --modules all --json

Questions are answered by an oracle that knows the truth (and counted). Printed figures:
``games``, ``turns``, ``turns_correct`` (turns after which the tracker's best state equals the
truth: board with hidden wizards and tiers, whose turn), ``turns_potions_correct`` (the same and
every player's potions), ``games_exact_hidden`` (every
hidden wizard and tier right at the end), ``potions_exact`` (games whose best story ends with
every player's true potions), ``potions_shown`` (games whose end shows every player's true
potions, as the count shown or one of the counts the page lists for him: ``potions_unsure``),
``wrong_commits`` (committed states that are not in the truth's history in order, potions and
turn included; a commit whose potions are shown as alternatives is right when each player's
true count is one of the counts it lists for him, as the pages show them:
``companion.sim.answering.TruthWalk``), ``wrong_commits_joint`` (the same by the older,
stricter reading: the players' true counts together must be one of the commit's
combinations), ``wrong_board_commits`` (of the wrong commits, the ones whose board with hidden
wizards is wrong too, i.e. a wrong board shown to the players as certain),
``questions_per_game`` (mean, median, max), ``questions_by_kind`` (how many questions of each
kind were put, over all games: ``companion.tracking.questions.QUESTION_KINDS``),
``turns_shown_correct`` (the turns ``turns_correct`` counts, and those where the best story is
wrong only in trapped wizards that the page shows as alternatives, the true one among them:
``TrackerUpdate.hidden_unsure``),
``reanchors`` (how often a lost belief was re-anchored on the board the camera reads:
``Tracker.reanchors``, docs/architecture.md "The tracker"), ``narrowed_frames`` (frames whose
search ran out of ``TrackerOptions.frame_budget``, set with ``--frame-budget``; 0: no bound),
``reconcile_ms_p50`` / ``reconcile_ms_p99`` (time of one ``observe`` call; full garbage
collections run between inputs, as in the service), ``rss_mb`` (the bench's peak resident
memory so far).
With expansion modules the board includes the witch and raven tokens (a sealed witch too);
``--modules all`` names every module.
``--defer`` makes the tracker hold hidden differences and ask only when they matter, and
``--no-defer`` ask as soon as a later frame confirmed one (``TrackerOptions.defer``; default:
the tracker's default, off). It reads turn ends from the board as well as from the DONE button
(``TrackerOptions.board_turns``, on by default); ``--no-board-turns`` reads them from DONE alone.
``--pages 0.1667`` lets the bots play page cards with the witch (as ``companion rules play``
does); the simulator alone plays none.

Across seeds (``--seeds A-B``): ``--games`` games for each seed ``s`` in ``A..B`` (game seeds
``s*1000 + g`` as with ``--seed``; default one game per seed), one report with each seed's
figures under ``per_seed`` and their spread (``mean``/``min``/``max`` over the seeds) under
``spread``; the totals are over every game. ``--players 2-6`` mixes the player count across the
seeds (seed ``s`` plays ``2 + s mod 5`` players), so the same seed always gets the same game.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
from typing import Any

from companion.rules.actions import Action
from companion.rules.expansion import page_cards
from companion.rules.model import MODULES, Config, GameState
from companion.sim.answering import GameFigures, run_game
from companion.sim.bots import BOTS, Bot, _mark_page
from companion.sim.seeds import parse_range, players_for, spread, summarise
from companion.sim.simulate import GAPS, CameraNoise, simulate
from companion.tracking import TrackerOptions
from companion.tracking.questions import QUESTION_KINDS


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


def _rss_mb() -> float:
    """The process's peak resident memory so far (MB; ``ru_maxrss`` is in KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="companion bench tracking", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--games", type=int, default=None, help="games (per seed with --seeds; default 10, 1)"
    )
    ap.add_argument("--players", default="4", help="N, or A-B to mix counts across --seeds")
    ap.add_argument("--modules", default="", help="comma-separated expansion modules, or all")
    ap.add_argument("--variant", default="base", choices=("base", "master"))
    ap.add_argument("--noise", type=float, default=0.01, help="per-field error rate")
    ap.add_argument("--gap", default="turn", choices=GAPS)
    ap.add_argument("--frames", type=int, default=2, help="stable frames per still board")
    ap.add_argument("--mid-move", type=float, default=0.0, help="chance of a mid-move frame")
    ap.add_argument("--done-rate", type=float, default=1.0, help="chance DONE is pressed")
    ap.add_argument("--bots", default="greedy", choices=("greedy", "random"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", default=None, help="A-B: every seed from A to B, one report")
    ap.add_argument(
        "--pages",
        type=float,
        default=0.0,
        help="with the witch: share of the deck that are page cards (0 = none; bots.play: 1/6)",
    )
    ap.add_argument(
        "--defer",
        action=argparse.BooleanOptionalAction,
        default=TrackerOptions().defer,
        help="hold hidden differences and ask only when they matter (TrackerOptions.defer; "
        "--no-defer: ask as soon as a later frame confirmed a hidden difference)",
    )
    ap.add_argument(
        "--board-turns",
        action=argparse.BooleanOptionalAction,
        default=TrackerOptions().board_turns,
        help="read turn ends from the board as well as from DONE (TrackerOptions.board_turns; "
        "--no-board-turns: from DONE alone)",
    )
    ap.add_argument(
        "--frame-budget",
        type=int,
        default=TrackerOptions().frame_budget,
        help="candidate actions one frame's search may try (TrackerOptions.frame_budget; 0: "
        "no bound)",
    )
    ap.add_argument("--json", action="store_true")
    return ap


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    modules = frozenset(m for m in args.modules.split(",") if m)
    if modules == {"all"}:
        modules = frozenset(MODULES)
    unknown = modules - set(MODULES)
    if unknown:
        print(f"--modules: unknown module {sorted(unknown)[0]!r}", file=sys.stderr)
        return 2
    try:
        players = parse_range(args.players, "--players")
        seeds = parse_range(args.seeds, "--seeds") if args.seeds is not None else None
        if seeds is None and players[0] != players[1]:
            raise ValueError("--players: a range A-B needs --seeds")
        if args.frame_budget < 0:
            raise ValueError("--frame-budget: at least 0")
        games = args.games if args.games is not None else (1 if seeds else 10)
        if games < 1:
            raise ValueError("--games: at least 1")
        configs = {
            n: Config(player_count=n, variant=args.variant, modules=modules)
            for n in range(players[0], players[1] + 1)
        }
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
    share = args.pages if "witch" in modules else 0.0
    all_timings: list[float] = []
    all_games: list[GameFigures] = []
    per_seed: list[dict[str, Any]] = []
    for s in range(seeds[0], seeds[1] + 1) if seeds else (args.seed,):
        n = players_for(s, players)
        timings: list[float] = []
        figures: list[GameFigures] = []
        for g in range(games):
            seed = s * 1000 + g
            try:
                sim = simulate(configs[n], seed, noise, _bots(args.bots, seed, n, share))
            except ValueError as exc:
                print(f"bench tracking: {exc}", file=sys.stderr)
                return 2
            figures.append(
                run_game(
                    sim,
                    timings,
                    TrackerOptions(
                        defer=args.defer,
                        board_turns=args.board_turns,
                        frame_budget=args.frame_budget,
                    ),
                )
            )
        report = {
            "seed": s,
            "players": n,
            **summarise(figures, timings),
            **_deferred(figures),
            "rss_mb": _rss_mb(),
        }
        per_seed.append(report)
        all_timings.extend(timings)
        all_games.extend(figures)
        if seeds and not args.json:
            print(_seed_line(report), flush=True)
    out: dict[str, Any] = {
        "players": args.players if seeds else players[0],
        "modules": sorted(modules),
        "noise": args.noise,
        "gap": args.gap,
        "defer": args.defer,
        "board_turns": args.board_turns,
        **summarise(all_games, all_timings),
        **_deferred(all_games),
        "rss_mb": _rss_mb(),
    }
    if seeds:
        out["seeds"] = args.seeds
        out["per_seed"] = per_seed
        out["spread"] = spread(per_seed)
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return 0
    for k, v in out.items():
        if k == "per_seed":
            continue
        if k == "spread":
            for name, sp in v.items():
                print(f"spread {name:24} mean {sp['mean']} min {sp['min']} max {sp['max']}")
            continue
        print(f"{k:24} {v}")
    return 0


def _deferred(figures: list[GameFigures]) -> dict[str, Any]:
    """Questions of each kind over ``figures``' games (every kind named, 0 when none), and the
    turns whose shown table was right with its trapped wizards' alternatives
    (``turns_shown_correct``: what ``turns_correct`` counts, or the best story wrong only in
    trapped wizards whose true placement the page lists as one of the alternatives)."""
    kinds = dict.fromkeys(QUESTION_KINDS, 0)
    for g in figures:
        for kind, n in g["questions_by_kind"].items():
            kinds[kind] = kinds.get(kind, 0) + n
    turns = sum(g["turns"] for g in figures)
    shown = sum(g["turns_shown_correct"] for g in figures)
    return {
        "questions_by_kind": kinds,
        "turns_shown_correct": shown,
        "turns_shown_correct_pct": round(100.0 * shown / turns, 3) if turns else 0.0,
    }


def _seed_line(r: dict[str, Any]) -> str:
    """One seed's figures on one line (the text report of ``--seeds``)."""
    q = r["questions_per_game"]
    return (
        f"seed {r['seed']:>6} players {r['players']} games {r['games']} "
        f"turns {r['turns_correct']}/{r['turns']} ({r['turns_correct_pct']} %) "
        f"hidden {r['games_exact_hidden']}/{r['games']} "
        f"wrong {r['wrong_commits']} (joint {r['wrong_commits_joint']}, "
        f"board {r['wrong_board_commits']}) "
        f"re-anchors {r['reanchors']} narrowed {r['narrowed_frames']} "
        f"questions med {q['median']} max {q['max']} "
        f"({' '.join(f'{k} {v}' for k, v in r['questions_by_kind'].items() if v)}) "
        f"reconcile p50 {r['reconcile_ms_p50']} p99 {r['reconcile_ms_p99']} ms "
        f"rss {r['rss_mb']} MB"
    )
