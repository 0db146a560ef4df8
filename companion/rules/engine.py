"""Setup, legality and the application of actions (rules §3-§23 of ``docs/rules.md``): the one
entry point that hands a state to the base game (:mod:`companion.rules.base`) or, when it
carries modules (``state.modules`` is not None), to the expansion
(:mod:`companion.rules.expansion`).

``apply(state, action)`` validates the action by direct checks (never by enumerating all legal
actions) and returns the new state plus the events explaining it; an illegal action raises
:class:`IllegalAction` and nothing changes. ``legal_actions(state)`` is a lazy view.
"""

from __future__ import annotations

from collections.abc import Iterator

from companion.rules import base
from companion.rules import expansion as _expansion
from companion.rules.actions import Action, Event, IllegalAction, MoveTower, MoveWizard
from companion.rules.base import resolve_spells
from companion.rules.model import BASE_SPELLS, Card, Config, GameState
from companion.rules.turn import HAND_SIZE, place_wizards, start_potions, wizard_card

_BASE_HANDLERS = base.HANDLERS
_MODULE_HANDLERS = _expansion.HANDLERS

__all__ = [
    "HAND_SIZE",
    "LegalActions",
    "actions_for_card",
    "apply",
    "card_playable",
    "is_legal",
    "legal_actions",
    "place_wizards",
    "resolve_spells",
    "setup",
    "start_potions",
    "wizard_card",
]


def setup(config: Config, seed: int | None = None) -> GameState:
    """The position before the start player's first turn (R-SETUP-1..6).

    :param config: the game's :class:`Config`.
    :param seed: shuffles and deals the 90 move cards (and draws master/solo spells when
        ``config.spells`` is None). ``None`` = hands unknown (the tracker's case): the state
        carries no cards and any card of the deck may be played.
    :raises ValueError: an expansion spell without the module it needs (R-MOD-GEN-2).

    With ``config.modules`` (or expansion spells) the expansion's setup is used
    (:func:`companion.rules.expansion.setup`, R-MOD-*-1).
    """
    if config.modules or any(s not in BASE_SPELLS for s in config.spells or ()):
        return _expansion.setup(config, seed)
    return base.setup(config, seed)


def apply(state: GameState, action: Action) -> tuple[GameState, list[Event]]:
    """Carry out ``action`` with full legality checks.

    :returns: the new state and the events that explain it, in the order they happened.
    :raises IllegalAction: the action breaks a rule (``.reason``, ``.rule``); ``state`` is
        unchanged (all values are immutable).
    :raises TypeError: ``action`` is not an action value.
    """
    handler = (_BASE_HANDLERS if state.modules is None else _MODULE_HANDLERS).get(type(action))
    if handler is None:
        raise TypeError(f"not an action: {action!r}")
    if state.game.over:
        raise IllegalAction("the game is over", "R-END-2")
    return handler(state, action)


def is_legal(state: GameState, action: Action) -> bool:
    """True when :func:`apply` would accept ``action``."""
    try:
        apply(state, action)
    except IllegalAction:
        return False
    return True


def card_playable(st: GameState, seat: int, card: Card, steps: int | None = None) -> bool:
    """True when ``card`` could move some wizard or tower now (R-TURN-3); a die card with any
    roll, or with the final roll ``steps`` when given."""
    if st.modules is not None:
        return _expansion.card_playable(st, seat, card, steps)
    return base.card_playable(st, seat, card, steps)


def _generate(st: GameState, every_card: bool) -> Iterator[Action]:
    if st.modules is not None:
        return _expansion.generate(st, every_card)
    return base.generate(st, every_card)


class LegalActions:
    """A lazy view of the legal actions of a state (python-chess ``board.legal_moves`` style).

    Iterate it, test ``action in legal``, ``legal.count()``. Card moves depend on the hands:

    * hands known (``state.cards``): every card of the current hand; a die card is listed once
      per final roll 1-6 (``rolls=(v,)``);
    * hands unknown, ``every_card=False`` (default, the tracker's cheap form): one action per
      target and number of steps 1-6, with a representative card (value card 1-5, the 1-die
      card rolled 6);
    * hands unknown, ``every_card=True``: every card face of the deck.

    ``in`` checks legality with :func:`apply` (any card form, any legal rolls), so it also
    accepts actions the enumeration lists with another representative card.
    """

    __slots__ = ("state", "every_card")

    def __init__(self, state: GameState, every_card: bool = False) -> None:
        self.state = state
        self.every_card = every_card

    def __iter__(self) -> Iterator[Action]:
        return _generate(self.state, self.every_card)

    def __contains__(self, action: object) -> bool:
        if type(action) not in _BASE_HANDLERS:
            return False
        return is_legal(self.state, action)  # type: ignore[arg-type]

    def count(self) -> int:
        """Number of actions the enumeration yields."""
        return sum(1 for _ in _generate(self.state, self.every_card))

    def __bool__(self) -> bool:
        return any(True for _ in _generate(self.state, self.every_card))

    def __repr__(self) -> str:
        return f"<LegalActions of {self.state!r}>"


def legal_actions(state: GameState, every_card: bool = False) -> LegalActions:
    """The lazy :class:`LegalActions` view of ``state``."""
    return LegalActions(state, every_card)


def actions_for_card(
    state: GameState, card: Card, rolls: tuple[int, ...] = ()
) -> list[MoveWizard | MoveTower]:
    """Legal moves of the current player with ``card`` and, for a die card, the given rolls
    (the last one is used; R-CARD-4). Used by bots after rolling."""
    if state.modules is not None:
        return _expansion.actions_for_card(state, card, rolls)
    return base.actions_for_card(state, card, rolls)
