"""The colour profile as the detector reads it: class indices, per-class flags and the
nearest-class labellers.

Built once per detector from the profile sampled at setup (:meth:`ProfileClasses.build`); every
stage looks classes up here by index (``label + 1`` indexes the flag arrays: index 0 is the
reject label ``-1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from companion.rules.observation import COLOURS
from companion.vision.detector.config import (
    CASTLE_CLASS,
    INSERT_CLASSES,
    MAGIC_CLASSES,
    ROOF_CLASSES,
    TOKEN_CLASSES,
    DetectorConfig,
)
from companion.vision.profile import CHROMA_EPS, MIN_LIGHT, ColourClass, ColourProfile


class NearestClass(ColourProfile):
    """Every class of a profile with one shared spread and no reject: each pixel goes to the
    nearest prototype. The chroma of a dark pixel is noisy (sensor noise divided by a small
    sum), so its chroma weighs less and its lightness more."""

    def __init__(
        self,
        classes: dict[str, ColourClass],
        *,
        white_bgr: tuple[float, float, float],
        chroma_sd: float,
        light_sd: float,
        noise: float,
    ) -> None:
        super().__init__(classes, reject_d2=math.inf, white_bgr=white_bgr)
        self._chroma_var = chroma_sd**2
        self._light_var = light_sd**2
        self._noise = noise

    @property
    def means(self) -> NDArray[np.float32]:
        """``(C, 3)`` the prototypes' means, in the order of :attr:`names`."""
        return self._means

    def classify(
        self, feats: NDArray[np.floating], only: object = None
    ) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        return self.classify_means(feats, self._means)

    def classify_means(
        self, feats: NDArray[np.floating], means: NDArray[np.floating]
    ) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        """:meth:`classify` with the prototypes' means replaced by ``means`` ``(C, 3)``."""
        f = np.asarray(feats, np.float32).reshape(-1, 3)
        m = np.asarray(means, np.float32)
        s = 3.0 * np.maximum(f[:, 2], 0.0) + CHROMA_EPS
        var_c = self._chroma_var + (self._noise / s) ** 2
        d2 = ((f[:, None, :2] - m[None, :, :2]) ** 2).sum(-1) / var_c[:, None] + (
            f[:, None, 2] - m[None, :, 2]
        ) ** 2 / self._light_var
        best = np.argmin(d2, axis=1).astype(np.int32)
        bd = d2[np.arange(len(best)), best].astype(np.float32)
        best[f[:, 2] < MIN_LIGHT] = -1
        return best, bd


def _nearest(
    profile: ColourProfile, config: DetectorConfig, classes: dict[str, ColourClass]
) -> NearestClass:
    return NearestClass(
        classes,
        white_bgr=profile.white_bgr,
        chroma_sd=config.count_chroma_sd,
        light_sd=config.count_light_sd,
        noise=config.count_noise,
    )


def _out_of_reach(profile: ColourProfile, names: tuple[str, ...]) -> dict[str, ColourClass]:
    """The named classes of the profile moved out of every pixel's reach (same indices)."""
    return {
        n: replace(c, mean=np.array([0.0, 0.0, 1e3]))
        for n, c in profile.classes.items()
        if n in names
    }


@dataclass(frozen=True, slots=True)
class ProfileClasses:
    """The profile's classes by index, as the detector's stages use them.

    Index arrays and maps hold class indices into ``names`` (-1: not in the profile); the
    ``is_*`` arrays are indexed by ``label + 1`` (index 0: the reject label).
    """

    names: list[str]
    roof_idx: NDArray[np.int32]
    disc_yb: float
    """Yellow-blue chroma halfway between the crest disc and the plain roof (inf: not learnt)."""
    disc_gap: float
    """Yellow-blue chroma of the crest disc above the plain roof (0: not learnt)."""
    castle_idx: int
    wizard_idx: dict[str, int]
    is_wizard: NDArray[np.bool_]
    roofish: NDArray[np.bool_]
    """Roof or wizard classes."""
    is_track: NDArray[np.bool_]
    is_wall: NDArray[np.bool_]
    token_idx: dict[str, int]
    token_profile: ColourProfile
    """The classes the raven token's white disc is told from (the magic tower's left out)."""
    token_raven: int
    tokens: tuple[str, ...]
    """The expansion's tokens in play (``profile.meta["tokens"]``; a profile without it: the
    tokens whose colours it holds)."""
    disc_colour: str
    """The wizard colour the crest disc is nearest to (usually yellow; "" without one)."""
    mark_idx: int
    fountain_idx: int
    track_idx: int
    magic_idx: tuple[int, ...]
    magic_like_wizards: tuple[int, ...]
    """The wizard colours nearest to the magic roof's star, field and merlons."""
    magic_field: tuple[int, ...]
    count_profile: NearestClass
    """Wizard counting: all classes, the magic tower's out of reach."""
    magic_count: NearestClass
    """Wizard counting on magic tops (the magic tower's colours in reach)."""
    castle_count: NearestClass
    """The castle's probes (the inserts out of reach)."""

    @classmethod
    def build(cls, profile: ColourProfile, config: DetectorConfig) -> ProfileClasses:
        """Index the classes of ``profile`` (sampled at setup) for the detector."""
        names = profile.names
        roof_idx = np.array([names.index(n) for n in ROOF_CLASSES if n in names], np.int32)
        if "roof-crest" in names and "roof-plain" in names:
            # yellow-blue chroma halfway between the crest disc and the plain roof
            crest, plain = profile.classes["roof-crest"].mean, profile.classes["roof-plain"].mean
            disc_yb = float((crest[1] + plain[1]) / 2)
            disc_gap = float(crest[1] - plain[1])
        else:
            disc_yb = math.inf  # no disc colour learnt: the ink decides
            disc_gap = 0.0
        wizard_idx = {c: names.index(c) for c in COLOURS if c in names}
        # class index + 1 -> bool (index 0 = reject)
        is_wizard = np.zeros(len(names) + 1, bool)
        is_wizard[np.array(list(wizard_idx.values()), np.int64) + 1] = True
        roofish = is_wizard.copy()
        roofish[roof_idx + 1] = True
        token_idx = {t: names.index(t) for t in TOKEN_CLASSES if t in names}
        # the raven token's white disc is told from the surfaces it can stand on, not from the
        # magic tower's colours (its pale violet merlons are near white under some lights and
        # show on the magic top only)
        token_profile = ColourProfile(
            {n: c for n, c in profile.classes.items() if n not in MAGIC_CLASSES},
            reject_d2=profile.reject_d2,
            white_bgr=profile.white_bgr,
        )
        token_raven = token_profile.names.index("raven") if "raven" in token_idx else -1
        meta_tokens = profile.meta.get("tokens")
        tokens = (
            tuple(t for t in TOKEN_CLASSES if t in meta_tokens)
            if isinstance(meta_tokens, list)
            else tuple(token_idx)
        )
        # the wizard colour the crest disc is nearest to (usually yellow)
        disc_colour = ""
        if "roof-crest" in names and wizard_idx:
            wc = list(wizard_idx)
            d2 = profile.distances(profile.classes["roof-crest"].mean[None], only=wc)[0]
            disc_colour = wc[int(np.argmin(d2))]
        is_track = np.zeros(len(names) + 1, bool)
        for i in range(len(names)):
            is_track[i + 1] = profile.classes[names[i]].group == "track"
        magic_idx = tuple(names.index(n) for n in MAGIC_CLASSES if n in names)
        # the wizard colour nearest to each of the magic roof's colours (under another light
        # the roof's blue goes to the blue or purple wizard's prototype)
        magic_like_wizards: tuple[int, ...] = ()
        if wizard_idx:
            wc = list(wizard_idx)
            for mc in MAGIC_CLASSES:
                if mc in names:
                    d2 = profile.distances(profile.classes[mc].mean[None], only=wc)[0]
                    magic_like_wizards += (wizard_idx[wc[int(np.argmin(d2))]],)
        # the magic roof's field and violet merlons (an over-exposed frame pales the field
        # towards the merlons' colour)
        magic_field = tuple(names.index(n) for n in ("roof-magic", "wall-magic") if n in names)
        is_wall = np.zeros(len(names) + 1, bool)
        for n in ("wall", "wall-magic"):
            if n in names:
                is_wall[names.index(n) + 1] = True
        # wizard counting: every class with one shared covariance and no reject, so a pixel
        # goes to the nearer of the wizard colour and the surface behind it; a blurred or
        # mixed edge pixel counts for the wizard when it is more than half wizard (an unbiased
        # area under blur and noise, where the profile's tight prototypes reject edge pixels)
        # (the magic roof's colours out of reach except on magic tops: same class indices)
        away = _out_of_reach(profile, MAGIC_CLASSES)
        count_profile = _nearest(profile, config, {**profile.classes, **away})
        magic_count = _nearest(profile, config, dict(profile.classes)) if away else count_profile
        # the castle's probes: never on an insert (R-MOD-FOUNTAIN-6, R-MOD-WEB-3), whose dark
        # web ground is otherwise the black castle's nearest rival under a dim light
        no_insert = _out_of_reach(profile, INSERT_CLASSES)
        castle_count = (
            _nearest(profile, config, {**profile.classes, **no_insert})
            if no_insert
            else magic_count
        )
        return cls(
            names=names,
            roof_idx=roof_idx,
            disc_yb=disc_yb,
            disc_gap=disc_gap,
            castle_idx=names.index(CASTLE_CLASS) if CASTLE_CLASS in names else -1,
            wizard_idx=wizard_idx,
            is_wizard=is_wizard,
            roofish=roofish,
            is_track=is_track,
            is_wall=is_wall,
            token_idx=token_idx,
            token_profile=token_profile,
            token_raven=token_raven,
            tokens=tokens,
            disc_colour=disc_colour,
            mark_idx=names.index("track-crest") if "track-crest" in names else -1,
            fountain_idx=names.index("track-fountain") if "track-fountain" in names else -1,
            track_idx=names.index("track") if "track" in names else -1,
            magic_idx=magic_idx,
            magic_like_wizards=magic_like_wizards,
            magic_field=magic_field,
            count_profile=count_profile,
            magic_count=magic_count,
            castle_count=castle_count,
        )
