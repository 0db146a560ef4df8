"""The detector with the expansion's pieces: the untouched setup of all five modules (inserts,
magic tower, witch and raven tokens on one space) read right on seeded renders, the web insert
never read as a tower, one witch and one raven at most."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from companion.rules import Config, dump_state, observe, setup
from companion.rules.observation import Observation, SpaceObservation
from companion.sim.render import random_setup, render
from companion.vision.detector import Detector
from companion.vision.geometry import BoardGeometry
from companion.vision.profile_setup import build_profile

ALL = frozenset({"fountain", "web", "witch", "raven", "magic_tower"})
TILTS = [(0.0, 10.0), (10.0, 20.0), (20.0, 35.0)]


def fields(s: SpaceObservation) -> tuple[Any, ...]:
    return (s.towers, s.top, dict(s.wizards), s.castle, s.witch, s.raven)


def _read(detector: Detector, frame: np.ndarray) -> Observation | None:
    """What the detector read (also the spaces it withheld or a board it refused)."""
    return detector.detect(frame).reading


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
    # (spaces it is unsure of are withheld from the tracker; what was read is scored)
    obs = found.reading
    assert obs is not None, found.message
    return truth, obs, detector, frame


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
        obs = _read(detector, res.frame)
        assert obs is not None
        assert res.observation.spaces[space].raven and not res.observation.spaces[space].witch
        assert [n for n, o in obs.spaces.items() if o.raven] == [space]
        assert not any(o.witch for o in obs.spaces.values())


class TestBenchModules:
    def test_the_bench_reads_game_frames_with_modules_and_rejects_unknown_ones(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        import json

        from companion.cli import main as cli_main

        def main(argv: list[str]) -> int:
            # (through the command line: the tests never import the benchmarks)
            return cli_main(["bench", "vision", *argv])

        assert main(["--modules", "witch,bogus", "--frames", "1"]) == 2
        assert "bogus" in capsys.readouterr().err
        args = ["--modules", "raven,web", "--frames", "2", "--per-session", "2"]
        assert main([*args, "--no-hands", "--json", "--seed", "3"]) == 0
        figures = json.loads(capsys.readouterr().out)
        assert figures["modules"] == ["raven", "web"]
        assert figures["frames"] == 2 and figures["profile_failures"] == 0
        assert figures["groups"]["all"]["spaces"] == 2 * 18  # the web inserts make 18 spaces


def game_reader(seed: int, players: int, tilt: tuple[float, float]) -> tuple[Any, Detector, Any]:
    """(setup state, detector, table) of an all-modules table whose profile comes from a setup
    frame under another light than the game's frames (the light changes during an evening)."""
    from dataclasses import replace

    from companion.sim.render import random_lighting

    state = setup(Config(player_count=players, modules=ALL), seed)
    geometry = BoardGeometry.default().with_track(dump_state(state)["track"])
    rng = np.random.default_rng(seed)
    table = random_setup(rng, geometry, tilt_range=tilt)
    setup_light = replace(table, lighting=random_lighting(rng), _cache={})
    frame = render(state, rng, setup=setup_light, hand=False).frame
    profile = build_profile(
        frame, table.camera, geometry, list(state.table.colours), expected=observe(state)
    )
    detector = Detector(table.camera, geometry, profile)
    first = detector.detect(frame)
    assert first.reading is not None, first.message
    return state, detector, (table, rng)


class TestMagicTower:
    @pytest.mark.parametrize(
        ("seed", "tilt"), [(3, (0.0, 10.0)), (24, (0.0, 10.0)), (37, (10.0, 20.0))]
    )
    def test_the_bare_magic_roof_is_read_magic_with_no_wizard_on_it(
        self, seed: int, tilt: tuple[float, float]
    ) -> None:
        """The magic tower's roof is a field with a star, ringed by violet merlons: under
        another light than the setup's, its star is not a yellow wizard, its merlons not a
        purple one, and the roof stays magic (the star's yellow is not a crest disc's)."""
        state, detector, (table, rng) = game_reader(seed, 2 + seed % 5, tilt)
        res = render(state, rng, setup=table, hand=False)
        obs = _read(detector, res.frame)
        assert obs is not None
        magic = [n for n, t in res.observation.spaces.items() if t.top == "magic"]
        assert len(magic) == 1
        assert fields(obs.spaces[magic[0]]) == fields(res.observation.spaces[magic[0]])
        assert [n for n, o in obs.spaces.items() if o.top == "magic"] == magic

    def test_a_game_reads_the_magic_tower_where_it_is_and_no_wizard_on_it_that_is_not(
        self,
    ) -> None:
        """Eight frames of a seeded game (a warm light, the camera nearly overhead): in every
        frame the one magic roof is read where it stands and nowhere else, and no wizard is
        read on it that is not there."""
        import random

        from companion.sim.render import random_lighting
        from companion.sim.scenes import random_game_state

        nrng = np.random.default_rng(3)
        prng = random.Random(3)
        geometry = BoardGeometry.default()
        table = random_setup(nrng, geometry, tilt_range=(0.0, 10.0))
        players = prng.randint(2, 6)
        config = Config(player_count=players, modules=ALL)
        first = setup(config, seed=None)
        geometry = geometry.with_track(dump_state(first)["track"])
        from dataclasses import replace

        setup_light = replace(table, lighting=random_lighting(nrng), _cache={})
        frame = render(first, nrng, setup=setup_light, hand=False).frame
        profile = build_profile(
            frame, table.camera, geometry, list(config.colours or ()), expected=observe(first)
        )
        detector = Detector(table.camera, geometry, profile)
        detector.detect(frame)
        wrong = []
        for i in range(8):
            state = random_game_state(prng, players, modules=ALL)
            res = render(state, nrng, setup=table, hand=False)
            obs = _read(detector, res.frame)
            assert obs is not None
            truth = res.observation
            magic = [n for n, t in truth.spaces.items() if t.top == "magic"]
            if [n for n, o in obs.spaces.items() if o.top == "magic"] != magic:
                wrong.append((i, "magic roof", magic))
            for n in magic:
                extra = set(obs.spaces[n].wizards.items()) - set(truth.spaces[n].wizards.items())
                if extra:
                    wrong.append((i, "wizards", n, extra))
        assert wrong == []


class TestRavenOnARoof:
    @pytest.mark.parametrize("seed", [4, 6, 7, 8, 9])
    def test_a_roof_under_the_raven_token_keeps_its_kind(self, seed: int) -> None:
        """The raven token rides on a bare crest roof and (another frame) on a bare plain roof:
        its white disc hides the crest disc's middle and its printed raven looks like a crest's,
        but the roof is read crest and plain, and the raven on it."""
        state, detector, (table, rng) = game_reader(seed, 4, TILTS[seed % 3])
        data = dump_state(state)
        wizards_on = {w["space"] for w in data["wizards"].values()}
        bare = [
            int(s) for s, st in data["stacks"].items() if len(st) == 1 and int(s) not in wizards_on
        ]
        for prefix, kind in (("R", "crest"), ("P", "plain")):
            space = next(s for s in bare if data["stacks"][str(s)][0].startswith(prefix))
            res = render(
                {**data, "raven": {"space": space, "tier": 1}}, rng, setup=table, hand=False
            )
            assert res.observation.spaces[space].top == kind
            obs = _read(detector, res.frame)
            assert obs is not None
            assert (obs.spaces[space].top, obs.spaces[space].raven) == (kind, True), (kind, space)
            assert [n for n, o in obs.spaces.items() if o.raven] == [space]


class TestRavenToken:
    @pytest.mark.parametrize("seed", [3, 20])
    def test_the_raven_is_read_on_its_space_under_a_warm_bright_light(self, seed: int) -> None:
        """Under a warm, bright light the raven token's white disc and the magic tower's pale
        violet merlons come close: the token is still read on its space (the merlons' colour
        shows on the magic top only and is not the token's)."""
        from dataclasses import replace

        from companion.sim.render import random_lighting

        state, detector, (table, rng) = game_reader(seed, 4, (20.0, 35.0))
        warm = random_lighting(rng, kelvin_range=(2700.0, 3500.0), intensity_range=(1.2, 1.5))
        res = render(state, rng, setup=replace(table, lighting=warm, _cache={}), hand=False)
        obs = _read(detector, res.frame)
        assert obs is not None
        want = [n for n, t in res.observation.spaces.items() if t.raven]
        assert len(want) == 1
        assert [n for n, o in obs.spaces.items() if o.raven] == want
