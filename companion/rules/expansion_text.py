"""Sentences for the expansion's actions and events (§16-§23), used by
:mod:`companion.rules.text` (``describe_action`` / ``describe_event``)."""

from __future__ import annotations

from typing import Any

from companion.rules.actions import Event, Feather

EXPANSION_SPELL_NAMES: dict[str, str] = {
    "wizard_control": "Wizard Control",
    "wizard_sprint": "Wizard Sprint",
    "tower_sprint": "Tower Sprint",
    "fountain_abundance": "Fountain Abundance",
    "precise_landing": "Precise Landing",
    "witch_control": "Witch Control",
    "summon_raven": "Summon the Raven",
    "fly_to_magic_tower": "Fly to the Magic Tower",
}
"""English names of the eight expansion spells (R-SPELLX; S1 巫师操纵 … 飞向魔塔)."""


def describe_feather(action: Feather) -> str:
    """One sentence for a :class:`Feather` action (R-MOD-RAVEN-6)."""
    if action.use == "extra_card":
        return f"{action.player} spends feathers to play a third card"
    if action.use == "free_spell":
        return f"{action.player} spends feathers for a free spell"
    return (
        f"{action.player} spends feathers to move {action.wizard} {action.steps} "
        f"space{'' if action.steps == 1 else 's'} clockwise"
    )


def _players(names: Any) -> str:
    out = [str(n) for n in names]
    if len(out) <= 1:
        return "".join(out) or "nobody"
    return ", ".join(out[:-1]) + " and " + out[-1]


def describe_module_event(event: Event) -> str | None:
    """One sentence for an expansion event, or None for other kinds."""
    d = event.data
    k = event.kind
    if k == "web_bounce":
        return (
            f"the {d['piece']} hits the web on space {d['at']} and goes {d['extra_steps']} further"
        )
    if k in ("witch_moved", "raven_moved"):
        name = k.split("_")[0]
        return f"the {name} moves from space {d['from']} to space {d['to']}"
    if k in ("witch_skips_castle", "raven_skips_castle"):
        return f"the {k.split('_')[0]} cannot enter the raven castle and moves one space further"
    if k == "witch_effect":
        return f"the witch reaches {_players(d['players'])} on space {d['space']}"
    if k == "raven_effect":
        return f"the raven visits {_players(d['players'])} on space {d['space']}"
    if k == "potion_emptied":
        return f"the witch empties a full potion of {d['player']}"
    if k == "witch_no_effect":
        return f"the witch finds no full potion of {d['player']}"
    if k == "witch_vial_taken":
        return f"{d['player']} has no potion left and takes an empty witch vial"
    if k == "witch_vial_emptied":
        return f"the witch empties a witch vial of {d['player']}"
    if k == "witch_vial_filled":
        return f"{d['player']} fills a witch vial by sealing the witch"
    if k == "witch_sealed":
        return f"the witch is sealed under a tower on space {d['space']}"
    if k == "witch_revealed":
        return f"the witch is free again on space {d['space']}"
    if k == "witch_released":
        return f"the tower on space {d['space']} is lifted: the witch was under it"
    if k == "witch_guess_wrong":
        return f"the witch is not under the tower on space {d['space']}: the turn ends"
    if k == "witch_blocked":
        return f"{d['player']} spends a feather against the witch"
    if k == "fountain_no_effect":
        return f"the fountain has nothing to fill for {d['player']}"
    if k == "potion_restored":
        return f"the fountain gives {d['player']} a spent potion back, full"
    if k == "raven_popped_up":
        return f"the raven flies up onto the landing tower on space {d['space']}"
    if k == "feather_gained":
        return f"{d['player']} gains a feather"
    if k == "feather_cap_reached":
        return f"{d['player']} already holds the most feathers"
    if k == "feather_spent":
        return f"{d['player']} spends {d['count']} feather(s)"
    if k == "extra_card_allowed":
        return f"{d['player']} may play a third card this turn"
    if k == "magic_tower_free_spell":
        return f"{d['player']} may cast one spell for free (magic tower)"
    if k == "spell_armed":
        return f"{d['player']}'s {EXPANSION_SPELL_NAMES.get(d['spell'], d['spell'])} is ready"
    if k == "illegal_tower_lift":
        return f"the tower lifted on space {d['space']} cannot move there: the turn ends"
    return None
