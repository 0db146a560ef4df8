"""The candidate transitions of a search node: every action that can have happened next on the
table, with its prior cost (nats), guided by the spaces where the picture changed.

:func:`transitions` yields card moves with unknown values 1-5 (R-CARD-*), die moves with the
value of the dice buttons (R-CARD-4/5), the redraw push (R-TURN-5), spells (R-SPELL-*; off-turn
ones too in the master variant), the expansion's spells, feathers and hidden choices (R-MOD-*,
R-SPELLX-*), turn ends by the DONE button or implied, and moves from *repaired* states (a card
or a potion miscounted earlier). Illegal candidates are left to the rules engine to refuse.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    Event,
    Feather,
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.model import CARD_KINDS, Card, GameState, Table, position, space_of, tier_of
from companion.tracking.belief import Marker
from companion.tracking.options import TrackerOptions

Transition = tuple[Action | None, float, tuple[Marker, ...], bool]
"""(action or None for a turn close, prior cost in nats, pending inputs after, implicit-end
flag)."""

_CardAction = MoveWizard | MoveTower | DiscardCard


_VALUE_WIZARD: dict[int, Card] = {
    c.wizard: c for c in CARD_KINDS if c.type == "wizard" and not c.dice and c.wizard
}
_VALUE_TOWER: dict[int, Card] = {
    c.tower: c for c in CARD_KINDS if c.type == "tower" and not c.dice and c.tower
}


def _die_cards(allowed: int) -> tuple[tuple[str, Card], ...]:
    """(side, card) of the die cards with ``allowed`` dice (R-DECK-1)."""
    out: list[tuple[str, Card]] = []
    for c in CARD_KINDS:
        if c.dice == allowed:
            for side in ("wizard", "tower"):
                if c.has_side(side):
                    out.append((side, c))
    return tuple(out)


def _ring(length: int, a: int, b: int) -> int:
    """Clockwise distance from space ``a`` to space ``b`` (0..N-1)."""
    return (b - a) % length


def _children(
    st: GameState,
    pending: tuple[Marker, ...],
    implicit: bool,
    allowed: frozenset[int],
    dests: frozenset[int] | None,
    opts: TrackerOptions,
) -> Iterator[Transition]:
    """Candidate transitions from ``st`` with ``pending`` inputs (``implicit``: its turn ended
    unannounced). Actions are guided: sources in ``allowed``, destinations in ``dests`` (None =
    anywhere)."""
    tb = st.table
    if st.game.over:
        return
    length = tb.length
    t = st.turn
    seat = t.player
    colour = tb.colours[seat]
    nxt = pending[0] if pending else None
    rest = pending[1:]
    stacks = st.stacks
    wiz = st.wizards

    def dest_ok(d: int) -> bool:
        return dests is None or d in dests

    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    die: list[tuple[str, Card]] = []
    roll: tuple[int, ...] = ()
    if nxt is not None and nxt[0] == "dice":
        roll = tuple(nxt[1])
        die = list(_die_cards(int(nxt[2])))
    # wizard cards move the current player's own wizards (partner's when all are inside)
    ctrl = seat
    if tb.partner[seat] >= 0:
        lo, hi = tb.wiz_range[seat]
        if not any(wiz[lo:hi]):
            ctrl = tb.partner[seat]
    visible: list[tuple[int, int]] = []  # (wizard index, space)
    for i, p in enumerate(wiz):
        if p:
            s = space_of(p)
            if tier_of(p) == len(stacks[s - 1]):
                visible.append((i, s))
    ids = tb.wizard_ids
    owner = tb.wizard_owner
    special = tb.special
    # card actions are collected first: with the expansion each may have hidden variants (a
    # page card moving the witch first, the raven moving before the move, _card_variants)
    cards: list[tuple[_CardAction, float, tuple[Marker, ...]]] = []
    if can_play:
        for i, s in visible:
            if owner[i] != ctrl or s not in allowed:
                continue
            for d in range(1, length + 1):
                # a wizard may stop anywhere on the way (two cards, 6 = 5 + 1): any destination
                if d == s:
                    continue
                steps = _ring(length, s, d)
                if 1 <= steps <= 5:
                    cards.append(
                        (
                            MoveWizard(colour, ids[i], steps, _VALUE_WIZARD[steps]),
                            opts.cost_card,
                            pending,
                        )
                    )
                if roll and steps == roll[-1]:
                    for side, card in die:
                        if side == "wizard":
                            cards.append(
                                (
                                    MoveWizard(colour, ids[i], steps, card, roll),
                                    opts.cost_die_move,
                                    rest,
                                )
                            )
        for s in allowed:
            h = len(stacks[s - 1])
            if not h:
                continue
            for d in range(1, length + 1):
                if d == s:
                    continue
                # guided by where the tower ends: a web sends it on (R-MOD-WEB-2)
                fd = d if special[d] is None else _web_end(tb, s, d)
                if fd == s or not dest_ok(fd) or fd == st.castle:
                    continue
                steps = _ring(length, s, d)
                for k in range(1, h + 1):
                    if 1 <= steps <= 5:
                        cards.append(
                            (
                                MoveTower(colour, s, k, steps, _VALUE_TOWER[steps]),
                                opts.cost_card,
                                pending,
                            )
                        )
                    if roll and steps == roll[-1]:
                        for side, card in die:
                            if side == "tower":
                                cards.append(
                                    (
                                        MoveTower(colour, s, k, steps, card, roll),
                                        opts.cost_die_move,
                                        rest,
                                    )
                                )
                    if steps == 1 and t.cards_used == 0 and not tb.solo:
                        yield Redraw(colour, (s, k)), opts.cost_push, pending, False
        if roll:
            # the die card could move nothing (or nothing the player wanted): discarded
            cards.append((DiscardCard(colour, None), opts.cost_discard, rest))
    if st.modules is None:
        for a, prior, pend in cards:
            yield a, prior, pend, False
    else:
        yield from _card_variants(st, cards, allowed, roll, pending, opts)
    # spells
    casters = range(tb.n) if tb.master else (seat,)
    for cs in casters:
        full = st.potions[cs][0]
        ccol = tb.colours[cs]
        for spell in tb.spells:
            if full < tb.config.spell_costs[spell]:
                continue
            if not tb.master and cs != seat and spell != "free_wizard":
                continue
            if spell in ("advance_wizard", "headwind_wizard"):
                step = 1 if spell == "advance_wizard" else -1
                for i, s in visible:
                    if s in allowed and dest_ok(_step_end(tb, s, step)):
                        yield Cast(ccol, spell, wizard=ids[i]), opts.cost_spell, pending, False
            elif spell in ("advance_tower", "headwind_tower"):
                step = 2 if spell == "advance_tower" else -2
                for s in allowed:
                    # a tower the spell puts on a web goes on by the same two spaces: guided
                    # by where it ends (a headwind from the space after a web skips it)
                    if not dest_ok(_step_end(tb, s, step)):
                        continue
                    for k in range(1, len(stacks[s - 1]) + 1):
                        yield Cast(ccol, spell, space=s, tier=k), opts.cost_spell, pending, False
            elif spell == "swap_tower":
                srcs = sorted(x for x in allowed if stacks[x - 1])
                for x in srcs:
                    for y in srcs:
                        if x < y:
                            yield Cast(ccol, spell, a=x, b=y), opts.cost_spell, pending, False
            elif spell == "move_castle":
                if st.castle in allowed:
                    for direction in ("cw", "ccw"):
                        yield (
                            Cast(ccol, spell, direction=direction),
                            opts.cost_spell,
                            pending,
                            False,
                        )
            elif spell == "free_wizard":
                allowed_owner = tb.team_of(cs)
                for s in allowed:
                    stk = stacks[s - 1]
                    for k in range(1, len(stk) + 1):
                        under = position(s, k - 1)
                        for i, p in enumerate(wiz):
                            if p == under and owner[i] in allowed_owner:
                                yield (
                                    Cast(ccol, spell, space=s, tier=k, wizard=ids[i]),
                                    opts.cost_spell,
                                    pending,
                                    False,
                                )
            elif spell == "piggyback" and can_play:
                for i, s in visible:
                    if owner[i] != ctrl or s not in allowed:
                        continue
                    riders = [r for r, rs in visible if rs == s and r != i and owner[r] == cs]
                    if not riders:
                        continue
                    for d in range(1, length + 1):
                        if d == s or not dest_ok(d if special[d] is None else _web_end(tb, s, d)):
                            continue
                        steps = _ring(length, s, d)
                        if not 1 <= steps <= 5:
                            continue
                        m = MoveWizard(colour, ids[i], steps, _VALUE_WIZARD[steps])
                        for r in riders:
                            yield (
                                Cast(ccol, spell, rider=ids[r], then=m),
                                opts.cost_spell + opts.cost_card,
                                pending,
                                False,
                            )
    if st.modules is not None:
        yield from _module_children(st, allowed, dests, visible, pending, opts)
    # the end of the turn: by the DONE button (next marker) or unannounced
    if nxt is None or nxt[0] == "done":
        if nxt is not None and implicit and not t.cards_used and not t.casts and not t.redrawn:
            # the DONE of a turn that already ended unannounced: absorbed
            yield None, 0.0, rest, False
            return
        if nxt is not None:
            yield None, 0.0, rest, False
        else:
            yield None, implicit_end_cost(st, opts), pending, True


def turn_complete(st: GameState) -> bool:
    """The current player has played every card the turn allows, redrawn, or a move ended
    the turn (R-TURN-2/5/6/7): only a spell or the turn's end can follow."""
    t = st.turn
    return t.ended or t.redrawn or t.cards_used >= st.table.actions_per_turn + t.extra_card


def implicit_end_cost(st: GameState, opts: TrackerOptions) -> float:
    """Prior cost (nats) of ending the turn of ``st`` without a DONE press: cheap after a
    complete turn (:func:`turn_complete`, the board tells the turn is over), else
    ``cost_implicit_end`` (cards left unplayed and no press)."""
    if not opts.expect_done:
        return 0.5
    if opts.board_turns and turn_complete(st):
        return opts.cost_complete_end
    return opts.cost_implicit_end


_BASE_SPELLS = frozenset(
    {
        "advance_wizard",
        "headwind_wizard",
        "advance_tower",
        "headwind_tower",
        "swap_tower",
        "move_castle",
        "free_wizard",
        "piggyback",
    }
)


def _web_end(tb: Table, s: int, d: int) -> int:
    """Where a piece moved clockwise from ``s`` to ``d`` stops after web continuation
    (R-MOD-WEB-2, OPEN-19: again while it ends on a web; at most 8 bounces)."""
    return _step_end(tb, s, _ring(tb.length, s, d))


def _step_end(tb: Table, s: int, step: int) -> int:
    """Where a piece moved ``step`` spaces from ``s`` (negative: counter-clockwise, a headwind
    spell) stops after web continuation in the same direction (R-MOD-WEB-2, OPEN-19)."""
    length = tb.length
    d = (s - 1 + step) % length + 1
    for _ in range(8):
        if tb.special[d] != "web":
            return d
        d = (d - 1 + step) % length + 1
    return d


def _token_end(st: GameState, space: int, steps: int) -> int:
    """Where a witch or raven token moving ``steps`` clockwise from ``space`` stops: it skips
    the castle's space and bounces off webs (R-MOD-WITCH-3, R-MOD-RAVEN-2, R-MOD-WEB-5)."""
    tb = st.table
    length = tb.length
    seg = steps
    dest = (space - 1 + seg) % length + 1
    for _ in range(16):
        if dest == st.castle:
            dest = dest % length + 1
            seg += 1
        elif tb.special[dest] == "web":
            dest = (dest - 1 + seg) % length + 1
        else:
            break
    return dest


def _card_variants(
    st: GameState,
    cards: Sequence[tuple[_CardAction, float, tuple[Marker, ...]]],
    allowed: frozenset[int],
    roll: tuple[int, ...],
    pending: tuple[Marker, ...],
    opts: TrackerOptions,
) -> Iterator[Transition]:
    """The card actions ``cards`` with the expansion's hidden choices the camera cannot read
    but that change the board:

    * a **page card** (R-MOD-WITCH-2, OPEN-12) moves the witch one space before the move, or
      releases a sealed witch when the right tower is named (R-MOD-WITCH-9): generated only
      when the witch's space or the space she would move to changed in the picture;
      ``cost_page`` = ``-ln page_share``. A discarded page card moves the witch too;
    * a die card with the raven moves the raven **before** the move (R-MOD-RAVEN-2; after is
      the engine's default): ``cost_raven_before``;
    * an armed *Precise Landing* (R-SPELLX-6) chooses 1-3 spaces on a web: ``web_steps``.
    """
    ms = st.modules
    assert ms is not None
    tb = st.table
    seat = st.turn.player
    page: tuple[bool, tuple[int, int] | None] | None = None
    if ms.witch is not None and "witch" in tb.config.modules:
        ws, wt = space_of(ms.witch), tier_of(ms.witch)
        if ws in allowed or _token_end(st, ws, 1) in allowed:
            sealed = wt < len(st.stacks[ws - 1])
            page = (True, (ws, wt + 1) if sealed else None)
    raven = ms.raven is not None
    precise = (seat, "precise_landing") in ms.armed
    cost_page = opts.cost_page
    for a, prior, pend in cards:
        yield a, prior, pend, False
        variants: list[tuple[_CardAction, float]] = []
        if raven and roll and isinstance(a, MoveWizard | MoveTower) and a.card.dice:
            variants.append((replace(a, raven_timing="before"), opts.cost_raven_before))
        if precise and isinstance(a, MoveWizard):
            pos = space_of(st.wizards[tb.wizard_index[a.wizard]])
            if tb.special[(pos - 1 + a.steps) % tb.length + 1] == "web":
                variants.extend((replace(a, web_steps=n), 0.0) for n in (1, 2, 3))
        if page is not None:
            variants += [
                (replace(v, page=True, witch_guess=page[1]), extra + cost_page)
                for v, extra in [(a, 0.0), *variants]
            ]
        for v, extra in variants:
            yield v, prior + extra, pend, False
    t = st.turn
    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    if page is not None and can_play:
        # a page card discarded as unplayable (R-TURN-3) still moves the witch
        yield (
            DiscardCard(tb.colours[seat], None, page=True, witch_guess=page[1]),
            opts.cost_discard + cost_page,
            pending,
            False,
        )
    if can_play and ms.witch is not None and "witch" in tb.config.modules:
        # a page card naming the wrong tower over a sealed witch (R-MOD-WITCH-9): the tower is
        # put back, nothing moves, the turn ends; the camera sees only the turn's end
        wrong = _wrong_guess(st, space_of(ms.witch), tier_of(ms.witch))
        if wrong is not None:
            yield (
                DiscardCard(tb.colours[seat], None, page=True, witch_guess=wrong),
                opts.cost_card + cost_page + opts.cost_wrong_guess,
                pending,
                False,
            )


def _wrong_guess(st: GameState, ws: int, wt: int) -> tuple[int, int] | None:
    """A tower (space, tier) a release guess can name that does not cover the witch sealed at
    space ``ws`` on tier ``wt`` (any wrong tower ends the turn the same way), or None when she
    is not sealed or no other tower stands."""
    h = len(st.stacks[ws - 1])
    if wt >= h:
        return None
    for k in range(h, 0, -1):
        if k != wt + 1:
            return (ws, k)
    for s, stack in enumerate(st.stacks, 1):
        if s != ws and stack:
            return (s, len(stack))
    return None


def _module_children(
    st: GameState,
    allowed: frozenset[int],
    dests: frozenset[int] | None,
    visible: Sequence[tuple[int, int]],
    pending: tuple[Marker, ...],
    opts: TrackerOptions,
) -> Iterator[Transition]:
    """Expansion transitions (R-MOD-*, R-SPELLX-*): the new spells (paid or free), free casts
    of the base spells (magic tower, feathers) and feather uses, guided like the base moves.
    Illegal candidates are refused by the engine when applied."""
    tb = st.table
    ms = st.modules
    assert ms is not None
    t = st.turn
    seat = t.player
    ids = tb.wizard_ids
    casters = range(tb.n) if tb.master else (seat,)
    for cs in casters:
        ccol = tb.colours[cs]
        vials = ms.witch_vials[cs][0] if ms.witch_vials is not None else 0
        full = st.potions[cs][0] + vials
        frees = any(fs == cs for fs, _ in ms.free_casts)
        for spell in tb.spells:
            paid = full >= tb.config.spell_costs[spell]
            if spell in _BASE_SPELLS and st.potions[cs][0] >= tb.config.spell_costs[spell]:
                # the paid cast is generated with the base spells; a free one (the magic
                # tower's, a feather's) is not, and leaves the potions full
                paid = False
            variants = ((False,) if paid else ()) + ((True,) if frees else ())
            for free in variants:
                for c in _spell_casts(st, spell, ccol, allowed, dests, visible):
                    yield replace(c, free=free), opts.cost_spell, pending, False
    if ms.feathers is not None and not t.feather_used and ms.feathers[seat] > 0 and not t.ended:
        colour = tb.colours[seat]
        yield Feather(colour, "extra_card"), opts.cost_spell, pending, False
        yield Feather(colour, "free_spell"), opts.cost_spell, pending, False
        for i, s in visible:
            if s not in allowed:
                continue
            for n in range(1, 7):
                yield (
                    Feather(colour, "move_wizard", wizard=ids[i], steps=n),
                    opts.cost_spell,
                    pending,
                    False,
                )


def _spell_casts(
    st: GameState,
    spell: str,
    ccol: str,
    allowed: frozenset[int],
    dests: frozenset[int] | None,
    visible: Sequence[tuple[int, int]],
) -> Iterator[Cast]:
    """Candidate casts of ``spell`` by ``ccol`` touching the ``allowed`` spaces."""
    tb = st.table
    ids = tb.wizard_ids
    stacks = st.stacks
    length = tb.length
    if spell in ("advance_wizard", "headwind_wizard", "wizard_sprint"):
        for i, s in visible:
            if s in allowed:
                yield Cast(ccol, spell, wizard=ids[i])
    elif spell == "wizard_control":
        for i, s in visible:
            if s in allowed:
                for n in (1, 2, 3):
                    yield Cast(ccol, spell, wizard=ids[i], steps=n)
    elif spell == "fly_to_magic_tower":
        lo, hi = tb.wiz_range[tb.colours.index(ccol)]
        for i in range(lo, hi):
            p = st.wizards[i]
            if p and space_of(p) in allowed:
                yield Cast(ccol, spell, wizard=ids[i])
    elif spell in ("advance_tower", "headwind_tower", "tower_sprint"):
        for s in allowed:
            for k in range(1, len(stacks[s - 1]) + 1):
                yield Cast(ccol, spell, space=s, tier=k)
    elif spell == "swap_tower":
        srcs = sorted(x for x in allowed if stacks[x - 1])
        for x in srcs:
            for y in srcs:
                if x < y:
                    yield Cast(ccol, spell, a=x, b=y)
    elif spell == "move_castle":
        yield Cast(ccol, spell, direction="cw")
        yield Cast(ccol, spell, direction="ccw")
    elif spell == "free_wizard":
        for s in allowed:
            for k in range(1, len(stacks[s - 1]) + 1):
                under = position(s, k - 1)
                found = [i for i, p in enumerate(st.wizards) if p == under]
                for i in found:
                    yield Cast(ccol, spell, space=s, tier=k, wizard=ids[i])
                if not found:
                    yield Cast(ccol, spell, space=s, tier=k)
    elif spell in ("fountain_abundance", "precise_landing"):
        yield Cast(ccol, spell)
    elif spell in ("witch_control", "summon_raven"):
        for s in range(1, length + 1):
            if s in allowed or dests is None:
                yield Cast(ccol, spell, space=s)


def transitions(
    st: GameState,
    held: tuple[Marker, ...],
    unannounced: bool,
    allowed: frozenset[int],
    dests: frozenset[int] | None,
    opts: TrackerOptions,
) -> Iterator[tuple[GameState, Action | None, float, tuple[Marker, ...], bool]]:
    """The transitions from a search node in state ``st`` with the inputs ``held`` pending
    (``unannounced``: its turn ended without DONE), as (state the action applies to, action or
    None for a turn close, prior cost in nats, pending after, implicit-end flag); sources in
    ``allowed``, destinations in ``dests`` (None = anywhere).

    Besides the node's own, the transitions of two *repaired* versions of its state (at
    ``cost_repair``): one more card this turn (a spell was taken for a card earlier), and enough
    full potions for a spell (a potion was miscounted earlier). The camera's evidence then
    corrects bookkeeping the camera could not see."""
    for action, prior, pending, implicit in _children(st, held, unannounced, allowed, dests, opts):
        yield st, action, prior, pending, implicit
    if not allowed or st.game.over:
        return
    tb = st.table
    t = st.turn
    if not t.ended and not t.redrawn and t.cards_used >= tb.actions_per_turn + t.extra_card:
        fixed = replace(st, turn=t._replace(cards_used=tb.actions_per_turn - 1 + t.extra_card))
        for action, prior, pending, implicit in _children(
            fixed, held, unannounced, allowed, dests, opts
        ):
            if isinstance(action, MoveWizard | MoveTower):
                yield fixed, action, prior + opts.cost_repair, pending, implicit
    need = max((tb.config.spell_costs[sp] for sp in tb.spells), default=0)
    seat = t.player
    f, e, sp_ = st.potions[seat]
    if f < need and e >= need - f:
        pots = st.potions[:seat] + ((need, e - (need - f), sp_),) + st.potions[seat + 1 :]
        fixed = replace(st, potions=pots)
        for action, prior, pending, implicit in _children(
            fixed, held, unannounced, allowed, dests, opts
        ):
            if (
                isinstance(action, Cast)
                and action.player == tb.colours[seat]
                and st.potions[seat][0] < tb.config.spell_costs[action.spell]
            ):
                yield fixed, action, prior + opts.cost_repair, pending, implicit


WITCH_HITS = frozenset({"potion_emptied", "witch_vial_emptied", "witch_vial_taken"})


def protect_variants(
    st: GameState, action: Action, events: Sequence[Event]
) -> list[MoveWizard | MoveTower | DiscardCard | Cast | Feather]:
    """``action`` with players who were hit by the witch (R-MOD-WITCH-4/5) spending a feather
    against it instead (R-MOD-WITCH-10): one variant per hit player holding a feather, and one
    with all of them. Feathers and potions are hidden from the camera."""
    ms = st.modules
    if ms is None or ms.feathers is None:
        return []
    if not isinstance(action, MoveWizard | MoveTower | DiscardCard | Cast | Feather):
        return []
    tb = st.table
    hit: list[str] = []
    for e in events:
        if e.kind in WITCH_HITS and str(e.get("reason", "")).startswith(("witch", "wizard_met")):
            colour = str(e.get("player"))
            seat = tb.colours.index(colour) if colour in tb.colours else -1
            if seat >= 0 and ms.feathers[seat] > 0 and colour not in hit:
                hit.append(colour)
    out = [replace(action, witch_protect=(c,)) for c in hit]
    if len(hit) > 1:
        out.append(replace(action, witch_protect=tuple(hit)))
    return out


def spaces_of(a: Action, tb: Table) -> tuple[int, ...]:
    """The spaces a tower action lifts from and lands on (after web continuation)."""
    length = tb.length
    if isinstance(a, MoveTower):
        d = (a.space - 1 + a.steps) % length + 1
        return (a.space, d if tb.special[d] is None else _web_end(tb, a.space, d))
    if isinstance(a, Redraw) and a.push is not None:
        d = a.push[0] % length + 1
        return (a.push[0], d if tb.special[d] is None else _web_end(tb, a.push[0], d))
    if isinstance(a, Cast):
        if a.space is not None:
            step = {"advance_tower": 2, "headwind_tower": -2}.get(a.spell, 0)
            return (a.space, (a.space - 1 + step) % length + 1)
        if a.a is not None and a.b is not None:
            return (a.a, a.b)
    return ()
