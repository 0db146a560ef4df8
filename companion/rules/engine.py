"""Setup, legality and the application of actions (rules §3-§15 of ``wandering-towers.md``).

``apply(state, action)`` validates the action by direct checks (never by enumerating all legal
actions) and returns the new state plus the events explaining it; an illegal action raises
:class:`IllegalAction` and nothing changes. ``legal_actions(state)`` is a lazy view.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from typing import Any

from companion.rules import board
from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    ExchangeCards,
    GivePotion,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
    fast_move_tower,
    fast_move_wizard,
)
from companion.rules.board import Pieces
from companion.rules.board import event as _ev
from companion.rules.model import (
    BASE_SPELLS,
    BASE_TOWERS,
    CARD_KINDS,
    KIND_INDEX,
    MAX_ON_TOP,
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
)

HAND_SIZE = 3
_KIND_BY_ID = {id(c): i for i, c in enumerate(CARD_KINDS)}
_tuple_new = tuple.__new__
"""R-SETUP-5 / R-TURN-4: cards in hand after refilling."""

_BASE_DISPLAY = ("advance_wizard", "advance_tower")
"""R-SETUP-4: the two spells of the base game."""

# --------------------------------------------------------------------------------------------
# Setup


def setup(config: Config, seed: int | None = None) -> GameState:
    """The position before the start player's first turn (R-SETUP-1..6).

    :param config: the game's :class:`Config`.
    :param seed: shuffles and deals the 90 move cards (and draws master/solo spells when
        ``config.spells`` is None). ``None`` = hands unknown (the tracker's case): the state
        carries no cards and any card of the deck may be played.
    :raises ValueError: an expansion spell without the module it needs (R-MOD-GEN-2).

    With ``config.modules`` (or expansion spells) the expansion's setup is used
    (:func:`companion.rules.expansion.setup`, R-MOD-*-1).
    """
    if config.modules or any(s not in BASE_SPELLS for s in config.spells or ()):
        return _x.setup(config, seed)
    rng = random.Random(seed if seed is not None else 0)
    spells = resolve_spells(config, rng)
    config = dataclasses.replace(config, spells=spells)
    tb = Table(config, spells, BASE_TOWERS)
    length = tb.length
    # R-SETUP-3: towers on the spaces following the castle clockwise (fountain/web skipped)
    start = 1
    tower_spaces: list[int] = []
    sp = start
    free = sum(1 for x in range(2, length + 1) if tb.special[x] is None)
    if free < len(tb.towers):
        raise ValueError(
            f"config.track: {free} free spaces after the castle; setup needs "
            f"{len(tb.towers)} for the towers (R-SETUP-3)"
        )
    while len(tower_spaces) < len(tb.towers):
        sp = sp % length + 1
        if tb.special[sp] is None:
            tower_spaces.append(sp)
    stacks_l: list[tuple[int, ...]] = [() for _ in range(length)]
    for t, sp in enumerate(tower_spaces):
        stacks_l[sp - 1] = (t,)
    wiz = place_wizards(tb, tower_spaces)
    potions = start_potions(tb, config)
    cards = deal(tb, seed, rng)
    return GameState(tb, tuple(stacks_l), tuple(wiz), start, potions, Turn(0), Progress(), cards)


def place_wizards(tb: Table, tower_spaces: list[int]) -> list[int]:
    """R-SETUP-6: one continuous clockwise rotation of players puts the wizards on the tower roofs
    of ``tower_spaces`` (in order from the castle), each tower filled to its setup capacity.

    :returns: packed wizard positions (``space << 4 | tier``), all at tier 1.
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
            wiz[nxt[seat]] = tower_spaces[tower_i] << 4 | 1
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


def resolve_spells(config: Config, rng: random.Random | None) -> tuple[str, ...]:
    """The spells on display: ``config.spells``, else the base game's two (R-SETUP-4), else
    ``master_spell_count`` / ``solo_spell_count`` drawn with ``rng`` (None: the first ones in
    rulebook order)."""
    if config.spells is not None:
        return config.spells
    if config.player_count == 1:
        count = int(config.options["solo_spell_count"])
    elif config.variant == "master":
        count = int(config.options["master_spell_count"])
    else:
        return _BASE_DISPLAY
    if count >= len(BASE_SPELLS):
        return BASE_SPELLS
    if rng is None:
        return BASE_SPELLS[:count]
    chosen = set(rng.sample(BASE_SPELLS, count))
    return tuple(s for s in BASE_SPELLS if s in chosen)


# --------------------------------------------------------------------------------------------
# apply


def apply(state: GameState, action: Action) -> tuple[GameState, list[Event]]:
    """Carry out ``action`` with full legality checks.

    :returns: the new state and the events that explain it, in the order they happened.
    :raises IllegalAction: the action breaks a rule (``.reason``, ``.rule``); ``state`` is
        unchanged (all values are immutable).
    :raises TypeError: ``action`` is not an action value.
    """
    handler = (_HANDLERS if state.modules is None else _x.HANDLERS).get(type(action))
    if handler is None:
        raise TypeError(f"not an action: {action!r}")
    if state.game.over:
        raise IllegalAction("the game is over", "R-END-2")
    return handler(state, action)


def is_legal(state: GameState, action: Action) -> bool:
    """True when :func:`apply` would accept ``action``."""
    try:
        apply(state, action)
    except IllegalAction:
        return False
    return True


def _seat(tb: Table, player: object) -> int:
    seat = tb.seat_of.get(player) if isinstance(player, str) else None
    if seat is None:
        raise IllegalAction(f"{player!r} is not a player of this game", "R-SETUP-2")
    return seat


def _card_turn(st: GameState, player: str) -> int:
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


def _card_kind(st: GameState, seat: int, card: Any, side: str, steps: Any, rolls: Any) -> int:
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
        _check_rolls(card, rolls)
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


def _controlled(tb: Table, wiz: tuple[int, ...], seat: int) -> int:
    """Whose wizards ``seat``'s wizard cards move: his own, or his partner's once all his own
    are in the castle (R-TEAM-5)."""
    partner = tb.partner[seat]
    if partner >= 0:
        lo, hi = tb.wiz_range[seat]
        if not any(wiz[lo:hi]):
            return partner
    return seat


def _play_card(
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


def _dice_event(card: Any, rolls: tuple[int, ...], ev: list[Event]) -> None:
    if card.dice:
        ev.append(_tuple_new(Event, ("dice_rolled", {"rolls": list(rolls), "used": rolls[-1]})))


def wizard_card(st: GameState, a: MoveWizard) -> tuple[int, int, int]:
    """Checks of a wizard card action before the move (turn, card, controlled wizard; also
    used with modules). :returns: ``(seat, card kind index, wizard index)``."""
    seat = _card_turn(st, a.player)
    kidx = _card_kind(st, seat, a.card, "wizard", a.steps, a.rolls)
    tb = st.table
    wi = tb.wizard_index.get(a.wizard)
    if wi is None:
        raise IllegalAction(f"there is no wizard {a.wizard!r} in this game", "R-SETUP-2")
    ctrl = _controlled(tb, st.wizards, seat)
    if tb.wizard_owner[wi] != ctrl:
        rule = "R-TEAM-5" if ctrl != seat else "R-CARD-1"
        raise IllegalAction(
            f"a wizard card moves only {tb.colours[ctrl]}'s own visible wizards, not {a.wizard}",
            rule,
        )
    return seat, kidx, wi


def _apply_move_wizard(st: GameState, a: MoveWizard) -> tuple[GameState, list[Event]]:
    seat, kidx, wi = wizard_card(st, a)
    tb = st.table
    ev: list[Event] = []
    if a.card.dice:
        _dice_event(a.card, a.rolls, ev)
    p = Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    try:
        entered = board.wizard_move(p, wi, a.steps)
    except IllegalAction as exc:
        return _committed_card_lost(st, a, seat, kidx, exc)
    turn, cards, game = _play_card(st, seat, kidx, ev, entered)
    if entered:
        game = _end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, st.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


def _apply_move_tower(st: GameState, a: MoveTower) -> tuple[GameState, list[Event]]:
    seat = _card_turn(st, a.player)
    kidx = _card_kind(st, seat, a.card, "tower", a.steps, a.rolls)
    tb = st.table
    ev: list[Event] = []
    if a.card.dice:
        _dice_event(a.card, a.rolls, ev)
    p = Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    try:
        _, _, filled = board.tower_move(p, a.space, a.tier, a.steps, seat)
    except IllegalAction as exc:
        return _committed_card_lost(st, a, seat, kidx, exc)
    turn, cards, game = _play_card(st, seat, kidx, ev, False)
    if filled:
        game = _end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


def _committed_card_lost(
    st: GameState, a: MoveWizard | MoveTower, seat: int, kidx: int, exc: IllegalAction
) -> tuple[GameState, list[Event]]:
    """R-MASTER-9: a committed card whose move a spell made impossible is simply lost."""
    if not (a.card_committed and st.table.master):
        raise exc
    ev = [
        _ev(
            "announced_move_impossible",
            {"player": a.player, "card": a.card.to_json(), "reason": exc.reason},
        )
    ]
    turn, cards, game = _play_card(st, seat, kidx, ev, False)
    return (
        make_state(
            st.table, st.stacks, st.wizards, st.castle, st.potions, turn, game, cards, st.modules
        ),
        ev,
    )


def card_playable(st: GameState, seat: int, card: Any, steps: int | None = None) -> bool:
    """True when ``card`` could move some wizard or tower now (R-TURN-3); a die card with any
    roll, or with the final roll ``steps`` when given."""
    if st.modules is not None:
        return _x.card_playable(st, seat, card, steps)
    for m in _card_moves(st, seat, card, None):
        if steps is None or not card.dice or m.steps == steps:
            return True
    return False


def _check_rolls(card: Any, rolls: Any) -> None:
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


def _apply_discard(st: GameState, a: DiscardCard) -> tuple[GameState, list[Event]]:
    seat = _card_turn(st, a.player)
    tb = st.table
    card = a.card
    if card is None:
        if st.cards is not None:
            raise IllegalAction("name the discarded card: the hands are known", "R-TURN-3")
        if a.rolls:
            raise IllegalAction("name the die card whose rolls are given", "R-TURN-3")
        kidx = -1
    else:
        found = KIND_INDEX.get(card) if isinstance(card, Card) else None
        if found is None:
            raise IllegalAction(f"{card!r} is not a card of the move deck", "R-DECK-1")
        kidx = found
        if a.rolls:
            _check_rolls(card, a.rolls)
        if st.cards is not None:
            if kidx not in st.cards.hands[seat]:
                raise IllegalAction(f"{a.player} holds no {card.code} card", "R-TURN-2")
            second = st.turn.cards_used >= 1 and tb.config.options["discard_playable_second_card"]
            steps = a.rolls[-1] if a.rolls else None
            if not second and card_playable(st, seat, card, steps):
                raise IllegalAction(
                    f"the {card.code} card can still move a wizard or a tower; only an "
                    "unplayable card (or the second card) may be discarded",
                    "R-TURN-3",
                )
    ev = [
        _ev(
            "card_discarded_without_effect",
            {"player": a.player, "card": None if card is None else card.to_json()},
        )
    ]
    if kidx < 0:
        t = st.turn
        turn = t._replace(cards_used=t.cards_used + 1)
        game = st.game
        if tb.solo:
            game = game._replace(cards_played=game.cards_played + 1)
        cards = None
    else:
        turn, cards, game = _play_card(st, seat, kidx, ev, False)
    return (
        make_state(tb, st.stacks, st.wizards, st.castle, st.potions, turn, game, cards, st.modules),
        ev,
    )


def _draw(cards: CardState, seat: int, count: int, solo: bool) -> tuple[CardState, int]:
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


def _apply_redraw(st: GameState, a: Redraw) -> tuple[GameState, list[Event]]:
    seat = _card_turn(st, a.player)
    tb = st.table
    if tb.solo:
        raise IllegalAction("the redraw alternative is not available in solo play", "R-SOLO-2")
    if st.turn.cards_used:
        raise IllegalAction(
            "the hand may be redrawn only before any card is played this turn", "R-TURN-5"
        )
    ev: list[Event] = [_ev("hand_discarded_and_redrawn", {"player": a.player})]
    cards = st.cards
    if cards is not None:
        hand = cards.hands[seat]
        hands = cards.hands[:seat] + ((),) + cards.hands[seat + 1 :]
        cards = CardState(hands, cards.draw, cards.discard + hand, cards.seed, cards.reshuffles)
        cards, _ = _draw(cards, seat, HAND_SIZE, tb.solo)
    p = Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    game = st.game
    turn = st.turn._replace(redrawn=True)
    push = a.push
    if push is None:
        if not tb.config.options["redraw_push_optional"]:
            raise IllegalAction("the redraw push is mandatory with this option", "R-TURN-5")
    else:
        if not isinstance(push, tuple) or len(push) != 2:
            raise IllegalAction("the push names a (space, tier)", "R-TURN-5")
        if board.tower_move(p, push[0], push[1], 1, seat)[2]:
            game = _end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


def _end_turn_allowed(st: GameState) -> str | None:
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


def _fresh_turn(seat: int) -> Turn:
    return _FRESH_TURNS[seat]


def _apply_end_turn(
    st: GameState, a: EndTurn, plain: bool = False
) -> tuple[GameState, list[Event]]:
    """End Turn for the base game and, unless armed spells or free casts are to be cleared or
    the game may end (the expansion's :func:`~companion.rules.expansion.end_turn`, which calls
    this with ``plain``), with modules."""
    tb = st.table
    t = st.turn
    seat, cards_used, redrawn, ended, _, _, _, extra_card, _ = t
    game = st.game
    m = st.modules
    if (
        m is not None
        and not plain
        and (m.armed or m.free_casts or tb.solo or game.end_triggered_by is not None)
    ):
        return _x.end_turn(st, a)
    if not (ended or redrawn or cards_used >= tb.actions_per_turn + extra_card):
        why = _end_turn_allowed(st)
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
            cards, got = _draw(cards, seat, need, tb.solo)
            ev.append(_tuple_new(Event, ("hand_refilled", {"player": colour, "count": got})))
    if tb.solo:
        limit = tb.config.options["solo_card_limit"]
        out_of_cards = cards is not None and not cards.draw and not cards.hands[seat]
        if (limit is not None and game.cards_played >= limit) or out_of_cards:
            result = _result(tb, st.wizards, st.potions, "solo_lost")
            game = Progress(game.end_triggered_by, 0, True, result, game.cards_played)
            ev.append(_game_over_event(tb, result))
            return (
                make_state(
                    tb, st.stacks, st.wizards, st.castle, st.potions, t, game, cards, st.modules
                ),
                ev,
            )
    elif game.end_triggered_by is not None:
        if not game.remaining_turns:
            result = _result(tb, st.wizards, st.potions, "round_completed")
            game = Progress(game.end_triggered_by, 0, True, result, game.cards_played)
            ev.append(_game_over_event(tb, result))
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


# --------------------------------------------------------------------------------------------
# Game end (R-END, R-TEAM-8, R-SOLO)


def _qualifies(
    tb: Table, wiz: tuple[int, ...], potions: tuple[tuple[int, int, int], ...], seat: int
) -> bool:
    """R-END-1 for one seat (team variant: the whole team, R-TEAM-8)."""
    for s in tb.team_of(seat):
        lo, hi = tb.wiz_range[s]
        if any(wiz[lo:hi]) or potions[s][1]:
            return False
    return True


def _end_check(
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
        if _qualifies(tb, wiz, potions, seat):
            if tb.solo:
                result = _result(tb, wiz, potions, "solo_won")
                ev.append(_game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            remaining = tb.n - 1 - cur
            immediate = tb.config.teams and not tb.config.options["team_round_completion"]
            data: dict[str, Any] = {"player": tb.colours[seat], "remaining_turns": remaining}
            if tb.config.teams:
                data["team"] = [tb.colours[s] for s in tb.team_of(seat)]
            ev.append(_ev("game_end_triggered", data))
            if immediate:
                result = _result(tb, wiz, potions, "team_goal")
                ev.append(_game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            return Progress(seat, remaining, False, None, game.cards_played)
    if not any(wiz) and tb.config.options["deadlock_end"]:
        result = _result(tb, wiz, potions, "deadlock")
        ev.append(_game_over_event(tb, result))
        return Progress(None, 0, True, result, game.cards_played)
    return game


def _result(
    tb: Table, wiz: tuple[int, ...], potions: tuple[tuple[int, int, int], ...], reason: str
) -> Result:
    """Winners (R-END-3/4): among the qualified, the most unspent full potions (team: summed,
    OPEN-06); deadlock (OPEN-07): wizards in castle + potions filled, then unspent full."""
    unused = tuple(p[0] for p in potions)
    qualified = tuple(s for s in range(tb.n) if _qualifies(tb, wiz, potions, s))
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


def _game_over_event(tb: Table, result: Result) -> Event:
    return _ev(
        "game_over",
        {
            "reason": result.reason,
            "qualified": [tb.colours[s] for s in result.qualified],
            "winners": [tb.colours[s] for s in result.winners],
            "unused_full": {tb.colours[s]: n for s, n in enumerate(result.unused_full)},
        },
    )


# --------------------------------------------------------------------------------------------
# Spells (R-SPELL, R-MASTER)


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


def _apply_cast(st: GameState, a: Cast) -> tuple[GameState, list[Event]]:
    tb = st.table
    seat = _seat(tb, a.player)
    spell = a.spell
    if spell not in tb.spells:
        raise IllegalAction(f"the spell {spell!r} is not on display in this game", "R-SETUP-4")
    if a.free:
        raise IllegalAction(
            "free casts come from the magic tower or feathers (expansion)", "R-MOD-MAGICTOWER-5"
        )
    times = a.times
    if type(times) is not int or times < 1:
        raise IllegalAction("a spell is cast at least once", "R-MASTER-8")
    if times != 1 and spell in ("piggyback", "free_wizard", "swap_tower"):
        raise IllegalAction(f"{spell} is repeated by casting it again", "R-MASTER-8")
    problem = cast_timing_problem(st, seat, spell, times)
    if problem is not None:
        raise problem
    cost = tb.config.spell_costs[spell] * times
    f, e, sp = st.potions[seat]
    if f < cost:
        raise IllegalAction(
            f"{spell} x{times} costs {cost} full potion(s); {a.player} has {f}", "R-SPELL-1"
        )
    potions = st.potions[:seat] + ((f - cost, e, sp + cost),) + st.potions[seat + 1 :]
    ev: list[Event] = [_ev("spell_cast", {"player": a.player, "spell": spell, "times": times})]
    if cost:
        ev.append(_ev("potions_spent", {"player": a.player, "count": cost}))
    t = st.turn
    casts = t.casts + ((seat, spell, spell_window(st), times),)
    cur = t.player
    ctrl = _controlled(tb, st.wizards, cur)
    game = st.game
    cards = st.cards
    turn = t._replace(casts=casts)
    if spell == "piggyback":
        return _piggyback(st, a, seat, potions, casts, ev)
    p = Pieces(tb, st.stacks, st.wizards, st.castle, potions, ev)
    check_end = False
    entered_by = -1
    if spell in ("advance_wizard", "headwind_wizard"):
        step = 1 if spell == "advance_wizard" else -1
        entered_by = move_wizard_spell(p, seat, a.wizard, step, times)
    elif spell in ("advance_tower", "headwind_tower"):
        step = 2 if spell == "advance_tower" else -2
        check_end = move_tower_spell(p, seat, a.space, a.tier, step, times)
    elif spell == "swap_tower":
        p.stacks, p.wiz = _swap(tb, p.stacks, p.wiz, p.castle, a, ev)
    elif spell == "move_castle":
        castle_spell(p, a.direction, times)
    elif spell == "free_wizard":
        entered_by = free_wizard(p, seat, a)
    else:  # pragma: no cover - expansion spells are refused by setup
        raise IllegalAction(f"the spell {spell!r} is not implemented", "R-SPELLX-1")
    if entered_by >= 0:
        check_end = True
        if tb.wizard_owner[entered_by] == ctrl and not turn.ended:
            turn = turn._replace(ended=True)
            ev.append(_ev("turn_ended", {"player": tb.colours[cur], "reason": "castle_entry"}))
    if check_end:
        game = _end_check(tb, p.wiz, p.potions, game, turn, ev)
    return (
        make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, st.modules),
        ev,
    )


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


def _swap(
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
    code_a, code_b = sa << 4 | ha, sb << 4 | hb
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
    under = space << 4 | (tier - 1)
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
        code = space << 4 | tier  # on the roof of the trapping tower, still inside the stack
        p.wiz = wiz[:wi] + (code,) + wiz[wi + 1 :]
        ev.append(_ev("wizard_freed", {"wizard": a.wizard, "space": space, "tier": tier}))
        return -1
    if p.castle == space:
        p.wiz = wiz[:wi] + (0,) + wiz[wi + 1 :]
        ev.append(_ev("wizard_freed", {"wizard": a.wizard, "space": space, "into_castle": True}))
        ev.append(_ev("castle_entered", {"wizard": a.wizard}))
        board.relocate_castle(p)
        return wi
    code = space << 4 | h
    if wiz.count(code) >= MAX_ON_TOP and tb.config.options["free_wizard_full_top_illegal"]:
        raise IllegalAction(f"the top of space {space} already holds 6 wizards", "R-SPELL-12")
    p.wiz = wiz[:wi] + (code,) + wiz[wi + 1 :]
    ev.append(_ev("wizard_freed", {"wizard": a.wizard, "space": space, "tier": h}))
    return -1


def _piggyback(
    st: GameState,
    a: Cast,
    seat: int,
    potions: tuple[tuple[int, int, int], ...],
    casts: tuple[tuple[int, str, int, int], ...],
    ev: list[Event],
) -> tuple[GameState, list[Event]]:
    """R-SPELL-11: the current player's wizard move carries the caster's wizard along."""
    tb = st.table
    m = a.then
    if not isinstance(m, MoveWizard):
        raise IllegalAction("piggyback rides on the current player's wizard move", "R-SPELL-11")
    cur = _card_turn(st, m.player)
    kidx = _card_kind(st, cur, m.card, "wizard", m.steps, m.rolls)
    wi = tb.wizard_index.get(m.wizard)
    if wi is None:
        raise IllegalAction(f"there is no wizard {m.wizard!r} in this game", "R-SETUP-2")
    wiz = st.wizards
    ctrl = _controlled(tb, wiz, cur)
    if tb.wizard_owner[wi] != ctrl:
        raise IllegalAction(f"a wizard card moves only {tb.colours[ctrl]}'s wizards", "R-CARD-1")
    ri = tb.wizard_index.get(a.rider) if isinstance(a.rider, str) else None
    if ri is None or tb.wizard_owner[ri] != seat:
        raise IllegalAction(f"the rider must be one of {a.player}'s wizards", "R-SPELL-11")
    if ri == wi:
        raise IllegalAction("the rider must be another wizard", "R-SPELL-11")
    if wiz[ri] != wiz[wi] or wiz[ri] == 0:
        raise IllegalAction(f"{a.rider} is not on the same top surface as {m.wizard}", "R-SPELL-11")
    _dice_event(m.card, m.rolls, ev)
    st2 = make_state(
        tb,
        st.stacks,
        wiz,
        st.castle,
        potions,
        st.turn._replace(casts=casts),
        st.game,
        st.cards,
        st.modules,
    )
    p = Pieces(tb, st.stacks, wiz, st.castle, potions, ev)
    entered = board.wizard_move(p, wi, m.steps, ri)
    turn, cards, game = _play_card(st2, cur, kidx, ev, entered)
    if entered:
        game = _end_check(tb, p.wiz, potions, game, turn, ev)
    return make_state(tb, st.stacks, p.wiz, p.castle, potions, turn, game, cards, st.modules), ev


# --------------------------------------------------------------------------------------------
# Team helpers (R-TEAM)


def _team_turn(st: GameState, player: str, other: str) -> tuple[int, int]:
    tb = st.table
    if not tb.config.teams:
        raise IllegalAction("only in the team variant", "R-TEAM-1")
    seat = _seat(tb, player)
    to = _seat(tb, other)
    if tb.partner[seat] != to:
        raise IllegalAction(f"{other} is not {player}'s partner", "R-TEAM-1")
    return seat, to


def _apply_give_potion(st: GameState, a: GivePotion) -> tuple[GameState, list[Event]]:
    seat, to = _team_turn(st, a.player, a.to)
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


def _apply_exchange(st: GameState, a: ExchangeCards) -> tuple[GameState, list[Event]]:
    seat, partner = _team_turn(st, a.player, a.partner)
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


_HANDLERS: dict[type, Callable[[GameState, Any], tuple[GameState, list[Event]]]] = {
    MoveWizard: _apply_move_wizard,
    MoveTower: _apply_move_tower,
    DiscardCard: _apply_discard,
    Redraw: _apply_redraw,
    Cast: _apply_cast,
    EndTurn: _apply_end_turn,
    GivePotion: _apply_give_potion,
    ExchangeCards: _apply_exchange,
}


# --------------------------------------------------------------------------------------------
# Legal actions (lazy)


def _representative(side: str, steps: int) -> tuple[Any, tuple[int, ...]]:
    """A card that moves ``side`` exactly ``steps`` (hands unknown): the single-type value card
    for 1-5, the 1-die card rolled 6 for 6."""
    if steps <= 5:
        card = CARD_KINDS[steps - 1] if side == "wizard" else CARD_KINDS[4 + steps]
        return card, ()
    return _DIE1, (6,)


_DIE1 = next(c for c in CARD_KINDS if c.dice == 1)


def _wizard_targets(st: GameState, seat: int, steps: int) -> Iterator[int]:
    """Controlled visible wizards that can legally move ``steps`` (R-CARD-1, R-WIZ-*)."""
    tb = st.table
    ctrl = _controlled(tb, st.wizards, seat)
    lo, hi = tb.wiz_range[ctrl]
    wiz = st.wizards
    stacks = st.stacks
    length = tb.length
    castle = st.castle
    for i in range(lo, hi):
        p = wiz[i]
        if not p:
            continue
        s = p >> 4
        if p & 15 != len(stacks[s - 1]):
            continue
        dest = (s - 1 + steps) % length + 1
        if dest == castle or wiz.count(dest << 4 | len(stacks[dest - 1])) < 6:
            yield i


def _tower_targets(st: GameState, steps: int) -> Iterator[tuple[int, int]]:
    """(space, tier) of every tower that can legally move ``steps`` (R-TOWER-*)."""
    length = st.table.length
    castle = st.castle
    for s0, stack in enumerate(st.stacks):
        if not stack:
            continue
        s = s0 + 1
        dest = (s0 + steps) % length + 1
        if dest == castle and castle != s:
            continue
        for k in range(1, len(stack) + 1):
            yield s, k


def _card_moves(
    st: GameState, seat: int, card: Any, rolls_for: int | None
) -> Iterator[MoveWizard | MoveTower]:
    """Every move of ``card`` (die cards: every final roll 1-6, given as a single roll)."""
    tb = st.table
    colour = tb.colours[seat]
    ids = tb.wizard_ids
    for side in ("wizard", "tower"):
        if not card.has_side(side):
            continue
        values: list[tuple[int, tuple[int, ...]]]
        if card.dice:
            values = [(v, (v,)) for v in range(1, 7)]
        else:
            v = card.wizard if side == "wizard" else card.tower
            values = [(v, ())]
        for steps, rolls in values:
            if side == "wizard":
                for i in _wizard_targets(st, seat, steps):
                    yield fast_move_wizard(colour, ids[i], steps, card, rolls)
            else:
                for s, k in _tower_targets(st, steps):
                    yield fast_move_tower(colour, s, k, steps, card, rolls)


def _generate(st: GameState, every_card: bool) -> Iterator[Action]:
    if st.modules is not None:
        yield from _x.generate(st, every_card)
        return
    if st.game.over:
        return
    tb = st.table
    t = st.turn
    seat = t.player
    colour = tb.colours[seat]
    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    if can_play:
        cards = st.cards
        if cards is not None:
            for k in sorted(set(cards.hands[seat])):
                yield from _card_moves(st, seat, CARD_KINDS[k], None)
            second = t.cards_used >= 1 and tb.config.options["discard_playable_second_card"]
            for k in sorted(set(cards.hands[seat])):
                if second or not card_playable(st, seat, CARD_KINDS[k]):
                    yield DiscardCard(colour, CARD_KINDS[k])
        elif every_card:
            for card in CARD_KINDS:
                yield from _card_moves(st, seat, card, None)
            yield DiscardCard(colour, None)
        else:
            ids = tb.wizard_ids
            for steps in range(1, 7):
                card, rolls = _representative("wizard", steps)
                for i in _wizard_targets(st, seat, steps):
                    yield fast_move_wizard(colour, ids[i], steps, card, rolls)
            for steps in range(1, 7):
                card, rolls = _representative("tower", steps)
                for s, k in _tower_targets(st, steps):
                    yield fast_move_tower(colour, s, k, steps, card, rolls)
            yield DiscardCard(colour, None)
        if t.cards_used == 0 and not tb.solo:
            if tb.config.options["redraw_push_optional"]:
                yield Redraw(colour, None)
            for s, k in _tower_targets(st, 1):
                yield Redraw(colour, (s, k))
    yield from _cast_actions(st, every_card)
    yield from closing_actions(st, can_play)


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
    if _end_turn_allowed(st) is None:
        yield EndTurn()


def _cast_actions(st: GameState, every_card: bool) -> Iterator[Action]:
    tb = st.table
    ids = tb.wizard_ids
    wiz = st.wizards
    stacks = st.stacks
    order = [(st.turn.player + i) % tb.n for i in range(tb.n)]
    for seat in order:
        colour = tb.colours[seat]
        full = st.potions[seat][0]
        for spell in tb.spells:
            if full < tb.config.spell_costs[spell]:
                continue
            if cast_timing_problem(st, seat, spell) is not None:
                continue
            if spell in ("advance_wizard", "headwind_wizard"):
                step = 1 if spell == "advance_wizard" else -1
                for i, p in enumerate(wiz):
                    if not p or p & 15 != len(stacks[(p >> 4) - 1]):
                        continue
                    dest = board.dest_space(tb.length, p >> 4, step)
                    if dest == st.castle or wiz.count(dest << 4 | len(stacks[dest - 1])) < 6:
                        yield Cast(colour, spell, wizard=ids[i])
            elif spell in ("advance_tower", "headwind_tower"):
                step = 2 if spell == "advance_tower" else -2
                for s, k in _tower_targets(st, step):
                    yield Cast(colour, spell, space=s, tier=k)
            elif spell == "swap_tower":
                spaces = [s + 1 for s, stk in enumerate(stacks) if stk and s + 1 != st.castle]
                if tb.config.options["swap_any_distance"]:
                    for x in spaces:
                        for y in spaces:
                            if x < y:
                                yield Cast(colour, spell, a=x, b=y)
                else:
                    for x in spaces:
                        y = board.dest_space(tb.length, x, 2)
                        if y in spaces:
                            yield Cast(colour, spell, a=x, b=y)
            elif spell == "move_castle":
                yield Cast(colour, spell, direction="cw")
                yield Cast(colour, spell, direction="ccw")
            elif spell == "free_wizard":
                allowed = tb.team_of(seat)
                for s0, stk in enumerate(stacks):
                    s = s0 + 1
                    top_full = wiz.count(s << 4 | len(stk)) >= 6 and s != st.castle
                    for k in range(1, len(stk) + 1):
                        under = s << 4 | (k - 1)
                        found = False
                        for i, p in enumerate(wiz):
                            if p == under and tb.wizard_owner[i] in allowed:
                                found = True
                                if not top_full:
                                    yield Cast(colour, spell, space=s, tier=k, wizard=ids[i])
                        if not found:
                            yield Cast(colour, spell, space=s, tier=k)
            elif spell == "piggyback":
                yield from _piggyback_actions(st, seat, every_card)


def _piggyback_actions(st: GameState, seat: int, every_card: bool) -> Iterator[Cast]:
    tb = st.table
    t = st.turn
    if t.ended or t.redrawn or t.cards_used >= tb.actions_per_turn + t.extra_card:
        return
    cur = t.player
    colour = tb.colours[seat]
    wiz = st.wizards
    lo, hi = tb.wiz_range[seat]
    riders_at: dict[int, list[int]] = {}
    for i in range(lo, hi):
        p = wiz[i]
        if p and p & 15 == len(st.stacks[(p >> 4) - 1]):
            riders_at.setdefault(p, []).append(i)
    if not riders_at:
        return
    moves: list[MoveWizard] = []
    if st.cards is not None:
        for k in sorted(set(st.cards.hands[cur])):
            card = CARD_KINDS[k]
            if card.has_side("wizard"):
                moves += [m for m in _card_moves(st, cur, card, None) if isinstance(m, MoveWizard)]
    elif every_card:
        for card in CARD_KINDS:
            if card.has_side("wizard"):
                moves += [m for m in _card_moves(st, cur, card, None) if isinstance(m, MoveWizard)]
    else:
        for steps in range(1, 7):
            card, rolls = _representative("wizard", steps)
            for i in _wizard_targets(st, cur, steps):
                moves.append(MoveWizard(tb.colours[cur], tb.wizard_ids[i], steps, card, rolls))
    ids = tb.wizard_ids
    for m in moves:
        wi = tb.wizard_index[m.wizard]
        p = wiz[wi]
        for ri in riders_at.get(p, ()):
            if ri == wi:
                continue
            dest = board.dest_space(tb.length, p >> 4, m.steps)
            if dest != st.castle:
                need = 2 if tb.config.options["piggyback_both_count"] else 1
                if wiz.count(dest << 4 | len(st.stacks[dest - 1])) + need > 6:
                    continue
            yield Cast(colour, "piggyback", rider=ids[ri], then=m)


class LegalActions:
    """A lazy view of the legal actions of a state (python-chess ``board.legal_moves`` style).

    Iterate it, test ``action in legal``, ``legal.count()``. Card moves depend on the hands:

    * hands known (``state.cards``): every card of the current hand; a die card is listed once
      per final roll 1-6 (``rolls=(v,)``);
    * hands unknown, ``every_card=False`` (default, the tracker's cheap form): one action per
      target and number of steps 1-6, with a representative card (value card 1-5, the 1-die
      card rolled 6);
    * hands unknown, ``every_card=True``: every card face of the deck.

    ``in`` checks legality with :func:`apply` (any card form, any legal rolls), so it also
    accepts actions the enumeration lists with another representative card.
    """

    __slots__ = ("state", "every_card")

    def __init__(self, state: GameState, every_card: bool = False) -> None:
        self.state = state
        self.every_card = every_card

    def __iter__(self) -> Iterator[Action]:
        return _generate(self.state, self.every_card)

    def __contains__(self, action: object) -> bool:
        if type(action) not in _HANDLERS:
            return False
        return is_legal(self.state, action)  # type: ignore[arg-type]

    def count(self) -> int:
        """Number of actions the enumeration yields."""
        return sum(1 for _ in _generate(self.state, self.every_card))

    def __bool__(self) -> bool:
        return any(True for _ in _generate(self.state, self.every_card))

    def __repr__(self) -> str:
        return f"<LegalActions of {self.state!r}>"


def legal_actions(state: GameState, every_card: bool = False) -> LegalActions:
    """The lazy :class:`LegalActions` view of ``state``."""
    return LegalActions(state, every_card)


def actions_for_card(
    state: GameState, card: Any, rolls: tuple[int, ...] = ()
) -> list[MoveWizard | MoveTower]:
    """Legal moves of the current player with ``card`` and, for a die card, the given rolls
    (the last one is used; R-CARD-4). Used by bots after rolling."""
    if state.modules is not None:
        return _x.actions_for_card(state, card, rolls)
    seat = state.turn.player
    out: list[MoveWizard | MoveTower] = []
    for m in _card_moves(state, seat, card, None):
        if card.dice:
            if m.steps != rolls[-1]:
                continue
            m = (
                MoveWizard(m.player, m.wizard, m.steps, m.card, rolls)
                if isinstance(m, MoveWizard)
                else MoveTower(m.player, m.space, m.tier, m.steps, m.card, rolls)
            )
        out.append(m)
    return out


from companion.rules import expansion as _x  # noqa: E402 - the module engine uses this one
