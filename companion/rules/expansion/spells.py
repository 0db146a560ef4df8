"""Casting with modules (R-SPELL, R-SPELLX): paying with potions and witch vials, free casts of
the magic tower and feathers, the effects of the base and expansion spells."""

from __future__ import annotations

from companion.rules import board
from companion.rules.actions import Cast, Event, IllegalAction
from companion.rules.board import event as _ev
from companion.rules.expansion.ending import module_end_check
from companion.rules.expansion.magic_tower import fly_to_tower
from companion.rules.expansion.moves import lost_turn
from companion.rules.expansion.pieces import MovingPieces
from companion.rules.expansion.raven import cast_summon_raven, move_raven, raven_timing_of
from companion.rules.expansion.witch import cast_witch_control, witch_page
from companion.rules.model import GameState, Turn, make_state, position
from companion.rules.spells import (
    castle_spell,
    check_cast_timing,
    free_wizard,
    move_tower_spell,
    move_wizard_spell,
    spell_window,
    swap_towers,
)
from companion.rules.turn import (
    controlled_seat,
    dice_event,
    piggyback_riders,
    play_card,
    player_seat,
)


def _pay(w: MovingPieces, seat: int, cost: int, spell: str, times: int) -> None:
    """Full potions first, then full witch vials (R-MOD-WITCH-6)."""
    if not cost:
        return
    f, e, sp = w.potions[seat]
    vf = w.witch_vials[seat][0] if w.witch_vials is not None else 0
    if f + vf < cost:
        raise IllegalAction(
            f"{spell} x{times} costs {cost} full potion(s); {w.tb.colours[seat]} has {f + vf}",
            "R-SPELL-1",
        )
    use = min(f, cost)
    w.set_potion(seat, (f - use, e, sp + use))
    rest = cost - use
    if rest:
        assert w.witch_vials is not None
        a, b, c = w.witch_vials[seat]
        w.set_vial(seat, (a - rest, b, c + rest))
    w.ev.append(_ev("potions_spent", {"player": w.tb.colours[seat], "count": cost}))


def apply_module_cast(st: GameState, a: Cast) -> tuple[GameState, list[Event]]:
    """:class:`~companion.rules.actions.Cast` with modules (R-SPELL, R-SPELLX, free casts
    R-MOD-MAGICTOWER-5 / R-MOD-RAVEN-6).

    :raises IllegalAction: as :func:`companion.rules.apply`."""
    w, seat, turn = cast_begin(st, a)
    if a.spell == "piggyback":
        return module_piggyback(st, a, seat, w, turn)
    entered_by = cast_effect(w, a, seat)
    tb = st.table
    cur = turn.player
    if (
        entered_by >= 0
        and tb.wizard_owner[entered_by] == controlled_seat(tb, st.wizards, cur)
        and not turn.ended
    ):
        turn = turn._replace(ended=True)
        w.ev.append(_ev("turn_ended", {"player": tb.colours[cur], "reason": "castle_entry"}))
    game = module_end_check(w, st.game, turn)
    return w.state(st, turn, game, st.cards), w.ev


def cast_begin(st: GameState, a: Cast) -> tuple[MovingPieces, int, Turn]:
    """The checks and payment of a cast that do not depend on its target (display, repeats,
    free source, timing, potions; R-SPELL-1/2, R-MASTER-*, R-MOD-MAGICTOWER-5, R-SPELLX-9).

    :returns: the working copy after paying, the caster's seat and the turn with the cast."""
    tb = st.table
    seat = player_seat(tb, a.player)
    spell = a.spell
    if spell not in tb.spells:
        raise IllegalAction(f"the spell {spell!r} is not on display in this game", "R-SETUP-4")
    times = a.times
    if type(times) is not int or times < 1:
        raise IllegalAction("a spell is cast at least once", "R-MASTER-8")
    if times != 1 and spell not in (
        "advance_wizard",
        "headwind_wizard",
        "advance_tower",
        "headwind_tower",
        "move_castle",
    ):
        raise IllegalAction(f"{spell} is repeated by casting it again", "R-MASTER-8")
    w = MovingPieces(st, a.witch_protect)
    t = st.turn
    free_source = None
    if a.free:
        if times != 1:
            raise IllegalAction("a free spell is cast once", "R-MOD-MAGICTOWER-5")
        for src in ("magic_tower", "feather"):
            if (seat, src) in w.free_casts:
                free_source = src
                break
        if free_source is None:
            raise IllegalAction(
                f"{a.player} has no free spell (magic tower or feathers)", "R-MOD-MAGICTOWER-5"
            )
        fc = list(w.free_casts)
        fc.remove((seat, free_source))
        w.free_casts = tuple(fc)
    if free_source != "magic_tower":
        check_cast_timing(st, seat, spell, times)
    elif t.ended and spell != "free_wizard":
        raise IllegalAction("the turn has ended: a wizard entered the castle", "R-TURN-6")
    if spell == "fly_to_magic_tower" and t.fly_used:
        raise IllegalAction("Fly to the Magic Tower once per turn, in any way", "R-SPELLX-9")
    w.ev.append(
        _ev(
            "spell_cast",
            {"player": a.player, "spell": spell, "times": times, "free": free_source},
        )
    )
    if free_source is None:
        _pay(w, seat, tb.config.spell_costs[spell] * times, spell, times)
    casts = t.casts
    if free_source != "magic_tower":
        casts = casts + ((seat, spell, spell_window(st), times),)
    turn = t._replace(casts=casts)
    if spell == "fly_to_magic_tower":
        turn = turn._replace(fly_used=True)
    return w, seat, turn


def cast_effect(w: MovingPieces, a: Cast, seat: int) -> int:
    """What the spell ``a`` (not piggyback) does to the pieces after :func:`cast_begin`.

    :returns: the index of a wizard that entered the castle, else -1.
    :raises IllegalAction: the target breaks a rule."""
    tb = w.tb
    spell = a.spell
    times = a.times
    entered_by = -1
    if spell in ("advance_wizard", "headwind_wizard", "wizard_control", "wizard_sprint"):
        wi = tb.wizard_index.get(a.wizard) if isinstance(a.wizard, str) else None
        if wi is None:
            raise IllegalAction(f"there is no wizard {a.wizard!r} in this game", "R-SPELL-5")
        if spell == "wizard_control":
            if type(a.steps) is not int or not 1 <= a.steps <= 3:
                raise IllegalAction("Wizard Control moves 1 to 3 spaces", "R-SPELLX-2")
            step = a.steps
        else:
            step = {"advance_wizard": 1, "headwind_wizard": -1, "wizard_sprint": 6}[spell]
        entered_by = move_wizard_spell(w, seat, a.wizard, step, times, a.web_steps)
    elif spell in ("advance_tower", "headwind_tower", "tower_sprint"):
        step = {"advance_tower": 2, "headwind_tower": -2, "tower_sprint": 6}[spell]
        move_tower_spell(w, seat, a.space, a.tier, step, times)
    elif spell == "swap_tower":
        swap_with_vials(w, a)
    elif spell == "move_castle":
        castle_spell(w, a.direction, times)
    elif spell == "free_wizard":
        entered_by = free_wizard(w, seat, a)
    elif spell in ("fountain_abundance", "precise_landing"):
        w.armed = w.armed + ((seat, spell),)
        w.ev.append(_ev("spell_armed", {"player": a.player, "spell": spell}))
    elif spell == "witch_control":
        cast_witch_control(w, a)
    elif spell == "summon_raven":
        cast_summon_raven(w, seat, a)
    elif spell == "fly_to_magic_tower":
        wi = tb.wizard_index.get(a.wizard) if isinstance(a.wizard, str) else None
        if wi is None or tb.wizard_owner[wi] != seat:
            raise IllegalAction("fly one of your own visible wizards", "R-SPELLX-9")
        if fly_to_tower(w, wi):
            entered_by = wi
    else:  # pragma: no cover - Config refuses unknown spells
        raise IllegalAction(f"the spell {spell!r} is unknown", "R-SPELLX-1")
    return entered_by


def swap_with_vials(w: MovingPieces, a: Cast) -> None:
    """R-SPELL-7; tokens on the swapped roofs travel like wizards."""
    tb = w.tb
    stacks, wiz = swap_towers(tb, w.stacks, w.wiz, w.castle, a, w.ev)
    sa, sb = a.a, a.b
    assert isinstance(sa, int) and isinstance(sb, int)
    ca = position(sa, len(w.stacks[sa - 1]))
    cb = position(sb, len(w.stacks[sb - 1]))

    def swap_code(c: int | None) -> int | None:
        return cb if c == ca else ca if c == cb else c

    w.witch = swap_code(w.witch)
    w.raven = swap_code(w.raven)
    w.stacks, w.wiz = stacks, wiz


def module_piggyback(
    st: GameState, a: Cast, seat: int, w: MovingPieces, turn0: Turn
) -> tuple[GameState, list[Event]]:
    """R-SPELL-11 with module rules: the rider lands with the current player's wizard."""
    tb = st.table
    m, cur, kidx, wi, ri = piggyback_riders(st, a, seat)
    if w.wiz[ri] != w.wiz[wi] or w.wiz[ri] == 0:
        raise IllegalAction(f"{a.rider} is not on the same top surface as {m.wizard}", "R-SPELL-11")
    timing = raven_timing_of(w, m)
    dice_event(m.card, m.rolls, w.ev)
    st2 = make_state(
        tb, st.stacks, st.wizards, st.castle, st.potions, turn0, st.game, st.cards, st.modules
    )
    if not witch_page(w, m.page, m.witch_guess):
        return lost_turn(st2, w, cur, kidx, "witch_guess_wrong")
    if timing == "before":
        move_raven(w, m.steps)
    entered = board.wizard_move(w, wi, m.steps, ri, web_steps=m.web_steps)
    if timing == "after":
        move_raven(w, m.steps)
    turn, cards, game = play_card(st2, cur, kidx, w.ev, entered)
    game = module_end_check(w, game, turn)
    return w.state(st, turn, game, cards), w.ev
