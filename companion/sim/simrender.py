"""The simulated table's camera: a fixed, seeded camera setup filmed by the table renderer.

:class:`SimCamera` chooses once per game (from the seed) where the camera hangs (tilt 5-25° from
vertical, any side), the room light and the look of the pieces — like a real session — and draws
each scene of the simulated game from it (``companion.sim.render.render``), with a hand and arm
reaching from the active player's seat while a piece moves. The detector gets only what a
calibrated real camera would give: the camera file (:attr:`SimCamera.camera_model`), the board
geometry, and a colour profile sampled from a rendered frame of the setup position
(:meth:`SimCamera.profile_from_setup`, through ``companion.vision.profile_setup.build_profile``).

:class:`SimCameraProcess` runs the :class:`SimCamera` in a child process, as a real camera is
outside the service's process too: the renderer's textures and buffers (about 100 MB) never enter
the service. The child is ``python -m companion.sim.simrender FD`` on one end of a socket pair;
frames come back as raw ``(H, W, 3) uint8`` bytes, so the detector sees exactly the pixels the
renderer drew. The child exits when the socket closes — the parent stopped — and at once when
the parent dies (even by ``kill -9``), also in the middle of a frame: a watcher thread waits on
the parent's exit (:func:`companion.service.child.exit_with_parent`), so a child starved of CPU
on a loaded machine does not outlive the companion by the frames it was rendering.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from companion.rules import GameState, dump_state, load_state, observe
from companion.service.child import requests, rss_mb, run_child, send_error, start_child
from companion.sim.simtable import Hand, Scene
from companion.vision.camera import CameraModel
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile
from companion.vision.profile_setup import build_profile

if TYPE_CHECKING:  # the renderer itself loads in the camera's child process only
    from companion.sim.render import HandPose

Request = tuple[object, ...]
"""A request to the child: ``("init", seed, (w, h))``, ``("render", state JSON, hand, number)``,
``("setup_frame", state JSON)``, ``("profile", state JSON, colours)`` or ``("stop",)``."""

TILT_RANGE_DEG = (5.0, 25.0)
"""Camera tilt of the simulated table (a camera on an arm beside the table, looking down)."""


class SimCamera:
    """Camera, pose, light and look of one simulated session (see the module doc).

    :param seed: fixes the setup and, with the scene number, every frame.
    :param size: frame size ``(w, h)`` px.
    """

    def __init__(self, seed: int, size: tuple[int, int]) -> None:
        # imported here: the renderer and its textures (about 100 MB) load in the camera's
        # child process only, never in the service that starts it (SimCameraProcess)
        from companion.sim import render

        self._render = render.render
        self._random_hand = render.random_hand
        self.seed = seed
        self.size = size
        rng = np.random.default_rng([seed, 0x5EED])
        self.geometry = BoardGeometry.default()
        self.camera_model = render.simulated_camera(size)
        self.setup = render.random_setup(
            rng, self.geometry, size=size, camera=self.camera_model, tilt_range=TILT_RANGE_DEG
        )

    def _for_state(self, state: GameState) -> None:
        length = state.table.length
        if self.geometry.n_spaces != length:
            track = dump_state(state)["track"]
            self.geometry = self.geometry.with_track(track)

    def render_scene(self, scene: Scene, number: int) -> NDArray[np.uint8]:
        """The frame ``(H, W, 3) uint8 BGR`` of one scene (seeded by the scene number)."""
        self._for_state(scene.state)
        rng = np.random.default_rng([self.seed, number])
        hand: HandPose | bool = False
        if scene.hand is not None:
            n = max(1, int(scene.state.table.n))
            angle = 2 * math.pi * scene.hand.seat / n + math.pi / 2
            target = self.geometry.space_centre(scene.hand.space)
            hand = self._random_hand(rng, self.geometry, target_mm=target, from_angle=angle)
        result = self._render(scene.state, rng, setup=self.setup, hand=hand, frame_index=number)
        frame: NDArray[np.uint8] = result.frame
        return frame

    def setup_frame(self, state: GameState) -> NDArray[np.uint8]:
        """A still frame of ``state`` (the setup position) without a hand."""
        self._for_state(state)
        rng = np.random.default_rng([self.seed, 0xCA1])
        frame: NDArray[np.uint8] = self._render(state, rng, setup=self.setup, hand=False).frame
        return frame

    def profile_from_setup(self, state: GameState, colours: list[str]) -> ColourProfile:
        """The colour profile sampled from a rendered frame of the setup position, exactly as
        ``companion calibrate profile`` samples it from a real camera's setup frame."""
        # the setup that is shown (with expansion inserts, tokens and the magic tower when the
        # game has them), as the owner's calibration step knows it from the game's settings
        return build_profile(
            self.setup_frame(state),
            self.camera_model,
            self.geometry,
            colours,
            expected=observe(state),
        )


class SimCameraError(RuntimeError):
    """The simulated camera's child process failed or ended; the message says why."""


class SimCameraProcess:
    """A :class:`SimCamera` in a child process (see the module doc); the same methods.

    :param seed: the session's seed; :param size: frame size ``(w, h)`` px.
    :param start_timeout_s: how long the child may take to start and set up its camera.
    :raises SimCameraError: the child did not start or could not set up the camera.
    """

    def __init__(self, seed: int, size: tuple[int, int], start_timeout_s: float = 120.0) -> None:
        try:
            self._proc, self._conn = start_child("companion.sim.simrender")
        except OSError as exc:
            raise SimCameraError(f"simulated camera process not started: {exc}") from None
        self._lock = threading.Lock()
        self.pid = self._proc.pid
        self.seed = seed
        self.size = size
        try:
            self.camera_model, self.geometry = self._init(seed, size, start_timeout_s)
        except SimCameraError:
            self.close()
            raise

    def _init(
        self, seed: int, size: tuple[int, int], timeout_s: float
    ) -> tuple[CameraModel, BoardGeometry]:
        answer = self._call(("init", seed, size), timeout_s)
        if not isinstance(answer, tuple):
            raise SimCameraError(f"simulated camera: unexpected answer {type(answer).__name__}")
        camera_model, geometry = answer
        if not isinstance(camera_model, CameraModel) or not isinstance(geometry, BoardGeometry):
            raise SimCameraError("simulated camera: unexpected camera or geometry")
        return camera_model, geometry

    def reset(self, seed: int) -> None:
        """Another session (a new game): the camera of ``seed`` at the same frame size."""
        self.seed = seed
        self.camera_model, self.geometry = self._init(seed, self.size, 60.0)

    def _call(self, request: Request, timeout_s: float = 30.0) -> object:
        with self._lock:
            try:
                self._conn.send(request)
                deadline = time.monotonic() + timeout_s
                while not self._conn.poll(0.5):
                    if self._proc.poll() is not None or time.monotonic() > deadline:
                        raise EOFError
                kind, payload = self._conn.recv()
                if kind == "frame":
                    frame = np.empty(payload, np.uint8)
                    self._conn.recv_bytes_into(memoryview(frame.data).cast("B"))
                    return frame
            except (EOFError, OSError):
                code = self._proc.poll()
                state = "ended" if code is not None else "did not answer"
                raise SimCameraError(
                    f"the simulated camera process {state}"
                    + (f" (exit code {code})" if code is not None else f" in {timeout_s:.0f} s")
                ) from None
        if kind == "error":
            raise SimCameraError(f"simulated camera: {payload}")
        return payload

    def _frame(self, request: Request) -> NDArray[np.uint8]:
        frame = self._call(request)
        if not isinstance(frame, np.ndarray):
            raise SimCameraError(f"simulated camera: no frame but {type(frame).__name__}")
        return frame

    def render_scene(self, scene: Scene, number: int) -> NDArray[np.uint8]:
        """The frame ``(H, W, 3) uint8 BGR`` of one scene (see :meth:`SimCamera.render_scene`).

        :raises SimCameraError: the child failed or ended."""
        hand = None
        if scene.hand is not None:
            hand = (scene.hand.space, scene.hand.seat, scene.hand.phase)
        return self._frame(("render", dump_state(scene.state), hand, number))

    def setup_frame(self, state: GameState) -> NDArray[np.uint8]:
        """A still frame of ``state`` without a hand."""
        return self._frame(("setup_frame", dump_state(state)))

    def profile_from_setup(self, state: GameState, colours: list[str]) -> ColourProfile:
        """The colour profile sampled from the rendered setup frame (in the child); also takes
        over the board geometry the child used (the track of ``state``).

        :raises SimCameraError: the child failed or ended."""
        answer = self._call(("profile", dump_state(state), colours), 120.0)
        if not isinstance(answer, tuple):
            raise SimCameraError(f"simulated camera: unexpected answer {type(answer).__name__}")
        profile, geometry = answer
        if not isinstance(profile, ColourProfile) or not isinstance(geometry, BoardGeometry):
            raise SimCameraError("simulated camera: unexpected profile or geometry")
        self.geometry = geometry
        return profile

    def rss_mb(self) -> tuple[float, float]:
        """The child's resident memory ``(now, peak)`` in MB (VmRSS, VmHWM); zeros once gone."""
        return rss_mb(self.pid)

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self, timeout_s: float = 5.0) -> None:
        """Stop the child and wait for it (idempotent)."""
        if self._proc.poll() is None:
            with contextlib.suppress(OSError), self._lock:
                self._conn.send(("stop",))
        with contextlib.suppress(OSError):
            self._conn.close()
        try:
            self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=timeout_s)


def _serve(conn: Connection, parent_pid: int) -> None:
    """The child's loop: answer the parent's requests until told to stop or orphaned."""
    cam: SimCamera | None = None
    for request in requests(conn, parent_pid):
        op = request[0]
        try:
            if op == "init":
                w, h = request[2]
                cam = SimCamera(int(request[1]), (int(w), int(h)))
                reply: object = (cam.camera_model, cam.geometry)
            elif cam is None:
                raise RuntimeError(f"{op}: the camera is not set up")
            elif op == "render":
                hand = Hand(*request[2]) if request[2] is not None else None
                scene = Scene(load_state(request[1]), hand, 1)
                frame = np.ascontiguousarray(cam.render_scene(scene, int(request[3])))
            elif op == "setup_frame":
                frame = np.ascontiguousarray(cam.setup_frame(load_state(request[1])))
            elif op == "profile":
                profile = cam.profile_from_setup(load_state(request[1]), list(request[2]))
                reply = (profile, cam.geometry)
            else:
                raise RuntimeError(f"unknown request {op!r}")
        except Exception as exc:  # the child's top: any failure is the parent's answer
            if not send_error(conn, exc):
                return
            continue
        try:
            if op in ("render", "setup_frame"):
                conn.send(("frame", frame.shape))
                conn.send_bytes(memoryview(frame.data).cast("B"))
            else:
                conn.send(("ok", reply))
        except OSError:
            return


def main(argv: list[str]) -> int:
    """``python -m companion.sim.simrender FD``: serve the parent on the socket ``FD``."""
    # the simulated camera stands in for camera hardware, which takes no CPU from the service:
    # the renderer runs only on what the service leaves over
    with contextlib.suppress(OSError):
        os.nice(10)
    return run_child(argv, _serve)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
