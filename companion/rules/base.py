"""The base game (rules §3-§15): setup, the application of each action and the lazy
listing of legal actions for a state without expansion modules (``state.modules`` is None).

:mod:`companion.rules.engine` dispatches here; the expansion (:mod:`companion.rules.expansion`)
reuses the shared steps of :mod:`companion.rules.turn` and :mod:`companion.rules.spells`.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from typing import Any

from companion.rules import board
from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    ExchangeCards,
    GivePotion,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
    fast_move_tower,
    fast_move_wizard,
)
from companion.rules.board import Pieces
from companion.rules.board import event as _ev
from companion.rules.model import (
    BASE_SPELLS,
    BASE_TOWERS,
    CARD_KINDS,
    Card,
    Config,
    GameState,
    Progress,
    Table,
    Turn,
    make_state,
)
from companion.rules.spells import (
    cast_timing_problem,
    castle_spell,
    check_cast_timing,
    free_wizard,
    move_tower_spell,
    move_wizard_spell,
    spell_window,
    swap_towers,
)
from companion.rules.turn import (
    begin_redraw,
    card_kind,
    card_turn,
    closing_actions,
    controlled_seat,
    deal,
    dice_event,
    discard_played,
    discarded_card,
    end_check,
    end_turn,
    exchange_cards,
    give_potion,
    piggyback_riders,
    place_wizards,
    play_card,
    player_seat,
    representative,
    start_potions,
    wizard_card,
)

_BASE_DISPLAY = ("advance_wizard", "advance_tower")
"""R-SETUP-4: the two spells of the base game."""


def setup(config: Config, seed: int | None = None) -> GameState:
    """The position before the start player's first turn (R-SETUP-1..6).

    :param config: the game's :class:`Config`.
    :param seed: shuffles and deals the 90 move cards (and draws master/solo spells when
        ``config.spells`` is None). ``None`` = hands unknown (the tracker's case): the state
        carries no cards and any card of the deck may be played.
    :raises ValueError: an expansion spell without the module it needs (R-MOD-GEN-2).

    The base game only: :func:`companion.rules.engine.setup` hands a game with modules or
    expansion spells to the expansion (R-MOD-*-1).
    """
    rng = random.Random(seed if seed is not None else 0)
    spells = resolve_spells(config, rng)
    config = dataclasses.replace(config, spells=spells)
    tb = Table(config, spells, BASE_TOWERS)
    length = tb.length
    # R-SETUP-3: towers on the spaces following the castle clockwise (fountain/web skipped)
    start = 1
    tower_spaces: list[int] = []
    sp = start
    free = sum(1 for x in range(2, length + 1) if tb.special[x] is None)
    if free < len(tb.towers):
        raise ValueError(
            f"config.track: {free} free spaces after the castle; setup needs "
            f"{len(tb.towers)} for the towers (R-SETUP-3)"
        )
    while len(tower_spaces) < len(tb.towers):
        sp = sp % length + 1
        if tb.special[sp] is None:
            tower_spaces.append(sp)
    stacks_l: list[tuple[int, ...]] = [() for _ in range(length)]
    for t, sp in enumerate(tower_spaces):
        stacks_l[sp - 1] = (t,)
    wiz = place_wizards(tb, tower_spaces)
    potions = start_potions(tb, config)
    cards = deal(tb, seed, rng)
    return GameState(tb, tuple(stacks_l), tuple(wiz), start, potions, Turn(0), Progress(), cards)


def resolve_spells(config: Config, rng: random.Random | None) -> tuple[str, ...]:
    """The spells on display: ``config.spells``, else the base game's two (R-SETUP-4), else
    ``master_spell_count`` / ``solo_spell_count`` drawn with ``rng`` (None: the first ones in
    rulebook order)."""
    if config.spells is not None:
        return config.spells
    if config.player_count == 1:
        count = int(config.options["solo_spell_count"])
    elif config.variant == "master":
        count = int(config.options["master_spell_count"])
    else:
        return _BASE_DISPLAY
    if count >= len(BASE_SPELLS):
        return BASE_SPELLS
    if rng is None:
        return BASE_SPELLS[:count]
    chosen = set(rng.sample(BASE_SPELLS, count))
    return tuple(s for s in BASE_SPELLS if s in chosen)


def _apply_move_wizard(st: GameState, a: MoveWizard) -> tuple[GameState, list[Event]]:
    seat, kidx, wi = wizard_card(st, a)
    tb = st.table
    ev: list[Event] = []
    if a.card.dice:
        dice_event(a.card, a.rolls, ev)
    p = Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    try:
        entered = board.wizard_move(p, wi, a.steps)
    except IllegalAction as exc:
        if not (a.card_committed and tb.master):
            raise  # re-raised here, not in a helper holding it: no reference cycle
        return _committed_card_lost(st, a, seat, kidx, exc.reason)
    turn, cards, game = play_card(st, seat, kidx, ev, entered)
    if entered:
        game = end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, st.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


def _apply_move_tower(st: GameState, a: MoveTower) -> tuple[GameState, list[Event]]:
    seat = card_turn(st, a.player)
    kidx = card_kind(st, seat, a.card, "tower", a.steps, a.rolls)
    tb = st.table
    ev: list[Event] = []
    if a.card.dice:
        dice_event(a.card, a.rolls, ev)
    p = Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    try:
        _, _, filled = board.tower_move(p, a.space, a.tier, a.steps, seat)
    except IllegalAction as exc:
        if not (a.card_committed and tb.master):
            raise  # re-raised here, not in a helper holding it: no reference cycle
        return _committed_card_lost(st, a, seat, kidx, exc.reason)
    turn, cards, game = play_card(st, seat, kidx, ev, False)
    if filled:
        game = end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


def _committed_card_lost(
    st: GameState, a: MoveWizard | MoveTower, seat: int, kidx: int, reason: str
) -> tuple[GameState, list[Event]]:
    """R-MASTER-9: a committed card whose move a spell made impossible is simply lost (the
    caller re-raises the move's ``IllegalAction`` unless the card was committed and the master
    variant is played)."""
    ev = [
        _ev(
            "announced_move_impossible",
            {"player": a.player, "card": a.card.to_json(), "reason": reason},
        )
    ]
    turn, cards, game = play_card(st, seat, kidx, ev, False)
    return (
        make_state(
            st.table, st.stacks, st.wizards, st.castle, st.potions, turn, game, cards, st.modules
        ),
        ev,
    )


def card_playable(st: GameState, seat: int, card: Card, steps: int | None = None) -> bool:
    """True when ``card`` could move some wizard or tower now (R-TURN-3); a die card with any
    roll, or with the final roll ``steps`` when given; base game."""
    for m in _card_moves(st, seat, card, None):
        if steps is None or not card.dice or m.steps == steps:
            return True
    return False


def _apply_discard(st: GameState, a: DiscardCard) -> tuple[GameState, list[Event]]:
    seat = card_turn(st, a.player)
    tb = st.table
    kidx = discarded_card(st, seat, a, card_playable)
    card = a.card
    ev = [
        _ev(
            "card_discarded_without_effect",
            {"player": a.player, "card": None if card is None else card.to_json()},
        )
    ]
    turn, cards, game = discard_played(st, seat, kidx, ev)
    return (
        make_state(tb, st.stacks, st.wizards, st.castle, st.potions, turn, game, cards, st.modules),
        ev,
    )


def _apply_redraw(st: GameState, a: Redraw) -> tuple[GameState, list[Event]]:
    seat, cards, turn, push = begin_redraw(st, a)
    tb = st.table
    ev: list[Event] = [_ev("hand_discarded_and_redrawn", {"player": a.player})]
    p = Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    game = st.game
    if push is not None and board.tower_move(p, push[0], push[1], 1, seat)[2]:
        game = end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


def _apply_cast(st: GameState, a: Cast) -> tuple[GameState, list[Event]]:
    tb = st.table
    seat = player_seat(tb, a.player)
    spell = a.spell
    if spell not in tb.spells:
        raise IllegalAction(f"the spell {spell!r} is not on display in this game", "R-SETUP-4")
    if a.free:
        raise IllegalAction(
            "free casts come from the magic tower or feathers (expansion)", "R-MOD-MAGICTOWER-5"
        )
    times = a.times
    if type(times) is not int or times < 1:
        raise IllegalAction("a spell is cast at least once", "R-MASTER-8")
    if times != 1 and spell in ("piggyback", "free_wizard", "swap_tower"):
        raise IllegalAction(f"{spell} is repeated by casting it again", "R-MASTER-8")
    check_cast_timing(st, seat, spell, times)
    cost = tb.config.spell_costs[spell] * times
    f, e, sp = st.potions[seat]
    if f < cost:
        raise IllegalAction(
            f"{spell} x{times} costs {cost} full potion(s); {a.player} has {f}", "R-SPELL-1"
        )
    potions = st.potions[:seat] + ((f - cost, e, sp + cost),) + st.potions[seat + 1 :]
    ev: list[Event] = [_ev("spell_cast", {"player": a.player, "spell": spell, "times": times})]
    if cost:
        ev.append(_ev("potions_spent", {"player": a.player, "count": cost}))
    t = st.turn
    casts = t.casts + ((seat, spell, spell_window(st), times),)
    cur = t.player
    ctrl = controlled_seat(tb, st.wizards, cur)
    game = st.game
    cards = st.cards
    turn = t._replace(casts=casts)
    if spell == "piggyback":
        return _piggyback(st, a, seat, potions, casts, ev)
    p = Pieces(tb, st.stacks, st.wizards, st.castle, potions, ev)
    check_end = False
    entered_by = -1
    if spell in ("advance_wizard", "headwind_wizard"):
        step = 1 if spell == "advance_wizard" else -1
        entered_by = move_wizard_spell(p, seat, a.wizard, step, times)
    elif spell in ("advance_tower", "headwind_tower"):
        step = 2 if spell == "advance_tower" else -2
        check_end = move_tower_spell(p, seat, a.space, a.tier, step, times)
    elif spell == "swap_tower":
        p.stacks, p.wiz = swap_towers(tb, p.stacks, p.wiz, p.castle, a, ev)
    elif spell == "move_castle":
        castle_spell(p, a.direction, times)
    elif spell == "free_wizard":
        entered_by = free_wizard(p, seat, a)
    else:  # pragma: no cover - expansion spells are refused by setup
        raise IllegalAction(f"the spell {spell!r} is not implemented", "R-SPELLX-1")
    if entered_by >= 0:
        check_end = True
        if tb.wizard_owner[entered_by] == ctrl and not turn.ended:
            turn = turn._replace(ended=True)
            ev.append(_ev("turn_ended", {"player": tb.colours[cur], "reason": "castle_entry"}))
    if check_end:
        game = end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


def _piggyback(
    st: GameState,
    a: Cast,
    seat: int,
    potions: tuple[tuple[int, int, int], ...],
    casts: tuple[tuple[int, str, int, int], ...],
    ev: list[Event],
) -> tuple[GameState, list[Event]]:
    """R-SPELL-11: the current player's wizard move carries the caster's wizard along."""
    tb = st.table
    m, cur, kidx, wi, ri = piggyback_riders(st, a, seat)
    wiz = st.wizards
    if wiz[ri] != wiz[wi] or wiz[ri] == 0:
        raise IllegalAction(f"{a.rider} is not on the same top surface as {m.wizard}", "R-SPELL-11")
    dice_event(m.card, m.rolls, ev)
    st2 = make_state(
        tb,
        st.stacks,
        wiz,
        st.castle,
        potions,
        st.turn._replace(casts=casts),
        st.game,
        st.cards,
        st.modules,
    )
    p = Pieces(tb, st.stacks, wiz, st.castle, potions, ev)
    entered = board.wizard_move(p, wi, m.steps, ri)
    turn, cards, game = play_card(st2, cur, kidx, ev, entered)
    if entered:
        game = end_check(tb, p.wiz, potions, game, turn, ev)
    return make_state(tb, st.stacks, p.wiz, p.castle, potions, turn, game, cards, st.modules), ev


HANDLERS: dict[type, Callable[[GameState, Any], tuple[GameState, list[Event]]]] = {
    MoveWizard: _apply_move_wizard,
    MoveTower: _apply_move_tower,
    DiscardCard: _apply_discard,
    Redraw: _apply_redraw,
    Cast: _apply_cast,
    EndTurn: end_turn,
    GivePotion: give_potion,
    ExchangeCards: exchange_cards,
}
"""The base game's step for each action type (:func:`companion.rules.engine.apply` picks
one by ``type(action)``; the action argument is that type)."""


def _wizard_targets(st: GameState, seat: int, steps: int) -> Iterator[int]:
    """Controlled visible wizards that can legally move ``steps`` (R-CARD-1, R-WIZ-*)."""
    tb = st.table
    ctrl = controlled_seat(tb, st.wizards, seat)
    lo, hi = tb.wiz_range[ctrl]
    wiz = st.wizards
    stacks = st.stacks
    length = tb.length
    castle = st.castle
    # inlined model.position, space_of, tier_of: the tracker's search lists
    # these targets for every hypothesis
    for i in range(lo, hi):
        p = wiz[i]
        if not p:
            continue
        s = p >> 4
        if p & 15 != len(stacks[s - 1]):
            continue
        dest = (s - 1 + steps) % length + 1
        if dest == castle or wiz.count(dest << 4 | len(stacks[dest - 1])) < 6:
            yield i


def _tower_targets(st: GameState, steps: int) -> Iterator[tuple[int, int]]:
    """(space, tier) of every tower that can legally move ``steps`` (R-TOWER-*)."""
    length = st.table.length
    castle = st.castle
    for s0, stack in enumerate(st.stacks):
        if not stack:
            continue
        s = s0 + 1
        dest = (s0 + steps) % length + 1
        if dest == castle and castle != s:
            continue
        for k in range(1, len(stack) + 1):
            yield s, k


def _card_moves(
    st: GameState, seat: int, card: Card, rolls_for: int | None
) -> Iterator[MoveWizard | MoveTower]:
    """Every move of ``card`` (die cards: every final roll 1-6, given as a single roll)."""
    tb = st.table
    colour = tb.colours[seat]
    ids = tb.wizard_ids
    for side in ("wizard", "tower"):
        if not card.has_side(side):
            continue
        values: list[tuple[int, tuple[int, ...]]]
        if card.dice:
            values = [(v, (v,)) for v in range(1, 7)]
        else:
            v = card.wizard if side == "wizard" else card.tower
            assert v is not None  # a value card shows a number on each side it has
            values = [(v, ())]
        for steps, rolls in values:
            if side == "wizard":
                for i in _wizard_targets(st, seat, steps):
                    yield fast_move_wizard(colour, ids[i], steps, card, rolls)
            else:
                for s, k in _tower_targets(st, steps):
                    yield fast_move_tower(colour, s, k, steps, card, rolls)


def generate(st: GameState, every_card: bool) -> Iterator[Action]:
    """The legal actions of a base-game state (no modules), in listing order."""
    if st.game.over:
        return
    tb = st.table
    t = st.turn
    seat = t.player
    colour = tb.colours[seat]
    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    if can_play:
        cards = st.cards
        if cards is not None:
            for k in sorted(set(cards.hands[seat])):
                yield from _card_moves(st, seat, CARD_KINDS[k], None)
            second = t.cards_used >= 1 and tb.config.options["discard_playable_second_card"]
            for k in sorted(set(cards.hands[seat])):
                if second or not card_playable(st, seat, CARD_KINDS[k]):
                    yield DiscardCard(colour, CARD_KINDS[k])
        elif every_card:
            for card in CARD_KINDS:
                yield from _card_moves(st, seat, card, None)
            yield DiscardCard(colour, None)
        else:
            ids = tb.wizard_ids
            for steps in range(1, 7):
                card, rolls = representative("wizard", steps)
                for i in _wizard_targets(st, seat, steps):
                    yield fast_move_wizard(colour, ids[i], steps, card, rolls)
            for steps in range(1, 7):
                card, rolls = representative("tower", steps)
                for s, k in _tower_targets(st, steps):
                    yield fast_move_tower(colour, s, k, steps, card, rolls)
            yield DiscardCard(colour, None)
        if t.cards_used == 0 and not tb.solo:
            if tb.config.options["redraw_push_optional"]:
                yield Redraw(colour, None)
            for s, k in _tower_targets(st, 1):
                yield Redraw(colour, (s, k))
    yield from _cast_actions(st, every_card)
    yield from closing_actions(st, can_play)


def _cast_actions(st: GameState, every_card: bool) -> Iterator[Action]:
    tb = st.table
    ids = tb.wizard_ids
    wiz = st.wizards
    stacks = st.stacks
    order = [(st.turn.player + i) % tb.n for i in range(tb.n)]
    for seat in order:
        colour = tb.colours[seat]
        full = st.potions[seat][0]
        for spell in tb.spells:
            if full < tb.config.spell_costs[spell]:
                continue
            if cast_timing_problem(st, seat, spell) is not None:
                continue
            if spell in ("advance_wizard", "headwind_wizard"):
                step = 1 if spell == "advance_wizard" else -1
                # inlined model.position, space_of, tier_of: every wizard, every listing
                for i, p in enumerate(wiz):
                    if not p or p & 15 != len(stacks[(p >> 4) - 1]):
                        continue
                    dest = board.dest_space(tb.length, p >> 4, step)
                    if dest == st.castle or wiz.count(dest << 4 | len(stacks[dest - 1])) < 6:
                        yield Cast(colour, spell, wizard=ids[i])
            elif spell in ("advance_tower", "headwind_tower"):
                step = 2 if spell == "advance_tower" else -2
                for s, k in _tower_targets(st, step):
                    yield Cast(colour, spell, space=s, tier=k)
            elif spell == "swap_tower":
                spaces = [s + 1 for s, stk in enumerate(stacks) if stk and s + 1 != st.castle]
                if tb.config.options["swap_any_distance"]:
                    for x in spaces:
                        for y in spaces:
                            if x < y:
                                yield Cast(colour, spell, a=x, b=y)
                else:
                    for x in spaces:
                        y = board.dest_space(tb.length, x, 2)
                        if y in spaces:
                            yield Cast(colour, spell, a=x, b=y)
            elif spell == "move_castle":
                yield Cast(colour, spell, direction="cw")
                yield Cast(colour, spell, direction="ccw")
            elif spell == "free_wizard":
                allowed = tb.team_of(seat)
                # inlined model.position, space_of, tier_of: every tier of every stack
                for s0, stk in enumerate(stacks):
                    s = s0 + 1
                    top_full = wiz.count(s << 4 | len(stk)) >= 6 and s != st.castle
                    for k in range(1, len(stk) + 1):
                        under = s << 4 | (k - 1)
                        found = False
                        for i, p in enumerate(wiz):
                            if p == under and tb.wizard_owner[i] in allowed:
                                found = True
                                if not top_full:
                                    yield Cast(colour, spell, space=s, tier=k, wizard=ids[i])
                        if not found:
                            yield Cast(colour, spell, space=s, tier=k)
            elif spell == "piggyback":
                yield from _piggyback_actions(st, seat, every_card)


def _piggyback_actions(st: GameState, seat: int, every_card: bool) -> Iterator[Cast]:
    tb = st.table
    t = st.turn
    if t.ended or t.redrawn or t.cards_used >= tb.actions_per_turn + t.extra_card:
        return
    cur = t.player
    colour = tb.colours[seat]
    wiz = st.wizards
    lo, hi = tb.wiz_range[seat]
    riders_at: dict[int, list[int]] = {}
    # inlined model.position, space_of, tier_of: every listing with piggyback
    for i in range(lo, hi):
        p = wiz[i]
        if p and p & 15 == len(st.stacks[(p >> 4) - 1]):
            riders_at.setdefault(p, []).append(i)
    if not riders_at:
        return
    moves: list[MoveWizard] = []
    if st.cards is not None:
        for k in sorted(set(st.cards.hands[cur])):
            card = CARD_KINDS[k]
            if card.has_side("wizard"):
                moves += [m for m in _card_moves(st, cur, card, None) if isinstance(m, MoveWizard)]
    elif every_card:
        for card in CARD_KINDS:
            if card.has_side("wizard"):
                moves += [m for m in _card_moves(st, cur, card, None) if isinstance(m, MoveWizard)]
    else:
        for steps in range(1, 7):
            card, rolls = representative("wizard", steps)
            for i in _wizard_targets(st, cur, steps):
                moves.append(MoveWizard(tb.colours[cur], tb.wizard_ids[i], steps, card, rolls))
    ids = tb.wizard_ids
    for m in moves:
        wi = tb.wizard_index[m.wizard]
        p = wiz[wi]
        for ri in riders_at.get(p, ()):
            if ri == wi:
                continue
            dest = board.dest_space(tb.length, p >> 4, m.steps)
            if dest != st.castle:
                need = 2 if tb.config.options["piggyback_both_count"] else 1
                if wiz.count(dest << 4 | len(st.stacks[dest - 1])) + need > 6:
                    continue
            yield Cast(colour, "piggyback", rider=ids[ri], then=m)


def actions_for_card(
    state: GameState, card: Card, rolls: tuple[int, ...] = ()
) -> list[MoveWizard | MoveTower]:
    """Legal moves of the current player with ``card`` and, for a die card, the given rolls
    (the last one is used; R-CARD-4); base game."""
    seat = state.turn.player
    out: list[MoveWizard | MoveTower] = []
    for m in _card_moves(state, seat, card, None):
        if card.dice:
            if m.steps != rolls[-1]:
                continue
            m = (
                MoveWizard(m.player, m.wizard, m.steps, m.card, rolls)
                if isinstance(m, MoveWizard)
                else MoveTower(m.player, m.space, m.tier, m.steps, m.card, rolls)
            )
        out.append(m)
    return out
