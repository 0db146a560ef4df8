"""The running companion: every part wired together (docs/architecture.md, "Threads in the
running service").

::

    FrameSource --camera thread--> VisionWorker (detector + stability gate) --observation--+
    hardware buttons (gpiozero callback thread) --dice / done / undo----------------------+--> queue
    web pages (waitress threads) --commands (wait for their result)-----------------------+
                                                   |
           service thread: publish (pages, LEDs, terminal) <-> tracker thread: tracker -> journal

:class:`Companion` builds and starts the parts, picks the real camera, pins and calibration when
present and the **simulated table** otherwise (built outside the run-time packages and handed in
as a :data:`SimulationFactory`), feeds the systemd watchdog while all heartbeats are fresh, and
stops cleanly. A part that cannot run here (no GPIO chip, no calibration) is named on the
terminal and in ``/healthz``; the rest keeps running.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import logging
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO, TypeAlias

from gpiozero import GPIOZeroError

from companion.config import Config
from companion.hardware import Hardware, create_hardware, on_raspberry_pi
from companion.rules import observe
from companion.service.core import CompanionService
from companion.service.detector_process import AnyDetector, DetectorProcess, DetectorProcessError
from companion.service.heartbeat import Heartbeats
from companion.service.inputs import CommandResult
from companion.service.learning import ColourTeacher
from companion.service.memory import return_big_buffers_to_the_system
from companion.service.pipeline import CameraThread, FrameReader, TakenFrame, VisionWorker
from companion.service.record import Recorder
from companion.service.sdnotify import SystemdNotifier
from companion.service.table import TableSimulation
from companion.service.tracked import write_json_atomic
from companion.service.vision import (
    CAMERA_CONTROLS,
    SAMPLED_PROFILE,
    build_vision,
    overlay_jpeg,
    renewed,
    sampled_profile,
)
from companion.vision.camera_controls import load_controls
from companion.vision.detector import Detection, Detector
from companion.vision.profile import ProfileError
from companion.vision.profile_setup import build_profile
from companion.vision.session_pace import PacedSessionSource
from companion.vision.setupcheck import setup_check
from companion.vision.sources import SessionSource, open_source
from companion.vision.stability import GateDecision, StabilityGate
from companion.web.app import create_app
from companion.web.server import BackgroundServer, base_url, print_join_codes
from companion.web.service import CommandError

log = logging.getLogger(__name__)

SimulationFactory: TypeAlias = "Callable[[Companion], TableSimulation]"
"""Builds the simulated table for a companion that has no camera (``companion.cli`` passes
``companion.sim.simulation.SimulatedTable``)."""


class StartError(RuntimeError):
    """The companion cannot start (bad camera spec, port in use, …); the message says why."""


class Companion:
    """All threads of the running companion.

    :param config: validated configuration.
    :param simulation: builds the simulated table when there is no camera (``camera.source``
        ``simulated``, or ``auto`` without a Pi camera); None = no simulated table here.
    :param out: where terminal output goes (URL, QR codes, status lines).
    :param notifier: systemd notifier (default: from the environment).
    :param web: serve the pages (tests of the pipeline alone can switch it off).
    :param recorder: a :class:`~companion.service.record.Recorder` to feed, or None.
    """

    def __init__(
        self,
        config: Config,
        *,
        simulation: SimulationFactory | None = None,
        out: TextIO | None = None,
        notifier: SystemdNotifier | None = None,
        web: bool = True,
        recorder: Recorder | None = None,
        print_qr: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.simulation = simulation
        self.out = out if out is not None else sys.stdout
        self.notifier = notifier or SystemdNotifier()
        self.want_web = web
        self.recorder = recorder
        self.print_qr = print_qr
        self._clock = clock
        self.heartbeats = Heartbeats(config.service.heartbeat_stale_s, clock)
        self.service = CompanionService(config, self.heartbeats, clock=clock)
        self.stop_event = threading.Event()
        self.table: TableSimulation | None = None
        self.camera: CameraThread | None = None
        self.vision: VisionWorker | None = None
        self.hardware: Hardware | None = None
        self.web_server: BackgroundServer | None = None
        self.url = ""
        self.port = 0
        self._service_thread: threading.Thread | None = None
        self._supervisor: threading.Thread | None = None
        self._started = False
        self.mode = ""
        self.teacher: ColourTeacher | None = None

    # ------------------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(text, file=self.out, flush=True)

    def start(self) -> None:
        """Build and start every part.

        :raises StartError: a configured camera spec is malformed, the data directory cannot
            be created, the web port is taken, or there is no camera and no simulated table.
        """
        cfg = self.config
        return_big_buffers_to_the_system()
        try:
            Path(os.path.expanduser(cfg.data.dir)).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StartError(f"data.dir: cannot create {cfg.data.dir}: {exc}") from None
        self._start_hardware()
        self.mode = self._choose_mode()
        self.say(self._starting_line())
        if self.mode == "simulated":
            if self.simulation is None:
                raise StartError(
                    "camera.source: no camera here and no simulated table wired in "
                    "(start it with `companion run` or `companion demo`)"
                )
            self.table = self.simulation(self)
            self.table.prepare()
        self.service.start_game(self.table.table_settings if self.table else None, restore=True)
        if self.recorder is not None:
            self.recorder.attach(self.service, cfg, self.mode, self._detector)
        # the restored game is served before the camera starts (opening it, loading its
        # calibration or the simulated camera's renderer take seconds): phones get their
        # page back as soon as the journal is read
        self._start_service_thread()
        self._install_calibration_commands()
        if self.want_web:
            self._start_web()
        else:
            self.heartbeats.beat("web", "not served (pipeline only)")
        if self.table is not None:
            self.service.on_new_game = self.table.restart
            if self.service.settings.game == "wandering-towers":
                self.table.start()  # a restored pack game needs no simulated camera
        else:
            self._start_camera_pipeline()
        self._start_supervisor()
        self._started = True
        self.notifier.ready(f"serving {self.url or 'no web'}; {self.mode}")

    def _starting_line(self) -> str:
        """What is starting, for the terminal (the web address follows once it serves)."""
        if self.mode != "simulated":
            return f"starting the camera {self.config.camera.source} and the tracker …"
        sim = self.config.simulation
        camera = "its camera renders in a child process" if sim.picture else "no camera picture"
        players = len(self.service.settings.colours)
        return f"starting the simulated table (seed {sim.seed}, {players} players; {camera}) …"

    def _choose_mode(self) -> str:
        spec = self.config.camera.source
        if spec == "simulated":
            return "simulated"
        if spec == "auto":
            if on_raspberry_pi() and _pi_camera():
                return "camera"
            return "simulated"
        return "camera"

    def _detector(self) -> AnyDetector | None:
        return self.vision.detector if self.vision is not None else None

    # -- hardware ------------------------------------------------------------------------------

    def _start_hardware(self) -> None:
        """Build the dice panel. When the configured pins cannot be opened (no GPIO chip: not a
        Pi, pins busy), the virtual panel on gpiozero's mock pins stands in, so the host page's
        dice controls work, and the hardware part says so (not ok, with the reason)."""
        hc = self.config.hardware
        hw_config: dict[str, dict[str, object]] = {
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
            self.hardware = create_hardware(hw_config, self.service.hardware_event)
        except ValueError as exc:  # a bad [pins] or [hardware] key: the config must change
            raise StartError(f"hardware: {exc}") from None
        except (GPIOZeroError, OSError, RuntimeError) as exc:  # pins busy, no GPIO chip
            reason = f"{type(exc).__name__}: {exc}"
            virtual = {**hw_config, "hardware": {**hw_config["hardware"], "backend": "mock"}}
            try:
                self.hardware = create_hardware(virtual, self.service.hardware_event)
            except (GPIOZeroError, OSError, RuntimeError, ValueError) as again:
                self.heartbeats.trouble("hardware", f"error: {reason}; virtual panel: {again}")
                self.say(f"hardware: not available ({reason}); the page has no dice controls")
                return
            problem = f"GPIO pins not available ({reason}): the page's virtual dice panel stands in"
            self.service.hardware_problem = problem
            self.heartbeats.beat("hardware", problem, working=False)
            self.say(f"hardware: {problem}")
        else:
            self.heartbeats.beat("hardware", str(self.hardware.backend))
        self.service.hardware = self.hardware

    # -- camera + vision -----------------------------------------------------------------------

    def _start_camera_pipeline(self) -> None:
        spec = self.config.camera.source
        if spec == "auto":
            spec = f"picamera2:{self.config.camera.width}x{self.config.camera.height}"
        data_dir = Path(os.path.expanduser(self.config.data.dir))
        # the colours sampled on the host page belong to this table's camera (not to a
        # recording or a video file), with the exposure and white balance they were taken at
        live = spec.partition(":")[0].strip().lower() in ("picamera2", "usb")
        sampled = sampled_profile(self.config.calibration, data_dir) if live else None
        controls = None
        if sampled is not None and (data_dir / CAMERA_CONTROLS).is_file():
            try:
                controls = load_controls(data_dir / CAMERA_CONTROLS)
            except (OSError, ValueError) as exc:
                self.say(f"camera: the locked exposure is not used ({exc})")
        try:
            source = open_source(spec, controls=controls)
            if isinstance(source, SessionSource):
                # a recording plays like a camera: at its pace, each frame held until the next
                source.close()
                source = PacedSessionSource(source.path)
        except ValueError as exc:
            raise StartError(f"camera.source: {exc}") from None
        vision = build_vision(
            self.config.calibration,
            self.heartbeats,
            self.say,
            spec,
            sampled=sampled,
            own_process=self.config.service.detector_process,
        )
        self.start_pipeline(source, vision)

    def start_pipeline(
        self,
        source: FrameReader,
        vision: tuple[AnyDetector, StabilityGate] | None,
        *,
        speed: float = 1.0,
        lossless: bool = False,
        before_frame: Callable[[TakenFrame], None] | None = None,
    ) -> None:
        """Start the camera thread on ``source`` and, with a detector and gate, the vision
        worker posting still boards to the service (the real camera, or a simulated table's
        rendered camera).

        :param speed: time factor of the frame rate (``inf`` = no pause between frames).
        :param lossless: hand every frame on in order (a seeded simulated table).
        :param before_frame: called (vision thread) before each frame is analysed.
        """
        rec = self.recorder
        svc = self.service
        self.camera = CameraThread(
            source,
            self.heartbeats,
            fps=self.config.camera.fps,
            speed=speed,
            on_status=svc.post_camera_status,
            on_frame=rec.on_frame if rec is not None else None,
            lossless=lossless,
        )
        if vision is None:
            self.camera.start()
            return
        detector, gate = vision
        self.vision = VisionWorker(
            self.camera,
            detector,
            gate,
            svc.post_observation,
            self.heartbeats,
            on_decision=rec.on_decision if rec is not None else None,
            yield_to=svc.free,
            prepare=svc.post_candidate if self.config.service.work_ahead else None,
        )
        self.vision.before_frame = before_frame
        if self.config.calibration.learn_colours:
            self._teach_colours(self.vision)
        svc.set_camera_jpeg(self.camera_jpeg)
        self.camera.start()
        self.vision.start()

    def _teach_colours(self, worker: VisionWorker) -> None:
        """The colour profile follows the light from the boards the tracker works out
        (:mod:`companion.service.learning`): each board shown without "checking…" is offered,
        and the vision thread learns from a still frame that reads the same. One teacher for
        every pipeline this companion starts."""
        teacher = self.teacher
        if teacher is None:
            teacher = self.teacher = ColourTeacher(report=self.service.post_note)

            def offer(svc: CompanionService) -> None:
                shown = svc.published
                if shown is not None and shown.state is not None and not svc.checking:
                    teacher.offer(observe(shown.state))

            self.service.add_listener(offer)

        def learn(frame: TakenFrame, det: Detection, gate: GateDecision) -> None:
            teacher.after_frame(worker.detector, frame.image, det, gate)

        worker.after_frame = learn

    def stop_pipeline(self) -> None:
        """Stop the vision worker and the camera thread (the source stays open)."""
        if self.vision is not None:
            self.vision.stop()
            if isinstance(self.vision.detector, DetectorProcess):
                self.vision.detector.close()
            self.vision = None
        if self.camera is not None:
            self.camera.stop()
            self.camera = None

    def camera_jpeg(self) -> bytes | None:
        """The latest frame with the detected overlay (space numbers, readings), JPEG."""
        frame = self.camera.latest() if self.camera is not None else None
        if frame is None:
            return None
        vision = self.vision
        detection = vision.last_detection if vision is not None else None
        geometry = vision.detector.geometry if vision is not None else None
        return overlay_jpeg(frame.image, detection, geometry)

    # -- calibration from the host page ---------------------------------------------------

    def _install_calibration_commands(self) -> None:
        svc = self.service
        svc.set_command_hook("calibrate_board", self._calibrate_board)
        svc.set_command_hook("calibrate_profile", self._calibrate_profile)
        svc.set_command_hook("calibrate_reset", self._calibrate_reset)
        svc.set_command_hook("calibrate_check", self._calibrate_check)
        svc.extra_status = self.calibration_status

    def calibration_status(self) -> dict[str, object]:
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

    def _need_vision(self) -> tuple[VisionWorker, TakenFrame]:
        frame = self.camera.latest() if self.camera is not None else None
        if self.vision is None or frame is None:
            raise CommandError("no camera frame is being analysed (see /healthz)", 409)
        return self.vision, frame

    def _calibrate_board(self, cmd: Mapping[str, object]) -> CommandResult:
        """Find the board markers in the current frame and report the pose."""
        vision, frame = self._need_vision()
        try:
            det = vision.detector.detect(frame.image, frame.time_s, frame.index)
        except DetectorProcessError as exc:
            raise CommandError(f"board not read: {exc}", 503) from None
        pose = det.pose
        if pose is None:
            raise CommandError(f"board not found: {det.status} {det.message}".strip(), 409)
        err = float(pose.reprojection_error_px)
        return {"markers": list(pose.marker_ids), "reprojection_error_px": round(err, 2)}

    def _calibrate_profile(self, cmd: Mapping[str, object]) -> CommandResult:
        """Sample the colour profile from the current frame, which must show the untouched
        setup position; save it in the data directory and use it from now on (also after a
        restart: :func:`~companion.service.vision.sampled_profile`).

        A camera that can (the Pi camera) then keeps the exposure and white balance the colours
        were sampled at: its automatic exposure and white balance would otherwise follow the
        pieces and the players' hands during the game and shift every colour away from the
        profile. The locked controls are saved beside the profile and applied again at start;
        ``calibrate_reset`` lets the camera meter the light again."""
        vision, frame = self._need_vision()
        det = vision.detector
        colours = list(self.service.settings.colours)
        try:
            profile = build_profile(frame.image, det.camera, det.geometry, colours)
        except ProfileError as exc:
            raise CommandError(f"profile: {exc} (is the setup position in view?)", 409) from None
        data_dir = Path(os.path.expanduser(self.config.data.dir))
        path = data_dir / SAMPLED_PROFILE
        try:
            # whole or not at all: a start after a power cut reads this file
            write_json_atomic(path, profile.to_json())
        except OSError as exc:
            raise CommandError(f"profile: cannot save {path}: {exc}", 500) from None
        try:
            vision.detector = renewed(det, profile)
        except DetectorProcessError as exc:
            raise CommandError(f"profile saved, not in use yet: {exc}", 503) from None
        out: dict[str, object] = {"profile": str(path)}
        lock = getattr(
            self.camera.source if self.camera is not None else None, "lock_exposure", None
        )
        if lock is None:
            out["exposure"] = "not locked: this camera has no exposure control"
            return out
        try:
            controls = lock()
            write_json_atomic(data_dir / CAMERA_CONTROLS, dict(controls))
        except (RuntimeError, OSError, KeyError, TypeError, ValueError) as exc:
            out["exposure"] = f"not locked: {exc}"
        else:
            out["exposure"] = "locked"
            out["controls"] = dict(controls)
        return out

    def _calibrate_check(self, cmd: Mapping[str, object]) -> CommandResult:
        """The camera check at setup: the current frame with the reading drawn on it (PNG, as
        a data URL), what to fix (light, focus, glare, camera height, marker size) and the
        figures measured (:func:`companion.vision.setupcheck.setup_check`). A detector of its
        own reads the frame: the session's references (setup sharpness and pose) stay."""
        vision, frame = self._need_vision()
        det = vision.detector
        fresh = Detector(
            det.camera, det.geometry, det.profile, config=det.config, limits=det.limits
        )
        check = setup_check(frame.image, fresh.detect(frame.image), det.geometry, det.limits)
        return {
            "image": "data:image/png;base64," + base64.b64encode(check.png).decode("ascii"),
            "advice": list(check.advice),
            "figures": check.figures,
            "message": "camera checked: " + ("; ".join(check.advice) or "all good"),
        }

    def _calibrate_reset(self, cmd: Mapping[str, object]) -> CommandResult:
        """Forget the cached board pose and the stability history (after moving the camera),
        and let a camera whose exposure was locked meter the light again (the next
        ``calibrate_profile`` locks it anew)."""
        vision, _ = self._need_vision()
        try:
            vision.detector = renewed(vision.detector)
        except DetectorProcessError as exc:
            raise CommandError(f"not reset: {exc}", 503) from None
        vision.gate.reset()
        out: dict[str, object] = {"reset": True}
        unlock = getattr(
            self.camera.source if self.camera is not None else None, "unlock_exposure", None
        )
        if unlock is not None:
            try:
                unlock()
            except RuntimeError as exc:
                out["exposure"] = f"not unlocked: {exc}"
            else:
                out["exposure"] = "automatic"
                (Path(os.path.expanduser(self.config.data.dir)) / CAMERA_CONTROLS).unlink(
                    missing_ok=True
                )
        return out

    # -- the service thread --------------------------------------------------------------------

    def _start_service_thread(self) -> None:
        t = threading.Thread(
            target=self.service.run, args=(self.stop_event,), name="service", daemon=True
        )
        t.start()
        self._service_thread = t

    # -- web -----------------------------------------------------------------------------------

    def _start_web(self) -> None:
        wc = self.config.web
        app = create_app({"PUBLIC_URL": wc.public_url} if wc.public_url else {}, self.service)
        try:
            server = BackgroundServer(app, host=wc.host, port=wc.port, threads=wc.threads)
        except OSError as exc:
            raise StartError(f"web.port: cannot listen on {wc.host}:{wc.port}: {exc}") from None
        except ValueError as exc:  # too few threads, or waitress refuses the address
            if str(exc).startswith("threads:"):
                raise StartError(f"web.{exc}") from None
            raise StartError(f"web.host: cannot listen on {wc.host!r}: {exc}") from None
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
        except urllib.error.HTTPError as exc:
            exc.close()  # the error answer holds the connection: give it back now
            self.heartbeats.trouble("web", f"not answering: {exc}")
            return False
        except (OSError, http.client.HTTPException) as exc:
            self.heartbeats.trouble("web", f"not answering: {exc}")
            return False
        self.heartbeats.beat("web", f"serving {self.url}")
        return True

    def _print_qr_codes(self) -> None:
        try:
            print_join_codes(self.service, self.url, out=self.out)
        except (OSError, ValueError) as exc:  # a terminal that cannot show them
            self.say(f"(QR codes not printable here: {exc})")

    # -- supervisor: watchdog, web probe, terminal status --------------------------------------

    def _start_supervisor(self) -> None:
        t = threading.Thread(target=self._supervise, name="supervisor", daemon=True)
        t.start()
        self._supervisor = t

    def _supervise(self) -> None:
        interval = self.notifier.watchdog_interval_s
        tick = min(2.0, interval) if interval else 2.0
        if self.table is not None:
            tick = min(tick, 0.5)  # the simulated players look at their phones often
        last_status = self._clock()
        every = self.config.service.status_every_s
        while not self.stop_event.wait(tick):
            try:
                last_status = self._supervise_once(last_status, every)
            except Exception:  # the thread's top: log, keep supervising
                log.exception("supervisor: a check failed")

    def _supervise_once(self, last_status: float, every: float) -> float:
        if self.want_web:
            self._probe_web()
        if self.table is not None:
            self.table.check()
        if self.stop_event.is_set():
            return last_status  # stopping: the notifier may be closed already
        if self.heartbeats.all_fresh():
            self.notifier.watchdog()
        if every and self._clock() - last_status >= every:
            last_status = self._clock()
            self.say(self.status_line())
        self.notifier.status(self.service.health_line)
        return last_status

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
        """Stop every thread and release camera, pins, port and journal (idempotent).

        The supervisor stops first: it probes the web server and pings systemd, so neither a
        request nor a notification can start while they are being closed."""
        if self.stop_event.is_set():
            return
        self.stop_event.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=10)
        self.notifier.stopping()
        if self.table is not None:
            self.table.stop()
        camera = self.camera
        self.stop_pipeline()
        if camera is not None:
            camera.source.close()
        self.service.stop()
        if self.web_server is not None:
            self.service.wake_all()
            self.web_server.close(timeout_s=3.0)
        if self._service_thread is not None:
            self._service_thread.join(timeout=5)
        if self.recorder is not None:
            self.recorder.close()
        self.service.close()
        if self.hardware is not None:
            self.hardware.close()
        self.notifier.close()

    def __enter__(self) -> Companion:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _pi_camera() -> bool:
    """True when libcamera lists a camera (picamera2 from apt on Raspberry Pi OS)."""
    try:
        # only here: picamera2 exists on Raspberry Pi OS alone and loads libcamera
        from picamera2 import Picamera2
    except ImportError:
        return False
    try:
        return bool(Picamera2.global_camera_info())
    except (OSError, RuntimeError):
        return False
