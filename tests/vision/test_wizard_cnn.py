"""The wizard CNN: trained on renders, shipped as ONNX, run by cv2.dnn on top-surface ROIs.

Seeds here are below 1000 (the bench and the training use others); the renderer's ground truth
is used for the assertions only.
"""

from __future__ import annotations

import importlib.util
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.rules import Config, setup
from companion.rules.observation import COLOURS
from companion.sim.render import RenderResult, random_setup, render
from companion.sim.scenes import random_game_state
from companion.vision.detector import Detector, DetectorConfig
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import ColourProfile
from companion.vision.profile_setup import build_profile
from companion.vision.stack_cnn import MODEL_PATH as STACK_PATH
from companion.vision.stack_cnn import network_input
from companion.vision.token_cnn import MODEL_PATH as TOKEN_PATH
from companion.vision.wizard_cnn import (
    MAX_PER_COLOUR,
    MODEL_PATH,
    ROI_PX,
    SLABS_MM,
    TopSampler,
    WizardModel,
    choose_counts,
    hand_cues,
    n_channels,
    n_cues,
    top_stacks,
)

M = MAX_PER_COLOUR + 1
NEEDS_TRAIN = pytest.mark.skipif(
    importlib.util.find_spec("onnx") is None or importlib.util.find_spec("torch") is None,
    reason="training the CNN needs PyTorch, the 'train' extra (pip install -e .[train]); "
    "`python3 dev.py test` leaves it out, CI installs it and runs this file",
)


def test_the_shipped_model_is_small_and_gives_a_count_distribution_per_colour() -> None:
    assert MODEL_PATH.is_file()
    assert MODEL_PATH.stat().st_size < 1_000_000
    model = WizardModel()
    x = np.zeros((5, n_channels(), ROI_PX, ROI_PX), np.float32)
    cues = np.zeros((5, n_cues()), np.float32)
    p = model.probabilities(x, cues)
    assert p.shape == (5, len(COLOURS), M) and p.dtype == np.float32
    np.testing.assert_allclose(p.sum(2), 1.0, atol=1e-5)
    assert model.probabilities(x[:0], cues[:0]).shape == (0, len(COLOURS), M)


def test_bad_models_and_inputs_are_refused_loudly(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="no such file"):
        WizardModel(tmp_path / "missing.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a graph")
    with pytest.raises(ValueError, match="ONNX"):
        WizardModel(junk)
    # a readable graph that is not a wizard network (the tower-count network)
    with pytest.raises(ValueError, match="wizard model"):
        WizardModel(STACK_PATH)
    # a network of the same tops that does not take the colour areas' measurements
    with pytest.raises(ValueError, match="colour areas' measurements"):
        WizardModel(TOKEN_PATH)
    cues = np.zeros((2, n_cues()), np.float32)
    with pytest.raises(ValueError, match="expected \\(N, 9, 32, 32\\)"):
        WizardModel().probabilities(np.zeros((2, 3, ROI_PX, ROI_PX), np.float32), cues)
    with pytest.raises(ValueError, match="cues: expected \\(2, "):
        WizardModel().probabilities(np.zeros((2, 9, ROI_PX, ROI_PX), np.float32), cues[:, :5])
    geometry = BoardGeometry.default()
    table = random_setup(np.random.default_rng(5), geometry)
    with pytest.raises(ValueError, match="wizard_method"):
        Detector(
            table.camera,
            geometry,
            ColourProfile({}, 9.0, np.full(3, 255.0), {}),
            config=DetectorConfig(wizard_method="by eye"),
        )


def test_counts_keep_to_the_colours_in_the_game_and_six_on_a_top() -> None:
    p = np.zeros((len(COLOURS), M))
    p[:, 0] = 1.0
    p[COLOURS.index("red")] = [0.02, 0.96, 0.02, 0, 0, 0]
    p[COLOURS.index("orange")] = [0.1, 0.9, 0, 0, 0, 0]
    got, sure = choose_counts(p, ["red", "blue"])
    assert got == {"red": 1}  # orange is not in this game
    assert sure == pytest.approx(0.96)
    got, _ = choose_counts(p)
    assert got == {"red": 1, "orange": 1}
    # seven wizards read: the one whose loss costs least goes (R-WIZ-4)
    p[COLOURS.index("blue")] = [0, 0, 0, 0, 0.3, 0.7]
    p[COLOURS.index("green")] = [0, 0.55, 0.45, 0, 0, 0]
    got, _ = choose_counts(p, ["red", "blue", "green"])
    assert got == {"red": 1, "blue": 4, "green": 1}


def test_the_colour_areas_measurements_keep_to_the_colours_in_the_game() -> None:
    areas = {"red": 1.2, "blue": 0.9, "witch": 0.7}
    got = hand_cues(areas, {"red": 1, "blue": 1}, ["red", "green"], 0.1, 0.02, 0.3, "crest", 40.0)
    assert got.shape == (n_cues(),) and got.dtype == np.float32
    red, blue = COLOURS.index("red"), COLOURS.index("blue")
    # blue is not in this game: its area and count are no evidence; a token's area is none
    assert got[red] == pytest.approx(1.2) and got[blue] == 0.0
    assert got[6 + red] == 1.0 and got[6 + blue] == 0.0
    assert got[12 + COLOURS.index("green")] == 1.0 and got[12 + blue] == 0.0
    assert got[-6:].tolist() == [0, 0, 0, 0, 1, 0]  # a crest roof


@pytest.fixture(scope="module")
def session() -> tuple[Detector, list[RenderResult]]:
    """One seeded table in play, read from its setup frame with the wizard CNN."""
    players = 5
    geometry = BoardGeometry.default()
    colours = list(Config(player_count=players).colours or ())
    seed = 583
    nrng = np.random.default_rng(seed)
    prng = random.Random(seed)
    table = random_setup(nrng, geometry)
    first = render(setup(Config(player_count=players), seed=None), nrng, setup=table, hand=False)
    profile = build_profile(first.frame, table.camera, geometry, colours)
    cnn = Detector(table.camera, geometry, profile, config=DetectorConfig(wizard_method="cnn"))
    cnn.detect(first.frame)
    frames = [
        render(random_game_state(prng, players), nrng, setup=table, hand=False) for _ in range(4)
    ]
    return cnn, frames


def test_the_cnn_reads_rendered_wizards(
    session: tuple[Detector, list[RenderResult]],
) -> None:
    cnn, frames = session
    right = total = with_wizards = 0
    for res in frames:
        got = cnn.detect(res.frame)
        obs = got.reading
        assert obs is not None, got.message
        for space, t in res.observation.spaces.items():
            if t.castle:
                continue
            total += 1
            ok = dict(obs.spaces[space].wizards) == dict(t.wizards)
            right += ok
            with_wizards += ok and sum(t.wizards.values()) >= 2
            # a space read sure is the wizards the renderer put there
            if obs.spaces[space].confidence >= 0.9:
                assert ok, (space, dict(t.wizards), dict(obs.spaces[space].wizards))
    assert total >= 60
    assert right / total >= 0.97, f"{right} of {total} spaces' wizards right"
    assert with_wizards >= 5  # tops with several wizards are read, not only empty ones


def test_top_stacks_are_cut_at_the_top_surface(
    session: tuple[Detector, list[RenderResult]],
) -> None:
    cnn, frames = session
    res = frames[0]
    got = cnn.detect(res.frame)
    assert got.pose is not None
    spaces = list(cnn.geometry.spaces)
    tiers = [res.observation.spaces[s].towers for s in spaces]
    st = top_stacks(res.frame, got.pose, cnn.geometry, spaces, tiers)
    assert st.shape == (len(spaces), len(SLABS_MM), ROI_PX, ROI_PX, 3) and st.dtype == np.uint8
    x = network_input(st, got.white_bgr if got.white_bgr is not None else np.full(3, 230.0))
    assert x.shape == (len(spaces), n_channels(), ROI_PX, ROI_PX)
    with pytest.raises(ValueError, match="tiers"):
        top_stacks(res.frame, got.pose, cnn.geometry, spaces, tiers[:-1])


def test_the_sampler_cuts_what_a_fresh_cut_gives_as_tops_and_the_pose_change(
    session: tuple[Detector, list[RenderResult]],
) -> None:
    # the sample maps are made per top surface on first use and kept for the pose: later
    # frames at other heights and a new pose must read exactly what cutting afresh reads
    cnn, frames = session
    sampler = TopSampler(max_towers=10)
    spaces = list(cnn.geometry.spaces)
    for i, res in enumerate(frames[:3]):
        got = cnn.detect(res.frame)
        assert got.pose is not None and got.white_bgr is not None
        pose = got.pose
        if i == 2:  # the camera moved by 3 mm
            assert pose.tvec is not None
            pose = replace(pose, tvec=np.asarray(pose.tvec, np.float64) + 3.0)
        tiers = [res.observation.spaces[s].towers for s in spaces]
        order = spaces[::-1] if i == 1 else spaces  # another order of the same spaces
        tk = [tiers[spaces.index(s)] for s in order]
        want = network_input(top_stacks(res.frame, pose, cnn.geometry, order, tk), got.white_bgr)
        x = sampler.inputs(res.frame, pose, cnn.geometry, got.white_bgr, order, tk)
        assert np.array_equal(x, want)


@NEEDS_TRAIN
def test_training_runs_end_to_end_and_cv2_dnn_gives_the_training_side_answer(
    tmp_path: Path,
) -> None:
    from companion.sim.train_wizard_cnn import collect, fit_head, logits, softmax, to_onnx, train

    data = collect(1, 1, base=587, log=False)
    assert data.x.shape[1:] == (len(SLABS_MM), ROI_PX, ROI_PX, 3) and len(data.y) >= 10
    assert data.y.shape == (len(data.x), len(COLOURS)) and data.y.sum() >= 4
    net = train(data, np.arange(len(data.y)), epochs=1, batch=8, log=False)
    # the layers after the pooled features fitted again with the convolutions kept
    conv = [p.detach().clone() for p in net.features.parameters()]
    net = fit_head(net, data, np.arange(len(data.y)), epochs=1, batch=8, log=False)
    assert all(np.array_equal(a, b) for a, b in zip(conv, net.features.parameters(), strict=True))
    path = tmp_path / "tiny.onnx"
    to_onnx(net, 1.5, path)
    assert data.cues.shape == (len(data.y), n_cues())
    got = WizardModel(path).probabilities(network_input(data.x, data.white), data.cues)
    want = softmax(logits(net, data, np.arange(len(data.y))), 1.5)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_the_trainer_refuses_a_module_share_outside_0_to_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from companion.sim.train_wizard_cnn import main

    out = tmp_path / "w.onnx"
    cache = tmp_path / "tops.npz"
    assert main(["--module-share", "1.5", "--data", str(cache), "--out", str(out)]) == 2
    assert "--module-share must be within 0..1" in capsys.readouterr().err
    assert not out.exists() and not cache.exists()  # nothing rendered, nothing written


def test_the_trainer_refuses_a_crowd_share_outside_0_to_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from companion.sim.train_wizard_cnn import main

    out = tmp_path / "w.onnx"
    assert main(["--crowd", "-0.1", "--data", str(tmp_path / "t.npz"), "--out", str(out)]) == 2
    assert "--crowd must be within 0..1" in capsys.readouterr().err
    assert not out.exists()


def test_crowded_scenes_gather_wizards_of_one_colour_and_keep_every_wizard() -> None:
    from companion.rules import observe
    from companion.sim.scenes import crowded

    rng = random.Random(41)
    gathered = 0
    for _ in range(12):
        state = random_game_state(rng, rng.randint(2, 6))
        scene = crowded(state, rng)
        assert len(scene.wizards) == len(state.wizards)  # every wizard is somewhere
        assert scene.stacks == state.stacks and scene.castle == state.castle
        for space, seen in observe(scene).spaces.items():
            assert sum(seen.wizards.values()) <= 6, space  # R-WIZ-4
            before = observe(state).spaces[space].wizards
            for colour, n in seen.wizards.items():
                if n > before.get(colour, 0):
                    # only where that colour already stood on the top
                    assert before.get(colour, 0) >= 1, (space, colour)
                    gathered += n >= 2
    assert gathered >= 12  # two or three of one colour on a top, in most scenes
