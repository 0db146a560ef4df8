"""One small network fitter shared by the offline trainers (stack height, roof kind).

A single hidden ReLU layer and a softmax, fitted with Adam on the class-weighted cross-entropy
in plain numpy: the models are small enough that the trainers need no learning framework, and
what they produce is read at run time by :mod:`companion.vision.detect_height` (JSON) and by
``cv2.dnn`` (ONNX, :mod:`companion.vision.top_kind`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

Params = list[NDArray[Any]]
"""``[w1 (F, H), b1 (H,), w2 (H, C), b2 (C,)]``."""


def fit_softmax_mlp(
    xs: NDArray[Any],
    y: NDArray[np.int32],
    class_weight: NDArray[np.float64],
    hidden: int,
    steps: int,
    rng: np.random.Generator,
    l2: float,
    lr: float,
    batch: int | None = None,
    dtype: type[np.floating[Any]] = np.float64,
) -> Params:
    """Fit ``softmax(relu(xs @ w1 + b1) @ w2 + b2)`` to the class indices ``y``.

    :param xs: ``(N, F)`` standardised inputs (their dtype is kept in the products).
    :param y: ``(N,)`` class indices ``0..C-1``; ``C = len(class_weight)``.
    :param class_weight: ``(C,)`` weight of each class's examples; each step's example weights
        are normalised to sum to 1.
    :param rng: draws the initial weights (He for the hidden layer) and, with ``batch``, each
        step's mini-batch.
    :param l2: weight decay on ``w1`` and ``w2``.
    :param lr: Adam's step size (betas 0.9, 0.999).
    :param batch: examples per step (drawn with replacement); ``None`` for full batches.
    :param dtype: the parameters' dtype, kept after every update.
    """
    n, f = xs.shape
    c = len(class_weight)
    params: Params = [
        rng.normal(0, (2 / f) ** 0.5, (f, hidden)).astype(dtype),
        np.zeros(hidden, dtype),
        rng.normal(0, (1 / hidden) ** 0.5, (hidden, c)).astype(dtype),
        np.zeros(c, dtype),
    ]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        if batch is None:
            xb, yb = xs, y
        else:
            bi = rng.integers(0, n, min(batch, n))
            xb, yb = xs[bi], y[bi]
        w1, b1, w2, b2 = params
        pre = xb @ w1 + b1
        h = np.maximum(pre, 0.0)
        z = h @ w2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        onehot = np.zeros_like(p)
        onehot[np.arange(len(yb)), yb] = 1.0
        sw = (class_weight[yb] / class_weight[yb].sum()).astype(dtype)
        dz = (p - onehot) * sw[:, None]
        dh = (dz @ w2.T) * (pre > 0)
        grads = (xb.T @ dh + l2 * w1, dh.sum(axis=0), h.T @ dz + l2 * w2, dz.sum(axis=0))
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            mh = m[i] / (1 - 0.9**t)
            vh = v[i] / (1 - 0.999**t)
            params[i] = (params[i] - lr * mh / (np.sqrt(vh) + 1e-8)).astype(dtype)
    return params
