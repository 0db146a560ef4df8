"""The turn kernel shared by the base game and the expansion (rules §5, §9-§11, §14, R-TEAM):
the checks and bookkeeping of a played card, drawing, End Turn, the end of the game and the
team actions.

Pure functions on immutable :class:`~companion.rules.model.GameState` values; the checks raise
:class:`~companion.rules.actions.IllegalAction` (``.reason``, ``.rule``) before anything changes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    ExchangeCards,
    GivePotion,
    IllegalAction,
    MoveWizard,
    Redraw,
)
from companion.rules.board import event as _ev
from companion.rules.model import (
    CARD_KINDS,
    KIND_INDEX,
    SETUP_CAPACITIES,
    Card,
    CardState,
    Config,
    GameState,
    Progress,
    Result,
    Table,
    Turn,
    full_deck,
    make_state,
    position,
)

_tuple_new = tuple.__new__


HAND_SIZE = 3
"""R-SETUP-5 / R-TURN-4: cards in hand after refilling."""


_KIND_BY_ID = {id(c): i for i, c in enumerate(CARD_KINDS)}


def place_wizards(tb: Table, tower_spaces: list[int]) -> list[int]:
    """R-SETUP-6: one continuous clockwise rotation of players puts the wizards on the tower roofs
    of ``tower_spaces`` (in order from the castle), each tower filled to its setup capacity.

    :returns: packed wizard positions (``position(space, tier)``), all at tier 1.
    :raises ValueError: more wizards than the towers can take.
    """
    wiz = [0] * len(tb.wizard_ids)
    nxt = [lo for lo, _ in tb.wiz_range]
    tower_i = 0
    on_tower = 0
    seat = 0
    left = len(wiz)
    while left:
        _, hi = tb.wiz_range[seat]
        if nxt[seat] < hi:
            if tower_i >= len(SETUP_CAPACITIES):
                raise ValueError("setup: more wizards than the towers can take (R-SETUP-6)")
            wiz[nxt[seat]] = position(tower_spaces[tower_i], 1)
            nxt[seat] += 1
            left -= 1
            on_tower += 1
            if on_tower == SETUP_CAPACITIES[tower_i]:
                tower_i += 1
                on_tower = 0
        seat = (seat + 1) % tb.n
    return wiz


def start_potions(tb: Table, config: Config) -> tuple[tuple[int, int, int], ...]:
    """R-SETUP-2: every player's potions (full, empty, spent) at the start; empty side up, or all
    full in solo when ``solo_potions_full`` (OPEN-08)."""
    p_each = tb.start_potions[0]
    if tb.solo and config.options["solo_potions_full"]:
        return tuple((p_each, 0, 0) for _ in range(tb.n))
    return tuple((0, p_each, 0) for _ in range(tb.n))


def deal(tb: Table, seed: int | None, rng: random.Random) -> CardState | None:
    """R-SETUP-5: shuffle the 90 cards with ``rng`` and deal ``HAND_SIZE`` to each player; None
    when ``seed`` is None (hands unknown, the tracker's case)."""
    if seed is None:
        return None
    deck = list(full_deck())
    rng.shuffle(deck)
    hands: list[list[int]] = [[] for _ in range(tb.n)]
    for _ in range(HAND_SIZE):
        for s in range(tb.n):
            hands[s].append(deck.pop(0))
    return CardState(tuple(tuple(sorted(h)) for h in hands), tuple(deck), (), seed, 0)


def player_seat(tb: Table, player: object) -> int:
    """The seat of colour ``player``.

    :raises IllegalAction: not a player of this game (R-SETUP-2)."""
    seat = tb.seat_of.get(player) if isinstance(player, str) else None
    if seat is None:
        raise IllegalAction(f"{player!r} is not a player of this game", "R-SETUP-2")
    return seat


def card_turn(st: GameState, player: str) -> int:
    """Checks common to every card action; returns the current seat."""
    tb = st.table
    seat = tb.seat_of.get(player)
    if seat is None:
        raise IllegalAction(f"{player!r} is not a player of this game", "R-SETUP-2")
    current, cards_used, redrawn, ended, _, _, _, extra_card, _ = st.turn
    if seat != current:
        raise IllegalAction(f"it is {tb.colours[current]}'s turn, not {player}'s", "R-TURN-1")
    if ended:
        raise IllegalAction("the turn has ended: a wizard entered the castle", "R-TURN-6")
    if redrawn:
        raise IllegalAction("no card may be played after redrawing the hand", "R-TURN-5")
    if cards_used >= tb.actions_per_turn + extra_card:
        raise IllegalAction(f"all {tb.actions_per_turn} actions of this turn are used", "R-TURN-2")
    return seat


def card_kind(
    st: GameState, seat: int, card: Card, side: str, steps: int, rolls: tuple[int, ...]
) -> int:
    """Check a card's form and dice against the move; returns the card kind index."""
    # one of the deck's own card objects (ids of live objects are unique), else an equal card
    kidx = _KIND_BY_ID.get(id(card))
    if kidx is None:
        kidx = KIND_INDEX.get(card) if isinstance(card, Card) else None
        if kidx is None:
            raise IllegalAction(f"{card!r} is not a card of the move deck", "R-DECK-1")
    if card.type != side and card.type != "either":
        raise IllegalAction(f"a {card.type} card cannot move a {side}", "R-CARD-3")
    if type(steps) is not int:
        raise IllegalAction(f"steps are a whole number 1 to 6, not {steps!r}", "R-CARD-5")
    if card.dice:
        check_rolls(card, rolls)
        if steps != rolls[-1]:
            raise IllegalAction(
                f"the last roll ({rolls[-1]}) is used, not {steps!r}; rolls are never added",
                "R-CARD-4",
            )
    else:
        if rolls:
            raise IllegalAction("only die cards are rolled", "R-CARD-4")
        v = card.wizard if side == "wizard" else card.tower
        if steps != v:
            raise IllegalAction(f"the card's {side} side shows {v}, not {steps!r}", "R-CARD-1")
    cards = st.cards
    if cards is not None and kidx not in cards.hands[seat]:
        raise IllegalAction(f"{st.table.colours[seat]} holds no {card.code} card", "R-TURN-2")
    return kidx


def controlled_seat(tb: Table, wiz: tuple[int, ...], seat: int) -> int:
    """Whose wizards ``seat``'s wizard cards move: his own, or his partner's once all his own
    are in the castle (R-TEAM-5)."""
    partner = tb.partner[seat]
    if partner >= 0:
        lo, hi = tb.wiz_range[seat]
        if not any(wiz[lo:hi]):
            return partner
    return seat


def play_card(
    st: GameState, seat: int, kidx: int, ev: list[Event], ended: bool
) -> tuple[Turn, CardState | None, Progress]:
    """Bookkeeping of one played card: hand -> discard pile, action count."""
    player, used, redrawn, was_ended, casts, exchanges, feather, extra, fly = st.turn
    turn = _tuple_new(
        Turn, (player, used + 1, redrawn, was_ended or ended, casts, exchanges, feather, extra, fly)
    )
    cards = st.cards
    if cards is not None:
        hands, draw, discard, seed, reshuffles = cards
        new_hands = list(hands)
        hand = new_hands[seat]
        i = hand.index(kidx)
        new_hands[seat] = hand[:i] + hand[i + 1 :]
        cards = _tuple_new(CardState, (tuple(new_hands), draw, discard + (kidx,), seed, reshuffles))
    g = st.game
    if st.table.solo:
        game = Progress(g.end_triggered_by, g.remaining_turns, g.over, g.result, g.cards_played + 1)
    else:
        game = g
    if ended:
        data = {"player": st.table.colours[player], "reason": "castle_entry"}
        ev.append(_tuple_new(Event, ("turn_ended", data)))
    return turn, cards, game


def discarded_card(
    st: GameState,
    seat: int,
    a: DiscardCard,
    playable: Callable[[GameState, int, Card, int | None], bool],
) -> int:
    """The deck kind index of the card ``a`` discards, or -1 when the hands are unknown and no
    card is named (R-TURN-3). ``playable`` says whether the card could still move a piece (the
    base game's or the modules' reach); only an unplayable card, or the second card where the
    ``discard_playable_second_card`` option allows it, may be discarded.

    :raises IllegalAction: no card named though the hands are known, an unknown card (R-DECK-1),
        a card the player does not hold (R-TURN-2), bad rolls (R-CARD-4), a playable card.
    """
    card = a.card
    if card is None:
        if st.cards is not None:
            raise IllegalAction("name the discarded card: the hands are known", "R-TURN-3")
        if a.rolls:
            raise IllegalAction("name the die card whose rolls are given", "R-TURN-3")
        return -1
    found = KIND_INDEX.get(card) if isinstance(card, Card) else None
    if found is None:
        raise IllegalAction(f"{card!r} is not a card of the move deck", "R-DECK-1")
    if a.rolls:
        check_rolls(card, a.rolls)
    if st.cards is not None:
        if found not in st.cards.hands[seat]:
            raise IllegalAction(f"{a.player} holds no {card.code} card", "R-TURN-2")
        options = st.table.config.options
        second = st.turn.cards_used >= 1 and options["discard_playable_second_card"]
        steps = a.rolls[-1] if a.rolls else None
        if not second and playable(st, seat, card, steps):
            raise IllegalAction(
                f"the {card.code} card can still move a wizard or a tower; only an "
                "unplayable card (or the second card) may be discarded",
                "R-TURN-3",
            )
    return found


def discard_played(
    st: GameState, seat: int, kidx: int, ev: list[Event]
) -> tuple[Turn, CardState | None, Progress]:
    """Turn, cards and game progress after a discard of deck kind ``kidx`` (-1 = a card the
    tracker cannot name: only the count of cards used moves on, and solo play counts it as
    played)."""
    if kidx >= 0:
        return play_card(st, seat, kidx, ev, False)
    t = st.turn
    game = st.game
    if st.table.solo:
        game = game._replace(cards_played=game.cards_played + 1)
    return t._replace(cards_used=t.cards_used + 1), None, game


def piggyback_riders(st: GameState, a: Cast, seat: int) -> tuple[MoveWizard, int, int, int, int]:
    """The checks of R-SPELL-11 that do not depend on where the pieces stand: ``(move, mover's
    seat, deck kind index of its card, carrying wizard, rider)`` for the *Piggyback* cast ``a``
    of ``seat`` (indices into ``table.wizard_ids``). The caller checks that both stand on the
    same top surface.

    :raises IllegalAction: the carried move is not a wizard move of the current player with a
        card of theirs (R-CARD-1), or the rider is not another wizard of the caster (R-SPELL-11).
    """
    tb = st.table
    m = a.then
    if not isinstance(m, MoveWizard):
        raise IllegalAction("piggyback rides on the current player's wizard move", "R-SPELL-11")
    cur = card_turn(st, m.player)
    kidx = card_kind(st, cur, m.card, "wizard", m.steps, m.rolls)
    wi = tb.wizard_index.get(m.wizard)
    if wi is None:
        raise IllegalAction(f"there is no wizard {m.wizard!r} in this game", "R-SETUP-2")
    ctrl = controlled_seat(tb, st.wizards, cur)
    if tb.wizard_owner[wi] != ctrl:
        raise IllegalAction(f"a wizard card moves only {tb.colours[ctrl]}'s wizards", "R-CARD-1")
    ri = tb.wizard_index.get(a.rider) if isinstance(a.rider, str) else None
    if ri is None or tb.wizard_owner[ri] != seat:
        raise IllegalAction(f"the rider must be one of {a.player}'s wizards", "R-SPELL-11")
    if ri == wi:
        raise IllegalAction("the rider must be another wizard", "R-SPELL-11")
    return m, cur, kidx, wi, ri


def begin_redraw(
    st: GameState, a: Redraw
) -> tuple[int, CardState | None, Turn, tuple[int, int] | None]:
    """The checks and the card bookkeeping of a redraw (R-TURN-5): ``(seat, cards after the
    whole hand is discarded and a new one drawn (None when the hands are unknown), the turn
    marked redrawn, the (space, tier) of the tower to push one space or None)``. Moving the
    pushed tower is the caller's (base game or modules).

    :raises IllegalAction: solo play (R-SOLO-2), a card already played this turn, no push though
        the ``redraw_push_optional`` option makes it mandatory, or a push that is not a pair.
    """
    seat = card_turn(st, a.player)
    tb = st.table
    if tb.solo:
        raise IllegalAction("the redraw alternative is not available in solo play", "R-SOLO-2")
    if st.turn.cards_used:
        raise IllegalAction(
            "the hand may be redrawn only before any card is played this turn", "R-TURN-5"
        )
    cards = st.cards
    if cards is not None:
        hand = cards.hands[seat]
        hands = cards.hands[:seat] + ((),) + cards.hands[seat + 1 :]
        cards = CardState(hands, cards.draw, cards.discard + hand, cards.seed, cards.reshuffles)
        cards, _ = draw_cards(cards, seat, HAND_SIZE, tb.solo)
    turn = st.turn._replace(redrawn=True)
    push = a.push
    if push is None:
        if not tb.config.options["redraw_push_optional"]:
            raise IllegalAction("the redraw push is mandatory with this option", "R-TURN-5")
        return seat, cards, turn, None
    if not isinstance(push, tuple) or len(push) != 2:
        raise IllegalAction("the push names a (space, tier)", "R-TURN-5")
    return seat, cards, turn, (push[0], push[1])


def dice_event(card: Card, rolls: tuple[int, ...], ev: list[Event]) -> None:
    """Append ``dice_rolled`` for a die card (R-CARD-4; the last roll is used)."""
    if card.dice:
        ev.append(_tuple_new(Event, ("dice_rolled", {"rolls": list(rolls), "used": rolls[-1]})))


def wizard_card(st: GameState, a: MoveWizard) -> tuple[int, int, int]:
    """Checks of a wizard card action before the move (turn, card, controlled wizard; also
    used with modules). :returns: ``(seat, card kind index, wizard index)``."""
    seat = card_turn(st, a.player)
    kidx = card_kind(st, seat, a.card, "wizard", a.steps, a.rolls)
    tb = st.table
    wi = tb.wizard_index.get(a.wizard)
    if wi is None:
        raise IllegalAction(f"there is no wizard {a.wizard!r} in this game", "R-SETUP-2")
    ctrl = controlled_seat(tb, st.wizards, seat)
    if tb.wizard_owner[wi] != ctrl:
        rule = "R-TEAM-5" if ctrl != seat else "R-CARD-1"
        raise IllegalAction(
            f"a wizard card moves only {tb.colours[ctrl]}'s own visible wizards, not {a.wizard}",
            rule,
        )
    return seat, kidx, wi


def check_rolls(card: Card, rolls: tuple[int, ...]) -> None:
    """Check the rolls of a die card: 1 to ``card.dice`` results, each 1..6.

    :raises IllegalAction: a value card rolled, too many or no rolls, a face outside 1..6
        (R-CARD-4/5)."""
    if not card.dice:
        raise IllegalAction("only die cards are rolled", "R-CARD-4")
    n = len(rolls)
    if n == 0 or n > card.dice:
        raise IllegalAction(
            f"a card with {card.dice} dice takes 1 to {card.dice} rolls, not {n}", "R-CARD-4"
        )
    for r in rolls:
        if type(r) is not int or not 1 <= r <= 6:
            raise IllegalAction(f"a die shows 1 to 6, not {r!r}", "R-CARD-5")


def draw_cards(cards: CardState, seat: int, count: int, solo: bool) -> tuple[CardState, int]:
    """Draw ``count`` cards for ``seat``; an empty draw pile is replaced by the shuffled discard
    pile (R-TURN-4; never in solo, R-SOLO-2). Returns the new cards and the number drawn."""
    hands, draw, discard, seed, reshuffles = cards
    if len(draw) >= count:
        new_hands = list(hands)
        new_hands[seat] = tuple(sorted(new_hands[seat] + draw[:count]))
        drawn: CardState = _tuple_new(
            CardState, (tuple(new_hands), draw[count:], discard, seed, reshuffles)
        )
        return drawn, count
    got: list[int] = []
    while len(got) < count:
        if not draw:
            if solo or not discard:
                break
            pile = list(discard)
            random.Random(f"{cards.seed}/{reshuffles}").shuffle(pile)
            draw = tuple(pile)
            discard = ()
            reshuffles += 1
        got.append(draw[0])
        draw = draw[1:]
    hands = hands[:seat] + (tuple(sorted(hands[seat] + tuple(got))),) + hands[seat + 1 :]
    return CardState(hands, draw, discard, cards.seed, reshuffles), len(got)


def end_turn_refusal(st: GameState) -> str | None:
    """None when the current player may end the turn, else the reason he may not."""
    t = st.turn
    tb = st.table
    if t.ended or t.redrawn or t.cards_used >= tb.actions_per_turn + t.extra_card:
        return None
    if t.cards_used >= 1 and tb.config.options["keep_second_card"]:
        return None
    if st.cards is not None and not st.cards.hands[t.player]:
        return None
    return (
        f"{tb.colours[t.player]} has played {t.cards_used} of {tb.actions_per_turn} cards; "
        "play or discard a card (or redraw) first"
    )


_FRESH_TURNS = tuple(Turn(i) for i in range(6))


def end_turn(st: GameState, a: EndTurn) -> tuple[GameState, list[Event]]:
    """End Turn (R-TURN-2/4, R-END-2, R-SOLO-2): refill the hand, complete the final round,
    pass to the next player. With modules the expansion calls this when no armed spell or free
    cast is to be cleared and the game cannot end.

    :raises IllegalAction: the player must still play or discard a card (R-TURN-2).
    """
    tb = st.table
    t = st.turn
    seat, cards_used, redrawn, ended, _, _, _, extra_card, _ = t
    game = st.game
    if not (ended or redrawn or cards_used >= tb.actions_per_turn + extra_card):
        why = end_turn_refusal(st)
        if why is not None:
            raise IllegalAction(why, "R-TURN-2")
    colour = tb.colours[seat]
    ev: list[Event] = []
    if not ended:
        ev.append(_tuple_new(Event, ("turn_ended", {"player": colour, "reason": "end_turn"})))
    cards = st.cards
    if cards is not None:
        need = HAND_SIZE - len(cards.hands[seat])
        if need > 0:
            cards, got = draw_cards(cards, seat, need, tb.solo)
            ev.append(_tuple_new(Event, ("hand_refilled", {"player": colour, "count": got})))
    if tb.solo:
        limit = tb.config.options["solo_card_limit"]
        out_of_cards = cards is not None and not cards.draw and not cards.hands[seat]
        if (limit is not None and game.cards_played >= limit) or out_of_cards:
            result = game_result(tb, st.wizards, st.potions, "solo_lost")
            game = Progress(game.end_triggered_by, 0, True, result, game.cards_played)
            ev.append(game_over_event(tb, result))
            return (
                make_state(
                    tb, st.stacks, st.wizards, st.castle, st.potions, t, game, cards, st.modules
                ),
                ev,
            )
    elif game.end_triggered_by is not None:
        if not game.remaining_turns:
            result = game_result(tb, st.wizards, st.potions, "round_completed")
            game = Progress(game.end_triggered_by, 0, True, result, game.cards_played)
            ev.append(game_over_event(tb, result))
            return (
                make_state(
                    tb, st.stacks, st.wizards, st.castle, st.potions, t, game, cards, st.modules
                ),
                ev,
            )
        game = game._replace(remaining_turns=game.remaining_turns - 1)
    nxt = (seat + 1) % tb.n
    ev.append(_tuple_new(Event, ("next_player", {"player": tb.colours[nxt]})))
    return (
        make_state(
            tb,
            st.stacks,
            st.wizards,
            st.castle,
            st.potions,
            _FRESH_TURNS[nxt],
            game,
            cards,
            st.modules,
        ),
        ev,
    )


def qualifies(
    tb: Table, wiz: tuple[int, ...], potions: tuple[tuple[int, int, int], ...], seat: int
) -> bool:
    """R-END-1 for one seat (team variant: the whole team, R-TEAM-8)."""
    for s in tb.team_of(seat):
        lo, hi = tb.wiz_range[s]
        if any(wiz[lo:hi]) or potions[s][1]:
            return False
    return True


def end_check(
    tb: Table,
    wiz: tuple[int, ...],
    potions: tuple[tuple[int, int, int], ...],
    game: Progress,
    turn: Turn,
    ev: list[Event],
) -> Progress:
    """Trigger the end (R-END-1/2), finish solo play, or end a deadlock (R-END-5, OPEN-07)."""
    if game.end_triggered_by is not None or game.over:
        return game
    lo, hi = tb.wiz_range[0]
    if wiz.count(0) < hi - lo:  # nobody has all his wizards in the castle (R-END-1, R-END-5)
        return game
    cur = turn.player
    order = [(cur + i) % tb.n for i in range(tb.n)]
    for seat in order:
        if qualifies(tb, wiz, potions, seat):
            if tb.solo:
                result = game_result(tb, wiz, potions, "solo_won")
                ev.append(game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            remaining = tb.n - 1 - cur
            immediate = tb.config.teams and not tb.config.options["team_round_completion"]
            data: dict[str, Any] = {"player": tb.colours[seat], "remaining_turns": remaining}
            if tb.config.teams:
                data["team"] = [tb.colours[s] for s in tb.team_of(seat)]
            ev.append(_ev("game_end_triggered", data))
            if immediate:
                result = game_result(tb, wiz, potions, "team_goal")
                ev.append(game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            return Progress(seat, remaining, False, None, game.cards_played)
    if not any(wiz) and tb.config.options["deadlock_end"]:
        result = game_result(tb, wiz, potions, "deadlock")
        ev.append(game_over_event(tb, result))
        return Progress(None, 0, True, result, game.cards_played)
    return game


def game_result(
    tb: Table, wiz: tuple[int, ...], potions: tuple[tuple[int, int, int], ...], reason: str
) -> Result:
    """Winners (R-END-3/4): among the qualified, the most unspent full potions (team: summed,
    OPEN-06); deadlock (OPEN-07): wizards in castle + potions filled, then unspent full."""
    unused = tuple(p[0] for p in potions)
    qualified = tuple(s for s in range(tb.n) if qualifies(tb, wiz, potions, s))
    if reason == "solo_lost":
        return Result(reason, qualified, (), unused)

    def full_of(seat: int) -> int:
        return sum(unused[s] for s in tb.team_of(seat))

    if qualified:
        best = max(full_of(s) for s in qualified)
        winners = tuple(s for s in qualified if full_of(s) == best)
    else:

        def rank(seat: int) -> tuple[int, int]:
            inside = 0
            filled = 0
            for s in tb.team_of(seat):
                lo, hi = tb.wiz_range[s]
                inside += sum(1 for p in wiz[lo:hi] if p == 0)
                filled += potions[s][0] + potions[s][2]
            return inside + filled, full_of(seat)

        top = max(rank(s) for s in range(tb.n))
        winners = tuple(s for s in range(tb.n) if rank(s) == top)
    return Result(reason, qualified, winners, unused)


def game_over_event(tb: Table, result: Result) -> Event:
    """The ``game_over`` event of ``result`` (R-END-3/4), players named by colour."""
    return _ev(
        "game_over",
        {
            "reason": result.reason,
            "qualified": [tb.colours[s] for s in result.qualified],
            "winners": [tb.colours[s] for s in result.winners],
            "unused_full": {tb.colours[s]: n for s, n in enumerate(result.unused_full)},
        },
    )


def team_turn(st: GameState, player: str, other: str) -> tuple[int, int]:
    """Seats of ``player`` and his partner ``other`` for a team action.

    :raises IllegalAction: not the team variant, or not partners (R-TEAM-1)."""
    tb = st.table
    if not tb.config.teams:
        raise IllegalAction("only in the team variant", "R-TEAM-1")
    seat = player_seat(tb, player)
    to = player_seat(tb, other)
    if tb.partner[seat] != to:
        raise IllegalAction(f"{other} is not {player}'s partner", "R-TEAM-1")
    return seat, to


def give_potion(st: GameState, a: GivePotion) -> tuple[GameState, list[Event]]:
    """:class:`~companion.rules.actions.GivePotion` (R-TEAM-4, OPEN-06).

    :raises IllegalAction: not partners, not during either partner's turn, too few potions."""
    seat, to = team_turn(st, a.player, a.to)
    tb = st.table
    if st.turn.player not in (seat, to) and not tb.config.options["team_potions_any_turn"]:
        raise IllegalAction("potions are handed over during either partner's turn", "R-TEAM-4")
    n = a.count
    f, e, sp = st.potions[seat]
    if type(n) is not int or n < 1 or n > f:
        raise IllegalAction(f"{a.player} has {f} full potion(s) to give, not {n!r}", "R-TEAM-4")
    pot = list(st.potions)
    pot[seat] = (f - n, e, sp)
    g = pot[to]
    pot[to] = (g[0] + n, g[1], g[2])
    ev = [_ev("potion_given", {"player": a.player, "to": a.to, "count": n})]
    return (
        make_state(
            tb, st.stacks, st.wizards, st.castle, tuple(pot), st.turn, st.game, st.cards, st.modules
        ),
        ev,
    )


def exchange_cards(st: GameState, a: ExchangeCards) -> tuple[GameState, list[Event]]:
    """:class:`~companion.rules.actions.ExchangeCards`, card help between partners (R-TEAM-2).

    :raises IllegalAction: not partners, not the asking player's turn, the exchange limit is
        reached, or a card is not held."""
    seat, partner = team_turn(st, a.player, a.partner)
    tb = st.table
    t = st.turn
    if t.player != seat:
        raise IllegalAction("card help happens during the asking player's turn", "R-TEAM-2")
    limit = tb.config.options["team_exchanges_per_turn"]
    if limit is not None and t.exchanges >= limit:
        raise IllegalAction(f"at most {limit} card exchange(s) per turn", "R-TEAM-2")
    cards = st.cards
    if cards is not None:
        take = KIND_INDEX.get(a.take) if a.take is not None else None
        give = KIND_INDEX.get(a.give) if a.give is not None else None
        if take is None or take not in cards.hands[partner]:
            raise IllegalAction(f"{a.partner} holds no such card to pass", "R-TEAM-2")
        mine = cards.hands[seat] + (take,)
        if give is None or give not in mine:
            raise IllegalAction(f"{a.player} holds no such card to give back", "R-TEAM-2")
        i = mine.index(give)
        mine = mine[:i] + mine[i + 1 :]
        theirs = list(cards.hands[partner])
        theirs.remove(take)
        theirs.append(give)
        hands = list(cards.hands)
        hands[seat] = tuple(sorted(mine))
        hands[partner] = tuple(sorted(theirs))
        cards = cards._replace(hands=tuple(hands))
    ev = [_ev("cards_exchanged", {"player": a.player, "partner": a.partner})]
    return (
        make_state(
            tb,
            st.stacks,
            st.wizards,
            st.castle,
            st.potions,
            t._replace(exchanges=t.exchanges + 1),
            st.game,
            cards,
            st.modules,
        ),
        ev,
    )


def representative(side: str, steps: int) -> tuple[Card, tuple[int, ...]]:
    """A card that moves ``side`` exactly ``steps`` (hands unknown): the single-type value card
    for 1-5, the 1-die card rolled 6 for 6."""
    if steps <= 5:
        card = CARD_KINDS[steps - 1] if side == "wizard" else CARD_KINDS[4 + steps]
        return card, ()
    return ONE_DIE_CARD, (6,)


ONE_DIE_CARD = next(c for c in CARD_KINDS if c.dice == 1)
"""The 1-die card: the representative card for a move of 6 steps (hands unknown)."""


def closing_actions(st: GameState, can_play: bool) -> Iterator[Action]:
    """The legal team actions (R-TEAM-2/4: potions to the partner, card help while a card may
    still be played) and :class:`EndTurn` when allowed; shared with the expansion."""
    tb = st.table
    t = st.turn
    seat = t.player
    if tb.config.teams:
        colour = tb.colours[seat]
        partner = tb.partner[seat]
        pc = tb.colours[partner]
        for giver, to in ((seat, partner), (partner, seat)):
            if st.potions[giver][0] > 0:
                yield GivePotion(tb.colours[giver], tb.colours[to], 1)
        limit = tb.config.options["team_exchanges_per_turn"]
        if can_play and (limit is None or t.exchanges < limit):
            if st.cards is None:
                yield ExchangeCards(colour, pc)
            else:
                for take in sorted(set(st.cards.hands[partner])):
                    mine = sorted(set(st.cards.hands[seat] + (take,)))
                    for give in mine:
                        yield ExchangeCards(colour, pc, CARD_KINDS[take], CARD_KINDS[give])
    if end_turn_refusal(st) is None:
        yield EndTurn()
