"""Actions in players' words, for questions on the phones and ``order_unseen`` history entries:
:func:`describe`, e.g. "red moved the top 2 towers from space 7 to space 10"."""

from __future__ import annotations

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.model import GameState, position


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` …"""
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def describe(action: Action | None, before: GameState) -> str:
    """An action in players' words, e.g. "moved the top 2 towers from space 7 to space 10"."""
    if action is None:
        return "nothing moved"
    length = before.table.length
    if isinstance(action, MoveTower):
        h = before.height(action.space)
        n = h - action.tier + 1
        what = (
            "the top tower" if n == 1 else ("the whole stack" if n == h else f"the top {n} towers")
        )
        d = (action.space - 1 + action.steps) % length + 1
        moved = f"{action.player} moved {what} from space {action.space} to space {d}"
        return moved + _hidden_choices(action)
    if isinstance(action, MoveWizard):
        pos = before.wizard_position(action.wizard)
        s = pos[0] if pos else 0
        d = (s - 1 + action.steps) % length + 1
        moved = f"{action.player} moved a {action.player} wizard from space {s} to space {d}"
        return moved + _hidden_choices(action)
    if isinstance(action, Redraw):
        if action.push is None:
            return f"{action.player} redrew the hand"
        s, k = action.push
        return f"{action.player} redrew and pushed the tower at tier {k} of space {s} one space"
    if isinstance(action, Cast):
        if action.spell == "free_wizard":
            return (
                f"{action.player} lifted the {ordinal(action.tier or 0)} tower from the bottom "
                f"on space {action.space} to free a wizard"
            )
        if action.spell == "swap_tower":
            return f"{action.player} swapped the top towers of spaces {action.a} and {action.b}"
        if action.space is not None:
            h = before.height(action.space)
            n = h - (action.tier or 1) + 1
            what = "the top tower" if n == 1 else f"the top {n} towers"
            return f"{action.player} cast {action.spell} on {what} of space {action.space}"
        return f"{action.player} cast {action.spell}"
    if isinstance(action, DiscardCard):
        if action.witch_guess is not None:
            s, k = action.witch_guess
            w = before.modules.witch if before.modules is not None else None
            if w is None or w != position(s, k - 1):
                return (
                    f"{action.player} lifted the {ordinal(k)} tower from the bottom on space "
                    f"{s} to release the witch, but she was not under it (the turn ended)"
                )
        return f"{action.player} discarded a card"
    if isinstance(action, EndTurn):
        return "the turn ended"
    return str(action.kind)


def _hidden_choices(action: MoveTower | MoveWizard) -> str:
    """The expansion's choices of a card move the camera does not see, in players' words, so
    two stories that differ only in them are told apart on the phone."""
    out = ""
    if action.page:
        if action.witch_guess is not None:
            s, k = action.witch_guess
            out += (
                f", played as a page card lifting the {ordinal(k)} tower from the bottom on "
                f"space {s} to release the witch"
            )
        else:
            out += ", played as a page card (the witch moved one space first)"
    if action.raven_timing == "before":
        out += ", the raven flying before the move"
    if action.witch_protect:
        out += f", {' and '.join(action.witch_protect)} spending a feather against the witch"
    return out


def count_of(n: int, noun: str) -> str:
    """``1 full potion``, ``2 full potions``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
