"""Witch (R-MOD-WITCH): her moves on page cards, her effects on arrival, the witch guess and the
*Witch Control* spell (R-SPELLX-7)."""

from __future__ import annotations

from companion.rules import board
from companion.rules.actions import Cast, IllegalAction
from companion.rules.board import event as _ev
from companion.rules.expansion.common import ModulePieces
from companion.rules.expansion.web import token_dest
from companion.rules.model import position, space_of, tier_of


def witch_hit(w: ModulePieces, seat: int, why: str) -> None:
    """One witch effect on ``seat`` (R-MOD-WITCH-4/5/6/10, OPEN-18)."""
    tb = w.tb
    colour = tb.colours[seat]
    f, e, sp = w.potions[seat]
    vials = w.witch_vials
    assert vials is not None
    vf, ve, vs = vials[seat]
    if f == 0 and vf == 0:
        if e or ve:
            w.ev.append(_ev("witch_no_effect", {"player": colour, "reason": why}))
            return
        if not w.witch_vial_supply and tb.config.options["witch_vial_exhausted_no_effect"]:
            w.ev.append(_ev("witch_no_effect", {"player": colour, "reason": "no_vial_left"}))
            return
    if seat in w.protect:
        fe = w.feathers
        if fe is not None and fe[seat] > 0:
            w.spend_feathers(seat, 1, "witch_protect")
            w.ev.append(_ev("witch_blocked", {"player": colour, "reason": why}))
            return
        raise IllegalAction(f"{colour} has no feather to block the witch", "R-MOD-WITCH-10")
    if f:
        w.set_potion(seat, (f - 1, e + 1, sp))
        w.ev.append(_ev("potion_emptied", {"player": colour, "reason": why}))
    elif vf:
        w.set_vial(seat, (vf - 1, ve + 1, vs))
        w.ev.append(_ev("witch_vial_emptied", {"player": colour, "reason": why}))
    else:
        assert w.witch_vial_supply is not None
        w.witch_vial_supply = max(0, w.witch_vial_supply - 1)
        w.set_vial(seat, (vf, ve + 1, vs))
        w.ev.append(_ev("witch_vial_taken", {"player": colour, "reason": why}))


def _witch_arrives(w: ModulePieces, code: int) -> None:
    """The witch stops on top surface ``code``: effect A (R-MOD-WITCH-4, OPEN-21)."""
    for s in w.token_effect(code, "witch"):
        witch_hit(w, s, "witch_arrived")


def _move_witch(w: ModulePieces, steps: int = 1) -> None:
    """R-MOD-WITCH-2/3: the witch moves clockwise (1 space) from her space, effect A."""
    assert w.witch is not None
    frm = space_of(w.witch)
    tb = w.tb
    dest = (frm - 1 + steps) % tb.length + 1
    if dest == w.castle or tb.special[dest] == "web":
        dest = token_dest(w, "witch", frm, steps)
    code = position(dest, len(w.stacks[dest - 1]))
    w.witch = code
    w.ev.append(_ev("witch_moved", {"from": frm, "to": dest, "tier": tier_of(code)}))
    _witch_arrives(w, code)


def witch_page(w: ModulePieces, page: bool, guess: tuple[int, int] | None) -> bool:
    """A page card resolves the witch before the move (R-MOD-WITCH-2/9).

    :returns: False when the release guess was wrong (the turn ends; nothing else happens).
    """
    if not page and guess is None:
        return True
    if not page or w.witch is None:
        if guess is not None:
            raise IllegalAction("a witch guess belongs to a page card", "R-MOD-WITCH-9")
        return True
    code = w.witch
    space, tier = space_of(code), tier_of(code)
    sealed = tier < len(w.stacks[space - 1])
    if not sealed:
        if guess is not None:
            raise IllegalAction("the witch is not sealed; nothing to release", "R-MOD-WITCH-9")
        _move_witch(w)
        return True
    if not isinstance(guess, tuple) or len(guess) != 2:
        raise IllegalAction(
            "the witch is sealed: name the tower (space, tier) you lift to release her",
            "R-MOD-WITCH-9",
        )
    gs, gt = guess
    board.check_lift(w.tb, w.stacks, gs, gt)
    if code != position(gs, gt - 1):
        w.ev.append(_ev("witch_guess_wrong", {"space": gs, "tier": gt}))
        return False
    w.ev.append(_ev("witch_released", {"space": gs, "tier": gt}))
    _move_witch(w)
    return True


def cast_witch_control(w: ModulePieces, a: Cast) -> None:
    """R-SPELLX-7: the (unsealed) witch to any space but the castle's or a web; effect A."""
    tb = w.tb
    if w.witch is None:  # pragma: no cover - module spell needs the module
        raise IllegalAction("there is no witch", "R-SPELLX-7")
    code = w.witch
    if tier_of(code) < len(w.stacks[space_of(code) - 1]):
        raise IllegalAction("the witch is sealed; a page card releases her", "R-SPELLX-7")
    s = a.space
    if type(s) is not int or not 1 <= s <= tb.length:
        raise IllegalAction(f"there is no space {s!r} on the track", "R-SPELLX-7")
    if s == w.castle:
        raise IllegalAction("the witch cannot enter the raven castle", "R-MOD-WITCH-3")
    if tb.special[s] == "web":
        raise IllegalAction("nothing stays on a web", "R-MOD-WEB-3")
    if s == space_of(code):
        raise IllegalAction("the witch must move to another space", "R-SPELLX-7")
    new = w.top(s)
    w.ev.append(_ev("witch_moved", {"from": space_of(code), "to": s, "tier": tier_of(new)}))
    w.witch = new
    _witch_arrives(w, new)
