"""The witch and the raven token on every top surface from a small convolutional network (ONNX,
run with ``cv2.dnn``).

The hand-built token stage (:mod:`companion.vision.detector.tokens`) looks for the colours the
setup frame showed on the tokens' space: the witch's green-blue disc and the raven's white disc
beside its printed raven. Under a light that makes the sandy track as light as the white disc,
or a witch's disc as grey as the track, those colours are not there to find. This module is the
learned alternative (``DetectorConfig.token_method = "cnn"``; ``docs/vision.md``, "Tokens"):

* the input is the wizard network's *top-surface stack* of each space
  (:func:`~companion.vision.wizard_cnn.top_stacks`: board-parallel squares at 2, 10 and 18 mm
  above the surface the pieces stand on, the near side at the bottom, divided by the markers'
  white), so one resampling serves both networks;
* the network gives, for the witch and the raven token (:data:`TOKENS`), the probabilities
  that the token is absent from / present on that top, and for a roof whether it is plain or
  crest (a softmax per head, with temperatures fitted on held-out renders folded in). A token
  on a roof hides the middle of its crest disc and its printed raven, which the hand-built
  top-kind stage reads crest and plain by; the network, trained on roofs with and without
  tokens, sees the rim of the disc around the token.

The detector puts each token on the space the network finds it likeliest on and takes how sure
that is into the space's confidence (:func:`token_sureness`); a roof under a token is read
crest or plain by the network's roof head. The model ships as
``token_cnn.onnx`` beside this module; its training on seeded domain-randomised renders lives
with the simulation (``python -m companion.sim.train_token_cnn``, needs the ``train`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from companion.vision.images import read_onnx
from companion.vision.wizard_cnn import ROI_PX, n_channels

MODEL_PATH = Path(__file__).with_name("token_cnn.onnx")

TOKENS = ("witch", "raven")
"""The tokens the network reads, in the order of its outputs (R-MOD-WITCH-1, R-MOD-RAVEN-1)."""

HEADS = len(TOKENS) + 1
"""Output pairs: absent / present for each token, then plain / crest for a roof."""


class TokenModel:
    """The shipped (or a given) ONNX token network, run with ``cv2.dnn``.

    :param path: an ONNX file taking ``(N, 3 len(SLABS_MM), ROI_PX, ROI_PX) float32``
        top-surface stacks (as :class:`~companion.vision.wizard_cnn.WizardModel`) and giving
        ``(N, 2 HEADS)`` probabilities (head-major: ``[token, absent / present]`` for each
        token, then ``[plain, crest]``; each pair sums to 1).
    :raises OSError: when the file is missing; :raises ValueError: when OpenCV cannot read it or
        it does not give those probabilities for that input.
    """

    def __init__(self, path: str | Path = MODEL_PATH) -> None:
        self._net = read_onnx(path, "token model")
        self.path = Path(path)
        probe = np.zeros((2, n_channels(), ROI_PX, ROI_PX), np.float32)
        try:
            self._net.setInput(probe)
            got = np.asarray(self._net.forward(), np.float32).reshape(2, -1)
        except Exception as exc:  # cv2.error or a reshape of the wrong size
            raise ValueError(
                f"token model {self.path.name}: does not take top-surface stacks ({exc})"
            ) from None
        pairs = got.reshape(2, HEADS, -1) if got.shape[1] == 2 * HEADS else None
        if pairs is None or not np.allclose(pairs.sum(axis=2), 1.0, atol=1e-3):
            raise ValueError(
                f"token model {self.path.name}: gives {got.shape[1]} outputs, expected "
                f"{2 * HEADS} probabilities ({', '.join(TOKENS)}: absent, present; roof: "
                "plain, crest)"
            )

    def read(self, x: NDArray[Any]) -> NDArray[np.float32]:
        """``(N, HEADS)`` probabilities for network input ``(N, 3 len(SLABS_MM), ROI_PX,
        ROI_PX)``: that each token (:data:`TOKENS`) stands on each top, then that the top, if
        it is a crest or plain roof, is crest.

        :raises ValueError: for input of another shape.
        """
        a = np.ascontiguousarray(x, np.float32)
        want = (n_channels(), ROI_PX, ROI_PX)
        if a.ndim != 4 or a.shape[1:] != want:
            raise ValueError(
                f"top-surface stacks: expected (N, {', '.join(map(str, want))}), got {a.shape}"
            )
        if len(a) == 0:
            return np.zeros((0, HEADS), np.float32)
        self._net.setInput(a)
        out = np.asarray(self._net.forward(), np.float32).reshape(len(a), HEADS, 2)
        return np.ascontiguousarray(out[:, :, 1])


def token_sureness(
    present: Mapping[int, float], always_shown: bool
) -> tuple[int | None, dict[int, float]]:
    """Where one token stands and how sure each space's reading of it is.

    :param present: space -> the network's probability that the token is on that top (the
        spaces it can be seen on).
    :param always_shown: the token is on exactly one of those tops (the raven: never covered,
        R-MOD-RAVEN-7); else it may be hidden (the witch under a tower, R-MOD-WITCH-7).
    :returns: the space it is read on (None: not seen) and space -> how sure (0..1) that space's
        reading (token or no token) is. A shown token's probabilities are made to add up to one
        over the spaces (each space's odds over the sum of odds), so a token the network finds
        nowhere (or in two places) leaves the spaces that may hold it unsure; otherwise each
        space is independent and only the likeliest space may hold the token.
    """
    if not present:
        return None, {}
    spaces: Sequence[int] = list(present)
    p = np.clip(np.array([present[s] for s in spaces], np.float64), 1e-6, 1 - 1e-6)
    best = int(np.argmax(p))
    if always_shown:
        odds = p / (1.0 - p)
        q = odds / odds.sum()
        sure = {s: float(1.0 - q[i]) for i, s in enumerate(spaces)}
        sure[spaces[best]] = float(q[best])
        return spaces[best], sure
    on = spaces[best] if p[best] >= 0.5 else None
    sure = {s: float(1.0 - p[i]) for i, s in enumerate(spaces)}
    if on is not None:
        sure[on] = float(p[best])
    return on, sure
