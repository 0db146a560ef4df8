"""Training of the raven-castle network on domain-randomised rendered tables (offline, seeded).

Reproduces ``companion/vision/castle_cnn.onnx`` (180 tables, seeds 33 000 000-33 000 179)::

    python -m companion.sim.train_castle_cnn --data castle.npz

(needs the ``train`` extra: ``torch`` and ``onnx``). The tables are drawn as the tower-count
network's (:func:`companion.sim.train_top_kind.training_table`: the Pi camera model at the
defaults or with one condition at a random severity, random tilts, lights, 2..6 players and in
a share of them a random set of the expansion's modules), 12 game frames and the setup frame
each. The detector reads each frame as at the table; the tier stacks
(:func:`~companion.vision.stack_cnn.tier_stacks`) of every space that is not an insert, the
castle's space included, are cut from the frame it read, through the pose it found, and
labelled with the renderer's truth: class 0 "no castle here", class ``1 + k`` "the raven
castle stands here with its base on tier ``k``" (on ``k`` towers). The hand-built stage's
call on the same space is kept beside it for the comparison. A small CNN
(:func:`build_network`) is fitted with PyTorch on four tables in five, a softmax temperature
on every fifth table (held out: its figures are printed), and the network is exported to ONNX
for ``cv2.dnn``.

Seeds: sessions ``TRAIN_SEED_BASE + i``, disjoint from the tests' (< 1000), the bench's
(``seed * 1000 + i`` with seed < 10 000), the feature height model's (from 10 000 000), the
top-kind model's (from 20 000 000), the tower-count network's (from 30 000 000), the wizard
network's (from 31 000 000) and the token network's (from 32 000 000).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.sim.train_stack_cnn import (
    _augment,
    fit_temperature,
    load_cached,
    logits,
    tables_read,
    to_onnx,
)
from companion.vision.castle_cnn import CLASSES, MODEL_PATH, WINDOW
from companion.vision.detector import INSERT_KINDS, DetectorConfig
from companion.vision.detector.heights import stack_heights
from companion.vision.stack_cnn import ROI_PX, tier_stacks

TRAIN_SEED_BASE = 33_000_000
"""First training session seed (see the module docstring for the other ranges)."""

MAX_TOWERS = 10


@dataclass
class Castles:
    """A labelled data set: ``x (N, K + 1, P, P, 3) uint8`` tier stacks, ``white (N, 3)`` the
    frame's white reference, ``y (N,) int32`` the class (0: no castle, ``1 + k``: the castle on
    tier ``k``), ``hand (N,) int32`` the hand-built stage's class on the same space, ``frame
    (N,) int32`` the frame each came from (numbered within its table), ``session (N,) int32``
    the table each came from."""

    x: NDArray[np.uint8]
    white: NDArray[np.float32]
    y: NDArray[np.int32]
    hand: NDArray[np.int32]
    frame: NDArray[np.int32]
    session: NDArray[np.int32]


def collect(
    sessions: int,
    per_session: int,
    base: int = TRAIN_SEED_BASE,
    module_share: float = 0.35,
    log: bool = True,
) -> Castles:
    """Render ``sessions`` random tables with ``per_session`` game frames each (and the setup
    frame) and cut the tier stack of every space but the inserts (see the module docstring)."""
    xs: list[NDArray[np.uint8]] = []
    ws: list[NDArray[np.float32]] = []
    ys: list[int] = []
    hs: list[int] = []
    fs: list[int] = []
    ss: list[int] = []
    # (the hand-built castle stage's call is kept for the comparison)
    hand = DetectorConfig(castle_method="hand")
    for si, read in tables_read(sessions, per_session, base, module_share, hand):
        for r in read:
            fp, rd, truth, track = r.fp, r.rd, r.truth, r.track
            spaces = list(track.spaces)
            insert = {s for s in spaces if track.track.kind(s) in INSERT_KINDS}
            keep = [(i, s) for i, s in enumerate(spaces) if s in truth.spaces and s not in insert]
            if not keep:
                continue
            st = stack_heights(rd, fp)
            xs.append(tier_stacks(fp.frame, fp.pose, track, [s for _, s in keep], MAX_TOWERS))
            ws.append(np.tile(np.asarray(fp.white, np.float32), (len(keep), 1)))
            for i, s in keep:
                sp = truth.spaces[s]
                ys.append(1 + min(sp.towers, MAX_TOWERS) if sp.castle else 0)
                hs.append(1 + min(st.towers_of[i], MAX_TOWERS) if st.castle_of[i] else 0)
            fs.extend([r.n_frame] * len(keep))
            ss.extend([si] * len(keep))
        if log:
            print(f"session {si + 1}/{sessions}: {len(ys)} stacks", file=sys.stderr)
    t = MAX_TOWERS + 1
    return Castles(
        np.concatenate(xs) if xs else np.zeros((0, t, ROI_PX, ROI_PX, 3), np.uint8),
        np.concatenate(ws) if ws else np.zeros((0, 3), np.float32),
        np.array(ys, np.int32),
        np.array(hs, np.int32),
        np.array(fs, np.int32),
        np.array(ss, np.int32),
    )


def build_network(max_towers: int = MAX_TOWERS) -> Any:
    """The CNN (PyTorch): tier stacks ``(N, 3 (K + 1), P, P)`` -> logits ``(N, K + 2)``:
    "no castle here" and "the castle's base on tier k" for k = 0..K.

    As the tower-count network: one small scorer, shared by every tier, scores "the castle's
    base is on tier k" from the crops of tiers ``k - 1 .. k + WINDOW - 2`` (zeros beyond the
    stack): the black body above its base looks alike at every height. "No castle" is a
    learnt constant (its logit against the tiers' scores).
    """
    import torch
    from torch import nn

    t = max_towers + 1
    w = WINDOW
    p = (ROI_PX + 7) // 8  # three stride-2 convolutions
    scorer = nn.Sequential(
        nn.Conv2d(3 * w, 16, 3, stride=2, padding=1),
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
            self.none = nn.Parameter(torch.zeros(1))

        def forward(self, x: Any) -> Any:
            s = x.reshape(-1, t, 3, ROI_PX, ROI_PX)
            # one zero tier below, WINDOW - 2 above (a constant Pad in the ONNX graph)
            padded = nn.functional.pad(s, (0, 0, 0, 0, 0, 0, 1, w - 2))
            win = torch.cat([padded[:, k : k + t] for k in range(w)], dim=2)
            out = self.scorer(win.reshape(-1, 3 * w, ROI_PX, ROI_PX)).reshape(-1, t)
            # (a constant broadcast over the batch: OpenCV's engine reads Mul and Add)
            none = out[:, :1] * 0.0 + self.none
            return torch.cat([none, out], dim=1)

    return Tiered()


def train(
    data: Castles,
    idx: NDArray[np.intp],
    epochs: int = 16,
    seed: int = 12345,
    batch: int = 128,
    lr: float = 2e-3,
    castle_weight: float = 2.0,
    neg_share: float = 0.35,
    log: bool = True,
) -> Any:
    """Fit the network on the examples ``idx`` of ``data`` (seeded AdamW, one-cycle schedule):
    each epoch on every castle's space and a random ``neg_share`` of the other spaces (one
    castle in some 16 spaces a frame); the castle's spaces weigh ``castle_weight`` in the
    loss."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = build_network()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    pos, neg = idx[data.y[idx] > 0], idx[data.y[idx] == 0]
    per_epoch = len(pos) + int(round(neg_share * len(neg)))
    steps = epochs * max(1, per_epoch // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps)
    weight = torch.ones(MAX_TOWERS + 2)
    weight[1:] = castle_weight
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight)
    step = 0
    for ep in range(epochs):
        net.train()
        some = rng.choice(neg, per_epoch - len(pos), replace=False) if len(neg) else neg
        order = rng.permutation(np.concatenate([pos, some]))
        total = 0.0
        for b in range(max(1, per_epoch // batch)):
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
                f"epoch {ep + 1}/{epochs}: loss {total / max(1, per_epoch // batch):.4f}",
                file=sys.stderr,
            )
    net.eval()
    return net


def frame_calls(
    p: NDArray[np.float32], frame: NDArray[np.int32]
) -> dict[int, tuple[int, int, float]]:
    """Per frame the network's call: ``{frame: (row, class, confidence)}``, the row of the
    space most likely to hold the castle (one castle: the spaces' odds
    ``p(castle) / p(none)`` normalised over the frame's spaces), its most probable tier's class
    and the probability of place and tier together."""
    out: dict[int, tuple[int, int, float]] = {}
    for f in np.unique(frame):
        rows = np.flatnonzero(frame == f)
        odds = (1.0 - p[rows, 0]) / np.maximum(p[rows, 0], 1e-9)
        place = odds / max(float(odds.sum()), 1e-12)
        b = int(np.argmax(place))
        r = rows[b]
        tier = p[r, 1:] / max(float(p[r, 1:].sum()), 1e-12)
        k = int(np.argmax(tier))
        out[int(f)] = (int(r), 1 + k, float(place[b] * tier[k]))
    return out


def _report(p: NDArray[np.float32], data: Castles, idx: NDArray[np.intp]) -> None:
    """Per frame: the network's and the hand-built stage's castle place and tier."""
    y, hand, frame = data.y[idx], data.hand[idx], data.frame[idx]
    calls = frame_calls(p, frame)
    n = right = hand_right = sure = sure_right = 0
    for f, (r, c, conf) in calls.items():
        rows = np.flatnonzero(frame == f)
        truth = rows[y[rows] > 0]
        if len(truth) != 1:
            continue
        n += 1
        ok = r == truth[0] and c == y[truth[0]]
        right += ok
        hrows = rows[hand[rows] > 0]
        hand_right += len(hrows) == 1 and hrows[0] == truth[0] and hand[hrows[0]] == y[truth[0]]
        if conf >= 0.9:
            sure += 1
            sure_right += ok
    print(
        f"held-out frames with the castle: {n}; network place and tier right {right} "
        f"({100 * right / max(n, 1):.2f} %), hand-built {hand_right} "
        f"({100 * hand_right / max(n, 1):.2f} %); network conf >= 0.9 on {sure}, "
        f"right there {sure_right}",
        file=sys.stderr,
    )


def main(argv: list[str] | None = None) -> int:
    """Train and save the raven-castle network (``python -m companion.sim.train_castle_cnn``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=180, help="random tables (default 180)")
    ap.add_argument(
        "--per-session", type=int, default=12, help="game frames per table (default 12)"
    )
    ap.add_argument("--base", type=int, default=TRAIN_SEED_BASE, help="first session seed")
    ap.add_argument("--epochs", type=int, default=16, help="training epochs (default 16)")
    ap.add_argument("--data", type=Path, nargs="*", default=[], help="caches of the stacks (.npz)")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    t0 = time.perf_counter()
    data = load_cached(
        args.data, lambda: collect(args.sessions, args.per_session, base=args.base), Castles
    )
    if len(data.y) == 0:
        print("no stacks rendered", file=sys.stderr)
        return 1
    # frames numbered over the tables
    data.frame = data.session * 1000 + data.frame
    held = (data.session % 5) == 4
    tr, te = np.flatnonzero(~held), np.flatnonzero(held)
    print(
        f"{len(tr)} training stacks ({int(np.sum(data.y[tr] > 0))} castles), {len(te)} held out",
        file=sys.stderr,
    )
    net = train(data, tr, epochs=args.epochs)
    z = logits(net, data, te, len(CLASSES))
    temp = fit_temperature(z, data.y[te])
    zz = z / temp
    e = np.exp(zz - zz.max(axis=1, keepdims=True))
    p = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    print(f"temperature {temp:.2f}", file=sys.stderr)
    _report(p, data, te)
    to_onnx(net, temp, args.out)
    print(
        f"saved {args.out.name} ({args.out.stat().st_size // 1024} KB): {len(data.y)} stacks, "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


assert len(CLASSES) == MAX_TOWERS + 2

if __name__ == "__main__":
    sys.exit(main())
