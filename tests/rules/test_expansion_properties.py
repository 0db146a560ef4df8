"""Properties over random legal games with every one of the 32 module combinations (hypothesis,
derandomized): invariants incl. webs, fountains, magic tower and tokens hold after every action,
illegal actions change nothing, JSON round trips exactly, what the camera sees matches the
pieces, and whole bot games finish."""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.rules import (
    MODULES,
    Config,
    IllegalAction,
    MoveTower,
    MoveWizard,
    apply,
    check_invariants,
    dump_state,
    legal_actions,
    load_state,
    observe,
    setup,
)
from companion.sim.bots import play

COMBOS = [frozenset(c) for r in range(len(MODULES) + 1) for c in itertools.combinations(MODULES, r)]
assert len(COMBOS) == 32

PROPS = settings(
    max_examples=4,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _name(c: frozenset[str]) -> str:
    return "+".join(m for m in MODULES if m in c) or "base"


def _check_pieces(state) -> None:  # type: ignore[no-untyped-def]
    """Module facts a player would notice, beyond check_invariants."""
    tb = state.table
    obs = observe(state)
    m = state.modules
    for s in range(1, tb.length + 1):
        kind = tb.special[s]
        if kind is not None:
            assert obs.spaces[s].top == kind and obs.spaces[s].towers == 0
    if m is None:
        return
    if m.raven is not None:
        rs = m.raven >> 4
        assert obs.spaces[rs].raven, "the raven is always seen on its top"
    if m.witch is not None:
        ws, wt = m.witch >> 4, m.witch & 15
        assert obs.spaces[ws].witch == (wt == state.height(ws)), "a sealed witch is invisible"
        assert tb.special[ws] != "web"
    magic = [s for s in range(1, tb.length + 1) if "MT" in state.stack(s)]
    if "magic_tower" in tb.config.modules:
        assert len(magic) == 1 and state.stack(magic[0])[-1] == "MT"
    else:
        assert magic == []


def _illegal_variants(state, action):  # type: ignore[no-untyped-def]
    """Near misses that must be refused: an unknown step count, a tower that is not there, a
    tower onto a fountain or the magic tower."""
    tb = state.table
    if isinstance(action, MoveWizard):
        yield dataclasses.replace(action, steps=7)
    if isinstance(action, MoveTower):
        yield dataclasses.replace(action, tier=state.height(action.space) + 1)
        for s in range(1, tb.length + 1):
            top = state.stack(s)
            bad = tb.special[s] == "fountain" or (top and top[-1] == "MT")
            steps = (s - action.space) % tb.length
            if bad and 1 <= steps <= 6 and not action.card.dice and s != action.space:
                from companion.rules import Card

                yield dataclasses.replace(action, steps=steps, card=Card("tower", tower=steps))


@pytest.mark.parametrize("modules", COMBOS, ids=_name)
@PROPS
@given(data=st.data())
def test_random_legal_games_with_modules_keep_every_invariant(modules, data):
    players = data.draw(st.integers(2, 6), label="players")
    variant = data.draw(st.sampled_from(["base", "master"]), label="variant")
    known = data.draw(st.booleans(), label="hands known")
    seed = data.draw(st.integers(0, 10_000), label="seed")
    state = setup(
        Config(player_count=players, variant=variant, modules=modules), seed if known else None
    )
    assert check_invariants(state) == []
    _check_pieces(state)
    for _ in range(data.draw(st.integers(10, 40), label="length")):
        if state.over:
            break
        actions = list(legal_actions(state))
        assert actions, "a running game always has a legal action"
        action = data.draw(st.sampled_from(actions), label="action")
        page = "witch" in modules and isinstance(action, MoveWizard | MoveTower)
        if page and data.draw(st.booleans(), label="page card"):
            m = state.modules
            sealed = (m.witch & 15) < state.height(m.witch >> 4)
            guess = ((m.witch >> 4), (m.witch & 15) + 1) if sealed else None
            action = dataclasses.replace(action, page=True, witch_guess=guess)
        before = dump_state(state)
        for bad in _illegal_variants(state, action):
            with pytest.raises(IllegalAction) as err:
                apply(state, bad)
            assert err.value.reason and err.value.rule.startswith("R-")
            assert dump_state(state) == before, "an illegal action changed the state"
        state, _events = apply(state, action)
        assert check_invariants(state) == [], action
        _check_pieces(state)
        data_json = json.loads(json.dumps(dump_state(state)))
        again = load_state(data_json)
        assert again == state and dump_state(again) == data_json


@pytest.mark.parametrize("modules", [frozenset(), frozenset(MODULES)], ids=_name)
def test_whole_bot_games_with_modules_finish_with_a_winner(modules):
    for seed in (1, 2):
        last = None
        for step in play(Config(player_count=2 + seed, modules=modules), seed, "random"):
            last = step.state
        assert last is not None and last.game.over
        result = last.game.result
        assert result is not None and result.winners


def _brute_force_moves_and_casts(state):  # type: ignore[no-untyped-def]
    """Every card move (each card face, final roll, raven timing) and every cast target
    that apply accepts: the slow oracle the listing must match."""
    from companion.rules import CARD_KINDS, Cast
    from companion.rules.expansion import spell_candidates as _spell_candidates

    tb = state.table
    m = state.modules
    colour = tb.colours[state.turn.player]
    found = set()
    for card in CARD_KINDS:
        for side in ("wizard", "tower"):
            if not card.has_side(side):
                continue
            rolls_list = [(v,) for v in range(1, 7)] if card.dice else [()]
            timings = ("after", "before") if card.dice and m.raven is not None else (None,)
            for rolls in rolls_list:
                steps = rolls[-1] if rolls else card.value(side)
                for timing in timings:
                    if side == "wizard":
                        cands = [
                            MoveWizard(colour, w, steps, card, rolls, raven_timing=timing)
                            for w in tb.wizard_ids
                        ]
                    else:
                        cands = [
                            MoveTower(colour, s, k, steps, card, rolls, raven_timing=timing)
                            for s in range(1, tb.length + 1)
                            for k in range(1, state.height(s) + 1)
                        ]
                    for a in cands:
                        try:
                            apply(state, a)
                        except IllegalAction:
                            continue
                        found.add(a)
    for seat in range(tb.n):
        for spell in tb.spells:
            for free in (False, True):
                for c in _spell_candidates(state, seat, spell, free):
                    assert isinstance(c, Cast)
                    try:
                        apply(state, c)
                    except IllegalAction:
                        continue
                    found.add(c)
    return found


@pytest.mark.parametrize("modules", [c for c in COMBOS if c], ids=_name)
def test_listed_card_moves_and_casts_are_exactly_those_apply_accepts(modules):
    """The listing (hands unknown, every card face) derives legality from the movement path
    instead of applying every candidate: it must agree with apply on every candidate."""
    cfg = Config(player_count=3, variant="master", modules=modules)
    checked = 0
    for i, step in enumerate(play(cfg, 7, "random")):
        if i % 37 or step.state.over:
            continue
        state = dataclasses.replace(step.state, cards=None)
        listed = {
            a
            for a in legal_actions(state, every_card=True)
            if isinstance(a, MoveWizard | MoveTower)
        }
        listed |= {a for a in legal_actions(state, every_card=True) if type(a).__name__ == "Cast"}
        assert listed == _brute_force_moves_and_casts(state)
        checked += 1
        if checked == 4:
            break
    assert checked == 4
