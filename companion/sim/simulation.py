"""The embedded default: a simulated table in place of players, camera and buttons.

:class:`SimulatedTable` lets seeded bots play (:class:`~companion.sim.simtable.SimulatedGame`),
films them with the table renderer (:class:`SimulatedTableSource`, a ``FrameSource``) and sends
the frames through the *real* detector, stability gate and tracker; the players' ROLL and DONE
presses arrive as the hardware facade's events, and their phones answer the tracker's questions.
The simulated camera is calibrated like a real one: its camera file comes from the renderer, and
the colour profile is sampled from a rendered frame of the setup position.

Without the picture (``simulation.picture = false``, or ``without_picture`` naming why), the
simulated table still plays and feeds the tracker with the camera's ideal view
(``companion.rules.observe`` of the true state) — when the picture was wanted the camera and
detector heartbeats say why it is missing, so it can never pass for the real thing.

The service does not import this module: ``companion.cli`` hands :class:`SimulatedTable` to the
companion as its ``simulation`` factory (``companion.service.table.TableSimulation``).

Progress (seed, settings, actions played) is kept in ``simulation.json`` in the data directory, so
a restarted companion finds the simulated board where it was — as a real table would be.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from companion.rules import observe
from companion.service.app import Companion
from companion.service.driver import QuestionView
from companion.service.game import GameSettings
from companion.service.pipeline import TakenFrame
from companion.service.vision import build_vision
from companion.sim.simrender import SimCameraError, SimCameraProcess
from companion.sim.simtable import PanelEvent, Scene, SceneCursor, SimTiming, SimulatedGame
from companion.vision.sources import Frame, SourceStatus
from companion.web.service import Audience, CommandError

log = logging.getLogger(__name__)

PROGRESS_FILE = "simulation.json"

RenderScene = Callable[[Scene, int], NDArray[np.uint8]]
"""``(scene, scene number) -> (H, W, 3) uint8 BGR`` frame."""

FailAt = Callable[[int], Exception | None]
"""Tests inject camera failures: ``frame index -> the exception the camera raises, or None``."""

START_ERRORS = (SimCameraError, OSError, ValueError, RuntimeError)
"""What starting the simulated camera can raise (child process, profile, calibration): the
table then plays without the picture and says why."""


class SimulatedTableSource:
    """A frame source (``companion.service.pipeline.FrameReader``) whose frames are rendered
    scenes of the simulated game.

    Frame ``i`` has ``time_s = i / fps``. A scene is rendered once and its frame repeated for the
    scene's length (a still camera over a still board gives nearly the same picture; the
    renderer's sensor noise is seeded per scene). Status ``ended`` after the last scene.

    :param render_scene: ``(scene, scene_number) -> (H, W, 3) uint8 BGR``.
    :param fail: injected camera failures (tests), or None.
    """

    spec = "simulated"

    def __init__(
        self, cursor: SceneCursor, render_scene: RenderScene, fps: float, fail: FailAt | None = None
    ) -> None:
        self.cursor = cursor
        self.render_scene = render_scene
        self.fps = fps
        self.fail = fail
        self.index = 0
        self.scene_number = -1
        self._image: NDArray[np.uint8] | None = None
        self._status = SourceStatus("no signal", "not read yet")
        self.ended = False
        self.scene_frames: list[int] = []  # index of each scene's first frame (bench)
        self.on_scene: Callable[[Scene, int], None] | None = None
        self.pending: list[dict[str, object]] = []  # button events of the scene being entered
        self.events_at: dict[int, list[dict[str, object]]] = {}  # frame index -> its events
        self._scene_of: deque[tuple[int, Scene]] = deque(maxlen=512)  # recent frames' scenes
        self._scene_lock = threading.Lock()

    @property
    def status(self) -> SourceStatus:
        return self._status

    def read(self) -> Frame | None:
        i = self.index
        self.index += 1
        if self.fail is not None:
            exc = self.fail(i)
            if exc is not None:
                self._status = SourceStatus("error", f"{type(exc).__name__}: {exc}")
                return None
        scene = self.cursor.next()
        if self.cursor.finished:
            self.ended = True
            self._status = SourceStatus("ended", "the simulated game is over")
            return None
        assert scene is not None
        if self.pending:
            # the players' button presses belong to this frame: they reach the service when the
            # vision worker takes this frame, so presses and pictures keep their order
            self.events_at[i] = self.pending
            self.pending = []
        if self.cursor.scene_started or self._image is None:
            self.scene_number += 1
            self.scene_frames.append(i)
            try:
                self._image = self.render_scene(scene, self.scene_number)
            except SimCameraError as exc:
                self._image = None
                self._status = SourceStatus("error", f"renderer: {exc}")
                log.exception("rendering scene %d failed", self.scene_number)
                return None
            if self.on_scene is not None:
                self.on_scene(scene, i)
        with self._scene_lock:
            self._scene_of.append((i, scene))
        self._status = SourceStatus("ok")
        return Frame(self._image, i, i / self.fps)

    def scene_at(self, index: int) -> Scene | None:
        """The scene frame ``index`` was drawn from (the last 512 frames; else None): what was
        really on the table when that frame was taken."""
        with self._scene_lock:
            recent = list(self._scene_of)
        for i, scene in reversed(recent):
            if i == index:
                return scene
            if i < index:
                break
        return None

    def close(self) -> None:
        self.ended = True


class SimulatedTable:
    """Players, camera and buttons of a simulated table for one :class:`Companion` (a
    ``companion.service.table.TableSimulation``; the class itself is the companion's
    ``simulation`` factory).

    :param without_picture: why the camera picture is not available (tests); "" = render it
        unless ``simulation.picture`` is false.
    :param answer_questions: the simulated players answer the tracker's questions through the
        service (as their phones would); tests and the bench answer through the web API instead.
    """

    def __init__(
        self, companion: Companion, *, without_picture: str = "", answer_questions: bool = True
    ) -> None:
        self.c = companion
        self.config = companion.config
        self.without_picture = without_picture
        self.answer_questions = answer_questions
        sim = self.config.simulation
        self.seed = sim.seed
        self.settings = GameSettings.from_config(self.config.game)
        self._table_settings = self.settings
        self.game: SimulatedGame | None = None
        self.cursor: SceneCursor | None = None
        self.source: SimulatedTableSource | None = None
        self.games_played = 0
        self.vision_ok = False
        self.missing = ""
        self._direct_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._progress_path = Path(os.path.expanduser(self.config.data.dir)) / PROGRESS_FILE
        self._saved_actions = -1
        self.fail: FailAt | None = None  # tests: injected camera failures
        self.answered: list[tuple[str, str]] = []
        self._answering = threading.Lock()
        self.render_ms: list[float] = []
        self.sim_camera: SimCameraProcess | None = None  # while the picture is rendered

    @property
    def table_settings(self) -> GameSettings:
        """:attr:`settings` with the spells the simulated players laid out (drawn with the seed
        when the settings leave them to the rules): what the companion is told."""
        return self._table_settings

    @property
    def finished(self) -> bool:
        """The game on the table is over and no further game follows (``simulation.games``)."""
        cursor = self.cursor
        games = self.config.simulation.games
        last = games and self.games_played + 1 >= games
        return cursor is not None and cursor.finished and bool(last or not games)

    # -- set-up -----------------------------------------------------------------------------

    def prepare(self) -> None:
        """Create the seeded game, resuming the saved progress of the same game."""
        resume = 0
        saved = self._load_progress()
        if saved is not None and saved.get("settings") == self.settings.to_json():
            self.seed = int(saved.get("seed", self.seed))
            resume = int(saved.get("actions", 0))
        self._new_game(resume)

    def _new_game(self, resume: int = 0) -> None:
        sim = self.config.simulation
        timing = SimTiming.human(self.config.camera.fps, sim.seconds_per_action)
        self.game = SimulatedGame(
            self.settings.rules_config(),
            self.seed,
            sim.bot,
            timing,
            max_actions=sim.max_actions or 5000,
            hands=sim.hands,
        )
        # the players lay out the spells they drew; the host enters them at setup
        spells = tuple(self.game.initial_state.table.spells)
        self._table_settings = dataclasses.replace(self.settings, spells=spells)
        if resume:
            self.game.advance(resume)
            self.c.say(f"simulated table: resumed game seed {self.seed} after {resume} actions")
        self._save_progress(force=True)

    def _load_progress(self) -> dict[str, Any] | None:
        """``simulation.json`` as saved (JSON: ``seed``, ``settings``, ``actions``), or None."""
        try:
            data = json.loads(self._progress_path.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _save_progress(self, force: bool = False) -> None:
        g = self.game
        if g is None:
            return
        n = len(g.record.actions)
        if not force and n == self._saved_actions:
            return
        self._saved_actions = n
        data = {"seed": self.seed, "settings": self.settings.to_json(), "actions": n}
        tmp = self._progress_path.with_suffix(".tmp")
        try:
            with open(tmp, "w") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._progress_path)
        except OSError as exc:
            log.warning("simulation progress not saved: %s", exc)

    # -- running ------------------------------------------------------------------------------

    def start(self) -> None:
        assert self.game is not None
        self.source = None
        self.cursor = SceneCursor(self.game.scenes(), self._on_events)
        self.missing = self.without_picture
        if not self.config.simulation.picture:
            self.missing = "no picture (simulation.picture = false)"
        if not self.missing:
            try:
                self._start_vision()
                self.vision_ok = True
                return
            except START_ERRORS as exc:
                log.exception("simulated camera could not start")
                self.missing = f"simulated camera failed: {type(exc).__name__}: {exc}"
        self.c.say(
            "simulated table without the camera picture (" + self.missing + "); the tracker "
            "gets the ideal view of the board"
        )
        self._direct_thread = threading.Thread(target=self._direct, name="simtable", daemon=True)
        self._direct_thread.start()

    def _start_vision(self) -> None:
        assert self.cursor is not None and self.game is not None
        cfg = self.config
        cam = self._camera_process((cfg.camera.width, cfg.camera.height))
        profile = cam.profile_from_setup(self.game.initial_state, list(self.settings.colours))
        vision = build_vision(
            cfg.calibration,
            self.c.heartbeats,
            self.c.say,
            "simulated",
            camera_model=cam.camera_model,
            geometry=cam.geometry,
            profile=profile,
            own_process=cfg.service.detector_process,
        )
        if vision is None:
            raise RuntimeError("the simulated camera's calibration is unusable")
        self.source = SimulatedTableSource(self.cursor, cam.render_scene, cfg.camera.fps, self.fail)
        self.source.on_scene = self._on_scene
        speed = cfg.simulation.speed
        self.c.start_pipeline(
            self.source,
            vision,
            speed=speed if speed < 1e5 else float("inf"),
            lossless=True,
            before_frame=self.release_events,
        )

    def _camera_process(self, size: tuple[int, int]) -> SimCameraProcess:
        """The simulated camera's child process, started once and kept across games (a new
        game sets up the camera of its seed)."""
        cam = self.sim_camera
        if cam is not None and cam.alive and cam.size == size:
            if cam.seed != self.seed:
                cam.reset(self.seed)
            return cam
        if cam is not None:
            cam.close()
        self.sim_camera = SimCameraProcess(self.seed, size)
        return self.sim_camera

    def _on_events(self, event: dict[str, object]) -> None:
        if self.source is not None:
            self.source.pending.append(event)
        else:
            self.c.service.hardware_event(event)

    def release_events(self, frame: TakenFrame) -> None:
        """Post the button events that happened at ``frame`` (called by the vision worker
        before it analyses the frame)."""
        src = self.source
        if src is None:
            return
        events: list[PanelEvent] = list(src.events_at.pop(frame.index, ()))
        for event in events:
            self.c.service.hardware_event(event)

    def _on_scene(self, scene: Scene, frame_index: int) -> None:
        self._save_progress()

    def _direct(self) -> None:
        """Without the picture: walk the scenes at frame pace, post the ideal observation of
        every still board."""
        try:
            self._walk_scenes()
        except Exception:  # the thread's top: log it; the camera heartbeat then goes stale
            log.exception("the simulated table stopped")

    def _walk_scenes(self) -> None:
        assert self.cursor is not None
        cfg = self.config
        speed = cfg.simulation.speed
        period = 0.0 if speed >= 1e5 else 1.0 / (cfg.camera.fps * speed)
        hb = self.c.heartbeats
        index = 0
        while not self._stop.is_set():
            scene = self.cursor.next()
            if self.cursor.finished:
                hb.trouble("camera", "simulated game over")
                if self._stop.wait(0.5):
                    break
                continue
            assert scene is not None
            if self.cursor.scene_started:
                self._on_scene(scene, index)
                if scene.hand is None:
                    self.c.service.post_observation(observe(scene.state, 0.0, index))
            if self.config.simulation.picture:
                # the picture the table should have is not there
                hb.trouble("camera", f"simulated without a picture: {self.missing}")
                hb.trouble("detector", f"missing: {self.missing}")
            else:  # chosen in the config: nothing to analyse, nothing wrong
                hb.beat("camera", "not used (simulation.picture = false)")
                hb.beat("detector", "not used (simulation.picture = false)")
            index += 1
            if period and self._stop.wait(period):
                break

    def check(self) -> None:
        """Called every couple of seconds: the simulated players answer open questions and
        start the next game after the last one ended."""
        game = self.c.service.settings.game
        if self.cursor is None and game != "wandering-towers":
            # a game pack is played with the buttons and phones: the idle camera is fine
            for part in ("camera", "detector"):
                self.c.heartbeats.beat(part, f"not needed: {game} is played without the camera")
            return
        if self.answer_questions:
            self.answer_open_question()
        cursor = self.cursor
        games = self.config.simulation.games
        if cursor is not None and cursor.finished and (games == 0 or self.games_played + 1 < games):
            self.games_played += 1
            self.next_game()

    def answer_open_question(self) -> bool:
        """If the tracker asks something, the player it asks answers with the truth."""
        svc = self.c.service
        question: QuestionView | None = svc.question
        driver = svc.driver
        if question is None or self.game is None or driver is None:
            return False
        with self._answering:
            candidates = driver.candidates(question)
            option = self.game.answer_for(question, candidates)
            if option is None:
                return False
            to = question["to"]
            audience = Audience.player(to) if to else Audience.host()
            try:
                svc.submit(
                    {"command": "answer", "question": question["id"], "option": option}, audience
                )
            except CommandError as exc:
                log.info("simulated answer refused: %s", exc)
                return False
            self.answered.append((str(question["id"]), option))
            return True

    def next_game(self) -> None:
        """The table clears and a new seeded game starts (seed + 1)."""
        self.seed += 1
        self.stop_pipeline()
        self._new_game()
        try:
            self.c.service.start_game(self._table_settings, restore=False)
        except CommandError as exc:
            log.warning("the next simulated game was refused: %s", exc)
        self._stop.clear()
        self.start()

    def restart(self, settings: GameSettings) -> GameSettings:
        """The host set up a new game on the phone: the simulated players clear the table and
        start it with those settings (next seed). Runs on the service thread.

        :returns: the settings with the spells the players laid out (the game to track)."""
        if settings.game != "wandering-towers":
            # another game is played with the buttons and phones: the simulated players of the
            # Wandering Towers clear the table and wait (their camera stops)
            self.stop_pipeline()
            self.cursor = None
            return settings
        self.settings = settings
        self.seed += 1
        self.stop_pipeline()
        self._new_game()
        self._stop.clear()
        self.start()
        return self._table_settings

    def stop_pipeline(self) -> None:
        self._stop.set()
        self.c.stop_pipeline()
        if self._direct_thread is not None:
            self._direct_thread.join(timeout=5)
            self._direct_thread = None

    def stop(self) -> None:
        """Stop the simulated table: its camera and vision threads, then the camera's child
        process."""
        self.stop_pipeline()
        if self.sim_camera is not None:
            self.sim_camera.close()
            self.sim_camera = None
