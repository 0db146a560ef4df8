"""Colour profile: white balance from the board and a nearest-prototype colour classifier.

The camera sees the same wooden wizards under candle-warm 2700 K bulbs and 6500 K daylight, at a
third of the light or half again as much. Both changes are, to a good approximation, a gain per
colour channel (von Kries), so the profile works in **reflectance relative to a white reference
measured in the same frame**: the white cells of the four ArUco board markers (the paper they are
printed on), or — without markers — a bright percentile of the track (grey-world).

Each pixel ``p`` (BGR) becomes ``rho = p / white`` per channel and then three features:

* ``rg = (R - G) / (S + eps)``: red ↔ green; separates red / orange / yellow (hard pairs).
* ``yb = (R + G - 2 B) / (S + eps)``: yellow ↔ blue; separates blue / green and blue / purple.
* ``light = S / 3``: lightness relative to the white paper (shading makes it vary; its
  covariance is learnt).

with ``S = R + G + B`` of ``rho``. ``eps`` pulls the chroma of very dark pixels towards grey, so
shadows and the black raven castle never look saturated.

A :class:`ColourProfile` holds one Gaussian prototype (mean, covariance) per class — the six
wizard colours, the roof kinds and the track — and classifies by Mahalanobis distance to the
nearest prototype with a reject option (distance above ``reject_d2``, or too dark to judge).

The profile is sampled from the setup frame (R-SETUP-3: crest towers on spaces 2, 4, 6, 8, 10,
plain towers on 3, 5, 7, 9; R-SETUP-6: which wizards stand on which roof), saved as JSON and
loaded by the detector. ``companion calibrate profile`` is :func:`main`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import COLOURS

FEATURES: tuple[str, str, str] = ("rg", "yb", "light")
CHROMA_EPS = 0.06
"""Added to ``S`` before dividing: chroma of pixels darker than ~2 % of white shrinks to grey."""

MIN_LIGHT = 0.035
"""Pixels darker than this (relative to the white paper) are too noisy to label (-> reject)."""

COV_FLOOR = np.diag([0.012**2, 0.02**2, 0.03**2])
"""Added to every learnt covariance: sensor noise, JPEG and rendering of wood grain."""

TOKEN_D2 = 4.0
"""Squared distance from the track's classes beyond which a pixel on the tokens' setup space may
be the raven token's white disc (it is near the sandy track's colour)."""

WITCH_CHROMA = 0.08
"""Least chroma (rg, yb) of the witch token's disc as sampled at setup (a coloured token)."""

LUT_STEPS = 25.0
"""White references within 1/25 in log (4 %) share one lookup table."""

MAGIC_ROOF = ("roof-magic", "roof-magic-star")
"""The magic tower's roof: a field (``roof-magic``) with a printed star."""

REJECT = "?"
"""Label of a pixel or blob no prototype explains."""

WIZARD = "wizard"
ROOF = "roof"
TRACK = "track"
OTHER = "other"
GROUPS = (WIZARD, ROOF, TRACK, OTHER)

# Default wizard prototypes: typical stained-wood meeple reflectances (R, G, B relative to white
# paper). They only seed the profile; ``build_profile`` replaces them with the setup colours.
DEFAULT_WIZARD_RGB: dict[str, tuple[float, float, float]] = {
    "blue": (0.07, 0.22, 0.58),
    "yellow": (0.86, 0.72, 0.10),
    "red": (0.62, 0.07, 0.07),
    "green": (0.12, 0.48, 0.18),
    "orange": (0.88, 0.38, 0.07),
    "purple": (0.34, 0.13, 0.44),
}
DEFAULT_SPREAD = np.diag([0.03**2, 0.06**2, 0.12**2])

Float = NDArray[np.float32]


class ProfileError(ValueError):
    """A colour profile file that cannot be used; the message names the field or the step."""


# ---------------------------------------------------------------------------------------------
# white reference and features


def white_from_pixels(pixels_bgr: NDArray[Any], percentile: float = 90.0) -> NDArray[np.float64]:
    """Grey-world white estimate: per channel, the given percentile of the brightest pixels.

    :param pixels_bgr: ``(N, 3)`` BGR values (uint8 or float, 0..255).
    :returns: ``(3,)`` float64 BGR white, each channel ≥ 1.
    :raises ValueError: when no pixels are given.
    """
    px = np.asarray(pixels_bgr, dtype=np.float64).reshape(-1, 3)
    if px.shape[0] == 0:
        raise ValueError("white reference: no pixels")
    lum = px.sum(axis=1)
    cut = np.percentile(lum, percentile)
    bright = px[lum >= cut]
    white: NDArray[np.float64] = np.maximum(np.median(bright, axis=0), 1.0)
    return white


def marker_cut(
    quad: NDArray[Any], w: int, h: int
) -> tuple[int, int, int, NDArray[np.uint8]] | None:
    """Where a marker quad (``(4, 2)`` px, any order) lies in a ``w`` × ``h`` px frame.

    :returns: ``(x0, y0, step, mask)``: the top-left px of its bounding box (clipped to the
        frame), the sampling step (2 for quads over 4000 px², else 1) and a ``uint8`` mask of the
        quad on that subsampled grid, shrunk by one pixel so that blurred edges do not count;
        None when the box is under 4 px on a side.
    """
    q = np.asarray(quad, dtype=np.float64).reshape(-1, 2)
    x0, y0 = np.floor(q.min(axis=0)).astype(int)
    x1, y1 = np.ceil(q.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(int(x0), 0), max(int(y0), 0), min(int(x1), w), min(int(y1), h)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    step = 2 if (x1 - x0) * (y1 - y0) > 4000 else 1
    mask = np.zeros(((y1 - y0 + step - 1) // step, (x1 - x0 + step - 1) // step), np.uint8)
    cv2.fillConvexPoly(mask, np.round((q - (x0, y0)) / step).astype(np.int32), 1)
    return x0, y0, step, cv2.erode(mask, np.ones((3, 3), np.uint8))


def white_from_markers(
    frame: NDArray[np.uint8], quads_px: Mapping[int, NDArray[Any]] | Iterable[NDArray[Any]]
) -> NDArray[np.float64] | None:
    """White reference from the white cells of ArUco markers printed on white paper.

    Each marker quad (``(4, 2)`` px, any order) is cut out of the frame by its bounding box,
    masked to the quad and split by Otsu's threshold; the bright class are the white cells.
    The median over markers is returned (robust to one marker in a shadow).

    :param frame: ``(H, W, 3) uint8 BGR``.
    :returns: ``(3,)`` float64 BGR white, or None when no marker gives ≥ 20 white pixels.
    """
    quads = quads_px.values() if isinstance(quads_px, Mapping) else quads_px
    h, w = frame.shape[:2]
    whites = []
    for quad in quads:
        cut = marker_cut(quad, w, h)
        if cut is None:
            continue
        x0, y0, step, mask = cut
        patch = frame[y0 : y0 + mask.shape[0] * step : step, x0 : x0 + mask.shape[1] * step : step]
        px = patch[mask > 0]
        if px.shape[0] < 20:
            continue
        grey = px.astype(np.float32).sum(axis=1)
        g8 = np.clip(grey / 3.0, 0, 255).astype(np.uint8).reshape(-1, 1)
        thr, _ = cv2.threshold(g8, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
        bright = px[g8[:, 0] > thr]
        if bright.shape[0] < 20:
            continue
        whites.append(np.median(bright.astype(np.float64), axis=0))
    if not whites:
        return None
    out: NDArray[np.float64] = np.maximum(np.median(np.array(whites), axis=0), 1.0)
    return out


def features(pixels_bgr: NDArray[Any], white_bgr: NDArray[Any]) -> Float:
    """Illumination-invariant colour features of pixels.

    :param pixels_bgr: ``(..., 3)`` BGR (uint8 or float, 0..255).
    :param white_bgr: ``(3,)`` BGR of the white reference in the same frame.
    :returns: ``(..., 3)`` float32: ``rg``, ``yb``, ``light`` (see module docstring).
    """
    px = np.asarray(pixels_bgr, dtype=np.float32)
    rho = px / np.asarray(white_bgr, dtype=np.float32).reshape((1,) * (px.ndim - 1) + (3,))
    b, g, r = rho[..., 0], rho[..., 1], rho[..., 2]
    s = r + g + b
    d = s + CHROMA_EPS
    out = np.empty(px.shape[:-1] + (3,), np.float32)
    out[..., 0] = (r - g) / d
    out[..., 1] = (r + g - 2.0 * b) / d
    out[..., 2] = s / 3.0
    return out


def rgb_to_features(rgb: Sequence[float]) -> NDArray[np.float64]:
    """Features of a reflectance given as ``(R, G, B)`` relative to white (for defaults)."""
    r, g, b = rgb
    s = r + g + b
    d = s + CHROMA_EPS
    return np.array([(r - g) / d, (r + g - 2 * b) / d, s / 3.0])


# ---------------------------------------------------------------------------------------------
# the profile


@dataclass(frozen=True)
class ColourClass:
    """One prototype: a Gaussian in feature space.

    :param name: e.g. ``"blue"``, ``"roof-crest"``, ``"track"``.
    :param group: ``wizard``, ``roof``, ``track`` or ``other``.
    :param mean: ``(3,)`` feature mean.
    :param cov: ``(3, 3)`` feature covariance (the floor :data:`COV_FLOOR` is added on use).
    :param samples: pixels it was estimated from (0 = built-in default).
    """

    name: str
    group: str
    mean: NDArray[np.float64]
    cov: NDArray[np.float64]
    samples: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "mean": [round(float(v), 6) for v in self.mean],
            "cov": [[round(float(v), 8) for v in row] for row in self.cov],
            "samples": self.samples,
        }

    @classmethod
    def fit(cls, name: str, group: str, feats: NDArray[Any]) -> ColourClass:
        """Fit mean and covariance to ``(N, 3)`` features (N ≥ 5).

        :raises ProfileError: with fewer than 5 samples.
        """
        f = np.asarray(feats, np.float64).reshape(-1, 3)
        if f.shape[0] < 5:
            raise ProfileError(f"{name}: only {f.shape[0]} pixels to learn the colour from")
        # trim the 10 % farthest from the median: edges, highlights, neighbours' pixels
        med = np.median(f, axis=0)
        spread = np.median(np.abs(f - med), axis=0) + 1e-3
        d = (((f - med) / spread) ** 2).sum(axis=1)
        keep = f[d <= np.percentile(d, 90)] if f.shape[0] >= 20 else f
        return cls(name, group, keep.mean(axis=0), np.cov(keep.T), int(f.shape[0]))


@dataclass
class ColourProfile:
    """Prototypes for every colour the detector must tell apart, with a reject option.

    :param classes: name -> :class:`ColourClass`.
    :param reject_d2: squared Mahalanobis distance above which a pixel is :data:`REJECT`.
    :param white_bgr: the white reference of the frame the profile was sampled from.
    :param meta: free-form provenance (players, colours, frame file, camera file).
    """

    classes: dict[str, ColourClass]
    reject_d2: float = 16.0
    white_bgr: tuple[float, float, float] = (255.0, 255.0, 255.0)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._compile()

    def _compile(self) -> None:
        self._names = list(self.classes)
        self._means = np.array([c.mean for c in self.classes.values()], np.float32).reshape(-1, 3)
        # whitening: d2 = |(f - m) @ L|^2 with L L^T = inverse covariance (Cholesky)
        chol = [np.linalg.cholesky(np.linalg.inv(c.cov + COV_FLOOR)) for c in self.classes.values()]
        self._chol = np.array(chol, np.float32).reshape(-1, 3, 3)
        self._groups = [c.group for c in self.classes.values()]
        self._luts: dict[tuple[int, ...], NDArray[np.int8]] = {}

    @property
    def names(self) -> list[str]:
        return list(self._names)

    def names_in(self, group: str) -> list[str]:
        """Class names of one group, in profile order."""
        return [n for n, g in zip(self._names, self._groups, strict=True) if g == group]

    def distances(self, feats: NDArray[Any], only: Sequence[str] | None = None) -> Float:
        """Squared Mahalanobis distances ``(N, K)`` from ``(N, 3)`` features to each class.

        :param only: restrict to these class names (their order = column order).
        :raises KeyError: for a name not in the profile.
        """
        idx = (
            [self._names.index(n) for n in only]
            if only is not None
            else list(range(len(self._names)))
        )
        f = np.asarray(feats, np.float32).reshape(-1, 3)
        if not idx:
            return np.zeros((f.shape[0], 0), np.float32)
        chol = self._chol[idx]  # (K, 3, 3)
        w = chol.transpose(1, 0, 2).reshape(3, -1)  # (3, 3K)
        off = np.einsum("ki,kij->kj", self._means[idx], chol).reshape(-1)
        z = f @ w - off
        out: Float = (z * z).reshape(f.shape[0], len(idx), 3).sum(axis=2)
        return out

    def classify(
        self, feats: NDArray[Any], only: Sequence[str] | None = None
    ) -> tuple[NDArray[np.int32], Float]:
        """Nearest prototype per pixel.

        :param feats: ``(N, 3)`` features (see :func:`features`).
        :param only: candidate class names; default all classes.
        :returns: ``(index (N,) int32 into `only` (or :attr:`names`), -1 = reject; d2 (N,))``.
        """
        d2 = self.distances(feats, only)
        f = np.asarray(feats, np.float32).reshape(-1, 3)
        if d2.shape[1] == 0:
            return np.full(f.shape[0], -1, np.int32), np.full(f.shape[0], np.inf, np.float32)
        best = np.argmin(d2, axis=1).astype(np.int32)
        bd = d2[np.arange(d2.shape[0]), best]
        best[(bd > self.reject_d2) | (f[:, 2] < MIN_LIGHT)] = -1
        return best, bd

    def classify_bgr(
        self, pixels_bgr: NDArray[np.uint8], white_bgr: NDArray[Any]
    ) -> NDArray[np.int32]:
        """:meth:`classify` of ``(N, 3) uint8`` BGR pixels through a lookup table.

        The table holds the label of every BGR value quantised to 6 bits per channel under one
        white reference (white rounded to 4 %), filled lazily with the colours met, so a camera
        under steady light classifies each frame with one indexing operation. Returns class
        indices into :attr:`names` (-1 = reject).
        """
        w = np.asarray(white_bgr, np.float64)
        key = tuple(int(round(v)) for v in np.log(np.maximum(w, 1.0)) * LUT_STEPS)
        lut = self._luts.get(key)
        if lut is None:
            if len(self._luts) >= 8:
                self._luts.pop(next(iter(self._luts)))
            lut = np.full(1 << 18, -2, np.int8)  # -2 = not classified yet
            self._luts[key] = lut
        px = np.asarray(pixels_bgr, np.uint8).reshape(-1, 3) >> 2
        code = (px[:, 0].astype(np.int32) << 12) | (px[:, 1].astype(np.int32) << 6) | px[:, 2]
        out = lut[code]
        todo = np.unique(code[out == -2])
        if len(todo):
            # classify only the colours this white reference has not met yet (cell centres)
            grid = np.stack([todo >> 12, (todo >> 6) & 63, todo & 63], axis=1) * 4.0 + 1.5
            wq = np.exp(np.array(key, np.float64) / LUT_STEPS)
            idx, _ = self.classify(features(grid, wq))
            lut[todo] = idx.astype(np.int8)
            out = lut[code]
        result: NDArray[np.int32] = out.astype(np.int32)
        return result

    def label(self, pixels_bgr: NDArray[Any], white_bgr: NDArray[Any]) -> list[str]:
        """Convenience: names (or :data:`REJECT`) of ``(N, 3)`` BGR pixels."""
        names = self._names
        idx, _ = self.classify(features(np.asarray(pixels_bgr).reshape(-1, 3), white_bgr))
        return [names[i] if i >= 0 else REJECT for i in idx]

    def with_class(self, cls: ColourClass) -> ColourProfile:
        """A copy with one class added or replaced."""
        classes = dict(self.classes)
        classes[cls.name] = cls
        return ColourProfile(classes, self.reject_d2, self.white_bgr, dict(self.meta))

    # -- JSON ----------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "companion-colour-profile",
            "version": 1,
            "features": list(FEATURES),
            "reject_d2": self.reject_d2,
            "white_bgr": [round(float(v), 3) for v in self.white_bgr],
            "classes": {n: c.to_json() for n, c in self.classes.items()},
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, data: Any) -> ColourProfile:
        """Parse the JSON form.

        :raises ProfileError: naming the bad field (e.g. ``classes.blue.cov``).
        """
        if not isinstance(data, Mapping) or data.get("format") != "companion-colour-profile":
            raise ProfileError("not a colour profile (format != companion-colour-profile)")
        if data.get("version") != 1:
            raise ProfileError(f"version: unsupported {data.get('version')!r}")
        raw = data.get("classes")
        if not isinstance(raw, Mapping) or not raw:
            raise ProfileError("classes: expected a non-empty object")
        classes: dict[str, ColourClass] = {}
        for name, c in raw.items():
            where = f"classes.{name}"
            if not isinstance(c, Mapping):
                raise ProfileError(f"{where}: expected an object")
            group = c.get("group")
            if group not in GROUPS:
                raise ProfileError(f"{where}.group: expected one of {list(GROUPS)}")
            try:
                mean = np.array(c["mean"], np.float64)
                cov = np.array(c["cov"], np.float64)
            except (KeyError, TypeError, ValueError):
                raise ProfileError(f"{where}: mean and cov must be numbers") from None
            if mean.shape != (3,) or not np.all(np.isfinite(mean)):
                raise ProfileError(f"{where}.mean: expected 3 finite numbers")
            if cov.shape != (3, 3) or not np.all(np.isfinite(cov)):
                raise ProfileError(f"{where}.cov: expected a 3x3 matrix")
            if not np.allclose(cov, cov.T, atol=1e-6) or np.linalg.eigvalsh(cov).min() < -1e-9:
                raise ProfileError(f"{where}.cov: not a covariance (symmetric, >= 0)")
            classes[str(name)] = ColourClass(
                str(name), str(group), mean, cov, int(c.get("samples", 0))
            )
        reject = data.get("reject_d2", 16.0)
        if not isinstance(reject, int | float) or not reject > 0:
            raise ProfileError("reject_d2: expected a positive number")
        white = data.get("white_bgr", [255.0, 255.0, 255.0])
        if not isinstance(white, Sequence) or len(white) != 3:
            raise ProfileError("white_bgr: expected 3 numbers")
        meta = data.get("meta", {})
        wb = (float(white[0]), float(white[1]), float(white[2]))
        return cls(classes, float(reject), wb, dict(meta) if isinstance(meta, Mapping) else {})

    def save(self, path: str | Path) -> None:
        """Write the JSON form (UTF-8, indented)."""
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> ColourProfile:
        """Read a profile file.

        :raises ProfileError: when the file is missing, not JSON, or malformed.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ProfileError(f"cannot read colour profile {Path(path).name}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ProfileError(f"colour profile {Path(path).name} is not JSON: {exc}") from None
        return cls.from_json(data)


def default_profile() -> ColourProfile:
    """The built-in wizard prototypes only (no roof or track classes): a starting point."""
    classes = {
        name: ColourClass(name, WIZARD, rgb_to_features(DEFAULT_WIZARD_RGB[name]), DEFAULT_SPREAD)
        for name in COLOURS
    }
    return ColourProfile(classes, meta={"source": "built-in defaults"})


def confusion_matrix(
    truth: Sequence[str], predicted: Sequence[str], labels: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Counts ``truth -> predicted -> n`` over ``labels`` plus :data:`REJECT`."""
    cols = [*labels, REJECT]
    m = {t: dict.fromkeys(cols, 0) for t in labels}
    for t, p in zip(truth, predicted, strict=True):
        if t in m:
            m[t][p if p in m[t] else REJECT] += 1
    return m


def separation(profile: ColourProfile, a: str, b: str) -> float:
    """Symmetric Mahalanobis distance between two prototypes (≥ 3 = well separated)."""
    ca, cb = profile.classes[a], profile.classes[b]
    d = ca.mean - cb.mean
    cov = (ca.cov + cb.cov) / 2 + COV_FLOOR
    return math.sqrt(float(d @ np.linalg.solve(cov, d)))


# ---------------------------------------------------------------------------------------------
# sampling the setup frame


def _polar_disc(rings: int = 5) -> NDArray[np.float64]:
    """Unit-disc sample offsets on ``rings`` rings (centre + 6, 12, 18, ... points)."""
    pts = [(0.0, 0.0)]
    for i in range(1, rings + 1):
        n = 6 * i
        r = i / rings
        for j in range(n):
            a = 2 * math.pi * (j + 0.5 * (i % 2)) / n
            pts.append((r * math.cos(a), r * math.sin(a)))
    return np.array(pts)


def _gather(frame: NDArray[np.uint8], px: NDArray[Any]) -> NDArray[np.uint8]:
    h, w = frame.shape[:2]
    p = np.round(np.asarray(px).reshape(-1, 2)).astype(int)
    ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    p = p[ok]
    out: NDArray[np.uint8] = frame[p[:, 1], p[:, 0]]
    return out


def _wizard_fit(name: str, feats: NDArray[Any], prior: NDArray[Any]) -> ColourClass:
    """A wizard colour from the pixels assigned to it: the dominant mode, unless leftover track,
    roof or wall pixels outnumber the wizard's own; then the mode that starts at the prior
    prototype. Of the two, the one whose chroma (rg, yb) lies nearer the prior wins."""
    mode = _robust_fit(name, WIZARD, feats)
    near = _robust_fit(name, WIZARD, feats, start=prior)
    p = np.asarray(prior, np.float64)[:2]
    return mode if np.linalg.norm(mode.mean[:2] - p) <= np.linalg.norm(near.mean[:2] - p) else near


def _robust_fit(
    name: str,
    group: str,
    feats: NDArray[Any],
    rounds: int = 4,
    start: NDArray[Any] | None = None,
) -> ColourClass:
    """Fit the dominant mode of ``feats`` (other objects' pixels are trimmed away), or the mode
    reached from ``start`` when given."""
    f = np.asarray(feats, np.float64).reshape(-1, 3)
    if f.shape[0] < 5:
        raise ProfileError(f"{name}: only {f.shape[0]} pixels to learn the colour from")
    if start is not None:
        centre = np.asarray(start, np.float64)
        cov = np.diag([0.06**2, 0.12**2, 0.2**2])
        keep = f
        for _ in range(rounds + 2):
            inv = np.linalg.inv(cov + COV_FLOOR)
            d = f - centre
            d2 = np.einsum("ni,ij,nj->n", d, inv, d)
            keep = f[d2 <= 9.0]
            if keep.shape[0] < 5:
                keep = f[np.argsort(d2)[: max(5, f.shape[0] // 4)]]
            centre = keep.mean(axis=0)
            cov = np.cov(keep.T)
        return ColourClass(name, group, centre, cov, int(keep.shape[0]))
    # start from the densest cell of a coarse histogram (the mode), not the median: on a roof
    # the wizards standing on it can be a third of the pixels
    bins = np.floor(f / np.array([0.04, 0.06, 0.1])).astype(np.int64)
    cells, inverse, counts = np.unique(bins, axis=0, return_inverse=True, return_counts=True)
    mode = int(np.argmax(counts))
    keep = f[inverse.reshape(-1) == mode]
    centre = np.median(keep, axis=0)
    cov = np.diag([0.02**2, 0.03**2, 0.08**2])
    for _ in range(rounds):
        inv = np.linalg.inv(cov + COV_FLOOR)
        d = f - centre
        d2 = np.einsum("ni,ij,nj->n", d, inv, d)
        keep = f[d2 <= 9.0]
        if keep.shape[0] < 5:
            keep = f[np.argsort(d2)[: max(5, f.shape[0] // 3)]]
        centre = keep.mean(axis=0)
        cov = np.cov(keep.T)
    return ColourClass(name, group, centre, cov, int(keep.shape[0]))


def build_profile(
    frame: NDArray[np.uint8],
    camera: Any,
    geometry: Any,
    colours: Sequence[str],
    *,
    base: ColourProfile | None = None,
    expected: Any = None,
) -> ColourProfile:
    """Sample a colour profile from a frame of the setup position.

    The setup tells what stands where (R-SETUP-1: castle on space 1; R-SETUP-3: crest towers on
    2, 4, 6, 8, 10, plain towers on 3, 5, 7, 9; R-SETUP-6: the wizards on those roofs in seat
    order). This layout comes from the rules core (``setup`` + ``observe``), so any player count
    and track works. Learnt: ``roof-crest``, ``roof-plain``, ``wall``, ``castle``, ``track``,
    ``track-crest``, ``border`` (the landscape beside the track) and the wizard colours in play;
    with the expansion's setup (``expected``) also ``roof-magic`` and ``roof-magic-star`` (the
    magic tower's roof, a field with a printed star), ``wall-magic`` (its violet merlons and
    walls, not learnt into ``wall``), the insert tiles (``track-fountain``,
    ``track-web``) and the ``witch`` and ``raven`` tokens.

    :param frame: ``(H, W, 3) uint8 BGR`` of the untouched setup position, all markers visible.
    :param camera: the :class:`~companion.vision.camera.CameraModel` (scaled to the frame).
    :param geometry: the :class:`~companion.vision.geometry.BoardGeometry`.
    :param colours: the players' colours in seat order (seat 0 = start player).
    :param base: prototypes to start the wizard assignment from (default :func:`default_profile`).
    :param expected: the :class:`~companion.rules.observation.Observation` of the setup position
        shown (``observe(setup(config))``; default: the base game's setup for ``colours``). With
        the expansion's modules the towers, inserts and tokens stand elsewhere.
    :raises ProfileError: when the board is not found or a colour cannot be sampled.
    """
    from companion.rules import Config, observe, setup
    from companion.vision.markers import MarkerDetector, PoseError, estimate_board_pose

    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.dtype != np.uint8:
        raise ProfileError("setup frame: expected an (H, W, 3) uint8 BGR image")
    h, w = frame.shape[:2]
    cam = camera if tuple(camera.size) == (w, h) else camera.scaled_to(w, h)
    det = MarkerDetector(geometry.marker_dictionary, ids=geometry.marker_ids)
    found = det.detect(frame)
    try:
        pose = estimate_board_pose(found, geometry.marker_corners(), cam)
    except PoseError as exc:
        raise ProfileError(f"setup frame: board not found ({exc})") from None
    white = white_from_markers(frame, found)
    if white is None:
        raise ProfileError("setup frame: no white marker cells to balance the colours")
    try:
        cfg = Config(player_count=len(colours), colours=tuple(colours))
    except ValueError as exc:
        raise ProfileError(f"players: {exc}") from None
    if expected is None:
        expected = observe(setup(cfg, seed=None))
    try:
        expected = dict(expected.spaces)
    except AttributeError:
        raise ProfileError("expected: not an Observation of the setup position") from None
    missing = [n for n in expected if n not in geometry.spaces]
    if missing:
        raise ProfileError(f"expected: spaces {missing} are not on the board's track")
    cam_xy = pose.camera_position_mm()[:2]
    tier = geometry.tower.height
    roof_r = geometry.tower.roof_diameter / 2
    disc = _polar_disc(5)

    def proj(xyz: NDArray[Any]) -> NDArray[np.float64]:
        p = np.asarray(xyz, np.float64).reshape(-1, 3).copy()
        p[:, 2] = -p[:, 2]
        return pose.project(p)

    def disc_pixels(space: int, z: float, r: float) -> NDArray[np.uint8]:
        c = geometry.space_centre(space)
        pts = np.column_stack([c + disc * r, np.full(len(disc), z)])
        return _gather(frame, proj(pts))

    def wall_pixels(space: int, shape: Any, z0: float) -> NDArray[np.uint8]:
        c = geometry.space_centre(space)
        to_cam = cam_xy - c
        base_a = math.atan2(to_cam[1], to_cam[0])
        pts = []
        for da in np.radians(np.linspace(-45, 45, 7)):
            for fz in np.linspace(0.2, 0.75, 4):
                r = (shape.base_diameter + (shape.roof_diameter - shape.base_diameter) * fz) / 2
                a = base_a + da
                pts.append((c[0] + r * math.cos(a), c[1] + r * math.sin(a), z0 + fz * shape.height))
        return _gather(frame, proj(np.array(pts)))

    def f(px: NDArray[Any]) -> NDArray[np.float32]:
        return features(px.reshape(-1, 3), white)

    # the merlons' ring: between their inner and outer radius (see the tower's shape)
    merlon_r = roof_r - max(2.5, 0.08 * geometry.tower.roof_diameter) / 2

    def _ring_pixels(space: int, z: float, r: float, far: bool = False) -> NDArray[np.uint8]:
        """Pixels on a ring round a space at height ``z``; with ``far`` only its third facing
        away from the camera (the merlons on the near side hide the roof just inside them)."""
        c = geometry.space_centre(space)
        if far:
            away = math.atan2(c[1] - cam_xy[1], c[0] - cam_xy[0])
            a = away + np.linspace(-math.pi / 3, math.pi / 3, 48)
        else:
            a = np.linspace(0.0, 2 * math.pi, 96, endpoint=False)
        pts = np.column_stack([c[0] + r * np.cos(a), c[1] + r * np.sin(a), np.full(len(a), z)])
        return _gather(frame, proj(pts))

    classes: dict[str, ColourClass] = {}
    crest_px, plain_px, wall_px, track_px, mark_px = [], [], [], [], []
    magic_spaces: list[int] = []
    insert_px: dict[str, list[NDArray[np.uint8]]] = {}
    for space, o in expected.items():
        kind = geometry.track.kind(space)
        if o.towers == 1 and o.top in ("crest", "plain", "magic"):
            # the crest disc covers 0.62..0.7 of a crest roof's radius: sample inside it
            if o.top == "crest":
                crest_px.append(disc_pixels(space, tier, roof_r * 0.55))
            elif o.top == "magic":
                if not o.wizards:
                    magic_spaces.append(space)
                continue  # (its violet walls are not the stone walls)
            else:
                plain_px.append(disc_pixels(space, tier, roof_r * 0.8))
            wall_px.append(wall_pixels(space, geometry.tower, 0.0))
        elif o.towers == 0 and not o.castle and not o.wizards and (o.witch or o.raven):
            continue  # the tokens' space: sampled below
        elif o.towers == 0 and not o.castle and not o.wizards and kind in ("fountain", "web"):
            insert_px.setdefault(kind, []).append(
                disc_pixels(space, 0.0, geometry.surface_radius(0) * 0.8)
            )
        elif o.towers == 0 and not o.castle and not o.wizards:
            mark = geometry.crest_mark(space)
            if mark is not None:
                mark_px.append(disc_pixels(space, 0.0, mark[1] * 0.6))
                ring = disc[np.linalg.norm(disc, axis=1) > 0.85]
                c = geometry.space_centre(space)
                r = geometry.surface_radius(0) * 0.9
                pts = np.column_stack([c + ring * r, np.zeros(len(ring))])
                track_px.append(_gather(frame, proj(pts)))
            else:
                track_px.append(disc_pixels(space, 0.0, geometry.surface_radius(0) * 0.8))
    if magic_spaces:
        # the magic roof is printed in two colours: a five-pointed star (its inner corners at
        # 0.29, its tips at 0.7 of the roof's radius) on a field. The star is learnt from the
        # roof's middle; the field from rings between the star's arms, less what the star
        # explains (the densest of the rest: blurred edges mix the two, and the merlons' colour
        # bleeds onto the roof's outer rim)
        middle = f(np.concatenate([disc_pixels(s, tier, roof_r * 0.2) for s in magic_spaces]))
        if middle.shape[0] >= 8:
            classes["roof-magic-star"] = _robust_fit("roof-magic-star", ROOF, middle)
        ring = f(
            np.concatenate(
                [
                    _ring_pixels(s, tier, roof_r * r)
                    for s in magic_spaces
                    for r in (0.45, 0.55, 0.65)
                ]
            )
        )
        if "roof-magic-star" in classes:
            star = ColourProfile({"m": classes["roof-magic-star"]})
            ring = ring[star.distances(ring)[:, 0] > star.reject_d2]
        classes["roof-magic"] = _robust_fit("roof-magic", ROOF, ring)
        # the magic tower's merlons and walls (a pale violet: the nearest wizard colour is
        # purple or blue): the tops of the merlons, less what the roof's two colours explain
        tops = f(
            np.concatenate(
                [
                    _ring_pixels(s, tier + geometry.tower.merlon_height, merlon_r)
                    for s in magic_spaces
                ]
            )
        )
        painted = ColourProfile({n: classes[n] for n in MAGIC_ROOF if n in classes})
        tops = tops[painted.distances(tops).min(axis=1) > painted.reject_d2]
        if tops.shape[0] >= 8:
            classes["wall-magic"] = _robust_fit("wall-magic", OTHER, tops)
    for name, group, chunks in (
        ("roof-crest", ROOF, crest_px),
        ("roof-plain", ROOF, plain_px),
        ("wall", OTHER, wall_px),
        ("track", TRACK, track_px),
        ("track-crest", TRACK, mark_px),
        ("track-fountain", TRACK, insert_px.get("fountain", [])),
        ("track-web", TRACK, insert_px.get("web", [])),
    ):
        if chunks:
            classes[name] = _robust_fit(name, group, f(np.concatenate(chunks)))
    # the printed landscape just outside the track band on both sides (the wizards' hulls on an
    # empty space reach it at an oblique view)
    border = np.concatenate([geometry.loop_edge(1.15, 160), geometry.loop_edge(-1.15, 160)])
    border_px = _gather(frame, proj(np.column_stack([border, np.zeros(len(border))])))
    if len(border_px) >= 20:
        classes["border"] = _robust_fit("border", TRACK, f(border_px))
    castle_space = next((s for s, o in expected.items() if o.castle), None)
    if castle_space is not None:
        top = disc_pixels(
            castle_space, geometry.castle.height, geometry.castle.roof_diameter / 2 * 0.7
        )
        side = wall_pixels(castle_space, geometry.castle, 0.0)
        classes["castle"] = _robust_fit("castle", OTHER, f(np.concatenate([top, side])))

    # the tokens (R-MOD-WITCH-1, R-MOD-RAVEN-1: both on the space after the last tower): of the
    # pixels on their space that the track does not explain, the witch is the largest coloured
    # mode (a green-blue disc), the raven the pale one (a white disc, lighter than the sandy
    # track); their dark printed hat and raven are not learnt
    token_space = next(
        (
            n
            for n, o in expected.items()
            if (o.witch or o.raven) and not o.wizards and not o.towers and not o.castle
        ),
        None,
    )
    surf_names = [n for n in ("track", "track-crest") if n in classes]
    if token_space is not None and surf_names:
        tok = expected[token_space]
        surf = ColourProfile({n: classes[n] for n in surf_names})
        c = geometry.space_centre(token_space)
        rr = geometry.surface_radius(0) * 0.9
        dense = _polar_disc(16)
        pts = np.column_stack([c + dense * rr, np.full(len(dense), geometry.witch.thickness)])
        tf = f(_gather(frame, proj(pts)))
        tf = tf[tf[:, 2] >= MIN_LIGHT]
        d_surf = surf.distances(tf).min(axis=1)
        track_light = float(classes["track"].mean[2]) if "track" in classes else 0.0
        if tok.raven:
            # (the white disc is near the track's colour: two spreads from it, and lighter)
            pale = tf[(d_surf > TOKEN_D2) & (tf[:, 2] > track_light)]
            if pale.shape[0] >= 8:
                raven = _robust_fit("raven", OTHER, pale)
                classes["raven"] = raven
                keep = ColourProfile({"m": raven}).distances(tf)[:, 0] > surf.reject_d2
                tf, d_surf = tf[keep], d_surf[keep]
        tf = tf[d_surf > surf.reject_d2]
        if tok.witch:
            modes: list[ColourClass] = []
            while tf.shape[0] >= 8 and len(modes) < 3:
                m = _robust_fit("witch", OTHER, tf)
                modes.append(m)
                tf = tf[ColourProfile({"m": m}).distances(tf)[:, 0] > surf.reject_d2]
            # the largest coloured mode (the hat, the token's shaded side and its shadow are
            # smaller, darker or grey)
            coloured = [m for m in modes if float(np.hypot(*m.mean[:2])) >= WITCH_CHROMA]
            if coloured:
                classes["witch"] = max(coloured, key=lambda m: m.samples)
            elif modes:
                classes["witch"] = max(modes, key=lambda m: float(np.hypot(*m.mean[:2])))

    # wizards: pixels of each setup roof's wizard cylinder that no surface class explains,
    # assigned to the nearest colour among those standing on that roof; two rounds.
    start = base or default_profile()
    wiz: dict[str, ColourClass] = {c: start.classes[c] for c in colours if c in start.classes}
    for c in colours:
        if c not in wiz:
            wiz[c] = default_profile().classes[c]
    surfaces = ColourProfile(dict(classes))
    cyl = np.array(
        [
            (x * roof_r * 0.9, y * roof_r * 0.9, zf)
            for x, y in disc
            for zf in np.linspace(0.1, 0.9, 5)
        ]
    )
    per_space: list[tuple[list[str], NDArray[np.float32]]] = []
    for space, o in expected.items():
        if not o.wizards:
            continue
        c = geometry.space_centre(space)
        z0 = geometry.tier_z(o.towers)
        pts = np.column_stack([c + cyl[:, :2], z0 + cyl[:, 2] * geometry.wizard.height])
        feats_ = f(_gather(frame, proj(pts)))
        d_surf = surfaces.distances(feats_).min(axis=1)
        per_space.append((sorted(o.wizards), feats_[d_surf > surfaces.reject_d2]))
    prior = {c: wiz[c].mean for c in colours}
    for _ in range(2):
        prof = ColourProfile(dict(wiz))
        pooled: dict[str, list[NDArray[np.float32]]] = {c: [] for c in colours}
        for names, feats_ in per_space:
            if feats_.shape[0] == 0:
                continue
            dist = prof.distances(feats_, only=names)
            idx = np.argmin(dist, axis=1)
            d2 = dist[np.arange(len(idx)), idx]
            for j, n in enumerate(names):
                pooled[n].append(feats_[(idx == j) & (d2 < 4 * prof.reject_d2)])
        new: dict[str, ColourClass] = {}
        for c in colours:
            chunk = np.concatenate(pooled[c]) if pooled[c] else np.zeros((0, 3), np.float32)
            if chunk.shape[0] < 12:
                raise ProfileError(f"{c}: too few wizard pixels found on the setup roofs")
            new[c] = _wizard_fit(c, chunk, prior[c])
        wiz = new
    classes.update(wiz)
    wb = (float(white[0]), float(white[1]), float(white[2]))
    meta = {
        "colours": list(colours),
        "players": len(colours),
        "towers": int(sum(o.towers for o in expected.values())),
        "track": geometry.track.to_json(),
    }

    profile = ColourProfile(classes, white_bgr=wb, meta=meta)
    # one wizard's measured area at setup (see detector.wizard_area_gain)
    from companion.vision.detector import wizard_area_gain

    gain = wizard_area_gain(frame, cam, geometry, profile, expected)
    if gain is not None:
        profile.meta["wizard_area"] = round(gain, 4)
    return profile


def main(argv: list[str]) -> int:
    """``companion calibrate profile --frame F --camera C --players N [--colours …] [--out P]``.

    Samples the colour profile from a photo of the setup position and writes it as JSON.
    Exit codes: 0 ok, 1 the frame could not be used, 2 bad arguments.
    """
    import argparse
    import sys

    ap = argparse.ArgumentParser(
        prog="companion calibrate profile",
        description="Sample the colour profile (wizards, roofs, track) from a setup photo.",
    )
    ap.add_argument("--frame", required=True, help="photo of the untouched setup position")
    ap.add_argument("--camera", required=True, help="camera file (companion calibrate intrinsics)")
    ap.add_argument("--players", required=True, type=int, help="number of players, 1-6")
    ap.add_argument("--colours", help="colours in seat order, comma separated (default R-COMP-2)")
    ap.add_argument("--geometry", help="board geometry JSON (default: the built-in defaults)")
    ap.add_argument(
        "--modules",
        default="",
        help="expansion modules set up, comma separated (fountain, web, witch, raven, magic_tower)",
    )
    ap.add_argument("--out", default="colour-profile.json", help="where to write the profile")
    args = ap.parse_args(argv)

    from companion.rules.model import default_colours
    from companion.vision.camera import CameraModel
    from companion.vision.geometry import BoardGeometry

    if not 1 <= args.players <= 6:
        print("players: expected 1..6", file=sys.stderr)
        return 2
    colours = (
        [c.strip() for c in args.colours.split(",") if c.strip()]
        if args.colours
        else list(default_colours(args.players))
    )
    if len(colours) != args.players:
        print(f"colours: {len(colours)} given for {args.players} players", file=sys.stderr)
        return 2
    frame = cv2.imread(args.frame, cv2.IMREAD_COLOR)
    if frame is None:
        print(f"cannot read the frame {args.frame}", file=sys.stderr)
        return 1
    try:
        camera = CameraModel.load(args.camera)
        geometry = BoardGeometry.load(args.geometry) if args.geometry else BoardGeometry.default()
        expected = None
        modules = frozenset(m.strip() for m in args.modules.split(",") if m.strip())
        if modules:
            from companion.rules import Config, dump_state, observe, setup

            state = setup(Config(len(colours), colours=tuple(colours), modules=modules), None)
            expected = observe(state)
            if geometry.n_spaces != len(expected.spaces):
                geometry = geometry.with_track(dump_state(state)["track"])
        profile = build_profile(frame, camera, geometry, colours, expected=expected)
    except (ProfileError, ValueError, OSError) as exc:
        print(f"profile: {exc}", file=sys.stderr)
        return 1
    profile.meta["frame"] = Path(args.frame).name
    profile.save(args.out)
    for a, b in (("yellow", "orange"), ("red", "orange"), ("blue", "purple")):
        if a in profile.classes and b in profile.classes:
            print(f"separation {a}/{b}: {separation(profile, a, b):.1f}", file=sys.stderr)
    print(
        f"colour profile with {len(profile.classes)} classes written to {args.out}", file=sys.stderr
    )
    return 0
