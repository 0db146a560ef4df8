"""Colour profile: white balance from the frame, nearest prototype with reject, JSON round trip,
and the real photo of sweets (``realdata/opencv-smarties``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.profile import (
    REJECT,
    ColourClass,
    ColourProfile,
    ProfileError,
    default_profile,
    features,
    separation,
    white_from_markers,
    white_from_pixels,
)

# Our own labels (made by looking at the photo; upstream has none): centre (x, y) px -> colour.
SMARTIES = [
    ((377, 81), "blue"),
    ((269, 117), "green"),
    ((387, 170), "green"),
    ((205, 211), "orange"),
    ((288, 214), "red"),
    ((33, 228), "red"),
    ((347, 238), "blue"),
    ((98, 258), "red"),
    ((152, 271), "brown"),
    ((219, 306), "red"),
    ((294, 320), "blue"),
    ((134, 327), "orange"),
]
# Lighting the photo did not have: per-channel gains (B, G, R) of a warm and a cold lamp, and
# dimmer light. Brighter than the photo cannot be simulated: its white background is at 255 already.
LIGHTS = {
    "as shot": (1.0, 1.0, 1.0),
    "2700 K": (0.45, 0.75, 1.0),
    "6500 K": (1.0, 0.95, 0.85),
}
LEVELS = (0.3, 0.6, 1.0)


def disc(img: np.ndarray, x: int, y: int, r: int = 11) -> np.ndarray:
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.circle(mask, (x, y), r, 1, -1)
    return img[mask > 0]


def blob_label(profile: ColourProfile, px: np.ndarray, white: np.ndarray) -> str:
    """The label of an object: the majority of its pixels' labels (rejects ignored)."""
    votes = Counter(lab for lab in profile.label(px, white) if lab != REJECT)
    return votes.most_common(1)[0][0] if votes else REJECT


@pytest.fixture(scope="module")
def smarties(realdata: Path) -> np.ndarray:
    img = cv2.imread(str(realdata / "opencv-smarties" / "smarties.png"))
    assert img is not None and img.shape == (356, 413, 3)
    return img


@pytest.fixture(scope="module")
def smarties_profile(smarties: np.ndarray) -> ColourProfile:
    """Learn one prototype per colour from the FIRST labelled sweet of that colour only."""
    white = white_from_pixels(smarties.reshape(-1, 3))
    seen: dict[str, ColourClass] = {}
    for (x, y), colour in SMARTIES:
        if colour not in seen:
            seen[colour] = ColourClass.fit(colour, "wizard", features(disc(smarties, x, y), white))
    return ColourProfile(seen)


class TestSmarties:
    @pytest.mark.realdata
    def test_hard_pairs_are_separated(self, smarties_profile: ColourProfile) -> None:
        assert separation(smarties_profile, "red", "orange") > 4.0
        assert separation(smarties_profile, "blue", "green") > 8.0

    @pytest.mark.realdata
    @pytest.mark.parametrize("light", list(LIGHTS))
    @pytest.mark.parametrize("level", LEVELS)
    def test_every_sweet_keeps_its_colour_under_other_light(
        self, smarties: np.ndarray, smarties_profile: ColourProfile, light: str, level: float
    ) -> None:
        gain = np.array(LIGHTS[light], np.float32) * level
        img = np.clip(smarties.astype(np.float32) * gain, 0, 255).astype(np.uint8)
        white = white_from_pixels(img.reshape(-1, 3))  # white paper = grey-world reference
        got = {xy: blob_label(smarties_profile, disc(img, *xy), white) for xy, _ in SMARTIES}
        assert got == {xy: colour for xy, colour in SMARTIES}

    @pytest.mark.realdata
    def test_red_and_orange_pixels_rarely_swap(
        self, smarties: np.ndarray, smarties_profile: ColourProfile
    ) -> None:
        white = white_from_pixels(smarties.reshape(-1, 3))
        swapped = total = 0
        for xy, colour in SMARTIES:
            if colour not in ("red", "orange", "blue", "green"):
                continue
            other = {"red": "orange", "orange": "red", "blue": "green", "green": "blue"}[colour]
            labels = smarties_profile.label(disc(smarties, *xy), white)
            swapped += sum(lab == other for lab in labels)
            total += len(labels)
        assert swapped / total < 0.01

    @pytest.mark.realdata
    def test_white_background_is_no_sweet(
        self, smarties: np.ndarray, smarties_profile: ColourProfile
    ) -> None:
        white = white_from_pixels(smarties.reshape(-1, 3))
        assert set(smarties_profile.label(smarties[5:40, 5:40].reshape(-1, 3), white)) == {REJECT}


class TestWhiteBalance:
    def test_features_do_not_change_with_lamp_colour_or_brightness(self) -> None:
        rng = np.random.default_rng(3)
        paint = rng.uniform(0.05, 0.9, size=(50, 3))
        paper = np.array([0.92, 0.92, 0.92])
        ref = None
        for gain in ((0.45, 0.75, 1.0), (1.0, 0.95, 0.85), (0.3, 0.3, 0.3), (1.0, 1.0, 1.0)):
            lamp = np.array(gain) * 255
            f = features(paint * lamp, paper * lamp)
            if ref is None:
                ref = f
            np.testing.assert_allclose(f, ref, atol=1e-4)

    def test_white_from_markers_reads_the_white_cells(self) -> None:
        marker = cv2.aruco.generateImageMarker(
            cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), 2, 120
        )
        frame = np.full((200, 200, 3), (40, 90, 60), np.uint8)
        tint = np.array([150, 200, 230], np.float32) / 255.0  # a warm lamp on white paper
        frame[40:160, 40:160] = (marker[..., None].astype(np.float32) * tint).astype(np.uint8)
        quad = np.array([[40, 40], [159, 40], [159, 159], [40, 159]], np.float64)
        white = white_from_markers(frame, {2: quad})
        assert white is not None
        np.testing.assert_allclose(white, [150, 200, 230], atol=2)

    def test_no_marker_pixels_gives_none(self) -> None:
        frame = np.zeros((50, 50, 3), np.uint8)
        assert (
            white_from_markers(frame, [np.array([[-30, -30], [-20, -30], [-20, -20], [-30, -20]])])
            is None
        )


class TestProfileFile:
    def test_round_trip(self, tmp_path: Path) -> None:
        p = default_profile()
        p.save(tmp_path / "p.json")
        q = ColourProfile.load(tmp_path / "p.json")
        assert q.names == p.names
        for n in p.names:
            np.testing.assert_allclose(q.classes[n].mean, p.classes[n].mean, atol=1e-6)
        px = np.array([[30, 60, 200], [20, 200, 220], [150, 60, 20]], np.uint8)
        white = np.array([250.0, 250.0, 250.0])
        assert q.label(px, white) == p.label(px, white)

    @pytest.mark.parametrize(
        ("patch", "field"),
        [
            ({"format": "x"}, "format"),
            ({"classes": {}}, "classes"),
            (
                {
                    "classes": {
                        "blue": {"group": "hat", "mean": [0, 0, 0], "cov": np.eye(3).tolist()}
                    }
                },
                "group",
            ),
            (
                {
                    "classes": {
                        "blue": {"group": "wizard", "mean": [0, 0], "cov": np.eye(3).tolist()}
                    }
                },
                "mean",
            ),
            (
                {
                    "classes": {
                        "blue": {
                            "group": "wizard",
                            "mean": [0, 0, 0],
                            "cov": [[1, 2, 0], [0, 1, 0], [0, 0, 1]],
                        }
                    }
                },
                "cov",
            ),
            ({"reject_d2": -1}, "reject_d2"),
        ],
    )
    def test_malformed_files_name_the_field(self, patch: dict, field: str) -> None:
        data = default_profile().to_json()
        data.update(patch)
        with pytest.raises(ProfileError, match=field):
            ColourProfile.from_json(data)

    def test_unreadable_file(self, tmp_path: Path) -> None:
        (tmp_path / "bad.json").write_text("{not json")
        with pytest.raises(ProfileError, match="not JSON"):
            ColourProfile.load(tmp_path / "bad.json")
        with pytest.raises(ProfileError, match="cannot read"):
            ColourProfile.load(tmp_path / "missing.json")
        assert json.loads(json.dumps(default_profile().to_json()))["version"] == 1


class TestCalibrateProfileCommand:
    def test_profile_from_a_rendered_setup_photo(self, tmp_path: Path) -> None:
        from companion.rules import Config, setup
        from companion.sim.render import random_setup, render, write_camera_file
        from companion.vision.geometry import BoardGeometry
        from companion.vision.profile_setup import main

        rng = np.random.default_rng(301)
        table = random_setup(rng, BoardGeometry.default(), tilt_range=(5.0, 15.0))
        shot = render(setup(Config(player_count=4), seed=None), rng, setup=table, hand=False)
        cv2.imwrite(str(tmp_path / "setup.png"), shot.frame)
        write_camera_file(tmp_path / "camera.yml", table.camera)
        out = tmp_path / "profile.json"
        args = ["--frame", str(tmp_path / "setup.png"), "--camera", str(tmp_path / "camera.yml")]
        assert main([*args, "--players", "4", "--out", str(out)]) == 0
        profile = ColourProfile.load(out)
        assert {"blue", "yellow", "red", "green", "roof-crest", "roof-plain", "castle"} <= set(
            profile.names
        )
        assert "orange" not in profile.names  # 4 players play blue, yellow, red, green (R-COMP-2)
        assert separation(profile, "red", "yellow") > 3.0

    def test_unreadable_photo_and_bad_arguments(self, tmp_path: Path) -> None:
        from companion.sim.render import write_camera_file
        from companion.vision.profile_setup import main

        write_camera_file(tmp_path / "camera.yml")
        cam = str(tmp_path / "camera.yml")
        missing = str(tmp_path / "missing.png")
        assert main(["--frame", missing, "--camera", cam, "--players", "3"]) == 1
        assert main(["--frame", missing, "--camera", cam, "--players", "9"]) == 2
        blank = tmp_path / "blank.png"
        cv2.imwrite(str(blank), np.zeros((864, 1536, 3), np.uint8))
        out = str(tmp_path / "p.json")
        assert main(["--frame", str(blank), "--camera", cam, "--players", "3", "--out", out]) == 1
        assert not (tmp_path / "p.json").exists()  # nothing half-written


class TestExpansionSetup:
    def test_the_expansion_setup_teaches_the_magic_roof_inserts_and_witch(self) -> None:
        """With all five modules the towers, inserts and tokens stand elsewhere than in the base
        setup: the profile samples them where they stand, and the detector then reads the
        untouched magic tower as a bare magic roof (its printed star is no wizard), no wizard on
        the inserts (a fountain read as six blue wizards) and the witch where she stands."""
        from companion.rules import Config, dump_state, observe, setup
        from companion.sim.render import random_setup, render
        from companion.vision.detector import Detector
        from companion.vision.geometry import BoardGeometry
        from companion.vision.profile_setup import build_profile

        modules = frozenset({"fountain", "web", "witch", "raven", "magic_tower"})
        state = setup(Config(player_count=4, modules=modules), seed=None)
        truth = observe(state)
        geometry = BoardGeometry.default().with_track(dump_state(state)["track"])
        rng = np.random.default_rng(304)
        table = random_setup(rng, geometry, tilt_range=(15.0, 25.0))
        frame = render(state, rng, setup=table, hand=False).frame
        colours = list(state.table.colours)
        profile = build_profile(frame, table.camera, geometry, colours, expected=truth)
        learnt = {"roof-magic", "roof-magic-star", "track-fountain", "track-web", "witch"}
        assert learnt <= set(profile.names)
        with pytest.raises(ProfileError, match="not on the board"):
            build_profile(frame, table.camera, BoardGeometry.default(), colours, expected=truth)
        obs = Detector(table.camera, geometry, profile).detect(frame).reading
        assert obs is not None
        # (the stack-height model never saw an insert: the web's rings can read as a roof, so
        # the inserts are checked for wizards and tokens only)
        for n, t in truth.spaces.items():
            o = obs.spaces[n]
            if t.top == "magic" or t.witch:
                assert (o.towers, o.top, dict(o.wizards), o.witch) == (
                    t.towers,
                    t.top,
                    dict(t.wizards),
                    t.witch,
                ), n
            if t.top in ("fountain", "web"):
                assert (dict(o.wizards), o.witch) == ({}, False), n


class TestWizardSize:
    def test_one_wizard_counts_as_one_whatever_size_the_meeples_look(self) -> None:
        """A set whose meeples look 15 % larger (or smaller) than the geometry's: the setup frame
        shows known wizards on known roofs, the profile measures how large one looks, and every
        lone wizard of a game frame is then read as one (with the projected size alone two
        lone wizards read as two each)."""
        import dataclasses

        from companion.rules import Config, dump_state, setup
        from companion.sim.render import random_setup, render
        from companion.vision.detector import Detector
        from companion.vision.geometry import BoardGeometry
        from companion.vision.profile_setup import build_profile

        geometry = BoardGeometry.default()
        start = setup(Config(player_count=6), seed=None)
        game = dump_state(start)
        stacks = {int(k): v for k, v in game["stacks"].items()}
        for i, w in enumerate(sorted(game["wizards"])):
            space = 2 + i
            game["wizards"][w] = (
                {"space": space, "tier": len(stacks.get(space, []))} if space <= 16 else "castle"
            )
        gains = {}
        for scale in (0.85, 1.15):
            rng = np.random.default_rng(305)
            table = random_setup(rng, geometry, tilt_range=(10.0, 20.0))
            look = dataclasses.replace(table.appearance, wizard_scale=scale)
            table = dataclasses.replace(table, appearance=look, _cache={})
            first = render(start, rng, setup=table, hand=False)
            profile = build_profile(first.frame, table.camera, geometry, list(start.table.colours))
            gains[scale] = profile.meta["wizard_area"]
            frame = render(game, rng, setup=table, hand=False)
            obs = Detector(table.camera, geometry, profile).detect(frame.frame).reading
            assert obs is not None
            for n, t in frame.observation.spaces.items():
                assert dict(obs.spaces[n].wizards) == dict(t.wizards), (scale, n)
        # the measured area follows the meeples' size (area ratio (1.15 / 0.85)^2 = 1.83)
        assert gains[1.15] / gains[0.85] > 1.5


class TestNoDefaultColours:
    """The setup frame is a labelled example of this table: the profile fits this set's
    colours from it, the defaults only name the colour groups."""

    @pytest.mark.parametrize(("seed", "players", "hue"), [(201, 3, -10), (202, 6, 10)])
    def test_a_set_whose_colours_are_far_from_the_defaults_is_learnt(
        self, seed: int, players: int, hue: int
    ) -> None:
        from companion.rules import Config, observe, setup
        from companion.sim.render import random_setup, render
        from companion.vision.detector import Detector, DetectorConfig
        from companion.vision.geometry import BoardGeometry
        from companion.vision.profile_setup import build_profile

        g = BoardGeometry.default()
        rng = np.random.default_rng(seed)
        table = random_setup(rng, g, tilt_range=(5.0, 20.0))
        state = setup(Config(player_count=players), seed=None)
        frame = render(state, rng, setup=table, hand=False).frame
        # every colour turned by 20 degrees of hue (other paint, another lamp); the markers
        # stay black and white. Fixed default colours found too few wizard pixels here.
        hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + hue) % 180).astype(np.uint8)
        shifted = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
        colours = list(Config(player_count=players).colours or ())
        profile = build_profile(shifted, table.camera, g, colours)
        # the colour areas read with the profile fitted on this set
        det = Detector(
            table.camera,
            g,
            profile,
            config=DetectorConfig(min_confidence=0.0, wizard_method="hand"),
        )
        found = det.detect(shifted)
        obs = found.reading
        assert obs is not None, found.message
        truth = observe(state)
        assert {s: dict(o.wizards) for s, o in obs.spaces.items()} == {
            s: dict(o.wizards) for s, o in truth.spaces.items()
        }
        # the wizard network knows the colours it was trained on, not this set's: where it
        # and the colour areas disagree the space is withheld, never emitted wrong
        det = Detector(table.camera, g, profile)
        found = det.detect(shifted)
        assert found.observation is not None, found.message
        for s, o in found.observation.spaces.items():
            assert dict(o.wizards) == dict(truth.spaces[s].wizards), s


class TestSeveralSetupFrames:
    def test_still_setup_frames_are_averaged_and_mixed_sizes_refused(self) -> None:
        from companion.vision.profile import ProfileError
        from companion.vision.profile_setup import mean_frame

        rng = np.random.default_rng(3)
        clean = np.full((40, 60, 3), 100, np.uint8)
        noisy = [
            np.clip(clean + rng.normal(0, 8, clean.shape), 0, 255).astype(np.uint8)
            for _ in range(8)
        ]
        avg = mean_frame(noisy)
        assert avg.shape == clean.shape and avg.dtype == np.uint8
        err_one = np.abs(noisy[0].astype(float) - 100).mean()
        assert np.abs(avg.astype(float) - 100).mean() < 0.5 * err_one
        with pytest.raises(ProfileError):
            mean_frame([clean, clean[:20]])
        with pytest.raises(ProfileError):
            mean_frame([])
