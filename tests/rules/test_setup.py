"""Setup (R-SETUP), components (R-COMP), the move deck (R-DECK) and the track (R-TRACK)."""

from __future__ import annotations

import pytest

from companion.rules import (
    DECK,
    Config,
    Track,
    dump_state,
    setup,
)

# R-SETUP-6 placement table, seat letters A.. = start player, then clockwise
PLACEMENT = {
    2: ["ABA", "BAB", "ABA", "B"],
    3: ["ABC", "ABC", "ABC", "AB", "C"],
    4: ["ABC", "DAB", "CDA", "BC", "DA", "BC", "D"],
    5: ["ABC", "DEA", "BCD", "EA", "BC", "DE"],
    6: ["ABC", "DEF", "ABC", "DE", "FA", "BC", "D", "E", "F"],
}


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_R_SETUP_6_wizard_placement_matches_the_rulebook_table(players):
    state = setup(Config(player_count=players))
    colours = state.table.colours
    for i, letters in enumerate(PLACEMENT[players]):
        space = 2 + i
        on_top = sorted(w.rsplit("-", 1)[0] for w in state.visible_wizards(space))
        expected = sorted(colours[ord(x) - ord("A")] for x in letters)
        assert on_top == expected, f"space {space}"
    for space in range(2 + len(PLACEMENT[players]), 17):
        assert state.visible_wizards(space) == ()
    assert all(p & 15 == 1 for p in state.wizards), "all wizards start at tier 1, visible"


def test_R_SETUP_1_and_3_castle_on_space_1_towers_alternate_from_a_crest_tower():
    state = setup(Config(player_count=4))
    assert state.castle == 1 and state.height(1) == 0
    assert [state.stack(s) for s in range(2, 11)] == [
        ("R1",),
        ("P1",),
        ("R2",),
        ("P2",),
        ("R3",),
        ("P3",),
        ("R4",),
        ("P4",),
        ("R5",),
    ]
    assert all(state.height(s) == 0 for s in range(11, 17))


@pytest.mark.parametrize(
    ("players", "wizards", "potions"), [(2, 5, 6), (3, 4, 5), (4, 4, 5), (5, 3, 4), (6, 3, 4)]
)
def test_R_SETUP_2_wizards_and_empty_potions_per_player(players, wizards, potions):
    state = setup(Config(player_count=players))
    for colour in state.table.colours:
        assert len([w for w in state.table.wizard_ids if w.startswith(colour + "-")]) == wizards
        assert state.potions_of(colour) == (0, potions, 0)


def test_R_COMP_2_colour_choice_limited_by_wizard_counts():
    assert Config(player_count=2).colours == ("blue", "yellow")
    assert Config(player_count=4).colours == ("blue", "yellow", "red", "green")
    with pytest.raises(ValueError, match="config.colours"):
        Config(player_count=2, colours=("blue", "red"))
    with pytest.raises(ValueError, match="R-COMP-2"):
        Config(player_count=4, colours=("blue", "yellow", "red", "orange"))
    assert Config(player_count=5, colours=("purple", "orange", "green", "red", "blue"))
    relaxed = Config(
        player_count=3, colours=("orange", "purple", "blue"), options={"colour_limits": False}
    )
    assert relaxed.colours == ("orange", "purple", "blue")


def test_R_DECK_1_ninety_cards_with_the_published_composition():
    assert sum(n for _, n in DECK) == 90
    wizard_only = sum(n for c, n in DECK if c.type == "wizard")
    tower_only = sum(n for c, n in DECK if c.type == "tower")
    either = sum(n for c, n in DECK if c.type == "either")
    assert (wizard_only, tower_only, either) == (24, 24, 42)
    assert sum(n for c, n in DECK if c.dice) == 14
    values = {v for c, _ in DECK for v in (c.wizard, c.tower) if v is not None}
    assert values == {1, 2, 3, 4, 5}, "no card shows a 6 (R-DECK-1)"


def test_R_SETUP_5_three_cards_dealt_to_each_player_rest_is_the_draw_pile():
    state = setup(Config(player_count=5), seed=11)
    assert state.cards is not None
    assert [len(h) for h in state.cards.hands] == [3] * 5
    assert len(state.cards.draw) == 90 - 15 and state.cards.discard == ()
    again = setup(Config(player_count=5), seed=11)
    assert again == state, "dealing is a pure function of the seed"
    assert setup(Config(player_count=5), seed=12).cards != state.cards


def test_R_SETUP_4_base_game_displays_two_spells_master_draws_the_agreed_number():
    assert setup(Config()).table.spells == ("advance_wizard", "advance_tower")
    master = setup(Config(variant="master", options={"master_spell_count": 4}), seed=3)
    assert len(master.table.spells) == 4
    assert len(setup(Config(variant="master")).table.spells) == 8


def test_R_TRACK_2_crest_spaces_are_1_5_9_13_and_any_track_is_accepted():
    state = setup(Config())
    obs = state.table.crest_space
    assert [s for s in range(1, 17) if obs[s]] == [1, 5, 9, 13]
    track = Track(18, frozenset({1, 5, 10, 14}), ((9, "fountain"), (18, "fountain")))
    big = setup(Config(player_count=3, track=track))
    assert big.table.length == 18
    assert big.stack(9) == () and big.stack(10) == ("P4",), "setup skips inserted tiles"
    with pytest.raises(ValueError, match="track.length"):
        Track(5)
    with pytest.raises(ValueError, match="R-SETUP-3"):
        setup(Config(track=Track(9, frozenset({1}))))


def test_R_SOLO_1_twelve_wizards_placed_3_3_3_2_1_with_full_potions():
    state = setup(Config(player_count=1))
    assert [len(state.visible_wizards(s)) for s in range(2, 8)] == [3, 3, 3, 2, 1, 0]
    assert state.potions_of("blue") == (6, 0, 0)
    assert len(state.table.spells) == 3


def test_R_MOD_GEN_2_module_spells_need_their_module_and_base_json_has_no_module_fields():
    with pytest.raises(ValueError, match=r"config.spells\[1\].*tower module"):
        setup(Config(spells=("free_wizard", "fly_to_magic_tower")))
    general = setup(Config(spells=("free_wizard", "tower_sprint")))
    assert general.table.spells == ("free_wizard", "tower_sprint")
    data = dump_state(setup(Config()))
    for key in ("witch", "raven", "witch_vials", "witch_vial_supply", "feathers", "module_turn"):
        assert data[key] is None
