"""Stage: the top kind of every space (Observation ``top``).

Crest roofs carry a yellow crest disc with a printed raven (dark grey ink), plain roofs
neither. The ink decides first, relative to the bare roof outside the disc on the same roof
(the same light on both): dark grey pixels there say crest, the raven's place in view and bare
says plain. Where wizards hide the raven, the disc's yellow-blue chroma above the bare roof
around it decides, compared with what the crest roofs with their raven in view measure in the
same frame (or the last frames). The magic roof (R-MOD-MAGICTOWER-1) by its colour class. For
an empty space the track kind is a property of the track (crest / plain / fountain / web). The
roof under the raven castle is hidden by it (the castle's base is wider than a roof): its kind
is the one the rules put there (see :func:`top_kinds`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from companion.vision.detector.frame import FrameProbes, Reader, Stacks, TopPixels
from companion.vision.detector.pose import INK_PROBES, N_BARE, N_INNER, N_KIND, short_median
from companion.vision.profile import CHROMA_EPS


def magic_shares(rd: Reader, fp: FrameProbes, st: Stacks) -> dict[int, float]:
    """Space index -> share of its top roof's probes nearest to the magic roof's field or
    merlons (tower tops not under the castle; empty without the magic tower).

    The probes on the ring outside the star's tips and inside the merlons: all field on the
    magic roof (less what wizards hide), bare roof on the others (a crest disc's yellow is
    near the star's, never near the field).
    """
    ix = rd.classes
    if not ix.magic_idx or ix.magic_count is ix.count_profile:
        return {}
    S = len(st.towers_of)
    tops_at = [
        (si, st.towers_of[si] - 1)
        for si in range(S)
        if st.towers_of[si] > 0 and not st.castle_of[si]
    ]
    if not tops_at:
        return {}
    sel = np.array([si for si, _ in tops_at])
    tiers = np.array([t for _, t in tops_at])
    ring = slice(N_KIND, N_KIND + N_BARE)
    mp = fp.tables.kind_px[sel, tiers, ring]  # (n, Q, 2)
    mok = fp.tables.kind_ok[sel, tiers, ring]
    ml = ix.magic_count.classify_bgr(
        fp.frame[mp[..., 1].ravel(), mp[..., 0].ravel()], fp.white
    ).reshape(mok.shape)
    is_m = np.isin(ml, ix.magic_field) & mok
    share = is_m.sum(-1) / np.maximum(mok.sum(-1), 1)
    return {int(si): float(v) for si, v in zip(sel, share, strict=True)}


@dataclass(frozen=True, slots=True)
class _RoofEvidence:
    """What one top roof shows of its crest disc and printed raven.

    :param ink: the decision by the ink (True crest, False plain), None when undecided.
    :param gap: the disc ring's yellow-blue chroma above the bare ring's (None: too few
        probes free of wizards).
    :param fallback: crest by a clear colour vote of the disc ring, else by a little grey ink.
    """

    ink: bool | None
    gap: float | None
    fallback: bool


def _roof_evidence(
    rd: Reader, fp: FrameProbes, si: int, t: int, near_wizard: NDArray[np.bool_]
) -> _RoofEvidence:
    """The crest disc's and the printed raven's evidence on the roof of tier ``t + 1`` of
    space index ``si``."""
    cfg, ix = rd.config, rd.classes
    kl, kc, kfeat = fp.kl, fp.kc, fp.kfeat
    bare = slice(N_KIND, N_KIND + N_BARE)
    okk = fp.tables.kind_ok[si, t]
    # the disc ring (chroma only, without wizard and ink pixels)
    fo = kfeat[si, t, N_INNER:N_KIND]
    use = (
        okk[N_INNER:N_KIND]
        & ~ix.is_wizard[kl[si, t, N_INNER:N_KIND] + 1]
        & ~ix.is_wizard[kc[si, t, N_INNER:N_KIND] + 1]
        & (fo[:, 2] >= cfg.ink_light)
    )
    yellower = fo[:, 1] > ix.disc_yb
    n_crest = int((use & yellower).sum())
    n_plain = int((use & ~yellower).sum())
    fa = kfeat[si, t, bare]
    use_a = okk[bare] & ~ix.is_wizard[kc[si, t, bare] + 1]
    use_g = use & ~near_wizard[si, t, N_INNER:N_KIND]
    use_ga = use_a & ~near_wizard[si, t, bare]
    gap: float | None = None
    if use_g.sum() >= cfg.contrast_probes and use_ga.sum() >= cfg.contrast_probes:
        gap = short_median(fo[use_g, 1]) - short_median(fa[use_ga, 1])
    n_ink = -1
    use_i = okk[INK_PROBES] & ~ix.is_wizard[kc[si, t, INK_PROBES] + 1]
    if use_a.sum() >= cfg.contrast_probes:
        # the raven's ink is far darker than the bare roof (the same light on both)
        # and grey (the shaded side of a wizard is dark but coloured)
        fi = kfeat[si, t, INK_PROBES]
        roof_light = short_median(fa[use_a, 2])
        # (the mean chroma of the dark pixels: single dark pixels are too noisy)
        dark_i = use_i & (fi[:, 2] < cfg.ink_rel * roof_light)
        n_ink = int(dark_i.sum())
        if n_ink:
            m = fi[dark_i, :2].mean(axis=0)
            noise = cfg.count_noise / (3.0 * float(fi[dark_i, 2].mean()) + CHROMA_EPS)
            if math.hypot(*m) > cfg.ink_chroma + 2.0 * noise / math.sqrt(n_ink):
                n_ink = -1  # dark but coloured: the shaded side of a wizard
    # too few probes for the ink or the disc contrast: a clear colour vote of the disc
    # ring, else a little grey ink says crest (dark pixels that are not grey are the
    # shaded sides of the wizards crowding the roof)
    fallback = (
        n_crest > n_plain if abs(n_crest - n_plain) >= cfg.disc_votes else n_ink >= cfg.ink_fallback
    )
    ink: bool | None = None
    if n_ink >= cfg.ink_min or (n_ink == 0 and use_i.sum() >= cfg.ink_probes):
        ink = n_ink > 0
    return _RoofEvidence(ink, gap, fallback)


def _magic_at(rd: Reader, magic_share: Mapping[int, float]) -> int:
    """Space index of the one magic tower (R-MOD-MAGICTOWER-1), always the top of its stack
    (R-MOD-MAGICTOWER-3): the roof where the most probes take the magic roof's colours
    (nearest class: under a game frame's light its blue drifts out of the setup's tight
    prototype; a blue wizard on a crest disc's yellow looks like its two colours too); -1
    when none shows ``magic_min`` of them."""
    if magic_share:
        best = max(magic_share, key=lambda k: magic_share[k])
        if magic_share[best] >= rd.config.magic_min:
            return best
    return -1


def top_kinds(
    rd: Reader, fp: FrameProbes, st: Stacks, px: TopPixels, magic_share: Mapping[int, float]
) -> tuple[list[str], list[float]]:
    """Top kind of every space (Observation ``top``).

    The magic roof by its colour class. Crest or plain: the printed raven's ink (dark grey
    pixels far below the bare roof's lightness) says crest; the raven's place in view and
    bare says plain. Where wizards hide the raven, the crest disc's colour decides: its
    yellow-blue chroma above the bare roof around it, compared with the roofs of the same
    frame whose raven decided (same light, white balance and clipping), else with the
    setup frame's disc and roof colours, else a little grey ink. Appends this frame's crest
    contrasts to ``rd.crest_gaps``.

    :param magic_share: from :func:`magic_shares`.
    :returns: the top kinds and, per space, how sure the kind is (0.5..1): 1 for the track
        and the magic roof, ``ink_sure`` where the ink decided and the disc's colour agrees,
        by the disc contrast's distance from the middle between the frame's plain and crest
        roofs where that decided, ``fallback_sure`` where only a colour vote or a little
        ink did; a roof under the raven castle is crest, ``castle_roof_sure`` (the rules'
        kind, unseen), ``fallback_sure`` when the magic tower is in play and not seen on
        another roof.
    """
    g, cfg = rd.geometry, rd.config
    tops: list[str] = []
    sure: list[float] = []
    pending: dict[int, tuple[float | None, bool]] = {}
    decided: dict[int, float] = {}
    ref: dict[bool, list[float]] = {True: [], False: []}
    magic_at = _magic_at(rd, magic_share)
    for si, space in enumerate(g.spaces):
        towers, castle = st.towers_of[si], st.castle_of[si]
        sure.append(1.0)
        if towers == 0:
            tops.append(g.track.kind(space))
            continue
        if si == magic_at:
            tops.append("magic")
            continue
        if castle:
            # the castle's base is wider than a roof and hides it: the castle stops only on
            # a crest top (R-RAVEN-3) and keeps its roof when it rides along (R-RAVEN-5);
            # only a cast of R-SPELL-10 leaves it on another roof. The magic tower is always
            # the top of its stack (R-MOD-MAGICTOWER-3): in play and seen nowhere else, it
            # may be the roof under the castle, which is then unsure.
            tops.append("crest")
            hidden_magic = bool(rd.classes.magic_idx) and magic_at < 0
            sure[si] = cfg.fallback_sure if hidden_magic else cfg.castle_roof_sure
            continue
        ev = _roof_evidence(rd, fp, si, towers - 1, px.near_wizard)
        if ev.ink is not None:
            if ev.gap is not None:
                ref[ev.ink].append(ev.gap)
                decided[si] = ev.gap
            tops.append("crest" if ev.ink else "plain")
            sure[si] = cfg.ink_sure
        else:
            tops.append("")
            pending[si] = (ev.gap, ev.fallback)
    # a plain roof's disc ring and bare ring are the same surface (gap ~ 0); a crest roof's
    # gap is what the crest roofs with their raven in view measure in this frame (or in
    # the last frames: the light changes slowly)
    rd.crest_gaps.extend(ref[True])
    del rd.crest_gaps[: -cfg.gap_memory]
    crest_ref = ref[True] or rd.crest_gaps
    m_crest = float(np.median(crest_ref)) if crest_ref else None
    m_plain = float(np.median(ref[False])) if ref[False] else 0.0
    for si, (gap, fallback) in pending.items():
        crest = fallback
        sure[si] = cfg.fallback_sure
        if gap is not None and m_crest is not None and m_crest > m_plain:
            crest = gap >= (m_crest + m_plain) / 2
            ratio = (gap - m_plain) / (m_crest - m_plain)
            sure[si] = float(np.clip(0.5 + abs(ratio - 0.5), 0.5, 1.0))
        tops[si] = "crest" if crest else "plain"
    if m_crest is not None and m_crest > m_plain:
        # a clear disc contrast overrules the ink: a wizard's shadow next to it on a plain
        # roof is dark and nearly grey, and the disc around a hidden raven is still there
        for si, gap in decided.items():
            ratio = (gap - m_plain) / (m_crest - m_plain)
            kind = tops[si]
            if ratio < cfg.gap_clear:
                tops[si] = "plain"
            elif ratio > 1.0 - cfg.gap_clear:
                tops[si] = "crest"
            if tops[si] != kind:
                sure[si] = float(np.clip(0.5 + abs(ratio - 0.5), 0.5, 1.0))
            elif (ratio < 0.5) != (kind == "plain"):
                # the ink and the disc's colour disagree: the ink decides, unsure
                sure[si] = cfg.fallback_sure
    return tops, sure


def crest_disc_yb(rd: Reader, fp: FrameProbes, st: Stacks, tops: list[str]) -> float | None:
    """Median yellow-blue chroma of the crest discs of this frame: the disc-ring probes of
    the roofs read crest (not under the castle), without wizard-labelled or dark probes.
    None without the raven token in play or with fewer than ``contrast_probes`` probes."""
    ix = rd.classes
    if "raven" not in ix.token_idx:
        return None
    disc = slice(N_INNER, N_KIND)
    vals: list[NDArray[np.float32]] = []
    for si, top in enumerate(tops):
        if top != "crest" or st.castle_of[si] or st.towers_of[si] == 0:
            continue
        t = st.towers_of[si] - 1
        fo = fp.kfeat[si, t, disc]
        use = (
            fp.tables.kind_ok[si, t, disc]
            & ~ix.is_wizard[fp.kl[si, t, disc] + 1]
            & ~ix.is_wizard[fp.kc[si, t, disc] + 1]
            & (fo[:, 2] >= rd.config.ink_light)
        )
        vals.append(fo[use, 1])
    allv = np.concatenate(vals) if vals else np.zeros(0, np.float32)
    if len(allv) < rd.config.contrast_probes:
        return None
    return float(np.median(allv))
