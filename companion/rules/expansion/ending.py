"""The end of a game with modules: an empty witch vial counts as an empty potion (R-MOD-WITCH-6),
the end check, the result and End Turn's module steps."""

from __future__ import annotations

from typing import Any

from companion.rules.actions import EndTurn, Event
from companion.rules.board import event as _ev
from companion.rules.expansion.common import ModulePieces, Potion
from companion.rules.model import GameState, Progress, Result, Table, Turn, make_state
from companion.rules.turn import end_turn, game_over_event, game_result


def module_qualifies(
    tb: Table,
    wiz: tuple[int, ...],
    potions: tuple[Potion, ...],
    vials: tuple[Potion, ...] | None,
    seat: int,
) -> bool:
    """R-END-1 for one seat with modules: an empty witch vial counts as an empty potion
    (R-MOD-WITCH-6); the team variant asks the whole team (R-TEAM-8)."""
    for s in tb.team_of(seat):
        lo, hi = tb.wiz_range[s]
        if any(wiz[lo:hi]) or potions[s][1]:
            return False
        if vials is not None and vials[s][1]:
            return False
    return True


def module_end_check(w: ModulePieces, game: Progress, turn: Turn) -> Progress:
    """R-END-1/2 with empty witch vials blocking the trigger; deadlock R-END-5."""
    return end_check_parts(w.tb, w.wiz, w.potions, w.witch_vials, game, turn, w.ev)


def end_check_parts(
    tb: Table,
    wiz: tuple[int, ...],
    potions: tuple[Potion, ...],
    vials: tuple[Potion, ...] | None,
    game: Progress,
    turn: Turn,
    ev: list[Event],
) -> Progress:
    """The end check of :func:`~companion.rules.turn.end_check` with witch vials counted
    (R-END-1/2, R-MOD-WITCH-6, R-END-5); appends the events to ``ev``."""
    if game.end_triggered_by is not None or game.over:
        return game
    lo, hi = tb.wiz_range[0]
    if wiz.count(0) < hi - lo:  # nobody has all his wizards in the castle (R-END-1, R-END-5)
        return game
    cur = turn.player
    for i in range(tb.n):
        seat = (cur + i) % tb.n
        if module_qualifies(tb, wiz, potions, vials, seat):
            if tb.solo:
                result = module_result(tb, wiz, potions, vials, "solo_won")
                ev.append(game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            remaining = tb.n - 1 - cur
            data: dict[str, Any] = {"player": tb.colours[seat], "remaining_turns": remaining}
            if tb.config.teams:
                data["team"] = [tb.colours[s] for s in tb.team_of(seat)]
            ev.append(_ev("game_end_triggered", data))
            if tb.config.teams and not tb.config.options["team_round_completion"]:
                result = module_result(tb, wiz, potions, vials, "team_goal")
                ev.append(game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            return Progress(seat, remaining, False, None, game.cards_played)
    if not any(wiz) and tb.config.options["deadlock_end"]:
        result = module_result(tb, wiz, potions, vials, "deadlock")
        ev.append(game_over_event(tb, result))
        return Progress(None, 0, True, result, game.cards_played)
    return game


def module_result(
    tb: Table,
    wiz: tuple[int, ...],
    potions: tuple[Potion, ...],
    vials: tuple[Potion, ...] | None,
    reason: str,
) -> Result:
    """Winners with the witch module (R-END-3/4, R-MOD-WITCH-6): the base result, with
    qualification recomputed when empty witch vials are held."""
    base = game_result(tb, wiz, potions, reason)
    if vials is None:
        return base
    qualified = tuple(s for s in range(tb.n) if module_qualifies(tb, wiz, potions, vials, s))
    if qualified == base.qualified:
        return base
    if reason == "solo_lost":
        return Result(reason, qualified, (), base.unused_full)

    def full_of(seat: int) -> int:
        return sum(base.unused_full[s] for s in tb.team_of(seat))

    if qualified:
        best = max(full_of(s) for s in qualified)
        winners = tuple(s for s in qualified if full_of(s) == best)
        return Result(reason, qualified, winners, base.unused_full)
    return Result(reason, qualified, base.winners, base.unused_full)


def end_turn_with_modules(st: GameState, a: EndTurn) -> tuple[GameState, list[Event]]:
    """End Turn with modules when armed spells or free casts end with the turn or the game may
    end (witch vials count for the result)."""
    new, ev = end_turn(st, a)
    m = new.modules
    assert m is not None
    if not (m.armed or m.free_casts or new.game.over):
        return new, ev
    if m.armed or m.free_casts:
        m = m._replace(armed=(), free_casts=())
    g = new.game
    if g.over and g.result is not None and m.witch_vials is not None:
        result = module_result(new.table, new.wizards, new.potions, m.witch_vials, g.result.reason)
        if result != g.result:
            g = g._replace(result=result)
            ev = [game_over_event(new.table, result) if e.kind == "game_over" else e for e in ev]
    return (
        make_state(
            new.table, new.stacks, new.wizards, new.castle, new.potions, new.turn, g, new.cards, m
        ),
        ev,
    )
