"""``companion replay`` re-runs the detector on the stored frames, and says so when it cannot;
the inputs name the stored frame each reading was reported on."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from companion.service.record import Recorder, replay
from companion.sim.testing import finish_game, sim_config, simulated_companion


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short simulated game with the camera's picture, recorded as `companion record` does by
    default (the stable frames only, JPEG)."""
    tmp = tmp_path_factory.mktemp("rec")
    rec = Recorder(tmp / "rec")
    cfg = sim_config(tmp / "data", seed=6, players=2, simulation={"max_actions": 2})
    c = simulated_companion(cfg, web=False, recorder=rec, out=io.StringIO())
    c.start()
    try:
        finish_game(c)
    finally:
        c.stop()
    assert rec.frames > 0 and rec.commits > 0
    return tmp / "rec"


def test_each_reading_names_a_stored_frame(recording: Path) -> None:
    stored = {
        json.loads(line)["index"] for line in (recording / "frames.jsonl").read_text().splitlines()
    }
    inputs = [json.loads(line) for line in (recording / "inputs.jsonl").read_text().splitlines()]
    frames = [line["frame"] for line in inputs if line["kind"] == "observation"]
    assert frames and set(frames) <= stored


def test_replay_detects_every_reading_again(recording: Path) -> None:
    result = replay(recording)
    assert result.readings > 0
    assert result.frames_detected == result.readings_detected == result.readings
    assert result.identical and result.verdict == "IDENTICAL", result.text()


def test_without_frames_the_verdict_says_inputs_only(recording: Path, tmp_path: Path) -> None:
    copy = tmp_path / "inputs-only"
    copy.mkdir()
    for name in ("recording.json", "inputs.jsonl", "results.jsonl"):
        (copy / name).write_bytes((recording / name).read_bytes())
    result = replay(copy)
    assert result.identical and not result.detector_rerun
    assert result.frames_detected == 0
    assert "inputs only, detector not re-run" in result.text()
    assert "IDENTICAL" not in result.text()


def test_a_session_source_detects_with_the_recordings_calibration(recording: Path) -> None:
    from companion.config import Config
    from companion.service.heartbeat import Heartbeats
    from companion.service.vision import build_vision

    said: list[str] = []
    hb = Heartbeats()
    built = build_vision(Config().calibration, hb, said.append, f"session:{recording}")
    assert built is not None
    assert said == ["vision: the recording's calibration (camera, geometry, profile)"]
