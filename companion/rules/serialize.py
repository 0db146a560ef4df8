"""The neutral JSON of ``rules/state-model.md`` §1-§5: load and dump states, actions, events.

``dump_state(load_state(j)) == j`` and ``load_state(dump_state(s)) == s`` hold exactly. Loading
checks every field and the invariants of state-model.md §2.4; a malformed document raises
:class:`FormatError` whose message starts with the field path (``wizards.blue-2.tier``,
``actions[2].steps``).
"""

from __future__ import annotations

import dataclasses
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
from companion.rules.model import (
    BASE_SPELLS,
    CARD_KINDS,
    KIND_INDEX,
    MAX_ON_TOP,
    SETUP_COUNTS,
    Card,
    CardState,
    Config,
    GameState,
    ModuleState,
    Progress,
    Result,
    Table,
    TowerSpec,
    Track,
    Turn,
)

# --------------------------------------------------------------------------------------------
# small checked readers


def _obj(v: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise FormatError(where, "expected an object")
    return v


def _int(v: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise FormatError(where, "expected an integer")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"{lo if lo is not None else ''}..{hi if hi is not None else ''}"
        raise FormatError(where, f"{v} is outside {rng}")
    return v


def _bool(v: Any, where: str) -> bool:
    if not isinstance(v, bool):
        raise FormatError(where, "expected true or false")
    return v


def _str(v: Any, where: str) -> str:
    if not isinstance(v, str):
        raise FormatError(where, "expected a string")
    return v


def _list(v: Any, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise FormatError(where, "expected a list")
    return v


def _need(d: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise FormatError(f"{where}.{key}" if where else key, "missing")
    return d[key]


def _no_extra(d: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = set(d) - allowed
    if extra:
        name = sorted(extra)[0]
        raise FormatError(f"{where}.{name}" if where else name, "unknown field")


# --------------------------------------------------------------------------------------------
# cards


def card_to_json(card: Card) -> dict[str, Any]:
    return card.to_json()


def card_from_json(data: Any, where: str = "card") -> Card:
    """Parse a card face; it must be one of the 23 faces of the deck (R-DECK-1).

    :raises FormatError: naming ``where``.
    """
    d = _obj(data, where)
    _no_extra(d, {"type", "value", "wizard", "tower", "dice"}, where)
    typ = _str(_need(d, "type", where), f"{where}.type")
    if typ not in ("wizard", "tower", "either"):
        raise FormatError(f"{where}.type", f"{typ!r} is not wizard, tower or either")
    if "dice" in d:
        card = Card(typ, dice=_int(d["dice"], f"{where}.dice", 1, 3))
    elif "value" in d:
        v = _int(d["value"], f"{where}.value", 1, 5)
        card = Card(
            typ,
            wizard=v if typ in ("wizard", "either") else None,
            tower=v if typ in ("tower", "either") else None,
        )
    elif typ == "either" and "wizard" in d and "tower" in d:
        card = Card(
            typ,
            wizard=_int(d["wizard"], f"{where}.wizard", 1, 5),
            tower=_int(d["tower"], f"{where}.tower", 1, 5),
        )
    else:
        raise FormatError(where, "expected value, dice, or wizard and tower values")
    if card not in KIND_INDEX:
        raise FormatError(where, f"no such card in the move deck: {card.to_json()} (R-DECK-1)")
    return card


# --------------------------------------------------------------------------------------------
# configuration


def dump_config(table: Table) -> dict[str, Any]:
    c = table.config
    pairs = c.team_pairs
    return {
        "player_count": c.player_count,
        "variant": c.variant,
        "teams": None if pairs is None else [list(p) for p in pairs],
        "modules": sorted(c.modules),
        "spells": list(table.spells),
        "spell_costs": dict(sorted(c.spell_costs.items())),
        "feather_costs": dict(sorted(c.feather_costs.items())),
        "options": dict(sorted(c.options.items())),
    }


def _track_to_json(t: Track) -> dict[str, Any]:
    return {
        "length": t.length,
        "raven_crest": sorted(t.raven_crest),
        "special": {str(s): k for s, k in t.special},
    }


def _track_from_json(data: Any) -> Track:
    d = _obj(data, "track")
    _no_extra(d, {"length", "raven_crest", "special"}, "track")
    length = _int(_need(d, "length", "track"), "track.length", 7, 64)
    crest = [
        _int(v, f"track.raven_crest[{i}]", 1, length)
        for i, v in enumerate(_list(d.get("raven_crest", []), "track.raven_crest"))
    ]
    special_raw = _obj(d.get("special", {}), "track.special")
    special = []
    for k, v in special_raw.items():
        try:
            s = int(k)
        except ValueError:
            raise FormatError(f"track.special.{k}", "space numbers are integers") from None
        special.append((_int(s, f"track.special.{k}", 1, length), _str(v, f"track.special.{k}")))
    try:
        return Track(length, frozenset(crest), tuple(special))
    except ValueError as exc:
        raise FormatError("track", str(exc)) from None


def _config_from_json(data: Any, track: Track) -> Config:
    d = _obj(data, "config")
    _no_extra(
        d,
        {
            "player_count",
            "variant",
            "teams",
            "modules",
            "spells",
            "spell_costs",
            "feather_costs",
            "options",
        },
        "config",
    )
    n = _int(_need(d, "player_count", "config"), "config.player_count", 1, 6)
    variant = _str(d.get("variant", "base"), "config.variant")
    teams_raw = d.get("teams")
    modules = [
        _str(m, f"config.modules[{i}]")
        for i, m in enumerate(_list(d.get("modules", []), "config.modules"))
    ]
    spells_raw = d.get("spells")
    spells = None
    if spells_raw is not None:
        spells = tuple(
            _str(s, f"config.spells[{i}]") for i, s in enumerate(_list(spells_raw, "config.spells"))
        )
    maps = {}
    for name in ("spell_costs", "feather_costs", "options"):
        maps[name] = dict(_obj(d.get(name, {}), f"config.{name}"))
    try:
        cfg = Config(
            player_count=n,
            variant=variant,
            teams=teams_raw is not None,
            colours=None,
            modules=frozenset(modules),
            spells=spells,
            spell_costs=maps["spell_costs"],
            feather_costs=maps["feather_costs"],
            options=maps["options"],
            track=track,
        )
    except ValueError as exc:
        msg = str(exc)
        field, _, problem = msg.partition(": ")
        raise FormatError(field, problem or msg) from None
    return cfg


# --------------------------------------------------------------------------------------------
# state


def _pos_json(p: int) -> Any:
    return "castle" if p == 0 else {"space": p >> 4, "tier": p & 15}


def _potion_json(t: tuple[int, int, int]) -> dict[str, int]:
    return {"full": t[0], "empty": t[1], "spent": t[2]}


def dump_state(state: GameState) -> dict[str, Any]:
    """The state as JSON-ready data (state-model.md §1-§2)."""
    tb = state.table
    colours = tb.colours
    towers = tb.towers
    t = state.turn
    g = state.game
    m = state.modules
    out: dict[str, Any] = {
        "config": dump_config(tb),
        "track": _track_to_json(tb.track),
        "towers": {x.id: {"kind": x.kind, "crest": x.crest, "magic": x.magic} for x in towers},
        "players": [{"id": c, "colour": c, "seat": i} for i, c in enumerate(colours)],
        "stacks": {
            str(s + 1): [towers[x].id for x in stk] for s, stk in enumerate(state.stacks) if stk
        },
        "wizards": {w: _pos_json(p) for w, p in zip(tb.wizard_ids, state.wizards, strict=True)},
        "castle": {"space": state.castle, "tier": len(state.stacks[state.castle - 1])},
        "witch": None if m is None or m.witch is None else _pos_json(m.witch),
        "raven": None if m is None or m.raven is None else _pos_json(m.raven),
        "potions": {c: _potion_json(state.potions[i]) for i, c in enumerate(colours)},
        "witch_vials": None
        if m is None or m.witch_vials is None
        else {c: _potion_json(m.witch_vials[i]) for i, c in enumerate(colours)},
        "witch_vial_supply": None if m is None else m.witch_vial_supply,
        "feathers": None
        if m is None or m.feathers is None
        else {c: m.feathers[i] for i, c in enumerate(colours)},
        "module_turn": None
        if m is None
        else {
            "armed": [{"player": colours[p], "spell": sp} for p, sp in m.armed],
            "free_spells": [{"player": colours[p], "source": src} for p, src in m.free_casts],
        },
        "turn": {
            "player": colours[t.player],
            "cards_used": t.cards_used,
            "spells_cast": [
                {"player": colours[s], "spell": sp, "window": w, "times": n}
                for s, sp, w, n in t.casts
            ],
            "redrawn": t.redrawn,
            "ended": t.ended,
            "exchanges": t.exchanges,
            "feather_used": t.feather_used,
            "extra_card": t.extra_card,
            "fly_used": t.fly_used,
        },
        "game": {
            "end_triggered_by": None if g.end_triggered_by is None else colours[g.end_triggered_by],
            "remaining_turns": g.remaining_turns,
            "over": g.over,
            "result": None
            if g.result is None
            else {
                "reason": g.result.reason,
                "qualified": [colours[s] for s in g.result.qualified],
                "winners": [colours[s] for s in g.result.winners],
                "unused_full": {colours[s]: n for s, n in enumerate(g.result.unused_full)},
            },
            "cards_played": g.cards_played,
        },
        "cards": None,
    }
    c = state.cards
    if c is not None:
        out["cards"] = {
            "hands": {
                col: [CARD_KINDS[k].to_json() for k in c.hands[i]] for i, col in enumerate(colours)
            },
            "draw": [CARD_KINDS[k].to_json() for k in c.draw],
            "discard": [CARD_KINDS[k].to_json() for k in c.discard],
            "seed": c.seed,
            "reshuffles": c.reshuffles,
        }
    return out


_STATE_FIELDS = {
    "config",
    "track",
    "towers",
    "players",
    "stacks",
    "wizards",
    "castle",
    "witch",
    "raven",
    "potions",
    "witch_vials",
    "witch_vial_supply",
    "feathers",
    "module_turn",
    "turn",
    "game",
    "cards",
}


def load_state(data: Any) -> GameState:
    """Parse and validate a state (state-model.md §1-§2, invariants §2.4).

    :raises FormatError: naming the bad field.
    """
    d = _obj(data, "state")
    _no_extra(d, _STATE_FIELDS, "")
    track = _track_from_json(_need(d, "track", ""))
    players_raw = _list(_need(d, "players", ""), "players")
    colours: list[str] = []
    for i, p in enumerate(players_raw):
        po = _obj(p, f"players[{i}]")
        _no_extra(po, {"id", "colour", "seat"}, f"players[{i}]")
        col = _str(_need(po, "colour", f"players[{i}]"), f"players[{i}].colour")
        if po.get("id", col) != col:
            raise FormatError(f"players[{i}].id", "the id of a player is his colour")
        if _int(po.get("seat", i), f"players[{i}].seat") != i:
            raise FormatError(f"players[{i}].seat", "players are listed in seat order from 0")
        colours.append(col)
    cfg = _config_from_json(_need(d, "config", ""), track)
    try:
        cfg = Config(
            player_count=cfg.player_count,
            variant=cfg.variant,
            teams=cfg.teams,
            colours=tuple(colours),
            modules=cfg.modules,
            spells=cfg.spells,
            spell_costs=cfg.spell_costs,
            feather_costs=cfg.feather_costs,
            options=cfg.options,
            track=track,
        )
    except ValueError as exc:
        msg = str(exc)
        field, _, problem = msg.partition(": ")
        raise FormatError(field.replace("config.colours", "players"), problem or msg) from None
    teams_raw = _obj(d["config"], "config").get("teams")
    if teams_raw is not None:
        pairs = [list(p) for p in cfg.team_pairs or ()]
        if teams_raw != pairs:
            raise FormatError("config.teams", f"partners sit opposite: expected {pairs}")
    towers_raw = _obj(_need(d, "towers", ""), "towers")
    towers: list[TowerSpec] = []
    for tid, spec in towers_raw.items():
        so = _obj(spec, f"towers.{tid}")
        _no_extra(so, {"kind", "crest", "magic"}, f"towers.{tid}")
        kind = _str(_need(so, "kind", f"towers.{tid}"), f"towers.{tid}.kind")
        if kind not in ("crest", "plain", "magic"):
            raise FormatError(f"towers.{tid}.kind", "expected crest, plain or magic")
        ts = TowerSpec(tid, kind)
        if so.get("crest", ts.crest) != ts.crest or so.get("magic", ts.magic) != ts.magic:
            raise FormatError(f"towers.{tid}", "crest/magic do not match the kind")
        towers.append(ts)
    wiz_raw = _obj(_need(d, "wizards", ""), "wizards")
    per_colour: dict[str, int] = {}
    for wid in wiz_raw:
        col, _, num = wid.rpartition("-")
        if col not in colours or not num.isdigit():
            raise FormatError(f"wizards.{wid}", "wizard ids are <colour>-<n> of a player")
        per_colour[col] = per_colour.get(col, 0) + 1
    counts = {per_colour.get(c, 0) for c in colours}
    if len(counts) != 1:
        raise FormatError("wizards", "every player has the same number of wizards (R-SETUP-2)")
    w_each = counts.pop()
    if cfg.spells is None:  # R-SETUP-4 / R-MASTER-1 defaults (master: the first n spells)
        from companion.rules.engine import resolve_spells

        cfg = dataclasses.replace(cfg, spells=resolve_spells(cfg, None))
    spells = cfg.spells or ()
    tb = Table(
        cfg,
        spells,
        tuple(towers),
        wizards_each=w_each,
        potions_each=SETUP_COUNTS[cfg.player_count][1],
    )
    for wid in wiz_raw:
        if wid not in tb.wizard_index:
            raise FormatError(f"wizards.{wid}", "wizards of a colour are numbered 1..n")
    # stacks
    length = track.length
    stacks_l: list[tuple[int, ...]] = [() for _ in range(length)]
    seen: set[str] = set()
    for key, lst in _obj(_need(d, "stacks", ""), "stacks").items():
        where = f"stacks.{key}"
        try:
            s = int(key)
        except ValueError:
            raise FormatError(where, "space numbers are integers") from None
        _int(s, where, 1, length)
        ids = _list(lst, where)
        for j, tid in enumerate(ids):
            if tid not in tb.tower_index:
                raise FormatError(f"{where}[{j}]", f"unknown tower {tid!r}")
            if tid in seen:
                raise FormatError(f"{where}[{j}]", f"tower {tid} stands twice (invariant 1)")
            seen.add(tid)
        stacks_l[s - 1] = tuple(tb.tower_index[t] for t in ids)
    missing = set(tb.tower_index) - seen
    if missing:
        raise FormatError("stacks", f"tower {sorted(missing)[0]} is on no space (invariant 1)")
    stacks = tuple(stacks_l)
    # castle
    co = _obj(_need(d, "castle", ""), "castle")
    _no_extra(co, {"space", "tier"}, "castle")
    castle = _int(_need(co, "space", "castle"), "castle.space", 1, length)
    if _int(_need(co, "tier", "castle"), "castle.tier") != len(stacks[castle - 1]):
        raise FormatError("castle.tier", "the castle is always on the top surface (R-RAVEN-1)")
    # wizards
    wiz = [0] * len(tb.wizard_ids)
    for wid, pos in wiz_raw.items():
        where = f"wizards.{wid}"
        if pos == "castle":
            continue
        po = _obj(pos, where)
        _no_extra(po, {"space", "tier"}, where)
        s = _int(_need(po, "space", where), f"{where}.space", 1, length)
        t = _int(_need(po, "tier", where), f"{where}.tier", 0, len(stacks[s - 1]))
        if s == castle and t == len(stacks[s - 1]):
            raise FormatError(where, "a visible wizard cannot stand on the castle's space")
        wiz[tb.wizard_index[wid]] = s << 4 | t
    wizards = tuple(wiz)
    for s in range(1, length + 1):
        if wizards.count(s << 4 | len(stacks[s - 1])) > MAX_ON_TOP:
            raise FormatError(f"stacks.{s}", "more than 6 visible wizards on the top (R-WIZ-4)")
    # potions
    pot_raw = _obj(_need(d, "potions", ""), "potions")
    potions = []
    for c in colours:
        potions.append(_triple(_need(pot_raw, c, "potions"), f"potions.{c}"))
    _no_extra(pot_raw, set(colours), "potions")
    for seat in range(tb.n):
        team = tb.team_of(seat)
        total = sum(sum(potions[s]) for s in team)
        if total != sum(tb.start_potions[s] for s in team):
            raise FormatError(
                f"potions.{colours[seat]}",
                f"potions total {total}; expected {tb.start_potions[seat]} each (invariant 4)",
            )
    # modules
    modules = None
    # expansion spells need the module state even with no module in play (R-SPELLX-1)
    if (
        tb.config.modules
        or any(s not in BASE_SPELLS for s in spells)
        or any(
            d.get(k) is not None
            for k in ("witch", "raven", "witch_vials", "witch_vial_supply", "feathers")
        )
    ):
        armed: list[tuple[int, str]] = []
        free_casts: list[tuple[int, str]] = []
        mt = d.get("module_turn")
        if mt is not None:
            mo = _obj(mt, "module_turn")
            _no_extra(mo, {"armed", "free_spells"}, "module_turn")
            for i, x in enumerate(_list(mo.get("armed", []), "module_turn.armed")):
                w = f"module_turn.armed[{i}]"
                xo = _obj(x, w)
                _no_extra(xo, {"player", "spell"}, w)
                armed.append(
                    (
                        _colour_seat(tb, _need(xo, "player", w), f"{w}.player"),
                        _str(_need(xo, "spell", w), f"{w}.spell"),
                    )
                )
            for i, x in enumerate(_list(mo.get("free_spells", []), "module_turn.free_spells")):
                w = f"module_turn.free_spells[{i}]"
                xo = _obj(x, w)
                _no_extra(xo, {"player", "source"}, w)
                free_casts.append(
                    (
                        _colour_seat(tb, _need(xo, "player", w), f"{w}.player"),
                        _str(_need(xo, "source", w), f"{w}.source"),
                    )
                )
        modules = ModuleState(
            witch=_piece(d.get("witch"), "witch", stacks),
            raven=_piece(d.get("raven"), "raven", stacks),
            witch_vials=None
            if d.get("witch_vials") is None
            else tuple(
                _triple(
                    _need(_obj(d["witch_vials"], "witch_vials"), c, "witch_vials"),
                    f"witch_vials.{c}",
                )
                for c in colours
            ),
            witch_vial_supply=None
            if d.get("witch_vial_supply") is None
            else _int(d["witch_vial_supply"], "witch_vial_supply", 0, 6),
            feathers=None
            if d.get("feathers") is None
            else tuple(
                _int(_need(_obj(d["feathers"], "feathers"), c, "feathers"), f"feathers.{c}", 0, 3)
                for c in colours
            ),
            armed=tuple(armed),
            free_casts=tuple(free_casts),
        )
        if modules.witch_vials is not None:
            taken = sum(sum(v) for v in modules.witch_vials)
            box = int(tb.config.options["witch_vials"])
            if taken + (modules.witch_vial_supply or 0) > box:
                raise FormatError(
                    "witch_vials",
                    f"{taken} taken + {modules.witch_vial_supply} in the supply; "
                    f"the box holds {box} (R-COMP-3)",
                )
    turn = _turn_from_json(_need(d, "turn", ""), tb)
    game = _game_from_json(_need(d, "game", ""), tb)
    cards = _cards_from_json(d.get("cards"), tb)
    return GameState(tb, stacks, wizards, castle, tuple(potions), turn, game, cards, modules)


def _triple(v: Any, where: str) -> tuple[int, int, int]:
    o = _obj(v, where)
    _no_extra(o, {"full", "empty", "spent"}, where)
    return (
        _int(_need(o, "full", where), f"{where}.full", 0),
        _int(_need(o, "empty", where), f"{where}.empty", 0),
        _int(_need(o, "spent", where), f"{where}.spent", 0),
    )


def _piece(v: Any, where: str, stacks: tuple[tuple[int, ...], ...]) -> int | None:
    if v is None:
        return None
    o = _obj(v, where)
    _no_extra(o, {"space", "tier"}, where)
    s = _int(_need(o, "space", where), f"{where}.space", 1, len(stacks))
    t = _int(_need(o, "tier", where), f"{where}.tier", 0, len(stacks[s - 1]))
    return s << 4 | t


def _colour_seat(tb: Table, v: Any, where: str) -> int:
    c = _str(v, where)
    if c not in tb.seat_of:
        raise FormatError(where, f"{c!r} is not a player of this game")
    return tb.seat_of[c]


def _turn_from_json(v: Any, tb: Table) -> Turn:
    o = _obj(v, "turn")
    _no_extra(
        o,
        {
            "player",
            "cards_used",
            "spells_cast",
            "redrawn",
            "ended",
            "exchanges",
            "feather_used",
            "extra_card",
            "fly_used",
        },
        "turn",
    )
    casts = []
    for i, c in enumerate(_list(o.get("spells_cast", []), "turn.spells_cast")):
        w = f"turn.spells_cast[{i}]"
        co = _obj(c, w)
        _no_extra(co, {"player", "spell", "window", "times"}, w)
        casts.append(
            (
                _colour_seat(tb, _need(co, "player", w), f"{w}.player"),
                _str(_need(co, "spell", w), f"{w}.spell"),
                _int(co.get("window", 0), f"{w}.window", 0, 2),
                _int(co.get("times", 1), f"{w}.times", 1),
            )
        )
    return Turn(
        _colour_seat(tb, _need(o, "player", "turn"), "turn.player"),
        _int(o.get("cards_used", 0), "turn.cards_used", 0, 3),
        _bool(o.get("redrawn", False), "turn.redrawn"),
        _bool(o.get("ended", False), "turn.ended"),
        tuple(casts),
        _int(o.get("exchanges", 0), "turn.exchanges", 0),
        _bool(o.get("feather_used", False), "turn.feather_used"),
        _bool(o.get("extra_card", False), "turn.extra_card"),
        _bool(o.get("fly_used", False), "turn.fly_used"),
    )


def _game_from_json(v: Any, tb: Table) -> Progress:
    o = _obj(v, "game")
    _no_extra(o, {"end_triggered_by", "remaining_turns", "over", "result", "cards_played"}, "game")
    trig = o.get("end_triggered_by")
    seat = None if trig is None else _colour_seat(tb, trig, "game.end_triggered_by")
    rem = o.get("remaining_turns")
    remaining = None if rem is None else _int(rem, "game.remaining_turns", 0, 5)
    result = None
    r = o.get("result")
    if r is not None:
        ro = _obj(r, "game.result")
        _no_extra(ro, {"reason", "qualified", "winners", "unused_full"}, "game.result")
        uf = _obj(_need(ro, "unused_full", "game.result"), "game.result.unused_full")
        result = Result(
            _str(_need(ro, "reason", "game.result"), "game.result.reason"),
            tuple(
                _colour_seat(tb, c, f"game.result.qualified[{i}]")
                for i, c in enumerate(_list(ro.get("qualified", []), "game.result.qualified"))
            ),
            tuple(
                _colour_seat(tb, c, f"game.result.winners[{i}]")
                for i, c in enumerate(_list(ro.get("winners", []), "game.result.winners"))
            ),
            tuple(
                _int(_need(uf, c, "game.result.unused_full"), f"game.result.unused_full.{c}", 0)
                for c in tb.colours
            ),
        )
    return Progress(
        seat,
        remaining,
        _bool(o.get("over", False), "game.over"),
        result,
        _int(o.get("cards_played", 0), "game.cards_played", 0),
    )


def _cards_from_json(v: Any, tb: Table) -> CardState | None:
    if v is None:
        return None
    o = _obj(v, "cards")
    _no_extra(o, {"hands", "draw", "discard", "seed", "reshuffles"}, "cards")
    hands_raw = _obj(_need(o, "hands", "cards"), "cards.hands")
    _no_extra(hands_raw, set(tb.colours), "cards.hands")

    def pile(lst: Any, where: str) -> tuple[int, ...]:
        return tuple(
            KIND_INDEX[card_from_json(c, f"{where}[{i}]")] for i, c in enumerate(_list(lst, where))
        )

    hands = tuple(tuple(sorted(pile(hands_raw.get(c, []), f"cards.hands.{c}"))) for c in tb.colours)
    draw = pile(o.get("draw", []), "cards.draw")
    discard = pile(o.get("discard", []), "cards.discard")
    total = sum(len(h) for h in hands) + len(draw) + len(discard)
    if total > 90:
        raise FormatError("cards", f"{total} cards; the deck has 90 (R-DECK-1)")
    seed = o.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise FormatError("cards.seed", "expected an integer")
    return CardState(
        hands, draw, discard, seed, _int(o.get("reshuffles", 0), "cards.reshuffles", 0)
    )


# --------------------------------------------------------------------------------------------
# actions


def dump_action(action: Action) -> dict[str, Any]:
    """An action as JSON-ready data (state-model.md §4)."""
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
    """Card fields of the expansion (state-model.md §4): page, raven_timing, witch_guess,
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
    d = _obj(data, where)
    kind = _str(_need(d, "kind", where), f"{where}.kind")
    if kind not in ACTION_KINDS:
        raise FormatError(f"{where}.kind", f"{kind!r} is not one of {', '.join(ACTION_KINDS)}")
    _no_extra(d, _ACTION_FIELDS[kind], where)
    if kind == "end_turn":
        return EndTurn()
    player = _str(_need(d, "player", where), f"{where}.player")
    if kind in ("move_wizard", "move_tower"):
        steps = _int(_need(d, "steps", where), f"{where}.steps", 1, 6)
        card = card_from_json(_need(d, "card", where), f"{where}.card")
        rolls = tuple(
            _int(r, f"{where}.rolls[{i}]", 1, 6)
            for i, r in enumerate(_list(d.get("rolls", []), f"{where}.rolls"))
        )
        committed = _bool(d.get("card_committed", False), f"{where}.card_committed")
        mod = _module_fields(d, where)
        if kind == "move_wizard":
            ws = d.get("web_steps")
            return MoveWizard(
                player,
                _str(_need(d, "wizard", where), f"{where}.wizard"),
                steps,
                card,
                rolls,
                committed,
                web_steps=None if ws is None else _int(ws, f"{where}.web_steps", 1, 3),
                **mod,
            )
        return MoveTower(
            player,
            _int(_need(d, "space", where), f"{where}.space", 1),
            _int(_need(d, "tier", where), f"{where}.tier", 1),
            steps,
            card,
            rolls,
            committed,
            physically_lifted=_bool(
                d.get("physically_lifted", False), f"{where}.physically_lifted"
            ),
            **mod,
        )
    if kind == "discard_card":
        c = d.get("card")
        rolls = tuple(
            _int(r, f"{where}.rolls[{i}]", 1, 6)
            for i, r in enumerate(_list(d.get("rolls", []), f"{where}.rolls"))
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
        po = _obj(push, f"{where}.push")
        _no_extra(po, {"space", "tier"}, f"{where}.push")
        return Redraw(
            player,
            (
                _int(_need(po, "space", f"{where}.push"), f"{where}.push.space", 1),
                _int(_need(po, "tier", f"{where}.push"), f"{where}.push.tier", 1),
            ),
        )
    if kind == "cast":
        spell = _str(_need(d, "spell", where), f"{where}.spell")
        kw: dict[str, Any] = {}
        for name in ("wizard", "direction", "rider"):
            if d.get(name) is not None:
                kw[name] = _str(d[name], f"{where}.{name}")
        for name in ("space", "tier", "a", "b"):
            if d.get(name) is not None:
                kw[name] = _int(d[name], f"{where}.{name}", 1)
        if d.get("then") is not None:
            then = load_action(d["then"], f"{where}.then")
            if not isinstance(then, MoveWizard):
                raise FormatError(f"{where}.then", "piggyback rides on a move_wizard")
            kw["then"] = then
        kw["times"] = _int(d.get("times", 1), f"{where}.times", 1, 12)
        kw["free"] = _bool(d.get("free", False), f"{where}.free")
        if d.get("steps") is not None:
            kw["steps"] = _int(d["steps"], f"{where}.steps", 1, 6)
        if d.get("web_steps") is not None:
            kw["web_steps"] = _int(d["web_steps"], f"{where}.web_steps", 1, 3)
        kw["witch_protect"] = _module_fields(d, where)["witch_protect"]
        return Cast(player, spell, **kw)
    if kind == "feather":
        fw = d.get("wizard")
        fs = d.get("steps")
        fws = d.get("web_steps")
        return Feather(
            player,
            _str(_need(d, "use", where), f"{where}.use"),
            None if fw is None else _str(fw, f"{where}.wizard"),
            None if fs is None else _int(fs, f"{where}.steps", 1, 6),
            _module_fields(d, where)["witch_protect"],
            None if fws is None else _int(fws, f"{where}.web_steps", 1, 3),
        )
    if kind == "give_potion":
        return GivePotion(
            player,
            _str(_need(d, "to", where), f"{where}.to"),
            _int(d.get("count", 1), f"{where}.count", 1),
        )
    take = d.get("take")
    give = d.get("give")
    return ExchangeCards(
        player,
        _str(_need(d, "partner", where), f"{where}.partner"),
        None if take is None else card_from_json(take, f"{where}.take"),
        None if give is None else card_from_json(give, f"{where}.give"),
    )


def _module_fields(d: Mapping[str, Any], where: str) -> dict[str, Any]:
    """page, raven_timing, witch_guess, witch_protect of a card action (state-model.md §4)."""
    timing = d.get("raven_timing")
    if timing is not None and timing not in ("before", "after"):
        raise FormatError(f"{where}.raven_timing", "expected 'before' or 'after'")
    guess = d.get("witch_guess")
    g: tuple[int, int] | None = None
    if guess is not None:
        go = _obj(guess, f"{where}.witch_guess")
        _no_extra(go, {"space", "tier"}, f"{where}.witch_guess")
        g = (
            _int(_need(go, "space", f"{where}.witch_guess"), f"{where}.witch_guess.space", 1),
            _int(_need(go, "tier", f"{where}.witch_guess"), f"{where}.witch_guess.tier", 1),
        )
    protect = tuple(
        _str(c, f"{where}.witch_protect[{i}]")
        for i, c in enumerate(_list(d.get("witch_protect", []), f"{where}.witch_protect"))
    )
    return {
        "page": _bool(d.get("page", False), f"{where}.page"),
        "raven_timing": timing,
        "witch_guess": g,
        "witch_protect": protect,
    }


# --------------------------------------------------------------------------------------------
# events


def dump_event(event: Event) -> dict[str, Any]:
    """``{"kind": …, **data}`` (state-model.md §5)."""
    return event.to_json()


def load_event(data: Any, where: str = "event") -> Event:
    """:raises FormatError: no ``kind``."""
    d = _obj(data, where)
    kind = _str(_need(d, "kind", where), f"{where}.kind")
    return Event(kind, {k: v for k, v in d.items() if k != "kind"})
