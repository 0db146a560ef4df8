"""A still board is worked out while the stability gate still waits: the early reading is
prepared by the tracker and, when the gate confirms the same reading, that work is what counts —
with exactly the result, journal and belief of taking the confirmed board afresh."""

from __future__ import annotations

import dataclasses

from companion.journal import Journal, JournaledTracker
from companion.rules.model import Config
from companion.service.pipeline import EarlyReading, reading_of
from companion.sim.simulate import CameraNoise, simulate
from companion.tracking import Tracker


@dataclasses.dataclass(frozen=True)
class Decision:
    state: str
    observation: object = None


def _game(seed=2, players=2, limit=24):
    sim = simulate(Config(player_count=players), seed, CameraNoise(rate=0.0, gap="action"))
    return sim, list(sim.inputs[:limit])


def _obs_of(sim):
    """The game's observations, one per distinct reading."""
    out = []
    for i in sim.inputs:
        if i.kind == "observation" and all(reading_of(i.observation) != reading_of(o) for o in out):
            out.append(i.observation)
    return out


def _reframed(obs, frame, confidence):
    """The same reading on a later frame, with other confidences (as the gate's vote has)."""
    spaces = {s: dataclasses.replace(o, confidence=confidence) for s, o in obs.spaces.items()}
    return dataclasses.replace(obs, spaces=spaces, frame=frame, unstable=False)


def test_the_first_still_reading_is_the_one_reported_when_the_gate_agrees():
    sim, _ = _game()
    a, b = _obs_of(sim)[:2]
    assert reading_of(a) != reading_of(b)
    early = EarlyReading()
    assert early.frame(a, Decision("moving")) == (None, None)
    candidate, report = early.frame(dataclasses.replace(a, unstable=True), Decision("settling"))
    assert report is None and candidate is not None
    assert not candidate.unstable and reading_of(candidate) == reading_of(a)
    # the same reading again: already worked on
    assert early.frame(a, Decision("settling")) == (None, None)
    confirmed = _reframed(a, frame=99, confidence=0.7)
    assert early.frame(a, Decision("stable", confirmed)) == (None, candidate)
    # after the report nothing is held: the next still period starts afresh
    assert early.frame(a, Decision("stable")) == (None, None)


def test_a_flickering_or_moved_board_reports_the_gates_own_reading():
    sim, _ = _game()
    a, b, c = _obs_of(sim)[:3]
    early = EarlyReading(tries=2)
    first, _ = early.frame(a, Decision("settling"))
    second, _ = early.frame(b, Decision("settling"))
    assert first is not None and second is not None and reading_of(second) == reading_of(b)
    assert early.frame(c, Decision("settling")) == (None, None)  # no more tries this period
    confirmed = _reframed(c, frame=50, confidence=0.9)
    assert early.frame(c, Decision("stable", confirmed)) == (None, confirmed)
    # a hand over the board forgets the candidate
    early.frame(a, Decision("settling"))
    early.frame(a, Decision("hand"))
    confirmed = _reframed(a, frame=60, confidence=0.8)
    assert early.frame(a, Decision("stable", confirmed)) == (None, confirmed)


def _journaled(tmp_path, name, sim):
    # snapshots by input count only: the time-based ones fall where the tracker's work did
    j = Journal(tmp_path / f"{name}.sqlite", snapshot_after_s=float("inf"))
    return j, JournaledTracker(Tracker(sim.start), j)


def _rows(j):
    return [(r.kind, r.payload) for r in j.records()]


def test_a_prepared_board_gives_exactly_the_update_journal_and_belief_of_a_fresh_one(tmp_path):
    sim, inputs = _game()
    j1, plain = _journaled(tmp_path, "plain", sim)
    j2, ahead = _journaled(tmp_path, "ahead", sim)
    calls = {"n": 0}
    observe = ahead.tracker.observe

    def counting(obs):
        calls["n"] += 1
        return observe(obs)

    ahead.tracker.observe = counting
    observations = 0
    for inp in inputs:
        if inp.kind == "observation":
            observations += 1
            assert ahead.prepare(inp.observation)
            belief = ahead.tracker.to_json()
            assert belief == plain.tracker.to_json(), "preparing changed the belief"
        u1, u2 = inp.give(plain), inp.give(ahead)
        assert u1.to_json() == u2.to_json()
    assert observations > 6
    assert calls["n"] == observations, "each board was worked out once, ahead"
    assert _rows(j1) == _rows(j2)
    assert plain.tracker.to_json() == ahead.tracker.to_json()


def test_a_stale_or_different_preparation_is_not_used(tmp_path):
    sim, inputs = _game()
    j1, plain = _journaled(tmp_path, "plain", sim)
    j2, ahead = _journaled(tmp_path, "ahead", sim)
    obs = [i.observation for i in inputs if i.kind == "observation"]
    last = None
    for inp in inputs:
        if inp.kind == "observation" and last is not None:
            ahead.prepare(last)  # the previous board: a different observation
        elif inp.kind != "observation":
            ahead.prepare(obs[-1])  # then a DONE or dice comes first: stale
        u1, u2 = inp.give(plain), inp.give(ahead)
        assert u1.to_json() == u2.to_json()
        if inp.kind == "observation":
            last = inp.observation
    assert _rows(j1) == _rows(j2)
    assert not ahead.prepare({"spaces": {"1": {"towers": -1, "top": "plain"}}})
    assert _rows(j1) == _rows(j2)
