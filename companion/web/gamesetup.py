"""The host's "new game" form: the choices it offers and the check of what comes back.

The page fetches :func:`setup_choices` from ``GET /api/setup-choices``; services check the
``setup`` command with :func:`parse_setup` (the fake does), so the form and the check never
disagree. The rules themselves (R-COMP-2
colour limits, R-TEAM-1 team sizes, spell lists, OPEN-nn options) are the rules core's: this
module only reads its constants and lets :class:`companion.rules.Config` validate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import get_args

from companion.rules import (
    BASE_SPELLS,
    COLOURS,
    DEFAULT_OPTIONS,
    EXPANSION_SPELLS,
    MEMORY_AIDS,
    MODULES,
    SETUP_COUNTS,
    WIZARDS_PER_COLOUR,
    Config,
)
from companion.web.service import Command, CommandError, MemoryAid

OPTION_LABELS: Mapping[str, str] = {
    "swap_any_distance": "OPEN-02 Swap a Tower between any two stacks",
    "free_wizard_full_top_illegal": "OPEN-03 Free a Wizard is illegal onto a top with 6 wizards",
    "piggyback_both_count": "OPEN-04 both piggyback wizards count for the 6-wizard limit",
    "piggyback_castle_moves_once": "OPEN-04 a double castle entry moves the castle once",
    "others_entry_moves_castle": "OPEN-05 another player's wizard entering moves the castle",
    "team_exchanges_per_turn": "OPEN-06 team card exchanges per turn (empty = unlimited)",
    "team_round_completion": "OPEN-06 teams finish the round at the game's end",
    "deadlock_end": "OPEN-07 all wizards in the castle and nobody qualifies: game ends",
    "solo_card_limit": "OPEN-08 solo: card limit",
    "solo_potions_full": "OPEN-08 solo: potions start full",
    "solo_fill_potions": "OPEN-08 solo: trapping fills potions",
    "solo_spell_count": "OPEN-08 solo: spells on display",
    "master_spell_count": "R-MASTER-1 spells drawn for the master variant",
    "redraw_push_optional": "R-TURN-5 the redraw push is optional",
    "discard_playable_second_card": "R-TURN-3 a playable 2nd card may be discarded",
    "keep_second_card": "OPEN-24 a player may stop after one action keeping the card",
    "target_after_roll": "OPEN-22 die cards: choose the target after rolling",
    "free_wizard_counts_as_cast": "OPEN-25 Free a Wizard uses up the spell allowance",
    "colour_limits": "R-COMP-2 colours limited by their wizard counts",
}
"""Host-form labels of the rules core's options (rule or OPEN id first)."""

MAX_SETUP_FIELD = 64


@dataclass(frozen=True, slots=True)
class SetupChoice:
    """A checked ``setup`` command: the rules :class:`~companion.rules.Config` and the
    memory-aid mode (``off`` / ``own`` / ``all``) the players' pages use."""

    config: Config
    memory_aid: MemoryAid

    def to_json(self) -> dict[str, object]:
        c = self.config
        return {
            "players": c.player_count,
            "colours": list(c.colours or ()),
            "variant": c.variant,
            "teams": c.teams,
            "modules": sorted(c.modules),
            "spells": None if c.spells is None else list(c.spells),
            "memory_aid": self.memory_aid,
            "options": dict(c.options),
        }


def allowed_colours(players: int) -> list[str]:
    """R-COMP-2: colours with enough wizards for ``players`` (solo: any colour)."""
    if players == 1:
        return list(COLOURS)
    need = SETUP_COUNTS[players][0]
    return [c for c in COLOURS if WIZARDS_PER_COLOUR[c] >= need]


def setup_choices() -> dict[str, object]:
    """What the host's form offers (``host.setup.choices`` of the snapshot)."""
    return {
        "players": [1, 2, 3, 4, 5, 6],
        "allowed_colours": {str(n): allowed_colours(n) for n in range(1, 7)},
        "team_players": [4, 6],
        "variants": ["base", "master"],
        "modules": list(MODULES),
        "spells": list(BASE_SPELLS) + list(EXPANSION_SPELLS),
        "memory_aid": list(MEMORY_AIDS),
        "options": {
            name: {"default": DEFAULT_OPTIONS[name], "label": label}
            for name, label in OPTION_LABELS.items()
            if name in DEFAULT_OPTIONS
        },
    }


def memory_aid_of(value: object) -> MemoryAid | None:
    """The memory-aid mode ``value`` names (``off`` / ``own`` / ``all``), None for anything else."""
    for aid in get_args(MemoryAid):
        if value == aid:
            mode: MemoryAid = aid
            return mode
    return None


def _str_list(value: object, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CommandError(f"{field}: expected a list of names")
    if len(value) > MAX_SETUP_FIELD:
        raise CommandError(f"{field}: too many entries")
    return tuple(value)


def parse_setup(command: Command) -> SetupChoice:
    """Check a ``setup`` command and build the game's configuration.

    Fields: ``players`` 1..6, ``colours`` (seat order, start player first; default: the first
    allowed ones), ``variant`` ``base``/``master``, ``teams`` bool, ``modules`` list,
    ``spells`` list or null (= as the rules say), ``memory_aid``, ``options`` {name: value}.

    :raises CommandError: naming the first bad field (400); the rules core's own message for a
        choice it refuses (e.g. a colour with too few wizards, R-COMP-2).
    """
    known = {
        "command",
        "players",
        "colours",
        "variant",
        "teams",
        "modules",
        "spells",
        "memory_aid",
        "options",
    }
    extra = sorted(set(command) - known)
    if extra:
        raise CommandError(f"setup.{extra[0]}: unknown field")
    players = command.get("players", 3)
    if not isinstance(players, int) or isinstance(players, bool) or not 1 <= players <= 6:
        raise CommandError("setup.players: expected a whole number 1..6")
    colours_raw = command.get("colours")
    colours = None if colours_raw in (None, []) else _str_list(colours_raw, "setup.colours")
    variant = command.get("variant", "base")
    if not isinstance(variant, str) or variant not in ("base", "master"):
        raise CommandError("setup.variant: expected 'base' or 'master'")
    teams = command.get("teams", False)
    if not isinstance(teams, bool):
        raise CommandError("setup.teams: expected true or false")
    modules = _str_list(command.get("modules", []), "setup.modules")
    spells_raw = command.get("spells")
    spells = None if spells_raw is None else _str_list(spells_raw, "setup.spells")
    memory_aid = memory_aid_of(command.get("memory_aid", "own"))
    if memory_aid is None:
        raise CommandError(f"setup.memory_aid: expected one of {', '.join(MEMORY_AIDS)}")
    options = command.get("options", {})
    if not isinstance(options, Mapping):
        raise CommandError("setup.options: expected an object of option -> value")
    for name, value in options.items():
        if name not in DEFAULT_OPTIONS:
            raise CommandError(f"setup.options.{name}: unknown option")
        default = DEFAULT_OPTIONS[name]
        if isinstance(default, bool) and not isinstance(value, bool):
            raise CommandError(f"setup.options.{name}: expected true or false")
        if (isinstance(default, int) and not isinstance(default, bool)) or default is None:
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise CommandError(f"setup.options.{name}: expected a whole number")
            if value is None and default is not None:
                raise CommandError(f"setup.options.{name}: a number is needed")
            if isinstance(value, int) and not 0 <= value <= 1000:
                raise CommandError(f"setup.options.{name}: {value} is outside 0..1000")
    try:
        config = Config(
            player_count=players,
            variant=variant,
            teams=teams,
            colours=colours,
            modules=frozenset(modules),
            spells=spells,
            options=dict(options),
        )
    except (ValueError, TypeError) as exc:
        raise CommandError(str(exc)) from None
    return SetupChoice(config, memory_aid)
