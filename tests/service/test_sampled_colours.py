"""The colours sampled on the host page, and the Pi camera's exposure locked with them, are the
table's calibration: they are used at once and again after a restart (a power cut must not put
the detector back on built-in colours), and the camera keeps the exposure and white balance the
colours were sampled at. A stand-in for picamera2 delivers a rendered setup frame (seed < 1000).
"""

from __future__ import annotations

import io
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from companion.config import load_config, with_overrides
from companion.rules import Config, setup
from companion.service.app import Companion
from companion.service.detector_process import DetectorProcess
from companion.service.vision import CAMERA_CONTROLS, SAMPLED_PROFILE, sampled_profile
from companion.sim.render import random_setup, render
from companion.sim.testing import wait_until
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile, default_profile
from companion.web.service import Audience, CommandError

PLAYERS = 3


class _PiCamera:
    """Stands in for picamera2.Picamera2: every capture is the same rendered frame."""

    frame: np.ndarray | None = None
    instances: list[_PiCamera] = []

    def __init__(self) -> None:
        self.controls: dict[str, object] = {}
        _PiCamera.instances.append(self)

    def create_video_configuration(self, main: dict[str, object]) -> dict[str, object]:
        return {"main": dict(main)}

    def configure(self, config: object) -> None:
        pass

    def set_controls(self, controls: dict[str, object]) -> None:
        self.controls.update(controls)

    def start(self) -> None:
        pass

    def capture_array(self, stream: str) -> np.ndarray:
        assert _PiCamera.frame is not None
        return _PiCamera.frame.copy()

    def capture_metadata(self) -> dict[str, object]:
        return {"ExposureTime": 20000, "AnalogueGain": 3.0, "ColourGains": (2.0, 1.7)}

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def setup_view(tmp_path_factory: pytest.TempPathFactory) -> tuple[np.ndarray, Path]:
    """A rendered frame of the untouched setup position and its camera file."""
    nrng = np.random.default_rng(611)
    table = random_setup(nrng, BoardGeometry.default())
    res = render(setup(Config(player_count=PLAYERS), seed=None), nrng, setup=table, hand=False)
    path = tmp_path_factory.mktemp("camera") / "camera.yml"
    table.camera.save(path)
    return res.frame, path


@pytest.fixture
def pi_camera(monkeypatch: pytest.MonkeyPatch, setup_view: tuple[np.ndarray, Path]) -> type:
    module = types.ModuleType("picamera2")
    module.Picamera2 = _PiCamera  # type: ignore[attr-defined]
    module.Picamera2.global_camera_info = staticmethod(lambda: [{"Model": "imx708"}])  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    _PiCamera.instances.clear()
    _PiCamera.frame = setup_view[0]
    return _PiCamera


def _companion(tmp_path: Path, camera_file: Path) -> Companion:
    frame = _PiCamera.frame
    assert frame is not None
    h, w = frame.shape[:2]
    cfg = with_overrides(
        load_config(None),
        camera={"source": f"picamera2:{w}x{h}", "fps": 20.0},
        calibration={"camera": str(camera_file)},
        data={"dir": str(tmp_path / "data")},
        game={"players": PLAYERS, "colours": []},
        hardware={"backend": "mock"},
        web={"host": "127.0.0.1", "port": 0},
    )
    c = Companion(cfg, web=False, print_qr=False, out=io.StringIO())
    c.start()
    return c


def test_sampled_colours_and_locked_exposure_are_kept_and_come_back_after_a_restart(
    tmp_path: Path, pi_camera: type, setup_view: tuple[np.ndarray, Path]
) -> None:
    host = Audience.host()
    c = _companion(tmp_path, setup_view[1])
    try:
        assert c.camera is not None and c.vision is not None
        wait_until(lambda: c.camera is not None and c.camera.latest() is not None, 30, "a frame")
        wanted = c.vision.detector.config
        # the frames are read in the detector's own process (the default), which the new
        # colours reach without a new process
        assert isinstance(c.vision.detector, DetectorProcess)
        child = c.vision.detector.pid
        got = c.service.submit({"command": "calibrate_profile"}, host)
        data = tmp_path / "data"
        assert got["profile"] == str(data / SAMPLED_PROFILE) and got["exposure"] == "locked"
        locked = pi_camera.instances[0].controls
        assert locked["AeEnable"] is False and locked["ExposureTime"] == 20000
        assert (data / CAMERA_CONTROLS).is_file()
        # the new detector reads with the sampled colours and the same settings as before
        assert c.vision.detector.config == wanted
        sampled = ColourProfile.load(data / SAMPLED_PROFILE)
        assert c.vision.detector.profile.to_json() == sampled.to_json()
        assert "roof-crest" in sampled.classes  # learnt from the frame, not the defaults
        assert c.vision.detector.pid == child
    finally:
        c.stop()
    assert child is not None and not Path(f"/proc/{child}").exists()  # stopped and reaped
    # a power cut: the next start uses the sampled colours and locks the camera as before
    again = _companion(tmp_path, setup_view[1])
    try:
        cam = pi_camera.instances[-1]
        assert cam.controls == {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": 20000,
            "AnalogueGain": 3.0,
            "ColourGains": (2.0, 1.7),
        }
        assert again.vision is not None
        assert again.vision.detector.profile.to_json() == sampled.to_json()
        assert "sampled on the host page" in again.out.getvalue()  # type: ignore[attr-defined]
        # after moving the camera the host resets: the camera meters the light again
        wait_until(lambda: again.camera is not None and again.camera.latest() is not None, 30)
        got = again.service.submit({"command": "calibrate_reset"}, host)
        assert got["exposure"] == "automatic"
        assert cam.controls["AeEnable"] is True and cam.controls["AwbEnable"] is True
        assert not (tmp_path / "data" / CAMERA_CONTROLS).exists()
    finally:
        again.stop()


def test_a_frame_that_is_not_the_setup_position_changes_nothing(
    tmp_path: Path, pi_camera: type, setup_view: tuple[np.ndarray, Path]
) -> None:
    _PiCamera.frame = np.full_like(setup_view[0], 90)  # no board in view
    c = _companion(tmp_path, setup_view[1])
    try:
        assert c.camera is not None and c.vision is not None
        wait_until(lambda: c.camera is not None and c.camera.latest() is not None, 30, "a frame")
        before = c.vision.detector
        with pytest.raises(CommandError) as info:
            c.service.submit({"command": "calibrate_profile"}, Audience.host())
        assert info.value.status == 409 and "setup position" in info.value.message
        assert c.vision.detector is before
        assert not (tmp_path / "data" / SAMPLED_PROFILE).exists()
        assert "AeEnable" not in pi_camera.instances[0].controls
    finally:
        c.stop()


def test_which_colours_a_start_uses(tmp_path: Path) -> None:
    from companion.config import CalibrationConfig

    data = tmp_path / "data"
    data.mkdir()
    configured = tmp_path / "profile.json"
    none = CalibrationConfig()
    assert sampled_profile(none, data) is None  # nothing sampled yet
    default_profile().save(data / SAMPLED_PROFILE)
    assert sampled_profile(none, data) == data / SAMPLED_PROFILE
    default_profile().save(configured)
    with_file = CalibrationConfig(profile=str(configured))
    os.utime(configured, (1_000_000, 1_000_000))
    # sampled on the page after the configured file was written: the page's sample is used
    assert sampled_profile(with_file, data) == data / SAMPLED_PROFILE
    os.utime(data / SAMPLED_PROFILE, (500_000, 500_000))
    assert sampled_profile(with_file, data) is None  # the configured file is newer
    missing = CalibrationConfig(profile=str(tmp_path / "gone.json"))
    assert sampled_profile(missing, data) == data / SAMPLED_PROFILE
