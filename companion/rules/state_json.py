"""The neutral JSON of a state and its configuration (``docs/state-model.md`` §1-§2).

``dump_state(load_state(j)) == j`` and ``load_state(dump_state(s)) == s`` hold exactly. Loading
checks every field and the invariants of ``docs/state-model.md`` §2.4; a malformed document
raises :class:`~companion.rules.actions.FormatError` whose message starts with the field path
(``wizards.blue-2.tier``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from companion.rules.action_json import card_from_json
from companion.rules.actions import FormatError
from companion.rules.base import resolve_spells
from companion.rules.json_checks import (
    as_bool,
    as_int,
    as_list,
    as_object,
    as_str,
    no_extra,
    required,
)
from companion.rules.model import (
    BASE_SPELLS,
    CARD_KINDS,
    IN_CASTLE,
    KIND_INDEX,
    MAX_ON_TOP,
    SETUP_COUNTS,
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
    position,
    space_of,
    tier_of,
)


def dump_config(table: Table) -> dict[str, Any]:
    """The JSON of a game's configuration (``docs/state-model.md`` §1): player count,
    variant, teams, modules, spells on display, costs and options."""
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
    d = as_object(data, "track")
    no_extra(d, {"length", "raven_crest", "special"}, "track")
    length = as_int(required(d, "length", "track"), "track.length", 7, 64)
    crest = [
        as_int(v, f"track.raven_crest[{i}]", 1, length)
        for i, v in enumerate(as_list(d.get("raven_crest", []), "track.raven_crest"))
    ]
    special_raw = as_object(d.get("special", {}), "track.special")
    special = []
    for k, v in special_raw.items():
        try:
            s = int(k)
        except ValueError:
            raise FormatError(f"track.special.{k}", "space numbers are integers") from None
        special.append(
            (as_int(s, f"track.special.{k}", 1, length), as_str(v, f"track.special.{k}"))
        )
    try:
        return Track(length, frozenset(crest), tuple(special))
    except ValueError as exc:
        raise FormatError("track", str(exc)) from None


def _config_from_json(data: Any, track: Track) -> Config:
    d = as_object(data, "config")
    no_extra(
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
    n = as_int(required(d, "player_count", "config"), "config.player_count", 1, 6)
    variant = as_str(d.get("variant", "base"), "config.variant")
    teams_raw = d.get("teams")
    modules = [
        as_str(m, f"config.modules[{i}]")
        for i, m in enumerate(as_list(d.get("modules", []), "config.modules"))
    ]
    spells_raw = d.get("spells")
    spells = None
    if spells_raw is not None:
        spells = tuple(
            as_str(s, f"config.spells[{i}]")
            for i, s in enumerate(as_list(spells_raw, "config.spells"))
        )
    maps = {}
    for name in ("spell_costs", "feather_costs", "options"):
        maps[name] = dict(as_object(d.get(name, {}), f"config.{name}"))
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


def _pos_json(p: int) -> Any:
    return "castle" if p == IN_CASTLE else {"space": space_of(p), "tier": tier_of(p)}


def _potion_json(t: tuple[int, int, int]) -> dict[str, int]:
    return {"full": t[0], "empty": t[1], "spent": t[2]}


def dump_state(state: GameState) -> dict[str, Any]:
    """The state as JSON-ready data (docs/state-model.md §1-§2)."""
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
    """Parse and validate a state (docs/state-model.md §1-§2, invariants §2.4).

    :raises FormatError: naming the bad field.
    """
    d = as_object(data, "state")
    no_extra(d, _STATE_FIELDS, "")
    track = _track_from_json(required(d, "track", ""))
    players_raw = as_list(required(d, "players", ""), "players")
    colours: list[str] = []
    for i, p in enumerate(players_raw):
        po = as_object(p, f"players[{i}]")
        no_extra(po, {"id", "colour", "seat"}, f"players[{i}]")
        col = as_str(required(po, "colour", f"players[{i}]"), f"players[{i}].colour")
        if po.get("id", col) != col:
            raise FormatError(f"players[{i}].id", "the id of a player is his colour")
        if as_int(po.get("seat", i), f"players[{i}].seat") != i:
            raise FormatError(f"players[{i}].seat", "players are listed in seat order from 0")
        colours.append(col)
    cfg = _config_from_json(required(d, "config", ""), track)
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
    teams_raw = as_object(d["config"], "config").get("teams")
    if teams_raw is not None:
        pairs = [list(p) for p in cfg.team_pairs or ()]
        if teams_raw != pairs:
            raise FormatError("config.teams", f"partners sit opposite: expected {pairs}")
    towers_raw = as_object(required(d, "towers", ""), "towers")
    towers: list[TowerSpec] = []
    for tid, spec in towers_raw.items():
        so = as_object(spec, f"towers.{tid}")
        no_extra(so, {"kind", "crest", "magic"}, f"towers.{tid}")
        kind = as_str(required(so, "kind", f"towers.{tid}"), f"towers.{tid}.kind")
        if kind not in ("crest", "plain", "magic"):
            raise FormatError(f"towers.{tid}.kind", "expected crest, plain or magic")
        ts = TowerSpec(tid, kind)
        if so.get("crest", ts.crest) != ts.crest or so.get("magic", ts.magic) != ts.magic:
            raise FormatError(f"towers.{tid}", "crest/magic do not match the kind")
        towers.append(ts)
    wiz_raw = as_object(required(d, "wizards", ""), "wizards")
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
    for key, lst in as_object(required(d, "stacks", ""), "stacks").items():
        where = f"stacks.{key}"
        try:
            s = int(key)
        except ValueError:
            raise FormatError(where, "space numbers are integers") from None
        as_int(s, where, 1, length)
        ids = as_list(lst, where)
        for j, raw_id in enumerate(ids):
            tid = as_str(raw_id, f"{where}[{j}]")
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
    co = as_object(required(d, "castle", ""), "castle")
    no_extra(co, {"space", "tier"}, "castle")
    castle = as_int(required(co, "space", "castle"), "castle.space", 1, length)
    if as_int(required(co, "tier", "castle"), "castle.tier") != len(stacks[castle - 1]):
        raise FormatError("castle.tier", "the castle is always on the top surface (R-RAVEN-1)")
    # wizards
    wiz = [0] * len(tb.wizard_ids)
    for wid, pos in wiz_raw.items():
        where = f"wizards.{wid}"
        if pos == "castle":
            continue
        po = as_object(pos, where)
        no_extra(po, {"space", "tier"}, where)
        s = as_int(required(po, "space", where), f"{where}.space", 1, length)
        t = as_int(required(po, "tier", where), f"{where}.tier", 0, len(stacks[s - 1]))
        if s == castle and t == len(stacks[s - 1]):
            raise FormatError(where, "a visible wizard cannot stand on the castle's space")
        wiz[tb.wizard_index[wid]] = position(s, t)
    wizards = tuple(wiz)
    for s in range(1, length + 1):
        if wizards.count(position(s, len(stacks[s - 1]))) > MAX_ON_TOP:
            raise FormatError(f"stacks.{s}", "more than 6 visible wizards on the top (R-WIZ-4)")
    # potions
    pot_raw = as_object(required(d, "potions", ""), "potions")
    potions = []
    for c in colours:
        potions.append(_triple(required(pot_raw, c, "potions"), f"potions.{c}"))
    no_extra(pot_raw, set(colours), "potions")
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
            mo = as_object(mt, "module_turn")
            no_extra(mo, {"armed", "free_spells"}, "module_turn")
            for i, x in enumerate(as_list(mo.get("armed", []), "module_turn.armed")):
                w = f"module_turn.armed[{i}]"
                xo = as_object(x, w)
                no_extra(xo, {"player", "spell"}, w)
                armed.append(
                    (
                        _colour_seat(tb, required(xo, "player", w), f"{w}.player"),
                        as_str(required(xo, "spell", w), f"{w}.spell"),
                    )
                )
            for i, x in enumerate(as_list(mo.get("free_spells", []), "module_turn.free_spells")):
                w = f"module_turn.free_spells[{i}]"
                xo = as_object(x, w)
                no_extra(xo, {"player", "source"}, w)
                free_casts.append(
                    (
                        _colour_seat(tb, required(xo, "player", w), f"{w}.player"),
                        as_str(required(xo, "source", w), f"{w}.source"),
                    )
                )
        modules = ModuleState(
            witch=_piece(d.get("witch"), "witch", stacks),
            raven=_piece(d.get("raven"), "raven", stacks),
            witch_vials=None
            if d.get("witch_vials") is None
            else tuple(
                _triple(
                    required(as_object(d["witch_vials"], "witch_vials"), c, "witch_vials"),
                    f"witch_vials.{c}",
                )
                for c in colours
            ),
            witch_vial_supply=None
            if d.get("witch_vial_supply") is None
            else as_int(d["witch_vial_supply"], "witch_vial_supply", 0, 6),
            feathers=None
            if d.get("feathers") is None
            else tuple(
                as_int(
                    required(as_object(d["feathers"], "feathers"), c, "feathers"),
                    f"feathers.{c}",
                    0,
                    3,
                )
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
    turn = _turn_from_json(required(d, "turn", ""), tb)
    game = _game_from_json(required(d, "game", ""), tb)
    cards = _cards_from_json(d.get("cards"), tb)
    return GameState(tb, stacks, wizards, castle, tuple(potions), turn, game, cards, modules)


def _triple(v: Any, where: str) -> tuple[int, int, int]:
    o = as_object(v, where)
    no_extra(o, {"full", "empty", "spent"}, where)
    return (
        as_int(required(o, "full", where), f"{where}.full", 0),
        as_int(required(o, "empty", where), f"{where}.empty", 0),
        as_int(required(o, "spent", where), f"{where}.spent", 0),
    )


def _piece(v: Any, where: str, stacks: tuple[tuple[int, ...], ...]) -> int | None:
    if v is None:
        return None
    o = as_object(v, where)
    no_extra(o, {"space", "tier"}, where)
    s = as_int(required(o, "space", where), f"{where}.space", 1, len(stacks))
    t = as_int(required(o, "tier", where), f"{where}.tier", 0, len(stacks[s - 1]))
    return position(s, t)


def _colour_seat(tb: Table, v: Any, where: str) -> int:
    c = as_str(v, where)
    if c not in tb.seat_of:
        raise FormatError(where, f"{c!r} is not a player of this game")
    return tb.seat_of[c]


def _turn_from_json(v: Any, tb: Table) -> Turn:
    o = as_object(v, "turn")
    no_extra(
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
    for i, c in enumerate(as_list(o.get("spells_cast", []), "turn.spells_cast")):
        w = f"turn.spells_cast[{i}]"
        co = as_object(c, w)
        no_extra(co, {"player", "spell", "window", "times"}, w)
        casts.append(
            (
                _colour_seat(tb, required(co, "player", w), f"{w}.player"),
                as_str(required(co, "spell", w), f"{w}.spell"),
                as_int(co.get("window", 0), f"{w}.window", 0, 2),
                as_int(co.get("times", 1), f"{w}.times", 1),
            )
        )
    return Turn(
        _colour_seat(tb, required(o, "player", "turn"), "turn.player"),
        as_int(o.get("cards_used", 0), "turn.cards_used", 0, 3),
        as_bool(o.get("redrawn", False), "turn.redrawn"),
        as_bool(o.get("ended", False), "turn.ended"),
        tuple(casts),
        as_int(o.get("exchanges", 0), "turn.exchanges", 0),
        as_bool(o.get("feather_used", False), "turn.feather_used"),
        as_bool(o.get("extra_card", False), "turn.extra_card"),
        as_bool(o.get("fly_used", False), "turn.fly_used"),
    )


def _game_from_json(v: Any, tb: Table) -> Progress:
    o = as_object(v, "game")
    no_extra(o, {"end_triggered_by", "remaining_turns", "over", "result", "cards_played"}, "game")
    trig = o.get("end_triggered_by")
    seat = None if trig is None else _colour_seat(tb, trig, "game.end_triggered_by")
    rem = o.get("remaining_turns")
    remaining = None if rem is None else as_int(rem, "game.remaining_turns", 0, 5)
    result = None
    r = o.get("result")
    if r is not None:
        ro = as_object(r, "game.result")
        no_extra(ro, {"reason", "qualified", "winners", "unused_full"}, "game.result")
        uf = as_object(required(ro, "unused_full", "game.result"), "game.result.unused_full")
        result = Result(
            as_str(required(ro, "reason", "game.result"), "game.result.reason"),
            tuple(
                _colour_seat(tb, c, f"game.result.qualified[{i}]")
                for i, c in enumerate(as_list(ro.get("qualified", []), "game.result.qualified"))
            ),
            tuple(
                _colour_seat(tb, c, f"game.result.winners[{i}]")
                for i, c in enumerate(as_list(ro.get("winners", []), "game.result.winners"))
            ),
            tuple(
                as_int(
                    required(uf, c, "game.result.unused_full"), f"game.result.unused_full.{c}", 0
                )
                for c in tb.colours
            ),
        )
    return Progress(
        seat,
        remaining,
        as_bool(o.get("over", False), "game.over"),
        result,
        as_int(o.get("cards_played", 0), "game.cards_played", 0),
    )


def _cards_from_json(v: Any, tb: Table) -> CardState | None:
    if v is None:
        return None
    o = as_object(v, "cards")
    no_extra(o, {"hands", "draw", "discard", "seed", "reshuffles"}, "cards")
    hands_raw = as_object(required(o, "hands", "cards"), "cards.hands")
    no_extra(hands_raw, set(tb.colours), "cards.hands")

    def pile(lst: Any, where: str) -> tuple[int, ...]:
        return tuple(
            KIND_INDEX[card_from_json(c, f"{where}[{i}]")]
            for i, c in enumerate(as_list(lst, where))
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
        hands, draw, discard, seed, as_int(o.get("reshuffles", 0), "cards.reshuffles", 0)
    )
