"""Camera pictures from bytes and files: decoding into ``(H, W, 3) uint8`` BGR, and how large a
frame may be (:data:`MAX_FRAME_PIXELS`; a JPEG's or PNG's size is read from its header, so a
larger picture is refused before it is decoded). The frame sources
(``companion.vision.sources``) read through these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")

MAX_FRAME_PIXELS = 4096 * 3072
"""The largest frame a source hands on (px; 12.6 MP, 38 MB as BGR): above every Raspberry Pi
camera's full sensor (the HQ camera's 4056 x 3040). A larger frame is refused with an ``error``
status naming its size, before it is decoded when the file's header tells the size (JPEG,
PNG), so one oversized picture cannot take the companion's memory."""


def too_large(width: int, height: int) -> str:
    """Why a ``width`` x ``height`` px frame is refused ("" when it is not: at most
    :data:`MAX_FRAME_PIXELS`)."""
    if width * height <= MAX_FRAME_PIXELS:
        return ""
    return (
        f"frame too large: {width}x{height} px ({width * height / 1e6:.0f} MP; at most "
        f"{MAX_FRAME_PIXELS / 1e6:.1f} MP) - use a smaller camera resolution or image"
    )


def header_size(data: bytes) -> tuple[int, int] | None:
    """``(w, h)`` px from a JPEG's frame header or a PNG's ``IHDR``, None when ``data`` is
    neither or its header is cut short (reads the header only, decodes nothing)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        # SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision, height, width
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h = int.from_bytes(data[i + 5 : i + 7], "big")
            w = int.from_bytes(data[i + 7 : i + 9], "big")
            return w, h
        i += 2 + int.from_bytes(data[i + 2 : i + 4], "big")
    return None


def image_file_too_large(path: Path) -> str:
    """:func:`too_large` for an image file whose header tells its size, else ""."""
    try:
        with path.open("rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return ""
    size = header_size(head)
    return too_large(*size) if size is not None else ""


# -- decoding helpers --------------------------------------------------------------------------
def as_bgr(image: Any) -> NDArray[np.uint8]:
    """``(H, W, 3) uint8`` BGR from grey ``(H, W)``, ``(H, W, 1)``, BGR or BGRA uint8.

    :raises ValueError: any other shape or dtype, or an empty image.
    """
    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.size == 0 or arr.ndim not in (2, 3):
        raise ValueError(f"not an 8-bit image: {arr.dtype} {arr.shape}")
    if arr.ndim == 2 or arr.shape[2] == 1:
        return np.asarray(cv2.cvtColor(arr.reshape(arr.shape[:2]), cv2.COLOR_GRAY2BGR), np.uint8)
    if arr.shape[2] == 3:
        return arr
    if arr.shape[2] == 4:
        return np.asarray(cv2.cvtColor(arr, cv2.COLOR_BGRA2BGR), np.uint8)
    raise ValueError(f"not an image: shape {arr.shape}")


def decode_image(data: bytes) -> tuple[NDArray[np.uint8] | None, str]:
    """Decode JPEG/PNG/... bytes into ``(H, W, 3) uint8`` BGR.

    Truncated JPEG (no end-of-image marker) and PNG (no ``IEND`` chunk) are refused even where
    the decoder would return a half-grey picture; so is a picture above
    :data:`MAX_FRAME_PIXELS` (JPEG and PNG before decoding, from their header).

    :returns: ``(image, "")`` or ``(None, reason)``; never raises.
    """
    if not data:
        return None, "empty frame data"
    if data[:2] == b"\xff\xd8" and b"\xff\xd9" not in data[-64:]:
        return None, f"truncated JPEG ({len(data)} bytes, no end-of-image marker)"
    if data[:8] == b"\x89PNG\r\n\x1a\n" and b"IEND" not in data[-32:]:
        return None, f"truncated PNG ({len(data)} bytes, no IEND chunk)"
    size = header_size(data)
    if size is not None and too_large(*size):
        return None, too_large(*size)
    try:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as exc:
        return None, f"undecodable image: {exc.err}"
    if img is None:
        return None, f"undecodable image ({len(data)} bytes)"
    why = too_large(int(img.shape[1]), int(img.shape[0]))
    if why:
        return None, why
    return np.asarray(img, np.uint8), ""


def read_image_file(path: str | Path) -> tuple[NDArray[np.uint8] | None, str]:
    """Read an image file as ``(H, W, 3) uint8`` BGR; ``(None, reason)`` when missing,
    unreadable, truncated or not an image. Never raises."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return None, f"{Path(path).name}: {exc.strerror or exc}"
    img, why = decode_image(data)
    return img, (f"{Path(path).name}: {why}" if why else "")


def read_onnx(path: str | Path, what: str) -> Any:
    """A learned model shipped beside the detector, read with OpenCV's ``cv2.dnn`` (the Pi needs
    no other runtime).

    :param path: the ``.onnx`` file.
    :param what: what the model reads, for the error ("top-kind model", "tower-count model").
    :returns: the ``cv2.dnn.Net``.
    :raises OSError: when the file is missing; :raises ValueError: when OpenCV cannot read it.
    """
    p = Path(path)
    if not p.is_file():
        raise OSError(f"{what} {p.name}: no such file")
    # OpenCV 5's classic engine runs these small convolutional networks faster on one core
    # than the new one it picks by default (on x86, for a frame's tops: the tower-count
    # network 4.7 instead of 6.5 ms, the wizard network 5.1 instead of 6.4 ms, the token
    # network 2.6 instead of 4.3 ms; the same outputs to float rounding); a graph the classic
    # importer cannot read goes to the default engine (OpenCV 4 has only the classic one)
    classic = getattr(cv2.dnn, "ENGINE_CLASSIC", None)
    if classic is not None:
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
        try:
            return cv2.dnn.readNetFromONNX(str(p), classic)
        except cv2.error:
            pass
        finally:
            cv2.utils.logging.setLogLevel(level)
    try:
        return cv2.dnn.readNetFromONNX(str(p))
    except cv2.error as exc:
        raise ValueError(f"{what} {p.name}: not a readable ONNX graph ({exc})") from None
