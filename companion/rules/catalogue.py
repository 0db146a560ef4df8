"""The fixed numbers of the game (R-COMP, R-SETUP), the spells (R-SPELL, R-SPELLX), the
expansion modules, and every OPEN-nn default of the rules reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

WIZARDS_PER_COLOUR: Mapping[str, int] = {
    "blue": 5,
    "yellow": 5,
    "red": 4,
    "green": 4,
    "orange": 3,
    "purple": 3,
}
"""R-COMP-1: wooden wizards in the box per colour."""


SETUP_COUNTS: Mapping[int, tuple[int, int]] = {
    1: (12, 6),
    2: (5, 6),
    3: (4, 5),
    4: (4, 5),
    5: (3, 4),
    6: (3, 4),
}
"""player count -> (wizards each, potions each); R-SETUP-2, solo R-SOLO-1/3 (OPEN-08)."""


SETUP_CAPACITIES: tuple[int, ...] = (3, 3, 3, 2, 2, 2, 1, 1, 1)
"""R-SETUP-6: wizards per tower during setup, towers in order clockwise from the castle."""


MAX_ON_TOP = 6
"""R-WIZ-4: a top surface holds at most 6 visible wizards."""


BASE_SPELLS: tuple[str, ...] = (
    "advance_wizard",
    "advance_tower",
    "swap_tower",
    "headwind_wizard",
    "headwind_tower",
    "move_castle",
    "piggyback",
    "free_wizard",
)
"""The 8 base spells (R-SPELL table), in the rulebook's order."""


EXPANSION_SPELLS: Mapping[str, str | None] = {
    "wizard_control": None,
    "wizard_sprint": None,
    "tower_sprint": None,
    "fountain_abundance": "fountain",
    "precise_landing": "web",
    "witch_control": "witch",
    "summon_raven": "raven",
    "fly_to_magic_tower": "magic_tower",
}
"""R-SPELLX: expansion spell id -> module it needs (None = any); rules in
:mod:`companion.rules.expansion`."""


MODULES: tuple[str, ...] = ("fountain", "web", "witch", "raven", "magic_tower")
"""Expansion modules (R-MOD-*), in the order of R-SETUP-7 / R-ORDER-1."""


DEFAULT_SPELL_COSTS: Mapping[str, int] = {
    "advance_wizard": 2,
    "advance_tower": 1,
    "swap_tower": 1,  # OPEN-01
    "headwind_wizard": 2,
    "headwind_tower": 1,
    "move_castle": 2,
    "piggyback": 2,  # OPEN-01
    "free_wizard": 2,  # OPEN-01
    # OPEN-14 (expansion, §22)
    "wizard_control": 2,
    "wizard_sprint": 3,
    "tower_sprint": 2,
    "fountain_abundance": 1,
    "precise_landing": 1,
    "witch_control": 2,
    "summon_raven": 1,
    "fly_to_magic_tower": 2,
}
"""Spell costs in full potions (R-SPELL table; OPEN-01, OPEN-14)."""


DEFAULT_FEATHER_COSTS: Mapping[str, int] = {"extra_card": 1, "free_spell": 2, "move_wizard": 3}
"""R-MOD-RAVEN-6 feather costs (OPEN-13)."""


DEFAULT_OPTIONS: Mapping[str, Any] = {
    # OPEN-02: Swap a Tower between any two stacks (False: only with the stack 2 spaces clockwise)
    "swap_any_distance": True,
    # OPEN-03: Free a Wizard onto a top already holding 6 wizards is illegal; the freed wizard
    # goes on top of the whole stack (False: on the roof of the tower that trapped him, the
    # seed's literal words, which leaves him hidden when towers were stacked on it since)
    "free_wizard_full_top_illegal": True,
    "free_wizard_to_top_of_stack": True,
    # OPEN-04: both piggyback wizards count for capacity; a double entry moves the castle once
    "piggyback_both_count": True,
    "piggyback_castle_moves_once": True,
    # OPEN-05: an entry caused by another player (spell) moves the castle too
    "others_entry_moves_castle": True,
    # OPEN-06 team: card exchanges per turn (None = unlimited); round completion at the end
    "team_exchanges_per_turn": None,
    # OPEN-06 team: full potions change hands during either partner's turn (True: any turn)
    "team_potions_any_turn": False,
    "team_round_completion": True,
    # OPEN-07: deadlock (all wizards in the castle, nobody qualifies) ends the game at once
    "deadlock_end": True,
    # OPEN-08 solo (R-SOLO): card limit, potions start full, potions are never filled, spells
    "solo_card_limit": 30,
    "solo_potions_full": True,
    "solo_fill_potions": False,
    "solo_spell_count": 3,
    # R-MASTER-1: number of spells drawn for the master variant (8 = all)
    "master_spell_count": 8,
    # R-TURN-5 / BGA difference 5: the redraw push is optional
    "redraw_push_optional": True,
    # R-TURN-3 / FAQ: a playable card may be discarded as the 2nd action (never as the 1st)
    "discard_playable_second_card": True,
    # OPEN-24: a player may end the turn after one action keeping the 2nd card
    "keep_second_card": False,
    # OPEN-22: target chosen after rolling (the engine takes rolls with the action either way)
    "target_after_roll": True,
    # OPEN-25: an out-of-turn Free a Wizard uses up the caster's spell allowance
    "free_wizard_counts_as_cast": True,
    # R-COMP-2: colours limited by their wizard counts (BGA does not enforce it)
    "colour_limits": True,
    # Expansion OPEN defaults (rules of §16-§23 in companion.rules.expansion)
    # R-MOD-MAGICTOWER-1: spells on display with the magic tower (base timing)
    "magic_tower_spell_count": 5,
    # R-MOD-RAVEN-5: most feathers a player holds
    "max_feathers": 3,
    # R-MOD-WITCH-1: witch vials in the supply
    "witch_vials": 6,
    "expansion_lift_penalty": True,  # OPEN-23
    "fountain_web_crest": False,  # OPEN-11
    "castle_spell_may_stop_on_fountain": False,  # OPEN-11
    "magic_tower_crest": False,  # OPEN-15
    "tokens_ride_towers": True,  # OPEN-16
    "tokens_occupy_for_castle": True,  # OPEN-17
    "witch_vial_exhausted_no_effect": True,  # OPEN-18
    "web_continues_again": True,  # OPEN-19
    "owner_benefits_when_moved": True,  # OPEN-20
    "token_effects_visible_only": True,  # OPEN-21
    "module_setup_on_base_spaces": True,  # OPEN-26
}
"""Every OPEN-nn switch of the rules reference (§24) with its stated default."""
