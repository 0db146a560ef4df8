"""Movement on the board, one path for the base game and the expansion: wizard steps, tower
lifts, castle relocation and nudges, rewards.

The movement functions work on :class:`Pieces`, a mutable working copy of one state's board
parts (``stacks``, ``wiz``, ``castle``, ``potions``) and its event list, made for one action
and never shared. They check the movement rules, change the copy and append :class:`Event`
values; they raise :class:`IllegalAction` before changing anything, so a caller composes
several of them (repeated spells, piggyback) and builds the new state from the copy.

The expansion (:mod:`companion.rules.expansion`) subclasses :class:`Pieces` with the module
pieces (witch, raven, feathers, witch vials) and sets ``mods``: the movement functions then
call its hooks at fixed points, so "move the pieces, then the effects in R-ORDER order"
happens in one place for every rule set:

* wizard move: :meth:`Pieces.wizard_dest` (web continuation, *Precise Landing*), capacity and
  castle entry (shared), :meth:`Pieces.arrive` (witch -> fountain -> raven -> magic tower,
  R-ORDER-1);
* tower move: :meth:`Pieces.tower_dest` (webs, illegal destinations), the lift (shared),
  :meth:`Pieces.lift_tokens` (tokens ride, OPEN-16), revealing and trapping (shared),
  :meth:`Pieces.seal` (witch sealed), :meth:`Pieces.reward` (one potion, R-TOWER-9),
  :meth:`Pieces.landed` (the raven pops up, R-ORDER-3);
* castle: :meth:`Pieces.occupied` (tokens occupy a top, OPEN-17) and the module crest tables
  of :class:`Table`.
"""

from __future__ import annotations

from companion.rules.actions import Event, IllegalAction
from companion.rules.model import MAX_ON_TOP, Table, position

Stacks = tuple[tuple[int, ...], ...]
Wizards = tuple[int, ...]
Potions = tuple[tuple[int, int, int], ...]

_tuple_new = tuple.__new__


def event(kind: str, data: dict[str, object]) -> Event:
    """``Event(kind, data)`` without the named-tuple constructor's overhead (hot path)."""
    e: Event = _tuple_new(Event, (kind, data))
    return e


def dest_space(length: int, space: int, steps: int) -> int:
    """``((space - 1 + steps) mod N) + 1``; negative steps go counter-clockwise (§0.4)."""
    return (space - 1 + steps) % length + 1


class Pieces:
    """The board parts of one state while an action is applied (mutable, never shared).

    :param tb: the game's :class:`Table`.
    :param stacks: per space (index ``space - 1``) tower indices bottom -> top.
    :param wiz: per wizard ``space << 4 | tier``, 0 = inside the castle.
    :param castle: the castle's space.
    :param potions: per seat ``(full, empty, spent)``.
    :param ev: the action's event list (appended to).

    ``mods`` is False for the base game; the expansion's subclass sets it and overrides the
    hooks (never called when ``mods`` is False).
    """

    __slots__ = ("tb", "stacks", "wiz", "castle", "potions", "ev")

    mods = False

    def __init__(
        self,
        tb: Table,
        stacks: Stacks,
        wiz: Wizards,
        castle: int,
        potions: Potions,
        ev: list[Event],
    ) -> None:
        self.tb = tb
        self.stacks = stacks
        self.wiz = wiz
        self.castle = castle
        self.potions = potions
        self.ev = ev

    # -- module hooks (the expansion overrides them) -----------------------------------------

    def wizard_dest(self, wi: int, s: int, steps: int, web_steps: object) -> int:
        """Final space of wizard ``wi`` moving ``steps`` from ``s`` (module rules)."""
        return dest_space(self.tb.length, s, steps)

    def arrive(self, movers: tuple[int, ...], code: int) -> None:
        """Wizards ``movers`` ended their move on top surface ``code`` (module effects)."""

    def tower_dest(self, s: int, steps: int, dest: int) -> int:
        """Final space of a tower moving ``steps`` from ``s``; raises for an illegal one."""
        return dest

    def lift_tokens(self, s: int, k: int, h: int, delta: int) -> list[str]:
        """Tokens on the lifted part (tiers ``k..h`` of ``s``) move by ``delta`` (codes)."""
        return []

    def reveal(self, s: int, tier: int) -> None:
        """Tier ``tier`` of ``s`` became the top surface (a tower was lifted off it)."""

    def seal(self, dest: int, hd: int) -> bool:
        """A tower landed on the top surface ``dest``/``hd``; True when it sealed a token."""
        return False

    def landed(self, dest: int, hd: int, moved: int) -> None:
        """``moved`` towers landed on tier ``hd`` of ``dest`` (after the reward)."""

    def occupied(self, code: int) -> bool:
        """A top surface the castle may not take (R-RAVEN-3)."""
        return code in self.wiz

    def reward(self, seat: int, trapped: bool, sealed: bool) -> bool:
        """R-TOWER-9: the mover fills one empty potion; with none left his partner's
        (R-TEAM-7). :returns: True when a potion was filled."""
        tb = self.tb
        ev = self.ev
        if tb.solo and not tb.config.options["solo_fill_potions"]:
            ev.append(event("no_empty_potion", {"player": tb.colours[seat]}))
            return False
        potions = self.potions
        f, e, sp = potions[seat]
        target = seat
        if e == 0:
            partner = tb.partner[seat]
            if partner >= 0 and potions[partner][1] > 0:
                target = partner
                f, e, sp = potions[partner]
            else:
                ev.append(event("no_empty_potion", {"player": tb.colours[seat]}))
                return False
        self.potions = potions[:target] + ((f + 1, e - 1, sp),) + potions[target + 1 :]
        reason = "trapping" if target == seat else "trapping_for_partner"
        data = {"player": tb.colours[target], "reason": reason}
        ev.append(_tuple_new(Event, ("potion_filled", data)))
        return True


def wizard_move(
    p: Pieces,
    wi: int,
    steps: int,
    rider: int = -1,
    relocate: bool = True,
    web_steps: object = None,
) -> bool:
    """Move visible wizard ``wi`` (and a piggyback ``rider``) ``steps`` spaces.

    ``relocate=False``: an entry does not move the castle (OPEN-05 switched off).
    ``web_steps``: the continuation chosen under *Precise Landing* (modules, R-SPELLX-6).

    :returns: True when the wizard went into the castle, which then relocated (R-WIZ-5/6,
        R-RAVEN-3).
    :raises IllegalAction: hidden or absent wizard (R-WIZ-1), full top (R-WIZ-4); with modules
        also a move that never leaves the webs or ends where it started (R-MOD-WEB-2/3).
    """
    wiz = p.wiz
    tb = p.tb
    ids = tb.wizard_ids
    pos = wiz[wi]
    # inlined model.position, space_of, tier_of (IN_CASTLE = 0), a hot path:
    # this runs for every wizard move
    if pos == 0:
        raise IllegalAction(f"{ids[wi]} is already inside the raven castle", "R-WIZ-5")
    s = pos >> 4
    stacks = p.stacks
    if pos & 15 != len(stacks[s - 1]):
        raise IllegalAction(f"{ids[wi]} is trapped under a tower and cannot move", "R-WIZ-1")
    dest = p.wizard_dest(wi, s, steps, web_steps) if p.mods else (s - 1 + steps) % tb.length + 1
    if dest == p.castle:
        new = 0
    else:
        hd = len(stacks[dest - 1])
        new = dest << 4 | hd
        need = 2 if rider >= 0 and tb.config.options["piggyback_both_count"] else 1
        have = wiz.count(new)
        if have + need > MAX_ON_TOP:
            raise IllegalAction(
                f"the top surface of space {dest} already holds {have} wizards "
                f"(at most {MAX_ON_TOP})",
                "R-WIZ-4",
            )
    ev = p.ev
    if rider < 0:
        p.wiz = wiz[:wi] + (new,) + wiz[wi + 1 :]
        movers: tuple[int, ...] = (wi,)
    else:
        lst = list(wiz)
        lst[wi] = new
        lst[rider] = new
        p.wiz = tuple(lst)
        movers = (wi, rider)
    for m in movers:
        if new:
            data = {"wizard": ids[m], "from": s, "to": dest, "tier": hd}
        else:
            data = {"wizard": ids[m], "from": s, "to": dest, "into_castle": True}
        ev.append(_tuple_new(Event, ("wizard_moved", data)))
    if new:
        if p.mods:
            p.arrive(movers, new)
        return False
    for i, m in enumerate(movers):
        ev.append(event("castle_entered", {"wizard": ids[m]}))
        if relocate and (i == 0 or not tb.config.options["piggyback_castle_moves_once"]):
            relocate_castle(p)
    return True


def relocate_castle(p: Pieces) -> None:
    """R-RAVEN-3/4: the castle moves to the first space clockwise after it whose top surface
    shows a raven crest and is not occupied (no visible wizard; with modules no token,
    OPEN-17; crests of OPEN-11/15); it stays when there is none."""
    tb = p.tb
    length = tb.length
    if p.mods:
        crest_space = tb.mod_crest_space
        tower_crest = tb.mod_tower_crest
    else:
        crest_space = tb.crest_space
        tower_crest = tb.tower_crest
    stacks = p.stacks
    castle = p.castle
    for j in range(1, length):
        sp = (castle - 1 + j) % length + 1
        st = stacks[sp - 1]
        if st:
            if not tower_crest[st[-1]]:
                continue
        elif not crest_space[sp]:
            continue
        if p.occupied(position(sp, len(st))):
            continue
        p.ev.append(event("castle_moved", {"from": castle, "to": sp, "tier": len(st)}))
        p.castle = sp
        return
    p.ev.append(event("castle_stays", {"at": castle}))


def castle_nudge(p: Pieces, direction: int) -> None:
    """R-SPELL-10: the castle moves to the next space in ``direction`` (+1 cw, -1 ccw) whose
    top surface is not occupied (no crest needed); fountain/web spaces are skipped (OPEN-11:
    with modules a fountain may be allowed)."""
    tb = p.tb
    length = tb.length
    special = tb.special
    skip = tb.mod_nudge_skip if p.mods else None
    stacks = p.stacks
    castle = p.castle
    for j in range(1, length):
        sp = (castle - 1 + direction * j) % length + 1
        if skip[sp] if skip is not None else special[sp] is not None:
            continue
        if p.occupied(position(sp, len(stacks[sp - 1]))):
            continue
        p.ev.append(event("castle_moved", {"from": castle, "to": sp, "tier": len(stacks[sp - 1])}))
        p.castle = sp
        return
    p.ev.append(event("castle_stays", {"at": castle}))


def check_lift(tb: Table, stacks: Stacks, space: object, tier: object) -> None:
    """:raises IllegalAction: when there is no tower ``tier`` on ``space`` (R-TOWER-2)."""
    if type(space) is not int or not 1 <= space <= tb.length:
        raise IllegalAction(f"there is no space {space!r} on the track", "R-TRACK-1")
    h = len(stacks[space - 1])
    if type(tier) is not int or not 1 <= tier <= h:
        raise IllegalAction(
            f"space {space} has {h} tower(s); there is no tower at tier {tier!r}", "R-TOWER-2"
        )


def tower_move(p: Pieces, s: int, k: int, steps: int, seat: int) -> tuple[int, int, bool]:
    """Lift tower ``k`` on space ``s`` with everything above, put it ``steps`` away and reward
    ``seat`` for trapping.

    Pieces of tier >= k travel along (R-TOWER-2/4), a castle on top rides (R-TOWER-6), pieces
    at tier k-1 are revealed (R-TOWER-7), visible wizards at the destination are trapped
    (R-TOWER-8) and ``seat`` fills one potion for it (R-TOWER-9, R-TEAM-7); with modules the
    hooks add webs, tokens, sealing and the raven (R-ORDER-3).

    :returns: ``(dest, tier of tower k at dest, a potion or vial was filled)``.
    :raises IllegalAction: no such tower (R-TOWER-2), destination is the castle's space
        (R-TOWER-5) or, with modules, another illegal destination.
    """
    tb = p.tb
    stacks = p.stacks
    length = tb.length
    if type(s) is not int or not 1 <= s <= length:
        check_lift(tb, stacks, s, k)
    st = stacks[s - 1]
    h = len(st)
    if type(k) is not int or not 1 <= k <= h:
        check_lift(tb, stacks, s, k)
    dest = (s - 1 + steps) % length + 1
    castle = p.castle
    mods = p.mods
    if mods:
        dest = p.tower_dest(s, steps, dest)
    elif dest == castle and castle != s:
        raise IllegalAction(f"a tower may not end on the raven castle's space {dest}", "R-TOWER-5")
    dst = stacks[dest - 1]
    hd = len(dst)
    lst = list(stacks)
    if k == 1:
        moved = st
        lst[s - 1] = ()
    else:
        moved = st[k - 1 :]
        lst[s - 1] = st[: k - 1]
    lst[dest - 1] = dst + moved
    p.stacks = tuple(lst)
    wiz = p.wiz
    ids = tb.wizard_ids
    # inlined model.position, space_of, tier_of (IN_CASTLE = 0), a hot path:
    # this runs for every tower move; ``delta`` shifts a packed position to the destination
    lo = s << 4 | k
    delta = ((dest - s) << 4) + hd - k + 1
    # the wizards on the lifted part (tiers k..h; a single roof is the common case)
    if k == h:
        n = wiz.count(lo)
        carried = wizards_on(wiz, lo, lo + 1) if n > 1 else [wiz.index(lo)] if n else []
    else:
        carried = wizards_on(wiz, lo, (s << 4 | h) + 1)
    if carried:
        new = list(wiz)
        for i in carried:
            new[i] += delta
        p.wiz = tuple(new)
        carried_ids = list(map(ids.__getitem__, carried))
    else:
        carried_ids = []
    tower_ids = tb.tower_ids
    data: dict[str, object] = {
        "towers": list(map(tower_ids.__getitem__, moved)),
        "from": s,
        "tier": k,
        "to": dest,
        "carried_wizards": carried_ids,
        "carried_castle": castle == s,
    }
    ev = p.ev
    if mods:
        tokens = p.lift_tokens(s, k, h, delta)
        if tokens:
            data["carried_tokens"] = tokens
    ev.append(_tuple_new(Event, ("tower_moved", data)))
    if lo - 1 in wiz:
        revealed = list(map(ids.__getitem__, wizards_on(wiz, lo - 1, lo)))
        ev.append(_tuple_new(Event, ("wizards_revealed", {"space": s, "wizards": revealed})))
    if mods:
        p.reveal(s, k - 1)
    top_code = dest << 4 | hd
    trapped = top_code in wiz
    if trapped:
        if wiz.count(top_code) == 1:
            caught = [ids[wiz.index(top_code)]]
        else:
            caught = list(map(ids.__getitem__, wizards_on(wiz, top_code, top_code + 1)))
        ev.append(_tuple_new(Event, ("wizards_trapped", {"space": dest, "wizards": caught})))
    sealed = p.seal(dest, hd) if mods else False
    if castle == s:
        p.castle = dest
    filled = (trapped or sealed) and p.reward(seat, trapped, sealed)
    if mods:
        p.landed(dest, hd, len(moved))
    return dest, hd + 1, filled


def wizards_on(wiz: Wizards, lo: int, hi: int) -> list[int]:
    """Indices (ascending) of the wizards whose position code is in ``lo..hi-1`` (one space's
    tiers; few wizards stand there, so this scans per code in C instead of per wizard)."""
    found: list[int] = []
    for code in range(lo, hi):
        n = wiz.count(code)
        if n:
            i = wiz.index(code)
            found.append(i)
            while n > 1:
                i = wiz.index(code, i + 1)
                found.append(i)
                n -= 1
    if len(found) > 1:
        found.sort()
    return found
