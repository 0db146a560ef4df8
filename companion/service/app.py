"""The running companion: every part wired together (architecture.md, "Threads in the service").

::

    FrameSource --camera thread--> VisionWorker (detector + stability gate) --observation--+
    hardware buttons (gpiozero callback thread) --dice / done / undo----------------------+--> queue
    web pages (waitress threads) --commands (wait for their result)-----------------------+
                                                   |
                      service thread: tracker -> journal -> publish (pages, LEDs, terminal)

:class:`Companion` builds and starts the parts that are installed, picks the real camera, pins
and calibration when present and the **simulated table** otherwise, feeds the systemd watchdog
while all heartbeats are fresh, and stops cleanly. A part that is missing is named on the
terminal and in ``/healthz``; the rest keeps running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from companion.config import Config
from companion.service.core import CompanionService
from companion.service.heartbeat import Heartbeats
from companion.service.memory import return_big_buffers_to_the_system
from companion.service.parts import Parts
from companion.service.sdnotify import SystemdNotifier

log = logging.getLogger(__name__)


class StartError(RuntimeError):
    """The companion cannot start (bad camera spec, port in use, …); the message says why."""


class Companion:
    """All threads of the running companion.

    :param config: validated configuration.
    :param parts: installed parts (tests disable some).
    :param out: where terminal output goes (URL, QR codes, status lines).
    :param notifier: systemd notifier (default: from the environment).
    :param web: serve the pages (tests of the pipeline alone can switch it off).
    :param recorder: a :class:`~companion.service.record.Recorder` to feed, or None.
    :param answer_questions: on the simulated table, the simulated players answer the tracker's
        questions through the service (as their phones would); tests answer through the web API
        instead.
    """

    def __init__(
        self,
        config: Config,
        parts: Parts | None = None,
        *,
        out: TextIO | None = None,
        notifier: SystemdNotifier | None = None,
        web: bool = True,
        recorder: Any = None,
        answer_questions: bool = True,
        print_qr: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.parts = parts or Parts()
        self.out = out if out is not None else sys.stdout
        self.notifier = notifier or SystemdNotifier()
        self.want_web = web
        self.recorder = recorder
        self.answer_questions = answer_questions
        self.print_qr = print_qr
        self._clock = clock
        self.heartbeats = Heartbeats(config.service.heartbeat_stale_s, clock)
        self.service = CompanionService(config, self.parts, self.heartbeats, clock=clock)
        self.stop_event = threading.Event()
        self.table: Any = None  # SimulatedTable when simulating
        self.camera: Any = None
        self.vision: Any = None
        self.hardware: Any = None
        self.web_server: Any = None
        self.url = ""
        self.port = 0
        self._threads: list[threading.Thread] = []
        self._started = False
        self.mode = ""

    # ------------------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(text, file=self.out, flush=True)

    def start(self) -> None:
        """Build and start every part.

        :raises StartError: a configured camera spec is malformed, the data directory cannot
            be created, or the web port is taken.
        """
        cfg = self.config
        return_big_buffers_to_the_system()
        try:
            Path(os.path.expanduser(cfg.data.dir)).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StartError(f"data.dir: cannot create {cfg.data.dir}: {exc}") from None
        missing = self.parts.missing_line("rules")
        if missing:
            raise StartError(f"the rules core is missing: {missing}")
        self._start_hardware()
        self.mode = self._choose_mode()
        if self.mode == "simulated":
            from companion.sim.simulation import SimulatedTable

            self.table = SimulatedTable(self)
            self.table.prepare()
        self.service.start_game(self.table.table_settings if self.table else None, restore=True)
        if self.recorder is not None:
            self.recorder.attach(self)
        if self.table is not None:
            self.service.on_new_game = self.table.restart
            self.table.start()
        else:
            self._start_camera_pipeline()
        self._start_service_thread()
        if self.want_web:
            self._start_web()
        else:
            self.heartbeats.beat("web", "not served (pipeline only)")
        if self.web_server is None and self.want_web:
            # no phone page: show the table in the terminal after every change of the board
            self.service.add_listener(self._print_board)
        self._install_calibration_commands()
        self._start_supervisor()
        self._started = True
        self.notifier.ready(f"serving {self.url or 'no web'}; {self.mode}")

    def _choose_mode(self) -> str:
        spec = self.config.camera.source
        if spec == "simulated":
            return "simulated"
        if spec == "auto":
            from companion.hardware import on_raspberry_pi

            if on_raspberry_pi() and self.parts.get("sources") is not None and _pi_camera():
                return "camera"
            return "simulated"
        return "camera"

    # -- hardware ------------------------------------------------------------------------------

    def _start_hardware(self) -> None:
        hw_mod = self.parts.get("hardware")
        if hw_mod is None or not hasattr(hw_mod, "create_hardware"):
            self.heartbeats.trouble("hardware", "missing: " + self.parts.missing_line("hardware"))
            return
        hc = self.config.hardware
        hw_config = {
            "pins": dict(self.config.pins),
            "hardware": {
                "backend": hc.backend,
                "serial_port": hc.serial_port,
                "buzzer": hc.buzzer,
                "profile": hc.profile,
                "seats": list(self.service.settings.colours),
            },
        }
        try:
            self.hardware = hw_mod.create_hardware(hw_config, self.service.hardware_event)
        except ValueError as exc:
            raise StartError(f"hardware: {exc}") from None
        except Exception as exc:  # pins busy, no GPIO chip: run without the panel, say so
            self.heartbeats.trouble("hardware", f"error: {type(exc).__name__}: {exc}")
            self.say(f"hardware: not available ({exc}); the page's dice controls still work")
            return
        self.service.hardware = self.hardware
        self.heartbeats.beat("hardware", str(self.hardware.backend))

    # -- camera + vision -----------------------------------------------------------------------

    def _start_camera_pipeline(self) -> None:
        from companion.service.pipeline import CameraThread, VisionWorker
        from companion.service.vision import build_vision

        sources = self.parts.get("sources")
        if sources is None:
            raise StartError("camera.source: " + self.parts.missing_line("sources"))
        spec = self.config.camera.source
        if spec == "auto":
            spec = f"picamera2:{self.config.camera.width}x{self.config.camera.height}"
        try:
            source = sources.open_source(spec)
        except ValueError as exc:
            raise StartError(f"camera.source: {exc}") from None
        self.camera = CameraThread(
            source,
            self.heartbeats,
            fps=self.config.camera.fps,
            on_status=lambda s: self.service.post("camera", s),
            on_frame=self.recorder.on_frame if self.recorder is not None else None,
        )
        vision = build_vision(self, source_spec=spec)
        self.camera.start()
        if vision is None:
            return
        detector, gate = vision
        self.vision = VisionWorker(
            self.camera,
            detector,
            gate,
            lambda obs: self.service.post("observation", obs),
            self.heartbeats,
            on_decision=self.recorder.on_decision if self.recorder is not None else None,
            yield_to=self.service.free,
            prepare=(
                (lambda obs: self.service.post("candidate", obs))
                if self.config.service.work_ahead
                else None
            ),
        )
        self.service.set_camera_jpeg(self.camera_jpeg)
        self.vision.start()

    def camera_jpeg(self) -> bytes | None:
        """The latest frame with the detected overlay (space numbers, readings), JPEG."""
        from companion.service.vision import overlay_jpeg

        frame = self.camera.latest() if self.camera is not None else None
        if frame is None:
            return None
        detection = self.vision.last_detection if self.vision is not None else None
        geometry = getattr(self.vision.detector, "geometry", None) if self.vision else None
        return overlay_jpeg(frame.image, detection, geometry)

    # -- calibration from the host page ---------------------------------------------------

    def _install_calibration_commands(self) -> None:
        svc = self.service
        svc.set_command_hook("calibrate_board", self._calibrate_board)
        svc.set_command_hook("calibrate_profile", self._calibrate_profile)
        svc.set_command_hook("calibrate_reset", self._calibrate_reset)
        svc.extra_status = self.calibration_status

    def calibration_status(self) -> dict[str, Any]:
        det = self.vision.last_detection if self.vision is not None else None
        cal = self.config.calibration
        return {
            "calibration": {
                "mode": self.mode,
                "camera_file": cal.camera or ("simulated camera" if self.table else ""),
                "profile_file": cal.profile
                or ("sampled from the rendered setup" if self.table else ""),
                "board": "not analysed yet" if det is None else f"{det.status}: {det.message}",
                "camera": self.camera.status if self.camera is not None else "no camera",
            }
        }

    def _need_vision(self) -> Any:
        from companion.web.service import CommandError

        if self.vision is None or self.camera is None or self.camera.latest() is None:
            raise CommandError("no camera frame is being analysed (see /healthz)", 409)
        return self.vision

    def _calibrate_board(self, cmd: Mapping[str, Any]) -> dict[str, Any]:
        """Find the board markers in the current frame and report the pose."""
        from companion.web.service import CommandError

        vision = self._need_vision()
        frame = self.camera.latest()
        det = vision.detector.detect(frame.image, frame.time_s, frame.index)
        pose = getattr(det, "pose", None)
        if pose is None:
            raise CommandError(f"board not found: {det.status} {det.message}".strip(), 409)
        err = float(getattr(pose, "reprojection_error_px", 0.0))
        return {"markers": list(pose.marker_ids), "reprojection_error_px": round(err, 2)}

    def _calibrate_profile(self, cmd: Mapping[str, Any]) -> dict[str, Any]:
        """Sample the colour profile from the current frame, which must show the untouched
        setup position; save it in the data directory and use it from now on."""
        from companion.vision.profile import ProfileError
        from companion.vision.profile_setup import build_profile
        from companion.web.service import CommandError

        vision = self._need_vision()
        frame = self.camera.latest()
        det = vision.detector
        colours = list(self.service.settings.colours)
        try:
            profile = build_profile(frame.image, det.camera, det.geometry, colours)
        except ProfileError as exc:
            raise CommandError(f"profile: {exc} (is the setup position in view?)", 409) from None
        path = Path(os.path.expanduser(self.config.data.dir)) / "profile.json"
        profile.save(path)
        from companion.vision.detector import Detector

        vision.detector = Detector(det.camera, det.geometry, profile)
        return {"profile": str(path)}

    def _calibrate_reset(self, cmd: Mapping[str, Any]) -> dict[str, Any]:
        """Forget the cached board pose and the stability history (after moving the camera)."""
        from companion.vision.detector import Detector

        vision = self._need_vision()
        det = vision.detector
        vision.detector = Detector(det.camera, det.geometry, det.profile)
        reset = getattr(vision.gate, "reset", None)
        if reset is not None:
            reset()
        return {"reset": True}

    # -- the service thread --------------------------------------------------------------------

    def _start_service_thread(self) -> None:
        t = threading.Thread(
            target=self.service.run, args=(self.stop_event,), name="service", daemon=True
        )
        t.start()
        self._threads.append(t)

    # -- web -----------------------------------------------------------------------------------

    def _start_web(self) -> None:
        web = self.parts.get("web")
        if web is None or not hasattr(web, "create_app"):
            self.heartbeats.trouble("web", "missing: " + self.parts.missing_line("web"))
            self.say("web: the phone pages are not installed: " + self.parts.missing_line("web"))
            return
        from companion.web.server import BackgroundServer, base_url

        wc = self.config.web
        app = web.create_app({"PUBLIC_URL": wc.public_url} if wc.public_url else {}, self.service)
        try:
            server = BackgroundServer(app, host=wc.host, port=wc.port, threads=wc.threads)
        except OSError as exc:
            raise StartError(f"web.port: cannot listen on {wc.host}:{wc.port}: {exc}") from None
        except ValueError as exc:
            raise StartError(f"web.threads: {exc}") from None
        self.web_server = server
        self.port = server.port
        self.url = base_url(wc.public_url, wc.host, self.port)
        server.start()
        self._probe_web()
        self.say(f"Wandering Towers companion: open {self.url}/ on every phone at the table")
        self.say(f"host page: {self.url}/join/{self.service.host_token}")
        if self.print_qr:
            self._print_qr_codes()

    def _probe_web(self) -> bool:
        """Fetch the public state over loopback; beat ``web`` when it answers."""
        if self.web_server is None:
            return False
        url = f"http://127.0.0.1:{self.port}/api/state"
        try:
            with urllib.request.urlopen(url, timeout=3) as resp:
                resp.read()
            self.heartbeats.beat("web", f"serving {self.url}")
            return True
        except Exception as exc:
            self.heartbeats.trouble("web", f"not answering: {exc}")
            return False

    def _print_qr_codes(self) -> None:
        try:
            from companion.web.server import print_join_codes

            print_join_codes(self.service, self.url, out=self.out)
        except Exception as exc:  # a terminal that cannot show them must not stop the start
            self.say(f"(QR codes not printable here: {exc})")

    # -- supervisor: watchdog, web probe, terminal status --------------------------------------

    def _start_supervisor(self) -> None:
        t = threading.Thread(target=self._supervise, name="supervisor", daemon=True)
        t.start()
        self._threads.append(t)

    def _supervise(self) -> None:
        interval = self.notifier.watchdog_interval_s
        tick = min(2.0, interval) if interval else 2.0
        if self.table is not None:
            tick = min(tick, 0.5)  # the simulated players look at their phones often
        last_status = self._clock()
        every = self.config.service.status_every_s
        while not self.stop_event.wait(tick):
            if self.want_web:
                self._probe_web()
            if self.table is not None:
                self.table.check()
            fresh = self.heartbeats.all_fresh()
            if fresh:
                self.notifier.watchdog()
            if every and self._clock() - last_status >= every:
                last_status = self._clock()
                self.say(self.status_line())
            self.notifier.status(self.service.health_line)

    def _print_board(self, service: CompanionService) -> None:
        state = service._state
        key = None if state is None else (state.stacks, state.wizards, state.castle)
        if key is None or key == getattr(self, "_printed_key", None):
            return
        self._printed_key = key
        self.say(board_text(state))

    def status_line(self) -> str:
        rep = self.heartbeats.report()
        parts = " ".join(f"{n}:{'ok' if p['ok'] else 'NO'}" for n, p in rep["parts"].items())
        st = self.service.state
        turn = ""
        if st is not None:
            turn = f" | {st.current_player}'s turn" if not st.over else " | game over"
        return f"[{time.strftime('%H:%M:%S')}] {parts}{turn} | {self.service.health_line}"

    # -- stop ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop every thread and release camera, pins and port (idempotent)."""
        if self.stop_event.is_set():
            return
        self.stop_event.set()
        self.notifier.stopping()
        if self.table is not None:
            self.table.stop()
        if self.vision is not None:
            self.vision.stop()
        if self.camera is not None:
            self.camera.stop()
            with contextlib.suppress(Exception):
                self.camera.source.close()
        self.service.stop()
        if self.web_server is not None:
            with contextlib.suppress(Exception):
                self.service.wake_all()
                self.web_server.close(timeout_s=3.0)
        for t in self._threads:
            t.join(timeout=5)
        if self.recorder is not None:
            with contextlib.suppress(Exception):
                self.recorder.close()
        driver = self.service.driver
        if driver is not None and hasattr(driver, "close"):
            with contextlib.suppress(Exception):
                driver.close()
        if self.hardware is not None:
            with contextlib.suppress(Exception):
                self.hardware.close()
        self.notifier.close()

    def __enter__(self) -> Companion:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def board_text(state: Any) -> str:
    """The visible table in one line per space, for a terminal: ``7: crest,plain ^ b y`` = two
    towers (crest at the bottom), the roof on top, a blue and a yellow wizard on it; ``C`` = the
    raven castle; ``[2 trapped]`` counts hidden wizards (never who)."""
    lines = [f"{state.current_player}'s turn" if not state.over else "game over"]
    for space in state.spaces():
        kinds = [state.table.towers[t].kind for t in state.stacks[space - 1]]
        vis = [w.rsplit("-", 1)[0][0] for w in state.visible_wizards(space)]
        hidden = len(state.hidden_wizards(space))
        parts = [f"{space:>2}:", ",".join(kinds) or "-"]
        if state.castle == space:
            parts.append("C")
        if vis:
            parts.append("^ " + " ".join(vis))
        if hidden:
            parts.append(f"[{hidden} trapped]")
        lines.append(" ".join(parts))
    return "\n".join(lines)


def _pi_camera() -> bool:
    """True when libcamera lists a camera (picamera2 from apt on Raspberry Pi OS)."""
    try:
        from picamera2 import Picamera2

        return bool(Picamera2.global_camera_info())
    except Exception:
        return False
