"""Spider Web (R-MOD-WEB): a move that ends on a web continues by the same number of spaces
(R-MOD-WEB-2, OPEN-19), tokens bounce off webs (R-MOD-WEB-5), towers never stop on one
(R-MOD-WEB-3)."""

from __future__ import annotations

from companion.rules.actions import IllegalAction
from companion.rules.board import event as _ev
from companion.rules.expansion.common import MAX_BOUNCES, BadDestination, ModulePieces


def token_dest(w: ModulePieces, name: str, space: int, steps: int) -> int:
    """Where a token moving ``steps`` clockwise from ``space`` stops: it skips the castle's
    space (one more step) and bounces off webs by the distance actually travelled."""
    tb = w.tb
    length = tb.length
    seg = steps
    dest = (space - 1 + seg) % length + 1
    for _ in range(MAX_BOUNCES * 2):
        if dest == w.castle:
            w.ev.append(_ev(f"{name}_skips_castle", {"at": dest}))
            dest = dest % length + 1
            seg += 1
            continue
        if tb.special[dest] == "web":
            w.ev.append(_ev("web_bounce", {"piece": name, "at": dest, "extra_steps": seg}))
            dest = (dest - 1 + seg) % length + 1
            continue
        return dest
    raise IllegalAction(f"the {name} finds no space to stop", "R-MOD-WEB-2")


def web_path(w: ModulePieces, start: int, steps: int, piece: str, seg: int | None = None) -> int:
    """Final space of a move of ``steps`` from ``start`` with web continuation (R-MOD-WEB-2,
    OPEN-19); ``seg`` replaces the continuation length (*Precise Landing*)."""
    tb = w.tb
    length = tb.length
    special = tb.special
    dest = (start - 1 + steps) % length + 1
    if special[dest] != "web":
        return dest
    cont = steps if seg is None else (seg if steps > 0 else -seg)
    bounces = 0
    while special[dest] == "web":
        if bounces and not tb.config.options["web_continues_again"]:
            raise IllegalAction(f"the move would end on the web at {dest}", "R-MOD-WEB-3")
        bounces += 1
        if bounces > MAX_BOUNCES:
            raise IllegalAction("the move never leaves the webs", "R-MOD-WEB-2")
        w.ev.append(_ev("web_bounce", {"piece": piece, "at": dest, "extra_steps": abs(cont)}))
        dest = (dest - 1 + cont) % length + 1
    return dest


def tower_dest_check(w: ModulePieces, s: int, steps: int) -> int:
    """Final space of a tower move from ``s`` by ``steps`` after web continuation; raises
    :class:`_BadDestination` for the castle's space, a fountain, a web or the start."""
    tb = w.tb
    dest = web_path(w, s, steps, "tower")
    castle = w.castle
    if dest == s:
        raise BadDestination("the tower would end where it started", "R-MOD-WEB-2")
    if dest == castle and castle != s:
        raise BadDestination(f"a tower may not end on the raven castle's space {dest}", "R-TOWER-5")
    kind = tb.special[dest]
    if kind == "fountain":
        raise BadDestination(f"a tower may not end on the fountain {dest}", "R-MOD-FOUNTAIN-4")
    if kind == "web":
        raise BadDestination(f"a tower may not stay on the web {dest}", "R-MOD-WEB-3")
    return dest
