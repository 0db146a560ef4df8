"""A whole table, end to end: seeded bots play, the renderer films them (hands included), the
real detector and tracker follow, the phone pages show it, questions are answered on a phone."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from companion.rules import dump_state
from companion.service.record import (
    Recorder,
    commit_check,
    hidden_positions,
    replay,
    same_table,
)
from companion.service.webclient import PhoneClient
from companion.sim.testing import HostPhoneAnswerer, finish_game, wait_until
from companion.tracking import board_key

from .conftest import vision_blocker

pytestmark = pytest.mark.e2e

GAME_SEED, REPLAY_SEED, FAIL_SEED, MODULES_SEED = 3, 9, 3, 4
ALL_MODULES = ("fountain", "web", "witch", "raven", "magic_tower")


def test_a_rendered_3_player_game_is_tracked_through_the_web(companion_factory):
    c = companion_factory(seed=GAME_SEED, players=3, simulation={"max_actions": 45})
    play_and_check(c, GAME_SEED, 3)


def play_and_check(c, seed: int, players: int, modules: tuple[str, ...] = ()) -> None:
    """Play the companion's simulated game to its end with a player answering on the host's
    phone, then check what the issue asks: no wrong commit, the tracked table (with every
    trapped wizard) equals the truth, the table page shows it."""
    c.start()
    assert c.table.vision_ok, f"simulated camera not running: {c.table.missing}"
    answerer = HostPhoneAnswerer(c).start()
    try:
        finish_game(c, timeout_s=240)
    finally:
        answerer.stop()
    truth = c.table.game.state
    tracked = c.service.state
    history = c.service.driver.tracker.history
    wrong, first = commit_check(history, c.table.game.record.states)
    assert wrong == 0, (
        f"{wrong} wrong commits of {len(history)}, the first after true action {first}; "
        f"setup check: {vision_blocker(seed, players, modules) or 'ok'}"
    )
    # potions are not on the board: where a card and a spell looked alike (R-SPELL-6; a space
    # withheld as unsure may hide what told them apart) the pages show the tracker's potion
    # counts as "one of these", and the truth must be one of them
    unsure = c.service.driver.tracker.potions_unsure
    shown = replace(
        tracked,
        potions=tuple(
            want if want in unsure.get(colour, ()) else p
            for colour, p, want in zip(
                tracked.table.colours, tracked.potions, truth.potions, strict=True
            )
        ),
    )
    assert same_table(shown, truth), (
        f"tracked table differs from the truth: {len(history)} commits for "
        f"{len(c.table.game.record.actions)} true actions, {c.vision.observations} still boards "
        f"emitted; health: {c.service.health_line}; potions {tracked.potions}, truth "
        f"{truth.potions}, unsure {unsure}; "
        f"setup check: {vision_blocker(seed, players, modules) or 'ok'}"
    )
    assert hidden_positions(tracked) == hidden_positions(truth)
    assert hidden_positions(truth), "the seeded game should have trapped wizards by now"
    assert not answerer.errors, answerer.errors
    phone = PhoneClient(c.url)
    snap = phone.state("public")
    assert snap["state"]["stacks"] == dump_state(truth)["stacks"]
    assert c.vision.frames > c.vision.observations > 0
    # the colours were checked against the boards the tracker worked out (what moved goes to
    # the log, which keeps its last 40 lines: tests/service/test_restart_memory.py)
    assert c.teacher is not None and c.teacher.learnt >= 1


def test_a_rendered_4_player_game_with_all_modules_is_tracked_through_the_web(companion_factory):
    c = companion_factory(
        seed=MODULES_SEED,
        players=4,
        game={"modules": list(ALL_MODULES)},
        simulation={"max_actions": 45},
    )
    assert c.config.game.modules == ALL_MODULES
    play_and_check(c, MODULES_SEED, 4, ALL_MODULES)


@pytest.mark.parametrize("work_ahead", [False, True], ids=["plain", "work-ahead"])
def test_a_recorded_session_replays_identically(companion_factory, tmp_path, work_ahead):
    # replaying needs the vision parts, not a perfect detector: the same frames through the
    # same detector and stability gate must give the same observations and commits — also when
    # the tracker worked on each still board ahead, while the gate still waited
    rec = Recorder(tmp_path / "session", all_frames=True, lossless=True)
    c = companion_factory(
        seed=REPLAY_SEED,
        players=3,
        web=False,
        answer_questions=True,
        simulation={"max_actions": 12},
        service={"work_ahead": work_ahead},
    )
    c.recorder = rec
    c.start()
    finish_game(c, timeout_s=120)
    c.stop()
    assert rec.frames > 0 and rec.inputs > 0
    result = replay(tmp_path / "session")
    assert result.frames_detected > 0
    assert result.identical, result.text()
    assert result.commits_replayed == rec.commits
    assert result.final_hidden == hidden_positions(c.service.state)
    jt = c.service.driver.jt
    if work_ahead:
        assert jt.prepared_used > 0, "no still board was worked out ahead"
    else:
        assert jt.prepared == 0
    inputs = [json.loads(x) for x in (tmp_path / "session/inputs.jsonl").read_text().splitlines()]
    assert {"observation", "dice", "done"} <= {i["kind"] for i in inputs}


def test_the_camera_failing_mid_game_keeps_the_game_and_tracking_resumes(companion_factory):
    c = companion_factory(seed=FAIL_SEED, players=3, simulation={"max_actions": 30})
    failing = range(50, 60)
    c.start()
    # the camera (its driver) raises for 10 frames, then delivers again
    c.table.source.fail = lambda i: OSError("camera unplugged") if i in failing else None
    phone = PhoneClient(c.url)
    wait_until(lambda: c.table.source.index > failing.start + 2, 60, "the camera to fail")
    wait_until(
        lambda: "camera unplugged" in phone.state("public")["camera"], 30, "the page to say so"
    )
    during = c.service.state
    assert phone.state("public")["camera"].startswith("error")
    assert not c.heartbeats.part_ok("camera")
    health = phone.get("/healthz")
    assert health[0] == 503 and b"camera unplugged" in health[1]
    # nothing was lost: the game state stayed while the camera was down
    if "camera unplugged" in phone.state("public")["camera"]:
        assert c.service.state.stacks == during.stacks
    # frames again: the page says so, and the heartbeats recover
    wait_until(lambda: phone.state("public")["camera"] == "ok", 60, "the camera to come back")
    wait_until(lambda: c.heartbeats.part_ok("camera"), 10, "a fresh camera heartbeat")
    finish_game(c, timeout_s=150)
    # the board with every trapped wizard and the castle (potions are not on the board: with
    # frames lost the tracker may only estimate them)
    assert board_key(c.service.state) == board_key(c.table.game.state), c.service.health_line
    assert hidden_positions(c.service.state) == hidden_positions(c.table.game.state)


def seen_of(space) -> tuple:
    """What a space shows (its reading's confidence aside)."""
    return (
        space.towers,
        space.top,
        dict(space.wizards),
        space.castle,
        space.witch,
        space.raven,
    )


_STILL_BOARDS: dict[str, list] = {}


def still_boards_read(companion_factory) -> list:
    """``(observation, scene)`` for every still board the companion emitted in the first 20
    actions of the seed-3 game (one run shared by the tests below)."""
    if "seed3" not in _STILL_BOARDS:
        c = companion_factory(
            seed=GAME_SEED,
            players=3,
            web=False,
            answer_questions=True,
            simulation={"max_actions": 20},
        )
        c.start()
        seen: list = []
        post = c.vision.post

        def record(obs):
            seen.append((obs, c.table.source.scene_at(obs.frame)))
            post(obs)

        c.vision.post = record
        finish_game(c, timeout_s=120)
        _STILL_BOARDS["seed3"] = [(o, s, c.table.game.record.states) for o, s in seen]
    return _STILL_BOARDS["seed3"]


def test_every_still_board_comes_from_a_hand_free_frame_of_a_true_state(companion_factory):
    # the simulated table's timing: each stable observation was decided on a frame drawn from a
    # hand-free scene of a state the game record holds (no frame drawn from a state the record
    # does not contain, no state published before its frame)
    seen = still_boards_read(companion_factory)
    assert len(seen) >= 10
    for obs, scene, states in seen:
        assert scene is not None and scene.hand is None, f"frame {obs.frame}: {scene}"
        assert scene.state is states[scene.step + 1], f"frame {obs.frame}: not a recorded state"


def test_every_still_board_is_read_as_it_stands(companion_factory):
    from companion.rules import observe

    for obs, scene, _ in still_boards_read(companion_factory):
        truth = {n: seen_of(s) for n, s in observe(scene.state).spaces.items()}
        read = {n: seen_of(s) for n, s in obs.spaces.items()}
        # a space the detector withheld as unsure is unknown (docs/state-model.md §3); every
        # space it emitted is as it stands, and most of the board is read
        wrong = {n: (r, truth.get(n)) for n, r in read.items() if truth.get(n) != r}
        assert not wrong, f"frame {obs.frame} (action {scene.step}): {wrong}"
        assert 2 * len(read) >= len(truth), f"frame {obs.frame}: {len(read)} spaces read"
