"""The Princess and Magic Tile (S3): steps, the princess, passages, GOAL, end, scoring (G3-…)."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.packs import PackError
from companion.packs.princess import (
    GOAL_SPACE,
    BonusCard,
    Element,
    EndCheck,
    MajorityTies,
    Overtake,
    PassageUse,
    PlayerEnd,
    Track,
    TrackSettings,
    carried_steps,
    declaration_steps,
    majority_points,
    score_sheet,
    spirit_points,
)

PROPS = settings(max_examples=60, derandomize=True, deadline=None)


def _track(
    carrier: str | None = None, settings: TrackSettings | None = None, **spaces: int
) -> Track:
    return Track(
        positions=MappingProxyType(spaces),
        carrier=carrier,
        settings=settings or TrackSettings(),
    )


def test_declaration_of_three_cards_is_2_2_3_plus_2() -> None:
    """G3-STEP-1, the seed's example: 2 + 2 + 3 + (3 - 1) = 9."""
    assert declaration_steps([2, 2, 3]) == 9
    assert declaration_steps([4]) == 4


@pytest.mark.parametrize("cards", [[], [2, 2, 2, 2, 2, 2], [0], [10]])
def test_impossible_declarations_are_refused(cards: list[int]) -> None:
    with pytest.raises(PackError, match=r"^card_steps: G3-STEP-1"):
        declaration_steps(cards)


def test_the_carrier_loses_two_steps_but_never_below_one() -> None:
    """G3-STEP-2: 4 -> 2 and a 2-step rune still gives 1."""
    assert carried_steps(4) == 2
    assert carried_steps(2) == 1
    assert carried_steps(1) == 1
    track, move = _track("red", red=15, blue=9).advance("red", 4)
    assert (move.walked, move.penalised, track.position("red")) == (2, True, 17)
    assert track.carrier == "red"


def test_red_on_23_with_5_steps_moves_3_and_scores_11() -> None:
    """G3-STEP-2 and G3-STEP-4, the seed's example: 5 - 2 = 3 steps; 2 reach GOAL, first
    place 10 plus the 1 excess step."""
    track, move = _track("red", red=23, blue=18).advance("red", 5)
    assert move.walked == 3
    assert (move.end, move.place, move.score) == (GOAL_SPACE, 1, 11)
    assert track.arrivals == ("red",) and track.goal_scores == {"red": 11}
    assert track.rescued and track.carrier is None and track.princess_space is None
    _, move = track.advance("blue", 9)  # rescued: no penalty; second place 5 + 2
    assert (move.walked, move.penalised, move.place, move.score) == (9, False, 2, 7)


def test_passing_the_princess_costs_two_but_never_ends_behind_her() -> None:
    """G3-STEP-2: she waits on 13; a move past her loses 2 steps, stops on her at worst."""
    track, move = _track(red=12, blue=5).advance("red", 3)
    assert (move.end, move.penalised, track.carrier) == (13, True, None)
    track, move = _track(red=10, blue=5).advance("red", 6)
    assert (move.end, track.carrier) == (14, "red")
    track, move = _track(red=5, blue=5).advance("red", 8)  # reaches 13 exactly: no cost
    assert (move.end, move.penalised, track.carrier) == (13, False, None)


def test_landing_on_13_carries_her_only_with_the_setting() -> None:
    """G3-STEP-2: "after advancing to space 13" read as "past 13" by default."""
    track, _ = _track(red=10, blue=5).advance("red", 3)
    assert (track.position("red"), track.carrier) == (13, None)
    on_13 = TrackSettings(carry_on_13=True)
    track, _ = _track(None, on_13, red=10, blue=5).advance("red", 3)
    assert track.carrier == "red"
    track, move = track.advance("red", 4)
    assert (move.walked, move.penalised) == (2, True)


def test_overtaking_the_carrier_follows_the_setting() -> None:
    """G3-STEP-2 unclear part: by default the overtaker pays 2 and takes the princess."""
    track, move = _track("red", red=16, blue=14).advance("blue", 5)
    assert (move.end, move.penalised, track.carrier) == (17, True, "blue")
    tied, move = _track("red", red=16, blue=14).advance("blue", 4)
    assert (move.end, tied.carrier) == (16, "red")  # a tie: who got there first keeps her
    free = TrackSettings(overtake=Overtake.FREE)
    track, move = _track("red", free, red=16, blue=14).advance("blue", 5)
    assert (move.end, move.penalised, track.carrier) == (19, False, "blue")


def test_secret_passages_open_once_someone_reaches_20() -> None:
    """G3-STEP-3: 8 -> 12 and 10 -> 14, closed before anyone reaches 20."""
    track = _track("red", red=18, blue=6)
    _, move = track.advance("blue", 2)
    assert (move.end, move.passage) == (8, False)
    opened, _ = track.advance("red", 4)
    assert opened.passages_open
    taken, move = opened.advance("blue", 2)
    assert (move.end, move.passage, taken.position("blue")) == (12, True, 12)
    passing = TrackSettings(passage_use=PassageUse.PASS)
    track = _track("red", passing, red=21, blue=6)
    track = Track(track.positions, "red", True, settings=passing)
    _, move = track.advance("blue", 4)  # 6 -> 8, passage to 12, 2 more
    assert (move.end, move.passage) == (14, True)


def test_bad_steps_and_players_are_refused_and_the_track_is_unchanged() -> None:
    track = Track.start(["red", "blue"])
    with pytest.raises(PackError, match=r"^steps: G3-STEP-1"):
        track.advance("red", 40)
    with pytest.raises(PackError, match=r"^steps: G3-STEP-1"):
        track.advance("red", 0)
    with pytest.raises(PackError, match=r"^player: G3-STEP-1"):
        track.advance("pink", 3)
    assert track == Track.start(["red", "blue"])
    done, _ = _track(None, red=24, blue=3).advance("red", 3)
    with pytest.raises(PackError, match=r"^player: G3-STEP-4"):
        done.advance("red", 2)
    with pytest.raises(PackError, match=r"^players: G3-COMP-1"):
        Track.start(["red"])


def test_after_the_first_arrival_everyone_else_plays_once_more() -> None:
    """G3-END-1."""
    check = EndCheck(("a", "b", "c"))
    check = check.end_of_turn("a", reached_goal=False, tiles_left=20)
    check = check.end_of_turn("b", reached_goal=True, tiles_left=19)
    assert check.final_turns == ("c", "a") and not check.over
    with pytest.raises(PackError, match=r"^player: G3-END-1"):
        check.end_of_turn("a", reached_goal=False, tiles_left=18)
    check = check.end_of_turn("c", reached_goal=False, tiles_left=18)
    check = check.end_of_turn("a", reached_goal=True, tiles_left=17)
    assert check.over and check.rescued
    with pytest.raises(PackError, match=r"^player: G3-END-1: the game is already over"):
        check.end_of_turn("b", reached_goal=False, tiles_left=17)


def test_running_out_of_tiles_ends_the_game_unrescued() -> None:
    """G3-END-2: the game ends after the current turn; scoring still follows."""
    check = EndCheck(("a", "b")).end_of_turn("a", reached_goal=False, tiles_left=0)
    assert check.over and not check.rescued
    with pytest.raises(PackError, match=r"^tiles_left: G3-END-2"):
        EndCheck(("a", "b")).end_of_turn("a", reached_goal=False, tiles_left=-1)


# The seed's scoring example (G3-SCORE-3, G3-SCORE-6): all spirit cards used up; bonus cards
# "most fire +3" and "fewest water +3".
HOMURA = PlayerEnd(
    "Homura",
    goal_score=5 + 3,
    tiles={Element.MOON: 7, Element.STAR: 1, Element.SUN: 3, Element.FIRE: 5, Element.WATER: 2},
    spirit_uses=(0, 0),
)
MADOKA = PlayerEnd(
    "Madoka",
    goal_score=10 + 1,
    tiles={Element.MOON: 3, Element.STAR: 7, Element.SUN: 4, Element.FIRE: 2, Element.WATER: 8},
    spirit_uses=(0, 0),
)
TOMOE = PlayerEnd(
    "Tomoe",
    space=23,
    tiles={Element.MOON: 5, Element.STAR: 6, Element.SUN: 3, Element.FIRE: 2, Element.WATER: 2},
    spirit_uses=(0, 0),
)
BONUS = (BonusCard(Element.FIRE, most=True), BonusCard(Element.WATER, most=False))


def test_sky_majorities_of_homura_madoka_tomoe() -> None:
    """G3-SCORE-3: moon Homura 5 Tomoe 2; star Madoka 5 Tomoe 2; sun Madoka 5, Homura and
    Tomoe 2 each (a tie for second)."""
    players = (HOMURA, MADOKA, TOMOE)

    def kind(element: Element) -> dict[str, int]:
        return majority_points({p.name: p.tiles[element] for p in players})

    assert kind(Element.MOON) == {"Homura": 5, "Madoka": 0, "Tomoe": 2}
    assert kind(Element.STAR) == {"Homura": 0, "Madoka": 5, "Tomoe": 2}
    assert kind(Element.SUN) == {"Homura": 2, "Madoka": 5, "Tomoe": 2}


def test_the_seeds_scoring_example_is_21_21_7() -> None:
    """G3-SCORE-6: Madoka 10 + 1 + 5 + 5 = 21; Homura 5 + 3 + 5 + 2 + 3 + 3 = 21;
    Tomoe -2 + 2 + 2 + 2 + 3 = 7; Madoka and Homura both win."""
    sheet = score_sheet([MADOKA, HOMURA, TOMOE], BONUS)
    assert [sheet.total(n) for n in ("Madoka", "Homura", "Tomoe")] == [21, 21, 7]
    assert sheet.row("Tomoe").track == -2
    assert sheet.row("Homura").bonus == 6
    assert sheet.winners == ("Madoka", "Homura")
    with pytest.raises(PackError, match=r"^name: G3-SCORE-1: 'Sayaka' is not on the sheet"):
        sheet.total("Sayaka")
    first_game = score_sheet([MADOKA, HOMURA, TOMOE], majority=False)
    assert [r.majority for r in first_game.rows] == [0, 0, 0]


def test_two_players_only_the_most_scores_3() -> None:
    """G3-SCORE-3, 2-player rule; ties share."""
    assert majority_points({"a": 4, "b": 2}) == {"a": 3, "b": 0}
    assert majority_points({"a": 4, "b": 4}) == {"a": 3, "b": 3}


def test_a_tie_for_the_most_and_second_place_follow_the_setting() -> None:
    counts = {"a": 5, "b": 5, "c": 3}
    assert majority_points(counts) == {"a": 5, "b": 5, "c": 2}
    assert majority_points(counts, MajorityTies.SKIP) == {"a": 5, "b": 5, "c": 0}
    assert majority_points({"a": 0, "b": 0, "c": 0}) == {"a": 0, "b": 0, "c": 0}


def test_spirit_cards_score_twice_their_uses_left() -> None:
    """G3-SCORE-4: an unused card is worth 4."""
    assert spirit_points((2, 2)) == 8
    assert spirit_points((2, 0)) == 4
    with pytest.raises(PackError, match=r"^spirit_uses: G3-SCORE-4"):
        spirit_points((3,))


def test_track_values_are_a_setting_with_the_printed_23() -> None:
    """G3-SCORE-2: only 23 -> -2 is printed; other spaces default to their distance to GOAL
    and the caller passes the printed values."""
    default = TrackSettings()
    assert default.track_value(23) == -2
    assert default.track_value(20) == -5
    printed = TrackSettings(track_values={23: -2, 20: -4})
    assert printed.track_value(20) == -4
    with pytest.raises(PackError, match=r"^space: G3-SCORE-2"):
        default.track_value(25)


@PROPS
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(1, 12)), max_size=30))
def test_cubes_only_go_forward_and_the_carrier_leads(moves: list[tuple[str, int]]) -> None:
    track = Track.start(["a", "b", "c"])
    for player, steps in moves:
        if player in track.arrivals:
            continue
        before = track.position(player)
        track, move = track.advance(player, steps)
        assert before < track.position(player) <= GOAL_SPACE
        assert move.walked >= 1
        if track.carrier is not None:
            assert track.position(track.carrier) == max(track.positions.values())
            assert track.position(track.carrier) > 13
