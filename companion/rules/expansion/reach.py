"""Which card moves and spell targets can be legal with modules: cheap pre-checks over the
argument domain, before :func:`~companion.rules.expansion.play.apply` decides."""

from __future__ import annotations

from collections.abc import Iterator

from companion.rules import board
from companion.rules.actions import (
    Cast,
    IllegalAction,
    MoveTower,
    MoveWizard,
    RavenTiming,
    fast_move_tower,
    fast_move_wizard,
)
from companion.rules.expansion.pieces import MovingPieces
from companion.rules.expansion.raven import move_raven
from companion.rules.expansion.web import token_dest
from companion.rules.model import CARD_KINDS, Card, GameState, position
from companion.rules.turn import card_kind, card_turn, controlled_seat

Memo = dict[tuple[int, str, int, RavenTiming | None], list[tuple[int, int]]]
"""Legal card moves of one state: (seat, side, steps, raven timing) -> the wizards
``(index, 0)`` or towers ``(space, tier)`` that can make them."""


def _move_legal(
    st: GameState, seat: int, wi: int, space: int, tier: int, steps: int, timing: RavenTiming | None
) -> bool:
    """Whether the current player's card move of wizard ``wi`` (or, with ``wi`` -1, of tower
    ``tier`` on ``space``) by ``steps`` is legal, the raven moving ``timing`` (die cards): the
    part of the card move (:mod:`~companion.rules.expansion.moves`) that can refuse it, on the
    one movement path (the turn and the card are checked by the caller; the bookkeeping after
    the move never refuses)."""
    if wi >= 0:
        p = st.wizards[wi]
        # inlined model.position, space_of, tier_of: every candidate move
        if not p or p & 15 != len(st.stacks[(p >> 4) - 1]):
            return False  # absent or hidden: refused before anything moves (R-WIZ-1/5)
    else:
        return _tower_legal(st, space, tier, steps, timing)
    w = MovingPieces(st)
    try:
        if timing == "before":
            move_raven(w, steps)
        if wi >= 0:
            board.wizard_move(w, wi, steps)
        else:
            board.tower_move(w, space, tier, steps, seat)
        if timing == "after":
            move_raven(w, steps)
    except IllegalAction:
        return False
    return True


def _tower_legal(st: GameState, s: int, k: int, steps: int, timing: RavenTiming | None) -> bool:
    """:func:`_move_legal` for an existing tower ``k`` on ``s``: after the lift only the
    destination can refuse the move
    (:meth:`~companion.rules.expansion.pieces.MovingPieces.tower_dest`; landing, trapping,
    sealing, the reward and the raven's pop-up never refuse), and the raven's own move only
    when it finds no space to stop, which depends on its space and the castle's (before: as
    they are; after: the castle and a raven on the lifted part ride to the destination, OPEN-16)."""
    w = MovingPieces(st)
    try:
        dest = w.tower_dest(s, steps, (s - 1 + steps) % st.table.length + 1)
    except IllegalAction:
        return False
    if timing is None:
        return True
    raven = w.raven
    assert raven is not None
    rs = raven >> 4  # inlined model.space_of / tier_of: every candidate tower move
    if timing == "after":
        if w.castle == s:
            w.castle = dest
        if rs == s and raven & 15 >= k and st.table.config.options["tokens_ride_towers"]:
            rs = dest
    try:
        token_dest(w, "raven", rs, steps)
    except IllegalAction:
        return False
    return True


def module_card_moves(
    st: GameState,
    seat: int,
    card: Card,
    rolls: tuple[int, ...] | None,
    memo: Memo | None = None,
) -> Iterator[MoveWizard | MoveTower]:
    """Legal moves of ``card`` for ``seat`` (die cards: every final roll 1-6, or ``rolls``).

    A move's legality does not depend on the card face that makes it (only on the piece,
    the steps and the raven's timing), so each is checked once per ``memo`` (one state)
    and every face with that side and number of steps reuses the result."""
    tb = st.table
    colour = tb.colours[seat]
    if st.game.over:
        return
    try:
        card_turn(st, colour)
    except IllegalAction:
        return
    if memo is None:
        memo = {}
    ctrl = controlled_seat(tb, st.wizards, seat)
    lo, hi = tb.wiz_range[ctrl]
    raven = st.modules is not None and st.modules.raven is not None
    ids = tb.wizard_ids
    for side in ("wizard", "tower"):
        if not card.has_side(side):
            continue
        values: list[tuple[int, tuple[int, ...]]]
        if card.dice:
            values = [(v, (v,)) for v in range(1, 7)] if rolls is None else [(rolls[-1], rolls)]
        else:
            v = card.wizard if side == "wizard" else card.tower
            values = [] if v is None else [(v, ())]  # no number: card_kind refuses it
        timings: tuple[RavenTiming | None, ...] = (
            ("after", "before") if raven and card.dice else (None,)
        )
        for steps, rl in values:
            try:
                card_kind(st, seat, card, side, steps, rl)
            except IllegalAction:
                continue
            for timing in timings:
                key = (seat, side, steps, timing)
                targets = memo.get(key)
                if targets is None:
                    if side == "wizard":
                        targets = [
                            (i, 0)
                            for i in range(lo, hi)
                            if _move_legal(st, seat, i, 0, 0, steps, timing)
                        ]
                    else:
                        targets = [
                            (s0 + 1, k)
                            for s0, stack in enumerate(st.stacks)
                            for k in range(1, len(stack) + 1)
                            if _move_legal(st, seat, -1, s0 + 1, k, steps, timing)
                        ]
                    memo[key] = targets
                if side == "wizard":
                    for i, _ in targets:
                        mw = fast_move_wizard(colour, ids[i], steps, card, rl)
                        if timing is not None:
                            mw.__dict__["raven_timing"] = timing
                        yield mw
                else:
                    for sp, k in targets:
                        mt = fast_move_tower(colour, sp, k, steps, card, rl)
                        if timing is not None:
                            mt.__dict__["raven_timing"] = timing
                        yield mt


def card_playable(
    st: GameState, seat: int, card: Card, steps: int | None = None, memo: Memo | None = None
) -> bool:
    """R-TURN-3 with module rules (a die card with any roll, or the final roll ``steps``)."""
    rolls = None if steps is None or not card.dice else (steps,)
    return any(True for _ in module_card_moves(st, seat, card, rolls, memo))


def actions_for_card(
    state: GameState, card: Card, rolls: tuple[int, ...] = ()
) -> list[MoveWizard | MoveTower]:
    """Legal moves of the current player with ``card`` (die card: the given rolls)."""
    return list(module_card_moves(state, state.turn.player, card, rolls if card.dice else None))


def spell_candidates(
    st: GameState, seat: int, spell: str, free: bool, memo: Memo | None = None
) -> Iterator[Cast]:
    """The candidate targets of ``spell`` cast by ``seat`` over the whole argument domain,
    before :func:`~companion.rules.expansion.play.apply` decides (R-SPELL, R-SPELLX)."""
    tb = st.table
    colour = tb.colours[seat]
    ids = tb.wizard_ids
    wiz = st.wizards
    stacks = st.stacks
    towers = [(s0 + 1, k) for s0, stk in enumerate(stacks) for k in range(1, len(stk) + 1)]
    if spell in ("advance_wizard", "headwind_wizard", "wizard_sprint"):
        for i, p in enumerate(wiz):
            if p:
                yield Cast(colour, spell, wizard=ids[i], free=free)
    elif spell == "wizard_control":
        for i, p in enumerate(wiz):
            if p:
                for n in (1, 2, 3):
                    yield Cast(colour, spell, wizard=ids[i], steps=n, free=free)
    elif spell == "fly_to_magic_tower":
        lo, hi = tb.wiz_range[seat]
        for i in range(lo, hi):
            if wiz[i]:
                yield Cast(colour, spell, wizard=ids[i], free=free)
    elif spell in ("advance_tower", "headwind_tower", "tower_sprint"):
        for s, k in towers:
            yield Cast(colour, spell, space=s, tier=k, free=free)
    elif spell == "swap_tower":
        spaces = [s0 + 1 for s0, stk in enumerate(stacks) if stk]
        for x in spaces:
            for y in spaces:
                if x < y:
                    yield Cast(colour, spell, a=x, b=y, free=free)
    elif spell == "move_castle":
        yield Cast(colour, spell, direction="cw", free=free)
        yield Cast(colour, spell, direction="ccw", free=free)
    elif spell == "free_wizard":
        allowed = tb.team_of(seat)
        for s, k in towers:
            under = position(s, k - 1)
            found = [i for i, p in enumerate(wiz) if p == under and tb.wizard_owner[i] in allowed]
            if found:
                for i in found:
                    yield Cast(colour, spell, space=s, tier=k, wizard=ids[i], free=free)
            else:
                yield Cast(colour, spell, space=s, tier=k, free=free)
    elif spell in ("fountain_abundance", "precise_landing"):
        yield Cast(colour, spell, free=free)
    elif spell in ("witch_control", "summon_raven"):
        for s in range(1, tb.length + 1):
            yield Cast(colour, spell, space=s, free=free)
    elif spell == "piggyback":
        t = st.turn
        cur = t.player
        if st.cards is not None:
            kinds = sorted(set(st.cards.hands[cur]))
            cards = [CARD_KINDS[k] for k in kinds]
        else:
            cards = [c for c in CARD_KINDS if not c.dice or c.dice == 1]
        lo, hi = tb.wiz_range[seat]
        for card in cards:
            if not card.has_side("wizard"):
                continue
            for m in module_card_moves(st, cur, card, None, memo):
                if not isinstance(m, MoveWizard):
                    continue
                p = wiz[tb.wizard_index[m.wizard]]
                for ri in range(lo, hi):
                    if wiz[ri] == p and ids[ri] != m.wizard:
                        yield Cast(colour, spell, rider=ids[ri], then=m, free=free)
