"""Keeping the colour profile current from the boards the tracker commits.

The setup frame is the first labelled example of this camera, these pieces and this light
(:mod:`companion.vision.profile_fit`). Every board the tracker later commits is labelled too:
it says what stands on every space, hidden wizards aside. The light at a table drifts through
an evening (the sun sets, a lamp is switched on, the camera's white balance creeps), so the
colours the detector compares with should follow it.

:func:`learn_from_board` samples one frame of a committed board by what the board says stands
where, as the setup fit does, and moves each colour class part of the way towards what it
measured:

* the wizard colours from tops where wizards of **one** colour stand (a top shared by two
  colours would need the split the setup fit does; the next board will have a clearer one);
* the crest and plain roofs (a roof with wizards on it too: the fit keeps the dominant mode),
  the tower walls, the bare track and the crest marks on bare crest spaces, the landscape
  beside the track and the raven castle.

A class moves only when enough pixels were measured (:attr:`LearnLimits.min_pixels`), and only
by a share of the way (:attr:`LearnLimits.rate`); a class whose new measurement lies far from
what it was (:attr:`LearnLimits.max_shift`, in spreads of the old class), or nearer another
class of its group than itself (red measured where orange was), is left alone: that is a label
that does not fit the frame (a hand, a piece in the air, a board the tracker got wrong), not
the light. The magic tower, the inserts and the tokens keep their setup colours.

See ``docs/vision.md`` ("Learning from committed boards").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import Observation, SpaceObservation
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BoardPose
from companion.vision.profile import (
    CHROMA_EPS,
    COV_FLOOR,
    WIZARD,
    ColourClass,
    ColourProfile,
    ProfileError,
)
from companion.vision.profile_fit import SetupView, polar_disc, robust_fit, surface_samples

SURFACES = ("roof-crest", "roof-plain", "wall", "track", "track-crest", "border", "castle")
"""The surface classes learnt from a committed board (besides the wizard colours)."""


@dataclass(frozen=True, slots=True)
class LearnLimits:
    """How much one committed board may teach.

    :param rate: share of the way (0..1) a class moves towards its new measurement.
    :param min_pixels: fewest pixels a class is learnt from.
    :param max_shift: largest distance (in the old class's spreads, Mahalanobis) of a new
        measurement that is still taken as the light changing (a white balance drifting by a
        fifth moves the track's tight class by several spreads).
    :param min_change: smallest move (spreads) that is reported as learnt.
    """

    rate: float = 0.35
    min_pixels: int = 40
    max_shift: float = 8.0
    min_change: float = 0.25

    def __post_init__(self) -> None:
        if not 0.0 < self.rate <= 1.0:
            raise ValueError(f"rate {self.rate}: expected 0 < rate <= 1")
        if self.min_pixels < 5:
            raise ValueError(f"min_pixels {self.min_pixels}: expected at least 5")
        if self.max_shift <= 0 or self.min_change < 0:
            raise ValueError("max_shift must be > 0 and min_change >= 0")


@dataclass(frozen=True)
class Learnt:
    """What one committed board taught.

    :param profile: the profile after learning (the old one when nothing moved).
    :param moved: class -> how far it moved, in its old spreads (only moves of at least
        ``min_change``).
    :param refused: class -> how far its measurement lay (spreads), for the classes left alone
        because it lay beyond ``max_shift``.
    :param pixels: class -> pixels measured (every class that was measured).
    """

    profile: ColourProfile
    moved: dict[str, float] = field(default_factory=dict)
    refused: dict[str, float] = field(default_factory=dict)
    pixels: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for the journal and the log: what was learnt, or why nothing was."""
        if self.moved:
            parts = ", ".join(f"{_said(n)} {d:.1f}" for n, d in sorted(self.moved.items()))
            line = f"colours learnt from the board (moved, in spreads): {parts}"
        else:
            line = "colours checked against the board: no change"
        if self.refused:
            line += "; not learnt (too far from before): " + ", ".join(
                _said(n) for n in sorted(self.refused)
            )
        return line


def _said(name: str) -> str:
    return {
        "roof-crest": "crest roofs",
        "roof-plain": "plain roofs",
        "wall": "tower walls",
        "track": "track",
        "track-crest": "crest marks",
        "border": "landscape",
        "castle": "raven castle",
    }.get(name, f"{name} wizards")


def _mix(old: ColourClass, new: ColourClass, rate: float) -> ColourClass:
    """The Gaussian ``(1 - rate) * old + rate * new`` (moment-matched)."""
    d = np.asarray(new.mean - old.mean, np.float64)
    mean = old.mean + rate * d
    cov = (1 - rate) * old.cov + rate * new.cov + rate * (1 - rate) * np.outer(d, d)
    return ColourClass(old.name, old.group, mean, cov, old.samples)


def _spreads(old: ColourClass, mean: NDArray[np.float64]) -> float:
    d = np.asarray(mean - old.mean, np.float64)
    return float(math.sqrt(max(float(d @ np.linalg.inv(old.cov + COV_FLOOR) @ d), 0.0)))


def _surface_chunks(
    view: SetupView, board: Mapping[int, SpaceObservation]
) -> dict[str, list[NDArray[np.uint8]]]:
    """Pixels of every surface in :data:`SURFACES` whose class the board names, by class (the
    setup fit's sampling, :func:`~companion.vision.profile_fit.surface_samples`, and the
    landscape beside the track)."""
    g = view.geometry
    chunks = surface_samples(view, board).chunks
    out = {n: chunks.get(n, []) for n in SURFACES}
    border = np.concatenate([g.loop_edge(1.15, 160), g.loop_edge(-1.15, 160)])
    out["border"].append(view.gather(np.column_stack([border, np.zeros(len(border))])))
    return out


def _wizard_chunks(
    view: SetupView,
    board: Mapping[int, SpaceObservation],
    colours: list[str],
    surfaces: ColourProfile,
) -> dict[str, list[NDArray[np.float32]]]:
    """Features of the pixels no surface explains in the wizard cylinder of every top where
    wizards of one colour stand, by colour."""
    g = view.geometry
    cyl = np.array(
        [
            (x * view.roof_r * 0.9, y * view.roof_r * 0.9, zf)
            for x, y in polar_disc(5)
            for zf in np.linspace(0.1, 0.9, 5)
        ]
    )
    out: dict[str, list[NDArray[np.float32]]] = {c: [] for c in colours}
    for space, o in board.items():
        present = [c for c, n in o.wizards.items() if n > 0]
        if len(present) != 1 or present[0] not in out or o.castle or space not in g.spaces:
            continue
        if o.top not in ("crest", "plain", "crest-space", "plain-space"):
            continue  # magic roofs, inserts and webs: their print is not in ``surfaces``
        centre = g.space_centre(space)
        z0 = g.tier_z(o.towers)
        pts = np.column_stack([centre + cyl[:, :2], z0 + cyl[:, 2] * g.wizard.height])
        feats = view.f(view.gather(pts))
        if len(feats) == 0:
            continue
        d_surf = surfaces.distances(feats).min(axis=1)
        out[present[0]].append(feats[d_surf > surfaces.reject_d2])
    return out


def learn_from_board(
    frame: NDArray[np.uint8],
    pose: BoardPose,
    white: NDArray[np.float64],
    geometry: BoardGeometry,
    profile: ColourProfile,
    board: Observation,
    limits: LearnLimits | None = None,
) -> Learnt:
    """Move the profile's colours towards one frame of a committed board.

    :param frame: ``(H, W, 3) uint8 BGR`` of the still board (the frame the detector read).
    :param pose: that frame's board pose, with a camera model (3-D).
    :param white: ``(3,)`` BGR of the markers' white paper in that frame.
    :param geometry: the board geometry of the game's track.
    :param profile: the profile in use (unchanged: a new one is returned).
    :param board: the committed board's visible spaces
        (:func:`companion.rules.observation.observe` of the committed state).
    :returns: the new profile and what moved (:class:`Learnt`).
    :raises ProfileError: on a frame that is no ``(H, W, 3) uint8`` image, a pose without a
        camera model or a white reference that is not three positive numbers.
    """
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.dtype != np.uint8:
        raise ProfileError("board frame: expected an (H, W, 3) uint8 BGR image")
    centre = pose.camera_position_mm() if pose.has_3d else None
    if centre is None:
        raise ProfileError("board frame: the pose has no camera model")
    w = np.asarray(white, np.float64).reshape(-1)
    if w.shape != (3,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ProfileError("board frame: the white reference must be three positive numbers")
    lim = limits or LearnLimits()
    view = SetupView(frame, pose, geometry, w, np.asarray(centre[:2], np.float64))
    classes = dict(profile.classes)
    wizard_names = [n for n, c in classes.items() if c.group == WIZARD]
    measured: dict[str, NDArray[np.float32]] = {}
    for name, chunks in _surface_chunks(view, board.spaces).items():
        if name in classes and chunks:
            measured[name] = view.f(np.concatenate(chunks))
    surfaces = ColourProfile({n: c for n, c in classes.items() if c.group != WIZARD})
    for name, parts in _wizard_chunks(view, board.spaces, wizard_names, surfaces).items():
        if parts:
            measured[name] = np.concatenate(parts)
    out = Learnt(profile)
    mixed = False
    for name, feats in measured.items():
        out.pixels[name] = int(len(feats))
        if len(feats) < lim.min_pixels:
            continue
        old = classes[name]
        try:
            new = robust_fit(name, old.group, feats, start=old.mean)
        except ProfileError:
            continue
        shift = _spreads(old, new.mean)
        rivals = [c for n, c in profile.classes.items() if c.group == old.group and n != name]
        if shift > lim.max_shift or any(_spreads(c, new.mean) < shift for c in rivals):
            out.refused[name] = round(shift, 2)
            continue
        classes[name] = _mix(old, new, lim.rate)
        mixed = True
        moved = _spreads(old, classes[name].mean)
        if moved >= lim.min_change:
            out.moved[name] = round(moved, 2)
    if not mixed:
        return out
    # small moves are kept too: a slow drift is many of them
    meta = dict(profile.meta)
    meta["learnt_boards"] = int(meta.get("learnt_boards", 0) or 0) + 1
    learnt = ColourProfile(classes, profile.reject_d2, profile.white_bgr, meta)
    return Learnt(learnt, out.moved, out.refused, out.pixels)


def rho_of(feature_mean: NDArray[np.floating]) -> NDArray[np.float64]:
    """The BGR reflectance ``(3,)`` (relative to the markers' white) whose features
    (:func:`companion.vision.profile.features`) are ``feature_mean`` ``(rg, yb, light)``."""
    rg, yb, light = (float(v) for v in feature_mean)
    s = 3.0 * light
    d = s + CHROMA_EPS
    b = (s - yb * d) / 3.0
    rg_sum = s - b
    r = (rg_sum + rg * d) / 2.0
    g = (rg_sum - rg * d) / 2.0
    return np.array([b, g, r], np.float64)


def colour_transform(
    setup: ColourProfile, now: ColourProfile, ridge: float = 0.05, least: float = 0.02
) -> NDArray[np.float32] | None:
    """The ``(3, 3)`` map of this light's BGR reflectance back to the setup's, fitted on every
    class both profiles have (weighted by the learnt pixels), pulled towards the identity by
    ``ridge``; None when it is within ``least`` of the identity (nothing to correct).

    The networks were trained on reflectances relative to white; a white balance that drifted
    after setup mixes the channels through the camera's colour-correction matrix, which a
    per-channel white cannot undo. Their input is mapped back with this transform (the
    profile's own classes have moved with the light already).
    """
    src, dst = [], []
    for name, c in now.classes.items():
        ref = setup.classes.get(name)
        if ref is None or np.allclose(ref.mean, c.mean):
            continue
        src.append(rho_of(c.mean))
        dst.append(rho_of(ref.mean))
    # white stays white (the features are relative to it); the unmoved classes pull to identity
    src.append(np.ones(3))
    dst.append(np.ones(3))
    a, b = np.array(src), np.array(dst)
    # minimise |a M^T - b|^2 + ridge * n * |M - I|^2
    lam = ridge * len(a)
    m_t = np.linalg.solve(a.T @ a + lam * np.eye(3), a.T @ b + lam * np.eye(3))
    m = m_t.T
    if float(np.abs(m - np.eye(3)).max()) < least:
        return None
    return m.astype(np.float32)


def recolour_input(x: NDArray[np.float32], m: NDArray[np.float32]) -> NDArray[np.float32]:
    """A network input ``(N, 3 T, P, P) float32`` (channel ``3 k + c`` colour ``c`` of tier
    ``k``, reflectance clipped to 0..1.5 less 0.5, :func:`companion.vision.stack_cnn.network_input`)
    with every pixel's colour mapped by ``m`` ``(3, 3)``."""
    n, ch, p, q = x.shape
    y = x.reshape(n, ch // 3, 3, p, q) + np.float32(0.5)
    y = np.einsum("ij,ntjpq->ntipq", m, y, optimize=True)
    np.clip(y, 0.0, 1.5, out=y)
    y -= np.float32(0.5)
    return np.ascontiguousarray(y, np.float32).reshape(n, ch, p, q)
