"""Training of the stack-height model on rendered tables (offline, seeded).

Reproduces ``companion/vision/detect_height.json`` (``python -m companion.sim.train_height``):
renders seeded random tables with :mod:`companion.sim.render` (seeds from
:data:`TRAIN_SEED_BASE` upwards, disjoint from the tests' seeds below 1000 and from ``companion
bench vision`` seeds 1..9999, which use ``seed * 1000 + i``), runs the detector's own feature
extraction on each frame and fits the network (:class:`~companion.vision.detect_height.HeightModel`)
to the renderer's ground truth.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules import Config, dump_state, observe, setup
from companion.rules.model import MODULES
from companion.sim.mlp import fit_softmax_mlp
from companion.sim.render import random_lighting, random_setup, render
from companion.sim.scenes import TILT_BUCKETS, random_game_state
from companion.vision.detect_height import (
    DEFAULT_IGNORE,
    FEATURE_GROUPS,
    IGNORED_SCALE,
    MODEL_PATH,
    PER_TIER,
    HeightModel,
    ignored_columns,
)
from companion.vision.detector import INSERT_KINDS, Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ProfileError
from companion.vision.profile_setup import build_profile

TRAIN_SEED_BASE = 10_000_000
"""First training session seed (bench sessions use ``seed * 1000 + i`` with seed < 10 000)."""

MODULE_SEED_OFFSET = 500_000
"""Training sessions with the expansion's modules use seeds from ``TRAIN_SEED_BASE`` plus this."""


def _sessions(sessions: int, module_sessions: int) -> list[tuple[int, bool]]:
    """The order of the training sessions: ``(index, with modules)``, the module sessions spread
    evenly among the base-game ones (the held-out last fifth then holds both kinds)."""
    total = sessions + module_sessions
    out: list[tuple[int, bool]] = []
    done_m = 0
    for i in range(total):
        want_m = (i + 1) * module_sessions // total if total else 0
        if want_m > done_m:
            out.append((done_m, True))
            done_m += 1
        else:
            out.append((i - done_m, False))
    return out


def collect(
    sessions: int,
    per_session: int,
    base: int = TRAIN_SEED_BASE,
    module_sessions: int = 0,
) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
    """Render ``sessions`` random tables of the base game (and ``module_sessions`` with a random
    non-empty set of the expansion's modules, R-MOD-GEN-1) with ``per_session`` game frames each
    and return the detector's height features ``(N, F) float32`` and true tower counts
    ``(N,) int32`` of every space that is not under the raven castle nor an insert (the
    detector never puts a tower there)."""
    geometry = BoardGeometry.default()
    xs: list[NDArray[np.float32]] = []
    ys: list[int] = []
    order = _sessions(sessions, module_sessions)
    for n, (si, with_modules) in enumerate(order):
        seed = base + si + (MODULE_SEED_OFFSET if with_modules else 0)
        nrng = np.random.default_rng(seed)
        prng = random.Random(seed)
        table = random_setup(nrng, geometry, tilt_range=TILT_BUCKETS[si % len(TILT_BUCKETS)])
        players = prng.randint(2, 6)
        modules: frozenset[str] = frozenset()
        if with_modules:
            mrng = random.Random(seed + 1)
            modules = frozenset(m for m in MODULES if mrng.random() < 0.6) or frozenset(
                {mrng.choice(MODULES)}
            )
        config = Config(player_count=players, modules=modules)
        setup_state = setup(config, seed=None)
        track = geometry.with_track(dump_state(setup_state)["track"])
        light = replace(table, lighting=random_lighting(nrng), _cache={})
        setup_frame = render(setup_state, nrng, setup=light, hand=False).frame
        try:
            profile = build_profile(
                setup_frame,
                table.camera,
                track,
                list(config.colours or ()),
                expected=observe(setup_state) if modules else None,
            )
        except ProfileError:
            continue
        detector = Detector(table.camera, track, profile, height_model=None)
        inserts = {s for s in track.spaces if track.track.kind(s) in INSERT_KINDS}
        results = [render(setup_state, nrng, setup=light, hand=False)]
        for _ in range(per_session):
            state = random_game_state(prng, players, modules=modules)
            try:
                results.append(render(state, nrng, setup=table, hand=False))
            except (cv2.error, ValueError, FloatingPointError):
                continue
        for res in results:
            frame, truth = res.frame, res.observation
            det = detector.detect(frame)
            if not det.ok or det.observation is None:
                continue
            for space, t in truth.spaces.items():
                d = det.details.get(space)
                if d is None or t.castle or not d.height_features or space in inserts:
                    continue
                xs.append(np.array(d.height_features, np.float32))
                ys.append(int(t.towers))
        print(f"session {n + 1}/{len(order)}: {len(ys)} spaces", file=sys.stderr)
    return np.array(xs, np.float32), np.array(ys, np.int32)


def train(
    x: NDArray[np.float32],
    y: NDArray[np.int32],
    max_towers: int,
    hidden: int = 32,
    steps: int = 1500,
    seed: int = 12345,
    l2: float = 3e-2,
    ignore: tuple[int, ...] = (),
) -> HeightModel:
    """Fit the network by full-batch Adam on the cross-entropy (seeded; a few minutes).

    :param ignore: feature columns the model must not use: they are standardised to 0 in
        training and get the spread :data:`IGNORED_SCALE`, so any value reads as 0 at run time.
    """
    rng = np.random.default_rng(seed)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-3
    cols = list(ignore)
    mean[cols] = 0.0
    scale[cols] = IGNORED_SCALE
    xs = ((x - mean) / scale).astype(np.float64)
    n = len(y)
    c = max_towers + 1
    # empty spaces outnumber every tower count: weigh the classes towards balance
    counts = np.bincount(y, minlength=c).astype(np.float64)
    cw = np.where(counts > 0, (n / np.maximum(counts, 1) / c) ** 0.5, 0.0)
    params = fit_softmax_mlp(xs, y, cw, hidden, steps, rng, l2=l2, lr=0.01)
    return HeightModel(mean, scale, *params)


def main(argv: list[str] | None = None) -> int:
    """Train and save the height model (``python -m companion.sim.train_height``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=200, help="random tables (default 200)")
    ap.add_argument(
        "--ignore",
        default=",".join(DEFAULT_IGNORE),
        help=f"feature groups left out, comma separated (default {','.join(DEFAULT_IGNORE)}; "
        f"of {', '.join(FEATURE_GROUPS)})",
    )
    ap.add_argument(
        "--module-sessions",
        type=int,
        default=100,
        help="more random tables with a random set of the expansion's modules (default 100)",
    )
    ap.add_argument("--per-session", type=int, default=8, help="game frames per table")
    ap.add_argument("--hidden", type=int, default=32, help="hidden units (default 32)")
    ap.add_argument("--steps", type=int, default=1500, help="training steps (default 1500)")
    ap.add_argument("--l2", type=float, default=3e-2, help="weight decay (default 0.03)")
    ap.add_argument("--data", type=Path, help="cache of the rendered features (.npz)")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    t0 = time.perf_counter()
    if args.data is not None and args.data.is_file():
        cached = np.load(args.data)
        x, y = cached["x"], cached["y"]
    else:
        x, y = collect(args.sessions, args.per_session, module_sessions=args.module_sessions)
        if args.data is not None:
            np.savez_compressed(args.data, x=x, y=y)
    k = (x.shape[1] - 1) // PER_TIER
    try:
        ignore = ignored_columns(tuple(g for g in args.ignore.split(",") if g), k)
    except ValueError as exc:
        print(f"--ignore: {exc}", file=sys.stderr)
        return 2
    n = len(y)
    split = int(n * 0.8)  # sessions are in order: the last fifth are tables never trained on
    model = train(x[:split], y[:split], k, args.hidden, args.steps, l2=args.l2, ignore=ignore)
    pred = model.predict(x[split:])[0]
    err = float(np.mean(pred != y[split:])) * 100 if n > split else float("nan")
    print(f"held-out tower-count error {err:.2f} % on {n - split} spaces", file=sys.stderr)
    model = train(x, y, k, args.hidden, args.steps, l2=args.l2, ignore=ignore)
    args.out.write_text(json.dumps(model.to_json()) + "\n", encoding="utf-8")
    print(
        f"saved {args.out.name}: {n} spaces, {args.hidden} hidden units, "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
