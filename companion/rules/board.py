"""Low-level movement on the board: wizard steps, tower lifts, castle relocation, rewards.

These functions take the parts of a state (the static :class:`Table`, ``stacks``, ``wizards``,
``castle``, ``potions``), check the movement rules and return the new parts, appending
:class:`Event` values to ``ev``. They raise :class:`IllegalAction` before changing anything, so
the caller can compose several of them (repeated spells, piggyback) and still be atomic.
"""

from __future__ import annotations

from companion.rules.actions import Event, IllegalAction
from companion.rules.model import MAX_ON_TOP, Table

Stacks = tuple[tuple[int, ...], ...]
Wizards = tuple[int, ...]
Potions = tuple[tuple[int, int, int], ...]


def dest_space(length: int, space: int, steps: int) -> int:
    """``((space - 1 + steps) mod N) + 1``; negative steps go counter-clockwise (§0.4)."""
    return (space - 1 + steps) % length + 1


def wizard_move(
    tb: Table,
    stacks: Stacks,
    wiz: Wizards,
    castle: int,
    wi: int,
    steps: int,
    ev: list[Event],
    rider: int = -1,
    relocate: bool = True,
) -> tuple[Wizards, int, bool]:
    """Move visible wizard ``wi`` (and a piggyback ``rider``) ``steps`` spaces.

    ``relocate=False``: an entry does not move the castle (OPEN-05 switched off).

    :returns: ``(wizards, castle, entered)``; ``entered`` = the wizard went into the castle,
        which then relocated (R-WIZ-5/6, R-RAVEN-3).
    :raises IllegalAction: hidden or absent wizard (R-WIZ-1), full top (R-WIZ-4).
    """
    p = wiz[wi]
    ids = tb.wizard_ids
    if p == 0:
        raise IllegalAction(f"{ids[wi]} is already inside the raven castle", "R-WIZ-5")
    s = p >> 4
    if p & 15 != len(stacks[s - 1]):
        raise IllegalAction(f"{ids[wi]} is trapped under a tower and cannot move", "R-WIZ-1")
    dest = (s - 1 + steps) % tb.length + 1
    if dest == castle:
        new = 0
    else:
        hd = len(stacks[dest - 1])
        new = dest << 4 | hd
        need = 1
        if rider >= 0 and tb.config.options["piggyback_both_count"]:
            need = 2
        if wiz.count(new) + need > MAX_ON_TOP:
            raise IllegalAction(
                f"the top surface of space {dest} already holds {wiz.count(new)} wizards "
                f"(at most {MAX_ON_TOP})",
                "R-WIZ-4",
            )
    if rider >= 0:
        lst = list(wiz)
        lst[wi] = new
        lst[rider] = new
        wiz = tuple(lst)
    else:
        wiz = wiz[:wi] + (new,) + wiz[wi + 1 :]
    movers = (wi,) if rider < 0 else (wi, rider)
    for m in movers:
        if new:
            ev.append(Event("wizard_moved", {"wizard": ids[m], "from": s, "to": dest, "tier": hd}))
        else:
            ev.append(
                Event(
                    "wizard_moved", {"wizard": ids[m], "from": s, "to": dest, "into_castle": True}
                )
            )
    if new:
        return wiz, castle, False
    for i, m in enumerate(movers):
        ev.append(Event("castle_entered", {"wizard": ids[m]}))
        if relocate and (i == 0 or not tb.config.options["piggyback_castle_moves_once"]):
            castle = relocate_castle(tb, stacks, wiz, castle, ev)
    return wiz, castle, True


def relocate_castle(tb: Table, stacks: Stacks, wiz: Wizards, castle: int, ev: list[Event]) -> int:
    """R-RAVEN-3/4: the first space clockwise after the castle whose top surface shows a raven
    crest and holds no visible wizard; the castle stays when there is none."""
    length = tb.length
    crest_space = tb.crest_space
    tower_crest = tb.tower_crest
    for j in range(1, length):
        sp = (castle - 1 + j) % length + 1
        st = stacks[sp - 1]
        if st:
            if not tower_crest[st[-1]]:
                continue
        elif not crest_space[sp]:
            continue
        if (sp << 4 | len(st)) in wiz:
            continue
        ev.append(Event("castle_moved", {"from": castle, "to": sp, "tier": len(st)}))
        return sp
    ev.append(Event("castle_stays", {"at": castle}))
    return castle


def castle_nudge(
    tb: Table, stacks: Stacks, wiz: Wizards, castle: int, direction: int, ev: list[Event]
) -> int:
    """R-SPELL-10: the next space in ``direction`` (+1 cw, -1 ccw) whose top surface holds no
    visible wizard (no crest needed); fountain/web spaces are skipped (OPEN-11)."""
    length = tb.length
    special = tb.special
    for j in range(1, length):
        sp = (castle - 1 + direction * j) % length + 1
        if special[sp] is not None:
            continue
        if (sp << 4 | len(stacks[sp - 1])) in wiz:
            continue
        ev.append(Event("castle_moved", {"from": castle, "to": sp, "tier": len(stacks[sp - 1])}))
        return sp
    ev.append(Event("castle_stays", {"at": castle}))
    return castle


def check_lift(tb: Table, stacks: Stacks, space: object, tier: object) -> None:
    """:raises IllegalAction: when there is no tower ``tier`` on ``space`` (R-TOWER-2)."""
    if type(space) is not int or not 1 <= space <= tb.length:
        raise IllegalAction(f"there is no space {space!r} on the track", "R-TRACK-1")
    h = len(stacks[space - 1])
    if type(tier) is not int or not 1 <= tier <= h:
        raise IllegalAction(
            f"space {space} has {h} tower(s); there is no tower at tier {tier!r}", "R-TOWER-2"
        )


def tower_move(
    tb: Table,
    stacks: Stacks,
    wiz: Wizards,
    castle: int,
    s: int,
    k: int,
    steps: int,
    ev: list[Event],
) -> tuple[Stacks, Wizards, int, bool, int]:
    """Lift tower ``k`` on space ``s`` with everything above and put it ``steps`` away.

    Pieces of tier >= k travel along (R-TOWER-2/4), a castle on top rides (R-TOWER-6), pieces
    at tier k-1 are revealed (R-TOWER-7), visible wizards at the destination are trapped
    (R-TOWER-8).

    :returns: ``(stacks, wizards, castle, trapped_any, dest)``.
    :raises IllegalAction: no such tower (R-TOWER-2), destination is the castle's space
        (R-TOWER-5).
    """
    length = tb.length
    if type(s) is not int or not 1 <= s <= length:
        check_lift(tb, stacks, s, k)
    st = stacks[s - 1]
    if type(k) is not int or not 1 <= k <= len(st):
        check_lift(tb, stacks, s, k)
    dest = (s - 1 + steps) % length + 1
    if dest == castle and castle != s:
        raise IllegalAction(f"a tower may not end on the raven castle's space {dest}", "R-TOWER-5")
    dst = stacks[dest - 1]
    hd = len(dst)
    moved = st[k - 1 :]
    lst = list(stacks)
    lst[s - 1] = st[: k - 1]
    lst[dest - 1] = dst + moved
    new_stacks = tuple(lst)
    ids = tb.wizard_ids
    top_code = dest << 4 | hd
    lo = s << 4 | k
    hi = s << 4 | 15
    delta = ((dest - s) << 4) + hd - k + 1
    carried: list[int] = []
    for tier in range(k, len(st) + 1):
        if (lo - k + tier) in wiz:
            carried = [i for i, p in enumerate(wiz) if lo <= p <= hi]
            break
    new_wiz = tuple([p + delta if lo <= p <= hi else p for p in wiz]) if carried else wiz
    tower_ids = tb.tower_ids
    ev.append(
        Event(
            "tower_moved",
            {
                "towers": [tower_ids[t] for t in moved],
                "from": s,
                "tier": k,
                "to": dest,
                "carried_wizards": [ids[i] for i in carried],
                "carried_castle": castle == s,
            },
        )
    )
    reveal_code = s << 4 | (k - 1)
    if reveal_code in wiz:
        ev.append(
            Event(
                "wizards_revealed",
                {"space": s, "wizards": [ids[i] for i, p in enumerate(wiz) if p == reveal_code]},
            )
        )
    trapped = top_code in wiz
    if trapped:
        ev.append(
            Event(
                "wizards_trapped",
                {"space": dest, "wizards": [ids[i] for i, p in enumerate(wiz) if p == top_code]},
            )
        )
    if castle == s:
        castle = dest
    return new_stacks, new_wiz, castle, trapped, dest


def reward(tb: Table, potions: Potions, seat: int, ev: list[Event]) -> tuple[Potions, bool]:
    """R-TOWER-9: the mover fills one empty potion; with none left his partner's (R-TEAM-7).

    :returns: ``(potions, filled)``.
    """
    if tb.solo and not tb.config.options["solo_fill_potions"]:
        ev.append(Event("no_empty_potion", {"player": tb.colours[seat]}))
        return potions, False
    f, e, sp = potions[seat]
    target = seat
    if e == 0:
        partner = tb.partner[seat]
        if partner >= 0 and potions[partner][1] > 0:
            target = partner
            f, e, sp = potions[partner]
        else:
            ev.append(Event("no_empty_potion", {"player": tb.colours[seat]}))
            return potions, False
    potions = potions[:target] + ((f + 1, e - 1, sp),) + potions[target + 1 :]
    reason = "trapping" if target == seat else "trapping_for_partner"
    ev.append(Event("potion_filled", {"player": tb.colours[target], "reason": reason}))
    return potions, True
