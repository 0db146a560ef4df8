"""Magic Tower (R-MOD-MAGICTOWER): where it stands and the *Fly to the Magic Tower* spell
(R-SPELLX-9)."""

from __future__ import annotations

from companion.rules import board
from companion.rules.actions import IllegalAction
from companion.rules.board import event as _ev
from companion.rules.expansion.arrival import wizard_arrives
from companion.rules.expansion.common import ModulePieces
from companion.rules.model import MAX_ON_TOP, space_of, tier_of


def _magic_tower_space(w: ModulePieces) -> int:
    for i, stk in enumerate(w.stacks):
        if stk and w.tb.tower_magic[stk[-1]]:
            return i + 1
    raise IllegalAction("there is no magic tower in this game", "R-SPELLX-9")


def fly_to_tower(w: ModulePieces, wi: int) -> bool:
    """R-SPELLX-9: the caster's visible wizard onto the magic tower's roof; returns True when
    the castle stands there and the wizard enters it."""
    tb = w.tb
    ids = tb.wizard_ids
    p = w.wiz[wi]
    if p == 0 or tier_of(p) != len(w.stacks[space_of(p) - 1]):
        raise IllegalAction(f"{ids[wi]} is not a visible wizard on the board", "R-SPELLX-9")
    s = space_of(p)
    dest = _magic_tower_space(w)
    if dest == s:
        raise IllegalAction(f"{ids[wi]} already stands on the magic tower", "R-SPELLX-9")
    if dest == w.castle:
        w.wiz = w.wiz[:wi] + (0,) + w.wiz[wi + 1 :]
        w.ev.append(
            _ev("wizard_moved", {"wizard": ids[wi], "from": s, "to": dest, "into_castle": True})
        )
        w.ev.append(_ev("castle_entered", {"wizard": ids[wi]}))
        board.relocate_castle(w)
        return True
    code = w.top(dest)
    if w.wiz.count(code) >= MAX_ON_TOP:
        raise IllegalAction(f"the magic tower's roof already holds {MAX_ON_TOP}", "R-WIZ-4")
    w.wiz = w.wiz[:wi] + (code,) + w.wiz[wi + 1 :]
    w.ev.append(
        _ev("wizard_moved", {"wizard": ids[wi], "from": s, "to": dest, "tier": tier_of(code)})
    )
    wizard_arrives(w, wi, code)
    return False
