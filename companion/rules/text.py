"""Short English sentences for actions and events, in the table's words (for pages and logs).

``describe_action(MoveTower("blue", 3, 1, 1, card))`` -> ``"blue moves the tower on space 3
(tier 1 and up) 1 space clockwise (card T1)"``; ``describe_event(event)`` likewise. Unknown
event kinds (e.g. from the expansion engine) fall back to ``kind: key=value, …``.
"""

from __future__ import annotations

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
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.expansion_text import (
    EXPANSION_SPELL_NAMES,
    describe_feather,
    describe_module_event,
)

SPELL_NAMES: dict[str, str] = {
    "advance_wizard": "Advance a Wizard",
    "advance_tower": "Advance a Tower",
    "swap_tower": "Swap a Tower",
    "headwind_wizard": "Headwind for a Wizard",
    "headwind_tower": "Headwind for a Tower",
    "move_castle": "Move the Raven Castle",
    "piggyback": "Piggyback",
    "free_wizard": "Free a Wizard",
}
"""English names of the base spells (R-SPELL table)."""
SPELL_NAMES.update(EXPANSION_SPELL_NAMES)


def _spaces(n: int) -> str:
    return f"{n} space" if n == 1 else f"{n} spaces"


def _card(action: MoveWizard | MoveTower) -> str:
    text = f"card {action.card.code}"
    if action.rolls:
        text += ", rolled " + " then ".join(str(r) for r in action.rolls)
    return text


def _list(names: Any) -> str:
    names = list(names)
    if not names:
        return "nobody"
    if len(names) == 1:
        return str(names[0])
    return ", ".join(str(n) for n in names[:-1]) + " and " + str(names[-1])


def describe_action(action: Action) -> str:
    """One sentence describing ``action``."""
    if isinstance(action, MoveWizard):
        return (
            f"{action.player} moves {action.wizard} {_spaces(action.steps)} clockwise "
            f"({_card(action)})"
        )
    if isinstance(action, MoveTower):
        return (
            f"{action.player} moves the tower on space {action.space} (tier {action.tier} and "
            f"up) {_spaces(action.steps)} clockwise ({_card(action)})"
        )
    if isinstance(action, DiscardCard):
        what = "a card" if action.card is None else f"card {action.card.code}"
        return f"{action.player} discards {what} without effect"
    if isinstance(action, Redraw):
        if action.push is None:
            return f"{action.player} discards the hand and draws 3 new cards"
        space, tier = action.push
        return (
            f"{action.player} discards the hand, draws 3 new cards and pushes the tower on "
            f"space {space} (tier {tier} and up) 1 space clockwise"
        )
    if isinstance(action, Cast):
        name = SPELL_NAMES.get(action.spell, action.spell)
        times = f" {action.times} times" if action.times != 1 else ""
        target = ""
        if action.spell in ("advance_wizard", "headwind_wizard"):
            target = f" on {action.wizard}"
        elif action.spell in ("advance_tower", "headwind_tower"):
            target = f" on the tower on space {action.space} (tier {action.tier} and up)"
        elif action.spell == "swap_tower":
            target = f" between spaces {action.a} and {action.b}"
        elif action.spell == "move_castle":
            way = "clockwise" if action.direction == "cw" else "counter-clockwise"
            target = f" {way}"
        elif action.spell == "free_wizard":
            target = f" under tower {action.tier} on space {action.space}"
            if action.wizard:
                target += f" for {action.wizard}"
        elif action.spell == "piggyback" and action.then is not None:
            target = f": {action.rider} rides along as {describe_action(action.then)}"
        return f"{action.player} casts {name}{times}{target}"
    if isinstance(action, EndTurn):
        return "the turn ends"
    if isinstance(action, GivePotion):
        return f"{action.player} hands {action.count} full potion(s) to {action.to}"
    if isinstance(action, ExchangeCards):
        return f"{action.player} and {action.partner} exchange a card"
    if isinstance(action, Feather):
        return describe_feather(action)
    return repr(action)


def describe_event(event: Event) -> str:
    """One sentence describing ``event`` (docs/state-model.md §5 vocabulary)."""
    d = event.data
    k = event.kind
    if k == "wizard_moved":
        if d.get("into_castle"):
            return f"{d['wizard']} moves from space {d['from']} into the raven castle"
        return f"{d['wizard']} moves from space {d['from']} to space {d['to']} (tier {d['tier']})"
    if k == "tower_moved":
        if len(d["towers"]) == 1:
            text = f"tower {d['towers'][0]} moves"
        else:
            text = f"towers {_list(d['towers'])} move"
        text += f" from space {d['from']} to space {d['to']}"
        if d.get("carried_wizards"):
            text += f", carrying {_list(d['carried_wizards'])}"
        if d.get("carried_castle"):
            text += " and the raven castle"
        return text
    if k == "wizards_trapped":
        return f"{_list(d['wizards'])} trapped on space {d['space']}"
    if k == "wizards_revealed":
        return f"{_list(d['wizards'])} free again on space {d['space']}"
    if k == "potion_filled":
        return f"{d['player']} fills a potion"
    if k == "no_empty_potion":
        return f"{d['player']} has no empty potion to fill"
    if k == "potions_spent":
        return f"{d['player']} spends {d['count']} full potion(s)"
    if k == "spell_cast":
        name = SPELL_NAMES.get(d["spell"], d["spell"])
        times = f" {d['times']} times" if d.get("times", 1) != 1 else ""
        return f"{d['player']} casts {name}{times}"
    if k == "castle_entered":
        return f"{d['wizard']} enters the raven castle"
    if k == "castle_moved":
        return f"the raven castle moves from space {d['from']} to space {d['to']}"
    if k == "castle_stays":
        return f"the raven castle stays on space {d['at']}"
    if k == "turn_ended":
        why = " (a wizard entered the castle)" if d.get("reason") == "castle_entry" else ""
        return f"{d['player']}'s turn ends{why}"
    if k == "next_player":
        return f"{d['player']}'s turn"
    if k == "hand_refilled":
        return f"{d['player']} draws {d['count']} card(s)"
    if k == "dice_rolled":
        return "rolled " + " then ".join(str(r) for r in d["rolls"]) + f": {d['used']} counts"
    if k == "towers_swapped":
        return f"the top towers of spaces {d['a']} and {d['b']} swap places"
    if k == "tower_lifted_and_replaced":
        return f"the tower {d['tier']} on space {d['space']} is lifted and put back"
    if k == "wizard_freed":
        return f"{d['wizard']} is freed on space {d['space']}"
    if k == "free_failed":
        return f"{d['player']} finds no own wizard there"
    if k == "game_end_triggered":
        who = _list(d["team"]) if d.get("team") else d["player"]
        return f"{who} reached both goals: the round is completed ({d['remaining_turns']} more)"
    if k == "game_over":
        return f"game over: {_list(d['winners'])} win(s)"
    if k == "hand_discarded_and_redrawn":
        return f"{d['player']} discards the hand and draws 3 new cards"
    if k == "card_discarded_without_effect":
        return f"{d['player']} discards a card without effect"
    if k == "announced_move_impossible":
        return f"{d['player']}'s announced move became impossible; the card is lost"
    if k == "potion_given":
        return f"{d['player']} hands {d['count']} full potion(s) to {d['to']}"
    if k == "cards_exchanged":
        return f"{d['player']} and {d['partner']} exchange a card"
    module_text = describe_module_event(event)
    if module_text is not None:
        return module_text
    return k + ": " + ", ".join(f"{key}={value}" for key, value in d.items())
