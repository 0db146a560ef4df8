"""Magic Fountain (R-MOD-FOUNTAIN): a wizard ending its move on a fountain fills a potion
(R-MOD-FOUNTAIN-2; *Fountain Abundance*, R-SPELLX-5)."""

from __future__ import annotations

from companion.rules.board import event as _ev
from companion.rules.expansion.common import ModulePieces


def beneficiary(w: ModulePieces, wi: int) -> int:
    """Who gets a fountain / magic tower benefit for wizard ``wi`` (OPEN-20), -1 = nobody."""
    owner = w.tb.wizard_owner[wi]
    if owner == w.mover or w.tb.config.options["owner_benefits_when_moved"]:
        return owner
    return -1


def fountain_effect(w: ModulePieces, seat: int) -> None:
    """R-MOD-FOUNTAIN-2 (twice with an armed *Fountain Abundance*, R-SPELLX-5)."""
    times = 1
    key = (seat, "fountain_abundance")
    if key in w.armed:
        armed = list(w.armed)
        armed.remove(key)
        w.armed = tuple(armed)
        times = 2
    colour = w.tb.colours[seat]
    for _ in range(times):
        f, e, sp = w.potions[seat]
        if e:
            w.set_potion(seat, (f + 1, e - 1, sp))
            w.ev.append(_ev("potion_filled", {"player": colour, "reason": "fountain"}))
        elif sp:
            w.set_potion(seat, (f + 1, e, sp - 1))
            w.ev.append(_ev("potion_restored", {"player": colour, "reason": "fountain"}))
        else:
            w.ev.append(_ev("fountain_no_effect", {"player": colour}))
