"""Questions the players can answer: at most three options, no two worded alike, and what they
differ in told in the players' words, even when the stories differ only in hidden towers.

Stories that made the same moves but stacked different towers under a top (a spell's path the
frames did not show, a belief re-anchored on the camera's board) once gave five options all
reading "as shown", asked again at every frame: no player could answer them.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import permutations

from companion.rules.engine import setup
from companion.rules.model import Config, GameState
from companion.tracking import TrackerOptions
from companion.tracking.belief import Hypothesis, Step
from companion.tracking.questions import CHOICES, distinct, pick_question


def _restacked(root: GameState, under: tuple[int, ...], top: int, space: int) -> GameState:
    """``root`` with the towers ``under`` (bottom to top) and ``top`` moved on to ``space``."""
    moved = set(under) | {top}
    stacks = [tuple(t for t in s if t not in moved) for s in root.stacks]
    stacks[space - 1] = (*under, top)
    return replace(root, stacks=tuple(stacks))


def _story(state: GameState, cost: float) -> Hypothesis:
    """A story held two frames, whose steps moved nothing the frames could name."""
    step = Step(state, (), (), ())
    return Hypothesis(state, cost, (step, step), (), False)


def _hidden_stories() -> tuple[GameState, list[Hypothesis]]:
    """Five stories that show one picture (a crest roof on top of space 13) over the same three
    towers (a magic tower, a crest and a plain roof) stacked in five orders."""
    root = setup(Config(player_count=2, modules=frozenset({"magic_tower"})), seed=1)
    kinds = [t.kind for t in root.table.towers]
    # towers on spaces without wizards: the crest/plain/magic towers that the test restacks
    free = [i for i, s in enumerate(root.stacks) if s and not _wizards_on(root, i + 1)]
    magic = next(root.stacks[i][0] for i in free if kinds[root.stacks[i][0]] == "magic")
    crests = [root.stacks[i][0] for i in free if kinds[root.stacks[i][0]] == "crest"]
    plain = next(root.stacks[i][0] for i in free if kinds[root.stacks[i][0]] == "plain")
    top, crest = crests[0], crests[1]
    orders = list(permutations((magic, crest, plain)))[:5]
    stories = [_story(_restacked(root, order, top, 13), 0.1 * i) for i, order in enumerate(orders)]
    return root, stories


def _wizards_on(state: GameState, space: int) -> bool:
    return any(p >> 4 == space for p in state.wizards)


def test_stories_that_differ_in_hidden_towers_are_asked_as_the_towers_under_the_top() -> None:
    root, stories = _hidden_stories()
    picked = pick_question(stories, root, TrackerOptions())
    assert picked is not None, "five hidden orders of one stack were never asked about"
    text, options, groups, kind = picked
    assert kind == "hidden"
    assert text == "What is under the towers now?"
    assert len(options) <= CHOICES
    assert len(set(options)) == len(options), options
    # every option names the towers of space 13 from the bottom, the likeliest first
    assert options[0] == "space 13 from the bottom: magic, crest, plain, crest"
    assert options[1] == "space 13 from the bottom: magic, plain, crest, crest"
    assert options[-1].startswith("something else: ")
    # no story is left out of the question: one of its options holds the truth
    asked = [h for g in groups for h in g]
    assert sorted(h.cost for h in asked) == sorted(h.cost for h in stories)


def test_stories_kept_apart_by_hidden_towers_are_not_all_worded_as_shown() -> None:
    root, stories = _hidden_stories()
    picked = pick_question(stories[:2], root, TrackerOptions())
    assert picked is not None
    _, options, _, _ = picked
    assert "as shown" not in options
    assert len(options) == 2 and options[0] != options[1]


def test_options_worded_alike_are_one_option() -> None:
    root, stories = _hidden_stories()
    groups, words = distinct([[stories[0]], [stories[1]], [stories[2]]], ["a", "b", "a"])
    assert words == ["a", "b"]
    assert [[h.cost for h in g] for g in groups] == [[0.0, 0.2], [0.1]]
