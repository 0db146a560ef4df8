"""Training of the tower-count network on domain-randomised rendered tables (offline, seeded).

Reproduces ``companion/vision/stack_cnn.onnx`` (360 tables, seeds 30 000 000-30 000 359)::

    python -m companion.sim.train_stack_cnn --sessions 180 --data stacks.npz --out first.onnx
    python -m companion.sim.train_stack_cnn --sessions 180 --base 30000180 --epochs 10 \
        --data stacks-2.npz stacks.npz

(needs the ``train`` extra: ``torch`` and ``onnx``). The first command renders tables
30 000 000-30 000 179 into ``stacks.npz`` (its model, on those alone, is not the shipped one),
the second renders 30 000 180-30 000 359 into ``stacks-2.npz`` and trains on both caches, in
that order (the order numbers the tables, and so the training's shuffle); ten epochs over the
360 tables are as many steps as the default twenty over 180. Each table is rendered with
:mod:`companion.sim.render` through the Pi camera model
(:mod:`companion.sim.render.camera_model`; each session at the defaults or with one randomly
chosen condition at a random severity: the domain randomisation), with random tilts, lights,
player counts (2..6) and, in a share of the sessions, a random set of the expansion's modules.
The detector reads each frame as at the table; the tier stacks
(:func:`~companion.vision.stack_cnn.tier_stacks`) of every space that is neither under the raven
castle nor an insert are cut from the frame it read, through the pose it found, and labelled
with the renderer's true tower count. A small CNN is fitted with PyTorch on four tables in
five, a softmax temperature on every fifth table (held out: its figure is printed), and the
network is exported to ONNX for ``cv2.dnn``.

Seeds: sessions ``TRAIN_SEED_BASE + i``, disjoint from the tests' (< 1000), the bench's
(``seed * 1000 + i`` with seed < 10 000), the feature height model's (from 10 000 000) and the
top-kind model's (from 20 000 000), the wizard network's (from 31 000 000), the token
network's (from 32 000 000) and the raven-castle network's (from 33 000 000).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules import Observation, observe
from companion.sim.render.camera_model import play_setup
from companion.sim.scenes import random_game_state
from companion.sim.train_top_kind import _shoot, training_table
from companion.vision.detector import INSERT_KINDS, Detector, DetectorConfig
from companion.vision.detector import core as detector_core
from companion.vision.detector.frame import FrameProbes, Reader, Stacks
from companion.vision.detector.heights import stack_heights
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ProfileError
from companion.vision.profile_setup import build_profile
from companion.vision.stack_cnn import (
    MODEL_PATH,
    ROI_PX,
    n_channels,
    network_input,
    tier_stacks,
)

TRAIN_SEED_BASE = 30_000_000
"""First training session seed (bench: ``seed * 1000 + i`` with seed < 10 000; the feature
height model trains from 10 000 000, the top-kind model from 20 000 000)."""

MAX_TOWERS = 10


class _Tables(Protocol):
    """A data set of arrays, one row per example, with the table each came from."""

    session: NDArray[np.int32]


D = TypeVar("D", bound=_Tables)
"""A data set of arrays (one row per example) with a ``session`` array."""


class TierStackData(Protocol):
    """What a tier-stack network is run on: ``x (N, K + 1, P, P, 3) uint8`` tier stacks and
    ``white (N, 3) float32`` the frame's white reference (:class:`Stacks3`, the castle
    network's data set)."""

    @property
    def x(self) -> NDArray[np.uint8]: ...

    @property
    def white(self) -> NDArray[np.float32]: ...


@dataclass
class Stacks3:
    """A labelled data set: ``x (N, K + 1, P, P, 3) uint8`` tier stacks, ``white (N, 3)`` the
    frame's white reference, ``y (N,) int32`` true tower counts, ``feat_p (N, K + 1)`` the
    feature height model's probabilities on the same space (for the comparison), ``session
    (N,) int32`` the table each came from."""

    x: NDArray[np.uint8]
    white: NDArray[np.float32]
    y: NDArray[np.int32]
    feat_p: NDArray[np.float32]
    session: NDArray[np.int32]


@contextmanager
def _probes_seen(into: list[tuple[FrameProbes, Reader]]) -> Iterator[None]:
    """While active, every frame the detector reads leaves its probes (the frame at the
    working scale, the pose and the white reference it read with) in ``into``."""

    def spy(rd: Reader, fp: FrameProbes) -> Stacks:
        into.append((fp, rd))
        return stack_heights(rd, fp)

    setattr(detector_core, "stack_heights", spy)  # noqa: B010 (the detector's module global)
    try:
        yield
    finally:
        setattr(detector_core, "stack_heights", stack_heights)  # noqa: B010


@dataclass(frozen=True)
class FrameRead:
    """One rendered training frame as the detector read it at the table: the frame's number on
    its table (0: the setup frame), the true observation, the board's track and the detector's
    probes and reader of that frame."""

    n_frame: int
    truth: Observation
    track: BoardGeometry
    fp: FrameProbes
    rd: Reader


def tables_read(
    sessions: int,
    per_session: int,
    base: int,
    module_share: float,
    config: DetectorConfig | None = None,
) -> Iterator[tuple[int, list[FrameRead]]]:
    """Per random table (seeds ``base + i``,
    :func:`~companion.sim.train_top_kind.training_table`) its index ``i`` and the readings of
    its setup frame and ``per_session`` game frames, as the detector (with ``config``) reads
    them at the table; the tier-stack networks' trainers label them. A table whose setup frame
    builds no profile is skipped, as is a frame that does not render or that the detector finds
    no board in."""
    geometry = BoardGeometry.default()
    for si in range(sessions):
        tt = training_table(base + si, si, geometry, module_share)
        nrng, prng, crng, effects, table = tt.nrng, tt.prng, tt.crng, tt.effects, tt.table
        config_t, setup_state = tt.config, tt.setup_state
        track, setup_light = tt.track, tt.setup_light
        players, modules = config_t.player_count, config_t.modules
        try:
            setup_frame, setup_truth = _shoot(
                setup_state, setup_light, "setup", nrng, crng, effects
            )
            profile = build_profile(
                setup_frame,
                table.camera,
                track,
                list(config_t.colours or ()),
                expected=observe(setup_state) if modules else None,
            )
        except (ProfileError, cv2.error, ValueError, FloatingPointError):
            continue
        detector = Detector(table.camera, track, profile, config=config)
        play = play_setup(table, effects, crng)
        frames = [(setup_frame, setup_truth)]
        for _ in range(per_session):
            state = random_game_state(prng, players, modules=modules)
            try:
                frames.append(_shoot(state, play, "play", nrng, crng, effects))
            except (cv2.error, ValueError, FloatingPointError):
                continue
        read: list[FrameRead] = []
        for n_frame, (frame, truth) in enumerate(frames):
            seen: list[tuple[FrameProbes, Reader]] = []
            with _probes_seen(seen):
                detector.detect(frame)
            if seen:
                fp, rd = seen[-1]
                read.append(FrameRead(n_frame, truth, track, fp, rd))
        yield si, read


def collect(
    sessions: int,
    per_session: int,
    base: int = TRAIN_SEED_BASE,
    module_share: float = 0.35,
    log: bool = True,
) -> Stacks3:
    """Render ``sessions`` random tables with ``per_session`` game frames each (and the setup
    frame) and cut the tier stack of every labelled space (see the module docstring)."""
    xs: list[NDArray[np.uint8]] = []
    ws: list[NDArray[np.float32]] = []
    fps: list[NDArray[np.float32]] = []
    ys: list[int] = []
    ss: list[int] = []
    for si, read in tables_read(sessions, per_session, base, module_share):
        for r in read:
            fp, rd, truth, track = r.fp, r.rd, r.truth, r.track
            spaces = list(track.spaces)
            insert = {s for s in spaces if track.track.kind(s) in INSERT_KINDS}
            keep = [
                (i, s)
                for i, s in enumerate(spaces)
                if s in truth.spaces and not truth.spaces[s].castle and s not in insert
            ]
            if not keep:
                continue
            st = stack_heights(rd, fp)
            if rd.height is not None:
                fprob = rd.height.probabilities(np.asarray(st.height_features))
            else:
                fprob = np.full((len(spaces), MAX_TOWERS + 1), 1.0 / (MAX_TOWERS + 1), np.float32)
            xs.append(tier_stacks(fp.frame, fp.pose, track, [s for _, s in keep], MAX_TOWERS))
            ws.append(np.tile(np.asarray(fp.white, np.float32), (len(keep), 1)))
            fps.append(fprob[[i for i, _ in keep]].astype(np.float32))
            ys.extend(truth.spaces[s].towers for _, s in keep)
            ss.extend([si] * len(keep))
        if log:
            print(f"session {si + 1}/{sessions}: {len(ys)} stacks", file=sys.stderr)
    t = MAX_TOWERS + 1
    return Stacks3(
        np.concatenate(xs) if xs else np.zeros((0, t, ROI_PX, ROI_PX, 3), np.uint8),
        np.concatenate(ws) if ws else np.zeros((0, 3), np.float32),
        np.array(ys, np.int32),
        np.concatenate(fps) if fps else np.zeros((0, t), np.float32),
        np.array(ss, np.int32),
    )


def build_network(max_towers: int = MAX_TOWERS) -> Any:
    """The CNN (PyTorch): tier stacks ``(N, 3 (K + 1), P, P)`` -> logits ``(N, K + 1)``.

    One small network, shared by every tier, scores "the top roof is at tier k" from the crops
    of tiers ``k - 1``, ``k`` and ``k + 1`` (zeros beyond the stack): a roof looks the same at
    every height in its own tier's crop, so what is learnt on the many low stacks holds for the
    rare tall ones.
    """
    import torch
    from torch import nn

    t = max_towers + 1
    p = (ROI_PX + 7) // 8  # three stride-2 convolutions
    scorer = nn.Sequential(
        nn.Conv2d(9, 16, 3, stride=2, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Conv2d(32, 32, 3, stride=2, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Flatten(),
        nn.Dropout(0.1),
        nn.Linear(32 * p * p, 1),
    )

    class Tiered(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scorer = scorer

        def forward(self, x: Any) -> Any:
            s = x.reshape(-1, t, 3, ROI_PX, ROI_PX)
            # one zero tier below and above (a constant Pad in the ONNX graph, which OpenCV's
            # classic engine, the faster on one core, reads; zeros concatenated it does not)
            padded = nn.functional.pad(s, (0, 0, 0, 0, 0, 0, 1, 1))  # (N, T + 2, 3, P, P)
            win = torch.cat([padded[:, k : k + t] for k in range(3)], dim=2)  # (N, T, 9, P, P)
            out = self.scorer(win.reshape(-1, 9, ROI_PX, ROI_PX))
            return out.reshape(-1, t)

    return Tiered()


def _augment(
    x: NDArray[np.uint8], white: NDArray[np.float32], rng: np.random.Generator
) -> NDArray[np.float32]:
    """Network input of a batch with random mirror images (left and right of the camera's
    line of sight are alike) and a white reference off by up to 8 % per channel."""
    flip = rng.random(len(x)) < 0.5
    x = x.copy()
    x[flip] = x[flip][:, :, :, ::-1]
    w = white * rng.uniform(0.92, 1.08, white.shape).astype(np.float32)
    return network_input(x, w)


def train(
    data: Stacks3,
    idx: NDArray[np.intp],
    epochs: int = 20,
    seed: int = 12345,
    batch: int = 128,
    lr: float = 2e-3,
    log: bool = True,
) -> Any:
    """Fit the network on the examples ``idx`` of ``data`` (seeded Adam, cosine schedule)."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = build_network()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * max(1, len(idx) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps)
    loss_fn = torch.nn.CrossEntropyLoss()
    step = 0
    for ep in range(epochs):
        net.train()
        order = rng.permutation(idx)
        total = 0.0
        for b in range(len(idx) // batch):
            j = np.sort(order[b * batch : (b + 1) * batch])
            xb = torch.from_numpy(_augment(data.x[j], data.white[j], rng))
            yb = torch.from_numpy(data.y[j].astype(np.int64))
            opt.zero_grad()
            loss = loss_fn(net(xb), yb)
            loss.backward()
            opt.step()
            if step < steps - 1:
                sched.step()
            step += 1
            total += loss.item()
        if log:
            print(
                f"epoch {ep + 1}/{epochs}: loss {total / max(1, len(idx) // batch):.4f}",
                file=sys.stderr,
            )
    net.eval()
    return net


def logits(
    net: Any, data: TierStackData, idx: NDArray[np.intp], n_out: int = MAX_TOWERS + 1
) -> NDArray[np.float32]:
    """``(len(idx), n_out)`` logits of a network on ``data``'s examples ``idx``; ``n_out``:
    the network's outputs (K + 1 counts here; the castle network's K + 2 classes)."""
    import torch

    out = []
    with torch.no_grad():
        for b in range(0, len(idx), 512):
            j = idx[b : b + 512]
            out.append(net(torch.from_numpy(network_input(data.x[j], data.white[j]))).numpy())
    return np.concatenate(out) if out else np.zeros((0, n_out), np.float32)


def fit_temperature(z: NDArray[np.float32], y: NDArray[np.int32]) -> float:
    """The softmax temperature (0.5..5) that minimises the held-out negative log-likelihood."""
    best, best_t = np.inf, 1.0
    for t in np.arange(0.5, 5.0, 0.05):
        zz = z / t
        zz = zz - zz.max(axis=1, keepdims=True)
        nll = -np.mean(zz[np.arange(len(y)), y] - np.log(np.exp(zz).sum(axis=1)))
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


def to_onnx(net: Any, temperature: float, path: Path) -> None:
    """Export ``net`` with the temperature and the softmax folded in: input ``stacks
    (N, 3 (K + 1), P, P) float32``, output ``probabilities (N, outputs)`` (K + 1 counts; the
    castle network's K + 2 classes)."""
    import torch

    class Calibrated(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: Any) -> Any:
            return torch.softmax(self.net(x) / temperature, dim=1)

    model = Calibrated().eval()
    dummy = torch.zeros(2, n_channels(MAX_TOWERS), ROI_PX, ROI_PX)
    # the TorchScript exporter (the torch.export one needs onnxscript, not in the extra) warns
    # that it is the older of the two, and that it cannot fold the reversal of the tier
    # padding's amounts (a few constant-sized nodes left in the graph)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", "Constant folding - Only steps=1", UserWarning)
        torch.onnx.export(
            model,
            (dummy,),
            str(path),
            input_names=["stacks"],
            output_names=["probabilities"],
            dynamic_axes={"stacks": {0: "N"}, "probabilities": {0: "N"}},
            opset_version=13,
            dynamo=False,
        )


def _report(name: str, p: NDArray[np.float32], y: NDArray[np.int32]) -> None:
    pred = np.argmax(p, axis=1)
    conf = p[np.arange(len(p)), pred]
    hi = conf >= 0.9
    wrong = pred != y
    print(
        f"{name}: error {100 * np.mean(wrong):.2f} % of {len(y)}; conf >= 0.9 on "
        f"{100 * hi.mean():.1f} %, right there {100 * np.mean(~wrong[hi]):.2f} %; "
        f"wrong with conf < 0.2: {int(np.sum(wrong & (conf < 0.2)))}/{int(np.sum(wrong))}",
        file=sys.stderr,
    )


def load_cached(paths: list[Path], render: Callable[[], D], kind: type[D]) -> D:
    """The data sets of the caches ``paths`` (``kind``: a dataclass of arrays, one row per
    example, with a ``session`` array): the first is rendered (``render``) and written when it
    is missing; none given: rendered and not kept. The tables of different caches are kept
    apart (their ``session`` numbers shifted)."""
    fields = list(kind.__dataclass_fields__)  # type: ignore[attr-defined]
    parts: list[D] = []
    for i, path in enumerate(paths):
        if path.is_file():
            c = np.load(path)
            parts.append(kind(*(c[k] for k in fields)))
        elif i == 0:
            d = render()
            np.savez(path, **{k: getattr(d, k) for k in fields})
            parts.append(d)
    if not paths:
        parts.append(render())
    off = 0
    for d in parts:
        d.session = d.session + off
        off = int(d.session.max()) + 1 if len(d.session) else off
    return kind(*(np.concatenate([getattr(d, k) for d in parts]) for k in fields))


def main(argv: list[str] | None = None) -> int:
    """Train and save the tower-count network (``python -m companion.sim.train_stack_cnn``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=240, help="random tables (default 240)")
    ap.add_argument("--per-session", type=int, default=8, help="game frames per table (default 8)")
    ap.add_argument("--base", type=int, default=TRAIN_SEED_BASE, help="first session seed")
    ap.add_argument("--epochs", type=int, default=20, help="training epochs (default 20)")
    ap.add_argument("--data", type=Path, nargs="*", default=[], help="caches of the stacks (.npz)")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    t0 = time.perf_counter()
    data = load_cached(
        args.data, lambda: collect(args.sessions, args.per_session, base=args.base), Stacks3
    )
    if len(data.y) == 0:
        print("no stacks rendered", file=sys.stderr)
        return 1
    # every fifth table is held out (the temperature is fitted there, its error printed)
    held = (data.session % 5) == 4
    tr, te = np.flatnonzero(~held), np.flatnonzero(held)
    print(f"{len(tr)} training stacks, {len(te)} held out", file=sys.stderr)
    net = train(data, tr, epochs=args.epochs)
    z = logits(net, data, te)
    temp = fit_temperature(z, data.y[te])
    zz = z / temp
    e = np.exp(zz - zz.max(axis=1, keepdims=True))
    _report(
        f"held-out CNN (T={temp:.2f})",
        (e / e.sum(axis=1, keepdims=True)).astype(np.float32),
        data.y[te],
    )
    _report("held-out feature model", data.feat_p[te], data.y[te])
    to_onnx(net, temp, args.out)
    print(
        f"saved {args.out.name} ({args.out.stat().st_size // 1024} KB): {len(data.y)} stacks, "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
