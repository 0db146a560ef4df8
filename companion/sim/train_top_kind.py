"""Training of the crest/plain roof classifier on rendered tables (offline, seeded).

Reproduces ``companion/vision/top_kind.onnx`` (``python -m companion.sim.train_top_kind``;
needs the ``train`` extra for ``onnx``): renders seeded random tables with
:mod:`companion.sim.render` through the Pi camera model
(:mod:`companion.sim.render.camera_model`, each session with one randomly chosen condition at a
random severity, or none: the domain randomisation), reads each frame's board pose and white
reference with the detector, cuts the rectified crop of every top roof in view
(:func:`~companion.vision.top_kind.roof_crops`, the grid turned at random angles) and labels it
with the renderer's ground truth. The network (one hidden ReLU layer, softmax) is fitted with
numpy and written as an ONNX graph that ``cv2.dnn`` reads.

Seeds: sessions ``TRAIN_SEED_BASE + i``, disjoint from the tests' (< 1000), the bench's
(``seed * 1000 + i`` with seed < 10 000) and the height model's training seeds.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules import Config, Observation, dump_state, observe, setup
from companion.rules.model import MODULES, GameState
from companion.sim.mlp import fit_softmax_mlp
from companion.sim.render import random_lighting, render
from companion.sim.render.camera_model import (
    CONDITIONS,
    SEVERITIES,
    CameraEffects,
    camera_frame,
    play_setup,
    random_effects,
    session_setup,
)
from companion.sim.render.light import TableSetup
from companion.sim.scenes import TILT_BUCKETS, random_game_state
from companion.vision.detector import Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ProfileError
from companion.vision.profile_setup import build_profile
from companion.vision.top_kind import CLASSES, MODEL_PATH, N_INPUTS, roof_crops

TRAIN_SEED_BASE = 20_000_000
"""First training session seed (bench sessions use ``seed * 1000 + i`` with seed < 10 000; the
height model trains from 10 000 000)."""


@dataclass
class Crops:
    """A labelled data set: ``x (N, N_INPUTS) float32`` crops, ``y (N,) int32`` class indices
    of :data:`~companion.vision.top_kind.CLASSES`, ``session (N,) int32`` the session each came
    from (for a split by table)."""

    x: NDArray[np.float32]
    y: NDArray[np.int32]
    session: NDArray[np.int32]


def _severity(rng: random.Random) -> dict[str, str]:
    """A session's camera conditions: a third at the defaults, else one condition at a random
    severity."""
    if rng.random() < 1 / 3:
        return {}
    return {rng.choice(CONDITIONS): rng.choice(SEVERITIES)}


@dataclass(frozen=True)
class TrainingTable:
    """One random training table (shared by the three trainers so their draws stay alike): the
    session's random streams (``nrng`` numpy, ``prng`` Python, ``crng`` the camera effects'),
    its camera ``effects``, the ``table`` (pose, tilt, lens), its game ``config``, the setup
    position, the board geometry with that setup's ``track`` and the setup's lighting."""

    nrng: np.random.Generator
    prng: random.Random
    crng: np.random.Generator
    effects: CameraEffects
    table: TableSetup
    config: Config
    setup_state: GameState
    track: BoardGeometry
    setup_light: TableSetup


def training_table(
    seed: int,
    index: int,
    geometry: BoardGeometry,
    module_share: float,
    one_module_fallback: bool = False,
    always: frozenset[str] = frozenset(),
) -> TrainingTable:
    """The ``index``-th session's table from its ``seed``: a camera severity and its effects, a
    tilt bucket (``TILT_BUCKETS`` in turn), 2-6 players and, in ``module_share`` of the
    sessions, a random non-empty set of the expansion's modules (R-MOD-GEN-1; when the draw
    picks none, all of them, or one at random with ``one_module_fallback``, as each shipped
    model was trained). ``always``: modules added to every drawn set (after the draws, so the
    other draws stay those of the same seed without it)."""
    nrng = np.random.default_rng(seed)
    prng = random.Random(seed)
    crng = np.random.default_rng([seed, 17])
    effects = random_effects(crng, _severity(prng))
    table = session_setup(
        nrng, effects, geometry, tilt_range=TILT_BUCKETS[index % len(TILT_BUCKETS)]
    )
    players = prng.randint(2, 6)
    modules: frozenset[str] = frozenset()
    if prng.random() < module_share:
        picked = frozenset(m for m in MODULES if prng.random() < 0.6)
        if not picked and one_module_fallback:
            picked = frozenset({prng.choice(MODULES)})
        elif not picked:
            picked = frozenset(MODULES)
        modules = picked | always
    config = Config(player_count=players, modules=modules)
    setup_state = setup(config, seed=None)
    track = geometry.with_track(dump_state(setup_state)["track"])
    setup_light = replace(table, lighting=random_lighting(nrng), _cache={})
    return TrainingTable(nrng, prng, crng, effects, table, config, setup_state, track, setup_light)


def _shoot(
    state: Any,
    table: TableSetup,
    phase: str,
    nrng: np.random.Generator,
    crng: np.random.Generator,
    effects: CameraEffects,
) -> tuple[NDArray[np.uint8], Observation]:
    """One frame of ``state`` as the Pi camera model delivers it, and the renderer's truth."""
    res = render(state, nrng, setup=table, hand=False, ideal=True)
    frame = camera_frame(res, effects, crng, table.geometry.board_size, phase)
    return frame, res.observation


def collect(
    sessions: int,
    per_session: int,
    base: int = TRAIN_SEED_BASE,
    turns: int = 2,
    module_share: float = 0.3,
    log: bool = True,
) -> Crops:
    """Render ``sessions`` random tables with ``per_session`` game frames each (and the setup
    frame) and cut ``turns`` crops at random grid angles of every roof in view: a tower top
    whose true kind is crest or plain and that is not under the raven castle.

    :param module_share: share of the sessions with a random non-empty set of the expansion's
        modules (R-MOD-GEN-1).
    """
    geometry = BoardGeometry.default()
    xs: list[NDArray[np.float32]] = []
    ys: list[int] = []
    ss: list[int] = []
    for si in range(sessions):
        seed = base + si
        tt = training_table(seed, si, geometry, module_share, one_module_fallback=True)
        nrng, prng, crng, effects, table = tt.nrng, tt.prng, tt.crng, tt.effects, tt.table
        config, setup_state = tt.config, tt.setup_state
        track, setup_light = tt.track, tt.setup_light
        players, modules = config.player_count, config.modules
        try:
            setup_frame, setup_truth = _shoot(
                setup_state, setup_light, "setup", nrng, crng, effects
            )
            profile = build_profile(
                setup_frame,
                table.camera,
                track,
                list(config.colours or ()),
                expected=observe(setup_state) if modules else None,
            )
        except (ProfileError, cv2.error, ValueError, FloatingPointError):
            continue
        detector = Detector(table.camera, track, profile)
        detector.detect(setup_frame)
        play = play_setup(table, effects, crng)
        frames = [(setup_frame, setup_truth)]
        for _ in range(per_session):
            state = random_game_state(prng, players, modules=modules)
            try:
                frames.append(_shoot(state, play, "play", nrng, crng, effects))
            except (cv2.error, ValueError, FloatingPointError):
                continue
        for frame, truth in frames:
            det = detector.detect(frame)
            if det.pose is None or det.white_bgr is None or not det.pose.has_3d:
                continue
            roofs = [
                (space, t.towers)
                for space, t in truth.spaces.items()
                if t.towers > 0 and not t.castle and t.top in CLASSES
            ]
            if not roofs:
                continue
            for _ in range(turns):
                angles = nrng.uniform(0, 2 * np.pi, len(roofs))
                xs.append(roof_crops(frame, det.pose, track, det.white_bgr, roofs, angles))
                ys.extend(CLASSES.index(truth.spaces[sp].top) for sp, _ in roofs)
                ss.extend([si] * len(roofs))
        if log:
            print(f"session {si + 1}/{sessions}: {len(ys)} crops", file=sys.stderr)
    x = np.concatenate(xs) if xs else np.zeros((0, N_INPUTS), np.float32)
    return Crops(x, np.array(ys, np.int32), np.array(ss, np.int32))


@dataclass
class Network:
    """The fitted network: standardisation ``(F,)`` mean and scale, ``w1 (F, H)``, ``b1 (H,)``,
    ``w2 (H, 2)``, ``b2 (2,)``."""

    mean: NDArray[np.float32]
    scale: NDArray[np.float32]
    w1: NDArray[np.float32]
    b1: NDArray[np.float32]
    w2: NDArray[np.float32]
    b2: NDArray[np.float32]

    def probabilities(self, x: NDArray[Any]) -> NDArray[np.float32]:
        """The training side's forward pass: ``(N, 2)`` class probabilities (float32, the
        same operations as the ONNX graph)."""
        xs = (np.asarray(x, np.float32) - self.mean) / self.scale
        h = np.maximum(xs @ self.w1 + self.b1, 0.0)
        z = h @ self.w2 + self.b2
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p: NDArray[np.float32] = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
        return p


def train(
    x: NDArray[np.float32],
    y: NDArray[np.int32],
    hidden: int = 32,
    steps: int = 600,
    seed: int = 12345,
    l2: float = 1e-3,
    batch: int = 512,
    lr: float = 3e-3,
) -> Network:
    """Fit the network by mini-batch Adam on the class-balanced cross-entropy (seeded).

    :raises ValueError: with no example of a class.
    """
    c = len(CLASSES)
    counts = np.bincount(y, minlength=c).astype(np.float64)
    if np.any(counts == 0):
        raise ValueError(f"top-kind training: no example of {CLASSES[int(np.argmin(counts))]}")
    rng = np.random.default_rng(seed)
    mean = x.mean(axis=0).astype(np.float32)
    scale = (x.std(axis=0) + 0.02).astype(np.float32)
    xs = (x - mean) / scale
    cw = len(y) / counts / c
    params = fit_softmax_mlp(
        xs, y, cw, hidden, steps, rng, l2=l2, lr=lr, batch=batch, dtype=np.float32
    )
    return Network(mean, scale, *params)


def to_onnx(net: Network) -> bytes:
    """The network as an ONNX graph (opset 13): input ``crops (N, N_INPUTS) float32``, output
    ``probabilities (N, 2)``.

    :raises ImportError: without the ``onnx`` package (the ``train`` extra).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(np.asarray(a, np.float32), name)
        for name, a in (
            ("mean", net.mean),
            ("scale", net.scale),
            ("w1", net.w1),
            ("b1", net.b1),
            ("w2", net.w2),
            ("b2", net.b2),
        )
    ]
    nodes = [
        helper.make_node("Sub", ["crops", "mean"], ["centred"]),
        helper.make_node("Div", ["centred", "scale"], ["standard"]),
        helper.make_node("MatMul", ["standard", "w1"], ["pre1"]),
        helper.make_node("Add", ["pre1", "b1"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "w2"], ["logit1"]),
        helper.make_node("Add", ["logit1", "b2"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probabilities"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "top_kind",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["N", N_INPUTS])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", len(CLASSES)])],
        inits,
    )
    model = helper.make_model(
        graph,
        producer_name="companion.sim.train_top_kind",
        opset_imports=[helper.make_opsetid("", 13)],
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    data: bytes = model.SerializeToString()
    return data


def main(argv: list[str] | None = None) -> int:
    """Train and save the top-kind model (``python -m companion.sim.train_top_kind``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=40, help="random tables (default 40)")
    ap.add_argument("--per-session", type=int, default=5, help="game frames per table (default 5)")
    ap.add_argument("--hidden", type=int, default=32, help="hidden units (default 32)")
    ap.add_argument("--steps", type=int, default=3000, help="training steps (default 3000)")
    ap.add_argument("--data", type=Path, help="cache of the rendered crops (.npz)")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    t0 = time.perf_counter()
    if args.data is not None and args.data.is_file():
        cached = np.load(args.data)
        data = Crops(cached["x"], cached["y"], cached["session"])
    else:
        data = collect(args.sessions, args.per_session)
        if args.data is not None:
            np.savez_compressed(args.data, x=data.x, y=data.y, session=data.session)
    if len(data.y) == 0:
        print("no crops rendered", file=sys.stderr)
        return 1
    # the last fifth of the tables are never trained on for the held-out figure
    cut = int(data.session.max() * 0.8)
    tr, te = data.session < cut, data.session >= cut
    net = train(data.x[tr], data.y[tr], args.hidden, args.steps)
    if te.any():
        pred = np.argmax(net.probabilities(data.x[te]), axis=1)
        err = float(np.mean(pred != data.y[te])) * 100
        print(f"held-out crest/plain error {err:.2f} % on {int(te.sum())} crops", file=sys.stderr)
    net = train(data.x, data.y, args.hidden, args.steps)
    args.out.write_bytes(to_onnx(net))
    print(
        f"saved {args.out.name}: {len(data.y)} crops, {args.hidden} hidden units, "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
