"""``session:PATH`` plays a recording like a camera: at the recorded pace, each stored frame held
until the next one's time, so the stability gate sees still boards and reports them."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.session_pace import PacedSessionSource
from companion.vision.sources import Frame, SessionRecorder, SessionSource, open_source
from companion.vision.stability import StabilityGate

FPS = 8.0


def numbered(n: int) -> np.ndarray:
    return np.full((48, 64, 3), n * 20, np.uint8)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_stored_frame_is_held_until_the_next_ones_time(tmp_path):
    with SessionRecorder(tmp_path / "s", image_ext=".png") as rec:
        for i, t in enumerate([0.625, 3.625, 6.625]):
            rec.write(Frame(numbered(i), 5 + 24 * i, t))
    clock = FakeClock()
    src = PacedSessionSource(tmp_path / "s", clock=clock, tail_s=2.0)
    shown: list[tuple[int, float, int]] = []
    images = []
    while True:
        frame = src.read()
        if frame is None:
            break
        shown.append((frame.index, round(frame.time_s, 3), int(frame.image[0, 0, 0])))
        images.append(frame.image)
        clock.now += 1 / FPS
    assert src.status.kind == "ended"
    # 8 frames a second from 0.625 s to 8.625 s of recorded time: 65 frames
    assert len(shown) == 65
    assert [i for i, _, _ in shown] == list(range(65))  # the source's own frame counter
    assert shown[0][1] == 0.625 and shown[-1][1] == 8.625
    # each recorded frame for 3 s (24 reads), the last for its 2 s tail
    assert [v for _, _, v in shown] == [0] * 24 + [20] * 24 + [40] * 17
    assert images[0] is images[23]  # one image object while held, as a still camera's


def test_the_companion_plays_a_session_at_its_pace(tmp_path):
    from companion.sim.testing import sim_config, simulated_companion

    with SessionRecorder(tmp_path / "s") as rec:
        rec.write(Frame(numbered(1), 0, 0.0))
    assert type(open_source(f"session:{tmp_path / 's'}")) is SessionSource  # every frame once
    cfg = sim_config(tmp_path / "data", camera={"source": f"session:{tmp_path / 's'}"})
    c = simulated_companion(cfg, web=False)
    c._start_camera_pipeline()
    try:
        assert c.camera is not None and isinstance(c.camera.source, PacedSessionSource)
    finally:
        c.stop()
    with pytest.raises(ValueError, match="speed"):
        PacedSessionSource(tmp_path / "s", speed=0)


def test_the_gate_reports_every_still_board_of_a_stable_frames_recording(tmp_path):
    """A recording of the stable frames only (the default of `companion record`): read one
    after another the gate sees a board that never stops moving; played at the recorded pace
    it reports each still board."""
    from companion.rules import Config, apply, setup
    from companion.sim.bots import BOTS
    from companion.sim.simrender import SimCamera
    from companion.sim.simtable import Scene
    from companion.vision.detector import Detector

    states = [setup(Config(player_count=2), 5)]
    bot = BOTS["greedy"](5)
    for _ in range(2):
        states.append(apply(states[-1], bot.choose(states[-1]))[0])
    cam = SimCamera(5, (1536, 864))
    profile = cam.profile_from_setup(states[0], list(states[0].table.colours))
    detector = Detector(cam.camera_model, cam.geometry, profile)
    with SessionRecorder(tmp_path / "s") as rec:
        for i, state in enumerate(states):
            img = cam.render_scene(Scene(state, None, 6), i)
            rec.write(Frame(img, 5 + 24 * i, 0.625 + 3.0 * i))

    def reported(src: SessionSource, step_s: float, clock: FakeClock | None) -> int:
        gate = StabilityGate()
        cache: tuple[object, object] | None = None  # as the vision worker: one detection
        n = 0
        for _ in range(200):
            frame = src.read()
            if clock is not None:
                clock.now += step_s
            if frame is None:
                if src.status.kind == "ended":
                    break
                continue
            if cache is None or cache[0] is not frame.image:
                cache = (frame.image, detector.detect(frame.image, frame.time_s, frame.index))
            det = cache[1]
            reading = det.observation if det.ok else None  # type: ignore[attr-defined]
            decision = gate.update(frame.time_s, det.board_view, reading, det.white_bgr)  # type: ignore[attr-defined]
            n += decision.observation is not None
        return n

    assert reported(SessionSource(tmp_path / "s"), 0.0, None) <= 1
    clock = FakeClock()
    paced = PacedSessionSource(tmp_path / "s", clock=clock)
    assert reported(paced, 1 / FPS, clock) == len(states)
