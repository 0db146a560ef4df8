"""An answer to a board question (which tower moved, what lies hidden) tells the tracker the
board, nothing about potions: a 2-space tower move by a card and by Advance a Tower look alike
(R-POTION-1, R-SPELL-1, R-SPELL-6), so every potion story of the chosen board must survive the
answer. Otherwise the true potion count is dropped with the other options and every later
commit claims potions the table never had."""

from __future__ import annotations

import pytest

from companion.rules.model import Config
from companion.sim.answering import TruthWalk, answer_as_players
from companion.sim.simulate import CameraNoise, SimGame, simulate, truth_key
from companion.tracking import Question, Tracker, board_key


def _play(sim: SimGame, inputs: int) -> tuple[Tracker, list[str], list[int]]:
    """Feed the first ``inputs`` inputs, answering as the players would; returns the tracker,
    the questions asked and the input indices of commits that are not in the truth's history
    (in order: board, potions, whose turn)."""
    tr = Tracker(sim.start)
    walk = TruthWalk(sim.truths)
    asked: list[Question] = []
    wrong: list[int] = []
    for idx, inp in enumerate(sim.inputs[:inputs]):
        up = answer_as_players(tr, inp.give(tr), inp.truth, asked)
        assert up.question is None, "an option holds the true board"
        wrong.extend(idx for c in up.committed if not walk.check(c.state, c.potions))
    return tr, [q.text for q in asked], wrong


@pytest.mark.long
def test_a_board_answer_keeps_the_true_potions_of_the_chosen_board():
    """Three players, seed 2000: the camera cannot tell which of blue's moves made the board
    on the fifth input and asks; the story with the true potions is not among the closest
    ones the question offers, only its board is. At the end of the stop on the eleventh
    input (where the camera could not tell where red's towers went on its first frame) the
    board is right and the true potions are still a story."""
    sim = simulate(Config(player_count=3), 2000, CameraNoise(rate=0.01, gap="turn"))
    tr, asked, wrong = _play(sim, 11)
    assert any(q.startswith("The camera can't tell") for q in asked), "a board question"
    truth = sim.inputs[10].truth
    assert board_key(tr.state) == board_key(truth)
    assert any(truth_key(s) == truth_key(truth) for s, _cost in tr.hypotheses), (
        "the true potions stay a story after the answer"
    )
    assert not wrong


@pytest.mark.long
def test_the_history_after_answers_claims_only_potions_the_table_had():
    sim = simulate(Config(player_count=3), 2000, CameraNoise(rate=0.01, gap="turn"))
    # up to a still frame about 16 turns in (after a DONE press the truth is ahead of it)
    last = max(i for i in range(50) if sim.inputs[i].kind == "observation")
    tr, asked, wrong = _play(sim, last + 1)
    assert len(asked) >= 2
    assert tr.history, "the game is being committed"
    assert not wrong, f"commits with potions the table never had at inputs {wrong}"
    truth = sim.inputs[last].truth
    assert any(truth_key(s) == truth_key(truth) for s, _cost in tr.hypotheses), (
        "the true potions are still one of the stories"
    )
