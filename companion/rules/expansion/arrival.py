"""Arrival effects when a wizard ends its move, in the order of R-ORDER-1: witch, fountain,
raven, magic tower."""

from __future__ import annotations

from companion.rules.board import event as _ev
from companion.rules.expansion.common import ModulePieces
from companion.rules.expansion.fountain import beneficiary, fountain_effect
from companion.rules.expansion.witch import witch_hit
from companion.rules.model import space_of


def wizard_arrives(w: ModulePieces, wi: int, code: int) -> None:
    """A wizard ended its move on top surface ``code``: witch, fountain, raven, magic tower
    (R-ORDER-1; R-MOD-WITCH-5, R-MOD-FOUNTAIN-2, R-MOD-RAVEN-4, R-MOD-MAGICTOWER-5)."""
    tb = w.tb
    owner = tb.wizard_owner[wi]
    space = space_of(code)
    if w.witch == code:
        witch_hit(w, owner, "wizard_met_witch")
    if tb.special[space] == "fountain":
        who = beneficiary(w, wi)
        if who >= 0:
            fountain_effect(w, who)
    if w.raven == code:
        w.add_feather(owner, "wizard_met_raven")
    st = w.stacks[space - 1]
    if st and tb.tower_magic[st[-1]]:
        who = beneficiary(w, wi)
        if who >= 0:
            w.free_casts = w.free_casts + ((who, "magic_tower"),)
            w.ev.append(_ev("magic_tower_free_spell", {"player": tb.colours[who]}))
