"""The neutral JSON of move cards, actions and events (``docs/state-model.md`` §3-§5).

``load_action(dump_action(a)) == a`` holds exactly; a malformed document raises
:class:`~companion.rules.actions.FormatError` whose message starts with the field path
(``actions[2].steps``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.rules.actions import (
    ACTION_KINDS,
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    ExchangeCards,
    Feather,
    FormatError,
    GivePotion,
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.json_checks import (
    as_bool,
    as_int,
    as_list,
    as_object,
    as_str,
    no_extra,
    required,
)
from companion.rules.model import KIND_INDEX, Card


def card_to_json(card: Card) -> dict[str, Any]:
    """The JSON of a move card (``docs/state-model.md`` §3): ``type``, and ``wizard`` /
    ``tower`` / ``dice`` as the card shows them."""
    return card.to_json()


def card_from_json(data: Any, where: str = "card") -> Card:
    """Parse a card face; it must be one of the 23 faces of the deck (R-DECK-1).

    :raises FormatError: naming ``where``.
    """
    d = as_object(data, where)
    no_extra(d, {"type", "value", "wizard", "tower", "dice"}, where)
    typ = as_str(required(d, "type", where), f"{where}.type")
    if typ not in ("wizard", "tower", "either"):
        raise FormatError(f"{where}.type", f"{typ!r} is not wizard, tower or either")
    if "dice" in d:
        card = Card(typ, dice=as_int(d["dice"], f"{where}.dice", 1, 3))
    elif "value" in d:
        v = as_int(d["value"], f"{where}.value", 1, 5)
        card = Card(
            typ,
            wizard=v if typ in ("wizard", "either") else None,
            tower=v if typ in ("tower", "either") else None,
        )
    elif typ == "either" and "wizard" in d and "tower" in d:
        card = Card(
            typ,
            wizard=as_int(d["wizard"], f"{where}.wizard", 1, 5),
            tower=as_int(d["tower"], f"{where}.tower", 1, 5),
        )
    else:
        raise FormatError(where, "expected value, dice, or wizard and tower values")
    if card not in KIND_INDEX:
        raise FormatError(where, f"no such card in the move deck: {card.to_json()} (R-DECK-1)")
    return card


def dump_action(action: Action) -> dict[str, Any]:
    """An action as JSON-ready data (docs/state-model.md §4)."""
    if isinstance(action, MoveWizard):
        out: dict[str, Any] = {
            "kind": "move_wizard",
            "player": action.player,
            "wizard": action.wizard,
            "steps": action.steps,
            "card": action.card.to_json(),
        }
    elif isinstance(action, MoveTower):
        out = {
            "kind": "move_tower",
            "player": action.player,
            "space": action.space,
            "tier": action.tier,
            "steps": action.steps,
            "card": action.card.to_json(),
        }
    elif isinstance(action, DiscardCard):
        out = {"kind": "discard_card", "player": action.player}
        if action.card is not None:
            out["card"] = action.card.to_json()
        if action.rolls:
            out["rolls"] = list(action.rolls)
        _dump_module_fields(action, out)
        return out
    elif isinstance(action, Redraw):
        push = action.push
        return {
            "kind": "redraw",
            "player": action.player,
            "push": None if push is None else {"space": push[0], "tier": push[1]},
        }
    elif isinstance(action, Cast):
        out = {"kind": "cast", "player": action.player, "spell": action.spell}
        for name in ("wizard", "space", "tier", "a", "b", "direction", "rider"):
            v = getattr(action, name)
            if v is not None:
                out[name] = v
        if action.then is not None:
            out["then"] = dump_action(action.then)
        if action.times != 1:
            out["times"] = action.times
        if action.free:
            out["free"] = True
        for name in ("steps", "web_steps"):
            v = getattr(action, name)
            if v is not None:
                out[name] = v
        if action.witch_protect:
            out["witch_protect"] = list(action.witch_protect)
        return out
    elif isinstance(action, Feather):
        out = {"kind": "feather", "player": action.player, "use": action.use}
        for name in ("wizard", "steps", "web_steps"):
            v = getattr(action, name)
            if v is not None:
                out[name] = v
        if action.witch_protect:
            out["witch_protect"] = list(action.witch_protect)
        return out
    elif isinstance(action, EndTurn):
        return {"kind": "end_turn"}
    elif isinstance(action, GivePotion):
        return {
            "kind": "give_potion",
            "player": action.player,
            "to": action.to,
            "count": action.count,
        }
    elif isinstance(action, ExchangeCards):
        out = {"kind": "exchange_cards", "player": action.player, "partner": action.partner}
        if action.take is not None:
            out["take"] = action.take.to_json()
        if action.give is not None:
            out["give"] = action.give.to_json()
        return out
    else:
        raise TypeError(f"not an action: {action!r}")
    if action.rolls:
        out["rolls"] = list(action.rolls)
    if action.card_committed:
        out["card_committed"] = True
    _dump_module_fields(action, out)
    if isinstance(action, MoveWizard) and action.web_steps is not None:
        out["web_steps"] = action.web_steps
    if isinstance(action, MoveTower) and action.physically_lifted:
        out["physically_lifted"] = True
    return out


def _dump_module_fields(action: Any, out: dict[str, Any]) -> None:
    """Card fields of the expansion (docs/state-model.md §4): page, raven_timing, witch_guess,
    witch_protect."""
    if getattr(action, "page", False):
        out["page"] = True
    timing = getattr(action, "raven_timing", None)
    if timing is not None:
        out["raven_timing"] = timing
    guess = getattr(action, "witch_guess", None)
    if guess is not None:
        out["witch_guess"] = {"space": guess[0], "tier": guess[1]}
    protect = getattr(action, "witch_protect", ())
    if protect:
        out["witch_protect"] = list(protect)


_MODULE_FIELDS = {"page", "raven_timing", "witch_guess", "witch_protect"}


_ACTION_FIELDS: dict[str, set[str]] = {
    "move_wizard": {
        "kind",
        "player",
        "wizard",
        "steps",
        "card",
        "rolls",
        "card_committed",
        "web_steps",
    }
    | _MODULE_FIELDS,
    "move_tower": _MODULE_FIELDS
    | {
        "kind",
        "player",
        "space",
        "tier",
        "steps",
        "card",
        "rolls",
        "card_committed",
        "physically_lifted",
    },
    "discard_card": {"kind", "player", "card", "rolls", "page", "witch_guess", "witch_protect"},
    "redraw": {"kind", "player", "push"},
    "cast": {
        "kind",
        "player",
        "spell",
        "wizard",
        "space",
        "tier",
        "a",
        "b",
        "direction",
        "rider",
        "then",
        "times",
        "free",
        "steps",
        "web_steps",
        "witch_protect",
    },
    "feather": {"kind", "player", "use", "wizard", "steps", "web_steps", "witch_protect"},
    "end_turn": {"kind", "player"},
    "give_potion": {"kind", "player", "to", "count"},
    "exchange_cards": {"kind", "player", "partner", "take", "give"},
}


def load_action(data: Any, where: str = "action") -> Action:
    """Parse an action (shape only; legality is :func:`~companion.rules.apply`'s job).

    :raises FormatError: naming the bad field, e.g. ``actions[2].steps``.
    """
    d = as_object(data, where)
    kind = as_str(required(d, "kind", where), f"{where}.kind")
    if kind not in ACTION_KINDS:
        raise FormatError(f"{where}.kind", f"{kind!r} is not one of {', '.join(ACTION_KINDS)}")
    no_extra(d, _ACTION_FIELDS[kind], where)
    if kind == "end_turn":
        return EndTurn()
    player = as_str(required(d, "player", where), f"{where}.player")
    if kind in ("move_wizard", "move_tower"):
        steps = as_int(required(d, "steps", where), f"{where}.steps", 1, 6)
        card = card_from_json(required(d, "card", where), f"{where}.card")
        rolls = tuple(
            as_int(r, f"{where}.rolls[{i}]", 1, 6)
            for i, r in enumerate(as_list(d.get("rolls", []), f"{where}.rolls"))
        )
        committed = as_bool(d.get("card_committed", False), f"{where}.card_committed")
        mod = _module_fields(d, where)
        if kind == "move_wizard":
            ws = d.get("web_steps")
            return MoveWizard(
                player,
                as_str(required(d, "wizard", where), f"{where}.wizard"),
                steps,
                card,
                rolls,
                committed,
                web_steps=None if ws is None else as_int(ws, f"{where}.web_steps", 1, 3),
                **mod,
            )
        return MoveTower(
            player,
            as_int(required(d, "space", where), f"{where}.space", 1),
            as_int(required(d, "tier", where), f"{where}.tier", 1),
            steps,
            card,
            rolls,
            committed,
            physically_lifted=as_bool(
                d.get("physically_lifted", False), f"{where}.physically_lifted"
            ),
            **mod,
        )
    if kind == "discard_card":
        c = d.get("card")
        rolls = tuple(
            as_int(r, f"{where}.rolls[{i}]", 1, 6)
            for i, r in enumerate(as_list(d.get("rolls", []), f"{where}.rolls"))
        )
        mod = _module_fields(d, where)
        mod.pop("raven_timing")
        return DiscardCard(
            player, None if c is None else card_from_json(c, f"{where}.card"), rolls, **mod
        )
    if kind == "redraw":
        push = d.get("push")
        if push is None:
            return Redraw(player, None)
        po = as_object(push, f"{where}.push")
        no_extra(po, {"space", "tier"}, f"{where}.push")
        return Redraw(
            player,
            (
                as_int(required(po, "space", f"{where}.push"), f"{where}.push.space", 1),
                as_int(required(po, "tier", f"{where}.push"), f"{where}.push.tier", 1),
            ),
        )
    if kind == "cast":
        spell = as_str(required(d, "spell", where), f"{where}.spell")
        kw: dict[str, Any] = {}
        for name in ("wizard", "direction", "rider"):
            if d.get(name) is not None:
                kw[name] = as_str(d[name], f"{where}.{name}")
        for name in ("space", "tier", "a", "b"):
            if d.get(name) is not None:
                kw[name] = as_int(d[name], f"{where}.{name}", 1)
        if d.get("then") is not None:
            then = load_action(d["then"], f"{where}.then")
            if not isinstance(then, MoveWizard):
                raise FormatError(f"{where}.then", "piggyback rides on a move_wizard")
            kw["then"] = then
        kw["times"] = as_int(d.get("times", 1), f"{where}.times", 1, 12)
        kw["free"] = as_bool(d.get("free", False), f"{where}.free")
        if d.get("steps") is not None:
            kw["steps"] = as_int(d["steps"], f"{where}.steps", 1, 6)
        if d.get("web_steps") is not None:
            kw["web_steps"] = as_int(d["web_steps"], f"{where}.web_steps", 1, 3)
        kw["witch_protect"] = _module_fields(d, where)["witch_protect"]
        return Cast(player, spell, **kw)
    if kind == "feather":
        fw = d.get("wizard")
        fs = d.get("steps")
        fws = d.get("web_steps")
        return Feather(
            player,
            as_str(required(d, "use", where), f"{where}.use"),
            None if fw is None else as_str(fw, f"{where}.wizard"),
            None if fs is None else as_int(fs, f"{where}.steps", 1, 6),
            _module_fields(d, where)["witch_protect"],
            None if fws is None else as_int(fws, f"{where}.web_steps", 1, 3),
        )
    if kind == "give_potion":
        return GivePotion(
            player,
            as_str(required(d, "to", where), f"{where}.to"),
            as_int(d.get("count", 1), f"{where}.count", 1),
        )
    take = d.get("take")
    give = d.get("give")
    return ExchangeCards(
        player,
        as_str(required(d, "partner", where), f"{where}.partner"),
        None if take is None else card_from_json(take, f"{where}.take"),
        None if give is None else card_from_json(give, f"{where}.give"),
    )


def _module_fields(d: Mapping[str, Any], where: str) -> dict[str, Any]:
    """page, raven_timing, witch_guess, witch_protect of a card action (docs/state-model.md §4)."""
    timing = d.get("raven_timing")
    if timing is not None and timing not in ("before", "after"):
        raise FormatError(f"{where}.raven_timing", "expected 'before' or 'after'")
    guess = d.get("witch_guess")
    g: tuple[int, int] | None = None
    if guess is not None:
        go = as_object(guess, f"{where}.witch_guess")
        no_extra(go, {"space", "tier"}, f"{where}.witch_guess")
        g = (
            as_int(required(go, "space", f"{where}.witch_guess"), f"{where}.witch_guess.space", 1),
            as_int(required(go, "tier", f"{where}.witch_guess"), f"{where}.witch_guess.tier", 1),
        )
    protect = tuple(
        as_str(c, f"{where}.witch_protect[{i}]")
        for i, c in enumerate(as_list(d.get("witch_protect", []), f"{where}.witch_protect"))
    )
    return {
        "page": as_bool(d.get("page", False), f"{where}.page"),
        "raven_timing": timing,
        "witch_guess": g,
        "witch_protect": protect,
    }


def dump_event(event: Event) -> dict[str, Any]:
    """``{"kind": …, **data}`` (docs/state-model.md §5)."""
    return event.to_json()


def load_event(data: Any, where: str = "event") -> Event:
    """:raises FormatError: no ``kind``."""
    d = as_object(data, where)
    kind = as_str(required(d, "kind", where), f"{where}.kind")
    return Event(kind, {k: v for k, v in d.items() if k != "kind"})
