"""The detector in a process of its own, so that the tracker's search never slows the camera.

The tracker's search is pure Python and holds the interpreter lock while it runs. The detector
in the same process lets go of the lock inside every OpenCV and NumPy call and must wait for it
again on each return (up to the interpreter's switch interval, 5 ms): hundreds of times per
frame, so a board read in ~80 ms alone took 2.7 s beside a search, and the phones waited for it
(docs/architecture.md, "Threads"). A lock of its own is the only cure that does not slow the
search: :class:`DetectorProcess` runs a :class:`~companion.vision.detector.Detector` in a child
process (``python -m companion.service.detector_process FD``), with the same ``detect`` and
``set_profile`` as the detector itself, so the vision worker, the colour teacher and the
calibration steps use either alike. On a Raspberry Pi 4 the child has a core of its own.

Frames go to the child pickled inside the request, and the
:class:`~companion.vision.detector.Detection` comes back pickled (board view, thumbnail, pose,
reading). The child keeps the detector's state from frame to frame (pose cache, setup
references, averaged dim frames), as the detector in the service would. It ends when the
socket closes and at once when the service dies
(:func:`companion.service.child.watch_parent`).

A child that dies or stops answering is replaced by a new one on the next frame (the pose and
the references are found again from that frame); the frame it failed on raises
:class:`DetectorProcessError`, which the vision worker reports as the ``detector`` heartbeat's
trouble. Nothing of the game is touched.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection

import numpy as np

from companion.service.child import requests, rss_mb, run_child, send_error, start_child
from companion.vision.camera import CameraModel
from companion.vision.detector import Detection, Detector, DetectorConfig
from companion.vision.detector.config import check_frame
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile
from companion.vision.quality import QualityLimits

START_TIMEOUT_S = 60.0
"""How long the child may take to start and load the detector's networks (s)."""

FRAME_TIMEOUT_S = 30.0
"""How long one frame may take in the child before it counts as hung (s); a frame takes
~0.1 s on this machine and ~0.4 s on a Raspberry Pi 4."""


class DetectorProcessError(RuntimeError):
    """The detector's child process failed, ended or did not answer; the message says why."""


@dataclass(frozen=True)
class _Spec:
    """What the child builds its detector from (everything the detector is made of)."""

    camera: CameraModel
    geometry: BoardGeometry
    profile: ColourProfile
    config: DetectorConfig
    limits: QualityLimits

    def build(self) -> Detector:
        return Detector(
            self.camera, self.geometry, self.profile, config=self.config, limits=self.limits
        )


class DetectorProcess:
    """A :class:`~companion.vision.detector.Detector` in a child process (see the module doc).

    Same constructor arguments as the detector (the pose tracker and the height model are
    the detector's defaults); ``camera``, ``geometry``, ``profile``, ``config`` and ``limits``
    are readable here as on the detector. Thread-safe: one call at a time reaches the child.
    A child found gone before a call is replaced silently (``restarts`` counts them); one that
    ends or hangs (``frame_timeout_s``) during a call is killed and that call raises.

    :raises DetectorProcessError: the child did not start or could not build the detector
        (e.g. a network file missing: the same error the detector would raise, in words).
    """

    def __init__(
        self,
        camera: CameraModel,
        geometry: BoardGeometry,
        profile: ColourProfile,
        *,
        config: DetectorConfig | None = None,
        limits: QualityLimits | None = None,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.camera = camera
        self.geometry = geometry
        self.profile = profile
        self.config = config or DetectorConfig()
        self.limits = limits or QualityLimits()
        self.start_timeout_s = start_timeout_s
        self.frame_timeout_s = FRAME_TIMEOUT_S
        self.restarts = 0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        with self._lock:
            self._start()

    @classmethod
    def like(cls, detector: Detector | DetectorProcess) -> DetectorProcess:
        """A detector process built as ``detector`` was (its camera, geometry, profile,
        config and limits)."""
        return cls(
            detector.camera,
            detector.geometry,
            detector.profile,
            config=detector.config,
            limits=detector.limits,
        )

    @property
    def pid(self) -> int | None:
        """The child's process id (None while there is none)."""
        return self._proc.pid if self._proc is not None else None

    def _spec(self) -> _Spec:
        return _Spec(self.camera, self.geometry, self.profile, self.config, self.limits)

    def _start(self) -> None:
        """Start a child and build the detector in it (lock held)."""
        self._stop_child()
        try:
            self._proc, self._conn = start_child("companion.service.detector_process")
        except OSError as exc:
            raise DetectorProcessError(f"detector process not started: {exc}") from None
        try:
            self._call_locked(("init", self._spec()), self.start_timeout_s)
        except DetectorProcessError:
            self._stop_child()
            raise

    def _call_locked(self, request: tuple[object, ...], timeout_s: float) -> object:
        """Send ``request`` and wait for the answer, at most ``timeout_s``."""
        proc, conn = self._proc, self._conn
        if proc is None or conn is None:
            raise DetectorProcessError("the detector process is not running")
        hung = threading.Event()

        def kill_hung() -> None:
            # a child that stopped reading blocks the frame's send: only killing it ends that
            hung.set()
            with contextlib.suppress(OSError):
                proc.kill()

        watchdog = threading.Timer(timeout_s, kill_hung)
        watchdog.daemon = True
        watchdog.start()
        try:
            conn.send(request)
            while not conn.poll(0.5):
                if proc.poll() is not None:
                    raise EOFError
            kind, payload = conn.recv()
        except (EOFError, OSError):
            code = proc.poll()
            self._stop_child(kill=True)
            if hung.is_set():
                state = f"did not answer in {timeout_s:.0f} s"
            else:
                state = "ended" + (f" (exit code {code})" if code is not None else "")
            raise DetectorProcessError(f"the detector process {state}") from None
        finally:
            watchdog.cancel()
        if kind == "error":
            raise DetectorProcessError(f"detector: {payload}")
        return payload

    def _call(self, request: tuple[object, ...], timeout_s: float | None = None) -> object:
        """One request; a child that is gone is replaced first (the lock held throughout)."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self.restarts += 1
                self._start()
            return self._call_locked(request, timeout_s or self.frame_timeout_s)

    def detect(self, frame: object, time_s: float = 0.0, index: int = 0) -> Detection:
        """Read one frame (see :meth:`companion.vision.detector.Detector.detect`).

        :param frame: ``(H, W, 3) uint8 BGR``; anything else is answered here, as the detector
            would (``no-frame`` / ``bad-frame``), without a trip to the child.
        :raises DetectorProcessError: the child failed on this frame, ended or hung (the next
            call starts a new one).
        """
        status, message = check_frame(frame)
        if status != "ok" or not isinstance(frame, np.ndarray):
            return Detection(status=status, message=message)
        image = np.ascontiguousarray(frame)
        answer = self._call(("detect", float(time_s), int(index), image))
        if not isinstance(answer, Detection):
            raise DetectorProcessError(f"detector: no detection but {type(answer).__name__}")
        return answer

    def set_profile(self, profile: ColourProfile) -> None:
        """Use ``profile`` from the next frame on (see
        :meth:`companion.vision.detector.Detector.set_profile`)."""
        self._call(("profile", profile))
        self.profile = profile

    def renew(self, profile: ColourProfile | None = None) -> DetectorProcess:
        """Forget the pose, the setup references and the averaged frames, as a new detector
        would (after the camera was moved, or with a newly sampled ``profile`` as the setup
        profile); the same child. Returns ``self``."""
        if profile is not None:
            self.profile = profile
        self._call(("init", self._spec()), self.start_timeout_s)
        return self

    def rss_mb(self) -> tuple[float, float]:
        """The child's resident memory ``(now, peak)`` in MB; zeros while there is none."""
        pid = self.pid
        return rss_mb(pid) if pid is not None else (0.0, 0.0)

    def _stop_child(self, timeout_s: float = 5.0, kill: bool = False) -> None:
        """End the child: asked to stop, or at once with ``kill`` (it failed or hung)."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if kill and proc is not None and proc.poll() is None:
            proc.kill()
        if conn is not None:
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(OSError):
                    conn.send(("stop",))
            with contextlib.suppress(OSError):
                conn.close()
        if proc is not None:
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout_s)

    def close(self) -> None:
        """Stop the child and wait for it (idempotent)."""
        with self._lock:
            self._stop_child()


def _serve(conn: Connection, parent_pid: int) -> None:
    """The child's loop: answer the parent's requests until told to stop or orphaned."""
    detector: Detector | None = None
    for request in requests(conn, parent_pid):
        op = request[0]
        reply: object = None
        try:
            if op == "init":
                detector = request[1].build()
            elif detector is None:
                raise RuntimeError(f"{op}: the detector is not built")
            elif op == "detect":
                _, time_s, index, image = request
                reply = detector.detect(image, time_s, index)
            elif op == "profile":
                detector.set_profile(request[1])
            else:
                raise RuntimeError(f"unknown request {op!r}")
        except Exception as exc:  # the child's top: any failure is the parent's answer
            if not send_error(conn, exc):
                return
            continue
        try:
            conn.send(("ok", reply))
        except OSError:
            return


AnyDetector = Detector | DetectorProcess
"""What reads frames for the vision worker: the detector here or in its own process."""


def main(argv: list[str]) -> int:
    """``python -m companion.service.detector_process FD``: serve the parent on socket ``FD``."""
    return run_child(argv, _serve)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
