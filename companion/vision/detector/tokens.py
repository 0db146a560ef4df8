"""Stage: the expansion's witch and raven tokens (R-MOD-WITCH-1, R-MOD-RAVEN-1).

The one witch and the one raven are the spaces where most of their colour shows (the raven: its
white disc next to the grey ink of its printed raven, after the frame's colour drift against the
setup is taken off, and whiter than this frame's crest discs); the raven is never covered
(R-MOD-RAVEN-7). A roof under the raven token is crest when the roof just outside the token is
yellower than its bare rim (the crest disc is wider than the token). With the token network
(``DetectorConfig.token_method = "cnn"``, :mod:`companion.vision.token_cnn`) each token goes
where the network finds it likeliest instead, and how sure that is joins the confidence of
every space that may hold it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import SpaceObservation
from companion.vision.detector.config import SpaceDetail
from companion.vision.detector.frame import FrameProbes, Reader, TopPixels
from companion.vision.detector.pose import (
    N_BARE,
    N_KIND,
    TOKEN_MARGIN_MM,
    TOKEN_RING,
    Hull,
    project,
    short_median,
)
from companion.vision.profile import CHROMA_EPS, MIN_LIGHT, features
from companion.vision.token_cnn import TOKENS, TokenModel, token_sureness


def track_drift(
    rd: Reader, fp: FrameProbes, px: TopPixels
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """How far this frame's track colour lies from the setup frame's (every hull's track
    pixels; ``(3,)`` features, 0 with fewer than 50 of them), and the colour features ``(N, 3)``
    of all hulls' pixels (zeros: not measured). Measured only with the raven token in play."""
    drift = np.zeros(3, np.float32)
    feats_all = np.zeros((len(px.labels), 3), np.float32)
    ix = rd.classes
    if "raven" in ix.token_idx and len(px.labels):
        feats_all = features(fp.frame[px.ys, px.xs], fp.white)
        on_track = px.labels == ix.track_idx
        if ix.track_idx >= 0 and int(on_track.sum()) >= 50:
            now = np.median(feats_all[on_track][::4], axis=0)
            drift = (now - rd.profile.classes["track"].mean).astype(np.float32)
    return drift, feats_all


def token_areas(
    rd: Reader,
    hh: Hull,
    lab: NDArray[np.int32],
    counts: NDArray[np.intp],
    drift: NDArray[np.float32],
    feats: NDArray[np.float32],
    disc_yb: float | None,
) -> dict[str, float]:
    """Token -> area on one top surface in units of one token's projected area.

    :param counts: pixels per class (nearest-class labels) in the surface's hull.
    :param feats: ``(N, 3)`` colour features of the hull's pixels.
    """
    areas: dict[str, float] = {}
    for tok, ti in rd.classes.token_idx.items():
        if tok == "raven":
            areas[tok] = raven_area(rd, hh, lab, hh[3], drift, feats, disc_yb)
        else:
            areas[tok] = float(counts[ti] / hh[3])
    return areas


@dataclass(frozen=True)
class TokenReading:
    """The token network's reading of a frame (:func:`learned_tokens`).

    :param present: token in play -> space -> probability that it stands on that top.
    :param crest: space -> probability that its top, if a crest or plain roof, is crest.
    """

    present: dict[str, dict[int, float]]
    crest: dict[int, float]


def learned_tokens(
    model: TokenModel,
    rd: Reader,
    spaces: list[int],
    x: NDArray[np.float32],
    tops: list[str],
) -> TokenReading:
    """The token network's reading (:mod:`companion.vision.token_cnn`; one batched forward pass
    of the top-surface stacks ``x`` of ``spaces``, which leave out the webs: nothing stays on
    a web, R-MOD-WEB-3, :func:`~companion.vision.detector.wizards.top_inputs`) of the tokens in
    play. Without tokens in play (the base game) only the
    crest and plain roofs are read, for the roof head (the check of the roof's kind).

    :param tops: the top kind read on every space (in ``rd.geometry.spaces`` order).
    """
    g = rd.geometry
    kind = dict(zip(g.spaces, tops, strict=True))
    roofs_only = not rd.classes.tokens  # no token in play: only the roof head is wanted
    keep = [i for i, s in enumerate(spaces) if not roofs_only or kind[s] in ("crest", "plain")]
    if not keep:
        return TokenReading({}, {})
    p = model.read(x[keep])
    present: dict[str, dict[int, float]] = {}
    for tok in rd.classes.tokens:
        k = TOKENS.index(tok)
        present[tok] = {spaces[i]: float(p[j, k]) for j, i in enumerate(keep)}
    crest = {spaces[i]: float(p[j, len(TOKENS)]) for j, i in enumerate(keep)}
    return TokenReading(present, crest)


def place_tokens(
    rd: Reader,
    fp: FrameProbes,
    out: dict[int, SpaceObservation],
    details: dict[int, SpaceDetail],
    drift: NDArray[np.float32],
    learned: TokenReading | None = None,
) -> tuple[dict[int, float], dict[int, float]]:
    """Put, in place, the one witch and the one raven token on their spaces (R-MOD-WITCH-1,
    R-MOD-RAVEN-1); the raven is never covered (R-MOD-RAVEN-7).

    Without ``learned`` each goes where the most of its colour shows, and a roof under the
    raven is read again (:func:`kind_under_token`). With ``learned`` (the token network's
    reading, :func:`learned_tokens`) each goes where the network finds it likeliest
    (:func:`~companion.vision.token_cnn.token_sureness`: the raven always on one space, the
    witch only when likelier there than not), and a crest or plain roof under a token is read
    by the network's roof head.

    :returns: space -> how sure (0..1) its token reading is, for the spaces the network read,
        and space -> how sure the kind of a roof under a token is, where the network read it
        (both empty without ``learned``).
    """
    g, cfg = rd.geometry, rd.config
    places: dict[str, int] = {}
    sure_of: dict[int, float] = {}
    roof_sure: dict[int, float] = {}
    if learned is None:
        for tok in rd.classes.token_idx:
            best = max(g.spaces, key=lambda n: details[n].wizard_area.get(tok, 0.0))
            need = cfg.raven_min if tok == "raven" else cfg.token_min
            if details[best].wizard_area.get(tok, 0.0) >= need:
                places[tok] = best
    else:
        for tok, present in learned.present.items():
            on, sure = token_sureness(present, always_shown=tok == "raven")
            if on is not None:
                places[tok] = on
            for s, v in sure.items():
                sure_of[s] = min(sure_of.get(s, 1.0), v)
    for tok, best in places.items():
        o = replace(out[best], raven=True) if tok == "raven" else replace(out[best], witch=True)
        if o.top in ("crest", "plain"):
            if learned is not None and best in learned.crest:
                pc = learned.crest[best]
                o = replace(o, top="crest" if pc >= 0.5 else "plain")
                roof_sure[best] = max(pc, 1.0 - pc)
            elif tok == "raven":
                kind = kind_under_token(rd, fp, best, o.towers, drift)
                if kind is not None:
                    o = replace(o, top=kind)
        out[best] = o
    return sure_of, roof_sure


def raven_area(
    rd: Reader,
    hull: Hull,
    lab: NDArray[np.int32],
    one_tok: float,
    drift: NDArray[np.float32],
    feats: NDArray[np.float32],
    disc_yb: float | None = None,
) -> float:
    """The raven token's white disc on a top surface, in token areas: pixels of the
    profile's ``raven`` class (its own tight spread: the disc is near the sandy track's and
    a plain roof's colour) within a token's radius of the dark printed raven on it (grey
    ink, not a wizard's or the witch's colour). 0 without such pixels.

    :param hull: the top surface's ``(ys, xs, one wizard, one token)`` (sampled pixels).
    :param lab: nearest-class labels of the hull's pixels.
    :param drift: ``(3,)`` how far the track's colour features of this frame lie from the
        profile's (another light than the setup frame's); taken off before the white disc
        is looked for.
    :param feats: ``(N, 3)`` colour features of the hull's pixels.
    :param disc_yb: yellow-blue chroma of the crest roofs' discs in this frame (None: not
        measured).
    """
    cfg = rd.config
    ys, xs = hull[0], hull[1]
    light = feats[:, 2]
    if not bool((light < cfg.raven_ink).any()):
        return 0.0
    # grey: a wizard's shaded side is dark but coloured (a dark pixel's chroma is noisy)
    noise = cfg.count_noise / (3.0 * np.maximum(light, 0.0) + CHROMA_EPS)
    grey = np.hypot(feats[:, 0], feats[:, 1]) <= cfg.ink_chroma + noise
    ink = (light < cfg.raven_ink) & (light >= MIN_LIGHT) & grey & ~rd.classes.is_wizard[lab + 1]
    if "witch" in rd.classes.token_idx:
        ink &= lab != rd.classes.token_idx["witch"]
    if not ink.any():
        return 0.0
    step = cfg.pixel_step
    gy = (ys - ys.min()) // step
    gx = (xs - xs.min()) // step
    grid = np.zeros((int(gy.max()) + 1, int(gx.max()) + 1), np.uint8)
    grid[gy[ink], gx[ink]] = 1
    r = max(1, int(round(math.sqrt(one_tok / math.pi))))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    # (only the light pixels near the ink can be the disc: the rest is not classified)
    near = (cv2.dilate(grid, kernel)[gy, gx] > 0) & (light >= 2.0 * cfg.raven_ink)
    if float(near.sum()) < cfg.raven_min * one_tok:
        return 0.0
    pale = rd.classes.token_profile.classify(feats[near] - drift)[0] == rd.classes.token_raven
    if disc_yb is not None:
        # a crest roof's disc beside its printed raven is pale and yellow: nearer (in
        # yellow-blue) to the crest discs of this frame than to the token's white, it is
        # not the token (an over-exposed frame makes the disc as light as the token)
        white_yb = float(rd.profile.classes["raven"].mean[1] + drift[1])
        if disc_yb > white_yb:
            pale &= feats[near, 1] < (white_yb + disc_yb) / 2
    return float(pale.sum() / one_tok)


def kind_under_token(
    rd: Reader,
    fp: FrameProbes,
    space: int,
    towers: int,
    drift: NDArray[np.float32],
) -> str | None:
    """Crest or plain for a roof the raven token stands on: the token's printed raven and
    white disc hide the roof's middle (the ink and the disc ring probes see the token), but
    the crest disc is wider than the token: a ring just outside the token is yellower than
    the bare roof further out on a crest roof, not on a plain one (the probes inside the
    disc's least radius and clear of the token, which stands off the middle beside
    wizards). None when too few of those or of the bare ring's probes are free of
    wizards.

    :param drift: the frame's colour drift against the setup (see :func:`raven_area`)."""
    g, cfg = rd.geometry, rd.config
    frame, pose, white = fp.frame, fp.pose, fp.white
    si = g.spaces.index(space)
    kfeat, kc = fp.kfeat[si, towers - 1], fp.kc[si, towers - 1]
    if not math.isfinite(rd.classes.disc_yb) or rd.classes.disc_gap <= 0:
        return None
    c = g.space_centre(space)
    r0 = g.tower.roof_diameter / 2
    # probes inside the crest disc's least radius, on rings round the roof's middle
    a = np.linspace(0.0, 2 * math.pi, 24, endpoint=False)
    rad = np.repeat(np.array([0.15, 0.3, 0.45, TOKEN_RING]) * r0, len(a))
    ang = np.tile(a, 4)
    xy = np.column_stack([c[0] + rad * np.cos(ang), c[1] + rad * np.sin(ang)])
    pts = np.column_stack([xy, np.full(len(xy), g.tier_z(towers) + 0.2)])
    q = np.round(project(pose, pts)).astype(np.int32)
    h, w = frame.shape[:2]
    ok = (q[:, 0] >= 0) & (q[:, 0] < w) & (q[:, 1] >= 0) & (q[:, 1] < h)
    if not ok.any():
        return None
    xy, q = xy[ok], q[ok]
    px = frame[q[:, 1], q[:, 0]]
    f = features(px, white)
    # the token's middle: where its white disc shows (beside wizards it stands off the
    # roof's middle); the probes further from it than its radius and a margin remain
    tok = rd.classes.token_profile.classify(f - drift)[0] == rd.classes.token_raven
    centre = xy[tok].mean(axis=0) if int(tok.sum()) >= 4 else c
    clear = g.raven.diameter / 2 + TOKEN_MARGIN_MM
    keep = np.hypot(*(xy - centre).T) > clear
    px, f = px[keep], f[keep]
    near = rd.classes.magic_count.classify_bgr(px, white)
    use = ~rd.classes.is_wizard[near + 1] & (f[:, 2] >= cfg.ink_light)
    bare = slice(N_KIND, N_KIND + N_BARE)
    fa = kfeat[bare]
    use_a = ~rd.classes.is_wizard[kc[bare] + 1] & (fa[:, 2] >= cfg.ink_light)
    if use.sum() < cfg.contrast_probes or use_a.sum() < cfg.contrast_probes:
        return None
    gap = short_median(f[use, 1]) - short_median(fa[use_a, 1])
    return "crest" if gap > cfg.token_ring_gap * rd.classes.disc_gap else "plain"
