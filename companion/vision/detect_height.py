"""Stack height from rim evidence: a small network trained on rendered tables.

The detector measures, for every space and every candidate tier ``k = 1..K``, how strongly the
projected rim of a roof at tier ``k`` lines up with an edge in the frame (see
:mod:`companion.vision.detector`). A hand-tuned rule (best tier above a threshold and above the
other tiers) misses faint roofs on the sandy track and reads textured track as a roof. This module
replaces that rule by a one-hidden-layer network (numpy; OpenCV 5 has no ``cv2.ml``) over
per-space features:

* per tier: the median and the lower quartile of the edge strength around the rim (grey levels
  per px, white paper = 255), the share of rim points that could be measured (inside the frame,
  not on a marker, not behind the raven castle), and the median edge just *inside* and just
  *outside* the rim (a true roof edge is a step, a printed joint or a texture line is not);
* per tier: the share of roof-interior probes labelled roof or wizard, and labelled track, by the
  colour profile, and the share of probes on the camera-facing wall of that tier labelled wall
  (a stack's side occludes the track behind it);
* per tier: the share of those wall probes that no track-surface class explains (something
  stands between the camera and the track there), and the lightness of the wall probes relative
  to the roof-interior probes of the same tier (a wall faces sideways and is shaded; a flat
  track or roof under the same light is not; white paper clipping in an over-exposed frame makes
  a plain roof and the sandy track one colour, not their walls);
* the camera's elevation above the space (deg): steep views shrink the parallax between tiers.

The answer per space is the tower count ``0..K`` and a confidence (its softmax probability),
which the detector hands to the tracker.

The model ships as ``detect_height.json`` (weights as JSON) beside this module and is
reproduced by :func:`main` (``python -m companion.vision.detect_height``): it renders seeded
random tables with :mod:`companion.sim.render` (seeds from :data:`TRAIN_SEED_BASE` upwards,
disjoint from the tests' seeds below 1000 and from ``companion bench vision`` seeds 1..9999,
which use ``seed * 1000 + i``), runs the detector's own feature extraction on each frame and fits
the network to the renderer's ground truth. At run time only the frame, the pose and the board
geometry are used.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

MODEL_PATH = Path(__file__).with_name("detect_height.json")
TRAIN_SEED_BASE = 10_000_000
"""First training session seed (bench sessions use ``seed * 1000 + i`` with seed < 10 000)."""

PER_TIER = 10
"""Features per candidate tier: rim edge median, lower quartile, measured share, inside, outside;
roof-coloured and track-coloured shares of the roof interior; wall-coloured share of the wall,
the wall's share that is not track, the wall's lightness relative to the roof interior's."""


IGNORED_SCALE = 1e9
"""Spread given to a feature the model was trained without (see :func:`train`)."""

FEATURE_GROUPS = (
    "median",
    "q25",
    "share",
    "inside",
    "outside",
    "roof",
    "track",
    "wall",
    "occluded",
    "wall_light",
)
"""Names of the per-tier feature groups, in order (``--ignore`` takes these)."""

DEFAULT_IGNORE = ("wall",)
"""Feature groups the shipped model is trained without: the wall colour comes from the profile's
wall class, sampled on the setup towers' camera-facing walls, which a camera looking nearly
straight down hardly sees; a wrong wall class made whole sessions read their towers as missing
(``bench vision --frames 120 --seed 2 --no-hands``: tower-count error 2.92 % with it, 1.09 %
without)."""


def ignored_columns(groups: tuple[str, ...], max_towers: int) -> tuple[int, ...]:
    """Feature columns of the per-tier groups named in ``groups``.

    :raises ValueError: for a name not in :data:`FEATURE_GROUPS`.
    """
    cols: list[int] = []
    for g in groups:
        if g not in FEATURE_GROUPS:
            raise ValueError(f"feature group {g!r}: expected one of {', '.join(FEATURE_GROUPS)}")
        i = FEATURE_GROUPS.index(g)
        cols.extend(range(i * max_towers, (i + 1) * max_towers))
    return tuple(cols)


def n_features(max_towers: int) -> int:
    """Length of one space's feature vector for ``max_towers`` candidate tiers."""
    return PER_TIER * max_towers + 1


class HeightModel:
    """A small trained network: features ``(S, n_features(K))`` -> tower count and confidence.

    One hidden layer of ReLU units and a softmax over the tower counts ``0..K``; the features are
    standardised first. Pure numpy at run time (OpenCV 5 has no ``cv2.ml``).

    :param mean: ``(F,)`` feature means; :param scale: ``(F,)`` feature spreads.
    :param w1: ``(F, H)``; :param b1: ``(H,)``; :param w2: ``(H, K + 1)``; :param b2: ``(K + 1,)``.
    :raises ValueError: when the shapes do not fit together.
    """

    def __init__(
        self,
        mean: NDArray[Any],
        scale: NDArray[Any],
        w1: NDArray[Any],
        b1: NDArray[Any],
        w2: NDArray[Any],
        b2: NDArray[Any],
    ) -> None:
        self.mean = np.asarray(mean, np.float32).reshape(-1)
        self.scale = np.asarray(scale, np.float32).reshape(-1)
        self.w1 = np.asarray(w1, np.float32)
        self.b1 = np.asarray(b1, np.float32).reshape(-1)
        self.w2 = np.asarray(w2, np.float32)
        self.b2 = np.asarray(b2, np.float32).reshape(-1)
        f = self.mean.shape[0]
        if (
            self.scale.shape != (f,)
            or self.w1.shape != (f, self.b1.shape[0])
            or self.w2.shape != (self.b1.shape[0], self.b2.shape[0])
        ):
            raise ValueError("height model: weight shapes do not fit together")
        self.max_towers = self.b2.shape[0] - 1

    @property
    def n_features(self) -> int:
        return int(self.mean.shape[0])

    def probabilities(self, feats: NDArray[Any]) -> NDArray[np.float32]:
        """``(S, K + 1)`` probability of each tower count for ``(S, F)`` features."""
        x = (np.asarray(feats, np.float32) - self.mean) / self.scale
        h = np.maximum(x @ self.w1 + self.b1, 0.0)
        z = h @ self.w2 + self.b2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p: NDArray[np.float32] = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
        return p

    def predict(self, feats: NDArray[Any]) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        """Tower counts ``(S,) int32`` and their probabilities ``(S,) float32``."""
        p = self.probabilities(feats)
        best = np.argmax(p, axis=1).astype(np.int32)
        conf: NDArray[np.float32] = p[np.arange(len(p)), best]
        return best, conf

    def to_json(self) -> dict[str, Any]:
        def r(a: NDArray[Any]) -> Any:
            return np.round(a.astype(np.float64), 6).tolist()

        return {
            "format": "companion-height-model",
            "version": 1,
            "features": f"{PER_TIER} per tier (rim median, lower quartile, share, inside, outside, "
            "roof share, track share, wall share, wall not track, wall lightness / roof "
            "lightness) + camera elevation",
            "mean": r(self.mean),
            "scale": r(self.scale),
            "w1": r(self.w1),
            "b1": r(self.b1),
            "w2": r(self.w2),
            "b2": r(self.b2),
        }

    @classmethod
    def from_json(cls, data: Any) -> HeightModel:
        """:raises ValueError: for anything but a version-1 height model with fitting shapes."""
        if not isinstance(data, dict) or data.get("format") != "companion-height-model":
            raise ValueError("not a height model (format != companion-height-model)")
        if data.get("version") != 1:
            raise ValueError(f"height model version {data.get('version')!r} unsupported")
        try:
            parts = [
                np.array(data[k], np.float32) for k in ("mean", "scale", "w1", "b1", "w2", "b2")
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"height model: bad weights ({exc})") from None
        if not all(np.all(np.isfinite(a)) for a in parts):
            raise ValueError("height model: weights must be finite")
        return cls(*parts)

    @classmethod
    def load(cls, path: str | Path = MODEL_PATH, max_towers: int = 10) -> HeightModel | None:
        """The model in ``path``, or None when the file is missing or does not fit
        ``max_towers`` candidate tiers.

        :raises ValueError: when the file exists but is not a height model.
        """
        p = Path(path)
        if not p.is_file():
            return None
        model = cls.from_json(json.loads(p.read_text(encoding="utf-8")))
        if model.max_towers != max_towers or model.n_features != n_features(max_towers):
            return None
        return model


# -------------------------------------------------------------------------------------------------
# training (offline, seeded)


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
) -> tuple[Any, Any]:
    """Render ``sessions`` random tables of the base game (and ``module_sessions`` with a random
    non-empty set of the expansion's modules, R-MOD-GEN-1) with ``per_session`` game frames each
    and return the detector's height features ``(N, F) float32`` and true tower counts
    ``(N,) int32`` of every space that is not under the raven castle nor an insert (the
    detector never puts a tower there)."""
    from companion.bench.vision import TILT_BUCKETS, random_game_state
    from companion.rules import Config, dump_state, observe, setup
    from companion.rules.model import MODULES
    from companion.sim.render import random_lighting, random_setup, render
    from companion.vision.detector import INSERT_KINDS, Detector
    from companion.vision.geometry import BoardGeometry
    from companion.vision.profile import ProfileError, build_profile

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
    n, f = xs.shape
    c = max_towers + 1
    onehot = np.zeros((n, c))
    onehot[np.arange(n), y] = 1.0
    # empty spaces outnumber every tower count: weigh the classes towards balance
    counts = np.bincount(y, minlength=c).astype(np.float64)
    cw = np.where(counts > 0, (n / np.maximum(counts, 1) / c) ** 0.5, 0.0)
    sw = cw[y] / cw[y].sum()
    params = [
        rng.normal(0, (2 / f) ** 0.5, (f, hidden)),
        np.zeros(hidden),
        rng.normal(0, (1 / hidden) ** 0.5, (hidden, c)),
        np.zeros(c),
    ]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr = 0.01
    for t in range(1, steps + 1):
        w1, b1, w2, b2 = params
        pre = xs @ w1 + b1
        h = np.maximum(pre, 0.0)
        z = h @ w2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        dz = (p - onehot) * sw[:, None]
        gw2 = h.T @ dz + l2 * w2
        gb2 = dz.sum(axis=0)
        dh = (dz @ w2.T) * (pre > 0)
        gw1 = xs.T @ dh + l2 * w1
        gb1 = dh.sum(axis=0)
        for i, g in enumerate((gw1, gb1, gw2, gb2)):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            mh = m[i] / (1 - 0.9**t)
            vh = v[i] / (1 - 0.999**t)
            params[i] = params[i] - lr * mh / (np.sqrt(vh) + 1e-8)
    return HeightModel(mean, scale, *params)


def main(argv: list[str] | None = None) -> int:
    """Train and save the height model (``python -m companion.vision.detect_height``)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
