"""A whole table, end to end: seeded bots play, the renderer films them (hands included), the
real detector and tracker follow, the phone pages show it, questions are answered on a phone."""

from __future__ import annotations

import json

import pytest

from companion.rules import dump_state
from companion.rules.tracker import board_key
from companion.service.parts import Parts
from companion.service.record import Recorder, hidden_positions, replay, same_table
from companion.service.testing import finish_game, wait_until
from companion.service.webclient import PhoneClient
from tests.e2e.conftest import WebAnswerer, vision_blocker

pytestmark = pytest.mark.slow

GAME_SEED, REPLAY_SEED, FAIL_SEED = 3, 9, 3


def wrong_commits(history, truths) -> int:
    """Committed states that are not in the true game's history, in order (board with hidden
    wizards and their tiers, castle, potions)."""
    keys = [(board_key(t), t.potions) for t in truths]
    pointer, wrong = 0, 0
    for c in history:
        k = (board_key(c.state), c.state.potions)
        j = pointer
        while j < len(keys) and keys[j] != k:
            j += 1
        if j < len(keys):
            pointer = j
        else:
            wrong += 1
    return wrong


def needs_vision(seed: int) -> None:
    missing = Parts().missing_line("render", "detector", "stability", "profile", "sources")
    if missing:
        pytest.skip(f"BLOCKED (not done): vision parts missing: {missing}")


# KNOWN FAILURE (the tracker): with seed 3 the tracker commits 23 wrong states in 45 actions.
# Every stable observation of the rendered game equals the true state of the scene its frame was
# drawn from (32 of 32), and a bare Tracker fed the *ideal* observations of the same game with
# the same DONE presses commits the same 23 wrong states: at the observation of action 20 it
# commits a history in which blue makes a third move in its first turn (truly yellow's action 3;
# the rules engine refuses it, R-TURN-2), and every later move goes to the previous player. (One
# still board, after action 10, is never called stable: a 5-tier stack at the board's edge leans
# over the rim and the stability gate takes it for a hand; the tracker then explains two actions
# in one frame.) Strict: the suite fails as soon as this passes, so the mark goes.
KNOWN_TRACKING_FAILURE = pytest.mark.xfail(
    reason="known failure (tracker): 23 wrong commits in 45 actions of the seed-3 game, from a "
    "third move committed in blue's first turn (R-TURN-2)",
    strict=True,
)


@KNOWN_TRACKING_FAILURE
def test_a_rendered_3_player_game_is_tracked_through_the_web(companion_factory):
    needs_vision(GAME_SEED)
    c = companion_factory(seed=GAME_SEED, players=3, simulation={"max_actions": 45})
    c.start()
    assert c.table.vision_ok, f"simulated camera not running: {c.table.missing}"
    answerer = WebAnswerer(c).start()
    try:
        finish_game(c, timeout_s=150)
    finally:
        answerer.stop()
    truth = c.table.game.state
    tracked = c.service.state
    history = c.service.driver.tracker.history
    wrong = wrong_commits(history, c.table.game.record.states)
    assert wrong == 0, f"{wrong} wrong commits; setup check: {vision_blocker(GAME_SEED) or 'ok'}"
    assert same_table(tracked, truth), c.service.health_line
    assert hidden_positions(tracked) == hidden_positions(truth)
    assert hidden_positions(truth), "the seeded game should have trapped wizards by now"
    assert not answerer.errors, answerer.errors
    # the table page shows it: the public state over HTTP is the tracked state's public view
    phone = PhoneClient(c.url)
    snap = phone.state("public")
    assert snap["state"]["stacks"] == dump_state(truth)["stacks"]
    # hands were over the board and hid nothing the tracker needed
    assert c.vision.frames > c.vision.observations > 0


def test_a_recorded_session_replays_identically(companion_factory, tmp_path):
    # replaying needs the vision parts, not a perfect detector: the same frames through the
    # same detector and stability gate must give the same observations and commits
    missing = Parts().missing_line("render", "detector", "stability", "profile", "sources")
    if missing:
        pytest.skip(f"BLOCKED (not done): vision parts missing: {missing}")
    rec = Recorder(tmp_path / "session", all_frames=True, lossless=True)
    c = companion_factory(
        seed=REPLAY_SEED,
        players=3,
        web=False,
        answer_questions=True,
        simulation={"max_actions": 12},
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
    inputs = [json.loads(x) for x in (tmp_path / "session/inputs.jsonl").read_text().splitlines()]
    assert {"observation", "dice", "done"} <= {i["kind"] for i in inputs}


def test_the_camera_failing_mid_game_keeps_the_game_and_tracking_resumes(companion_factory):
    needs_vision(FAIL_SEED)
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
