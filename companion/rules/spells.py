"""The effects of the base game's spells (R-SPELL, R-MASTER-4/8) on a working copy
(:class:`~companion.rules.board.Pieces`), shared by the base game and the expansion, and the
timing of a cast (who may cast now, in which card window).
"""

from __future__ import annotations

from companion.rules import board
from companion.rules.actions import Cast, Event, IllegalAction
from companion.rules.board import Pieces
from companion.rules.board import event as _ev
from companion.rules.model import MAX_ON_TOP, GameState, Table, position


def spell_window(st: GameState) -> int:
    """The card action a spell cast now belongs to (R-MASTER-4): 0 before/while the first card
    is played, 1 afterwards (also after a redraw)."""
    t = st.turn
    if t.redrawn:
        return 1
    return min(t.cards_used, st.table.actions_per_turn - 1 + t.extra_card)


def cast_timing_problem(
    st: GameState, seat: int, spell: str, times: int = 1
) -> IllegalAction | None:
    """Why ``seat`` may not cast ``spell`` now (timing only, R-SPELL-2, R-SPELL-12,
    R-MASTER-2/4/8, R-SOLO-3), or None."""
    tb = st.table
    t = st.turn
    free = spell == "free_wizard"
    counts = not free or tb.config.options["free_wizard_counts_as_cast"]
    if t.ended and not free:
        return IllegalAction("the turn has ended: a wizard entered the castle", "R-TURN-6")
    if tb.solo and t.cards_used == 0:
        return IllegalAction("in solo play spells come after the turn's card", "R-SOLO-3")
    if times != 1 and not tb.master:
        return IllegalAction("repeating a spell needs the master variant", "R-MASTER-8")
    if not tb.master:
        if not free and seat != t.player:
            return IllegalAction(
                "in the base game only the current player casts (Free a Wizard excepted)",
                "R-SPELL-2",
            )
        if counts:
            for c in t.casts:
                if c[0] == seat and (
                    c[1] != "free_wizard" or tb.config.options["free_wizard_counts_as_cast"]
                ):
                    return IllegalAction(
                        f"{tb.colours[seat]} has already cast a spell this turn", "R-SPELL-2"
                    )
        return None
    if not counts:
        return None
    window = spell_window(st)
    for c in t.casts:
        if c[2] != window:
            continue
        if c[1] == "free_wizard" and not tb.config.options["free_wizard_counts_as_cast"]:
            continue
        if c[0] != seat or c[1] != spell:
            return IllegalAction(
                f"{tb.colours[c[0]]} already cast {c[1]} for this action; one caster and one "
                "spell per action (it may be repeated)",
                "R-MASTER-4",
            )
    return None


def check_cast_timing(st: GameState, seat: int, spell: str, times: int = 1) -> None:
    """:raises IllegalAction: :func:`cast_timing_problem`'s reason, when there is one.

    The exception raised is a fresh one: raising the one held in a local variable would tie
    it to this frame (exception -> traceback -> frame -> the local -> exception), a reference
    cycle that keeps the frame and every state it refers to alive until a full garbage
    collection; the tracker's search meets an illegal cast hundreds of thousands of times a
    game."""
    problem = cast_timing_problem(st, seat, spell, times)
    if problem is not None:
        raise IllegalAction(problem.reason, problem.rule)


def move_wizard_spell(
    p: Pieces, seat: int, wizard: object, step: int, times: int, web_steps: object = None
) -> int:
    """A spell moving ``wizard`` ``step`` spaces ``times`` times (R-SPELL-5/8, R-SPELLX-2/3;
    OPEN-05: an entry by another player's spell moves the castle per the option); stops
    when the wizard enters the castle. ``web_steps``: *Precise Landing* (modules).

    :returns: the wizard's index if it entered, else -1."""
    tb = p.tb
    wi = tb.wizard_index.get(wizard) if isinstance(wizard, str) else None
    if wi is None:
        raise IllegalAction(f"there is no wizard {wizard!r} in this game", "R-SPELL-5")
    relocate = tb.wizard_owner[wi] == seat or tb.config.options["others_entry_moves_castle"]
    for _ in range(times):
        if board.wizard_move(p, wi, step, relocate=relocate, web_steps=web_steps):
            return wi
    return -1


def move_tower_spell(
    p: Pieces, seat: int, space: object, tier: object, step: int, times: int
) -> bool:
    """A spell moving tower ``tier`` on ``space`` ``step`` spaces ``times`` times (the same
    tower each time; R-SPELL-6/9, R-SPELLX-4). :returns: True when a potion was filled."""
    filled = False
    for _ in range(times):
        if type(space) is not int or type(tier) is not int:
            board.check_lift(p.tb, p.stacks, space, tier)
        assert isinstance(space, int) and isinstance(tier, int)
        space, tier, got = board.tower_move(p, space, tier, step, seat)
        filled = filled or got
    return filled


def castle_spell(p: Pieces, direction: object, times: int) -> None:
    """R-SPELL-10: *Move the Castle* ``times`` times ``cw`` or ``ccw``."""
    if direction not in ("cw", "ccw"):
        raise IllegalAction("the castle moves 'cw' or 'ccw'", "R-SPELL-10")
    for _ in range(times):
        board.castle_nudge(p, 1 if direction == "cw" else -1)


def swap_towers(
    tb: Table,
    stacks: board.Stacks,
    wiz: board.Wizards,
    castle: int,
    a: Cast,
    ev: list[Event],
) -> tuple[board.Stacks, board.Wizards]:
    """R-SPELL-7: exchange the top towers of two stacks; wizards on the roofs travel along."""
    sa, sb = a.a, a.b
    for name, s in (("a", sa), ("b", sb)):
        if type(s) is not int or not 1 <= s <= tb.length:
            raise IllegalAction(f"swap {name}: there is no space {s!r}", "R-SPELL-7")
        if not stacks[s - 1]:
            raise IllegalAction(f"swap {name}: space {s} has no tower", "R-SPELL-7")
        if s == castle:
            raise IllegalAction(
                f"swap {name}: the raven castle's space {s} cannot take part", "R-SPELL-7"
            )
    assert isinstance(sa, int) and isinstance(sb, int)
    if sa == sb:
        raise IllegalAction("swap needs two different stacks", "R-SPELL-7")
    if not tb.config.options["swap_any_distance"] and sb != board.dest_space(tb.length, sa, 2):
        raise IllegalAction("swap only with the stack 2 spaces clockwise (option)", "R-SPELL-7")
    st_a, st_b = stacks[sa - 1], stacks[sb - 1]
    ha, hb = len(st_a), len(st_b)
    lst = list(stacks)
    lst[sa - 1] = st_a[:-1] + st_b[-1:]
    lst[sb - 1] = st_b[:-1] + st_a[-1:]
    code_a, code_b = position(sa, ha), position(sb, hb)
    ids = tb.wizard_ids
    on_a = [ids[i] for i, p in enumerate(wiz) if p == code_a]
    on_b = [ids[i] for i, p in enumerate(wiz) if p == code_b]
    new_wiz = tuple(code_b if p == code_a else code_a if p == code_b else p for p in wiz)
    ev.append(
        _ev(
            "towers_swapped",
            {
                "a": sa,
                "b": sb,
                "towers": [tb.towers[st_a[-1]].id, tb.towers[st_b[-1]].id],
                "wizards_from_a": on_a,
                "wizards_from_b": on_b,
            },
        )
    )
    return tuple(lst), new_wiz


def free_wizard(p: Pieces, seat: int, a: Cast) -> int:
    """R-SPELL-12: lift tower ``tier`` on ``space``, free one own (team: or partner's) wizard
    from underneath onto the top surface, or into the castle when it sits there. The freed
    wizard is put on the top, not moved (no arrival effects with modules).

    :returns: the freed wizard's index if it entered the castle, else -1.
    """
    tb = p.tb
    board.check_lift(tb, p.stacks, a.space, a.tier)
    space, tier = a.space, a.tier
    assert isinstance(space, int) and isinstance(tier, int)
    under = position(space, tier - 1)
    ids = tb.wizard_ids
    wiz = p.wiz
    ev = p.ev
    seen = [ids[i] for i, q in enumerate(wiz) if q == under]
    ev.append(
        _ev("tower_lifted_and_replaced", {"space": space, "tier": tier, "seen_underneath": seen})
    )
    allowed = tb.team_of(seat)
    candidates = [i for i, q in enumerate(wiz) if q == under and tb.wizard_owner[i] in allowed]
    if a.wizard is None:
        if candidates:
            raise IllegalAction(
                f"name the wizard to free: {', '.join(ids[i] for i in candidates)} "
                "are under that tower",
                "R-SPELL-12",
            )
        ev.append(_ev("free_failed", {"player": tb.colours[seat], "space": space, "tier": tier}))
        return -1
    wi = tb.wizard_index.get(a.wizard) if isinstance(a.wizard, str) else None
    if wi is None or wi not in candidates:
        raise IllegalAction(
            f"{a.wizard} is not one of your wizards directly under tower {tier} on space {space}",
            "R-SPELL-12",
        )
    h = len(p.stacks[space - 1])
    if not tb.config.options["free_wizard_to_top_of_stack"] and tier < h:
        code = position(space, tier)  # on the roof of the trapping tower, still inside the stack
        p.wiz = wiz[:wi] + (code,) + wiz[wi + 1 :]
        ev.append(_ev("wizard_freed", {"wizard": a.wizard, "space": space, "tier": tier}))
        return -1
    if p.castle == space:
        p.wiz = wiz[:wi] + (0,) + wiz[wi + 1 :]
        ev.append(_ev("wizard_freed", {"wizard": a.wizard, "space": space, "into_castle": True}))
        ev.append(_ev("castle_entered", {"wizard": a.wizard}))
        board.relocate_castle(p)
        return wi
    code = position(space, h)
    if wiz.count(code) >= MAX_ON_TOP and tb.config.options["free_wizard_full_top_illegal"]:
        raise IllegalAction(f"the top of space {space} already holds 6 wizards", "R-SPELL-12")
    p.wiz = wiz[:wi] + (code,) + wiz[wi + 1 :]
    ev.append(_ev("wizard_freed", {"wizard": a.wizard, "space": space, "tier": h}))
    return -1
