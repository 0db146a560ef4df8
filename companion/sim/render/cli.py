"""Command line: example frames and timing (``python -m companion.sim.render``)."""

from __future__ import annotations

import cv2
import numpy as np

from companion.rules.model import GameState
from companion.sim.render.camera import FRAME_SIZE
from companion.sim.render.frame import render
from companion.sim.render.light import random_setup

# --------------------------------------------------------------------------------------------
# command line: example frames and timing


def _game_states(seed: int, count: int, players: int | None = None) -> list[GameState]:
    """``count`` states from seeded bot games (companion.sim.bots), spread over the games."""
    from companion.rules import Config
    from companion.sim.bots import play

    out: list[GameState] = []
    rnd = np.random.default_rng(seed)
    game = 0
    while len(out) < count:
        n = players or int(rnd.integers(2, 7))
        steps = [st.state for st in play(Config(player_count=n), seed * 100 + game, "random")]
        game += 1
        if not steps:
            continue
        picks = rnd.choice(len(steps), size=min(count - len(out), 8), replace=False)
        out.extend(steps[int(i)] for i in sorted(picks))
    return out


def main(argv: list[str]) -> int:
    """``python -m companion.sim.render sample|time ...`` (see ``--help``)."""
    import argparse
    import statistics
    import time

    ap = argparse.ArgumentParser(prog="python -m companion.sim.render", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("sample", help="write example frames with their truth (PNG + JSON)")
    sp.add_argument("--out", default="artifacts/render", help="folder (default artifacts/render)")
    sp.add_argument("--count", type=int, default=6)
    sp.add_argument("--seed", type=int, default=1)
    sp.add_argument("--hand", type=float, default=0.3, help="probability of a hand per frame")
    tp = sub.add_parser("time", help="median render time per frame on one core")
    tp.add_argument("--frames", type=int, default=50)
    tp.add_argument("--seed", type=int, default=1)
    tp.add_argument("--session", action="store_true", help="one fixed setup (the demo's case)")
    tp.add_argument("--threads", type=int, default=1, help="OpenCV threads (default 1)")
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        states = _game_states(args.seed, args.count)
        for i, st in enumerate(states):
            r = render(st, np.random.default_rng([args.seed, i]), hand=args.hand)
            path = r.save(args.out, f"frame_{args.seed}_{i:03d}")
            print(
                f"{path}  tilt {r.pose.tilt_deg:4.1f}  {r.lighting.kelvin:5.0f} K  "
                f"x{r.lighting.intensity:.2f}  hand {r.hand}"
            )
        return 0
    cv2.setNumThreads(args.threads)
    states = _game_states(args.seed, args.frames)
    rng = np.random.default_rng(args.seed)
    fixed = random_setup(rng) if args.session else None
    render(states[0], rng, setup=fixed)  # imports, noise bank
    wall: list[float] = []
    cpu: list[float] = []
    for st in states:
        t0, c0 = time.perf_counter(), time.process_time()
        render(st, rng, setup=fixed, hand=0.2)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    wall.sort()
    print(
        f"{len(states)} frames {FRAME_SIZE[0]}x{FRAME_SIZE[1]}, OpenCV threads {args.threads}, "
        f"{'one session' if args.session else 'fresh camera/light/look per frame'}"
    )
    print(f"wall ms: median {statistics.median(wall):.1f}  p90 {wall[int(0.9 * len(wall))]:.1f}")
    print(f"cpu  ms: median {statistics.median(cpu):.1f}")
    return 0
