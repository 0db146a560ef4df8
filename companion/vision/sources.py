"""Frame sources: where camera frames come from, behind one small interface.

Every source is a :class:`FrameSource`: ``read()`` returns the next :class:`Frame` or ``None``,
``status`` says why there is no frame (no signal yet, the end of a recording, or an error text),
``close()`` releases the device; sources are context managers. A camera that fails never raises
out of ``read()``: the failure becomes the status, and the caller keeps its last good state.

Sources, and the spec strings :func:`open_source` accepts:

=====================  ==============================================================
``picamera2[:WxH]``    Raspberry Pi camera through picamera2 (imported lazily, on a Pi)
``usb:0`` / ``usb:URL``  ``cv2.VideoCapture`` by device index or stream URL
``file:PATH``          a video file (``cv2.VideoCapture``), ends with status ``ended``
``folder:PATH``        every image in a folder, sorted by name
``session:PATH``       a recorded session folder (see below)
=====================  ==============================================================

Recorded session folder (written by :class:`SessionRecorder`, read by :class:`SessionSource`)::

    session.json    {"format": "companion-session", "version": 1, "source": "usb:0",
                     "image_ext": ".jpg", "created_unix_s": 1732270000.0}
    frames.jsonl    one JSON object per line, in recording order:
                    {"index": 0, "time_s": 0.0, "file": "frames/000000.jpg",
                     "size": [640, 480]}  (+ any extra keys the recorder was given)
    frames/         the images, JPEG (quality 95) or PNG, numbered in recording order

``index`` is the source's frame counter, ``time_s`` seconds since the source opened (monotonic),
``file`` the image path relative to the session folder. Lines are appended and flushed one by
one, so a recording cut short by a power loss loses at most the last line; a truncated last line
is skipped on replay with a status message.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.vision.images import (  # the decoding helpers; imported from here too
    IMAGE_EXTENSIONS,
    MAX_FRAME_PIXELS,
    as_bgr,
    decode_image,
    image_file_too_large,
    read_image_file,
    too_large,
)

__all__ = ["IMAGE_EXTENSIONS", "MAX_FRAME_PIXELS", "as_bgr", "decode_image", "read_image_file"]

Clock = Callable[[], float]
StatusKind = Literal["ok", "no signal", "ended", "error"]

SESSION_FORMAT = "companion-session"
SESSION_VERSION = 1


@dataclass(frozen=True)
class Frame:
    """One camera frame.

    :param image: ``(H, W, 3) uint8`` BGR.
    :param index: frame counter of the source (0-based; gaps mean dropped frames).
    :param time_s: capture time in s: seconds since the source opened for live cameras,
        the recorded time for videos and sessions.
    """

    image: NDArray[np.uint8]
    index: int
    time_s: float

    @property
    def size(self) -> tuple[int, int]:
        """``(w, h)`` px."""
        return int(self.image.shape[1]), int(self.image.shape[0])


@dataclass(frozen=True)
class SourceStatus:
    """Why a source did or did not give a frame.

    :param kind: ``"ok"``, ``"no signal"`` (nothing yet / camera not delivering), ``"ended"``
        (a file, folder or session has no more frames) or ``"error"``.
    :param message: human-readable detail (the error text for ``"error"``).
    """

    kind: StatusKind
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}" if self.message else self.kind


OK = SourceStatus("ok")


class FrameSourceError(ValueError):
    """A malformed source spec or session folder (raised when opening, never by ``read``)."""


# -- the interface -----------------------------------------------------------------------------
class FrameSource:
    """Base of every frame source.

    Subclasses implement :meth:`_read` (return an image, or ``None`` after calling
    :meth:`_set_status`) and optionally :meth:`_close`. ``read()`` turns any exception from the
    device into an ``error`` status.

    :param clock: monotonic clock in s, injectable for tests (default ``time.monotonic``).
    """

    spec: str = ""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock: Clock = clock or time.monotonic
        self._t0 = self._clock()
        self._index = 0
        self._status: SourceStatus = SourceStatus("no signal", "not read yet")
        self._closed = False

    # public API
    @property
    def status(self) -> SourceStatus:
        """Status after the last :meth:`read` (``ok`` when it returned a frame)."""
        return self._status

    @property
    def closed(self) -> bool:
        return self._closed

    def read(self) -> Frame | None:
        """The next frame, or ``None`` (see :attr:`status`). Never raises."""
        if self._closed:
            self._status = SourceStatus("error", "source is closed")
            return None
        try:
            got = self._read()
        except Exception as exc:  # a camera driver may raise anything: report, don't crash
            self._status = SourceStatus("error", f"{type(exc).__name__}: {exc}")
            return None
        if got is None:
            if self._status.ok:
                self._status = SourceStatus("no signal", "no frame")
            return None
        image, index, t = got
        try:
            bgr = as_bgr(image)
        except ValueError as exc:
            self._status = SourceStatus("error", f"bad frame: {exc}")
            return None
        why = too_large(int(bgr.shape[1]), int(bgr.shape[0]))
        if why:  # a camera or video delivering more than any Pi camera: not handed on
            self._status = SourceStatus("error", why)
            return None
        self._status = OK
        return Frame(bgr, index, t)

    def close(self) -> None:
        """Release the device; further reads give an ``error`` status. Idempotent."""
        if not self._closed:
            self._closed = True
            try:
                self._close()
            except Exception as exc:
                self._status = SourceStatus("error", f"close failed: {exc}")

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        """Frames until the source ends or fails (skipping unreadable frames of files)."""
        while True:
            frame = self.read()
            if frame is not None:
                yield frame
            elif self._status.kind == "ended" or not self._skippable():
                return

    # for subclasses
    def _read(self) -> tuple[Any, int, float] | None:
        raise NotImplementedError

    def _close(self) -> None:
        return None

    def _skippable(self) -> bool:
        """True when an ``error`` concerns one frame and the next read may succeed."""
        return False

    def _set_status(self, kind: StatusKind, message: str = "") -> None:
        self._status = SourceStatus(kind, message)

    def _next(self, image: Any, t: float | None = None) -> tuple[Any, int, float]:
        index = self._index
        self._index += 1
        return image, index, (self._clock() - self._t0) if t is None else t


# -- live cameras ------------------------------------------------------------------------------
class CaptureSource(FrameSource):
    """A USB camera or network stream through ``cv2.VideoCapture``.

    :param device: camera index (``0``) or stream URL.
    :param size: requested ``(w, h)`` px (the driver may choose another).
    :param reopen_after: consecutive failed reads before the device is reopened.
    """

    def __init__(
        self,
        device: int | str = 0,
        *,
        size: tuple[int, int] | None = None,
        reopen_after: int = 30,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock=clock)
        self.device = device
        self.spec = f"usb:{device}"
        self.size = size
        self.reopen_after = reopen_after
        self._failures = 0
        self._cap: cv2.VideoCapture | None = None
        self._open()

    def _open(self) -> None:
        if self._cap is not None:
            self._cap.release()
        try:
            cap = cv2.VideoCapture(self.device)
        except cv2.error as exc:
            self._cap = None
            self._set_status("error", f"cannot open {self.spec}: {exc.err}")
            return
        if not cap.isOpened():
            self._cap = None
            self._set_status("error", f"cannot open camera {self.spec}")
            return
        if self.size is not None:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        self._cap = cap
        self._set_status("no signal", f"{self.spec} opened, no frame yet")

    def _read(self) -> tuple[Any, int, float] | None:
        if self._cap is None:
            self._failures += 1
            if self._failures >= self.reopen_after:
                self._failures = 0
                self._open()
            if self._cap is None:
                return None
        assert self._cap is not None
        ok, image = self._cap.read()
        if not ok or image is None:
            self._failures += 1
            self._set_status("no signal", f"{self.spec}: no frame ({self._failures} in a row)")
            if self._failures >= self.reopen_after:
                self._failures = 0
                self._open()
            return None
        self._failures = 0
        return self._next(image)

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class Picamera2Source(FrameSource):
    """The Raspberry Pi camera through picamera2 (imported only when this source is created).

    :param size: ``(w, h)`` px of the main stream (default 1640x1232, full field of view of
        camera module 2 binned 2x2).
    :param controls: fixed camera controls to apply (e.g. the values :meth:`lock_exposure`
        returned after calibration: ``ExposureTime`` us, ``AnalogueGain``, ``ColourGains``).
    """

    def __init__(
        self,
        size: tuple[int, int] = (1640, 1232),
        *,
        controls: dict[str, Any] | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock=clock)
        self.spec = f"picamera2:{size[0]}x{size[1]}"
        self.size = size
        self._cam: Any = None
        try:
            from picamera2 import Picamera2  # only on a Raspberry Pi
        except ImportError as exc:
            self._set_status("error", f"picamera2 is not installed (not a Raspberry Pi?): {exc}")
            return
        try:
            cam = Picamera2()
            # "RGB888" is B, G, R in memory: what OpenCV calls BGR
            config = cam.create_video_configuration(main={"size": size, "format": "RGB888"})
            cam.configure(config)
            if controls:
                cam.set_controls(dict(controls))
            cam.start()
        except Exception as exc:
            self._set_status("error", f"cannot start the Pi camera: {exc}")
            return
        self._cam = cam
        self._set_status("no signal", "Pi camera started, no frame yet")

    def _read(self) -> tuple[Any, int, float] | None:
        if self._cam is None:
            return None
        image = self._cam.capture_array("main")
        return self._next(image)

    def lock_exposure(self) -> dict[str, Any]:
        """Freeze auto exposure and auto white balance at their current values (call once the
        board is in view and the light is as it will be during the game).

        :returns: the locked controls (to store and pass as ``controls`` next time).
        :raises RuntimeError: the camera is not running.
        """
        if self._cam is None:
            raise RuntimeError(f"Pi camera not running ({self.status})")
        meta = self._cam.capture_metadata()
        locked = {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": int(meta["ExposureTime"]),
            "AnalogueGain": float(meta["AnalogueGain"]),
            "ColourGains": tuple(float(g) for g in meta["ColourGains"]),
        }
        self._cam.set_controls(locked)
        return locked

    def unlock_exposure(self) -> None:
        """Let automatic exposure and white balance follow the light again (before the colours
        are sampled anew, e.g. after the light over the table changed).

        :raises RuntimeError: the camera is not running.
        """
        if self._cam is None:
            raise RuntimeError(f"Pi camera not running ({self.status})")
        self._cam.set_controls({"AeEnable": True, "AwbEnable": True})

    def _close(self) -> None:
        if self._cam is not None:
            try:
                self._cam.stop()
            finally:
                self._cam.close()
                self._cam = None


# -- recordings --------------------------------------------------------------------------------
class VideoFileSource(FrameSource):
    """A video file read through ``cv2.VideoCapture``; ``time_s`` is the position in the video.

    Status ``ended`` after the last frame; ``error`` when the file cannot be opened.
    """

    def __init__(self, path: str | Path, *, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        self.path = Path(path)
        self.spec = f"file:{self.path}"
        self._cap: cv2.VideoCapture | None = None
        if not self.path.is_file():
            self._set_status("error", f"video not found: {self.path}")
            return
        why = image_file_too_large(self.path)
        if why:  # OpenCV would decode a still image whole just to open it
            self._set_status("error", f"{self.path.name}: {why}")
            return
        try:
            cap = cv2.VideoCapture(str(self.path))
        except cv2.error as exc:
            self._set_status("error", f"cannot open video {self.path.name}: {exc.err}")
            return
        if not cap.isOpened():
            self._set_status("error", f"cannot open video {self.path.name}")
            return
        why = too_large(
            int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        )
        if why:
            cap.release()
            self._set_status("error", f"{self.path.name}: {why}")
            return
        self._cap = cap
        self._set_status("no signal", "not read yet")

    def _read(self) -> tuple[Any, int, float] | None:
        if self._cap is None:
            return None
        ok, image = self._cap.read()
        if not ok or image is None:
            self._set_status("ended", f"end of {self.path.name} after {self._index} frames")
            return None
        t = float(self._cap.get(cv2.CAP_PROP_POS_MSEC)) / 1000.0
        return self._next(image, t)

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class ImageFolderSource(FrameSource):
    """Every image in a folder, sorted by file name.

    An unreadable or truncated file gives ``None`` with an ``error`` status naming it; the next
    ``read()`` goes on with the next file. ``time_s`` = position / ``fps``.

    :param fps: frame rate assumed for ``time_s``.
    :param loop: start again after the last image instead of ending.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        fps: float = 10.0,
        loop: bool = False,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock=clock)
        self.path = Path(path)
        self.spec = f"folder:{self.path}"
        self.fps = fps
        self.loop = loop
        self.files: list[Path] = []
        self._pos = 0
        self._refused = ""  # why the last unreadable image was refused
        if not self.path.is_dir():
            self._set_status("error", f"folder not found: {self.path}")
            return
        try:
            self.files = sorted(
                p
                for p in self.path.iterdir()
                if p.suffix.lower() in IMAGE_EXTENSIONS and p.is_file()
            )
        except OSError as exc:
            self._set_status("error", f"cannot list {self.path}: {exc.strerror or exc}")
            return
        if not self.files:
            self._set_status("ended", f"no images in {self.path}")

    def _read(self) -> tuple[Any, int, float] | None:
        if not self.files:
            return None
        if self._pos >= len(self.files):
            if not self.loop:
                refused = f", the last refused: {self._refused}" if self._refused else ""
                self._set_status("ended", f"all {len(self.files)} images read{refused}")
                return None
            self._pos = 0
        path = self.files[self._pos]
        self._pos += 1
        index = self._index
        self._index += 1
        image, why = read_image_file(path)
        if image is None:
            self._set_status("error", why)
            self._refused = why
            return None
        return image, index, index / self.fps

    def _skippable(self) -> bool:
        return bool(self.files) and (self.loop or self._pos < len(self.files))


@dataclass(frozen=True)
class SessionEntry:
    """One line of ``frames.jsonl``: ``index``, ``time_s``, image ``file`` (relative), extras."""

    index: int
    time_s: float
    file: str
    extra: dict[str, Any]


class SessionSource(FrameSource):
    """Plays a recorded session folder (format in the module docstring).

    :param realtime: sleep between frames to keep the recorded pace (with ``sleep``).
    :param sleep: the sleep function (injectable for tests).
    :raises FrameSourceError: the folder or its ``frames.jsonl`` is missing, or the header says
        another format or a newer version.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        realtime: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock=clock)
        self.path = Path(path)
        self.spec = f"session:{self.path}"
        self.realtime = realtime
        self._sleep = sleep
        index_file = self.path / "frames.jsonl"
        if not index_file.is_file():
            raise FrameSourceError(f"not a recorded session (no frames.jsonl): {self.path}")
        self.header = _read_header(self.path)
        try:
            self.entries, self.problems = _read_index(index_file)
        except OSError as exc:
            raise FrameSourceError(f"cannot read {index_file}: {exc.strerror or exc}") from None
        self._pos = 0
        self._last_play: tuple[float, float] | None = None  # (wall clock, recorded time)
        if self.problems:
            self._set_status("no signal", "; ".join(self.problems[:3]))

    def _read(self) -> tuple[Any, int, float] | None:
        if self._pos >= len(self.entries):
            self._set_status("ended", f"all {len(self.entries)} recorded frames played")
            return None
        entry = self.entries[self._pos]
        self._pos += 1
        if self.realtime and self._last_play is not None:
            wall0, t0 = self._last_play
            wait = (entry.time_s - t0) - (self._clock() - wall0)
            if wait > 0:
                self._sleep(wait)
        self._last_play = (self._clock(), entry.time_s)
        image, why = read_image_file(self.path / entry.file)
        if image is None:
            self._set_status("error", f"frame {entry.index}: {why}")
            return None
        return image, entry.index, entry.time_s

    def _skippable(self) -> bool:
        return self._pos < len(self.entries)


def _read_header(folder: Path) -> dict[str, Any]:
    head = folder / "session.json"
    if not head.is_file():
        return {}
    try:
        header = json.loads(head.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FrameSourceError(f"unreadable session.json: {exc}") from None
    if not isinstance(header, dict):
        raise FrameSourceError("session.json must hold a JSON object")
    if header.get("format", SESSION_FORMAT) != SESSION_FORMAT:
        raise FrameSourceError(f"session.json: format {header.get('format')!r} is not ours")
    version = header.get("version", SESSION_VERSION)
    if not isinstance(version, int) or version > SESSION_VERSION:
        raise FrameSourceError(f"session.json: version {version!r} is newer than this reader")
    return header


def _read_index(index_file: Path) -> tuple[list[SessionEntry], list[str]]:
    entries: list[SessionEntry] = []
    problems: list[str] = []
    with index_file.open("r", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                entry = SessionEntry(
                    int(obj["index"]),
                    float(obj["time_s"]),
                    str(obj["file"]),
                    {k: v for k, v in obj.items() if k not in ("index", "time_s", "file")},
                )
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                problems.append(f"frames.jsonl line {lineno} skipped ({type(exc).__name__})")
                continue
            if Path(entry.file).is_absolute() or ".." in Path(entry.file).parts:
                problems.append(f"frames.jsonl line {lineno} skipped (file outside the session)")
                continue
            entries.append(entry)
    return entries, problems


class SessionRecorder:
    """Writes frames into a session folder (format in the module docstring).

    :param path: the session folder (created; must not already hold a session).
    :param source_spec: what was recorded (stored in ``session.json``).
    :param image_ext: ``".jpg"`` (quality ``jpeg_quality``) or ``".png"`` (lossless).
    :raises FrameSourceError: the folder already holds a session, or a bad ``image_ext``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        source_spec: str = "",
        image_ext: str = ".jpg",
        jpeg_quality: int = 95,
        created_unix_s: float | None = None,
    ) -> None:
        self.path = Path(path)
        if image_ext not in (".jpg", ".png"):
            raise FrameSourceError("image_ext must be '.jpg' or '.png'")
        if (self.path / "frames.jsonl").exists():
            raise FrameSourceError(f"{self.path} already holds a recorded session")
        (self.path / "frames").mkdir(parents=True, exist_ok=True)
        self.image_ext = image_ext
        self.jpeg_quality = jpeg_quality
        header = {
            "format": SESSION_FORMAT,
            "version": SESSION_VERSION,
            "source": source_spec,
            "image_ext": image_ext,
            "created_unix_s": time.time() if created_unix_s is None else created_unix_s,
        }
        (self.path / "session.json").write_text(json.dumps(header, indent=1) + "\n")
        self._index_fh = (self.path / "frames.jsonl").open("a", encoding="utf-8")
        self.count = 0

    def write(self, frame: Frame, **extra: Any) -> Path:
        """Append one frame; ``extra`` keys (JSON-serialisable) go into its index line.

        :returns: the image path written.
        :raises OSError: the disk refused the image or the index line.
        :raises ValueError: the image cannot be encoded, or ``extra`` uses a reserved key.
        """
        reserved = {"index", "time_s", "file", "size"} & set(extra)
        if reserved:
            raise ValueError(f"reserved keys in extra: {sorted(reserved)}")
        rel = f"frames/{self.count:06d}{self.image_ext}"  # unique even if indices repeat
        params = [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality] if self.image_ext == ".jpg" else []
        ok, buf = cv2.imencode(self.image_ext, frame.image, params)
        if not ok:
            raise ValueError(f"cannot encode frame {frame.index}")
        target = self.path / rel
        tmp = target.with_suffix(target.suffix + ".part")
        tmp.write_bytes(buf.tobytes())
        os.replace(tmp, target)
        line = {
            "index": frame.index,
            "time_s": round(frame.time_s, 6),
            "file": rel,
            "size": list(frame.size),
            **extra,
        }
        self._index_fh.write(json.dumps(line) + "\n")
        self._index_fh.flush()
        self.count += 1
        return target

    def close(self) -> None:
        if not self._index_fh.closed:
            self._index_fh.flush()
            os.fsync(self._index_fh.fileno())
            self._index_fh.close()

    def __enter__(self) -> SessionRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- the fake for tests ------------------------------------------------------------------------
FakeItem = NDArray[Any] | bytes | BaseException | None


class FakeFrameSource(FrameSource):
    """Plays a scripted list for tests and demos.

    Each item is a frame image (``(H, W, 3)`` or ``(H, W)`` uint8), encoded image ``bytes``
    (garbage or truncated JPEG -> ``error`` status and no frame), an exception instance (raised
    inside the "driver", reported as ``error``) or ``None`` (``no signal``).

    :param items: the script.
    :param loop: start again at the end instead of reporting ``ended``.
    :param fps: ``time_s`` = position / fps.
    """

    def __init__(
        self,
        items: Sequence[FakeItem],
        *,
        loop: bool = False,
        fps: float = 10.0,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock=clock)
        self.spec = "fake"
        self.items = list(items)
        self.loop = loop
        self.fps = fps
        self._pos = 0
        self.reads = 0

    def _read(self) -> tuple[Any, int, float] | None:
        self.reads += 1
        if self._pos >= len(self.items):
            if not self.loop or not self.items:
                self._set_status("ended", f"all {len(self.items)} scripted items played")
                return None
            self._pos = 0
        item = self.items[self._pos]
        self._pos += 1
        index = self._index
        self._index += 1
        t = index / self.fps
        if isinstance(item, BaseException):
            raise item
        if item is None:
            self._set_status("no signal", f"no frame at position {index}")
            return None
        if isinstance(item, bytes | bytearray):
            image, why = decode_image(bytes(item))
            if image is None:
                self._set_status("error", f"frame {index}: {why}")
                return None
            return image, index, t
        return item, index, t

    def _skippable(self) -> bool:
        return self.loop or self._pos < len(self.items)


# -- choosing by spec --------------------------------------------------------------------------
def _parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise FrameSourceError(f"bad size {text!r}, expected WxH like 1640x1232") from None
    if w <= 0 or h <= 0:
        raise FrameSourceError(f"bad size {text!r}")
    return w, h


def open_source(
    spec: str, *, clock: Clock | None = None, controls: Mapping[str, Any] | None = None
) -> FrameSource:
    """A frame source from a spec string (see the module docstring for the forms).

    Opening a camera that is absent does not raise: the source's status says so.

    :param controls: fixed camera controls for a ``picamera2`` source (what
        :meth:`Picamera2Source.lock_exposure` returned when the colours were sampled); other
        sources have none and ignore them.

    :raises FrameSourceError: an unknown or malformed spec, or a session folder that is not one.
    """
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "picamera2":
        size = _parse_size(rest) if rest else (1640, 1232)
        return Picamera2Source(size, controls=dict(controls) if controls else None, clock=clock)
    if kind == "usb":
        if not rest:
            raise FrameSourceError("usb needs a device index or URL, e.g. usb:0")
        device: int | str = int(rest) if rest.isdigit() else rest
        return CaptureSource(device, clock=clock)
    if kind in ("file", "folder", "session") and not rest:
        raise FrameSourceError(f"{kind} needs a path, e.g. {kind}:PATH")
    if kind == "file":
        return VideoFileSource(rest, clock=clock)
    if kind == "folder":
        return ImageFolderSource(rest, clock=clock)
    if kind == "session":
        return SessionSource(rest, clock=clock)
    raise FrameSourceError(
        f"unknown frame source {spec!r}; use picamera2, usb:N, usb:URL, file:PATH, "
        "folder:PATH or session:PATH"
    )
