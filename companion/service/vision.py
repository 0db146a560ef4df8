"""Building the detector and stability gate from the calibration files, and the camera overlay.

A real table uses the files ``companion calibrate`` wrote (``[calibration]`` of the config); the
simulated table passes the simulated camera's own camera file and a profile sampled from its
rendered setup frame — exactly what a calibrated real camera would have, nothing more.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np


def build_vision(
    companion: Any,
    source_spec: str = "",
    camera_model: Any = None,
    geometry: Any = None,
    profile: Any = None,
) -> tuple[Any, Any] | None:
    """``(detector, gate)`` from the configured calibration files (or the objects given).

    Returns None — and reports the ``detector`` heartbeat as missing with the reason — when a
    vision part or a calibration file is missing; the camera still runs (the host page shows the
    frame for calibrating).
    """
    parts = companion.parts
    hb = companion.heartbeats
    cal = companion.config.calibration
    missing = parts.missing_line("detector", "stability", "camera", "geometry", "profile")
    if missing:
        hb.trouble("detector", f"missing: {missing}")
        companion.say(f"vision: not analysing frames, missing {missing}")
        return None
    detector_mod = parts.get("detector")
    stability = parts.get("stability")
    camera_mod = parts.get("camera")
    geometry_mod = parts.get("geometry")
    profile_mod = parts.get("profile")
    assert detector_mod and stability and camera_mod and geometry_mod and profile_mod
    try:
        if geometry is None:
            geometry = (
                geometry_mod.BoardGeometry.load(cal.board)
                if cal.board
                else geometry_mod.BoardGeometry.default()
            )
        uncalibrated: list[str] = []
        if camera_model is None:
            if cal.camera:
                camera_model = camera_mod.CameraModel.load(cal.camera)
            else:
                nominal = _nominal_camera_file(source_spec)
                if nominal is None:
                    hb.trouble("detector", "calibration.camera: no camera file configured")
                    companion.say(
                        "vision: no camera file (calibration.camera); run `companion calibrate "
                        "intrinsics` and set it in the config"
                    )
                    return None
                camera_model = camera_mod.CameraModel.load(nominal)
                uncalibrated.append(f"nominal camera file {nominal.name}")
        if profile is None:
            if cal.profile:
                profile = profile_mod.ColourProfile.load(cal.profile)
            else:
                profile = profile_mod.default_profile()
                uncalibrated.append("built-in colours (no roofs or track)")
        if uncalibrated:
            companion.say(
                "vision: not calibrated yet (" + "; ".join(uncalibrated) + "): run `companion "
                "calibrate intrinsics` / `profile`, or sample the colours on the host page"
            )
    except (OSError, ValueError) as exc:
        hb.trouble("detector", f"calibration: {exc}")
        companion.say(f"vision: calibration files unusable: {exc}")
        return None
    detector = detector_mod.Detector(camera_model, geometry, profile)
    gate = stability.StabilityGate()
    return detector, gate


CAMERA_PROFILES = {
    "picamera2": "picamera-v2-1640x1232.yml",
    "usb": "webcam-1280x720.yml",
}
"""Nominal camera files (``calibration/cameras``) used until a camera is calibrated."""


def _nominal_camera_file(source_spec: str) -> Path | None:
    name = CAMERA_PROFILES.get(source_spec.partition(":")[0])
    if name is None:
        return None
    here = Path(__file__).resolve()
    for root in (here.parents[2], Path("/opt/companion/src")):
        candidate = root / "calibration" / "cameras" / name
        if candidate.is_file():
            return candidate
    return None


def overlay_jpeg(
    image: np.ndarray, detection: Any, geometry: Any = None, quality: int = 80
) -> bytes | None:
    """``image`` ``(H, W, 3) uint8 BGR`` with the detector's status, the detected marker corners
    and each space's reading (``7:2c by`` = 2 towers, crest roof, a blue and a yellow wizard)
    drawn on it, as JPEG bytes (the host page's calibration view)."""
    canvas = image.copy()
    status = str(getattr(detection, "status", "no detection yet"))
    message = str(getattr(detection, "message", ""))
    colour = (40, 200, 40) if status == "ok" else (40, 40, 230)
    cv2.putText(
        canvas,
        f"{status} {message}"[:90],
        (16, 36),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.9,
        colour,
        2,
        cv2.LINE_AA,
    )
    pose = getattr(detection, "pose", None)
    if pose is not None:
        for corners in getattr(pose, "marker_corners_px", {}).values():
            pts = np.asarray(corners, np.int32).reshape(-1, 1, 2)
            cv2.polylines(canvas, [pts], True, (0, 255, 255), 2, cv2.LINE_AA)
    obs = getattr(detection, "observation", None)
    if pose is not None and obs is not None and geometry is not None:
        centres = np.asarray(geometry.space_centres(), np.float64)
        px = pose.board_to_image(centres)
        for i, (x, y) in enumerate(px, start=1):
            s = obs.spaces.get(i)
            text = (
                f"{i}:?"
                if s is None
                else (
                    f"{i}:{s.towers}{s.top[0]} " + "".join(c[0] * n for c, n in s.wizards.items())
                )
            )
            cv2.putText(
                canvas,
                text,
                (int(x) - 20, int(y)),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.55,
                (0, 0, 0),
                4,
                cv2.LINE_AA,
            )
            cv2.putText(
                canvas,
                text,
                (int(x) - 20, int(y)),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.55,
                (255, 255, 255),
                1,
                cv2.LINE_AA,
            )
    ok, buf = cv2.imencode(".jpg", canvas, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return buf.tobytes() if ok else None
