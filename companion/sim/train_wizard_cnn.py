"""Training of the wizard network on domain-randomised rendered tables (offline, seeded).

Reproduces ``companion/vision/wizard_cnn.onnx`` (the first command renders the cache
``tops.npz`` and trains a first model on it; the second renders ``tops-mod.npz``, tables all
with modules, and trains a model on both caches; the shipped model keeps the convolutions of
the network before the colour areas' measurements were an input, ``tops_only.onnx``, and fits
the layers after them with the measurements, ``--init``; ``docs/vision.md``, "Wizards", says
where that network comes from and why)::

    python -m companion.sim.train_wizard_cnn --sessions 160 --per-session 8 --data tops.npz
    python -m companion.sim.train_wizard_cnn --sessions 110 --per-session 8 --base 31000200 \
        --module-share 1 --data tops-mod.npz tops.npz
    python -m companion.sim.train_wizard_cnn --data tops-mod.npz tops.npz \
        --init tops_only.onnx --epochs 30

(needs the ``train`` extra: ``torch`` and ``onnx``). The tables are rendered as for the
tower-count network (:mod:`companion.sim.train_stack_cnn`: the Pi camera model at its defaults
or with one random condition at a random severity, random tilts, lights, 2..6 players, in a
share of the tables a random set of the expansion's modules). The detector reads each frame as
at the table, its wizards by the colour areas; the top-surface stacks
(:func:`~companion.vision.wizard_cnn.top_stacks`) of every space that is neither under the
raven castle nor a web are cut from the frame it read, through the pose it found, at the
space's true top surface, kept with what the colour areas measured on that top in the same
reading (``SpaceDetail.wizard_cues``, :func:`~companion.vision.wizard_cnn.hand_cues`: exactly
the network's second input at the table) and labelled with the renderer's true wizards. A small
CNN that joins those measurements to its pooled features (so it learns where the colour areas
are to be trusted) is fitted with PyTorch on four fifths of the tables (by table), a softmax
temperature on the other fifth (held out: its figures and the colour areas' on the same tops
are printed, also on the tops the two count differently), and the network is exported to ONNX
for ``cv2.dnn`` with two inputs.

Seeds: tables ``TRAIN_SEED_BASE + i``, disjoint from the tests' (< 1000), the bench's
(``seed * 1000 + i`` with seed < 10 000) and the other models' (10 000 000: feature height
model, 20 000 000: top-kind model, 30 000 000: tower-count network).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules import observe
from companion.rules.observation import COLOURS
from companion.sim.render.camera_model import play_setup
from companion.sim.scenes import crowded, random_game_state
from companion.sim.train_stack_cnn import _augment, _probes_seen, load_cached
from companion.sim.train_top_kind import _shoot, training_table
from companion.vision.detector import Detector, DetectorConfig
from companion.vision.detector.frame import FrameProbes, Reader
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ProfileError
from companion.vision.profile_setup import build_profile
from companion.vision.stack_cnn import network_input
from companion.vision.wizard_cnn import (
    MAX_PER_COLOUR,
    MODEL_PATH,
    ROI_PX,
    SLABS_MM,
    choose_counts,
    n_channels,
    n_cues,
    n_outputs,
    top_stacks,
)

TRAIN_SEED_BASE = 31_000_000
"""First training table seed (bench: ``seed * 1000 + i`` with seed < 10 000; the other models
train from 10 000 000, 20 000 000 and 30 000 000)."""

C = len(COLOURS)
K = MAX_PER_COLOUR + 1


@dataclass
class Tops:
    """A labelled data set: ``x (N, T, P, P, 3) uint8`` top-surface stacks, ``white (N, 3)``
    the frame's white reference, ``y (N, 6) int32`` true wizards per colour (of
    :data:`~companion.rules.observation.COLOURS`), ``hand (N, 6) int32`` the hand-built stage's
    reading of the same top (-1: not read), ``play (N, 6) bool`` the colours in the game,
    ``session (N,) int32`` the table each came from, ``cues (N, n_cues()) float32`` what the
    colour areas measured on that top in the frame read
    (:func:`~companion.vision.wizard_cnn.hand_cues`, as the detector passes them)."""

    x: NDArray[np.uint8]
    white: NDArray[np.float32]
    y: NDArray[np.int32]
    hand: NDArray[np.int32]
    play: NDArray[np.bool_]
    session: NDArray[np.int32]
    cues: NDArray[np.float32]


def _counts(wizards: dict[str, int]) -> list[int]:
    return [min(int(wizards.get(c, 0)), MAX_PER_COLOUR) for c in COLOURS]


def collect(
    sessions: int,
    per_session: int,
    base: int = TRAIN_SEED_BASE,
    module_share: float = 0.35,
    log: bool = True,
    crowd: float = 0.0,
) -> Tops:
    """Render ``sessions`` random tables with ``per_session`` game frames each (and the setup
    frame) and cut the top-surface stack of every labelled space (see the module docstring);
    ``crowd`` of the game frames with wizards of one colour gathered on a few tops
    (:func:`~companion.sim.scenes.crowded`, from a generator of their own, so that 0 renders
    the tables it always did)."""
    geometry = BoardGeometry.default()
    xs: list[NDArray[np.uint8]] = []
    ws: list[NDArray[np.float32]] = []
    ys: list[list[int]] = []
    hs: list[list[int]] = []
    ps: list[list[bool]] = []
    ss: list[int] = []
    cs: list[tuple[float, ...]] = []
    for si in range(sessions):
        seed = base + si
        tt = training_table(seed, si, geometry, module_share)
        nrng, prng, crng, effects, table = tt.nrng, tt.prng, tt.crng, tt.effects, tt.table
        config, setup_state = tt.config, tt.setup_state
        track, setup_light = tt.track, tt.setup_light
        players, modules = config.player_count, config.modules
        colours = list(config.colours or ())
        try:
            setup_frame, setup_truth = _shoot(
                setup_state, setup_light, "setup", nrng, crng, effects
            )
            profile = build_profile(
                setup_frame,
                table.camera,
                track,
                colours,
                expected=observe(setup_state) if modules else None,
            )
        except (ProfileError, cv2.error, ValueError, FloatingPointError):
            continue
        # the colour areas read every top (the network's counts would replace theirs in
        # ``reading``); their measurements are the same with either method
        detector = Detector(
            table.camera, track, profile, config=DetectorConfig(wizard_method="hand")
        )
        play = play_setup(table, effects, crng)
        frames = [(setup_frame, setup_truth)]
        grng = random.Random(seed * 7919 + 17)
        for _ in range(per_session):
            state = random_game_state(prng, players, modules=modules)
            if crowd and grng.random() < crowd:
                state = crowded(state, grng)
            try:
                frames.append(_shoot(state, play, "play", nrng, crng, effects))
            except (cv2.error, ValueError, FloatingPointError):
                continue
        in_play = [c in colours for c in COLOURS]
        for frame, truth in frames:
            seen: list[tuple[FrameProbes, Reader]] = []
            with _probes_seen(seen):
                det = detector.detect(frame)
            if not seen:
                continue
            fp, _ = seen[-1]
            keep = [
                s
                for s in track.spaces
                if s in truth.spaces and not truth.spaces[s].castle and truth.spaces[s].top != "web"
            ]
            if not keep:
                continue
            tiers = [truth.spaces[s].towers for s in keep]
            xs.append(top_stacks(fp.frame, fp.pose, track, keep, tiers))
            ws.append(np.tile(np.asarray(fp.white, np.float32), (len(keep), 1)))
            for s in keep:
                ys.append(_counts(dict(truth.spaces[s].wizards)))
                got = det.reading.spaces.get(s) if det.reading is not None else None
                hs.append(_counts(dict(got.wizards)) if got is not None else [-1] * C)
                ps.append(in_play)
                ss.append(si)
                d = det.details.get(s)
                cs.append(d.wizard_cues if d is not None and d.wizard_cues else (0.0,) * n_cues())
        if log:
            print(f"table {si + 1}/{sessions}: {len(ys)} tops", file=sys.stderr)
    t = len(SLABS_MM)
    return Tops(
        np.concatenate(xs) if xs else np.zeros((0, t, ROI_PX, ROI_PX, 3), np.uint8),
        np.concatenate(ws) if ws else np.zeros((0, 3), np.float32),
        np.array(ys, np.int32).reshape(-1, C),
        np.array(hs, np.int32).reshape(-1, C),
        np.array(ps, bool).reshape(-1, C),
        np.array(ss, np.int32),
        np.array(cs, np.float32).reshape(-1, n_cues()),
    )


def build_network() -> Any:
    """The CNN (PyTorch): top-surface stacks ``(N, 3 T, P, P)`` and the colour areas'
    measurements ``(N, n_cues())`` -> logits ``(N, 6 (M + 1))`` (colour-major). Five small
    convolutions and a global average (a count is the sum of what is seen wherever it
    stands); the measurements are joined to the pooled features before two linear layers, so
    the network learns where the colour areas are to be trusted."""
    import torch
    from torch import nn

    def block(a: int, b: int, stride: int) -> list[Any]:
        return [nn.Conv2d(a, b, 3, stride=stride, padding=1), nn.BatchNorm2d(b), nn.ReLU()]

    class WizardNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                *block(n_channels(), 16, 1),
                *block(16, 32, 2),
                *block(32, 32, 1),
                *block(32, 64, 2),
                *block(64, 64, 1),
                nn.AdaptiveAvgPool2d(1),
                nn.Flatten(),
            )
            self.head = nn.Sequential(
                nn.Linear(64 + n_cues(), 64),
                nn.ReLU(),
                nn.Dropout(0.1),
                nn.Linear(64, n_outputs()),
            )

        def forward(self, x: Any, cues: Any) -> Any:
            return self.head(torch.cat([self.features(x), cues], dim=1))

    return WizardNet()


def _loss(z: Any, y: Any) -> Any:
    import torch

    return torch.nn.functional.cross_entropy(z.reshape(-1, K), y.reshape(-1))


def train(
    data: Tops,
    idx: NDArray[np.intp],
    epochs: int = 15,
    seed: int = 12345,
    batch: int = 128,
    lr: float = 3e-3,
    log: bool = True,
) -> Any:
    """Fit the network on the examples ``idx`` of ``data`` (seeded AdamW, one-cycle)."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = build_network()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    per = max(1, len(idx) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * per)
    step = 0
    for ep in range(epochs):
        net.train()
        order = rng.permutation(idx)
        total = 0.0
        for b in range(per):
            j = np.sort(order[b * batch : (b + 1) * batch])
            if len(j) < 2:
                continue
            xb = torch.from_numpy(_augment(data.x[j], data.white[j], rng))
            cb = torch.from_numpy(data.cues[j])
            yb = torch.from_numpy(data.y[j].astype(np.int64))
            opt.zero_grad()
            loss = _loss(net(xb, cb), yb)
            loss.backward()
            opt.step()
            if step < epochs * per - 1:
                sched.step()
            step += 1
            total += loss.item()
        if log:
            print(f"epoch {ep + 1}/{epochs}: loss {total / per:.4f}", file=sys.stderr)
    net.eval()
    return net


def load_tops_network(net: Any, path: Path) -> None:
    """Start ``net`` (:func:`build_network`) as the wizard ONNX ``path`` that takes the tops
    only (the network before the colour areas' measurements: its batch norms folded into the
    convolutions, its temperature after the last layer): its convolutions (the batch norms made
    the identity) and its two linear layers, with the measurements' weights at zero.

    :raises ValueError: for an ONNX of another layout.
    """
    import onnx
    import torch
    from onnx import numpy_helper
    from torch import nn

    graph = onnx.load(str(path)).graph
    w = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    gemms = [n for n in graph.node if n.op_type == "Gemm"]
    mine = [m for m in net.features if isinstance(m, nn.Conv2d)]
    norms = [m for m in net.features if isinstance(m, nn.BatchNorm2d)]
    lin = [m for m in net.head if isinstance(m, nn.Linear)]
    if len(convs) != len(mine) or len(gemms) != len(lin):
        raise ValueError(f"{path.name}: not a wizard network of the tops only")
    with torch.no_grad():
        for node, conv, norm in zip(convs, mine, norms, strict=True):
            bias, mean, var = conv.bias, norm.running_mean, norm.running_var
            if bias is None or mean is None or var is None:
                raise ValueError("the network's convolutions need biases and running statistics")
            conv.weight.copy_(torch.tensor(w[node.input[1]]))
            bias.copy_(torch.tensor(w[node.input[2]]))
            norm.weight.fill_(1.0)
            norm.bias.zero_()
            mean.zero_()
            var.fill_(1.0 - norm.eps)
        first = torch.tensor(w[gemms[0].input[1]])
        lin[0].weight.zero_()
        lin[0].weight[:, : first.shape[1]].copy_(first)
        lin[0].bias.copy_(torch.tensor(w[gemms[0].input[2]]))
        lin[1].weight.copy_(torch.tensor(w[gemms[1].input[1]]))
        lin[1].bias.copy_(torch.tensor(w[gemms[1].input[2]]))


def fit_head(
    net: Any,
    data: Tops,
    idx: NDArray[np.intp],
    epochs: int = 30,
    seed: int = 12345,
    batch: int = 256,
    lr: float = 1e-3,
    log: bool = True,
) -> Any:
    """Fit the linear layers of ``net`` (its convolutions kept, e.g. from
    :func:`load_tops_network`) on the examples ``idx`` of ``data``: the pooled features of
    every top are computed once, then the layers after them are fitted (seeded AdamW,
    one-cycle)."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net.eval()
    with torch.no_grad():
        feats = torch.cat(
            [
                net.features(torch.from_numpy(network_input(data.x[j], data.white[j])))
                for j in (idx[b : b + 512] for b in range(0, len(idx), 512))
            ]
        )
    for p in net.features.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(net.head.parameters(), lr=lr, weight_decay=1e-4)
    per = max(1, len(idx) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * per)
    cues = torch.from_numpy(data.cues[idx])
    y = torch.from_numpy(data.y[idx].astype(np.int64))
    for ep in range(epochs):
        net.head.train()
        order = torch.from_numpy(rng.permutation(len(idx)))
        total = 0.0
        for b in range(per):
            j = order[b * batch : (b + 1) * batch]
            opt.zero_grad()
            loss = _loss(net.head(torch.cat([feats[j], cues[j]], dim=1)), y[j])
            loss.backward()
            opt.step()
            if ep * per + b < epochs * per - 1:
                sched.step()
            total += loss.item()
        if log:
            print(f"epoch {ep + 1}/{epochs}: loss {total / per:.4f}", file=sys.stderr)
    net.eval()
    return net


def logits(net: Any, data: Tops, idx: NDArray[np.intp]) -> NDArray[np.float32]:
    """``(len(idx), 6, M + 1)`` logits of the network on ``data``'s examples ``idx``."""
    import torch

    out = []
    with torch.no_grad():
        for b in range(0, len(idx), 512):
            j = idx[b : b + 512]
            x = torch.from_numpy(network_input(data.x[j], data.white[j]))
            out.append(net(x, torch.from_numpy(data.cues[j])).numpy())
    z = np.concatenate(out) if out else np.zeros((0, n_outputs()), np.float32)
    return z.reshape(-1, C, K)


def softmax(z: NDArray[Any], temperature: float) -> NDArray[np.float32]:
    """Per-colour softmax of ``(N, 6, M + 1)`` logits at ``temperature``."""
    zz = np.asarray(z, np.float64) / temperature
    e = np.exp(zz - zz.max(axis=2, keepdims=True))
    out: NDArray[np.float32] = (e / e.sum(axis=2, keepdims=True)).astype(np.float32)
    return out


def fit_temperature(z: NDArray[np.float32], y: NDArray[np.int32]) -> float:
    """The softmax temperature (0.5..5) that minimises the held-out negative log-likelihood of
    every colour's count."""
    best, best_t = np.inf, 1.0
    n = np.arange(len(y))[:, None]
    c = np.arange(C)[None, :]
    for t in np.arange(0.5, 5.0, 0.05):
        p = softmax(z, float(t))
        nll = -float(np.mean(np.log(np.maximum(p[n, c, y], 1e-12))))
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


def to_onnx(net: Any, temperature: float, path: Path) -> None:
    """Export ``net`` with the temperature and the per-colour softmax folded in: inputs
    ``tops (N, 3 T, P, P) float32`` and ``cues (N, n_cues()) float32``, output
    ``probabilities (N, 6 (M + 1))``."""
    import torch

    class Calibrated(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: Any, cues: Any) -> Any:
            z = self.net(x, cues).reshape(-1, C, K) / temperature
            return torch.softmax(z, dim=2).reshape(-1, C * K)

    model = Calibrated().eval()
    dummy = (torch.zeros(2, n_channels(), ROI_PX, ROI_PX), torch.zeros(2, n_cues()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            dummy,
            str(path),
            input_names=["tops", "cues"],
            output_names=["probabilities"],
            dynamic_axes={"tops": {0: "N"}, "cues": {0: "N"}, "probabilities": {0: "N"}},
            opset_version=13,
            dynamo=False,
        )


def report(name: str, p: NDArray[np.float32], data: Tops, idx: NDArray[np.intp]) -> None:
    """Print the per-top error of probabilities ``p`` ``(len(idx), 6, M + 1)`` on ``data``'s
    examples ``idx`` (counts chosen among the colours in the game) and how often a top read
    with 0.97 or more is right, beside the hand-built stage's error on the same tops; then
    the same on the tops the hand-built stage counted otherwise."""
    wrong = np.zeros(len(idx), bool)
    differ = np.zeros(len(idx), bool)
    sure = np.zeros(len(idx))
    hand = data.hand[idx]
    for r, j in enumerate(idx):
        colours = [c for c, on in zip(COLOURS, data.play[j], strict=True) if on]
        got, sure[r] = choose_counts(p[r], colours)
        wrong[r] = _counts(got) != data.y[j].tolist()
        differ[r] = hand[r, 0] >= 0 and _counts(got) != hand[r].tolist()
    read = hand[:, 0] >= 0
    hand_wrong = np.any(hand != data.y[idx], axis=1) & read
    hi = sure >= 0.97
    print(
        f"{name}: wizards wrong on {100 * wrong.mean():.2f} % of {len(idx)} tops (hand-built "
        f"stage: {100 * hand_wrong.sum() / max(read.sum(), 1):.2f} %); sure >= 0.97 on "
        f"{100 * hi.mean():.1f} %, right there {100 * np.mean(~wrong[hi]):.3f} %",
        file=sys.stderr,
    )
    d, dh = differ, differ & hi
    print(
        f"  the {int(d.sum())} tops the hand-built stage counted otherwise: right "
        f"{100 * np.mean(~wrong[d]) if d.any() else 0:.1f} % (the hand-built stage "
        f"{100 * np.mean(~hand_wrong[d]) if d.any() else 0:.1f} %); sure >= 0.97 on "
        f"{int(dh.sum())}, right there {100 * np.mean(~wrong[dh]) if dh.any() else 0:.1f} %",
        file=sys.stderr,
    )


def load(
    paths: list[Path],
    sessions: int,
    per_session: int,
    base: int,
    module_share: float = 0.35,
    crowd: float = 0.0,
) -> Tops:
    """The wizard data sets of the caches ``paths``
    (:func:`~companion.sim.train_stack_cnn.load_cached`; a missing first cache is rendered
    with ``sessions`` tables from ``base``, ``module_share`` of them with modules and
    ``crowd`` of their game frames with gathered wizards, :func:`collect`)."""
    return load_cached(
        paths,
        lambda: collect(sessions, per_session, base=base, module_share=module_share, crowd=crowd),
        Tops,
    )


def main(argv: list[str] | None = None) -> int:
    """Train and save the wizard network (``python -m companion.sim.train_wizard_cnn``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=160, help="random tables (default 160)")
    ap.add_argument("--per-session", type=int, default=8, help="game frames per table (default 8)")
    ap.add_argument("--base", type=int, default=TRAIN_SEED_BASE, help="first table seed")
    ap.add_argument(
        "--module-share",
        type=float,
        default=0.35,
        help="share of the rendered tables with a random set of modules (default 0.35)",
    )
    ap.add_argument(
        "--crowd",
        type=float,
        default=0.0,
        help="share of the rendered game frames with wizards of one colour gathered on a few "
        "tops (default 0)",
    )
    ap.add_argument("--epochs", type=int, default=15, help="training epochs (default 15)")
    ap.add_argument("--data", type=Path, nargs="*", default=[], help="caches of the tops (.npz)")
    ap.add_argument(
        "--init",
        type=Path,
        default=None,
        help="a wizard ONNX of the tops only: its convolutions are kept and the linear layers "
        "fitted with the colour areas' measurements (--epochs of those layers)",
    )
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args(argv)
    if not 0.0 <= args.module_share <= 1.0:
        print("--module-share must be within 0..1", file=sys.stderr)
        return 2
    if not 0.0 <= args.crowd <= 1.0:
        print("--crowd must be within 0..1", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    t0 = time.perf_counter()
    data = load(
        args.data, args.sessions, args.per_session, args.base, args.module_share, args.crowd
    )
    if len(data.y) == 0:
        print("no tops rendered", file=sys.stderr)
        return 1
    # every fifth table is held out (the temperature is fitted there, its figures printed)
    held = (data.session % 5) == 4
    tr, te = np.flatnonzero(~held), np.flatnonzero(held)
    print(f"{len(tr)} training tops, {len(te)} held out", file=sys.stderr)
    if args.init is not None:
        net = build_network()
        load_tops_network(net, args.init)
        net = fit_head(net, data, tr, epochs=args.epochs)
    else:
        net = train(data, tr, epochs=args.epochs)
    z = logits(net, data, te)
    temp = fit_temperature(z, data.y[te])
    report(f"held-out CNN (T={temp:.2f})", softmax(z, temp), data, te)
    to_onnx(net, temp, args.out)
    print(
        f"saved {args.out.name} ({args.out.stat().st_size // 1024} KB): {len(data.y)} tops, "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
