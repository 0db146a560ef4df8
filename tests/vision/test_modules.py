"""The detector with the expansion's pieces: the untouched setup of all five modules (inserts,
magic tower, witch and raven tokens on one space) read right on seeded renders, the web insert
never read as a tower, one witch and one raven at most."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from companion.rules import Config, dump_state, observe, setup
from companion.rules.observation import Observation, SpaceObservation
from companion.vision.detector import Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile import build_profile
from companion.vision.render import random_setup, render

ALL = frozenset({"fountain", "web", "witch", "raven", "magic_tower"})


def fields(s: SpaceObservation) -> tuple[Any, ...]:
    return (s.towers, s.top, dict(s.wizards), s.castle, s.witch, s.raven)


def read_setup(
    seed: int, players: int, modules: frozenset[str], tilt: tuple[float, float]
) -> tuple[Observation, Observation, Detector, np.ndarray]:
    """(truth, reading, detector, frame) of a rendered untouched setup position."""
    state = setup(Config(player_count=players, modules=modules), seed)
    truth = observe(state)
    geometry = BoardGeometry.default().with_track(dump_state(state)["track"])
    rng = np.random.default_rng(seed)
    table = random_setup(rng, geometry, tilt_range=tilt)
    frame = render(state, rng, setup=table, hand=False).frame
    profile = build_profile(
        frame, table.camera, geometry, list(state.table.colours), expected=truth
    )
    detector = Detector(table.camera, geometry, profile)
    found = detector.detect(frame)
    assert found.ok and found.observation is not None, found.message
    return truth, found.observation, detector, frame


class TestModulesSetup:
    @pytest.mark.parametrize(
        ("seed", "players", "tilt"),
        [(5, 2, (0.0, 10.0)), (7, 4, (10.0, 20.0)), (8, 5, (20.0, 35.0))],
    )
    def test_every_piece_of_the_all_modules_setup_is_read_right(
        self, seed: int, players: int, tilt: tuple[float, float]
    ) -> None:
        """Magic tower, fountain, web, and the witch and raven tokens side by side on the
        space after the last tower: every space as observe() says (towers, top, wizards,
        castle, witch, raven)."""
        truth, obs, _, _ = read_setup(seed, players, ALL, tilt)
        assert any(t.witch and t.raven for t in truth.spaces.values())  # two tokens on one space
        wrong = {
            n: (fields(t), fields(obs.spaces[n]))
            for n, t in truth.spaces.items()
            if fields(obs.spaces[n]) != fields(t)
        }
        assert wrong == {}

    @pytest.mark.parametrize("module", ["witch", "raven", "magic_tower", "fountain"])
    def test_a_single_module_setup_is_read_right(self, module: str) -> None:
        truth, obs, _, _ = read_setup(4, 4, frozenset({module}), (5.0, 25.0))
        wrong = {
            n: (fields(t), fields(obs.spaces[n]))
            for n, t in truth.spaces.items()
            if fields(obs.spaces[n]) != fields(t)
        }
        assert wrong == {}


class TestInsertsAndTokens:
    def test_the_web_insert_is_never_read_as_a_tower(self) -> None:
        """The web's round tile looks like a roof from above; nothing ever stays on a web
        (R-MOD-WEB-3) and towers may not end on a fountain (R-MOD-FOUNTAIN-4): the inserts read
        0 towers, their own top and no piece, and the towers they would have taken stay where
        they stand (every tower is counted somewhere)."""
        for seed in (1, 4, 9):
            truth, obs, _, _ = read_setup(seed, 4, ALL, (0.0, 12.0))
            for n, t in truth.spaces.items():
                if t.top in ("web", "fountain"):
                    o = obs.spaces[n]
                    assert (o.towers, o.top, dict(o.wizards), o.witch, o.raven) == (
                        0,
                        t.top,
                        {},
                        False,
                        False,
                    ), (seed, n)
            assert sum(o.towers for o in obs.spaces.values()) == sum(
                t.towers for t in truth.spaces.values()
            )

    def test_one_witch_and_one_raven_at_most_and_a_token_beside_another_is_read(self) -> None:
        """The witch's disc and the raven's white disc side by side on one space: both are
        read there and nowhere else (there is one of each)."""
        truth, obs, _, _ = read_setup(6, 4, ALL, (8.0, 18.0))
        both = [n for n, t in truth.spaces.items() if t.witch and t.raven]
        assert len(both) == 1
        assert [n for n, o in obs.spaces.items() if o.witch] == both
        assert [n for n, o in obs.spaces.items() if o.raven] == both

    def test_a_sealed_witch_is_not_read_and_the_raven_rides_on_the_roof(self) -> None:
        """A tower moved onto the tokens' space covers the witch (R-MOD-WITCH-7) and carries
        the raven up to its roof (R-MOD-RAVEN-7): the frame shows the raven on that roof and no
        witch anywhere."""
        state = setup(Config(player_count=4, modules=ALL), 3)
        data = dump_state(state)
        space = data["witch"]["space"]
        # (the state JSON: the bare crest tower before the magic tower moves onto the tokens)
        src = space - 2
        assert not any(w["space"] == src for w in data["wizards"].values())
        data["stacks"][str(space)] = data["stacks"].pop(str(src))
        data["witch"] = {"space": space, "tier": 0}
        data["raven"] = {"space": space, "tier": 1}
        geometry = BoardGeometry.default().with_track(data["track"])
        rng = np.random.default_rng(3)
        table = random_setup(rng, geometry, tilt_range=(10.0, 20.0))
        setup_frame = render(state, rng, setup=table, hand=False).frame
        profile = build_profile(
            setup_frame, table.camera, geometry, list(state.table.colours), expected=observe(state)
        )
        detector = Detector(table.camera, geometry, profile)
        res = render(data, rng, setup=table, hand=False)
        obs = detector.detect(res.frame).observation
        assert obs is not None
        assert res.observation.spaces[space].raven and not res.observation.spaces[space].witch
        assert [n for n, o in obs.spaces.items() if o.raven] == [space]
        assert not any(o.witch for o in obs.spaces.values())


class TestBenchModules:
    def test_the_bench_reads_game_frames_with_modules_and_rejects_unknown_ones(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        import json

        from companion.bench.vision import main

        assert main(["--modules", "witch,bogus", "--frames", "1"]) == 2
        assert "bogus" in capsys.readouterr().err
        args = ["--modules", "raven,web", "--frames", "2", "--per-session", "2"]
        assert main([*args, "--no-hands", "--json", "--seed", "3"]) == 0
        figures = json.loads(capsys.readouterr().out)
        assert figures["modules"] == ["raven", "web"]
        assert figures["frames"] == 2 and figures["profile_failures"] == 0
        assert figures["groups"]["all"]["spaces"] == 2 * 18  # the web inserts make 18 spaces
