"""Training of the token network on domain-randomised rendered tables (offline, seeded).

Reproduces ``companion/vision/token_cnn.onnx`` (220 tables in two caches; the first command
renders and caches tables 0-109 and trains a first model, the second renders tables 110-219 and
trains the shipped one on both)::

    python -m companion.sim.train_token_cnn --sessions 110 --data tokens-a.npz
    python -m companion.sim.train_token_cnn --sessions 110 --base 32000110 \
        --data tokens-b.npz tokens-a.npz

(needs the ``train`` extra: ``torch`` and ``onnx``; a missing first cache is rendered). The
tables are rendered as for the wizard network (:mod:`companion.sim.train_wizard_cnn`: the Pi
camera model at its defaults or with one random condition at a random severity, random tilts,
lights, 2..6 players), every one with the witch and the raven (R-MOD-WITCH-1, R-MOD-RAVEN-1)
and a random set of the other modules. The detector reads each frame as at the table; the
top-surface stacks (:func:`~companion.vision.wizard_cnn.top_stacks`) of every space that is
neither under the raven castle nor a web are cut from the frame it read, through the pose it
found, at the space's true top surface, and labelled with the renderer's truth: is the witch,
is the raven token on that top. A small CNN is fitted with PyTorch on the first four fifths of
the tables (by table), a softmax temperature on the last fifth (held out: its figures and the
hand-built stage's on the same tops are printed), and the network is exported to ONNX for
``cv2.dnn``.

Seeds: tables ``TRAIN_SEED_BASE + i``, disjoint from the tests' (< 1000), the bench's
(``seed * 1000 + i`` with seed < 10 000) and the other models' (10 000 000: feature height
model, 20 000 000: top-kind model, 30 000 000: tower-count network, 31 000 000: wizard network).
"""

from __future__ import annotations

import argparse
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
from companion.sim.render.camera_model import play_setup
from companion.sim.scenes import random_game_state
from companion.sim.train_stack_cnn import _augment, _probes_seen, load_cached
from companion.sim.train_top_kind import _shoot, training_table
from companion.sim.train_wizard_cnn import softmax
from companion.vision.detector import Detector, DetectorConfig
from companion.vision.detector.frame import FrameProbes, Reader
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ProfileError
from companion.vision.profile_setup import build_profile
from companion.vision.stack_cnn import network_input
from companion.vision.token_cnn import MODEL_PATH, TOKENS
from companion.vision.wizard_cnn import ROI_PX, SLABS_MM, n_channels, top_stacks

TRAIN_SEED_BASE = 32_000_000
"""First training table seed (bench: ``seed * 1000 + i`` with seed < 10 000; the other models
train from 10 000 000, 20 000 000, 30 000 000 and 31 000 000)."""

T = len(TOKENS)
H = T + 1
"""Heads: one per token, and crest or plain for a roof (read where a token hides its middle)."""
ROOFS = ("crest", "plain")


@dataclass
class TokenTops:
    """A labelled data set: ``x (N, S, P, P, 3) uint8`` top-surface stacks, ``white (N, 3)``
    the frame's white reference, ``y (N, 2) int32`` the witch and the raven token on the top
    (0/1, :data:`~companion.vision.token_cnn.TOKENS`), ``hand (N, 2) int32`` the detector's
    reading of the same top (-1: not read), ``play (N, 2) bool`` the tokens in the game,
    ``session (N,) int32`` the table each came from, ``roof (N,) int32`` the top's true kind
    (0: no crest or plain roof, 1: crest roof, 2: plain roof)."""

    x: NDArray[np.uint8]
    white: NDArray[np.float32]
    y: NDArray[np.int32]
    hand: NDArray[np.int32]
    play: NDArray[np.bool_]
    session: NDArray[np.int32]
    roof: NDArray[np.int32]


def collect(
    sessions: int, per_session: int, base: int = TRAIN_SEED_BASE, log: bool = True
) -> TokenTops:
    """Render ``sessions`` random tables with the witch and the raven and ``per_session`` game
    frames each (and the setup frame) and cut the top-surface stack of every labelled space
    (see the module docstring)."""
    geometry = BoardGeometry.default()
    xs: list[NDArray[np.uint8]] = []
    ws: list[NDArray[np.float32]] = []
    ys: list[list[int]] = []
    hs: list[list[int]] = []
    ps: list[list[bool]] = []
    ss: list[int] = []
    rs: list[int] = []
    for si in range(sessions):
        tt = training_table(base + si, si, geometry, 1.0, always=frozenset(TOKENS))
        nrng, prng, crng, effects, table = tt.nrng, tt.prng, tt.crng, tt.effects, tt.table
        config, setup_state, track = tt.config, tt.setup_state, tt.track
        players, modules = config.player_count, config.modules
        try:
            setup_frame, setup_truth = _shoot(
                setup_state, tt.setup_light, "setup", nrng, crng, effects
            )
            profile = build_profile(
                setup_frame,
                table.camera,
                track,
                list(config.colours or ()),
                expected=observe(setup_state),
            )
        except (ProfileError, cv2.error, ValueError, FloatingPointError):
            continue
        # (the hand-built token stage: the network is what is being trained)
        detector = Detector(
            table.camera, track, profile, config=DetectorConfig(token_method="hand")
        )
        play = play_setup(table, effects, crng)
        frames = [(setup_frame, setup_truth)]
        for _ in range(per_session):
            state = random_game_state(prng, players, modules=modules)
            try:
                frames.append(_shoot(state, play, "play", nrng, crng, effects))
            except (cv2.error, ValueError, FloatingPointError):
                continue
        in_play = [t in modules for t in TOKENS]
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
                t = truth.spaces[s]
                ys.append([int(t.witch), int(t.raven)])
                got = det.reading.spaces.get(s) if det.reading is not None else None
                hs.append([int(got.witch), int(got.raven)] if got is not None else [-1, -1])
                ps.append(in_play)
                ss.append(si)
                rs.append(ROOFS.index(t.top) + 1 if t.top in ROOFS else 0)
        if log:
            print(f"table {si + 1}/{sessions}: {len(ys)} tops", file=sys.stderr)
    s = len(SLABS_MM)
    return TokenTops(
        np.concatenate(xs) if xs else np.zeros((0, s, ROI_PX, ROI_PX, 3), np.uint8),
        np.concatenate(ws) if ws else np.zeros((0, 3), np.float32),
        np.array(ys, np.int32).reshape(-1, T),
        np.array(hs, np.int32).reshape(-1, T),
        np.array(ps, bool).reshape(-1, T),
        np.array(ss, np.int32),
        np.array(rs, np.int32),
    )


def build_network() -> Any:
    """The CNN (PyTorch): top-surface stacks ``(N, 3 S, P, P)`` -> logits ``(N, 2 H)``
    (head-major: per token absent / present, then for a roof plain / crest). Four small
    convolutions, a global maximum (a token is somewhere on the top) and one linear layer."""
    from torch import nn

    def block(a: int, b: int, stride: int) -> list[Any]:
        return [nn.Conv2d(a, b, 3, stride=stride, padding=1), nn.BatchNorm2d(b), nn.ReLU()]

    return nn.Sequential(
        *block(n_channels(), 16, 1),
        *block(16, 24, 2),
        *block(24, 32, 1),
        *block(32, 32, 2),
        nn.AdaptiveMaxPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.1),
        nn.Linear(32, 2 * H),
    )


def targets(data: TokenTops, j: NDArray[np.intp]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """The labels ``(len(j), H)`` of the heads (the tokens: present; the roof: crest) and which
    of them count (a token in the game; the roof head on crest and plain roofs only)."""
    y = np.zeros((len(j), H), np.int64)
    y[:, :T] = data.y[j]
    y[:, T] = data.roof[j] == 1
    mask = np.zeros((len(j), H), bool)
    mask[:, :T] = data.play[j]
    mask[:, T] = data.roof[j] > 0
    return y, mask


def train(
    data: TokenTops,
    idx: NDArray[np.intp],
    epochs: int = 12,
    seed: int = 12345,
    batch: int = 128,
    lr: float = 3e-3,
    log: bool = True,
) -> Any:
    """Fit the network on the examples ``idx`` of ``data`` (seeded AdamW, one-cycle; a head
    that does not count, :func:`targets`, adds no loss)."""
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
            y, m = targets(data, j)
            yb = torch.from_numpy(y).reshape(-1)
            mask = torch.from_numpy(m.astype(np.float32)).reshape(-1)
            opt.zero_grad()
            z = net(xb).reshape(-1, 2)
            per_item = torch.nn.functional.cross_entropy(z, yb, reduction="none")
            loss: Any = (per_item * mask).sum() / mask.sum().clamp(min=1.0)
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


def logits(net: Any, data: TokenTops, idx: NDArray[np.intp]) -> NDArray[np.float32]:
    """``(len(idx), H, 2)`` logits of the network on ``data``'s examples ``idx``."""
    import torch

    out = []
    with torch.no_grad():
        for b in range(0, len(idx), 512):
            j = idx[b : b + 512]
            out.append(net(torch.from_numpy(network_input(data.x[j], data.white[j]))).numpy())
    z = np.concatenate(out) if out else np.zeros((0, 2 * H), np.float32)
    return z.reshape(-1, H, 2)


def calibrated(z: NDArray[Any], temperatures: NDArray[Any]) -> NDArray[np.float32]:
    """Per-head softmax of ``(N, H, 2)`` logits, head ``h`` at ``temperatures[h]``."""
    zz = np.asarray(z, np.float64) / np.asarray(temperatures, np.float64)[None, :, None]
    e = np.exp(zz - zz.max(axis=2, keepdims=True))
    out: NDArray[np.float32] = (e / e.sum(axis=2, keepdims=True)).astype(np.float32)
    return out


def fit_temperatures(
    z: NDArray[np.float32], data: TokenTops, idx: NDArray[np.intp]
) -> NDArray[Any]:
    """The softmax temperatures (0.5..5; one shared by the tokens, one for the roof) that
    minimise the held-out negative log-likelihood of the heads that count."""
    y, mask = targets(data, idx)
    n = np.arange(len(y))[:, None]
    c = np.arange(H)[None, :]
    out = np.ones(H)
    for heads in (slice(0, T), slice(T, H)):
        best = np.inf
        for t in np.arange(0.5, 5.0, 0.05):
            p = softmax(z, float(t))
            lp = np.log(np.maximum(p[n, c, y], 1e-12))[:, heads][mask[:, heads]]
            nll = -float(np.mean(lp)) if lp.size else 0.0
            if nll < best:
                best = nll
                out[heads] = float(t)
    return out


def to_onnx(net: Any, temperatures: NDArray[Any], path: Path) -> None:
    """Export ``net`` with the temperatures and the per-head softmax folded in: input
    ``tops (N, 3 S, P, P) float32``, output ``probabilities (N, 2 H)``."""
    import torch

    temps = torch.tensor(np.asarray(temperatures, np.float32)).reshape(1, H, 1)

    class Calibrated(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net
            self.register_buffer("temps", temps)

        def forward(self, x: Any) -> Any:
            z = self.net(x).reshape(-1, H, 2) / self.temps
            return torch.softmax(z, dim=2).reshape(-1, H * 2)

    model = Calibrated().eval()
    dummy = torch.zeros(2, n_channels(), ROI_PX, ROI_PX)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            (dummy,),
            str(path),
            input_names=["tops"],
            output_names=["probabilities"],
            dynamic_axes={"tops": {0: "N"}, "probabilities": {0: "N"}},
            opset_version=13,
            dynamo=False,
        )


def report(name: str, p: NDArray[np.float32], data: TokenTops, idx: NDArray[np.intp]) -> None:
    """Print, per token in the game, how often probabilities ``p`` ``(len(idx), H, 2)`` read
    ``data``'s tops ``idx`` wrong (at 0.5), how often the hand-built stage did, and how
    often a top read with 0.97 or more is right; then the same for crest or plain on the
    roofs, all of them and those under a token."""
    for k, tok in enumerate(TOKENS):
        on = data.play[idx, k]
        if not on.any():
            continue
        y = data.y[idx, k][on]
        pk = p[on, k, 1]
        wrong = (pk >= 0.5) != (y == 1)
        sure = np.maximum(pk, 1 - pk) >= 0.97
        hand = data.hand[idx, k][on]
        read = hand >= 0
        hw = (hand != y) & read
        print(
            f"{name} {tok}: wrong on {100 * wrong.mean():.3f} % of {len(y)} tops "
            f"({int(wrong[y == 1].sum())} of {int((y == 1).sum())} present missed; hand-built "
            f"stage {100 * hw.sum() / max(read.sum(), 1):.3f} %); sure >= 0.97 on "
            f"{100 * sure.mean():.1f} %, right there {100 * np.mean(~wrong[sure]):.3f} %",
            file=sys.stderr,
        )
    roof = data.roof[idx] > 0
    under = roof & data.y[idx].any(axis=1)
    for what, on in (("roofs", roof), ("roofs under a token", under)):
        if not on.any():
            continue
        pc = p[on, T, 1]
        wrong = (pc >= 0.5) != (data.roof[idx][on] == 1)
        sure = np.maximum(pc, 1 - pc) >= 0.97
        print(
            f"{name} crest or plain, {what}: wrong on {100 * wrong.mean():.3f} % of "
            f"{int(on.sum())}; sure >= 0.97 on {100 * sure.mean():.1f} %, right there "
            f"{100 * np.mean(~wrong[sure]):.3f} %",
            file=sys.stderr,
        )


def load(paths: list[Path], sessions: int, per_session: int, base: int) -> TokenTops:
    """The token data sets of the caches ``paths`` (:func:`~companion.sim.train_stack_cnn.
    load_cached`)."""
    return load_cached(paths, lambda: collect(sessions, per_session, base=base), TokenTops)


def main(argv: list[str] | None = None) -> int:
    """Train and save the token network (``python -m companion.sim.train_token_cnn``)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=110, help="random tables (default 110)")
    ap.add_argument("--per-session", type=int, default=8, help="game frames per table (default 8)")
    ap.add_argument("--base", type=int, default=TRAIN_SEED_BASE, help="first table seed")
    ap.add_argument("--epochs", type=int, default=12, help="training epochs (default 12)")
    ap.add_argument("--data", type=Path, nargs="*", default=[], help="caches of the tops (.npz)")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    t0 = time.perf_counter()
    data = load(args.data, args.sessions, args.per_session, args.base)
    if len(data.y) == 0:
        print("no tops rendered", file=sys.stderr)
        return 1
    # every fifth table is held out (the temperature is fitted there, its figures printed)
    held = (data.session % 5) == 4
    tr, te = np.flatnonzero(~held), np.flatnonzero(held)
    print(f"{len(tr)} training tops, {len(te)} held out", file=sys.stderr)
    net = train(data, tr, epochs=args.epochs)
    z = logits(net, data, te)
    temps = fit_temperatures(z, data, te)
    report(f"held-out CNN (T={temps[0]:.2f}, {temps[-1]:.2f})", calibrated(z, temps), data, te)
    to_onnx(net, temps, args.out)
    print(
        f"saved {args.out.name} ({args.out.stat().st_size // 1024} KB): {len(data.y)} tops, "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
