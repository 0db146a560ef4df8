"""The detector refuses a frame it cannot read well, with a reason a player can act on.

Each degradation is made in the test with OpenCV on a rendered game frame (seeded, seeds below
1000): darkened, a lamp's glare on a space, defocus, the camera shifted after setup. A refused
frame carries no observation (the tracker's game stays as it was) and its message is what the
host page's health line shows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from companion.rules import Config, setup
from companion.rules.observation import Observation, SpaceObservation
from companion.sim.render import random_setup, render
from companion.sim.scenes import random_game_state
from companion.vision.detector import OK, UNSURE, Detector, DetectorConfig
from companion.vision.detector.glare import wash_excess, washed_tops
from companion.vision.detector.heights import _model_heights
from companion.vision.detector.wizards import wizard_margin
from companion.vision.geometry import BoardGeometry
from companion.vision.markers import BoardPose
from companion.vision.profile_setup import build_profile
from companion.vision.quality import (
    FrameQuality,
    QualityLimits,
    glare_message,
    setup_advice,
    space_ranges,
)

PLAYERS = 3


@dataclass
class Table:
    detector: Detector
    geometry: BoardGeometry
    setup_frame: np.ndarray
    frame: np.ndarray
    truth: Observation


@pytest.fixture(scope="module")
def table() -> Table:
    geometry = BoardGeometry.default()
    colours = list(Config(player_count=PLAYERS).colours or ())
    nrng = np.random.default_rng(404)
    prng = random.Random(404)
    t = random_setup(nrng, geometry, tilt_range=(5.0, 15.0))
    first = render(setup(Config(player_count=PLAYERS), seed=None), nrng, setup=t, hand=False)
    profile = build_profile(first.frame, t.camera, geometry, colours)
    game = render(random_game_state(prng, PLAYERS), nrng, setup=t, hand=False)
    frame = game.frame
    # refusals for low confidence are not what these tests look at
    det = Detector(t.camera, geometry, profile, config=DetectorConfig(min_confidence=0.0))
    assert det.detect(first.frame).status == OK  # the setup frame sets the references
    return Table(det, geometry, first.frame, frame, game.observation)


def _fresh(t: Table, **config: Any) -> Detector:
    """A new detector on the table's setup (its config changed by ``config``)."""
    d = t.detector
    det = Detector(d.camera, d.geometry, d.profile, config=replace(d.config, **config))
    assert det.detect(t.setup_frame).status == OK
    return det


def _centre_px(pose: BoardPose | None, t: Table, space: int) -> tuple[float, float]:
    """Where ``space``'s centre lies in a frame of the table with ``pose`` (px)."""
    assert pose is not None
    x, y = pose.board_to_image(np.asarray([t.geometry.space_centre(space)]))[0]
    return float(x), float(y)


def test_the_undegraded_frame_is_read(table: Table) -> None:
    det = _fresh(table).detect(table.frame)
    assert det.status == OK and det.observation is not None
    assert det.quality is not None and det.quality.edge_px is not None


def test_a_dark_frame_is_refused_as_too_dark(table: Table) -> None:
    dark = (table.frame.astype(np.float32) * 0.12).astype(np.uint8)
    det = _fresh(table).detect(dark)
    assert det.observation is None
    assert "too dark" in det.message


def test_glare_on_a_space_withholds_that_space_and_names_it(table: Table) -> None:
    det = _fresh(table)
    pose = det.detect(table.frame).pose
    assert pose is not None
    space = 12
    x, y = pose.board_to_image(np.asarray([table.geometry.space_centre(space)]))[0]
    glare = table.frame.copy()
    cv2.circle(glare, (int(x), int(y)), 40, (255, 255, 255), -1)
    got = det.detect(glare)
    assert got.status == OK and got.observation is not None
    # the clipped space is unknown, not "no wizard": left out, named, never read as empty
    assert space not in got.observation.spaces
    assert got.withheld[space] == f"glare on space {space}"
    assert f"glare on space {space}" in got.message
    assert got.reading is not None and space in got.reading.spaces
    assert len(got.observation.spaces) >= len(got.reading.spaces) // 2


def test_glare_on_a_space_is_refused_and_names_the_space_without_withholding(
    table: Table,
) -> None:
    det = _fresh(table, withhold_below=0.0)
    space = 12
    x, y = _centre_px(det.detect(table.frame).pose, table, space)
    glare = table.frame.copy()
    cv2.circle(glare, (int(x), int(y)), 40, (255, 255, 255), -1)
    got = det.detect(glare)
    assert got.status == UNSURE and got.observation is None
    assert got.message.startswith("glare on space")
    assert str(space) in got.message
    # the clipped space is unknown, not "no wizard": it is named, never read as empty
    assert got.quality is not None and got.quality.glare and space in got.quality.glare


def _lamp(frame: np.ndarray, xy: tuple[float, float], sigma: float, peak: float) -> np.ndarray:
    """A warm lamp's reflection added in linear light around ``xy`` (a Gaussian spot of
    ``sigma`` px), kept below the clipping level: the colours pale, no pixel clips."""
    lin = (frame.astype(np.float32) / 255.0) ** 2.2
    h, w = frame.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    spot = peak * np.exp(-0.5 * ((xx - xy[0]) ** 2 + (yy - xy[1]) ** 2) / sigma**2)
    lin += spot[..., None] * np.array([0.75, 0.9, 1.0], np.float32)
    out = np.clip(lin, 0.0, 1.0) ** (1 / 2.2) * 255.0
    return np.minimum(out, QualityLimits().clip_level - 10).astype(np.uint8)


def _wizard_spaces(table: Table) -> list[int]:
    return sorted(s for s, o in table.truth.spaces.items() if o.wizards)


def test_a_lamp_that_pales_a_wizard_without_clipping_withholds_its_space_as_glare(
    table: Table,
) -> None:
    det = _fresh(table)
    clean = det.detect(table.frame)
    assert clean.status == OK and clean.pose is not None
    assert all(d.washed == 0 for d in clean.details.values())  # no lamp: nothing washed
    spaces = _wizard_spaces(table)
    assert spaces
    for space in spaces:
        lit = _lamp(table.frame, _centre_px(clean.pose, table, space), 20.0, 1.0)
        got = det.detect(lit)
        assert got.status == OK and got.observation is not None
        assert got.details[space].clipped == 0  # the check for clipped pixels cannot see it
        # the pale wizard is unknown, never "no wizard": the space is left out as glare
        assert space not in got.observation.spaces
        assert got.withheld[space] == f"glare on space {space}"
        assert got.quality is not None and got.quality.glare and space in got.quality.glare


def test_a_lamp_that_pales_a_wizard_is_refused_as_glare_without_withholding(
    table: Table,
) -> None:
    det = _fresh(table, withhold_below=0.0)
    space = _wizard_spaces(table)[0]
    xy = _centre_px(det.detect(table.frame).pose, table, space)
    got = det.detect(_lamp(table.frame, xy, 20.0, 1.0))
    assert got.status == UNSURE and got.observation is None
    assert got.message.startswith("glare on space") and str(space) in got.message


def test_a_top_lighter_than_its_kind_is_washed_out() -> None:
    white = np.array([200.0, 200.0, 200.0])
    tops = ["crest", "plain", "crest", "plain", "crest", "crest-space", "plain-space", "web"]
    hulls = [(np.zeros(20, np.int32), np.zeros(20, np.int32), 1.0, 1.0)] * len(tops)
    # the fourth roof paled by a lamp, the fifth in a taller neighbour's shadow
    grey = [150, 150, 152, 190, 120, 120, 120, 250]
    pixels = np.concatenate([np.full((20, 3), g, np.uint8) for g in grey])
    out = wash_excess(pixels, hulls, tops, white)
    limit = QualityLimits().wash_excess
    assert out[3] >= limit + 0.05
    assert max(out[[0, 1, 2, 4]]) < 0.01
    # two track spaces are too few to say what a track space looks like; a web is not read
    assert list(out[5:]) == [0.0, 0.0, 0.0]
    # only the pixels on the top surface count: a white table cloth seen past a roof is not
    # a lamp's reflection on it
    keep = np.ones(len(pixels), bool)
    keep[60:80] = False
    assert wash_excess(pixels, hulls, tops, white, keep)[3] == 0.0
    # the raven token's white disc is lighter than any roof: its top is not compared
    read = {
        s: SpaceObservation(towers=1 if t in ("crest", "plain") else 0, top=t, raven=s == 3)
        for s, t in enumerate(tops)
    }
    assert washed_tops(pixels, hulls, tops, white, read, QualityLimits()) == {}
    read[3] = replace(read[3], raven=False)
    assert list(washed_tops(pixels, hulls, tops, white, read, QualityLimits())) == [3]
    with pytest.raises(ValueError):
        wash_excess(pixels[:-1], hulls, tops, white)
    with pytest.raises(ValueError):
        wash_excess(pixels, hulls[:-1], tops, white)


def test_an_over_exposed_frame_is_refused_as_too_bright_not_as_glare(table: Table) -> None:
    # the exposure went up two stops after setup: the board's light colours clip everywhere
    bright = np.clip(table.frame.astype(np.float32) * 4.0, 0, 255).astype(np.uint8)
    got = _fresh(table).detect(bright)
    assert got.observation is None
    assert got.message == "too bright: dim the light over the table or lower the camera's exposure"
    # one lamp's reflection on a frame exposed as at setup stays glare (test above): the two
    # need different fixes
    assert got.quality is not None and got.quality.white_grey is not None
    assert got.quality.white_grey >= QualityLimits().bright_white


def test_a_blurred_frame_is_refused_as_out_of_focus(table: Table) -> None:
    soft = cv2.GaussianBlur(table.frame, (0, 0), 2.5)
    det = _fresh(table).detect(soft)
    assert det.observation is None
    assert "out of focus: refocus the lens" in det.message


def test_a_moved_camera_is_rechecked_then_read_from_its_new_place(table: Table) -> None:
    det = _fresh(table)
    h, w = table.frame.shape[:2]
    m = np.float32([[1, 0, 12], [0, 1, 6]])
    moved = cv2.warpAffine(table.frame, m, (w, h), borderMode=cv2.BORDER_REPLICATE)
    first = det.detect(moved)
    assert first.status == UNSURE and first.observation is None
    assert first.message == "camera moved: re-checking the board"
    # the next frame at the same place shows the camera at rest there: the board is read again
    second = det.detect(moved)
    assert second.status == OK and second.observation is not None
    # and from there on without a re-check
    assert det.detect(moved).status == OK


def test_spaces_forced_by_the_tower_total_have_low_confidence() -> None:
    # three spaces, 3 towers counted at setup; the camera sees 1, 1, 0 (the third space is
    # 0.6 sure of no tower): the total forces the third space to 1 tower
    prob = np.zeros((3, 11), np.float32)
    prob[0, 1] = prob[1, 1] = 0.99
    prob[0, 0] = prob[1, 0] = 0.01
    prob[2, 0], prob[2, 1] = 0.6, 0.4
    rd = SimpleNamespace(
        height=SimpleNamespace(probabilities=lambda feats: prob),
        stack_cnn=None,
        profile=SimpleNamespace(meta={"towers": 3}),
        config=DetectorConfig(),
    )
    got = _model_heights(rd, None, np.zeros((3, 1), np.float32), {}, np.zeros(3, bool))  # type: ignore[arg-type]
    assert got is not None
    towers, conf, forced, rival = got
    assert towers.tolist() == [1, 1, 1]
    assert forced.tolist() == [False, False, True]
    assert conf[2] <= 0.4 < conf[0]
    # the forced space's other count is the one the camera saw (for the reason a player reads)
    assert rival.tolist() == [0, 0, 0]


def test_the_messages_a_player_reads() -> None:
    assert space_ranges([5, 3, 4, 9]) == "3–5, 9"
    assert glare_message([3, 4, 5]).startswith("glare on spaces 3–5")
    advice = setup_advice(FrameQuality(white_grey=40.0, edge_px=3.8, marker_cell_px=9.0))
    text = " ".join(advice)
    assert "light" in text and "refocus" in text and "print larger markers" in text
    assert setup_advice(FrameQuality(white_grey=200.0, edge_px=1.5, marker_cell_px=20.0)) == []
    # a board at the top of the sensor's range: the light or exposure, not a lamp's reflection
    bright = setup_advice(FrameQuality(white_grey=250.0, edge_px=1.5, marker_cell_px=20.0))
    assert len(bright) == 1 and "lower the camera's exposure" in bright[0]
    clipped = FrameQuality(white_grey=250.0, edge_px=1.5, marker_cell_px=20.0, glare={3: 0.5})
    assert not any("move the lamp" in a for a in setup_advice(clipped))
    lamp = FrameQuality(white_grey=180.0, edge_px=1.5, marker_cell_px=20.0, glare={3: 0.5})
    assert any("move the lamp" in a for a in setup_advice(lamp))


def test_the_setup_check_tells_the_host_what_to_fix(table: Table) -> None:
    from companion.vision.setupcheck import setup_check

    soft = cv2.GaussianBlur(table.setup_frame, (0, 0), 2.5)
    det = Detector(table.detector.camera, table.geometry, table.detector.profile)
    check = setup_check(soft, det.detect(soft), table.geometry, det.limits)
    assert any("refocus" in a for a in check.advice), check.advice
    assert check.figures["marker_cell_px"] is not None
    png = cv2.imdecode(np.frombuffer(check.png, np.uint8), cv2.IMREAD_COLOR)
    assert png is not None and png.shape[1] == 1024
    sharp = Detector(table.detector.camera, table.geometry, table.detector.profile)
    good = setup_check(table.setup_frame, sharp.detect(table.setup_frame), table.geometry)
    assert not any("refocus" in a for a in good.advice)


def test_a_refused_frame_changes_no_game_and_its_reason_is_on_the_health_line(
    table: Table,
) -> None:
    from companion.service.heartbeat import Heartbeats
    from companion.service.pipeline import TakenFrame, VisionWorker
    from companion.vision.stability import StabilityGate

    # without withholding: glare refuses the whole board
    det = _fresh(table, withhold_below=0.0)
    x, y = _centre_px(det.detect(table.frame).pose, table, 5)
    glare = table.frame.copy()
    cv2.circle(glare, (int(x), int(y)), 40, (255, 255, 255), -1)
    posted: list[object] = []
    hb = Heartbeats(stale_s=60.0)
    worker = VisionWorker(None, det, StabilityGate(), posted.append, hb)  # type: ignore[arg-type]
    # a still board for 3 s: reported once; then the lamp's glare for 3 s: nothing new
    for i in range(40):
        image = table.frame if i < 20 else glare
        worker.process(TakenFrame(image, i, i * 0.15, i * 0.15))
    assert len(posted) == 1
    detail = hb.report()["parts"]["detector"]["detail"]
    assert detail.startswith("unsure: glare on space") and "5" in detail, detail


def test_dim_still_frames_are_averaged_and_a_changed_board_is_not(table: Table) -> None:
    rng = np.random.default_rng(5)

    def dim(f: np.ndarray) -> np.ndarray:
        d = f.astype(np.float32) * 0.55
        return np.clip(d + rng.normal(0.0, 6.0, d.shape), 0, 255).astype(np.uint8)

    det = _fresh(table)
    still = [dim(table.setup_frame) for _ in range(4)]
    reads = [det.detect(f) for f in still]
    assert all(r.quality is not None and r.quality.white_grey < 100 for r in reads)
    # the average of the still frames is less noisy than any one of them
    avg = det._avg
    assert avg is not None and avg[3] == 4
    clean = table.setup_frame.astype(np.float32) * 0.55
    assert np.abs(avg[1] - clean).mean() < 0.7 * np.abs(still[-1] - clean).mean()
    # a new board is read from its own frame, never mixed with the last one
    game = dim(table.frame)
    got = det.detect(game)
    fresh = _fresh(table)
    want = fresh.detect(game)
    mine = got.observation or got.unsure_reading
    theirs = want.observation or want.unsure_reading
    assert mine is not None and theirs is not None
    assert mine.spaces == theirs.spaces


def test_a_refused_frame_now_and_then_does_not_hold_back_a_still_board(table: Table) -> None:
    from companion.vision.stability import StabilityGate

    det = _fresh(table).detect(table.frame)
    assert det.observation is not None
    gate = StabilityGate()
    emitted = []
    for i in range(30):
        # every third frame of the still board refused (its view is there, no reading)
        reading = None if i % 3 == 2 else det.observation
        d = gate.update(i * 0.1, det.board_view, reading, det.white_bgr, det.frame_view)
        if d.observation is not None:
            emitted.append(i)
    assert len(emitted) == 1
    # as soon as without refusals
    clean = StabilityGate()
    first = next(
        i
        for i in range(30)
        if clean.update(
            i * 0.1, det.board_view, det.observation, det.white_bgr, det.frame_view
        ).observation
        is not None
    )
    assert emitted[0] <= first + 1


def test_clipped_pixels_leave_the_wizard_count_unsure() -> None:
    # areas in wizards: red clearly 0, blue clearly 1
    assert wizard_margin({"red": 0.0, "blue": 1.0}, 0.45) == pytest.approx(0.45)
    # clipped pixels worth 0.3 of a wizard could hide a red wizard's part or a second blue
    assert wizard_margin({"red": 0.0, "blue": 1.0}, 0.45, unknown=0.3) == pytest.approx(0.15)
    # worth half a wizard: a whole wizard may be under them; never "sure of no wizard"
    assert wizard_margin({"red": 0.0, "blue": 1.0}, 0.45, unknown=0.5) == 0.0


def test_a_wizard_of_the_crest_colour_on_the_crest_is_no_surer_than_its_leak() -> None:
    # 1.7 areas of yellow on a yellow crest mark may be one wizard and the mark's colour
    assert wizard_margin({"yellow": 1.7}, 0.45) > 0.2
    assert wizard_margin({"yellow": 1.7}, 0.45, inflated={"yellow": 0.5}) == 0.0
    # the same area of another colour stays as sure
    assert wizard_margin({"red": 1.7}, 0.45, inflated={"yellow": 0.5}) > 0.2


def test_the_castle_space_is_never_forced_by_the_tower_total() -> None:
    # the castle stands on one tower on space 0; the model alone would see 2 there
    prob = np.zeros((3, 11), np.float32)
    prob[0, 2] = 0.9
    prob[0, 1] = 0.1
    prob[1, 1] = prob[2, 1] = 0.99
    prob[1, 0] = prob[2, 0] = 0.01
    rd = SimpleNamespace(
        height=SimpleNamespace(probabilities=lambda feats: prob),
        stack_cnn=None,
        profile=SimpleNamespace(meta={"towers": 3}),
        config=DetectorConfig(),
    )
    got = _model_heights(rd, None, np.zeros((3, 1), np.float32), {0: 1}, np.zeros(3, bool))  # type: ignore[arg-type]
    assert got is not None
    towers, _conf, forced, _rival = got
    assert towers.tolist()[1:] == [1, 1]
    assert forced.tolist() == [False, False, False]


def test_a_board_with_a_space_below_the_floor_is_refused_and_kept_for_the_host(
    table: Table,
) -> None:
    d = table.detector
    floor = DetectorConfig(min_confidence=1.01, withhold_below=0.0)
    det = Detector(d.camera, d.geometry, d.profile, config=floor)
    got = det.detect(table.frame)
    assert got.status == UNSURE and got.observation is None
    assert got.message.startswith("unsure of spaces ") and "re-checking the board" in got.message
    assert got.unsure_reading is not None and len(got.unsure_reading.spaces) == 16
