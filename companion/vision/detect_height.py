"""Stack height from rim evidence: a small network trained on rendered tables.

The detector measures, for every space and every candidate tier ``k = 1..K``, how strongly the
projected rim of a roof at tier ``k`` lines up with an edge in the frame (see
:mod:`companion.vision.detector`). A hand-tuned rule (best tier above a threshold and above the
other tiers) misses faint roofs on the sandy track and reads textured track as a roof. This module
replaces that rule by a one-hidden-layer network (numpy; OpenCV 5 has no ``cv2.ml``) over
per-space features:

* per tier: the median and the lower quartile of the edge strength around the rim (grey levels
  per px, white paper = 255), the share of rim points that could be measured (inside the frame,
  not on a marker, not behind the raven castle), and the median edge just *inside* and just
  *outside* the rim (a true roof edge is a step, a printed joint or a texture line is not);
* per tier: the share of roof-interior probes labelled roof or wizard, and labelled track, by the
  colour profile, and the share of probes on the camera-facing wall of that tier labelled wall
  (a stack's side occludes the track behind it);
* per tier: the share of those wall probes that no track-surface class explains (something
  stands between the camera and the track there), and the lightness of the wall probes relative
  to the roof-interior probes of the same tier (a wall faces sideways and is shaded; a flat
  track or roof under the same light is not; white paper clipping in an over-exposed frame makes
  a plain roof and the sandy track one colour, not their walls);
* the camera's elevation above the space (deg): steep views shrink the parallax between tiers.

The answer per space is the tower count ``0..K`` and a confidence (its softmax probability),
which the detector hands to the tracker.

The model ships as ``detect_height.json`` (weights as JSON) beside this module; its training on
seeded rendered tables lives with the simulation (``python -m companion.sim.train_height``). At
run time only the frame, the pose and the board geometry are used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

MODEL_PATH = Path(__file__).with_name("detect_height.json")

PER_TIER = 10
"""Features per candidate tier: rim edge median, lower quartile, measured share, inside, outside;
roof-coloured and track-coloured shares of the roof interior; wall-coloured share of the wall,
the wall's share that is not track, the wall's lightness relative to the roof interior's."""


IGNORED_SCALE = 1e9
"""Spread given to a feature the model was trained without (see :func:`train`)."""

FEATURE_GROUPS = (
    "median",
    "q25",
    "share",
    "inside",
    "outside",
    "roof",
    "track",
    "wall",
    "occluded",
    "wall_light",
)
"""Names of the per-tier feature groups, in order (``--ignore`` takes these)."""

DEFAULT_IGNORE = ("wall",)
"""Feature groups the shipped model is trained without: the wall colour comes from the profile's
wall class, sampled on the setup towers' camera-facing walls, which a camera looking nearly
straight down hardly sees; a wrong wall class made whole sessions read their towers as missing
(``bench vision --frames 120 --seed 2 --no-hands``: tower-count error 2.92 % with it, 1.09 %
without)."""


def ignored_columns(groups: tuple[str, ...], max_towers: int) -> tuple[int, ...]:
    """Feature columns of the per-tier groups named in ``groups``.

    :raises ValueError: for a name not in :data:`FEATURE_GROUPS`.
    """
    cols: list[int] = []
    for g in groups:
        if g not in FEATURE_GROUPS:
            raise ValueError(f"feature group {g!r}: expected one of {', '.join(FEATURE_GROUPS)}")
        i = FEATURE_GROUPS.index(g)
        cols.extend(range(i * max_towers, (i + 1) * max_towers))
    return tuple(cols)


def n_features(max_towers: int) -> int:
    """Length of one space's feature vector for ``max_towers`` candidate tiers."""
    return PER_TIER * max_towers + 1


class HeightModel:
    """A small trained network: features ``(S, n_features(K))`` -> tower count and confidence.

    One hidden layer of ReLU units and a softmax over the tower counts ``0..K``; the features are
    standardised first. Pure numpy at run time (OpenCV 5 has no ``cv2.ml``).

    :param mean: ``(F,)`` feature means; :param scale: ``(F,)`` feature spreads.
    :param w1: ``(F, H)``; :param b1: ``(H,)``; :param w2: ``(H, K + 1)``; :param b2: ``(K + 1,)``.
    :raises ValueError: when the shapes do not fit together.
    """

    def __init__(
        self,
        mean: NDArray[Any],
        scale: NDArray[Any],
        w1: NDArray[Any],
        b1: NDArray[Any],
        w2: NDArray[Any],
        b2: NDArray[Any],
    ) -> None:
        self.mean = np.asarray(mean, np.float32).reshape(-1)
        self.scale = np.asarray(scale, np.float32).reshape(-1)
        self.w1 = np.asarray(w1, np.float32)
        self.b1 = np.asarray(b1, np.float32).reshape(-1)
        self.w2 = np.asarray(w2, np.float32)
        self.b2 = np.asarray(b2, np.float32).reshape(-1)
        f = self.mean.shape[0]
        if (
            self.scale.shape != (f,)
            or self.w1.shape != (f, self.b1.shape[0])
            or self.w2.shape != (self.b1.shape[0], self.b2.shape[0])
        ):
            raise ValueError("height model: weight shapes do not fit together")
        self.max_towers = self.b2.shape[0] - 1

    @property
    def n_features(self) -> int:
        return int(self.mean.shape[0])

    def probabilities(self, feats: NDArray[Any]) -> NDArray[np.float32]:
        """``(S, K + 1)`` probability of each tower count for ``(S, F)`` features."""
        x = (np.asarray(feats, np.float32) - self.mean) / self.scale
        h = np.maximum(x @ self.w1 + self.b1, 0.0)
        z = h @ self.w2 + self.b2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p: NDArray[np.float32] = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
        return p

    def predict(self, feats: NDArray[Any]) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        """Tower counts ``(S,) int32`` and their probabilities ``(S,) float32``."""
        p = self.probabilities(feats)
        best = np.argmax(p, axis=1).astype(np.int32)
        conf: NDArray[np.float32] = p[np.arange(len(p)), best]
        return best, conf

    def to_json(self) -> dict[str, Any]:
        def r(a: NDArray[Any]) -> Any:
            return np.round(a.astype(np.float64), 6).tolist()

        return {
            "format": "companion-height-model",
            "version": 1,
            "features": f"{PER_TIER} per tier (rim median, lower quartile, share, inside, outside, "
            "roof share, track share, wall share, wall not track, wall lightness / roof "
            "lightness) + camera elevation",
            "mean": r(self.mean),
            "scale": r(self.scale),
            "w1": r(self.w1),
            "b1": r(self.b1),
            "w2": r(self.w2),
            "b2": r(self.b2),
        }

    @classmethod
    def from_json(cls, data: Any) -> HeightModel:
        """:raises ValueError: for anything but a version-1 height model with fitting shapes."""
        if not isinstance(data, dict) or data.get("format") != "companion-height-model":
            raise ValueError("not a height model (format != companion-height-model)")
        if data.get("version") != 1:
            raise ValueError(f"height model version {data.get('version')!r} unsupported")
        try:
            parts = [
                np.array(data[k], np.float32) for k in ("mean", "scale", "w1", "b1", "w2", "b2")
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"height model: bad weights ({exc})") from None
        if not all(np.all(np.isfinite(a)) for a in parts):
            raise ValueError("height model: weights must be finite")
        return cls(*parts)

    @classmethod
    def load(cls, path: str | Path = MODEL_PATH, max_towers: int = 10) -> HeightModel | None:
        """The model in ``path``, or None when the file is missing or does not fit
        ``max_towers`` candidate tiers.

        :raises ValueError: when the file exists but is not a height model.
        """
        p = Path(path)
        if not p.is_file():
            return None
        model = cls.from_json(json.loads(p.read_text(encoding="utf-8")))
        if model.max_towers != max_towers or model.n_features != n_features(max_towers):
            return None
        return model
