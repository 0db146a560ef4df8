"""The Pi camera's locked exposure and white balance as a file.

When the host samples the colours on the host page, the Pi camera's automatic exposure and white
balance are locked at their values of that moment
(:meth:`companion.vision.sources.Picamera2Source.lock_exposure`); the service saves the values
beside the colour profile and applies them again at every start, so that the colours stay those
the profile was sampled at. The keys and types are picamera2's ``set_controls``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_CONTROL_TYPES: dict[str, type] = {
    "AeEnable": bool,
    "AwbEnable": bool,
    "ExposureTime": int,
    "AnalogueGain": float,
}


def load_controls(path: str | Path) -> dict[str, Any]:
    """Camera controls as saved when the colours were sampled (JSON): ``AeEnable``,
    ``AwbEnable`` (bool), ``ExposureTime`` (us), ``AnalogueGain`` and ``ColourGains`` (red,
    blue), as picamera2's ``set_controls`` takes them.

    :raises OSError: the file cannot be read; :raises ValueError: it is not such a file.
    """
    try:
        raw = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(raw, dict) or set(raw) != set(_CONTROL_TYPES) | {"ColourGains"}:
        raise ValueError(
            f"{path}: expected the keys {sorted(set(_CONTROL_TYPES) | {'ColourGains'})}"
        )
    out: dict[str, Any] = {}
    for key, kind in _CONTROL_TYPES.items():
        v = raw[key]
        if kind is bool and not isinstance(v, bool):
            raise ValueError(f"{path}: {key} must be true or false")
        if kind is not bool and (isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0):
            raise ValueError(f"{path}: {key} must be a positive number")
        out[key] = kind(v)
    gains = raw["ColourGains"]
    if (
        not isinstance(gains, list)
        or len(gains) != 2
        or not all(isinstance(g, (int, float)) and not isinstance(g, bool) and g > 0 for g in gains)
    ):
        raise ValueError(f"{path}: ColourGains must be two positive numbers (red, blue)")
    out["ColourGains"] = (float(gains[0]), float(gains[1]))
    return out
