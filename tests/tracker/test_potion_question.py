"""Potions the camera cannot see: a 2-space tower move by a card or by Advance a Tower leaves the
same board, and the players' potions differ (R-POTION-1, R-SPELL-1). The tracker holds both and,
after ``max_lag`` held frames, asks the players what they can see on the table — never takes the
cheaper story on its cost alone."""

from __future__ import annotations

import re

from companion.rules.model import Config
from companion.sim.answering import true_option
from companion.sim.simulate import CameraNoise, simulate, truth_key
from companion.tracking import Tracker

QUESTION = re.compile(r"How many full potions does (\w+) have now\?")
OPTION = re.compile(r"(\d+) full potions? and (\d+) empty")


def _until_potion_question(seed: int, limit: int = 60):
    sim = simulate(Config(player_count=2), seed, CameraNoise(rate=0.0, gap="turn"), "greedy")
    tr = Tracker(sim.start)
    for inp in sim.inputs[:limit]:
        if inp.kind == "observation":
            assert inp.observation is not None
            up = tr.observe(inp.observation)
        elif inp.kind == "dice":
            up = tr.dice(inp.rolls, inp.dice_allowed)
        else:
            up = tr.end_turn()
        q = up.question
        if q is not None and QUESTION.fullmatch(q.text):
            return tr, q, inp.truth, sim
        if q is not None:
            # another kind of question: answer it with the option that holds the truth (the
            # true board first: options with the true potions may hide a wrong stack)
            option = true_option(tr, up, inp.truth)
            assert option is not None, "no option holds the true board"
            tr.answer(q.id, option)
    raise AssertionError("no potion question in the first inputs of the game")


def test_card_or_spell_is_asked_as_the_potions_a_player_sees():
    tr, q, truth, sim = _until_potion_question(2000)
    colour = QUESTION.fullmatch(q.text).group(1)
    full, empty, _ = truth.potions_of(colour)
    seen = [tuple(int(x) for x in OPTION.fullmatch(o).groups()) for o in q.options]
    assert len(set(seen)) == len(seen) >= 2, "each option is a different count"
    assert (full, empty) in seen, "the true count is one of the options"
    before = tr.committed_state
    u = tr.answer(q.id, seen.index((full, empty)))
    assert tr.state.potions_of(colour)[:2] == (full, empty)
    for s, _cost in tr.hypotheses:
        assert s.potions_of(colour)[:2] == (full, empty), "the answer settles that player"
    while u.question is not None and QUESTION.fullmatch(u.question.text):
        other = QUESTION.fullmatch(u.question.text).group(1)
        assert other != colour, "asked once per player"
        seen = [tuple(int(x) for x in OPTION.fullmatch(o).groups()) for o in u.question.options]
        u = tr.answer(u.question.id, seen.index(truth.potions_of(other)[:2]))
    assert tr.state.potions == truth.potions
    assert tr.committed_state != before, "the held moves are committed"


def _answer_all(seed: int):
    tr, q, truth, sim = _until_potion_question(seed)
    u = None
    while q is not None and QUESTION.fullmatch(q.text):
        colour = QUESTION.fullmatch(q.text).group(1)
        seen = [tuple(int(x) for x in OPTION.fullmatch(o).groups()) for o in q.options]
        u = tr.answer(q.id, seen.index(truth.potions_of(colour)[:2]))
        q = u.question
    return tr, sim


def test_what_the_answers_commit_happened():
    """Every state committed up to and with the answers happened, in the game's order: where
    the camera could not tell the order of a turn's moves (or a card from a spell) the history
    says so instead of claiming the cheapest order."""
    tr, sim = _answer_all(2000)
    truths = [truth_key(t) for t in sim.truths]
    pointer = 0
    for c in tr.history:
        k = truth_key(c.state)
        assert k in truths[pointer:], f"committed {c.to_json()} never happened"
        pointer = truths.index(k, pointer)
    assert truth_key(tr.committed_state) in truths
    assert any(c.action is None for c in tr.history), "the seed's turns hide an order"


def test_a_wrong_count_is_believed_too():
    """The players are the authority on their potions: the other option is taken as given."""
    tr, q, truth, _ = _until_potion_question(2000)
    colour = QUESTION.fullmatch(q.text).group(1)
    seen = [tuple(int(x) for x in OPTION.fullmatch(o).groups()) for o in q.options]
    other = next(i for i, v in enumerate(seen) if v != truth.potions_of(colour)[:2])
    tr.answer(q.id, other)
    assert tr.state.potions_of(colour)[:2] == seen[other]
