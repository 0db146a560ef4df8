"""The lazy listing of legal actions with modules: candidates over the argument domain, kept
when :func:`~companion.rules.expansion.play.apply` accepts them."""

from __future__ import annotations

from collections.abc import Iterator

from companion.rules.actions import Action, Cast, DiscardCard, Feather, IllegalAction, Redraw
from companion.rules.expansion.play import accepts
from companion.rules.expansion.reach import Memo, card_playable, module_card_moves, spell_candidates
from companion.rules.expansion.spells import cast_begin, cast_effect
from companion.rules.model import CARD_KINDS, GameState
from companion.rules.spells import cast_timing_problem
from companion.rules.turn import ONE_DIE_CARD, closing_actions


def _legal_casts(st: GameState, seat: int, spell: str, free: bool, memo: Memo) -> Iterator[Cast]:
    """The legal casts of ``spell`` by ``seat``: the target-independent checks and the payment
    once (:func:`~companion.rules.expansion.spells.cast_begin`), then each candidate's effect
    on a copy (:func:`~companion.rules.expansion.spells.cast_effect`; what follows the effect
    never refuses). Piggyback is checked whole."""
    colour = st.table.colours[seat]
    try:
        w, _, _ = cast_begin(st, Cast(colour, spell, free=free))
    except IllegalAction:
        return
    for c in spell_candidates(st, seat, spell, free, memo):
        if spell == "piggyback":
            if accepts(st, c):
                yield c
            continue
        try:
            cast_effect(w.copy(), c, seat)
        except IllegalAction:
            continue
        yield c


def generate(st: GameState, every_card: bool) -> Iterator[Action]:
    """The legal actions of a state with modules (see :class:`~companion.rules.LegalActions`);
    witch page cards are not guessed (``page=False``), die cards with the raven are listed
    with ``raven_timing`` ``after`` and ``before``."""
    if st.game.over:
        return
    memo: Memo = {}
    tb = st.table
    t = st.turn
    seat = t.player
    colour = tb.colours[seat]
    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    if can_play:
        cards = st.cards
        if cards is not None:
            for k in sorted(set(cards.hands[seat])):
                yield from module_card_moves(st, seat, CARD_KINDS[k], None, memo)
            second = t.cards_used >= 1 and tb.config.options["discard_playable_second_card"]
            for k in sorted(set(cards.hands[seat])):
                if second or not card_playable(st, seat, CARD_KINDS[k], None, memo):
                    yield DiscardCard(colour, CARD_KINDS[k])
        else:
            if every_card:
                faces = list(CARD_KINDS)
            else:
                faces = [c for c in CARD_KINDS if (c.type != "either" and not c.dice)]
                faces.append(ONE_DIE_CARD)
            for card in faces:
                for m in module_card_moves(st, seat, card, None, memo):
                    if every_card or not card.dice or m.steps == 6:
                        yield m
            yield DiscardCard(colour, None)
        if t.cards_used == 0 and not tb.solo:
            if tb.config.options["redraw_push_optional"]:
                yield Redraw(colour, None)
            for s0, stk in enumerate(st.stacks):
                for k in range(1, len(stk) + 1):
                    r = Redraw(colour, (s0 + 1, k))
                    if accepts(st, r):
                        yield r
    ms = st.modules
    assert ms is not None
    order = [(seat + i) % tb.n for i in range(tb.n)]
    for s in order:
        frees = {src for (fs, src) in ms.free_casts if fs == s}
        full = st.potions[s][0] + (ms.witch_vials[s][0] if ms.witch_vials is not None else 0)
        for spell in tb.spells:
            paid = full >= tb.config.spell_costs[spell]
            if not paid and not frees:
                continue
            variants = ([False] if paid else []) + ([True] if frees else [])
            for free in variants:
                if not free and cast_timing_problem(st, s, spell) is not None:
                    continue
                yield from _legal_casts(st, s, spell, free, memo)
    if ms.feathers is not None and not t.feather_used and ms.feathers[seat] > 0:
        costs = tb.config.feather_costs
        have = ms.feathers[seat]
        if have >= costs["extra_card"] and not t.extra_card and not t.redrawn and not t.ended:
            yield Feather(colour, "extra_card")
        if have >= costs["free_spell"] and not t.ended:
            yield Feather(colour, "free_spell")
        if have >= costs["move_wizard"] and not t.ended:
            for i, p in enumerate(st.wizards):
                if p:
                    for n in range(1, 7):
                        f = Feather(colour, "move_wizard", wizard=tb.wizard_ids[i], steps=n)
                        if accepts(st, f):
                            yield f
    yield from closing_actions(st, can_play)
