"""Properties over random legal games (hypothesis, derandomized): the invariants of
state-model.md §2.4 hold after every action, illegal actions change nothing, JSON round trips
exactly, and every listed action is accepted."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.rules import (
    Cast,
    Config,
    DiscardCard,
    EndTurn,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
    apply,
    check_invariants,
    dump_state,
    legal_actions,
    load_state,
    setup,
)

CONFIGS = st.builds(
    lambda n, variant, teams, known: (
        Config(player_count=n, variant=variant, teams=teams and n in (4, 6)),
        known,
    ),
    st.integers(1, 6),
    st.sampled_from(["base", "master"]),
    st.booleans(),
    st.booleans(),
)

PROPS = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _illegal_variants(state, action):
    """Actions near ``action`` that must be refused."""
    other = state.table.colours[(state.turn.player + 1) % state.table.n]
    if isinstance(action, MoveWizard):
        yield MoveWizard(
            other if state.table.n > 1 else "pink",
            action.wizard,
            action.steps,
            action.card,
            action.rolls,
        )
        yield MoveWizard(action.player, action.wizard, 7, action.card, action.rolls)
    if isinstance(action, MoveTower):
        yield MoveTower(
            action.player,
            action.space,
            state.height(action.space) + 1,
            action.steps,
            action.card,
            action.rolls,
        )
        if state.castle != action.space:
            steps = (state.castle - action.space) % state.table.length
            if 1 <= steps <= 6:
                yield MoveTower(
                    action.player,
                    action.space,
                    action.tier,
                    steps,
                    action.card if not action.card.dice else action.card,
                    (steps,) if action.card.dice else action.rolls,
                )


@PROPS
@given(CONFIGS, st.data())
def test_random_legal_games_keep_every_invariant(cfg_known, data):
    config, known = cfg_known
    seed = data.draw(st.integers(0, 10_000), label="seed")
    state = setup(config, seed if known else None)
    for _ in range(data.draw(st.integers(10, 60), label="length")):
        if state.over:
            break
        actions = list(legal_actions(state))
        assert actions, "a running game always has a legal action"
        action = data.draw(st.sampled_from(actions), label="action")
        before = dump_state(state)
        for bad in _illegal_variants(state, action):
            try:
                apply(state, bad)
            except IllegalAction as exc:
                assert exc.reason and exc.rule.startswith("R-")
            else:
                raise AssertionError(f"accepted {bad}")
            assert dump_state(state) == before, "an illegal action changed the state"
        state, events = apply(state, action)
        assert events or isinstance(action, EndTurn | Redraw | DiscardCard | Cast)
        assert check_invariants(state) == []
        data_json = json.loads(json.dumps(dump_state(state)))
        assert load_state(data_json) == state
        assert dump_state(load_state(data_json)) == data_json


@PROPS
@given(st.integers(2, 6), st.integers(0, 1000), st.integers(0, 30))
def test_contains_agrees_with_enumeration(players, seed, plies):
    state = setup(Config(player_count=players, variant="master"), seed)
    from companion.sim.bots import RandomBot

    bot = RandomBot(seed)
    for _ in range(plies):
        if state.over:
            break
        state, _ = apply(state, bot.choose(state))
    legal = legal_actions(state)
    listed = list(legal)
    assert legal.count() == len(listed)
    assert all(a in legal for a in listed)


ANY = st.one_of(
    st.none(),
    st.integers(-3, 20),
    st.text(max_size=8),
    st.booleans(),
    st.sampled_from(["blue", "yellow", "blue-1", "yellow-2", "cw", "R1"]),
)
CARDS = st.one_of(st.sampled_from(list(__import__("companion.rules").rules.CARD_KINDS)), ANY)
ROLLS = st.one_of(
    st.tuples(), st.tuples(st.integers(-1, 8)), st.tuples(st.integers(0, 7), st.integers(0, 7))
)
GARBAGE = st.one_of(
    st.builds(MoveWizard, ANY, ANY, ANY, CARDS, ROLLS),
    st.builds(MoveTower, ANY, ANY, ANY, ANY, CARDS, ROLLS),
    st.builds(DiscardCard, ANY, CARDS, ROLLS),
    st.builds(Redraw, ANY, st.one_of(st.none(), st.tuples(ANY, ANY))),
    st.builds(
        Cast,
        ANY,
        st.sampled_from(
            [
                "advance_wizard",
                "swap_tower",
                "free_wizard",
                "piggyback",
                "move_castle",
                "headwind_tower",
                "x",
            ]
        ),
        wizard=ANY,
        space=ANY,
        tier=ANY,
        a=ANY,
        b=ANY,
        direction=ANY,
        rider=ANY,
        times=ANY,
    ),
)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(GARBAGE, st.integers(0, 50))
def test_garbage_actions_are_refused_cleanly_and_change_nothing(action, seed):
    state = setup(
        Config(
            player_count=3,
            variant="master",
            spells=(
                "advance_wizard",
                "swap_tower",
                "free_wizard",
                "piggyback",
                "move_castle",
                "headwind_tower",
            ),
        ),
        seed,
    )
    before = dump_state(state)
    try:
        after, _ = apply(state, action)
    except IllegalAction as exc:
        assert exc.rule.startswith("R-")
    else:
        assert check_invariants(after) == []
    assert dump_state(state) == before


def test_a_boolean_is_not_a_step_count():
    from companion.rules import Card

    state = setup(Config(player_count=2))
    try:
        apply(state, MoveWizard("blue", "blue-1", True, Card("wizard", wizard=1)))
    except IllegalAction as exc:
        assert exc.rule == "R-CARD-5"
    else:
        raise AssertionError("True was taken for 1 step")


def _superset(state):
    """Every move and spell action over the whole argument domain (hands unknown)."""
    from companion.rules.turn import representative as _representative

    tb = state.table
    cur = state.current_player
    for steps in range(1, 7):
        for side in ("wizard", "tower"):
            card, rolls = _representative(side, steps)
            if side == "wizard":
                for w in tb.wizard_ids:
                    yield MoveWizard(cur, w, steps, card, rolls)
            else:
                for s in range(1, tb.length + 1):
                    for k in range(1, 11):
                        yield MoveTower(cur, s, k, steps, card, rolls)
    for colour in tb.colours:
        for spell in tb.spells:
            if spell in ("advance_wizard", "headwind_wizard"):
                for w in tb.wizard_ids:
                    yield Cast(colour, spell, wizard=w)
            elif spell in ("advance_tower", "headwind_tower"):
                for s in range(1, tb.length + 1):
                    for k in range(1, 11):
                        yield Cast(colour, spell, space=s, tier=k)
            elif spell == "swap_tower":
                for a in range(1, tb.length + 1):
                    for b in range(a + 1, tb.length + 1):
                        yield Cast(colour, spell, a=a, b=b)
            elif spell == "move_castle":
                yield Cast(colour, spell, direction="cw")
                yield Cast(colour, spell, direction="ccw")
            elif spell == "free_wizard":
                for s in range(1, tb.length + 1):
                    for k in range(1, 11):
                        yield Cast(colour, spell, space=s, tier=k)
                        for w in tb.wizard_ids:
                            yield Cast(colour, spell, space=s, tier=k, wizard=w)


@settings(max_examples=12, derandomize=True, deadline=None)
@given(st.integers(2, 6), st.integers(0, 1000), st.integers(0, 60), st.booleans())
def test_enumeration_is_complete_for_moves_and_spells(players, seed, plies, master):
    from dataclasses import replace

    from companion.rules import BASE_SPELLS
    from companion.sim.bots import RandomBot

    config = Config(
        player_count=players, variant="master" if master else "base", spells=BASE_SPELLS
    )
    state = setup(config, seed)
    bot = RandomBot(seed)
    for _ in range(plies):
        if state.over:
            break
        state, _ = apply(state, bot.choose(state))
    state = replace(state, cards=None, potions=tuple((6, 0, 0) for _ in state.potions))
    listed = {a for a in legal_actions(state) if isinstance(a, MoveWizard | MoveTower | Cast)}
    for action in _superset(state):
        try:
            apply(state, action)
        except IllegalAction:
            assert action not in listed
        else:
            assert action in listed, action
