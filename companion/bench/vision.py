"""``companion bench vision``: the detector and the stability gate on fresh renders.

Each *session* is one table as a player would set it up: a random camera pose (tilt bucket),
room light and look of the pieces (:func:`companion.sim.render.random_setup`). The colour
profile is sampled from a frame of the setup position rendered under a *different* random light
(the light changes during an evening), then frames of random legal game states (seeded random
play with the rules engine, a few to many actions from the setup) are read by the detector and
compared with the renderer's ground truth. Once per session a hand passes over the still board
(:func:`companion.sim.render.render_hand_sequence`) and the stability gate must stay silent
while the hand is in view.

Figures: per-space error rates (tower count, top kind, wizard colours/counts, castle), board-exact
rate, the mean per-space confidence where the tower count was right and where it was wrong, the
colour confusion matrix of wizards, hand frames vs observations emitted on them, median and p95
detector time per frame on one core (pose cached, as with a fixed camera) and the ratio
of that median to one ``cv2.warpPerspective`` of the same frame to 1024x1024, each overall and
per tilt bucket and lighting bucket. Seeds: sessions use ``seed * 1000 + i``; the tests use seeds
below 1000, so with ``--seed >= 1`` the bench never sees a test frame.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from companion.rules.model import MODULES
from companion.rules.observation import Observation
from companion.sim.scenes import (
    INTENSITY_BUCKETS,
    KELVIN_BUCKETS,
    TILT_BUCKETS,
    random_game_state,
)


def _bucket(value: float, buckets: tuple[tuple[float, float], ...]) -> str:
    for lo, hi in buckets:
        if lo <= value <= hi:
            return f"{lo:g}-{hi:g}"
    return "other"


@dataclass
class Tally:
    """Counts for one group of frames."""

    frames: int = 0
    spaces: int = 0
    towers_wrong: int = 0
    top_wrong: int = 0
    top_hidden: int = 0
    wizards_wrong: int = 0
    castle_wrong: int = 0
    tokens_wrong: int = 0
    boards_exact: int = 0
    boards_castle_wrong: int = 0
    not_read: int = 0
    ms: list[float] = field(default_factory=list)
    conf_right: list[float] = field(default_factory=list)
    conf_wrong: list[float] = field(default_factory=list)
    warp_ms: list[float] = field(default_factory=list)

    def add(self, truth: Observation, got: Observation | None) -> None:
        self.frames += 1
        if got is None:
            self.not_read += 1
            self.spaces += len(truth.spaces)
            self.towers_wrong += len(truth.spaces)
            self.top_wrong += len(truth.spaces)
            self.wizards_wrong += len(truth.spaces)
            self.castle_wrong += len(truth.spaces)
            self.boards_castle_wrong += 1
            return
        exact = True
        castle_ok = True
        for s, t in truth.spaces.items():
            o = got.spaces.get(s)
            self.spaces += 1
            if o is None:
                self.towers_wrong += 1
                self.top_wrong += 1
                self.wizards_wrong += 1
                self.castle_wrong += 1
                exact = castle_ok = False
                continue
            bad = False
            if o.towers != t.towers:
                self.towers_wrong += 1
                bad = True
            if o.top != t.top:
                self.top_wrong += 1
                if t.castle and t.towers:
                    self.top_hidden += 1
                bad = True
            if dict(o.wizards) != dict(t.wizards):
                self.wizards_wrong += 1
                bad = True
            if o.castle != t.castle:
                self.castle_wrong += 1
                castle_ok = False
                bad = True
            if o.witch != t.witch or o.raven != t.raven:
                self.tokens_wrong += 1
                bad = True
            exact = exact and not bad
            (self.conf_wrong if o.towers != t.towers else self.conf_right).append(o.confidence)
        self.boards_exact += int(exact)
        self.boards_castle_wrong += int(not castle_ok)

    def figures(self) -> dict[str, Any]:
        n = max(self.spaces, 1)
        f = max(self.frames, 1)
        ms = np.array(self.ms) if self.ms else np.array([np.nan])
        warp = np.array(self.warp_ms) if self.warp_ms else np.array([np.nan])
        return {
            "frames": self.frames,
            "spaces": self.spaces,
            "tower_count_error_pct": round(100 * self.towers_wrong / n, 3),
            "top_kind_error_pct": round(100 * self.top_wrong / n, 3),
            "top_kind_error_pct_excl_under_castle": round(
                100 * (self.top_wrong - self.top_hidden) / n, 3
            ),
            "wizards_error_pct": round(100 * self.wizards_wrong / n, 3),
            "castle_space_error_pct": round(100 * self.castle_wrong / n, 3),
            "castle_board_error_pct": round(100 * self.boards_castle_wrong / f, 2),
            "tokens_error_pct": round(100 * self.tokens_wrong / n, 3),
            "board_exact_pct": round(100 * self.boards_exact / f, 2),
            "frames_not_read": self.not_read,
            "median_ms": round(float(np.nanmedian(ms)), 2),
            "p95_ms": round(float(np.nanpercentile(ms, 95)), 2),
            "warp_median_ms": round(float(np.nanmedian(warp)), 2),
            "ratio_to_warp": round(float(np.nanmedian(ms) / np.nanmedian(warp)), 2),
            # the detector's per-space confidence where its tower count was right / wrong
            "confidence_right_mean": round(float(np.mean(self.conf_right)), 3)
            if self.conf_right
            else None,
            "confidence_wrong_mean": round(float(np.mean(self.conf_wrong)), 3)
            if self.conf_wrong
            else None,
        }


def colour_confusion(
    truth: Mapping[str, int], got: Mapping[str, int], matrix: dict[str, Counter[str]]
) -> None:
    """Add one space to ``matrix[true colour][detected colour or 'missed'/'extra']``."""
    t = Counter(truth)
    g = Counter(got)
    for c in set(t) | set(g):
        m = min(t[c], g[c])
        if m:
            matrix[c][c] += m
        t[c] -= m
        g[c] -= m
    left_t = sorted(t.elements())
    left_g = sorted(g.elements())
    for a, b in zip(left_t, left_g, strict=False):
        matrix[a][b] += 1
    for a in left_t[len(left_g) :]:
        matrix[a]["missed"] += 1
    for b in left_g[len(left_t) :]:
        matrix["extra"][b] += 1


def main(argv: list[str]) -> int:
    import cv2

    from companion.sim.render import (
        RenderResult,
        random_lighting,
        random_setup,
        render,
        render_hand_sequence,
    )
    from companion.vision.detector import Detector
    from companion.vision.geometry import BoardGeometry
    from companion.vision.profile import ProfileError
    from companion.vision.profile_setup import build_profile
    from companion.vision.stability import StabilityGate

    ap = argparse.ArgumentParser(prog="companion bench vision", description=__doc__)
    ap.add_argument("--frames", type=int, default=120, help="game frames to read (default 120)")
    ap.add_argument("--seed", type=int, default=1, help="bench seed, >= 1 (default 1)")
    ap.add_argument("--per-session", type=int, default=8, help="game frames per session")
    ap.add_argument("--players", type=int, default=0, help="players (default: 2-6 at random)")
    ap.add_argument("--no-hands", action="store_true", help="skip the hand sequences")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument(
        "--modules",
        default="",
        help=f"expansion modules in play, comma separated (of {', '.join(MODULES)}; "
        "default none: the base game)",
    )
    args = ap.parse_args(argv)
    if args.seed < 1 or args.frames < 1 or args.per_session < 1:
        print("seed, frames and per-session must be >= 1", file=sys.stderr)
        return 2
    modules = frozenset(m.strip() for m in args.modules.split(",") if m.strip())
    unknown = sorted(modules - set(MODULES))
    if unknown:
        print(
            f"--modules: unknown module(s) {', '.join(unknown)} (known: {', '.join(MODULES)})",
            file=sys.stderr,
        )
        return 2
    cv2.setNumThreads(1)
    geometry = BoardGeometry.default()
    groups: dict[str, Tally] = defaultdict(Tally)
    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    hand_frames = hand_emitted = hand_sequences = seq_after_ok = 0
    profile_failures = render_failures = 0
    over_frames = over_emitted = 0

    def over_board(r: RenderResult) -> bool:
        """Ground truth (evaluation only): does the hand cover part of the board area?"""
        from companion.vision.markers import BoardPose

        pose = BoardPose(np.eye(3), (), 0.0, r.camera, r.pose.rvec, r.pose.tvec)
        outline = np.column_stack([geometry.board_outline(), np.zeros(4)])
        quad = np.round(pose.project(outline)).astype(np.int32)
        board = np.zeros(r.hand_mask.shape, np.uint8)
        cv2.fillConvexPoly(board, quad, 1)
        return int(np.count_nonzero((r.hand_mask > 0) & (board > 0))) >= 50

    sessions = (args.frames + args.per_session - 1) // args.per_session
    t_start = time.perf_counter()
    done = 0
    for si in range(sessions):
        seed = args.seed * 1000 + si
        nrng = np.random.default_rng(seed)
        prng = random.Random(seed)
        tilt_bucket = TILT_BUCKETS[si % len(TILT_BUCKETS)]
        table = random_setup(nrng, geometry, tilt_range=tilt_bucket)
        players = args.players or prng.randint(2, 6)
        from companion.rules import Config, dump_state, observe, setup

        config = Config(player_count=players, modules=modules)
        setup_state = setup(config, seed=None)
        colours = list(config.colours or ())
        # the track of the game (the expansion's inserts make it 18 spaces)
        track_geometry = geometry.with_track(dump_state(setup_state)["track"])
        setup_light = replace(table, lighting=random_lighting(nrng), _cache={})
        setup_frame = render(setup_state, nrng, setup=setup_light, hand=False).frame
        try:
            profile = build_profile(
                setup_frame,
                table.camera,
                track_geometry,
                colours,
                expected=observe(setup_state) if modules else None,
            )
        except ProfileError as exc:
            profile_failures += 1
            print(f"session {si}: profile failed: {exc}", file=sys.stderr)
            continue
        detector = Detector(table.camera, track_geometry, profile)
        detector.detect(setup_frame)  # acquire the pose once, as a fixed camera does
        light = table.lighting
        keys = [
            "all",
            f"tilt {_bucket(table.pose.tilt_deg, TILT_BUCKETS)}",
            f"kelvin {_bucket(light.kelvin, KELVIN_BUCKETS)}",
            f"light {_bucket(light.intensity, INTENSITY_BUCKETS)}x",
        ]
        for _ in range(min(args.per_session, args.frames - done)):
            state = random_game_state(prng, players, modules=modules)
            try:
                res = render(state, nrng, setup=table, hand=False)
            except (cv2.error, ValueError, FloatingPointError) as exc:
                render_failures += 1
                print(f"session {si}: the renderer failed: {exc}", file=sys.stderr)
                continue
            t0 = time.perf_counter()
            det = detector.detect(res.frame)
            ms = (time.perf_counter() - t0) * 1000
            pose = det.pose
            warp_ms = float("nan")
            if pose is not None:
                t0 = time.perf_counter()
                cv2.warpPerspective(res.frame, np.linalg.inv(pose.homography), (1024, 1024))
                warp_ms = (time.perf_counter() - t0) * 1000
            got = det.observation if det.ok else None
            for k in keys:
                groups[k].add(res.observation, got)
                groups[k].ms.append(ms)
                groups[k].warp_ms.append(warp_ms)
            if got is not None:
                for s, t in res.observation.spaces.items():
                    o = got.spaces.get(s)
                    colour_confusion(t.wizards, o.wizards if o else {}, matrix)
            done += 1
        if not args.no_hands:
            state = random_game_state(prng, players, modules=modules)
            try:
                seq = render_hand_sequence(
                    state, nrng, setup=table, still_before=4, moving=8, still_after=10, fps=5.0
                )
            except (cv2.error, ValueError, FloatingPointError) as exc:
                render_failures += 1
                print(f"session {si}: the renderer failed on a hand: {exc}", file=sys.stderr)
                seq = []
            gate = StabilityGate()
            hand_sequences += int(bool(seq))
            emitted_after = 0
            last_hand = max((i for i, r in enumerate(seq) if r.hand), default=-1)
            for i, r in enumerate(seq):
                det = detector.detect(r.frame, r.observation.time, r.observation.frame)
                d = gate.update(
                    r.observation.time,
                    det.board_view,
                    det.observation if det.ok else None,
                    det.white_bgr,
                    det.frame_view,
                )
                if r.hand:
                    hand_frames += 1
                    hand_emitted += int(d.observation is not None)
                    if over_board(r):
                        over_frames += 1
                        over_emitted += int(d.observation is not None)
                elif i > last_hand and d.observation is not None:
                    emitted_after += 1
            seq_after_ok += int(emitted_after == 1)
        print(
            f"session {si + 1}/{sessions}: tilt {table.pose.tilt_deg:.0f} deg, "
            f"{light.kelvin:.0f} K x{light.intensity:.2f}, {players} players, "
            f"{time.perf_counter() - t_start:.0f} s",
            file=sys.stderr,
        )
    figures = {
        "seed": args.seed,
        "modules": sorted(modules),
        "frames": done,
        "profile_failures": profile_failures,
        "render_failures": render_failures,
        "groups": {k: groups[k].figures() for k in sorted(groups)},
        "colour_confusion": {t: dict(c) for t, c in sorted(matrix.items())},
        "hand": {
            "sequences": hand_sequences,
            "hand_frames": hand_frames,
            "observations_on_hand_frames": hand_emitted,
            "hand_over_board_frames": over_frames,
            "observations_on_hand_over_board_frames": over_emitted,
            "sequences_with_one_observation_after_the_hand": seq_after_ok,
        },
        "note": "timings on one core (cv2.setNumThreads(1)) with the pose cached",
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    print(f"vision bench: {done} frames, seed {args.seed}")
    cols = [
        ("tower_count_error_pct", "towers%"),
        ("top_kind_error_pct", "top%"),
        ("wizards_error_pct", "wizards%"),
        ("castle_space_error_pct", "castle%"),
        ("tokens_error_pct", "tokens%"),
        ("board_exact_pct", "exact%"),
        ("median_ms", "med ms"),
        ("p95_ms", "p95 ms"),
        ("ratio_to_warp", "x warp"),
        ("confidence_right_mean", "conf ok"),
        ("confidence_wrong_mean", "conf bad"),
    ]
    print(f"{'group':<18}{'frames':>7}" + "".join(f"{h:>10}" for _, h in cols))
    for k in sorted(groups):
        fg = groups[k].figures()
        print(f"{k:<18}{fg['frames']:>7}" + "".join(f"{str(fg[c]):>10}" for c, _ in cols))
    print("colour confusion (true -> detected):")
    for true_colour, c in sorted(matrix.items()):
        print(f"  {true_colour:<8} " + ", ".join(f"{d}:{n}" for d, n in sorted(c.items())))
    h = figures["hand"]
    print(
        f"hands: {h['hand_frames']} hand frames in {h['sequences']} sequences, "
        f"{h['observations_on_hand_frames']} observations emitted on them; "
        f"{h['hand_over_board_frames']} with the hand over the board, "
        f"{h['observations_on_hand_over_board_frames']} observations on those; "
        f"{h['sequences_with_one_observation_after_the_hand']} sequences reported the still board "
        "exactly once after"
    )
    return 0
