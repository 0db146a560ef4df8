"""Frame sources: image folders, recorded sessions, video files, and failures that must become a
status instead of an exception."""

from __future__ import annotations

import importlib.util
import json

import cv2
import numpy as np
import pytest

from companion.vision.sources import (
    FakeFrameSource,
    Frame,
    FrameSourceError,
    ImageFolderSource,
    SessionRecorder,
    SessionSource,
    VideoFileSource,
    decode_image,
    open_source,
)


def numbered_frame(n: int, size=(64, 48)) -> np.ndarray:
    """A small BGR frame whose content says which one it is (n in 0..255)."""
    w, h = size
    img = np.zeros((h, w, 3), np.uint8)
    img[:, :, 0] = n
    img[:, :, 1] = 255 - n
    img[: h // 2, : w // 2, 2] = 200
    return img


def jpeg(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    return buf.tobytes()


# -- the fake and its failures ----------------------------------------------------------------


def test_fake_source_failures_become_statuses():
    good = numbered_frame(10)
    data = jpeg(numbered_frame(20))
    src = FakeFrameSource(
        [good, None, OSError("USB cable pulled"), data[: len(data) // 2], b"\x00garbage", data]
    )
    seen = []
    for _ in range(7):
        frame = src.read()  # must never raise
        seen.append((frame is not None, src.status.kind))
        if frame is not None:
            assert frame.image.dtype == np.uint8 and frame.image.shape == (48, 64, 3)
    assert seen == [
        (True, "ok"),
        (False, "no signal"),
        (False, "error"),
        (False, "error"),
        (False, "error"),
        (True, "ok"),
        (False, "ended"),
    ]


def test_fake_source_error_messages_say_what_went_wrong():
    data = jpeg(numbered_frame(1))
    src = FakeFrameSource([OSError("USB cable pulled"), data[:200], b"nope"])
    src.read()
    assert "USB cable pulled" in str(src.status)
    src.read()
    assert "truncated JPEG" in src.status.message
    src.read()
    assert "undecodable" in src.status.message


def test_iteration_skips_bad_frames_but_keeps_order():
    frames = [numbered_frame(i) for i in range(4)]
    src = FakeFrameSource([frames[0], b"junk", frames[1], None, frames[2], frames[3]])
    got = [f.index for f in src]
    assert got == [0, 2, 4, 5]  # indices keep counting over the failures
    assert src.status.kind == "ended"


def test_closed_source_reports_instead_of_raising():
    with FakeFrameSource([numbered_frame(1)], loop=True) as src:
        assert src.read() is not None
    assert src.closed and src.read() is None and "closed" in src.status.message


def test_bad_image_shapes_are_refused_with_a_status():
    src = FakeFrameSource([np.zeros((4, 4, 3), np.float64), np.zeros((4, 4, 5), np.uint8)])
    assert src.read() is None and "bad frame" in src.status.message
    assert src.read() is None and src.status.kind == "error"


def test_grey_frames_become_bgr():
    src = FakeFrameSource([np.full((8, 8), 77, np.uint8)])
    frame = src.read()
    assert frame.image.shape == (8, 8, 3) and int(frame.image[0, 0, 2]) == 77


def test_decode_refuses_truncated_png():
    ok, buf = cv2.imencode(".png", numbered_frame(3))
    data = buf.tobytes()
    img, why = decode_image(data)
    assert img is not None and why == ""
    img, why = decode_image(data[:-20])
    assert img is None and "truncated PNG" in why


# -- image folder ----------------------------------------------------------------------------


def test_image_folder_plays_sorted_and_reports_a_broken_file(tmp_path):
    for n, name in [(3, "frame_003.png"), (1, "frame_001.png"), (2, "frame_002.png")]:
        cv2.imwrite(str(tmp_path / name), numbered_frame(n * 40))
    data = jpeg(numbered_frame(200))
    (tmp_path / "frame_002b.jpg").write_bytes(data[: len(data) // 3])  # truncated on disk
    (tmp_path / "notes.txt").write_text("not an image")
    src = open_source(f"folder:{tmp_path}")
    assert isinstance(src, ImageFolderSource)
    assert [p.name for p in src.files] == [
        "frame_001.png",
        "frame_002.png",
        "frame_002b.jpg",
        "frame_003.png",
    ]
    out = []
    while True:
        frame = src.read()
        if frame is None and src.status.kind == "ended":
            break
        if frame is None:
            assert src.status.kind == "error" and "frame_002b.jpg" in src.status.message
            assert "truncated JPEG" in src.status.message
            continue
        out.append((frame.index, int(frame.image[0, 0, 0])))
    assert out == [(0, 40), (1, 80), (3, 120)]


def test_missing_or_empty_folder_is_a_status(tmp_path):
    assert open_source(f"folder:{tmp_path / 'nope'}").status.kind == "error"
    empty = ImageFolderSource(tmp_path)
    assert empty.read() is None and empty.status.kind == "ended"


# -- recorded session -----------------------------------------------------------------------


def test_session_round_trip_is_exact_with_png(tmp_path):
    frames = [Frame(numbered_frame(i * 30), i, 0.25 * i) for i in range(5)]
    with SessionRecorder(tmp_path / "s", source_spec="fake", image_ext=".png") as rec:
        for f in frames:
            rec.write(f, stable=(f.index % 2 == 0))
    header = json.loads((tmp_path / "s" / "session.json").read_text())
    assert header["format"] == "companion-session" and header["version"] == 1
    lines = (tmp_path / "s" / "frames.jsonl").read_text().splitlines()
    assert json.loads(lines[1]) == {
        "index": 1,
        "time_s": 0.25,
        "file": "frames/000001.png",
        "size": [64, 48],
        "stable": False,
    }
    with SessionSource(tmp_path / "s") as src:
        replay = list(src)
        assert src.status.kind == "ended"
    assert [(f.index, f.time_s) for f in replay] == [(f.index, f.time_s) for f in frames]
    for a, b in zip(replay, frames, strict=True):
        np.testing.assert_array_equal(a.image, b.image)
    assert src.entries[2].extra == {"size": [64, 48], "stable": True}


def test_session_jpeg_round_trip_is_close(tmp_path):
    frame = Frame(numbered_frame(90, size=(160, 120)), 7, 1.5)
    with SessionRecorder(tmp_path / "s") as rec:
        rec.write(frame)
    (got,) = list(SessionSource(tmp_path / "s"))
    assert got.index == 7 and got.time_s == 1.5
    assert np.abs(got.image.astype(int) - frame.image.astype(int)).mean() < 2.0


def test_session_cut_short_and_missing_frames(tmp_path):
    with SessionRecorder(tmp_path / "s", image_ext=".png") as rec:
        for i in range(4):
            rec.write(Frame(numbered_frame(i), i, i / 10))
    (tmp_path / "s" / "frames" / "000002.png").unlink()
    with (tmp_path / "s" / "frames.jsonl").open("a") as fh:
        fh.write('{"index": 4, "time_s": 0.4, "fi')  # power cut mid-line
    src = SessionSource(tmp_path / "s")
    assert "line 5 skipped" in src.status.message
    got = []
    while (frame := src.read()) is not None or src.status.kind != "ended":
        if frame is None:
            assert "frame 2" in src.status.message and src.status.kind == "error"
        else:
            got.append(frame.index)
    assert got == [0, 1, 3]


def test_session_recorder_refuses_to_overwrite(tmp_path):
    with SessionRecorder(tmp_path / "s") as rec:
        rec.write(Frame(numbered_frame(1), 0, 0.0))
        with pytest.raises(ValueError, match="reserved"):
            rec.write(Frame(numbered_frame(1), 1, 0.1), file="x")
    with pytest.raises(FrameSourceError, match="already holds"):
        SessionRecorder(tmp_path / "s")


def test_not_a_session_or_newer_version_is_refused(tmp_path):
    with pytest.raises(FrameSourceError, match="frames.jsonl"):
        open_source(f"session:{tmp_path}")
    (tmp_path / "frames.jsonl").write_text("")
    (tmp_path / "session.json").write_text(
        json.dumps({"format": "companion-session", "version": 9})
    )
    with pytest.raises(FrameSourceError, match="newer"):
        SessionSource(tmp_path)


def test_session_realtime_keeps_the_recorded_pace(tmp_path):
    with SessionRecorder(tmp_path / "s", image_ext=".png") as rec:
        for i, t in enumerate([0.0, 0.5, 0.6, 2.0]):
            rec.write(Frame(numbered_frame(i), i, t))
    now = [100.0]
    slept = []

    def sleep(s):
        slept.append(round(s, 6))
        now[0] += s

    src = SessionSource(tmp_path / "s", realtime=True, sleep=sleep, clock=lambda: now[0])
    assert len(list(src)) == 4
    assert slept == [0.5, 0.1, 1.4]


# -- video file and live sources ---------------------------------------------------------------


def test_video_file_plays_to_the_end(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    for i in range(6):
        writer.write(numbered_frame(i * 40))
    writer.release()
    src = open_source(f"file:{path}")
    assert isinstance(src, VideoFileSource)
    frames = list(src)
    assert [f.index for f in frames] == list(range(6))
    assert [round(f.time_s, 3) for f in frames] == pytest.approx([0.1 * i for i in range(6)])
    assert abs(int(frames[3].image[40, 50, 0]) - 120) <= 6
    assert src.status.kind == "ended"


def test_missing_video_is_a_status_not_a_crash(tmp_path):
    src = open_source(f"file:{tmp_path / 'none.mp4'}")
    assert src.read() is None and src.status.kind == "error" and "not found" in src.status.message


@pytest.mark.skipif(
    importlib.util.find_spec("picamera2") is not None, reason="a real Pi camera stack is present"
)
def test_picamera2_off_a_pi_is_a_status():
    src = open_source("picamera2:640x480")
    assert src.read() is None and src.status.kind == "error"
    assert "picamera2" in src.status.message


@pytest.mark.parametrize(
    "spec", ["webcam", "usb:", "file:", "folder:", "picamera2:big", "session:"]
)
def test_malformed_specs_are_refused(spec):
    with pytest.raises(FrameSourceError):
        open_source(spec)


class _FakePicamera2:
    """Stands in for picamera2.Picamera2 (only what Picamera2Source uses)."""

    instances: list[_FakePicamera2] = []
    fail_start = False

    def __init__(self):
        self.controls: dict = {}
        self.config = None
        self.started = self.closed = False
        self.frames = 0
        _FakePicamera2.instances.append(self)

    def create_video_configuration(self, main):
        return {"main": dict(main)}

    def configure(self, config):
        self.config = config

    def set_controls(self, controls):
        self.controls.update(controls)

    def start(self):
        if _FakePicamera2.fail_start:
            raise RuntimeError("Camera __init__ sequence did not complete")
        self.started = True

    def capture_array(self, stream):
        assert stream == "main"
        self.frames += 1
        if self.frames == 2:
            raise RuntimeError("Camera frontend has timed out!")
        w, h = self.config["main"]["size"]
        return np.full((h, w, 3), self.frames, np.uint8)

    def capture_metadata(self):
        return {"ExposureTime": 16600, "AnalogueGain": 2.5, "ColourGains": (1.9, 1.6)}

    def stop(self):
        self.started = False

    def close(self):
        self.closed = True


@pytest.fixture
def fake_picamera2(monkeypatch):
    import sys
    import types

    module = types.ModuleType("picamera2")
    module.Picamera2 = _FakePicamera2
    monkeypatch.setitem(sys.modules, "picamera2", module)
    _FakePicamera2.instances.clear()
    _FakePicamera2.fail_start = False
    return _FakePicamera2


def test_picamera2_source_frames_errors_and_exposure_lock(fake_picamera2):
    from companion.vision.sources import Picamera2Source

    ticks = iter([10.0, 10.5, 10.6, 10.7])
    src = Picamera2Source((320, 240), controls={"FrameRate": 15}, clock=lambda: next(ticks))
    cam = fake_picamera2.instances[0]
    assert cam.config["main"] == {"size": (320, 240), "format": "RGB888"}
    assert cam.controls == {"FrameRate": 15} and cam.started
    first = src.read()
    assert first.image.shape == (240, 320, 3) and first.index == 0 and first.time_s == 0.5
    assert src.read() is None and "timed out" in src.status.message  # driver hiccup
    assert src.read().index == 1
    locked = src.lock_exposure()
    assert locked == {
        "AeEnable": False,
        "AwbEnable": False,
        "ExposureTime": 16600,
        "AnalogueGain": 2.5,
        "ColourGains": (1.9, 1.6),
    }
    assert cam.controls["AeEnable"] is False and cam.controls["ExposureTime"] == 16600
    src.close()
    assert cam.closed and not cam.started


def test_picamera2_that_fails_to_start_is_a_status(fake_picamera2):
    fake_picamera2.fail_start = True
    src = open_source("picamera2:640x480")
    assert src.read() is None and src.status.kind == "error"
    assert "cannot start the Pi camera" in src.status.message
    with pytest.raises(RuntimeError, match="not running"):
        src.lock_exposure()


def test_locked_controls_survive_a_restart_and_unlock_lets_the_camera_meter_again(
    fake_picamera2, tmp_path
):
    from companion.service.tracked import write_json_atomic
    from companion.vision.camera_controls import load_controls

    src = open_source("picamera2:320x240")
    locked = src.lock_exposure()
    path = tmp_path / "camera-controls.json"
    write_json_atomic(path, locked)
    assert load_controls(path) == locked  # (ColourGains come back as a tuple)
    src.unlock_exposure()
    cam = fake_picamera2.instances[0]
    assert cam.controls["AeEnable"] is True and cam.controls["AwbEnable"] is True
    # the next start applies what was locked before the power cut
    open_source("picamera2:320x240", controls=load_controls(path))
    again = fake_picamera2.instances[1]
    assert again.controls == locked and again.started


@pytest.mark.parametrize(
    "text, why",
    [
        ("{", "not JSON"),
        ('{"AeEnable": false}', "expected the keys"),
        (
            '{"AeEnable": false, "AwbEnable": false, "ExposureTime": -5, "AnalogueGain": 2,'
            ' "ColourGains": [1.9, 1.6]}',
            "ExposureTime must be a positive number",
        ),
        (
            '{"AeEnable": 0, "AwbEnable": false, "ExposureTime": 5, "AnalogueGain": 2,'
            ' "ColourGains": [1.9, 1.6]}',
            "AeEnable must be true or false",
        ),
        (
            '{"AeEnable": false, "AwbEnable": false, "ExposureTime": 5, "AnalogueGain": 2,'
            ' "ColourGains": [1.9]}',
            "ColourGains",
        ),
    ],
)
def test_a_damaged_controls_file_is_refused_with_its_fault(tmp_path, text, why):
    from companion.vision.camera_controls import load_controls

    path = tmp_path / "camera-controls.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=why):
        load_controls(path)


def test_a_running_camera_is_needed_to_lock_or_unlock(fake_picamera2):
    fake_picamera2.fail_start = True
    src = open_source("picamera2:320x240")
    with pytest.raises(RuntimeError, match="not running"):
        src.lock_exposure()
    with pytest.raises(RuntimeError, match="not running"):
        src.unlock_exposure()
