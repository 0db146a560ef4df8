"""The invariants of ``docs/state-model.md`` §2.4, checked on any state (tests, tracker,
loading)."""

from __future__ import annotations

from companion.rules.model import MAX_ON_TOP, GameState, position, space_of, tier_of


def check_invariants(state: GameState) -> list[str]:
    """Every broken invariant of docs/state-model.md §2.4 as a readable message (empty = fine)."""
    tb = state.table
    problems: list[str] = []
    seen = sorted(t for stack in state.stacks for t in stack)
    if seen != list(range(len(tb.towers))):
        problems.append("1: every tower stands in exactly one stack")
    wiz = state.wizards
    for s0, stack in enumerate(state.stacks):
        s = s0 + 1
        h = len(stack)
        top = wiz.count(position(s, h))
        if top > MAX_ON_TOP:
            problems.append(f"2: {top} visible wizards on the top of space {s}")
        if s == state.castle and top:
            problems.append(f"2: visible wizards share the castle's space {s}")
        kind = tb.special[s]
        if kind == "web" and (h or top):
            problems.append(f"5: pieces on the web space {s}")
        elif kind == "fountain" and h:
            problems.append(f"5: a tower stack on the fountain space {s}")
        for t in stack[:-1]:
            if tb.tower_magic[t]:
                problems.append(f"3: the magic tower is not on top of space {s}")
    for i, p in enumerate(wiz):
        if p and tier_of(p) > len(state.stacks[space_of(p) - 1]):
            problems.append(f"wizard {tb.wizard_ids[i]} floats above its stack")
    for seat in range(tb.n):
        team = tb.team_of(seat)
        total = sum(sum(state.potions[s]) for s in team)
        if total != sum(tb.start_potions[s] for s in team):
            problems.append(f"4: potion total of {tb.colours[seat]} changed to {total}")
        if min(state.potions[seat]) < 0:
            problems.append(f"4: negative potion count for {tb.colours[seat]}")
    m = state.modules
    if m is not None:
        problems += _module_problems(state)
    if state.cards is not None:
        c = state.cards
        n = sum(len(h) for h in c.hands) + len(c.draw) + len(c.discard)
        if n != 90:
            problems.append(f"deck: {n} cards instead of 90")
    return problems


def _module_problems(state: GameState) -> list[str]:
    """Expansion invariants (docs/state-model.md §2.4 items 3-5, R-MOD-*)."""
    tb = state.table
    m = state.modules
    assert m is not None
    problems: list[str] = []
    for name, code in (("witch", m.witch), ("raven", m.raven)):
        if code is None:
            continue
        s, t = space_of(code), tier_of(code)
        if not 1 <= s <= tb.length or t > len(state.stacks[s - 1]):
            problems.append(f"5: the {name} is not on the board")
            continue
        if tb.special[s] == "web":
            problems.append(f"5: the {name} stands on the web space {s}")
    if m.raven is not None and tier_of(m.raven) != len(state.stacks[space_of(m.raven) - 1]):
        problems.append("5: the raven is covered by a tower (R-MOD-RAVEN-7)")
    if m.feathers is not None:
        most = int(tb.config.options["max_feathers"])
        for seat, f in enumerate(m.feathers):
            if not 0 <= f <= most:
                problems.append(f"feathers: {tb.colours[seat]} holds {f}")
    if m.witch_vials is not None:
        taken = sum(sum(v) for v in m.witch_vials)
        supply = m.witch_vial_supply or 0
        total = int(tb.config.options["witch_vials"])
        exact = bool(tb.config.options["witch_vial_exhausted_no_effect"])
        if (taken + supply != total) if exact else (taken + supply < total):
            problems.append(f"witch vials: {taken} taken + {supply} in the supply")
        if min(min(v) for v in m.witch_vials) < 0:
            problems.append("witch vials: negative count")
    return problems
