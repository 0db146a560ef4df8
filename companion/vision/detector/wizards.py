"""Stage: the wizards on every top surface (and the pixels the token stage reads).

The pixels of the projected cylinder the wizards stand in are labelled by the nearest class of
the profile with one shared spread and no reject (a blurred edge pixel counts for the wizard
when it is more than half wizard, which keeps the area unbiased; a dark pixel's noisy chroma
weighs less); per colour the wizard-coloured area divided by the projected area of one wizard
gives the count (<= 6 in total, R-WIZ-4); where hulls overlap in the image the higher top
surface owns the pixels; on crest tops the colour nearest the disc loses the disc's share
(``crest_leak``); a faint colour next to its hard-pair partner (yellow/orange, red/orange,
blue/purple) is the partner's shading and is dropped. On fountains and magic roofs those
surfaces' colours are measured in the frame before wizards are counted (the merlons are no
purple wizard, the star no yellow one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import MAX_WIZARDS_ON_TOP
from companion.vision.detector.classes import NearestClass
from companion.vision.detector.config import HARD_PAIRS, DetectorConfig
from companion.vision.detector.frame import FrameProbes, Reader, Stacks, TopPixels
from companion.vision.detector.pose import Hull, hull, owners
from companion.vision.profile import features
from companion.vision.wizard_cnn import TopSampler, WizardModel, choose_counts, n_cues

WizardReader = Callable[
    [Mapping[int, NDArray[np.float32]]], dict[int, tuple[dict[str, int], float]]
]
"""The wizard network on a frame's tops, given the colour areas' measurements of each
(:func:`~companion.vision.wizard_cnn.hand_cues`): space -> (colour -> count, how sure)."""


def hull_labels(
    rd: Reader,
    frame: NDArray[np.uint8],
    ys: NDArray[np.int32],
    xs: NDArray[np.int32],
    white: NDArray[np.float64],
) -> NDArray[np.int32]:
    idx = rd.classes.count_profile.classify_bgr(frame[ys, xs].reshape(-1, 3), white)
    return idx.reshape(np.shape(ys))


def local_mark(
    rd: Reader,
    px: NDArray[np.uint8],
    lab: NDArray[np.int32],
    white: NDArray[np.float64],
    idx: tuple[int, ...] = (),
    rounds: int = 1,
    counter: NearestClass | None = None,
) -> NDArray[np.int32]:
    """Labels of an empty crest space's pixels ``(N, 3) uint8`` with the crest mark's
    colour measured on that space: the printed mark under this frame's light can look
    nearer to a wizard colour than the setup frame's mark did (an orange wizard read on
    an empty mark). Needs ``mark_min`` pixels labelled mark.

    :param idx: the surface classes measured (default the crest mark; a fountain insert's
        water and the magic roof's two colours look like a blue or purple wizard under some
        lights).
    :param rounds: measurements in turn, each from the pixels the last one labelled that
        surface (the measured colour moves to the surface's colour in this frame).
    :param counter: the labelling ``lab`` came from (default the detector's).
    """
    idx = idx or (rd.classes.mark_idx,)
    counter = counter or rd.classes.count_profile
    if not bool(rd.classes.is_wizard[lab + 1].any()):
        return lab
    feats = features(px, white)
    means = counter.means.copy()
    for _ in range(rounds):
        moved = False
        for i in idx:
            mine = lab == i
            if int(mine.sum()) >= rd.config.mark_min:
                means[i] = np.median(feats[mine], axis=0)
                moved = True
        if not moved:
            break
        lab, _ = counter.classify_means(feats, means)
    return lab


def thin_out(
    rd: Reader,
    hull: Hull,
    lab: NDArray[np.int32],
    surface: int,
) -> NDArray[np.int32]:
    """Wizard labels whose blob is nowhere two sampled pixels wide become ``surface``: the
    blurred rim of a printed insert's artwork mixes its colours into thin curves that look
    like a wizard colour; a wizard is several sampled pixels wide."""
    wiz = rd.classes.is_wizard[lab + 1]
    if not wiz.any():
        return lab
    ys, xs = hull[0], hull[1]
    step = rd.config.pixel_step
    gy = (ys - ys.min()) // step
    gx = (xs - xs.min()) // step
    keep = np.zeros(len(lab), bool)
    kernel = np.ones((2, 2), np.uint8)
    for ci in np.unique(lab[wiz]):
        grid = np.zeros((int(gy.max()) + 1, int(gx.max()) + 1), np.uint8)
        mine = lab == ci
        grid[gy[mine], gx[mine]] = 1
        opened = cv2.morphologyEx(grid, cv2.MORPH_OPEN, kernel)
        # whole blobs stay (a wizard's blurred edge is its own area), thin ones go
        n, comp = cv2.connectedComponents(grid, connectivity=8)
        solid = np.zeros(n, bool)
        solid[np.unique(comp[opened > 0])] = True
        solid[0] = False
        keep |= mine & solid[comp[gy, gx]]
    out = lab.copy()
    out[wiz & ~keep] = surface
    return out


def label_tops(rd: Reader, fp: FrameProbes, st: Stacks) -> TopPixels:
    """One classification for the pieces on every top surface.

    Where two hulls overlap in the image the pixel shows the higher top surface's pieces (a
    tall stack's wizards rise in front of the spaces behind it).
    """
    g, cfg = rd.geometry, rd.config
    frame = fp.frame
    hulls: list[Hull | None] = []
    for si, space in enumerate(g.spaces):
        if st.castle_of[si]:
            hulls.append(None)
            continue
        hulls.append(hull(g, cfg, fp.pose, fp.tables, space, st.towers_of[si], fp.shape))
    owner = owners(g, fp.tables, st.towers_of, st.castle_of, fp.shape)
    for si, hh in enumerate(hulls):
        if hh is not None and len(hh[0]):
            keep = owner[hh[0], hh[1]] == si
            hulls[si] = (hh[0][keep], hh[1][keep], hh[2], hh[3])
    ys_all = [h[0] for h in hulls if h is not None]
    xs_all = [h[1] for h in hulls if h is not None]
    ys = np.concatenate(ys_all) if ys_all else np.zeros(0, np.int32)
    xs = np.concatenate(xs_all) if xs_all else np.zeros(0, np.int32)
    lab_all = hull_labels(rd, frame, ys, xs, fp.white) if ys_all else np.zeros(0, np.int32)
    # roof probes next to a wizard's pixels: its blurred edge (less than half wizard, so
    # not labelled wizard) tints them towards its colour
    step = cfg.pixel_step
    near = np.zeros((frame.shape[0] // step + 2, frame.shape[1] // step + 2), np.uint8)
    if len(lab_all):
        is_w = rd.classes.is_wizard[lab_all + 1]
        near[ys[is_w] // step, xs[is_w] // step] = 1
        near = cv2.dilate(near, np.ones((3, 3), np.uint8))
    kp = fp.tables.kind_px
    kn = near[kp[..., 1] // step, kp[..., 0] // step] > 0
    return TopPixels(hulls, lab_all, ys, xs, kn)


def surface_labels(
    rd: Reader, fp: FrameProbes, top: str, hh: Hull, lab: NDArray[np.int32]
) -> NDArray[np.int32]:
    """The labels of a top surface's pixels with the surface's own colours measured in this
    frame: the magic roof's (in reach only there), a crest space's mark and a fountain's
    water; thin wizard-coloured curves on a magic roof or fountain go to the surface."""
    cfg, ix = rd.config, rd.classes
    frame, white = fp.frame, fp.white
    n_px = len(hh[0])
    if top == "magic" and ix.magic_count is not ix.count_profile and n_px:
        px = frame[hh[0], hh[1]]
        lab = ix.magic_count.classify_bgr(px, white)
        lab = local_mark(rd, px, lab, white, ix.magic_idx, cfg.fountain_rounds, ix.magic_count)
        if cfg.fountain_open:
            lab = thin_out(rd, hh, lab, ix.magic_idx[0])
    if top == "crest-space" and ix.mark_idx >= 0 and n_px:
        lab = local_mark(rd, frame[hh[0], hh[1]], lab, white)
    elif top == "fountain" and ix.fountain_idx >= 0 and n_px:
        lab = local_mark(
            rd, frame[hh[0], hh[1]], lab, white, (ix.fountain_idx,), cfg.fountain_rounds
        )
        if cfg.fountain_open:
            lab = thin_out(rd, hh, lab, ix.fountain_idx)
    return lab


def wizard_areas(
    rd: Reader, top: str, counts: NDArray[np.intp], one_wiz: float
) -> tuple[dict[str, int], dict[str, float]]:
    """The wizards on one top surface: colour -> count, and colour -> area in units of one
    wizard's projected area.

    :param counts: pixels per class (nearest-class labels) in the surface's hull.
    :param one_wiz: one wizard's projected area there (sampled pixels).
    """
    cfg, ix = rd.config, rd.classes
    wizards: dict[str, int] = {}
    areas: dict[str, float] = {}
    crest_top = top in ("crest", "crest-space")
    for colour, ci in ix.wizard_idx.items():
        a = counts[ci] / one_wiz
        if crest_top and colour == ix.disc_colour:
            # the yellow crest disc / mark under the wizards shades into this colour
            leak = cfg.crest_leak if top == "crest" else cfg.mark_leak
            a = max(a - leak, 0.0)
        elif top == "magic" and ci in ix.magic_like_wizards:
            # the magic roof's star and field shade into the nearest wizard colours
            a = max(a - cfg.magic_leak, 0.0)
        areas[colour] = float(a)
        n = int(math.floor(a + 1.0 - cfg.wizard_min)) if a >= cfg.wizard_min else 0
        if n:
            wizards[colour] = n
    return wizards, areas


def settle_wizards(rd: Reader, wizards: dict[str, int], areas: dict[str, float]) -> None:
    """Drop, in place, a faint colour next to its stronger hard-pair partner (its shading),
    then the most over-counted colour until at most 6 stand on the top (R-WIZ-4)."""
    for a_, b_ in HARD_PAIRS:
        for weak, strong in ((a_, b_), (b_, a_)):
            if (
                weak in wizards
                and strong in wizards
                and areas[weak] < rd.config.hard_pair_min
                and areas[strong] > areas[weak]
            ):
                del wizards[weak]
    while sum(wizards.values()) > MAX_WIZARDS_ON_TOP:
        worst = max(wizards, key=lambda c: wizards[c] - areas[c])
        wizards[worst] -= 1
        if wizards[worst] == 0:
            del wizards[worst]


def top_inputs(
    sampler: TopSampler, rd: Reader, fp: FrameProbes, st: Stacks
) -> tuple[list[int], NDArray[np.float32]]:
    """The spaces not under the raven castle and not a web (nothing stays on a web,
    R-MOD-WEB-3) and their top-surface stacks at the tower counts read, as the input of the
    wizard and the token networks (:mod:`companion.vision.wizard_cnn`; one resampling for
    both)."""
    g = rd.geometry
    keep = [
        (si, s)
        for si, s in enumerate(g.spaces)
        if not st.castle_of[si] and g.track.kind(s) != "web"
    ]
    spaces = [s for _, s in keep]
    tiers = [st.towers_of[si] for si, _ in keep]
    return spaces, sampler.inputs(fp.frame, fp.pose, g, fp.white, spaces, tiers)


def learned_wizards(
    model: WizardModel,
    rd: Reader,
    spaces: list[int],
    x: NDArray[np.float32],
    cues: Mapping[int, NDArray[np.float32]],
) -> dict[int, tuple[dict[str, int], float]]:
    """The wizards on the top surfaces of ``spaces`` from the wizard network (one batched
    forward pass of their inputs ``x``, :func:`top_inputs`, and the colour areas'
    measurements ``cues``: space -> ``(n_cues(),)``, zeros for a space without them): space ->
    (colour -> count among the profile's colours, how sure that is 0..1)."""
    c = np.zeros((len(spaces), n_cues()), np.float32)
    for i, s in enumerate(spaces):
        if s in cues:
            c[i] = cues[s]
    probs = model.probabilities(x, c)
    colours = list(rd.classes.wizard_idx)
    return {s: choose_counts(p, colours) for s, p in zip(spaces, probs, strict=True)}


def wizard_margin(
    areas: Mapping[str, float],
    wizard_min: float,
    unknown: float = 0.0,
    inflated: Mapping[str, float] | None = None,
) -> float:
    """How far (in wizards) the wizard areas of a top are from the nearest count boundary
    (``wizard_min``, ``1 + wizard_min``, ...): 0 on a boundary, about 0.5 at best.

    :param unknown: area of the top's clipped pixels, in wizards: what they hide may belong
        to any colour, so each colour's distance to the boundary above shrinks by it (a
        colour with no area included: clipped pixels are unknown, never "no wizard").
    :param inflated: colour -> area (wizards) the surface under the wizards may add to that
        colour beyond what was subtracted for it: its distance to the boundary below shrinks.
    """
    m = 0.5
    for c, a in areas.items():
        frac = (a - wizard_min) % 1.0
        down = frac - (inflated or {}).get(c, 0.0) if a >= wizard_min else frac
        m = min(m, down, 1.0 - frac - unknown)
    return float(max(m, 0.0))


OVERCOUNTED_TOPS = frozenset({"crest", "crest-space", "fountain"})
"""Tops whose printed colours run into the colour areas and only ever add to a wizard colour's
area: the crest disc and mark (yellow, orange, red, purple) on a crest roof or crest space, the
water of a fountain (blue). The areas over-count there; the network sees the pieces' shapes
(``DetectorConfig.wizard_fewer_sure``)."""


def fused_wizards(
    reading: tuple[dict[str, int], float],
    hand: Mapping[str, int],
    unknown: float,
    cfg: DetectorConfig,
    top: str,
) -> tuple[dict[str, int], float]:
    """The wizard network's counts on a top (``reading``: counts, how sure) and the margin
    (wizards) that gives its sureness through ``wizard_margin_gain``, less the clipped pixels'
    area ``unknown`` (what they hide is unknown). Where the colour areas counted ``hand``
    otherwise, the margin is at most the one of ``cfg.wizard_disagree`` (1: no bound), unless
    the top ``top`` (its kind, e.g. ``"crest-space"``) has printed colours the areas take for
    wizards (:data:`OVERCOUNTED_TOPS`), the network counts only fewer than the areas and is at
    least ``cfg.wizard_fewer_sure`` sure."""
    wizards, p = reading
    gain = cfg.wizard_margin_gain
    margin = max(min((p - 0.5) / gain, 0.5 - unknown), 0.0)
    counted = {c: n for c, n in hand.items() if n > 0}
    if cfg.wizard_disagree < 1.0 and wizards != counted:
        fewer = top in OVERCOUNTED_TOPS and all(n <= counted.get(c, 0) for c, n in wizards.items())
        if not (fewer and p >= cfg.wizard_fewer_sure):
            margin = min(margin, (cfg.wizard_disagree - 0.5) / gain)
    return wizards, margin
