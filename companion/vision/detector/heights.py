"""Stage: the height of each stack and where the raven castle stands.

For every space and every candidate tier the projected roof rim's edge strength, the colour
shares inside each candidate roof and on each tier's camera-facing wall, and the camera's
elevation go to the height model (:mod:`companion.vision.detect_height`); the heights chosen
are the most probable ones that add up to the towers counted at setup (R-COMP-1/3: every tower
stays on the board). With ``DetectorConfig.height_method = "cnn"`` the per-space probabilities
come from the tower-count CNN on the space's tier-stack ROI (:mod:`companion.vision.stack_cnn`)
instead. Without a model the best tier wins when its edge is strong and stands out.
The raven castle (there is one, R-COMP) is the space whose black body probes score highest at
the tier its roof rim points to, or with ``castle_method = "cnn"`` the space and tier the
raven-castle network (:mod:`companion.vision.castle_cnn`) finds most probable; the network's
tier then joins the counts that add up to the setup's total, and its probabilities are the
castle's confidence.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from companion.vision.castle_cnn import castle_place
from companion.vision.detect_height import PER_TIER
from companion.vision.detector.config import INSERT_KINDS
from companion.vision.detector.frame import FrameProbes, Reader, Stacks
from companion.vision.detector.pose import castle_mask, masked_median, masked_quantile


def joint_heights(
    prob: NDArray[np.float32], fixed: list[bool], total: int
) -> NDArray[np.int32] | None:
    """The most probable heights ``(S,)`` under independent per-space probabilities
    ``prob (S, K + 1)`` whose sum over the spaces not ``fixed`` is ``total`` (dynamic programming
    over spaces and towers used), or None when no such assignment exists."""
    S, C = prob.shape
    if total < 0:
        return None
    logp = np.log(np.maximum(prob.astype(np.float64), 1e-9))
    best = np.full((S + 1, total + 1), -np.inf)
    best[0, 0] = 0.0
    choice = np.zeros((S, total + 1), np.int32)
    n_idx = np.arange(total + 1)[:, None] - np.arange(C)[None, :]  # (total + 1, C): n - k
    valid = n_idx >= 0
    n_safe = np.maximum(n_idx, 0)
    for si in range(S):
        if fixed[si]:
            best[si + 1] = best[si]
            continue
        cand = np.where(valid, best[si][n_safe] + logp[si][None, :], -np.inf)
        j = np.argmax(cand, axis=1)
        best[si + 1] = cand[np.arange(total + 1), j]
        choice[si] = j
    if not np.isfinite(best[S, total]):
        return None
    out = np.zeros(S, np.int32)
    n = total
    for si in range(S - 1, -1, -1):
        if not fixed[si]:
            out[si] = choice[si, n]
            n -= int(out[si])
    return out


def height_features(
    rd: Reader,
    fp: FrameProbes,
    rim: NDArray[np.float32],
    rim_ok: NDArray[np.bool_],
) -> NDArray[np.float32]:
    """Per-space features of :mod:`companion.vision.detect_height`, ``(S, PER_TIER K + 1)``.

    :param rim: ``(S, K, R)`` edge strength at the roof rims of tiers 1..K.
    :param rim_ok: ``(S, K, R)`` the rim points measured (in the frame, off the markers and the
        castle's image).
    """
    ix, tables = rd.classes, fp.tables
    kind_labels, wall_labels = fp.kc, fp.wc
    kind_light, wall_light = fp.kfeat[..., 2], fp.wlight
    S, K = rim.shape[:2]
    med = masked_quantile(rim, rim_ok, 0.5)
    q25 = masked_quantile(rim, rim_ok, 0.25)
    share = rim_ok.sum(-1) / rim_ok.shape[-1]
    s_ok = tables.side_ok & rim_ok[:, :, None, :]
    s_med = masked_quantile(fp.side, s_ok, 0.5)  # (S, K, 2)
    out = np.empty((S, PER_TIER * K + 1), np.float32)
    out[:, 0:K] = med
    out[:, K : 2 * K] = q25
    out[:, 2 * K : 3 * K] = share
    out[:, 3 * K : 4 * K] = s_med[..., 0]
    out[:, 4 * K : 5 * K] = s_med[..., 1]
    kok = tables.kind_ok
    nk = np.maximum(kok.sum(-1), 1)
    out[:, 5 * K : 6 * K] = (ix.roofish[kind_labels + 1] & kok).sum(-1) / nk
    out[:, 6 * K : 7 * K] = (ix.is_track[kind_labels + 1] & kok).sum(-1) / nk
    wok = tables.wall_ok
    nw = np.maximum(wok.sum(-1), 1)
    out[:, 7 * K : 8 * K] = (ix.is_wall[wall_labels + 1] & wok).sum(-1) / nw
    out[:, 8 * K : 9 * K] = (~ix.is_track[wall_labels + 1] & wok).sum(-1) / nw
    lw = masked_quantile(wall_light, wok, 0.5)
    lk = masked_quantile(kind_light, kok, 0.5)
    out[:, 9 * K : 10 * K] = np.clip(lw / np.maximum(lk, 0.02), 0.0, 3.0)
    out[:, PER_TIER * K] = tables.elevation
    return out


def castle_shares(rd: Reader, fp: FrameProbes) -> NDArray[np.floating]:
    """``(S, K + 1)`` share of castle-coloured body probes for the castle standing on tier
    0..K of each space (0 without a castle class)."""
    tables = fp.tables
    if rd.classes.castle_idx >= 0:
        is_c = (fp.cl == rd.classes.castle_idx) & tables.castle_ok
        out: NDArray[np.floating] = is_c.sum(-1) / np.maximum(tables.castle_ok.sum(-1), 1)
        return out
    return np.zeros(tables.castle_ok.shape[:2])


def find_castle(
    rd: Reader, fp: FrameProbes, castle_frac: NDArray[np.floating], insert: NDArray[np.bool_]
) -> dict[int, int]:
    """Where the raven castle stands: ``{space index: tier}``, empty when no space's body
    probes are black enough (``castle_threshold``).

    The castle is black; its tier is where its roof rim is (above it the same black fills every
    probe when seen from above). There is one raven castle (R-COMP): the space where most
    castle probes are black (a dark track or deep shadows can pass the threshold on other
    spaces too); the probes of a tall castle on another space can fall on the real castle's
    image, so each space is scored at the tier its castle-roof rim points to.
    """
    cfg = rd.config
    S, K = rd.geometry.n_spaces, cfg.max_towers
    rim_ok = fp.tables.rim_ok
    castle_edges = masked_median(fp.edges[:, K:], rim_ok[:, K:])
    total = rd.profile.meta.get("towers")
    if isinstance(total, int) and 0 <= total < castle_edges.shape[1] - 1:
        # the castle stands on at most every tower counted at setup (R-COMP-1/3)
        castle_edges = castle_edges.copy()
        castle_edges[:, total + 1 :] = -1.0
    # the castle's roof rim is on a tier where its body's probes are black (another strong
    # edge higher up, the board's edge or a tower behind, is not the castle's rim)
    black = castle_frac >= cfg.castle_threshold
    castle_tier = np.argmax(np.where(black, castle_edges, castle_edges - 1e3), axis=1)
    castle_score = castle_frac[np.arange(S), castle_tier]
    # equal scores (all probes black) go to the lower castle: a tall castle's probes over
    # an empty space fall on the dark table beyond the board, and show no rim edge there
    black_share = castle_score
    castle_score = castle_score - cfg.castle_tier_cost * castle_tier
    rim_edge = castle_edges[np.arange(S), castle_tier]
    castle_score = np.where(
        rim_edge >= cfg.castle_edge_min, castle_score, castle_score - cfg.castle_no_rim
    )
    # nothing ever stands under a tower or the castle on an insert: towers may not end on a
    # fountain (R-MOD-FOUNTAIN-4, -6) and nothing stays on a web (R-MOD-WEB-3)
    castle_score = np.where(insert, -np.inf, castle_score)
    best_castle = int(np.argmax(castle_score)) if S else 0
    return (
        {best_castle: int(castle_tier[best_castle])}
        if S and black_share[best_castle] >= cfg.castle_threshold
        else {}
    )


def tier_inputs(
    rd: Reader, fp: FrameProbes, insert: NDArray[np.bool_]
) -> tuple[dict[int, int], NDArray[np.float32]] | None:
    """The tier stacks of every space that is not an insert, cut once per frame for both
    networks that read them (the castle network reads them all, the tower-count network those
    whose count is its to tell): ``(space index -> row, (N, 3 (K + 1), P, P))`` network input
    (:class:`~companion.vision.stack_cnn.TierCutter`); None without either network."""
    if rd.tier_cut is None:
        return None
    g = rd.geometry
    read = [si for si in range(len(insert)) if not insert[si]]
    x = rd.tier_cut.inputs(fp.frame, fp.pose, g, fp.white, [g.spaces[si] for si in read])
    return {si: i for i, si in enumerate(read)}, x


def castle_network(
    rd: Reader,
    fp: FrameProbes,
    insert: NDArray[np.bool_],
    cut: tuple[dict[int, int], NDArray[np.float32]] | None = None,
) -> tuple[int, NDArray[np.float64], NDArray[np.float64]] | None:
    """Where the raven-castle network (``rd.castle_cnn``) puts the castle: ``(space index,
    place (S,), tier (K + 1,))``, the most probable space, every space's probability of holding
    the castle (0 on the inserts: nothing stays there, R-MOD-FOUNTAIN-4, -6, R-MOD-WEB-3) and
    the probabilities of its base's tier there (none above the towers counted at setup,
    R-COMP-1/3); None without the network or a space to read. ``cut``: the frame's
    :func:`tier_inputs`, when already cut."""
    if rd.castle_cnn is None:
        return None
    read = [si for si in range(len(insert)) if not insert[si]]
    if not read:
        return None
    cut = cut if cut is not None else tier_inputs(rd, fp, insert)
    assert cut is not None  # (a castle network comes with a cutter)
    prob = rd.castle_cnn.probabilities(cut[1][[cut[0][si] for si in read]])
    total = rd.profile.meta.get("towers")
    if isinstance(total, int) and 0 <= total < prob.shape[1] - 2:
        prob = prob.copy()
        prob[:, total + 2 :] = 0.0
    got = castle_place(prob)
    if got is None:
        return None
    row, place_read, tier = got
    place = np.zeros(len(insert))
    place[read] = place_read
    return read[row], place, tier


def _roof_rims(
    rd: Reader, fp: FrameProbes, castle_at: dict[int, int]
) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """``(S, K, R)`` the roof rims' edges and which rim points count: rim points inside the
    castle's image (on other spaces) are left out."""
    K = rd.config.max_towers
    tables = fp.tables
    rim_ok = tables.rim_ok
    if castle_at:
        rim_ok = rim_ok.copy()
        rp = tables.rim_px
        for si, tier in castle_at.items():
            m = castle_mask(rd.geometry, fp.pose, tables, si + 1, tier, fp.shape)
            inside = m[rp[..., 1] // 4, rp[..., 0] // 4] > 0
            inside[si] = False
            rim_ok &= ~inside
    return fp.edges[:, :K], rim_ok[:, :K]


def _model_heights(
    rd: Reader,
    fp: FrameProbes,
    feats: NDArray[np.float32],
    castle_at: dict[int, int],
    insert: NDArray[np.bool_],
    castle_tier: NDArray[np.float64] | None = None,
    cut: tuple[dict[int, int], NDArray[np.float32]] | None = None,
) -> tuple[NDArray[np.int32], NDArray[np.float32], NDArray[np.bool_], NDArray[np.int32]] | None:
    """Tower counts ``(S,)``, their probabilities ``(S,)``, which counts the tower total
    forced ``(S,)`` and the next most probable count ``(S,)`` (the count seen where forced),
    from the height model or the tower-count CNN (None without either): the most probable
    heights that add up to the towers counted at setup (R-COMP-1/3: every tower stays on the
    board), the castle's stack included. A space whose count the total changed is not what the
    camera saw there: its probability is capped at ``forced_confidence`` (no silent
    redistribution). With ``castle_tier`` ``(K + 1,)`` (the castle network's probabilities of
    the castle's tier) the castle's tier is one of those counts, read and forced as the
    others. ``cut``: the frame's :func:`tier_inputs`, when already cut."""
    S = len(insert)
    fixed = [si in castle_at or bool(insert[si]) for si in range(S)]
    joins = castle_tier is not None and len(castle_at) == 1
    if joins:
        fixed = [bool(insert[si]) for si in range(S)]
    if rd.stack_cnn is not None:
        # the network reads the spaces whose count is its to tell: the castle's stack and
        # the inserts' counts are known without it (their rows stay "no tower", unused)
        read = [si for si in range(S) if not fixed[si] and si not in castle_at]
        prob = np.zeros((S, rd.stack_cnn.max_towers + 1), np.float32)
        prob[:, 0] = 1.0
        cut = cut if cut is not None else tier_inputs(rd, fp, insert)
        assert cut is not None  # (a tower-count network comes with a cutter)
        prob[read] = rd.stack_cnn.probabilities(cut[1][[cut[0][si] for si in read]])
    elif rd.height is not None:
        prob = rd.height.probabilities(feats)
    else:
        return None
    if joins:
        assert castle_tier is not None
        prob = prob.copy()
        prob[next(iter(castle_at))] = castle_tier[: prob.shape[1]]
    seen = np.argmax(prob, axis=1).astype(np.int32)
    model_towers = seen
    total = rd.profile.meta.get("towers")
    if isinstance(total, int) and rd.config.joint_towers:
        left = total - (0 if joins else sum(castle_at.values()))
        joint = joint_heights(prob, fixed, left)
        if joint is not None:
            model_towers = joint
    # (the castle's and the inserts' counts are not the model's: never forced)
    forced = (model_towers != seen) & ~np.array(fixed, bool)
    model_conf = prob[np.arange(S), np.minimum(model_towers, prob.shape[1] - 1)]
    model_conf = np.where(
        forced, np.minimum(model_conf, rd.config.forced_confidence), model_conf
    ).astype(np.float32)
    others = prob.copy()
    others[np.arange(S), np.minimum(model_towers, prob.shape[1] - 1)] = -1.0
    rival = np.where(forced, seen, np.argmax(others, axis=1)).astype(np.int32)
    return model_towers, model_conf, forced, rival


def _rule_height(rd: Reader, es: NDArray[np.floating]) -> tuple[int, float]:
    """Tower count and margin by the hand-tuned rim rule: the best tier when its edge is
    strong (``roof_threshold``) and stands out (``roof_contrast``)."""
    cfg = rd.config
    best = int(np.argmax(es))
    srt = np.sort(es)
    contrast = float(srt[-1] - np.median(srt[:-1]))
    if es[best] >= cfg.roof_threshold and contrast >= cfg.roof_contrast:
        return best + 1, float(min(es[best] - cfg.roof_threshold, srt[-1] - srt[-2])) / 20
    return 0, float(cfg.roof_threshold - es[best]) / 20


def stack_heights(rd: Reader, fp: FrameProbes) -> Stacks:
    """The tower count of every space and where the castle stands."""
    g, cfg = rd.geometry, rd.config
    S = g.n_spaces
    if cfg.roof_interior > 0:
        is_r = rd.classes.roofish[fp.kl + 1] & fp.tables.kind_ok
        roofish = is_r.sum(-1) / np.maximum(fp.tables.kind_ok.sum(-1), 1)  # (S, K)
        plausible = roofish >= cfg.roof_interior
    else:
        plausible = np.ones(fp.kl.shape[:2], bool)
    castle_frac = castle_shares(rd, fp)
    insert = np.array([g.track.kind(s) in INSERT_KINDS for s in g.spaces], bool)
    # (the tier stacks both networks read, cut once)
    cut = tier_inputs(rd, fp, insert)
    net = castle_network(rd, fp, insert, cut)
    if net is not None:
        castle_at = {net[0]: int(np.argmax(net[2]))}
    else:
        castle_at = find_castle(rd, fp, castle_frac, insert)
    raw, rim_ok = _roof_rims(rd, fp, castle_at)
    enough = rim_ok.sum(-1) >= rim_ok.shape[-1] // 2
    edges = np.where(enough, masked_median(raw, rim_ok), 0.0)
    feats = height_features(rd, fp, raw, rim_ok)
    model = _model_heights(rd, fp, feats, castle_at, insert, net[2] if net else None, cut)
    if net is not None and model is not None:
        return _castle_net_stacks(rd, net[1], castle_at, insert, model, edges, castle_frac, feats)
    towers_of: list[int] = []
    castle_of: list[bool] = []
    margin_of: list[float] = []
    forced_of = [bool(model[2][si]) if model is not None else False for si in range(S)]
    unsure_total = any(forced_of)
    rival_of = [-1] * S
    for si in range(S):
        if si in castle_at:
            towers, margin = castle_at[si], float(castle_frac[si].max() - cfg.castle_threshold) * 2
            if unsure_total:
                # the castle's tier (read from its roof rim) is one of the counts that did
                # not add up to the setup's tower total: it may be the one that is wrong
                margin = min(margin, cfg.forced_confidence - 0.5)
                forced_of[si] = True
        elif insert[si]:
            towers, margin = 0, 0.5
        elif model is not None:
            towers, margin = int(model[0][si]), float(model[1][si]) - 0.5
            rival_of[si] = int(model[3][si])
        else:
            towers, margin = _rule_height(rd, np.where(plausible[si], edges[si], 0.0))
        towers_of.append(towers)
        castle_of.append(si in castle_at)
        margin_of.append(margin)
    return Stacks(towers_of, castle_of, margin_of, edges, castle_frac, feats, forced_of, rival_of)


def _castle_net_stacks(
    rd: Reader,
    place: NDArray[np.float64],
    castle_at: dict[int, int],
    insert: NDArray[np.bool_],
    model: tuple[NDArray[np.int32], NDArray[np.float32], NDArray[np.bool_], NDArray[np.int32]],
    edges: NDArray[np.floating],
    castle_frac: NDArray[np.floating],
    feats: NDArray[np.float32],
) -> Stacks:
    """The stacks with the castle network's castle: the castle's space is as sure as its place
    (``place (S,)``, each space's probability of holding the castle) and its tier (the joint
    count's probability, capped where the total forced it); every other space's count is as
    sure as its own reading and the castle not standing there."""
    towers, conf, forced, rival = model
    S = len(insert)
    towers_of: list[int] = []
    margin_of: list[float] = []
    rival_of = [-1] * S
    for si in range(S):
        if insert[si]:
            towers_of.append(0)
            margin_of.append(0.5)
            continue
        towers_of.append(int(towers[si]))
        if si in castle_at:
            margin_of.append(float(place[si]) * float(conf[si]) - 0.5)
        else:
            margin_of.append((1.0 - float(place[si])) * float(conf[si]) - 0.5)
            rival_of[si] = int(rival[si])
    castle_of = [si in castle_at for si in range(S)]
    forced_of = [bool(forced[si]) for si in range(S)]
    return Stacks(towers_of, castle_of, margin_of, edges, castle_frac, feats, forced_of, rival_of)
