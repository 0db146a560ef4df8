""":func:`apply` for a state with modules: the handler of each action type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    ExchangeCards,
    Feather,
    GivePotion,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.expansion.ending import end_turn_with_modules
from companion.rules.expansion.feathers import apply_feather
from companion.rules.expansion.moves import (
    apply_module_discard,
    apply_module_move_tower,
    apply_module_move_wizard,
    apply_module_redraw,
)
from companion.rules.expansion.spells import apply_module_cast
from companion.rules.model import GameState
from companion.rules.turn import end_turn, exchange_cards, give_potion


def _apply_end_turn(st: GameState, a: EndTurn) -> tuple[GameState, list[Event]]:
    """End Turn with modules: the expansion's own step when armed spells or free casts are to
    be cleared or the game may end (solo, final round), else the base game's (R-TURN-4)."""
    m = st.modules
    assert m is not None
    if m.armed or m.free_casts or st.table.solo or st.game.end_triggered_by is not None:
        return end_turn_with_modules(st, a)
    return end_turn(st, a)


HANDLERS: dict[type, Callable[[GameState, Any], tuple[GameState, list[Event]]]] = {
    MoveWizard: apply_module_move_wizard,
    MoveTower: apply_module_move_tower,
    DiscardCard: apply_module_discard,
    Redraw: apply_module_redraw,
    Cast: apply_module_cast,
    EndTurn: _apply_end_turn,
    GivePotion: give_potion,
    ExchangeCards: exchange_cards,
    Feather: apply_feather,
}
"""The modules' step for each action type, :class:`~companion.rules.actions.Feather` included."""


def apply(state: GameState, action: Action) -> tuple[GameState, list[Event]]:
    """:func:`companion.rules.apply` for a state with modules (same contract)."""
    handler = HANDLERS.get(type(action))
    if handler is None:
        raise TypeError(f"not an action: {action!r}")
    if state.game.over:
        raise IllegalAction("the game is over", "R-END-2")
    result: tuple[GameState, list[Event]] = handler(state, action)
    return result


def accepts(state: GameState, action: Action) -> bool:
    """True when :func:`apply` accepts ``action`` on ``state`` (a state with modules)."""
    try:
        apply(state, action)
    except IllegalAction:
        return False
    return True
