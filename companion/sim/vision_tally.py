"""The counts of ``companion bench vision`` for one group of frames (:class:`Tally`) and the
wizard colour confusion.

Every frame has one outcome (:mod:`companion.sim.readings`): ``exact`` (every space read and
right), ``partial`` (some spaces withheld, every emitted space right), ``wrong`` (an emitted
space is wrong) or ``refused`` (no board). The per-space error rates count the emitted spaces
that are wrong, and every space of a refused frame (as before spaces could be withheld); a
withheld space is no error: it is counted in ``withheld_space_pct`` (of the spaces on the
boards emitted). The per-space confidences (the reliability table) are those of the full
reading, withheld spaces included, so that they stay comparable with a detector that
withholds nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from companion.rules.observation import Observation
from companion.sim.readings import (
    EXACT,
    PARTIAL,
    WRONG,
    FrameRead,
    board_outcome,
    frame_read,
    space_right,
)
from companion.sim.reliability import reliability
from companion.vision.detector.withhold import REASON_KINDS, reason_kind


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
    wrong_emitted: int = 0
    boards_partial: int = 0
    withheld: int = 0
    emitted_spaces: int = 0
    frames_forced: int = 0
    spaces_forced: int = 0
    forced_right: int = 0
    reads: list[FrameRead] = field(default_factory=list)
    refusals: Counter[str] = field(default_factory=Counter)
    withheld_kinds: Counter[str] = field(default_factory=Counter)
    withheld_kind_frames: Counter[str] = field(default_factory=Counter)
    ms: list[float] = field(default_factory=list)
    conf_right: list[float] = field(default_factory=list)
    conf_wrong: list[float] = field(default_factory=list)
    warp_ms: list[float] = field(default_factory=list)
    space_conf: list[tuple[float, bool]] = field(default_factory=list)

    def add(
        self,
        truth: Observation,
        got: Observation | None,
        full: Observation | None = None,
        glare: Iterable[int] = (),
        forced: Iterable[int] = (),
        withheld: Mapping[int, str] | None = None,
    ) -> None:
        """One frame: the truth, the board emitted (None: refused) and the detector's full
        reading (withheld spaces included; None when the board was not read) with the spaces
        under glare and those whose tower count the setup's tower total changed (``forced``,
        R-COMP-1/3), and, for a board emitted, why each withheld space was withheld (``withheld``:
        space -> reason, :func:`~companion.vision.detector.withhold.reason_kind` tallies it)."""
        self.frames += 1
        if got is not None and withheld:
            kinds = [reason_kind(r) for s, r in withheld.items() if s in truth.spaces]
            self.withheld_kinds.update(kinds)
            self.withheld_kind_frames.update(set(kinds))
        forced = [s for s in forced if s in truth.spaces]
        self.frames_forced += int(bool(forced))
        self.spaces_forced += len(forced)
        if full is not None:
            self.forced_right += sum(
                1
                for s in forced
                if s in full.spaces and full.spaces[s].towers == truth.spaces[s].towers
            )
        self.reads.append(frame_read(truth, full, glare))
        outcome = board_outcome(truth, got)
        if got is None:
            self.not_read += 1
            self.spaces += len(truth.spaces)
            self.towers_wrong += len(truth.spaces)
            self.top_wrong += len(truth.spaces)
            self.wizards_wrong += len(truth.spaces)
            self.castle_wrong += len(truth.spaces)
            self.boards_castle_wrong += 1
            return
        castle_ok = True
        self.emitted_spaces += len(truth.spaces)
        for s, t in truth.spaces.items():
            o = got.spaces.get(s)
            self.spaces += 1
            if o is None:
                self.withheld += 1
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
            if full is None:
                self._confidence(o.confidence, not bad, o.towers == t.towers)
        if full is not None:
            for s, seen in full.spaces.items():
                want = truth.spaces.get(s)
                if want is not None:
                    self._confidence(
                        seen.confidence, space_right(want, seen), seen.towers == want.towers
                    )
        self.boards_exact += int(outcome == EXACT)
        self.boards_partial += int(outcome == PARTIAL)
        self.wrong_emitted += int(outcome == WRONG)
        self.boards_castle_wrong += int(not castle_ok)

    def _confidence(self, conf: float, right: bool, towers_right: bool) -> None:
        self.space_conf.append((conf, right))
        (self.conf_right if towers_right else self.conf_wrong).append(conf)

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
            "board_partial_pct": round(100 * self.boards_partial / f, 2),
            "boards_partial": self.boards_partial,
            "withheld_space_pct": round(100 * self.withheld / max(self.emitted_spaces, 1), 3),
            # frames with a space whose tower count the setup's total changed, such spaces (%
            # of all spaces) and how many of them ended with the right count
            "forced_frame_pct": round(100 * self.frames_forced / f, 2),
            "forced_frames": self.frames_forced,
            "forced_space_pct": round(100 * self.spaces_forced / n, 3),
            "forced_spaces": self.spaces_forced,
            "forced_right": self.forced_right,
            # the withheld spaces of the boards emitted by cause, and the frames with each cause
            "withheld_by_kind": {
                k: [self.withheld_kinds[k], self.withheld_kind_frames[k]]
                for k in REASON_KINDS
                if self.withheld_kinds[k]
            },
            "frames_not_read": self.not_read,
            "refused_pct": round(100 * self.not_read / f, 2),
            "wrong_board_pct": round(100 * self.wrong_emitted / f, 2),
            "wrong_boards": self.wrong_emitted,
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
            "reliability": reliability(self.space_conf),
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


def wrong_spaces(truth: Observation, det: Any, where: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The spaces of one frame's full reading (``det.reading``, withheld spaces included) that
    are wrong, each as a record of what was true, what was read and what the detector measured
    there (wizard areas, clipped share, confidence, the neighbours' true tower counts), with
    ``where`` (seed, session, light, ...) copied in. ``det`` is a
    :class:`~companion.vision.detector.Detection`."""
    seen = det.reading
    if seen is None:
        return []
    order = sorted(truth.spaces)
    out: list[dict[str, Any]] = []
    for i, s in enumerate(order):
        t, o = truth.spaces[s], seen.spaces.get(s)
        if o is None or space_right(t, o):
            continue
        d = det.details.get(s)
        near = [truth.spaces[order[(i + k) % len(order)]].towers for k in (-1, 1)]
        out.append(
            dict(where)
            | {
                "space": s,
                "fields": [
                    f
                    for f, bad in (
                        ("towers", o.towers != t.towers),
                        ("top", o.top != t.top),
                        ("wizards", dict(o.wizards) != dict(t.wizards)),
                        ("castle", o.castle != t.castle),
                        ("tokens", o.witch != t.witch or o.raven != t.raven),
                    )
                    if bad
                ],
                "towers": [t.towers, o.towers],
                "top": [t.top, o.top],
                "wizards": [dict(t.wizards), dict(o.wizards)],
                "tokens": [[t.witch, t.raven], [o.witch, o.raven]],
                "castle": t.castle,
                "confidence": o.confidence,
                "withheld": s in det.withheld,
                "neighbour_towers": near,
                "wizard_area": {k: round(v, 2) for k, v in (d.wizard_area if d else {}).items()},
                "wizard_margin": round(d.wizard_margin, 3) if d else None,
                "clipped": round(d.clipped, 3) if d else None,
                "washed": round(d.washed, 3) if d else None,
                "token_sure": round(d.token_sure, 3) if d else None,
            }
        )
    return out


def write_wrong_spaces(path: Path | None, rows: list[dict[str, Any]] | None) -> None:
    """``--wrong-spaces``: one JSON line per wrongly read space (from :func:`wrong_spaces`;
    with ``--conditions`` each is tagged with its condition and severity)."""
    if path is not None and rows is not None:
        with path.open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(w) + "\n" for w in rows)


def parse_seeds(text: str) -> list[int]:
    """``"1001-1010"``, ``"5,7,9"`` or a mix (``"1-3,8"``) -> the seeds, in order.

    :raises ValueError: on anything else, an empty range or a seed below 1.
    """
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = (int(x) for x in part.split("-", 1))
            if b < a:
                raise ValueError(f"empty seed range {part!r}")
            out.extend(range(a, b + 1))
        else:
            out.append(int(part))
    if not out or min(out) < 1:
        raise ValueError(f"seeds must be >= 1, got {text!r}")
    return out


def spread(values: list[float]) -> dict[str, float | None]:
    """Mean, min, max and sample standard deviation (None for one value) of the figures."""
    a = np.array([v for v in values if v is not None and np.isfinite(v)], dtype=np.float64)
    if not len(a):
        return {"mean": None, "min": None, "max": None, "sd": None}
    return {
        "mean": round(float(a.mean()), 3),
        "min": round(float(a.min()), 3),
        "max": round(float(a.max()), 3),
        "sd": round(float(a.std(ddof=1)), 3) if len(a) > 1 else None,
    }
