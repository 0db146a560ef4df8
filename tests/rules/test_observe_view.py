"""What a camera sees (observe, state-model.md §3) and what one player may be shown (view)."""

from __future__ import annotations

import pytest

from companion.rules import MoveTower, Observation, apply, observe, view

from .conftest import T, position


def test_observe_reports_heights_tops_visible_wizards_and_the_castle():
    state, _ = apply(position(2), MoveTower("blue", 3, 1, 1, T[1]))  # P1 traps on R2
    obs = observe(state, time=12.5, frame=7)
    assert isinstance(obs, Observation) and obs.time == 12.5 and obs.frame == 7
    four = obs.spaces[4]
    assert (four.towers, four.top) == (2, "plain")
    assert dict(four.wizards) == {"blue": 1, "yellow": 2}, "B A B (seat B = yellow) from 3"
    assert obs.spaces[3].towers == 0 and obs.spaces[3].top == "plain-space"
    assert obs.spaces[1].castle and obs.spaces[1].top == "crest-space"
    assert obs.spaces[2].top == "crest" and len(obs.spaces) == 16
    # the observation satisfies the shared contract (validated JSON round trip)
    assert Observation.from_json(obs.to_json(), track_length=16) == obs


def test_observe_never_shows_hidden_wizards():
    state, _ = apply(position(2), MoveTower("blue", 3, 1, 1, T[1]))
    total_visible = sum(sum(s.wizards.values()) for s in observe(state).spaces.values())
    assert total_visible == 10 - 3, "the three wizards under P1 are hidden"


@pytest.mark.parametrize(
    ("aid", "blue_hidden_shown", "yellow_hidden_shown"),
    [("off", False, False), ("own", True, False), ("all", True, True)],
)
def test_view_memory_aid_controls_hidden_wizards(aid, blue_hidden_shown, yellow_hidden_shown):
    state, _ = apply(position(2), MoveTower("blue", 3, 1, 1, T[1]))  # traps A B A on space 4
    hidden = {w for w, _ in state.hidden_wizards(4)}
    shown = view(state, "blue", aid)
    blue_hidden = {w for w in hidden if w.startswith("blue")}
    yellow_hidden = {w for w in hidden if w.startswith("yellow")}
    assert (blue_hidden <= set(shown["wizards"])) == blue_hidden_shown
    assert (yellow_hidden <= set(shown["wizards"])) == yellow_hidden_shown
    assert sum(shown["trapped"].values()) == len(hidden) - len(hidden & set(shown["wizards"]))
    assert "hidden" not in shown  # no count per space


def test_view_shows_only_the_own_hand():
    state = position(2, seed=5)
    shown = view(state, "yellow", "own")
    assert len(shown["cards"]["hand"]) == 3 and "hands" not in shown["cards"]
    assert shown["cards"]["draw_size"] == 84 and shown["cards"]["hand_sizes"]["blue"] == 3
    with pytest.raises(ValueError, match="memory_aid"):
        view(state, "yellow", "peek")
    with pytest.raises(ValueError, match="player"):
        view(state, "pink")
