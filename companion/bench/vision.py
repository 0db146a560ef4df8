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

``--seeds A-B`` runs many bench seeds (many tables) into one report: the figures per seed and
their spread across seeds (mean, min, max, sd). Each frame is *exact* (every space read and
right), *partial* (spaces withheld, every space emitted right), *wrong* (a space emitted and
wrong) or *refused* (nothing emitted; its reason is counted), with the share of spaces withheld
and the share of frames with a *forced* space, one whose tower count the setup's tower total
changed (R-COMP-1/3; ``forced_frame_pct``, ``forced_spaces``: such a space is capped at
``DetectorConfig.forced_confidence``, so withheld) and the withheld spaces by why
(``withheld_by_kind``: tower total, tower count, top kind, glare, wizards, not read, each
[spaces, frames]) (:mod:`companion.sim.vision_tally`); the
same frames are also scored at other withholding thresholds (``withhold_sweep``: the trade-off
between wrong boards and withheld spaces).
``--withhold-below 0`` reads as the detector did before it could withhold a space.
``--camera pi`` (the default) renders the ideal lens image and passes it
through the Raspberry Pi camera model (:mod:`companion.sim.render.camera_model`) at its
defaults; ``--camera legacy`` keeps the renderer's own noise, blur and JPEG. ``--conditions``
makes one camera condition at a time worse (mild, moderate, severe; the rest at the defaults)
and reports boards exact and the wrong-board rate per condition and severity, over the seeds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from companion.bench.vision_still import read_still, still_problem
from companion.rules.model import MODULES
from companion.sim.readings import OUTCOMES, sweep
from companion.sim.reliability import print_reliability
from companion.sim.scenes import (
    INTENSITY_BUCKETS,
    KELVIN_BUCKETS,
    TILT_BUCKETS,
    random_game_state,
)
from companion.sim.vision_tally import (
    Tally,
    colour_confusion,
    parse_seeds,
    spread,
    write_wrong_spaces,
    wrong_spaces,
)

if TYPE_CHECKING:
    from companion.sim.render import RenderResult, TableSetup
    from companion.sim.render.camera_model import CameraEffects
    from companion.vision.detector import Detector
    from companion.vision.geometry import BoardGeometry


def _bucket(value: float, buckets: tuple[tuple[float, float], ...]) -> str:
    for lo, hi in buckets:
        if lo <= value <= hi:
            return f"{lo:g}-{hi:g}"
    return "other"


SPREAD_KEYS = (
    "board_exact_pct",
    "board_partial_pct",
    "withheld_space_pct",
    "forced_frame_pct",
    "tower_count_error_pct",
    "top_kind_error_pct",
    "wizards_error_pct",
    "wrong_board_pct",
    "refused_pct",
    "median_ms",
    "ratio_to_warp",
)
"""The per-seed figures whose spread across seeds the report gives."""


@dataclass
class Run:
    """What the bench asks for: the game, the camera and how many frames per seed."""

    frames: int
    per_session: int
    players: int
    modules: frozenset[str]
    hands: bool
    camera: str = "pi"
    severity: dict[str, str] = field(default_factory=dict)
    top_method: str = ""
    height_method: str = ""
    withhold_below: float | None = None
    wizard_method: str = ""
    token_method: str = ""
    castle_method: str = ""
    wrong_spaces: list[dict[str, Any]] | None = None
    still: int = 0  # > 0: each board read as the gate's board over this many frames
    learn: bool = False  # after each frame, learn the colours from its true board


@dataclass
class SeedResult:
    """One bench seed's tallies."""

    seed: int
    groups: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    matrix: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    hand: Counter[str] = field(default_factory=Counter)
    profile_failures: int = 0
    render_failures: int = 0


class _Camera:
    """The frames of one session as the camera delivers them: the renderer's own camera
    (``legacy``) or the ideal render through the Pi camera model (``pi``)."""

    def __init__(
        self, run: Run, seed: int, geometry: BoardGeometry, nrng: np.random.Generator
    ) -> None:
        from companion.sim.render import random_setup
        from companion.sim.render.camera_model import random_effects, session_setup

        self.pi = run.camera == "pi"
        self.crng = np.random.default_rng([seed, 17])  # the camera's own stream
        tilt = TILT_BUCKETS[seed % 1000 % len(TILT_BUCKETS)]
        self.effects: CameraEffects | None = None
        if self.pi:
            self.effects = random_effects(self.crng, run.severity)
            self.table = session_setup(nrng, self.effects, geometry, tilt_range=tilt)
        else:
            self.table = random_setup(nrng, geometry, tilt_range=tilt)
        self.board_mm = geometry.board_size

    def play_table(self) -> TableSetup:
        from companion.sim.render.camera_model import play_setup

        if self.effects is None:
            return self.table
        return play_setup(self.table, self.effects, self.crng)

    def finish(self, res: RenderResult, phase: str) -> np.ndarray:
        """The delivered frame of a render (made with ``ideal=self.pi``)."""
        from companion.sim.render.camera_model import camera_frame

        if self.effects is None:
            return res.frame
        return camera_frame(res, self.effects, self.crng, self.board_mm, phase)


def run_seed(run: Run, seed: int, log: bool = True) -> SeedResult:
    """Read ``run.frames`` frames of bench seed ``seed`` (sessions ``seed * 1000 + i``)."""
    import cv2

    from companion.rules import Config, dump_state, observe, setup
    from companion.sim.render import random_lighting, render
    from companion.vision.detector import Detector, DetectorConfig
    from companion.vision.geometry import BoardGeometry
    from companion.vision.profile import ProfileError
    from companion.vision.profile_learn import learn_from_board
    from companion.vision.profile_setup import build_profile

    geometry = BoardGeometry.default()
    out = SeedResult(seed)
    sessions = (run.frames + run.per_session - 1) // run.per_session
    t_start = time.perf_counter()
    done = 0
    for si in range(sessions):
        sseed = seed * 1000 + si
        nrng = np.random.default_rng(sseed)
        prng = random.Random(sseed)
        cam = _Camera(run, sseed, geometry, nrng)
        table = cam.table
        players = run.players or prng.randint(2, 6)
        config = Config(player_count=players, modules=run.modules)
        setup_state = setup(config, seed=None)
        colours = list(config.colours or ())
        # the track of the game (the expansion's inserts make it 18 spaces)
        track_geometry = geometry.with_track(dump_state(setup_state)["track"])
        setup_light = replace(table, lighting=random_lighting(nrng), _cache={})
        try:
            setup_res = render(setup_state, nrng, setup=setup_light, hand=False, ideal=cam.pi)
            setup_frame = cam.finish(setup_res, "setup")
            profile = build_profile(
                setup_frame,
                table.camera,
                track_geometry,
                colours,
                expected=observe(setup_state) if run.modules else None,
            )
        except ProfileError as exc:
            out.profile_failures += 1
            print(f"seed {seed} session {si}: profile failed: {exc}", file=sys.stderr)
            continue
        dconfig = DetectorConfig()
        if run.top_method:
            dconfig = replace(dconfig, top_method=run.top_method)
        if run.height_method:
            dconfig = replace(dconfig, height_method=run.height_method)
        if run.withhold_below is not None:
            dconfig = replace(dconfig, withhold_below=run.withhold_below)
        if run.wizard_method:
            dconfig = replace(dconfig, wizard_method=run.wizard_method)
        if run.token_method:
            dconfig = replace(dconfig, token_method=run.token_method)
        if run.castle_method:
            dconfig = replace(dconfig, castle_method=run.castle_method)
        detector = Detector(table.camera, track_geometry, profile, config=dconfig)
        detector.detect(setup_frame)  # acquire the pose once, as a fixed camera does
        play = cam.play_table()
        light = table.lighting
        keys = [
            "all",
            f"tilt {_bucket(table.pose.tilt_deg, TILT_BUCKETS)}",
            f"kelvin {_bucket(light.kelvin, KELVIN_BUCKETS)}",
            f"light {_bucket(light.intensity, INTENSITY_BUCKETS)}x",
        ]
        for _ in range(min(run.per_session, run.frames - done)):
            state = random_game_state(prng, players, modules=run.modules)
            try:
                res = render(state, nrng, setup=play, hand=False, ideal=cam.pi)
                frame = cam.finish(res, "play")
            except (cv2.error, ValueError, FloatingPointError) as exc:
                out.render_failures += 1
                print(f"seed {seed} session {si}: the renderer failed: {exc}", file=sys.stderr)
                continue
            if run.still:
                # the same scene again through the camera: fresh noise on every frame
                more = [cam.finish(res, "play") for _ in range(run.still - 1)]
                sr = read_still(detector, [frame, *more])
                det, got, times = sr.last, sr.emitted, sr.ms
            else:
                t0 = time.perf_counter()
                det = detector.detect(frame)
                times = [(time.perf_counter() - t0) * 1000]
                got = det.observation if det.ok else None
            pose = det.pose
            if run.learn and pose is not None and det.white_bgr is not None:
                taught = learn_from_board(
                    frame, pose, det.white_bgr, track_geometry, detector.profile, res.observation
                )
                detector.set_profile(taught.profile)
            warp_ms = float("nan")
            if pose is not None:
                t0 = time.perf_counter()
                cv2.warpPerspective(frame, np.linalg.inv(pose.homography), (1024, 1024))
                warp_ms = (time.perf_counter() - t0) * 1000
            lit = sorted(
                sp
                for sp, c in ((det.quality.glare if det.quality else None) or {}).items()
                if c >= detector.limits.glare_share
            )
            forced = [sp for sp, d in det.details.items() if d.forced]
            for k in keys:
                out.groups[k].add(res.observation, got, det.reading, lit, forced, det.withheld)
                out.groups[k].ms.extend(times)
                out.groups[k].warp_ms.append(warp_ms)
            if run.wrong_spaces is not None and det.reading is not None:
                where: dict[str, Any] = {"seed": seed, "session": si, "frame": done}
                where.update(tilt=table.pose.tilt_deg, light=light.intensity, kelvin=light.kelvin)
                if det.quality is not None:  # the frame's quality, as the detector measured it
                    where.update({k: v for k, v in det.quality.to_json().items() if k != "glare"})
                run.wrong_spaces.extend(wrong_spaces(res.observation, det, where))
            if got is None:
                out.groups["all"].refusals[f"{det.status}: {det.message}"[:70]] += 1
            else:
                for s, t in res.observation.spaces.items():
                    o = got.spaces.get(s)
                    if o is not None:  # (a withheld space is no colour read)
                        colour_confusion(t.wizards, o.wizards, out.matrix)
            done += 1
        if run.hands:
            _hand_sequence(run, out, cam, play, detector, prng, nrng, players, geometry)
        if log:
            print(
                f"seed {seed} session {si + 1}/{sessions}: tilt {table.pose.tilt_deg:.0f} deg, "
                f"{light.kelvin:.0f} K x{light.intensity:.2f}, {players} players, "
                f"{time.perf_counter() - t_start:.0f} s",
                file=sys.stderr,
            )
    return out


def _hand_sequence(
    run: Run,
    out: SeedResult,
    cam: _Camera,
    play: TableSetup,
    detector: Detector,
    prng: random.Random,
    nrng: np.random.Generator,
    players: int,
    geometry: BoardGeometry,
) -> None:
    """A hand passes over the still board: the stability gate must stay silent under it."""
    import cv2

    from companion.sim.render import render_hand_sequence
    from companion.vision.markers import BoardPose
    from companion.vision.stability import StabilityGate

    def over_board(r: RenderResult) -> bool:
        """Ground truth (evaluation only): does the hand cover part of the board area?"""
        pose = BoardPose(np.eye(3), (), 0.0, r.camera, r.pose.rvec, r.pose.tvec)
        outline = np.column_stack([geometry.board_outline(), np.zeros(4)])
        quad = np.round(pose.project(outline)).astype(np.int32)
        board = np.zeros(r.hand_mask.shape, np.uint8)
        cv2.fillConvexPoly(board, quad, 1)
        return int(np.count_nonzero((r.hand_mask > 0) & (board > 0))) >= 50

    state = random_game_state(prng, players, modules=run.modules)
    try:
        seq = render_hand_sequence(
            state,
            nrng,
            setup=play,
            still_before=4,
            moving=8,
            still_after=10,
            fps=5.0,
            ideal=cam.pi,
        )
        frames = [cam.finish(r, "play") for r in seq]
    except (cv2.error, ValueError, FloatingPointError) as exc:
        out.render_failures += 1
        print(f"seed {out.seed}: the renderer failed on a hand: {exc}", file=sys.stderr)
        seq, frames = [], []
    gate = StabilityGate()
    out.hand["sequences"] += int(bool(seq))
    emitted_after = 0
    last_hand = max((i for i, r in enumerate(seq) if r.hand), default=-1)
    for i, (r, frame) in enumerate(zip(seq, frames, strict=True)):
        det = detector.detect(frame, r.observation.time, r.observation.frame)
        d = gate.update(
            r.observation.time,
            det.board_view,
            det.observation if det.ok else None,
            det.white_bgr,
            det.frame_view,
        )
        if r.hand:
            out.hand["hand_frames"] += 1
            out.hand["observations_on_hand_frames"] += int(d.observation is not None)
            if over_board(r):
                out.hand["hand_over_board_frames"] += 1
                out.hand["observations_on_hand_over_board_frames"] += int(d.observation is not None)
        elif i > last_hand and d.observation is not None:
            emitted_after += 1
    out.hand["sequences_with_one_observation_after_the_hand"] += int(emitted_after == 1)


def merge(results: list[SeedResult]) -> SeedResult:
    """All seeds' frames pooled into one tally per group."""
    out = SeedResult(0)
    for r in results:
        for k, t in r.groups.items():
            g = out.groups[k]
            for f in fields(Tally):
                v = getattr(t, f.name)
                if isinstance(v, int):
                    setattr(g, f.name, getattr(g, f.name) + v)
                elif isinstance(v, Counter):
                    getattr(g, f.name).update(v)
                else:
                    getattr(g, f.name).extend(v)
        for c, m in r.matrix.items():
            out.matrix[c].update(m)
        out.hand.update(r.hand)
        out.profile_failures += r.profile_failures
        out.render_failures += r.render_failures
    return out


def seed_report(results: list[SeedResult]) -> dict[str, Any]:
    """Per-seed figures of the whole frame set and their spread across seeds."""
    per_seed = {
        r.seed: {**r.groups["all"].figures(), "profile_failures": r.profile_failures}
        for r in results
    }
    return {
        "per_seed": per_seed,
        "spread": {k: spread([f[k] for f in per_seed.values()]) for k in SPREAD_KEYS},
    }


COLS = [
    ("board_exact_pct", "exact%"),
    ("board_partial_pct", "partial%"),
    ("tower_count_error_pct", "towers%"),
    ("top_kind_error_pct", "top%"),
    ("wizards_error_pct", "wizards%"),
    ("castle_space_error_pct", "castle%"),
    ("tokens_error_pct", "tokens%"),
    ("wrong_board_pct", "wrong%"),
    ("refused_pct", "refused%"),
    ("withheld_space_pct", "withheld%"),
    ("forced_frame_pct", "forced%"),
    ("median_ms", "med ms"),
    ("p95_ms", "p95 ms"),
    ("ratio_to_warp", "x warp"),
    ("confidence_right_mean", "conf ok"),
    ("confidence_wrong_mean", "conf bad"),
]


def _print_report(figures: dict[str, Any], pooled: SeedResult) -> None:
    seeds = figures["seeds"]
    print(
        f"vision bench: {figures['frames']} frames, camera {figures['camera']}, "
        f"seeds {_seed_text(seeds)}, modules {','.join(figures['modules']) or 'none'}"
    )
    print(f"{'group':<18}{'frames':>7}" + "".join(f"{h:>10}" for _, h in COLS))
    for k in sorted(pooled.groups):
        fg = pooled.groups[k].figures()
        print(f"{k:<18}{fg['frames']:>7}" + "".join(f"{str(fg[c]):>10}" for c, _ in COLS))
    if len(seeds) > 1:
        sr = figures["by_seed"]
        short = [(k, h) for k, h in COLS if k in SPREAD_KEYS]
        print("per seed:")
        print(f"{'seed':<18}{'frames':>7}" + "".join(f"{h:>10}" for _, h in short))
        for seed, fg in sr["per_seed"].items():
            print(f"{seed:<18}{fg['frames']:>7}" + "".join(f"{str(fg[c]):>10}" for c, _ in short))
        for stat in ("mean", "min", "max", "sd"):
            print(
                f"{stat:<18}{'':>7}"
                + "".join(f"{str(sr['spread'][c][stat]):>10}" for c, _ in short)
            )
    print_reliability(pooled.groups["all"].figures()["reliability"])
    print(
        f"withholding (now below {figures['withhold_below']:g}): the same frames at other "
        "thresholds, % of frames (withheld: % of the spaces on the boards emitted)"
    )
    print(f"{'below':>8}" + "".join(f"{h:>10}" for h in (*OUTCOMES, "withheld")))
    for row in figures["withhold_sweep"]:
        vals = [row[f"{k}_pct"] for k in OUTCOMES] + [row["withheld_space_pct"]]
        print(f"{row['threshold']:>8g}" + "".join(f"{v:>10}" for v in vals))
    refusals = pooled.groups["all"].refusals
    if refusals:
        print("refused frames by reason:")
        for why, n in refusals.most_common(8):
            print(f"  {n:>4}  {why}")
    print("colour confusion (true -> detected):")
    for true_colour, c in sorted(pooled.matrix.items()):
        print(f"  {true_colour:<8} " + ", ".join(f"{d}:{n}" for d, n in sorted(c.items())))
    h = figures["hand"]
    if h.get("sequences"):
        print(
            f"hands: {h['hand_frames']} hand frames in {h['sequences']} sequences, "
            f"{h['observations_on_hand_frames']} observations emitted on them; "
            f"{h['hand_over_board_frames']} with the hand over the board, "
            f"{h['observations_on_hand_over_board_frames']} observations on those; "
            f"{h['sequences_with_one_observation_after_the_hand']} sequences reported the "
            "still board exactly once after"
        )


def _seed_text(seeds: list[int]) -> str:
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(s) for s in seeds)


def conditions_table(
    run: Run, seeds: list[int], conditions: list[str], severities: list[str]
) -> list[dict[str, Any]]:
    """Boards exact, wrong boards and refusals per camera condition and severity, each row
    over all ``seeds`` (the first row: every condition at its default)."""
    rows: list[dict[str, Any]] = []
    cells = [("default", "default")] + [(c, s) for c in conditions for s in severities]
    t0 = time.perf_counter()
    for cond, sev in cells:
        sub = replace(run, severity={} if cond == "default" else {cond: sev}, hands=False)
        before = len(run.wrong_spaces or ())
        results = [run_seed(sub, seed, log=False) for seed in seeds]
        for w in (run.wrong_spaces or [])[before:]:  # (the list is shared with ``sub``)
            w.update(condition=cond, severity=sev)
        pooled = merge(results).groups["all"].figures()
        exact = [r.groups["all"].figures()["board_exact_pct"] for r in results]
        rows.append(
            {
                "condition": cond,
                "severity": sev,
                "frames": pooled["frames"],
                "board_exact_pct": pooled["board_exact_pct"],
                "board_exact_by_seed": spread(exact),
                "board_partial_pct": pooled["board_partial_pct"],
                "withheld_space_pct": pooled["withheld_space_pct"],
                "wrong_board_pct": pooled["wrong_board_pct"],
                "refused_pct": pooled["refused_pct"],
                "tower_count_error_pct": pooled["tower_count_error_pct"],
                "top_kind_error_pct": pooled["top_kind_error_pct"],
                "wizards_error_pct": pooled["wizards_error_pct"],
                "median_ms": pooled["median_ms"],
                "ratio_to_warp": pooled["ratio_to_warp"],
                "profile_failures": sum(r.profile_failures for r in results),
                "conf90_right_pct": pooled["reliability"]["high"]["right_pct"],
            }
        )
        print(
            f"{cond} {sev}: exact {pooled['board_exact_pct']} %, wrong "
            f"{pooled['wrong_board_pct']} %, {time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
        )
    return rows


def _print_conditions(rows: list[dict[str, Any]], seeds: list[int], modules: list[str]) -> None:
    print(
        f"vision bench by camera condition: seeds {_seed_text(seeds)}, "
        f"modules {','.join(modules) or 'none'}; the other conditions at their defaults"
    )
    head = (
        "condition",
        "severity",
        "frames",
        "exact%",
        "min-max",
        "partial%",
        "wrong%",
        "refused%",
        "withheld%",
        "towers%",
        "top%",
        "wizards%",
        "x warp",
        "no prof",
        "c>=.9 ok%",
    )
    print(f"{head[0]:<15}{head[1]:<10}" + "".join(f"{h:>10}" for h in head[2:]))
    for r in rows:
        b = r["board_exact_by_seed"]
        mm = f"{b['min']:g}-{b['max']:g}" if b["min"] is not None else "-"
        vals = (
            r["frames"],
            r["board_exact_pct"],
            mm,
            r["board_partial_pct"],
            r["wrong_board_pct"],
            r["refused_pct"],
            r["withheld_space_pct"],
            r["tower_count_error_pct"],
            r["top_kind_error_pct"],
            r["wizards_error_pct"],
            r["ratio_to_warp"],
            r["profile_failures"],
            r["conf90_right_pct"],
        )
        print(f"{r['condition']:<15}{r['severity']:<10}" + "".join(f"{str(v):>10}" for v in vals))


def main(argv: list[str]) -> int:
    import cv2

    from companion.sim.render.camera_model import CONDITIONS, SEVERITIES
    from companion.vision.detector import DetectorConfig

    ap = argparse.ArgumentParser(prog="companion bench vision", description=__doc__)
    ap.add_argument("--frames", type=int, default=120, help="game frames per seed (default 120)")
    ap.add_argument("--seed", type=int, default=1, help="bench seed, >= 1 (default 1)")
    ap.add_argument(
        "--seeds",
        default="",
        help="many bench seeds in one report, e.g. 1001-1010 or 5,7,9 (overrides --seed)",
    )
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
    ap.add_argument(
        "--camera",
        choices=("pi", "legacy"),
        default="pi",
        help="pi: the Pi camera model at its defaults over the ideal render (default); "
        "legacy: the renderer's own noise, blur and JPEG",
    )
    ap.add_argument(
        "--conditions",
        action="store_true",
        help="one table: each camera condition at each severity (others at the defaults)",
    )
    ap.add_argument(
        "--condition",
        default="",
        help=f"with --conditions: only these, comma separated (of {', '.join(CONDITIONS)})",
    )
    ap.add_argument(
        "--severity",
        default="",
        help=f"with --conditions: only these, comma separated (of {', '.join(SEVERITIES)})",
    )
    ap.add_argument(
        "--top-method",
        choices=("hand", "learned"),
        default="",
        help="how crest and plain roofs are read (default: the detector's default)",
    )
    ap.add_argument(
        "--height-method",
        choices=("features", "cnn"),
        default="",
        help="how tower counts are read: the network over rim features or the CNN on the "
        "tier-stack ROI (default: the detector's default)",
    )
    ap.add_argument(
        "--withhold-below",
        type=float,
        default=None,
        help="withhold spaces below this reported confidence (default: the detector's; "
        "0: withhold nothing, as before spaces could be withheld)",
    )
    ap.add_argument(
        "--wizard-method",
        choices=("hand", "cnn"),
        default="",
        help="how the wizards on a top are read: the colour areas of the profile or the CNN "
        "on the top-surface ROI (default: the detector's default)",
    )
    ap.add_argument(
        "--token-method",
        choices=("hand", "cnn"),
        default="",
        help="how the witch and the raven token are read: the colours of the setup frame or "
        "the token network on the top-surface ROI (default: the detector's default)",
    )
    ap.add_argument(
        "--castle-method",
        choices=("hand", "cnn"),
        default="",
        help="how the raven castle's place and tier are read: its black probes and roof rim "
        "or the castle network on the tier stacks (default: the detector's default)",
    )
    ap.add_argument(
        "--wrong-spaces",
        type=Path,
        default=None,
        help="write every wrongly read space (withheld ones too) with what was measured "
        "there and the frame's quality (the markers' white, edge width, shift) to this "
        "JSON-lines file (for finding where the errors come from)",
    )
    ap.add_argument(
        "--still",
        type=int,
        default=0,
        help="K >= 6: score each board as the stability gate emits it over K frames of the "
        "still board at 8 frames/s, fresh camera noise on each (default 0: read once)",
    )
    ap.add_argument(
        "--learn",
        action="store_true",
        help="after each frame, learn the colours from its true board as from a board the "
        "tracker committed (companion.vision.profile_learn); later frames are read with them",
    )
    args = ap.parse_args(argv)
    if args.withhold_below is not None and not 0.0 <= args.withhold_below <= 1.0:
        print("--withhold-below must be within 0..1", file=sys.stderr)
        return 2
    if args.seed < 1 or args.frames < 1 or args.per_session < 1:
        print("seed, frames and per-session must be >= 1", file=sys.stderr)
        return 2
    if (problem := still_problem(args.still)) is not None:
        print(problem, file=sys.stderr)
        return 2
    try:
        seeds = parse_seeds(args.seeds) if args.seeds else [args.seed]
    except ValueError as exc:
        print(f"--seeds: {exc}", file=sys.stderr)
        return 2
    modules = frozenset(m.strip() for m in args.modules.split(",") if m.strip())
    unknown = sorted(modules - set(MODULES))
    if unknown:
        print(
            f"--modules: unknown module(s) {', '.join(unknown)} (known: {', '.join(MODULES)})",
            file=sys.stderr,
        )
        return 2
    conds = [c.strip() for c in args.condition.split(",") if c.strip()] or list(CONDITIONS)
    sevs = [s.strip() for s in args.severity.split(",") if s.strip()] or list(SEVERITIES)
    bad = sorted(set(conds) - set(CONDITIONS)) + sorted(set(sevs) - set(SEVERITIES))
    if bad:
        print(f"unknown condition or severity: {', '.join(bad)}", file=sys.stderr)
        return 2
    if args.conditions and args.camera != "pi":
        print("--conditions needs --camera pi", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    run = Run(
        args.frames,
        args.per_session,
        args.players,
        modules,
        not args.no_hands,
        args.camera,
        top_method=args.top_method,
        height_method=args.height_method,
        withhold_below=args.withhold_below,
        wizard_method=args.wizard_method,
        token_method=args.token_method,
        castle_method=args.castle_method,
        wrong_spaces=[] if args.wrong_spaces is not None else None,
        still=max(args.still, 0),
        learn=args.learn,
    )
    withhold = (
        args.withhold_below if args.withhold_below is not None else DetectorConfig().withhold_below
    )
    note = "timings on one core (cv2.setNumThreads(1)) with the pose cached"
    if args.conditions:
        rows = conditions_table(run, seeds, conds, sevs)
        write_wrong_spaces(args.wrong_spaces, run.wrong_spaces)
        if args.json:
            out = {
                "seeds": seeds,
                "modules": sorted(modules),
                "top_method": args.top_method or DetectorConfig().top_method,
                "height_method": args.height_method or DetectorConfig().height_method,
                "withhold_below": withhold,
                "frames_per_seed": args.frames,
                "still_frames": run.still,
                "learn": run.learn,
                "conditions": rows,
                "note": note,
            }
            print(json.dumps(out, indent=1))
        else:
            _print_conditions(rows, seeds, sorted(modules))
        return 0
    results = [run_seed(run, seed) for seed in seeds]
    write_wrong_spaces(args.wrong_spaces, run.wrong_spaces)
    pooled = merge(results)
    figures = {
        "seed": seeds[0],
        "seeds": seeds,
        "camera": args.camera,
        "top_method": args.top_method or DetectorConfig().top_method,
        "height_method": args.height_method or DetectorConfig().height_method,
        "wizard_method": args.wizard_method or DetectorConfig().wizard_method,
        "token_method": args.token_method or DetectorConfig().token_method,
        "castle_method": args.castle_method or DetectorConfig().castle_method,
        "withhold_below": withhold,
        "modules": sorted(modules),
        "frames": pooled.groups["all"].frames,
        "still_frames": run.still,
        "learn": run.learn,
        "profile_failures": pooled.profile_failures,
        "render_failures": pooled.render_failures,
        "groups": {k: pooled.groups[k].figures() for k in sorted(pooled.groups)},
        "by_seed": seed_report(results),
        "refusals": dict(pooled.groups["all"].refusals.most_common()),
        "withhold_sweep": sweep(pooled.groups["all"].reads, DetectorConfig().withhold_max),
        # the same with other refusal shares (DetectorConfig.withhold_max)
        "withhold_max_sweep": {
            str(m): sweep(pooled.groups["all"].reads, m) for m in (0.25, 0.375, 0.75, 1.0)
        },
        "colour_confusion": {t: dict(c) for t, c in sorted(pooled.matrix.items())},
        "hand": {
            k: pooled.hand[k]
            for k in (
                "sequences",
                "hand_frames",
                "observations_on_hand_frames",
                "hand_over_board_frames",
                "observations_on_hand_over_board_frames",
                "sequences_with_one_observation_after_the_hand",
            )
        },
        "note": note,
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    _print_report(figures, pooled)
    return 0
