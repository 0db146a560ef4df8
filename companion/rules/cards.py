"""The move cards (R-DECK-1, R-CARD): the 23 card faces, how many of each the deck holds, and
their fixed order (card kind indices)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Card:
    """The face of one move card (identical cards are interchangeable).

    :param type: ``"wizard"``, ``"tower"`` or ``"either"`` (R-CARD-1/2/3).
    :param wizard: wizard-side value 1..5, None when the card has no wizard side or is a die card.
    :param tower: tower-side value 1..5, None when the card has no tower side or is a die card.
    :param dice: 0 for a value card, else the number of dice shown (1..3, R-CARD-4).
    """

    type: str
    wizard: int | None = None
    tower: int | None = None
    dice: int = 0

    def has_side(self, side: str) -> bool:
        """True when the card can move a ``side`` (``"wizard"`` or ``"tower"``)."""
        return self.type == side or self.type == "either"

    def value(self, side: str) -> int | None:
        """Printed value for ``side``; None for a die card or a missing side."""
        return self.wizard if side == "wizard" else self.tower

    @property
    def code(self) -> str:
        """Short readable code: ``W3``, ``T5``, ``E2``, ``E1/5``, ``E-D1``, ``W-D2``, ``T-D3``."""
        letter = self.type[0].upper()
        if self.dice:
            return f"{letter}-D{self.dice}"
        if self.type == "either" and self.wizard != self.tower:
            return f"E{self.wizard}/{self.tower}"
        v = self.wizard if self.wizard is not None else self.tower
        return f"{letter}{v}"

    def to_json(self) -> dict[str, Any]:
        """``{"type": …, "value": n}``, ``{"type": "either", "wizard": w, "tower": t}`` or
        ``{"type": …, "dice": k}`` (docs/state-model.md §4 card field)."""
        if self.dice:
            return {"type": self.type, "dice": self.dice}
        if self.type == "either" and self.wizard != self.tower:
            return {"type": "either", "wizard": self.wizard, "tower": self.tower}
        v = self.wizard if self.wizard is not None else self.tower
        return {"type": self.type, "value": v}


def _deck() -> tuple[tuple[Card, int], ...]:
    rows: list[tuple[Card, int]] = []
    rows += [(Card("wizard", wizard=v), 4) for v in range(1, 6)]
    rows += [(Card("tower", tower=v), 4) for v in range(1, 6)]
    rows += [(Card("either", wizard=v, tower=v), 3) for v in range(1, 5)]
    rows += [(Card("either", wizard=w, tower=t), 6) for w, t in ((1, 5), (2, 4), (4, 2), (5, 1))]
    rows += [(Card("either", dice=1), 6)]
    rows += [(Card("tower", dice=2), 3), (Card("wizard", dice=2), 3)]
    rows += [(Card("tower", dice=3), 1), (Card("wizard", dice=3), 1)]
    return tuple(rows)


DECK: tuple[tuple[Card, int], ...] = _deck()
"""R-DECK-1: the 90-card move deck as (card face, copies); source BGA ``material.inc.php`` MOVES,
confirmed by ALG ``client.html`` CARDS."""


CARD_KINDS: tuple[Card, ...] = tuple(c for c, _ in DECK)
"""The 23 distinct card faces; a hand or a pile stores indices into this tuple."""


KIND_INDEX: Mapping[Card, int] = {c: i for i, c in enumerate(CARD_KINDS)}


DECK_SIZE = sum(n for _, n in DECK)
assert DECK_SIZE == 90


def full_deck() -> tuple[int, ...]:
    """All 90 cards as kind indices, in catalogue order (shuffle with a seeded RNG)."""
    return tuple(i for i, (_, n) in enumerate(DECK) for _ in range(n))
