"""Card actions with modules: wizard and tower moves with their token, web and lift rules,
discarding and redrawing (R-MOD-GEN-3, R-MOD-WITCH-2, R-MOD-RAVEN-3)."""

from __future__ import annotations

from companion.rules import board
from companion.rules.actions import DiscardCard, Event, IllegalAction, MoveTower, MoveWizard, Redraw
from companion.rules.board import event as _ev
from companion.rules.expansion.common import BadDestination
from companion.rules.expansion.ending import end_check_parts, module_end_check
from companion.rules.expansion.pieces import MovingPieces
from companion.rules.expansion.raven import move_raven, raven_timing_of
from companion.rules.expansion.reach import card_playable
from companion.rules.expansion.witch import witch_page
from companion.rules.model import GameState, make_state
from companion.rules.turn import (
    begin_redraw,
    card_kind,
    card_turn,
    dice_event,
    discard_played,
    discarded_card,
    play_card,
    wizard_card,
)


def lost_turn(
    st: GameState, w: MovingPieces, seat: int, kidx: int, reason: str
) -> tuple[GameState, list[Event]]:
    """Wrong witch guess or lift penalty: the card is discarded, the turn ends
    (R-MOD-WITCH-9, R-MOD-GEN-3); pieces moved before (witch) stay moved."""
    ev = w.ev
    turn, cards, game = play_card(st, seat, kidx, ev, False)
    turn = turn._replace(ended=True)
    ev.append(_ev("turn_ended", {"player": w.tb.colours[seat], "reason": reason}))
    game = module_end_check(w, game, turn)
    return w.state(st, turn, game, cards), ev


def _card_move(
    st: GameState,
    a: MoveWizard | MoveTower,
    seat: int,
    kidx: int,
    wi: int,
) -> tuple[GameState, list[Event]]:
    """A card's move with module rules: the die roll, the witch's page card (R-MOD-WITCH-2/9),
    the raven before or after (R-MOD-RAVEN-2), the move (wizard ``wi`` of a
    :class:`MoveWizard`) on the one movement path, then the played card; a committed card
    whose move became impossible is lost (R-MASTER-9), a physically lifted tower with an
    illegal destination costs the turn (R-MOD-GEN-3)."""
    tb = st.table
    w = MovingPieces(st, a.witch_protect)
    timing = None
    if a.card.dice or a.raven_timing is not None:
        timing = raven_timing_of(w, a)
        dice_event(a.card, a.rolls, w.ev)
    if (a.page or a.witch_guess is not None) and not witch_page(w, a.page, a.witch_guess):
        return lost_turn(st, w, seat, kidx, "witch_guess_wrong")
    if timing == "before":
        move_raven(w, a.steps)
    entered = False
    try:
        if isinstance(a, MoveWizard):
            entered = board.wizard_move(w, wi, a.steps, web_steps=a.web_steps)
        else:
            board.tower_move(w, a.space, a.tier, a.steps, seat)
    except IllegalAction as exc:
        if (
            isinstance(exc, BadDestination)
            and isinstance(a, MoveTower)
            and a.physically_lifted
            and tb.config.options["expansion_lift_penalty"]
        ):
            w.ev.append(
                _ev(
                    "illegal_tower_lift",
                    {"player": a.player, "space": a.space, "tier": a.tier, "reason": exc.reason},
                )
            )
            return lost_turn(st, w, seat, kidx, "lift_penalty")
        if not (a.card_committed and tb.master):
            raise
        w.ev.append(
            _ev(
                "announced_move_impossible",
                {"player": a.player, "card": a.card.to_json(), "reason": exc.reason},
            )
        )
    if timing == "after":
        move_raven(w, a.steps)
    turn, cards, game = play_card(st, seat, kidx, w.ev, entered)
    if entered or w.changed_goals(st):
        game = module_end_check(w, game, turn)
    return w.state(st, turn, game, cards), w.ev


def _plain_move(
    st: GameState, a: MoveWizard | MoveTower, seat: int, kidx: int, wi: int
) -> tuple[GameState, list[Event]]:
    """:func:`_card_move` when no module piece or tile takes part in it (the hooks would do
    nothing, the events are the same): the base game's movement on plain
    :class:`~companion.rules.board.Pieces`. A refused move goes the full way, which raises it
    or loses a committed card."""
    tb = st.table
    ev: list[Event] = []
    if a.card.dice:
        dice_event(a.card, a.rolls, ev)
    p = board.Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    try:
        if isinstance(a, MoveWizard):
            board.wizard_move(p, wi, a.steps)
            filled = False
        else:
            filled = board.tower_move(p, a.space, a.tier, a.steps, seat)[2]
    except IllegalAction:
        return _card_move(st, a, seat, kidx, wi)
    m = st.modules
    assert m is not None
    turn, cards, game = play_card(st, seat, kidx, ev, False)
    if filled:
        game = end_check_parts(tb, p.wiz, p.potions, m.witch_vials, game, turn, ev)
    return make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, m), ev


def apply_module_move_wizard(st: GameState, a: MoveWizard) -> tuple[GameState, list[Event]]:
    """:class:`~companion.rules.actions.MoveWizard` with modules (R-CARD-1, R-MOD-*).

    :raises IllegalAction: as :func:`companion.rules.apply`."""
    seat, kidx, wi = wizard_card(st, a)
    m = st.modules
    assert m is not None
    witch, raven = m.witch, m.raven
    if not (
        a.page
        or a.raven_timing is not None
        or a.witch_guess is not None
        or a.witch_protect
        or a.web_steps is not None
        or (a.card.dice and raven is not None)
    ):
        # plain when the wizard is visible and lands on a plain space that is not the
        # castle's, on a top without a token or the magic tower
        tb = st.table
        stacks = st.stacks
        p = st.wizards[wi]
        # inlined model.position, space_of, tier_of: the quick path of every move
        s = p >> 4
        if p and p & 15 == len(stacks[s - 1]):
            dest = (s - 1 + a.steps) % tb.length + 1
            if dest != st.castle and tb.special[dest] is None:
                dst = stacks[dest - 1]
                code = dest << 4 | len(dst)
                if code != witch and code != raven and not (dst and tb.tower_magic[dst[-1]]):
                    return _plain_move(st, a, seat, kidx, wi)
    return _card_move(st, a, seat, kidx, wi)


def apply_module_move_tower(st: GameState, a: MoveTower) -> tuple[GameState, list[Event]]:
    """:class:`~companion.rules.actions.MoveTower` with modules (R-CARD-2, R-MOD-GEN-3,
    R-MOD-*).

    :raises IllegalAction: as :func:`companion.rules.apply`."""
    seat = card_turn(st, a.player)
    kidx = card_kind(st, seat, a.card, "tower", a.steps, a.rolls)
    m = st.modules
    assert m is not None
    witch, raven = m.witch, m.raven
    s = a.space
    if not (
        a.page
        or a.raven_timing is not None
        or a.witch_guess is not None
        or a.witch_protect
        or (a.card.dice and raven is not None)
    ) and (type(s) is int and 1 <= s <= st.table.length):
        # plain when the tower lands on a plain space that is neither the castle's nor its
        # own, not on the magic tower, and no token stands on either space
        # (inlined model.space_of: the quick path of every tower move)
        tb = st.table
        dest = (s - 1 + a.steps) % tb.length + 1
        if dest != st.castle and dest != s and tb.special[dest] is None:
            dst = st.stacks[dest - 1]
            if (
                not (dst and tb.tower_magic[dst[-1]])
                and (witch is None or (witch >> 4 != s and witch >> 4 != dest))
                and (raven is None or (raven >> 4 != s and raven >> 4 != dest))
            ):
                return _plain_move(st, a, seat, kidx, -1)
    return _card_move(st, a, seat, kidx, -1)


def apply_module_discard(st: GameState, a: DiscardCard) -> tuple[GameState, list[Event]]:
    """:class:`~companion.rules.actions.DiscardCard` with modules: a page card still moves
    the witch (R-TURN-3, R-MOD-WITCH-2).

    :raises IllegalAction: as :func:`companion.rules.apply`."""
    seat = card_turn(st, a.player)
    kidx = discarded_card(st, seat, a, card_playable)
    card = a.card
    w = MovingPieces(st, a.witch_protect)
    if not witch_page(w, a.page, a.witch_guess):
        if kidx < 0:
            t = st.turn
            turn = t._replace(cards_used=t.cards_used + 1, ended=True)
            w.ev.append(_ev("turn_ended", {"player": a.player, "reason": "witch_guess_wrong"}))
            return w.state(st, turn, module_end_check(w, st.game, turn), None), w.ev
        return lost_turn(st, w, seat, kidx, "witch_guess_wrong")
    w.ev.append(
        _ev(
            "card_discarded_without_effect",
            {"player": a.player, "card": None if card is None else card.to_json()},
        )
    )
    turn, cards, game = discard_played(st, seat, kidx, w.ev)
    game = module_end_check(w, game, turn)
    return w.state(st, turn, game, cards), w.ev


def apply_module_redraw(st: GameState, a: Redraw) -> tuple[GameState, list[Event]]:
    """:class:`~companion.rules.actions.Redraw` with modules (R-TURN-5).

    :raises IllegalAction: as :func:`companion.rules.apply`."""
    seat, cards, turn, push = begin_redraw(st, a)
    w = MovingPieces(st)
    w.ev.append(_ev("hand_discarded_and_redrawn", {"player": a.player}))
    if push is not None:
        board.tower_move(w, push[0], push[1], 1, seat)
    game = module_end_check(w, st.game, turn)
    return w.state(st, turn, game, cards), w.ev
