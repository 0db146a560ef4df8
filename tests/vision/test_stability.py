"""Stability gating: no observation while the board moves or a hand is over it; one after."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from companion.rules.observation import Observation, SpaceObservation
from companion.vision.stability import HAND, MOVING, GateConfig, GateDecision, StabilityGate

FPS = 10.0


def board_view() -> np.ndarray:
    """A still 160x160 board view: green cloth, a light track band, a few coloured pieces."""
    view = np.full((160, 160, 3), (60, 110, 70), np.uint8)
    cv2.rectangle(view, (20, 20), (140, 140), (170, 190, 200), 18)
    pieces = [((30, 30), (200, 60, 20)), ((80, 22), (30, 200, 230)), ((130, 90), (30, 30, 200))]
    for (x, y), col in pieces:
        cv2.circle(view, (x, y), 6, col, -1)
    return view


def noisy(view: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.normal(0, 2.5, view.shape)
    return np.clip(view.astype(np.float64) + noise, 0, 255).astype(np.uint8)


def with_hand(view: np.ndarray, x: int, skin: tuple[int, int, int] = (120, 150, 215)) -> np.ndarray:
    """An arm reaching in from the right edge to x (colour BGR)."""
    out = view.copy()
    cv2.rectangle(out, (x, 70), (160, 95), skin, -1)
    cv2.circle(out, (x, 82), 16, skin, -1)
    return out


def reading(n: int = 1) -> Observation:
    return Observation(
        {1: SpaceObservation(0, "crest-space", {"blue": n}), 2: SpaceObservation(1, "crest")}
    )


def run(gate: StabilityGate, frames: list[tuple[np.ndarray, Observation]]) -> list[GateDecision]:
    return [gate.update(i / FPS, v, r) for i, (v, r) in enumerate(frames)]


class TestStillBoard:
    def test_one_observation_after_the_board_settles(self) -> None:
        rng = np.random.default_rng(1)
        base = board_view()
        out = run(StabilityGate(), [(noisy(base, rng), reading()) for _ in range(30)])
        emitted = [i for i, d in enumerate(out) if d.observation is not None]
        assert len(emitted) == 1
        assert emitted[0] / FPS >= GateConfig().still_s  # not before it was still long enough
        assert emitted[0] <= 8  # nor much later
        obs = out[emitted[0]].observation
        assert obs is not None and obs.unstable is False

    def test_readings_that_disagree_are_not_reported(self) -> None:
        rng = np.random.default_rng(2)
        base = board_view()
        frames = [(noisy(base, rng), reading(1 + i % 2)) for i in range(20)]
        assert all(d.observation is None for d in run(StabilityGate(), frames))


class TestHandPassing:
    @pytest.mark.parametrize("skin", [(120, 150, 215), (60, 90, 150), (170, 190, 235)])
    def test_no_observation_while_a_hand_moves_in_holds_still_and_leaves(
        self, skin: tuple[int, int, int]
    ) -> None:
        rng = np.random.default_rng(3)
        base = board_view()
        frames = [(noisy(base, rng), reading(1)) for _ in range(12)]
        hand_idx = []
        for x in (150, 130, 110, 90, 70, 70, 70, 70, 70, 70, 70, 70, 90, 120, 150):
            hand_idx.append(len(frames))
            frames.append((noisy(with_hand(base, x, skin), rng), reading(2)))
        frames += [(noisy(base, rng), reading(2)) for _ in range(15)]
        out = run(StabilityGate(), frames)
        assert all(out[i].observation is None for i in hand_idx)
        assert {out[i].state for i in hand_idx} <= {MOVING, HAND}
        after = [i for i, d in enumerate(out) if d.observation is not None and i > hand_idx[-1]]
        assert len(after) == 1
        obs = out[after[0]].observation
        assert obs is not None and dict(obs.spaces[1].wizards) == {"blue": 2}

    def test_a_sleeve_that_is_not_skin_is_caught_at_the_board_edge(self) -> None:
        rng = np.random.default_rng(4)
        base = board_view()
        frames = [(noisy(base, rng), reading()) for _ in range(12)]
        sleeve = with_hand(base, 90, skin=(200, 40, 40))  # a blue sleeve, held still
        frames += [(noisy(sleeve, rng), reading()) for _ in range(12)]
        out = run(StabilityGate(), frames)
        assert [d.observation is not None for d in out[:12]].count(True) == 1
        assert all(d.observation is None for d in out[12:])
        assert out[-1].state == HAND


class TestBadInput:
    def test_lost_board_resets_and_says_so(self) -> None:
        rng = np.random.default_rng(5)
        base = board_view()
        gate = StabilityGate()
        for i in range(10):
            gate.update(i / FPS, noisy(base, rng), reading())
        d = gate.update(1.0, None, None)
        assert d.observation is None and d.state == "no-board"

    def test_clock_running_backwards_starts_afresh(self) -> None:
        rng = np.random.default_rng(6)
        base = board_view()
        gate = StabilityGate()
        for i in range(10):
            gate.update(100 + i / FPS, noisy(base, rng), reading())
        d = gate.update(5.0, noisy(base, rng), reading())
        assert d.observation is None


class TestRenderedHand:
    """The real detector and gate on a rendered still board while a hand passes over it."""

    @pytest.mark.parametrize(("seed", "tilt"), [(201, (5.0, 15.0)), (202, (20.0, 30.0))])
    def test_silent_while_the_hand_is_in_view_then_one_observation(
        self, seed: int, tilt: tuple[float, float]
    ) -> None:
        import random

        from companion.rules import Config, setup
        from companion.sim.render import random_setup, render, render_hand_sequence
        from companion.sim.scenes import random_game_state
        from companion.vision.detector import Detector
        from companion.vision.geometry import BoardGeometry
        from companion.vision.profile_setup import build_profile

        geometry = BoardGeometry.default()
        nrng = np.random.default_rng(seed)
        table = random_setup(nrng, geometry, tilt_range=tilt)
        first = render(setup(Config(player_count=3), seed=None), nrng, setup=table, hand=False)
        colours = list(Config(player_count=3).colours or ())
        detector = Detector(
            table.camera, geometry, build_profile(first.frame, table.camera, geometry, colours)
        )
        state = random_game_state(random.Random(seed), 3)
        seq = render_hand_sequence(
            state, nrng, setup=table, still_before=4, moving=8, still_after=10, fps=5.0
        )
        assert any(r.hand for r in seq)
        gate = StabilityGate()
        emitted_on_hand = 0
        last_hand = max(i for i, r in enumerate(seq) if r.hand)
        after = []
        for i, r in enumerate(seq):
            det = detector.detect(r.frame, r.observation.time, r.observation.frame)
            d = gate.update(
                r.observation.time,
                det.board_view,
                det.observation if det.ok else None,
                det.white_bgr,
            )
            if r.hand:
                emitted_on_hand += d.observation is not None
            elif i > last_hand and d.observation is not None:
                after.append(d.observation)
        assert emitted_on_hand == 0
        assert len(after) == 1
        assert not after[0].unstable


def towers_reading(first: int, second: int, blue: int = 0) -> Observation:
    """Space 1 and 2 with so many towers (crest roofs), ``blue`` wizards on space 1."""

    def space(n: int, wizards: dict[str, int]) -> SpaceObservation:
        return SpaceObservation(n, "crest" if n else "crest-space", wizards)

    return Observation({1: space(first, {"blue": blue} if blue else {}), 2: space(second, {})})


class TestSmallChangeHeldStill:
    """A change no larger than a piece that stays put: a moved piece, unless a tower is hidden."""

    def frames(self, after: Observation) -> list[tuple[np.ndarray, Observation]]:
        rng = np.random.default_rng(7)
        base = board_view()
        blob = base.copy()
        cv2.circle(blob, (80, 80), 11, (120, 150, 215), -1)  # skin-coloured, a roof's size
        frames = [(noisy(base, rng), towers_reading(0, 1)) for _ in range(10)]
        return frames + [(noisy(blob, rng), after) for _ in range(15)]

    def test_reported_once_it_has_stayed_put_with_every_tower(self) -> None:
        out = run(StabilityGate(), self.frames(towers_reading(1, 0)))
        emitted = [i for i, d in enumerate(out) if d.observation is not None]
        assert len(emitted) == 2 and emitted[0] < 10
        assert {d.state for d in out[11 : emitted[1]]} == {HAND}  # not at once: a hand may pause
        assert emitted[1] - 11 >= 5
        obs = out[emitted[1]].observation
        assert obs is not None and obs.spaces[1].towers == 1 and obs.spaces[2].towers == 0

    def test_never_reported_while_it_hides_a_tower(self) -> None:
        out = run(StabilityGate(), self.frames(towers_reading(0, 0)))
        assert [d.observation is not None for d in out].count(True) == 1
        assert all(d.observation is None for d in out[10:])
        assert out[-1].state == HAND and "towers seen" in out[-1].reason

    def test_never_reported_without_a_tower_move(self) -> None:
        """A hand that placed a wizard and rests: the reading changed, but no tower moved."""
        out = run(StabilityGate(), self.frames(towers_reading(0, 1, blue=1)))
        assert [d.observation is not None for d in out].count(True) == 1
        assert all(d.observation is None for d in out[10:])
        assert out[-1].state == HAND and "no tower moved" in out[-1].reason


class TestSimulatedTable:
    """Still, hand-free boards of the simulated table (renderer, real detector) after a tower
    move: the moved pieces must not be taken for a hand."""

    @staticmethod
    def still_board(
        cam: Any, detector: Any, gate: StabilityGate, state: Any, n: int, hand: Any = None
    ) -> list:
        """Six identical frames of one still board at 5 fps (scene ``n``, ``hand`` held still
        over it) through detector and gate; the gate's decisions."""
        from companion.sim.simtable import Scene

        img = cam.render_scene(Scene(state, hand, 6), n)
        out = []
        for k in range(6 if hand is None else 10):
            t = n * 10.0 + k / 5.0
            det = detector.detect(img, t, int(t * 5))
            reading = det.observation if det.ok else None
            out.append(gate.update(t, det.board_view, reading, det.white_bgr, pose=det.pose))
        return out

    @staticmethod
    def game(config: Any, seed: int, actions: int) -> tuple[Any, Any, list[Any]]:
        """Camera, detector and the states of a seeded bot game (setup first)."""
        from companion.rules import apply, setup
        from companion.sim.bots import BOTS
        from companion.sim.simrender import SimCamera
        from companion.vision.detector import Detector

        state = setup(config, seed)
        bots = [BOTS["greedy"](seed * 7 + i + 1) for i in range(config.player_count)]
        states = [state]
        for _ in range(actions):
            state, _ = apply(state, bots[int(state.turn.player)].choose(state))
            states.append(state)
        cam = SimCamera(seed, (1536, 864))
        profile = cam.profile_from_setup(states[0], list(states[0].table.colours))
        return cam, Detector(cam.camera_model, cam.geometry, profile), states

    def test_a_tall_stack_leaning_over_the_rim_is_reported(self) -> None:
        """Seed-3 game, action 10: a 5-tier stack lands on space 6 at the board's edge and leans
        over the board view's rim in the camera's perspective."""
        from companion.rules import Config

        cam, detector, states = self.game(Config(player_count=3), 3, 11)
        gate = StabilityGate()
        before = self.still_board(cam, detector, gate, states[10], 1)
        assert [d.observation is not None for d in before].count(True) == 1
        after = self.still_board(cam, detector, gate, states[11], 2)
        emitted = [d.observation for d in after if d.observation is not None]
        assert len(emitted) == 1, [d.reason for d in after]
        assert emitted[0].spaces[6].towers == 5 and emitted[0].spaces[4].towers == 0

    def test_a_hand_held_still_over_the_tall_stack_it_placed_is_not_reported(self) -> None:
        """The same move while the hand that placed the stack rests over it for 1.8 s."""
        from companion.rules import Config
        from companion.sim.simtable import Hand

        cam, detector, states = self.game(Config(player_count=3), 3, 11)
        gate = StabilityGate()
        before = self.still_board(cam, detector, gate, states[10], 1)
        assert [d.observation is not None for d in before].count(True) == 1
        seat = int(states[10].turn.player)
        held = self.still_board(cam, detector, gate, states[11], 2, Hand(6, seat, "place"))
        assert all(d.observation is None for d in held)
        assert held[-1].state == HAND

    def test_a_board_held_back_does_not_hold_back_every_board_after_it(self) -> None:
        """Seed-9971 game, 3 players: the castle, taken along with the towers under it (action
        87), leans over the rim in a region larger than a stack, and its still board is held
        back as a hand. Compared with the last reported board, every later board still shows
        that change at the rim, so before, no board was reported again for the rest of the
        game (the end-to-end bench's missing boards). The change stayed put through the motion
        since: the next board (action 88) is reported. (A gate without the board's geometry
        cannot bound the castle's region; the castle moved without a tower move at action 82
        changes no region larger than a stack and is a piece move: reported.)"""
        from companion.rules import Config

        cam, detector, states = self.game(Config(player_count=3), 9971, 89)
        gate = StabilityGate()
        reported = []
        for n, state in enumerate(states[i] for i in (81, 83, 85, 86, 88, 89)):
            out = self.still_board(cam, detector, gate, state, n + 1)
            reported.append([d.observation is not None for d in out].count(True))
        assert reported == [1, 1, 1, 1, 0, 1]

    def test_a_castle_move_over_the_rim_is_a_piece_move(self) -> None:
        """The same seed-9971 boards with a gate that knows the board's geometry: the castle
        moved without a tower move (action 82) and carried with the towers under it from space
        11 to 14 (action 87) changes a region larger than a stack at the rim, but within the
        castle's footprint at its old and new space (and their shadows): every board is
        reported, none held back."""
        from companion.rules import Config

        cam, detector, states = self.game(Config(player_count=3), 9971, 89)
        gate = StabilityGate(geometry=detector.geometry)
        reported = []
        for n, state in enumerate(states[i] for i in (81, 83, 85, 86, 88, 89)):
            out = self.still_board(cam, detector, gate, state, n + 1)
            reported.append([d.observation is not None for d in out].count(True))
        assert reported == [1, 1, 1, 1, 1, 1]

    def test_a_hand_held_still_over_the_castle_it_moved_is_not_reported(self) -> None:
        """Action 87 of the seed-9971 game while the hand that carried the castle to space 14
        rests over it for 2 s: the region is larger than the castle's footprint."""
        from companion.rules import Config
        from companion.sim.simtable import Hand

        cam, detector, states = self.game(Config(player_count=3), 9971, 89)
        gate = StabilityGate(geometry=detector.geometry)
        before = self.still_board(cam, detector, gate, states[87], 1)
        assert [d.observation is not None for d in before].count(True) == 1
        seat = int(states[87].turn.player)
        held = self.still_board(cam, detector, gate, states[88], 2, Hand(14, seat, "place"))
        assert all(d.observation is None for d in held)
        assert held[-1].state == HAND
        after = self.still_board(cam, detector, gate, states[88], 3)
        emitted = [d.observation for d in after if d.observation is not None]
        assert len(emitted) == 1
        assert [s for s, o in emitted[0].spaces.items() if o.castle] == [14]

    @pytest.mark.parametrize("action", [1, 7])
    def test_a_moved_tower_on_the_sandy_track_is_not_a_skin_blob(self, action: int) -> None:
        """Seed-4 game, 4 players, all modules: the revealed track and the moved tower are
        skin-coloured."""
        from companion.rules import Config

        modules = frozenset({"fountain", "web", "witch", "raven", "magic_tower"})
        cam, detector, states = self.game(Config(player_count=4, modules=modules), 4, action + 1)
        gate = StabilityGate()
        before = self.still_board(cam, detector, gate, states[action], 2 * action + 1)
        assert [d.observation is not None for d in before].count(True) == 1
        after = self.still_board(cam, detector, gate, states[action + 1], 2 * action + 2)
        assert [d.observation is not None for d in after].count(True) == 1, [
            d.reason for d in after
        ]


def frame_thumb(rng: np.random.Generator, arm_to: int = 0, gain: float = 1.0) -> np.ndarray:
    """The detector's grey thumbnail of the whole frame (90x160): a table around the board in the
    middle, camera noise; ``arm_to`` > 0 draws an arm coming down from the top edge to that row."""
    out = np.full((90, 160), 150.0)
    out[15:75, 40:120] = 110.0
    out[20:70, 45:115] += 40.0 * (np.indices((50, 70)).sum(axis=0) % 2)  # textured board
    if arm_to:
        out[0:arm_to, 60:75] = 190.0
    out = out * gain + rng.normal(0, 1.5, out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


class TestSomethingEntersTheView:
    """A hand reaching in from outside the frame is in the camera's view one frame before it is
    over the board; the board view alone sees nothing then (``bench vision``: the hand's first
    frame, on which readings that had just come to agree were reported)."""

    def frames(self, arm: list[int], rng: np.random.Generator) -> list[tuple[Any, ...]]:
        base = board_view()
        out = []
        for i, a in enumerate(arm):
            over = a > 15  # the arm reached the board
            view = noisy(with_hand(base, 160 - 2 * a) if over else base, rng)
            # a tower count that flickers on one of the first still frames: agreement is only
            # reached on frame 4 (3 of 4 readings)
            r = towers_reading(2, 1) if i == 2 else towers_reading(1, 2)
            out.append((i / 5.0, view, r, None, frame_thumb(rng, a)))
        return out

    def test_no_observation_on_the_frame_an_arm_enters(self) -> None:
        rng = np.random.default_rng(11)
        gate = StabilityGate()
        arm = [0, 0, 0, 0, 8, 30, 40, 45, 30, 8] + [0] * 10
        out = [gate.update(*f) for f in self.frames(arm, rng)]
        in_view = [i for i, a in enumerate(arm) if a]
        assert [i for i in in_view if out[i].observation is not None] == []
        assert out[4].state == MOVING and "enters" in out[4].reason
        # the still board is reported once the arm has gone
        emitted = [i for i, d in enumerate(out) if d.observation is not None]
        assert len(emitted) == 1 and emitted[0] > in_view[-1]

    def test_the_same_frames_without_the_thumbnail_emit_on_the_arm(self) -> None:
        """What the board view alone does with these frames (the check above can fail)."""
        rng = np.random.default_rng(11)
        gate = StabilityGate()
        arm = [0, 0, 0, 0, 8, 30]
        out = [gate.update(*f[:4]) for f in self.frames(arm, rng)]
        assert out[4].observation is not None

    def test_an_arm_resting_beside_the_board_does_not_hold_the_report_back(self) -> None:
        rng = np.random.default_rng(12)
        gate = StabilityGate()
        arm = [0, 0, 0, 0, 8, 8, 8, 8, 8, 8]
        out = [gate.update(*f) for f in self.frames(arm, rng)]
        assert out[4].observation is None
        assert [i for i, d in enumerate(out) if d.observation is not None] == [5]

    def test_a_change_of_exposure_is_not_an_arm(self) -> None:
        rng = np.random.default_rng(13)
        gate = StabilityGate()
        base = board_view()
        out = [
            gate.update(
                i / 5.0, noisy(base, rng), towers_reading(1, 2), None, frame_thumb(rng, 0, g)
            )
            for i, g in enumerate([1.0, 1.0, 1.05, 0.97, 1.03, 1.0])
        ]
        assert [i for i, d in enumerate(out) if d.observation is not None] == [3]
