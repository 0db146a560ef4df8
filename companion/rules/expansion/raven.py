"""Raven (R-MOD-RAVEN): his moves on die cards and their timing, the feathers he gives, and the
*Summon the Raven* spell (R-SPELLX-8)."""

from __future__ import annotations

from companion.rules.actions import Cast, IllegalAction, MoveTower, MoveWizard, RavenTiming
from companion.rules.board import event as _ev
from companion.rules.expansion.common import ModulePieces
from companion.rules.expansion.web import token_dest
from companion.rules.model import position, space_of, tier_of


def raven_arrives(w: ModulePieces, code: int, why: str = "raven_arrived") -> None:
    """Effect A of the raven, also after popping up (R-MOD-RAVEN-3/7)."""
    for s in w.token_effect(code, "raven"):
        w.add_feather(s, why)


def move_raven(w: ModulePieces, steps: int) -> None:
    """R-MOD-RAVEN-2: the raven moves clockwise by the die value used, effect A."""
    assert w.raven is not None
    frm = space_of(w.raven)
    tb = w.tb
    dest = (frm - 1 + steps) % tb.length + 1
    if dest == w.castle or tb.special[dest] == "web":
        dest = token_dest(w, "raven", frm, steps)
    code = position(dest, len(w.stacks[dest - 1]))
    w.raven = code
    w.ev.append(_ev("raven_moved", {"from": frm, "to": dest, "tier": tier_of(code)}))
    raven_arrives(w, code)


def cast_summon_raven(w: ModulePieces, seat: int, a: Cast) -> None:
    """R-SPELLX-8: the raven to a space with one of the caster's visible wizards; effect A."""
    tb = w.tb
    s = a.space
    if type(s) is not int or not 1 <= s <= tb.length:
        raise IllegalAction(f"there is no space {s!r} on the track", "R-SPELLX-8")
    code = w.top(s)
    lo, hi = tb.wiz_range[seat]
    if code not in w.wiz[lo:hi]:
        raise IllegalAction(f"{tb.colours[seat]} has no visible wizard on space {s}", "R-SPELLX-8")
    assert w.raven is not None
    if code == w.raven:
        raise IllegalAction("the raven is already there", "R-SPELLX-8")
    w.ev.append(_ev("raven_moved", {"from": space_of(w.raven), "to": s, "tier": tier_of(code)}))
    w.raven = code
    raven_arrives(w, code)


def raven_timing_of(w: ModulePieces, a: MoveWizard | MoveTower) -> RavenTiming | None:
    """``before``/``after`` for a die card with the raven module, else None."""
    t = a.raven_timing
    if t is None and not a.card.dice:
        return None
    if t is not None and t not in ("before", "after"):
        raise IllegalAction("raven_timing is 'before' or 'after'", "R-MOD-RAVEN-2")
    if w.raven is None or not a.card.dice:
        if t is not None:
            raise IllegalAction("only a die card moves the raven", "R-MOD-RAVEN-2")
        return None
    return t or "after"
