"""Building the detector and stability gate from the calibration files, and the camera overlay.

A real table uses the files ``companion calibrate`` wrote (``[calibration]`` of the config); the
simulated table passes the simulated camera's own camera file and a profile sampled from its
rendered setup frame — exactly what a calibrated real camera would have, nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.config import CalibrationConfig
from companion.service.detector_process import AnyDetector, DetectorProcess, DetectorProcessError
from companion.service.heartbeat import Heartbeats
from companion.vision.camera import CameraModel
from companion.vision.detector import Detection, Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile, default_profile
from companion.vision.stability import StabilityGate


def build_vision(
    cal: CalibrationConfig,
    heartbeats: Heartbeats,
    say: Callable[[str], None],
    source_spec: str = "",
    camera_model: CameraModel | None = None,
    geometry: BoardGeometry | None = None,
    profile: ColourProfile | None = None,
    sampled: Path | None = None,
    own_process: bool = False,
) -> tuple[AnyDetector, StabilityGate] | None:
    """``(detector, gate)`` from the configured calibration files (or the objects given); a
    ``session:PATH`` recording's own calibration files stand in for those not configured.

    Returns None — and reports the ``detector`` heartbeat with the reason — when a calibration
    file is missing or unusable; the camera still runs (the host page shows the frame for
    calibrating).

    :param say: prints a line on the terminal (what to calibrate).
    :param sampled: the colour profile sampled on the host page to use
        (:func:`sampled_profile`), or None.
    :param own_process: run the detector in a child process
        (:class:`~companion.service.detector_process.DetectorProcess`, ``[service]
        detector_process``); when the child cannot start, the detector runs in this process
        and ``say`` tells why.
    """
    hb = heartbeats
    recorded = _recorded_calibration(source_spec)
    try:
        if geometry is None and not cal.board and "geometry" in recorded:
            geometry = BoardGeometry.load(recorded["geometry"])
        if camera_model is None and not cal.camera and "camera" in recorded:
            camera_model = CameraModel.load(recorded["camera"])
        if profile is None and not cal.profile and "profile" in recorded:
            profile = ColourProfile.load(recorded["profile"])
        if recorded:
            say("vision: the recording's calibration (" + ", ".join(sorted(recorded)) + ")")
        if geometry is None:
            geometry = BoardGeometry.load(cal.board) if cal.board else BoardGeometry.default()
        uncalibrated: list[str] = []
        if camera_model is None:
            if cal.camera:
                camera_model = CameraModel.load(cal.camera)
            else:
                nominal = _nominal_camera_file(source_spec)
                if nominal is None:
                    hb.trouble("detector", "calibration.camera: no camera file configured")
                    say(
                        "vision: no camera file (calibration.camera); run `companion calibrate "
                        "intrinsics` and set it in the config"
                    )
                    return None
                camera_model = CameraModel.load(nominal)
                uncalibrated.append(f"nominal camera file {nominal.name}")
        if profile is None and sampled is not None:
            profile = ColourProfile.load(sampled)
            say(f"vision: the colours sampled on the host page ({sampled})")
        if profile is None:
            if cal.profile:
                profile = ColourProfile.load(cal.profile)
            else:
                profile = default_profile()
                uncalibrated.append("built-in colours (no roofs or track)")
        if uncalibrated:
            say(
                "vision: not calibrated yet (" + "; ".join(uncalibrated) + "): run `companion "
                "calibrate intrinsics` / `profile`, or sample the colours on the host page"
            )
    except (OSError, ValueError) as exc:
        hb.trouble("detector", f"calibration: {exc}")
        say(f"vision: calibration files unusable: {exc}")
        return None
    gate = StabilityGate(geometry=geometry)
    if own_process:
        try:
            return DetectorProcess(camera_model, geometry, profile), gate
        except DetectorProcessError as exc:
            say(f"vision: {exc}; the detector runs in the service's process")
    return Detector(camera_model, geometry, profile), gate


def renewed(detector: AnyDetector, profile: ColourProfile | None = None) -> AnyDetector:
    """A detector that has forgotten the board pose, the setup references and the averaged
    frames (the camera was moved, or ``profile`` was newly sampled at setup), built as
    ``detector`` was; a detector process renews its child's detector and is returned itself."""
    if isinstance(detector, DetectorProcess):
        return detector.renew(profile)
    return Detector(
        detector.camera,
        detector.geometry,
        profile or detector.profile,
        config=detector.config,
        limits=detector.limits,
    )


SAMPLED_PROFILE = "profile.json"
"""The colour profile the host page's *Sample the colours* step writes in the data directory."""

CAMERA_CONTROLS = "camera-controls.json"
"""The camera's exposure and white balance locked when the colours were sampled (data directory;
written whole, read by :func:`companion.vision.camera_controls.load_controls`)."""


def sampled_profile(cal: CalibrationConfig, data_dir: Path) -> Path | None:
    """The colour profile sampled on the host page (``<data dir>/profile.json``) when it is the
    one to use after a start (a power cut must not lose it): none is configured
    (``calibration.profile``), the configured file is missing, or the colours were sampled
    after it was written. None otherwise, and when nothing was sampled."""
    path = data_dir / SAMPLED_PROFILE
    if not path.is_file():
        return None
    if cal.profile:
        try:
            if Path(cal.profile).expanduser().stat().st_mtime > path.stat().st_mtime:
                return None
        except OSError:
            return path
    return path


CAMERA_PROFILES = {
    "picamera2": "picamera-v2-1640x1232.yml",
    "usb": "webcam-1280x720.yml",
}
"""Nominal camera files (``calibration/cameras``) used until a camera is calibrated."""


def _recorded_calibration(source_spec: str) -> dict[str, Path]:
    """The calibration files a ``session:PATH`` recording of ``companion record`` holds
    (``camera``, ``geometry``, ``profile`` -> file): a recording is detected as it was."""
    kind, _, rest = source_spec.partition(":")
    if kind.strip().lower() != "session" or not rest:
        return {}
    folder = Path(rest)
    found = {name: folder / f"{name}.json" for name in ("camera", "geometry", "profile")}
    return {name: path for name, path in found.items() if path.is_file()}


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
    image: NDArray[np.uint8],
    detection: Detection | None,
    geometry: BoardGeometry | None = None,
    quality: int = 80,
) -> bytes | None:
    """``image`` ``(H, W, 3) uint8 BGR`` with the detector's status, the detected marker corners
    and each space's reading (``7:2c by`` = 2 towers, crest roof, a blue and a yellow wizard)
    drawn on it, as JPEG bytes (the host page's calibration view)."""
    canvas = image.copy()
    status = detection.status if detection is not None else "no detection yet"
    message = detection.message if detection is not None else ""
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
    pose = detection.pose if detection is not None else None
    if pose is not None:
        for corners in pose.marker_corners_px.values():
            pts = np.asarray(corners, np.int32).reshape(-1, 1, 2)
            cv2.polylines(canvas, [pts], True, (0, 255, 255), 2, cv2.LINE_AA)
    obs = detection.observation if detection is not None else None
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
