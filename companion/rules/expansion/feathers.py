"""Feathers (R-MOD-RAVEN-6): what a player buys with them (an extra card, a free spell, a wizard
step)."""

from __future__ import annotations

from companion.rules import board
from companion.rules.actions import Event, Feather, IllegalAction
from companion.rules.board import event as _ev
from companion.rules.expansion.ending import module_end_check
from companion.rules.expansion.pieces import MovingPieces
from companion.rules.model import GameState
from companion.rules.turn import controlled_seat, player_seat

FEATHER_USES = ("extra_card", "free_spell", "move_wizard")
"""R-MOD-RAVEN-6: what feathers buy (costs :data:`~companion.rules.DEFAULT_FEATHER_COSTS`)."""


def apply_feather(st: GameState, a: Feather) -> tuple[GameState, list[Event]]:
    """Spend feathers (R-MOD-RAVEN-6, OPEN-13): an extra card, a free spell or a wizard
    move of 1-6 steps.

    :raises IllegalAction: not the player's turn, feathers already used this turn, too few
        feathers, an unknown use, or an illegal wizard move."""
    tb = st.table
    seat = player_seat(tb, a.player)
    if st.modules is None or st.modules.feathers is None:
        raise IllegalAction("feathers need the raven module", "R-MOD-RAVEN-6")
    t = st.turn
    if seat != t.player:
        raise IllegalAction("feathers are spent on one's own turn", "R-MOD-RAVEN-6")
    if t.feather_used:
        raise IllegalAction("feathers may be used once per turn", "R-MOD-RAVEN-6")
    use = a.use
    if use not in FEATHER_USES:
        raise IllegalAction(f"a feather use is one of {', '.join(FEATHER_USES)}", "R-MOD-RAVEN-6")
    if t.ended:
        raise IllegalAction("the turn has ended: a wizard entered the castle", "R-TURN-6")
    w = MovingPieces(st, a.witch_protect)
    w.spend_feathers(seat, int(tb.config.feather_costs[use]), use)
    turn = t._replace(feather_used=True)
    game = st.game
    if use == "extra_card":
        if t.extra_card or t.redrawn:
            raise IllegalAction("a 3rd card needs a turn of played cards", "R-MOD-RAVEN-6")
        turn = turn._replace(extra_card=True)
        w.ev.append(_ev("extra_card_allowed", {"player": a.player}))
    elif use == "free_spell":
        w.free_casts = w.free_casts + ((seat, "feather"),)
    else:
        wi = tb.wizard_index.get(a.wizard) if isinstance(a.wizard, str) else None
        if wi is None:
            raise IllegalAction(f"there is no wizard {a.wizard!r} in this game", "R-MOD-RAVEN-6")
        if type(a.steps) is not int or not 1 <= a.steps <= 6:
            raise IllegalAction("the feather moves a wizard 1 to 6 spaces", "R-MOD-RAVEN-6")
        relocate = tb.wizard_owner[wi] == seat or tb.config.options["others_entry_moves_castle"]
        entered = board.wizard_move(w, wi, a.steps, relocate=relocate, web_steps=a.web_steps)
        if entered and tb.wizard_owner[wi] == controlled_seat(tb, st.wizards, seat):
            turn = turn._replace(ended=True)
            w.ev.append(_ev("turn_ended", {"player": a.player, "reason": "castle_entry"}))
        game = module_end_check(w, game, turn)
    return w.state(st, turn, game, st.cards), w.ev
