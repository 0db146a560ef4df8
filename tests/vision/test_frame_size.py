"""An oversized picture from a frame source is refused with a status naming its size, before it
is decoded when its header tells the size: it cannot take the companion's memory."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision import images
from companion.vision.images import MAX_FRAME_PIXELS, decode_image, header_size
from companion.vision.sources import FakeFrameSource, ImageFolderSource, open_source

HUGE = (12000, 12000)


def small_jpeg(w: int = 64, h: int = 48) -> bytes:
    img = np.full((h, w, 3), 120, np.uint8)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def claiming(data: bytes, size: tuple[int, int]) -> bytes:
    """``data`` (a JPEG) whose frame header claims ``size`` (w, h): what a 12000 x 12000 JPEG
    looks like to a reader of headers, without making one."""
    i = data.index(b"\xff\xc0")
    w, h = size
    return data[: i + 5] + h.to_bytes(2, "big") + w.to_bytes(2, "big") + data[i + 9 :]


def test_header_size_reads_jpeg_and_png_without_decoding():
    assert header_size(small_jpeg(64, 48)) == (64, 48)
    ok, png = cv2.imencode(".png", np.zeros((30, 70), np.uint8))
    assert ok and header_size(png.tobytes()) == (70, 30)
    assert header_size(claiming(small_jpeg(), HUGE)) == HUGE
    assert header_size(b"BM not a header") is None
    assert header_size(b"\xff\xd8\xff") is None  # cut short


def test_a_huge_jpeg_is_refused_naming_its_size():
    image, why = decode_image(claiming(small_jpeg(), HUGE))
    assert image is None
    assert why.startswith("frame too large: 12000x12000 px (144 MP")
    # a frame of a camera's size passes
    image, why = decode_image(small_jpeg(640, 480))
    assert image is not None and image.shape == (480, 640, 3) and why == ""


@pytest.mark.parametrize("spec", ["folder", "file"])
def test_a_file_source_with_a_huge_picture_says_so_and_hands_on_nothing(tmp_path: Path, spec):
    (tmp_path / "big.jpg").write_bytes(claiming(small_jpeg(), HUGE))
    path = tmp_path if spec == "folder" else tmp_path / "big.jpg"
    with open_source(f"{spec}:{path}") as src:
        assert src.read() is None
        assert src.status.kind == "error"
        assert "frame too large: 12000x12000 px" in src.status.message


def test_a_folder_goes_on_after_a_huge_picture(tmp_path: Path):
    (tmp_path / "0.jpg").write_bytes(claiming(small_jpeg(), HUGE))
    (tmp_path / "1.jpg").write_bytes(small_jpeg(320, 240))
    with ImageFolderSource(tmp_path) as src:
        frames = list(src)
    assert [f.size for f in frames] == [(320, 240)]


def test_a_frame_over_the_limit_from_any_source_is_refused(monkeypatch):
    monkeypatch.setattr(images, "MAX_FRAME_PIXELS", 100 * 100)
    ok, bmp = cv2.imencode(".bmp", np.zeros((120, 120, 3), np.uint8))  # no header read: decoded
    src = FakeFrameSource(
        [np.zeros((101, 100, 3), np.uint8), bmp.tobytes(), np.zeros((100, 100), np.uint8)]
    )
    assert src.read() is None and "frame too large: 100x101 px" in src.status.message
    assert src.read() is None and "frame too large: 120x120 px" in src.status.message
    frame = src.read()
    assert frame is not None and frame.size == (100, 100)


def test_the_limit_holds_every_raspberry_pi_camera_at_full_resolution():
    for w, h in ((4056, 3040), (4608, 2592), (3280, 2464), (1640, 1232)):  # HQ, v3, v2
        assert w * h <= MAX_FRAME_PIXELS


def test_a_folder_that_ends_says_why_its_last_picture_was_refused(tmp_path: Path):
    (tmp_path / "big.jpg").write_bytes(claiming(small_jpeg(), HUGE))
    with ImageFolderSource(tmp_path) as src:
        assert src.read() is None and src.status.kind == "error"
        assert src.read() is None and src.status.kind == "ended"
        assert "the last refused: big.jpg: frame too large: 12000x12000 px" in src.status.message
