"""The journal: on disk before it is published, a restart reaches the identical belief, a game
record exports and imports as JSON lines, and a process killed at any moment loses nothing that
was acknowledged."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.journal import (
    Journal,
    JournaledTracker,
    JournalError,
    export_jsonl,
    import_jsonl,
    replay_record,
    restore,
)
from companion.rules.model import Config
from companion.rules.observation import ObservationError
from companion.sim.simulate import CameraNoise, simulate
from companion.tracking import Tracker
from companion.tracking.belief import Step, hypothesis_json

REPO = Path(__file__).resolve().parents[2]


def _game(seed=5, players=2, limit=24):
    # these tests are about the journal, not the search: a game whose first inputs the tracker
    # explains in about a second (the search's time is measured by `companion bench tracking`)
    sim = simulate(Config(player_count=players), seed, CameraNoise(rate=0.01, gap="action"))
    return sim, list(sim.inputs[:limit])


def _feed(jt, inp):
    if inp.kind == "observation":
        return jt.observe(inp.observation)
    if inp.kind == "dice":
        return jt.dice(list(inp.rolls), inp.dice_allowed)
    return jt.end_turn()


def test_the_journal_is_sqlite_in_wal_mode_with_full_sync(tmp_path):
    j = Journal(tmp_path / "game.sqlite")
    assert j.wal
    assert j._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    j.close()


def test_a_restart_replays_to_the_identical_belief(tmp_path):
    sim, inputs = _game()
    path = tmp_path / "game.sqlite"
    j = Journal(path, snapshot_every=10)
    jt = JournaledTracker(Tracker(sim.start), j)
    for inp in inputs:
        _feed(jt, inp)
    expected = jt.tracker.to_json()
    j.close()
    j2 = Journal(path)
    assert j2.count("snapshot") >= 1
    assert restore(j2).to_json() == expected
    j2.close()


def test_commits_are_journaled_with_their_events(tmp_path):
    sim, inputs = _game()
    j = Journal(tmp_path / "g.sqlite")
    jt = JournaledTracker(Tracker(sim.start), j)
    committed = 0
    for inp in inputs:
        committed += len(_feed(jt, inp).committed)
    rows = [r for r in j.records() if r.kind == "commit"]
    assert committed > 0
    assert sum(len(r.payload["committed"]) for r in rows) == committed
    kinds = {c["action"]["kind"] for r in rows for c in r.payload["committed"] if "action" in c}
    assert "move_tower" in kinds or "move_wizard" in kinds


def test_a_malformed_observation_writes_nothing(tmp_path):
    sim, _ = _game()
    j = Journal(tmp_path / "g.sqlite")
    jt = JournaledTracker(Tracker(sim.start), j)
    before = (j.count(), jt.tracker.to_json())
    with pytest.raises(ObservationError):
        jt.observe({"spaces": {"1": {"towers": -1, "top": "plain"}}})
    assert (j.count(), jt.tracker.to_json()) == before


def test_a_failed_write_rolls_the_tracker_back(tmp_path):
    sim, inputs = _game()
    j = Journal(tmp_path / "g.sqlite")
    jt = JournaledTracker(Tracker(sim.start), j)
    before = jt.tracker.to_json()
    j.close()  # the disk is gone
    obs = next(i for i in inputs if i.kind == "observation").observation
    with pytest.raises(sqlite3.ProgrammingError):
        jt.observe(obs)
    assert jt.tracker.to_json() == before


def test_export_and_import_of_a_game_record(tmp_path):
    sim, inputs = _game(limit=16)
    j = Journal(tmp_path / "g.sqlite")
    jt = JournaledTracker(Tracker(sim.start), j)
    for inp in inputs:
        _feed(jt, inp)
    buf = io.StringIO()
    n = export_jsonl(j, buf)
    lines = buf.getvalue().splitlines()
    assert n == len(lines)
    first = json.loads(lines[0])
    assert first["kind"] == "game"
    kinds = {json.loads(x)["kind"] for x in lines[1:]}
    assert {"observation", "commit"} <= kinds
    assert replay_record(lines).to_json() == jt.tracker.to_json()
    other = Journal(tmp_path / "copy.sqlite")
    assert import_jsonl(lines, other) == n + 1  # the records and the snapshot they reach
    # a restart on the imported game starts from that snapshot: nothing left to replay
    assert other.last("snapshot") is not None
    assert not [r for r in other.records(after=other.last_seq("snapshot")) if r.kind != "page"]
    assert restore(other).to_json() == jt.tracker.to_json()


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"kind": "dice", "rolls": [3], "dice_allowed": 1}'], "starts with a game line"),
        (["not json"], "line 1: not JSON"),
        (['{"kind": "game", "tracker": {}}', '{"kind": "teleport"}'], "unknown kind"),
    ],
)
def test_a_malformed_game_record_is_refused_and_writes_nothing(tmp_path, lines, message):
    j = Journal(tmp_path / "g.sqlite")
    with pytest.raises(JournalError, match=message):
        import_jsonl(lines, j)
    assert j.count() == 0


WRITER = """
import sys
from companion.journal import Journal, JournaledTracker
from companion.rules.model import Config
from companion.sim.simulate import CameraNoise, simulate
from companion.tracking import Tracker

path, seed = sys.argv[1], int(sys.argv[2])
sim = simulate(Config(player_count=2), seed, CameraNoise(rate=0.0, gap="action"))
jt = JournaledTracker(Tracker(sim.start), Journal(path, snapshot_every=7))
for n, inp in enumerate(sim.inputs[:40]):
    if inp.kind == "observation":
        jt.observe(inp.observation)
    elif inp.kind == "dice":
        jt.dice(list(inp.rolls), inp.dice_allowed)
    else:
        jt.end_turn()
    print(n, flush=True)   # acknowledged: journaled before this line
print("done", flush=True)
"""


@pytest.mark.parametrize("kill_seed", [11, 12])
def test_kill_9_at_a_random_moment_loses_nothing_acknowledged(tmp_path, kill_seed):
    rng = random.Random(kill_seed)
    path = tmp_path / "g.sqlite"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), "2"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(tmp_path),
    )
    assert proc.stdout is not None
    # wait for the process to get going, then kill it after a seeded number of inputs
    target = rng.randint(3, 36)
    acknowledged = -1
    for line in proc.stdout:
        if line.strip() == "done":
            break
        acknowledged = int(line)
        if acknowledged >= target:
            time.sleep(rng.random() * 0.05)
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    j = Journal(path)
    inputs = [r for r in j.records() if r.kind in {"observation", "dice", "end_turn"}]
    assert len(inputs) >= acknowledged + 1
    restored = restore(j).to_json()
    # the same inputs fed to a fresh tracker in memory give the same belief
    sim = simulate(Config(player_count=2), 2, CameraNoise(rate=0.0, gap="action"))
    ref = Tracker(sim.start)
    for inp in sim.inputs[: len(inputs)]:
        if inp.kind == "observation":
            ref.observe(inp.observation)
        elif inp.kind == "dice":
            ref.dice(list(inp.rolls), inp.dice_allowed)
        else:
            ref.end_turn()
    assert restored == ref.to_json()


def test_a_snapshot_follows_tracker_work_so_a_restart_replays_little(tmp_path):
    """A snapshot is written once the tracker worked ``snapshot_after_s`` since the last one
    (here: after every input), and only the last one is kept whole."""
    sim = simulate(Config(player_count=2), 3, CameraNoise(rate=0.0, gap="action"))
    inputs = list(sim.inputs[:6])
    j = Journal(tmp_path / "g.sqlite", snapshot_every=200, snapshot_after_s=0.0)
    jt = JournaledTracker(Tracker(sim.start), j)
    for inp in inputs:
        _feed(jt, inp)
    snaps = [r for r in j.records() if r.kind == "snapshot"]
    assert len(snaps) == len(inputs)
    assert [s.payload == {"pruned": True} for s in snaps] == [True] * (len(inputs) - 1) + [False]
    assert restore(j).to_json() == jt.tracker.to_json()
    slow = Journal(tmp_path / "h.sqlite", snapshot_every=200, snapshot_after_s=1e9)
    jt = JournaledTracker(Tracker(sim.start), slow)
    for inp in inputs:
        _feed(jt, inp)
    assert slow.count("snapshot") == 0


def _held_belief(stories: int = 40) -> Tracker:
    """A tracker holding ``stories`` stories that share one long trail (as a belief does that
    held its stories for many frames) and each end in a step of its own."""
    sim = simulate(Config(player_count=3), 11, CameraNoise(rate=0.0, gap="action"), max_actions=40)
    tr = Tracker(sim.start)
    for inp in sim.inputs[:30]:
        inp.give(tr)
    base = min(tr._hyps, key=lambda h: h.cost)
    shared = base
    for _ in range(30):  # a long shared trail: the same step again and again
        shared = shared.extended(base.state, shared.cost, Step(base.state, (), (), ()), (), False)
    own = [
        shared.extended(
            base.state, shared.cost + k, Step(base.state, (), (), (), (), float(k)), (), False
        )
        for k in range(stories)
    ]
    tr._hyps = tuple(own)
    return tr


def test_a_snapshot_writes_the_steps_its_stories_share_once():
    # a belief that held many stories for a long time must not write (and build in memory)
    # every shared step once per story: a 4-player game with all modules once wrote a 480 MB
    # snapshot and the service rose past 4.9 GB
    tr = _held_belief(40)
    data = tr.to_json()
    pooled = len(json.dumps(data))
    written_out = sum(len(json.dumps(hypothesis_json(h))) for h in tr._hyps)
    assert len(data["hypotheses"]) == 40
    assert pooled * 10 < written_out
    back = Tracker.from_json(json.loads(json.dumps(data)))
    assert back.to_json() == data
    assert [len(h.trail) for h in back._hyps] == [len(h.trail) for h in tr._hyps]


def test_a_snapshot_of_the_older_format_is_still_restored():
    tr = _held_belief(3)
    data = tr.to_json()
    old = {k: v for k, v in data.items() if k != "pool"}
    old["version"] = 1
    old["hypotheses"] = [hypothesis_json(h) for h in tr._hyps]
    old["saved"] = (
        None
        if tr._saved is None
        else {
            **data["saved"],
            "hypotheses": [hypothesis_json(h) for h in tr._saved.hyps],
        }
    )
    assert Tracker.from_json(old).to_json() == data


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d["pool"]["steps"].clear(),
        lambda d: d["hypotheses"][0].update(state=10**6),
        lambda d: d["pool"].pop("states"),
    ],
    ids=["steps gone", "no such state", "states gone"],
)
def test_a_damaged_pooled_snapshot_is_refused(damage):
    data = json.loads(json.dumps(_held_belief(3).to_json()))
    damage(data)
    with pytest.raises((ValueError, KeyError, IndexError)):
        Tracker.from_json(data)
