"""``companion bench rules [--seconds S] [--modules all|LIST] [--json]``: speed of the rules core
on one core (``--modules``: with expansion modules, R-MOD-*; default none = base game).

Figures:

* ``applied_actions_per_s``: :func:`companion.rules.apply` with full legality validation on
  (state, action) pairs recorded from seeded random 2-6 player games (base and master
  variant, hands known); the target is >= 100,000 (the tracker searches whole turns with it).
* ``legal_enumerations_per_s``: full enumerations of :func:`legal_actions` (hands unknown, the
  tracker's form) per second, on the same recorded states;
  ``legal_enumerations_every_card_per_s``: the same with every card face (``every_card=True``).
* ``games_per_s``: complete seeded random 6-player games (bots choosing, engine applying).

Rates are per CPU second of this process (one core), so that other load on the machine
slows the measurement but does not distort it much; the wall-clock rate of ``apply`` is
printed as well.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from companion.rules import MODULES, Config, GameState, apply, legal_actions, setup
from companion.rules.actions import Action
from companion.sim.bots import play

TARGET_APPLIED_PER_S = 100_000


def record(
    n_pairs: int, seed: int = 1, modules: frozenset[str] = frozenset()
) -> list[tuple[GameState, Action]]:
    """(state, action) pairs from seeded random games, ``n_pairs`` of them."""
    pairs: list[tuple[GameState, Action]] = []
    g = 0
    while len(pairs) < n_pairs:
        players = 2 + g % 5
        variant = "master" if g % 2 else "base"
        cfg = Config(player_count=players, variant=variant, modules=modules)
        state = setup(cfg, seed + g)
        for step in play(cfg, seed + g, "random"):
            pairs.append((state, step.action))
            state = step.state
            if len(pairs) >= n_pairs:
                break
        g += 1
    return pairs


def _tracker_states(pairs: list[tuple[GameState, Action]], n: int) -> list[GameState]:
    from dataclasses import replace

    step = max(1, len(pairs) // n)
    return [replace(s, cards=None) for s, _ in pairs[::step]][:n]


def run(seconds: float, modules: frozenset[str] = frozenset()) -> dict[str, Any]:
    pairs = record(20_000, modules=modules)
    # applied actions per second (CPU time of this process = one core; wall time as well)
    budget = seconds * 0.5
    done = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    while True:
        for state, action in pairs:
            apply(state, action)
        done += len(pairs)
        elapsed = time.perf_counter() - t0
        if elapsed >= budget:
            break
    cpu = time.process_time() - c0
    applied = done / cpu
    applied_wall = done / elapsed
    # legal action enumeration (hands unknown)
    states = _tracker_states(pairs, 500)
    t0 = time.perf_counter()
    c0 = time.process_time()
    enumerated = 0
    listed = 0
    while time.perf_counter() - t0 < seconds * 0.2:
        for s in states:
            listed += sum(1 for _ in legal_actions(s))
            enumerated += 1
    legal_rate = enumerated / (time.process_time() - c0)
    t0 = time.perf_counter()
    c0 = time.process_time()
    every = 0
    while time.perf_counter() - t0 < seconds * 0.1 or every == 0:
        for s in states:
            for _ in legal_actions(s, every_card=True):
                pass
            every += 1
    every_rate = every / (time.process_time() - c0)
    # whole random 6-player games
    t0 = time.perf_counter()
    c0 = time.process_time()
    games = 0
    actions = 0
    unfinished = 0
    seed = 1000
    while time.perf_counter() - t0 < seconds * 0.3 or games == 0:
        last = None
        for step in play(Config(player_count=6, modules=modules), seed, "random"):
            actions += 1
            last = step.state
        games += 1
        if last is None or not last.game.over:
            unfinished += 1
        seed += 1
    games_elapsed = time.process_time() - c0
    return {
        "applied_actions_per_s": round(applied),
        "applied_actions_per_wall_s": round(applied_wall),
        "target_applied_actions_per_s": TARGET_APPLIED_PER_S,
        "legal_enumerations_per_s": round(legal_rate, 1),
        "mean_legal_actions": round(listed / max(1, enumerated), 1),
        "legal_enumerations_every_card_per_s": round(every_rate, 1),
        "games_per_s": round(games / games_elapsed, 2),
        "game_actions_per_s": round(actions / games_elapsed),
        "mean_actions_per_game": round(actions / games, 1),
        "games": games,
        "unfinished_games": unfinished,
        "recorded_pairs": len(pairs),
        "seconds": seconds,
        "modules": sorted(modules),
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="companion bench rules", description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=10.0, help="measuring time (s)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--modules",
        default="none",
        help="expansion modules: all, none, or a comma list of " + ", ".join(MODULES),
    )
    args = p.parse_args(argv)
    if args.modules == "all":
        modules = frozenset(MODULES)
    elif args.modules == "none":
        modules = frozenset()
    else:
        modules = frozenset(x.strip() for x in args.modules.split(",") if x.strip())
        unknown = sorted(modules - set(MODULES))
        if unknown:
            p.error(f"unknown module {unknown[0]!r}")
    figures = run(args.seconds, modules)
    if args.json:
        print(json.dumps(figures))
        return 0
    ok = figures["applied_actions_per_s"] >= TARGET_APPLIED_PER_S
    print(f"modules             {', '.join(figures['modules']) or 'none (base game)'}")
    print(
        f"applied actions/s   {figures['applied_actions_per_s']:>10,}  "
        f"(per CPU second; target {TARGET_APPLIED_PER_S:,}: {'met' if ok else 'MISSED'}; "
        f"{figures['applied_actions_per_wall_s']:,} per wall-clock second)"
    )
    print(
        f"legal enumerations/s {figures['legal_enumerations_per_s']:>9}  "
        f"(mean {figures['mean_legal_actions']} actions, hands unknown; "
        f"{figures['legal_enumerations_every_card_per_s']} with every card face)"
    )
    print(
        f"6-player games/s    {figures['games_per_s']:>10}  "
        f"({figures['mean_actions_per_game']} actions/game, {figures['games']} games, "
        f"{figures['unfinished_games']} unfinished)"
    )
    return 0
