"""A lost game finds its way back: when every held story disagrees with what the camera keeps
reading, the tracker re-anchors on the board the camera reads (its hidden pieces kept where
they are consistent) instead of committing wrong boards as certain, and then tracks the game
right (docs/architecture.md, "The tracker")."""

from __future__ import annotations

from dataclasses import replace

import pytest

from companion.rules.actions import DiscardCard, EndTurn, IllegalAction, MoveTower
from companion.rules.engine import apply, setup
from companion.rules.invariants import check_invariants
from companion.rules.model import CARD_KINDS, Config, GameState
from companion.rules.observation import Observation, ObservationError, SpaceObservation
from companion.sim.answering import TruthWalk
from companion.sim.simulate import CameraNoise, SimInput, simulate
from companion.tracking import Committed, Tracker, TrackerOptions, board_key
from companion.tracking.anchor import anchor_states
from companion.tracking.belief import trapped_places
from companion.tracking.noise import COLOUR_INDEX, expected_observation, space_views

OPTS = TrackerOptions(
    depth=2, deep_depth=3, beam=10, recheck_beam=10, full_beam=10, full_roots=2, deep_roots=1
)
"""A short search keeps these games fast (the camera sees the table after every move); the
re-anchor does not depend on the search."""


def _swap_tops(st: GameState, a: int, b: int) -> GameState:
    """``st`` with the top towers of spaces ``a`` and ``b`` swapped (roofs of other kinds): a
    board no legal move leads to from ``st``'s truth, that the camera contradicts at both."""
    stacks = list(st.stacks)
    sa, sb = stacks[a - 1], stacks[b - 1]
    stacks[a - 1] = sa[:-1] + sb[-1:]
    stacks[b - 1] = sb[:-1] + sa[-1:]
    out = replace(st, stacks=tuple(stacks))
    assert not check_invariants(out)
    assert space_views(out)[a - 1][1] != space_views(st)[a - 1][1]
    return out


def _reanchors(updates):
    return [c for u in updates for c in u.committed if any(e.kind == "reanchor" for e in c.events)]


def _trapped_truth() -> tuple[list[SimInput], int, int]:
    """A seeded game's inputs from a still board with trapped wizards on (its first frame
    first), and two spaces with towers of other roof kinds and no castle (to swap)."""
    sim = simulate(Config(player_count=2), 7, CameraNoise(rate=0.0, gap="action"), max_actions=60)
    inputs = list(sim.inputs)
    for i, inp in enumerate(inputs):
        st = inp.truth
        if inp.kind != "observation" or not any(trapped_places(st, s) for s in range(st.table.n)):
            continue
        kinds = [st.table.towers[s[-1]].kind if s else None for s in st.stacks]
        for a in range(1, st.table.length + 1):
            for b in range(a + 1, st.table.length + 1):
                ka, kb = kinds[a - 1], kinds[b - 1]
                if ka and kb and ka != kb and "magic" not in (ka, kb) and st.castle not in (a, b):
                    return inputs[i:], a, b
    raise AssertionError("no state with trapped wizards in the seeded game")


def test_a_lost_game_is_reanchored_and_then_tracked_right():
    inputs, a, b = _trapped_truth()
    truth = replace(inputs[0].truth, cards=None)
    # the belief lost its way: two roofs the other way round, and no move leads back
    tr = Tracker(_swap_tops(truth, a, b), OPTS)
    seen = expected_observation(truth)
    lost = [tr.observe(seen) for _ in range(OPTS.anchor_frames)]
    assert _reanchors(lost[:-1]) == []
    assert lost[-1].health == "re-anchored on the board the camera reads"
    assert board_key(tr.state) == board_key(truth)
    # the game goes on (the camera sees the table after every move): tracked right
    walk = TruthWalk([inp.truth for inp in inputs])
    for idx, inp in enumerate(inputs[2:40], 2):
        u = inp.give(tr)
        for c in u.committed:
            walk.check(c.state, c.potions)
        if inp.kind == "observation":
            assert board_key(tr.state) == board_key(inp.truth), idx
    assert tr.reanchors == 1
    assert walk.wrong_board == walk.wrong == 0


def test_the_hidden_wizards_the_belief_knows_survive_a_reanchor():
    inputs, a, b = _trapped_truth()
    truth = replace(inputs[0].truth, cards=None)
    lost = _swap_tops(truth, a, b)
    tr = Tracker(lost, OPTS)
    seen = expected_observation(truth)
    updates = [tr.observe(seen) for _ in range(OPTS.anchor_frames)]
    assert _reanchors(updates[:-1]) == []  # a few frames are not enough
    (entry,) = _reanchors(updates[-1:])
    assert sorted(entry.events[0]["spaces"]) == [a, b]
    assert entry.events[0]["stories"] == 1
    st = tr.state
    for seat in range(truth.table.n):
        assert trapped_places(st, seat) == trapped_places(truth, seat)
    assert board_key(st) == board_key(truth)
    assert (st.potions, st.turn) == (lost.potions, lost.turn)
    assert not check_invariants(st)
    assert tr.hidden_unsure == {}


def test_a_misread_frame_now_and_then_never_reanchors():
    inputs, a, b = _trapped_truth()
    truth = replace(inputs[0].truth, cards=None)
    tr = Tracker(truth, OPTS)
    good = expected_observation(truth)
    sp = dict(good.spaces)
    so = sp[a]
    sp[a] = SpaceObservation(so.towers + 1, so.top, dict(so.wizards), so.castle)
    bad = Observation(sp)
    updates = [tr.observe(o) for o in (bad, good, bad, good, bad, bad, good, bad)]
    assert _reanchors(updates) == []
    assert board_key(tr.state) == board_key(truth)


def test_a_wizard_gone_from_view_with_nowhere_to_hide_is_not_anchored():
    st = setup(Config(player_count=2), None)
    # the camera shows one blue wizard fewer on space 2 and nothing where it might be: the
    # wizard is trapped somewhere (or the camera is wrong); no place is claimed as certain
    views = space_views(st)
    reading = list(views)
    towers, top, counts, castle, witch, raven = views[1]
    reading[1] = (towers, top, (counts[0] - 1, *counts[1:]), castle, witch, raven)
    got = anchor_states(st, tuple(reading), 16)
    assert got == ()  # no stack changed: nowhere a wizard could be trapped unseen


def test_a_reading_no_legal_board_shows_changes_nothing():
    st = setup(Config(player_count=2), None)
    tr = Tracker(st, OPTS)
    good = expected_observation(st)
    sp = dict(good.spaces)
    # six towers on a space: more than the towers the game has left for the others
    sp[12] = SpaceObservation(6, "crest", {})
    sp[13] = SpaceObservation(6, "plain", {})
    impossible = Observation(sp)
    before = tr.to_json()["hypotheses"]
    updates = [tr.observe(impossible) for _ in range(6)]
    assert _reanchors(updates) == []
    assert tr.to_json()["hypotheses"] == before
    assert updates[-1].health.startswith("board doesn't match")


def test_bad_input_changes_nothing_and_the_frames_survive_a_restart():
    inputs, a, b = _trapped_truth()
    truth = replace(inputs[0].truth, cards=None)
    tr = Tracker(_swap_tops(truth, a, b), OPTS)
    seen = expected_observation(truth)
    n = OPTS.anchor_frames
    for _ in range(n - 1):
        tr.observe(seen)
    snap = tr.to_json()
    with pytest.raises(ObservationError):
        tr.observe({"spaces": {"1": {"towers": -1, "top": "crest"}}})
    assert tr.to_json() == snap
    back = Tracker.from_json(snap)
    u = back.observe(seen)
    assert _reanchors([u]) and back.reanchors == 1
    assert board_key(back.state) == board_key(truth)
    assert Tracker.from_json(back.to_json()).reanchors == 1


def test_reanchoring_can_be_switched_off():
    inputs, a, b = _trapped_truth()
    truth = replace(inputs[0].truth, cards=None)
    tr = Tracker(_swap_tops(truth, a, b), replace(OPTS, anchor_frames=0))
    seen = expected_observation(truth)
    updates = [tr.observe(seen) for _ in range(6)]
    assert _reanchors(updates) == [] and tr.reanchors == 0


def test_no_wrong_board_is_committed_while_the_camera_keeps_contradicting_it():
    inputs, a, b = _trapped_truth()
    truth = replace(inputs[0].truth, cards=None)
    frames = [i for i, inp in enumerate(inputs) if inp.kind == "observation"]
    upto = inputs[: frames[3] + 1]  # two still boards, a move between them

    def run(opts: TrackerOptions, upto: list[SimInput]) -> list[Committed]:
        tr = Tracker(_swap_tops(truth, a, b), opts)
        return [c for inp in upto for c in inp.give(tr).committed]

    # without the safety net the moves are committed on the lost belief once its stories
    # agree (two still boards later): wrong boards as certain
    longer = inputs[: frames[5] + 1]
    blind = run(replace(OPTS, anchor_frames=0), longer)
    assert any(c.action is not None for c in blind)
    assert all(board_key(c.state) != board_key(inp.truth) for c in blind for inp in longer[-1:])
    # with it nothing is committed on the contradicted stories; the belief is re-anchored
    got = run(OPTS, upto)
    assert [c.events[0].kind for c in got] == ["reanchor"]
    assert board_key(got[0].state) == board_key(upto[-1].truth)


def test_a_trapped_wizard_shown_again_is_held_unsure_which_one_it_was():
    t1 = next(c for c in CARD_KINDS if c.type == "tower" and c.tower == 1 and not c.dice)
    st = setup(Config(player_count=2), None)
    st, _ = apply(st, MoveTower("blue", 2, 1, 1, t1))
    st, _ = apply(st, MoveTower("blue", 4, 1, 1, t1))
    yellow = st.table.colours.index("yellow")
    assert trapped_places(st, yellow) == ((3, 1), (3, 1), (5, 1))
    # the camera shows one more yellow wizard on space 7: one of the trapped ones, but which
    # (under space 3 or under space 5) no frame tells
    reading = list(space_views(st))
    towers, top, counts, castle, witch, raven = reading[6]
    more = tuple(n + (i == COLOUR_INDEX["yellow"]) for i, n in enumerate(counts))
    reading[6] = (towers, top, more, castle, witch, raven)
    got = anchor_states(st, tuple(reading), 16)
    assert {trapped_places(s, yellow) for s in got} == {((3, 1), (5, 1)), ((3, 1), (3, 1))}
    assert all(trapped_places(s, 1 - yellow) == trapped_places(st, 1 - yellow) for s in got)
    assert all(space_views(s) == reading and not check_invariants(s) for s in got)


def test_the_done_presses_a_lost_belief_collected_end_their_turns_at_the_reanchor():
    """Two players. Three turns end with no move the camera sees (DONE pressed three times)
    while the belief is lost (two pairs of roofs the other way round: no frame is explained).
    The board the camera reads after them already shows those turns, so the re-anchored
    table is the other player's turn, and her move in the next frames is followed."""
    inputs, a, b = _trapped_truth()
    start = replace(inputs[0].truth, cards=None)
    truth = done(done(done(start)))
    assert truth.stacks == start.stacks and truth.turn.player != start.turn.player
    spaces = [
        s
        for s in range(1, start.table.length + 1)
        if start.stacks[s - 1] and s not in (a, b) and start.castle != s
    ]
    c, d = next(
        (c, d)
        for c in spaces
        for d in spaces
        if c < d
        and space_views(start)[c - 1][1] not in ("magic",)
        and space_views(start)[d - 1][1] not in ("magic", space_views(start)[c - 1][1])
        and space_views(start)[c - 1][1] not in (space_views(start)[a - 1][1],)
    )
    tr = Tracker(_swap_tops(_swap_tops(start, a, b), c, d), OPTS)
    for _ in range(3):
        tr.end_turn()
    seen = expected_observation(truth)
    got = [tr.observe(seen) for _ in range(OPTS.anchor_frames)]
    assert got[-1].health == "re-anchored on the board the camera reads"
    assert board_key(tr.state) == board_key(truth)
    assert tr.state.turn.player == truth.turn.player
    # she moves a tower one space and presses DONE: followed
    move = next(
        m
        for s in range(1, truth.table.length + 1)
        for m in (MoveTower(truth.current_player, s, 1, 1, T1),)
        if truth.stacks[s - 1] and _legal(truth, m)
    )
    after = done(apply(truth, move)[0])
    tr.end_turn()
    for _ in range(2):
        u = tr.observe(expected_observation(after))
    assert u.explained and board_key(tr.state) == board_key(after)
    assert tr.state.turn.player == after.turn.player


T1 = next(c for c in CARD_KINDS if c.type == "tower" and c.tower == 1 and not c.dice)


def _legal(st: GameState, action: MoveTower) -> bool:
    try:
        apply(st, action)
    except IllegalAction:
        return False
    return True


def done(state: GameState) -> GameState:
    """The DONE button: unplayed cards are discarded, the turn ends (R-TURN-3/4)."""
    while state.turn.cards_used < state.table.actions_per_turn and not state.turn.ended:
        state, _ = apply(state, DiscardCard(state.current_player, None))
    return apply(state, EndTurn())[0]


def test_a_castle_misread_where_it_just_moved_is_a_misread_not_a_lost_game():
    """A wizard enters the raven castle and the castle moves on (R-RAVEN-3); the first frame
    after it misses the castle on its new space, which the frames before read without one, as
    they should have. The camera then reads that space alike for ``anchor_frames`` frames and
    every story disagrees with the newest: once taken as a lost belief, it re-anchored the game
    on a board with the castle where it no longer was, and committed wrong boards for the rest
    of the game. A misread costs one frame: the story that moved the castle stays the best."""
    sim = simulate(Config(player_count=2), 7, CameraNoise(rate=0.0, gap="action"), max_actions=200)
    inputs = list(sim.inputs)
    obs = [i for i, inp in enumerate(inputs) if inp.kind == "observation"]
    moved = next(
        j
        for i, j in zip(obs, obs[1:], strict=False)
        if inputs[i].truth.castle != inputs[j].truth.castle
    )
    truth = inputs[moved].truth
    tr = Tracker(sim.start)  # the full search: every story it keeps moves the castle
    walk = TruthWalk([sim.start] + [inp.truth for inp in inputs])
    for inp in inputs[:moved]:
        for c in inp.give(tr).committed:
            walk.check(c.state, c.potions)
    # the table stood still a while before the move: the same board seen twice more
    before = max(i for i in obs if i < moved)
    for _ in range(2):
        tr.observe(inputs[before].observation)
    seen = inputs[moved].observation
    spaces = dict(seen.spaces)
    spaces[truth.castle] = replace(spaces[truth.castle], castle=False)
    update = tr.observe(replace(seen, spaces=spaces))
    assert _reanchors([update]) == []
    assert tr.reanchors == 0
    assert tr.state.castle == truth.castle, "the story that moved the castle is the best"
    for inp in inputs[moved : moved + 12]:
        for c in inp.give(tr).committed:
            walk.check(c.state, c.potions)
    assert tr.reanchors == 0
    assert walk.wrong_board == walk.wrong == 0
