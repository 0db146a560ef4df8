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
loaded by the detector. The fitting is :mod:`companion.vision.profile_fit`; ``companion
calibrate profile`` is :func:`companion.vision.profile_setup.main`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

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
    return x0, y0, step, cast("NDArray[np.uint8]", cv2.erode(mask, np.ones((3, 3), np.uint8)))


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
