"""Seeded bot players: a random-legal one and a greedy one, and a game driver.

Bots play like people at the table: they pick a card from their hand, roll the die for a die
card (rerolling within R-CARD-4's limits), then choose a target; with no playable card they
discard or redraw (R-TURN-3/5). Each bot owns a ``random.Random(seed)``; the global random
module is never used, so a seeded game is reproducible move for move.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    Feather,
    MoveTower,
    MoveWizard,
    Redraw,
)
from companion.rules.engine import (
    actions_for_card,
    apply,
    is_legal,
    legal_actions,
    setup,
)
from companion.rules.model import (
    CARD_KINDS,
    DECK,
    Card,
    Config,
    GameState,
    space_of,
    tier_of,
)

_WEIGHTS = [n for _, n in DECK]


def _hand(state: GameState, rng: random.Random) -> list[Card]:
    """The current player's cards; with unknown hands, 3 cards drawn at random from the deck."""
    if state.cards is not None:
        return [CARD_KINDS[k] for k in state.cards.hands[state.turn.player]]
    return rng.choices(CARD_KINDS, weights=_WEIGHTS, k=3)


def _can_play(state: GameState) -> bool:
    t = state.turn
    tb = state.table
    return not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card


class Bot:
    """Base class: ``choose(state)`` returns the current player's next action.

    :param seed: seeds the bot's own ``random.Random``.
    :param spell_rate: chance (0..1) to look at spells before a card action.
    """

    name = "bot"

    def __init__(self, seed: int = 0, spell_rate: float = 0.15) -> None:
        self.rng = random.Random(seed)
        self.spell_rate = spell_rate

    # -- hooks for subclasses ----------------------------------------------------------------

    def pick(self, state: GameState, options: list[Action]) -> Action:
        """Choose one of ``options`` (non-empty)."""
        return self.rng.choice(options)

    def keep_roll(self, state: GameState, card: Card, rolls: tuple[int, ...]) -> bool:
        """Whether to keep the current die result (a reroll is possible)."""
        return self.rng.random() < 0.6

    def owes_a_spell(self, state: GameState, seat: int) -> bool:
        """Whether ``seat`` has paid for a spell it has not cast yet, so it casts before
        anything else (the random bot never plans: False)."""
        return False

    def spell_options(self, state: GameState, options: list[Action], owed: bool) -> list[Action]:
        """The spells and feather uses this bot considers now, of the legal ``options``."""
        return options

    # -- the turn ------------------------------------------------------------------------------

    def choose(self, state: GameState) -> Action:
        """The next action of the current player (a card action, spell, redraw or end turn).

        :raises ValueError: the game is over.
        """
        if state.game.over:
            raise ValueError("the game is over")
        seat = state.turn.player
        colour = state.table.colours[seat]
        owed = self.owes_a_spell(state, seat)
        if owed or self.rng.random() < self.spell_rate:
            casts = self.spell_options(
                state,
                [
                    a
                    for a in legal_actions(state)
                    if isinstance(a, Cast | Feather)
                    and a.player == colour
                    and not (isinstance(a, Cast) and a.spell == "free_wizard" and a.wizard is None)
                ],
                owed,
            )
            if casts:
                return self.pick(state, list(casts))
        if not _can_play(state):
            return EndTurn()
        hand = _hand(state, self.rng)
        order = list(range(len(hand)))
        self.rng.shuffle(order)
        tried: list[tuple[Card, tuple[int, ...]]] = []
        for i in order:
            card = hand[i]
            moves, rolls = self._moves_for(state, card)
            if moves:
                return self.pick(state, list(moves))
            tried.append((card, rolls))
        # nothing playable: redraw (first action) or discard without effect (R-TURN-3/5)
        if state.turn.cards_used == 0 and not state.table.solo:
            pushes = [a for a in legal_actions(state) if isinstance(a, Redraw)]
            if pushes:
                return self.pick(state, list(pushes))
        for card, rolls in tried:
            known = state.cards is not None
            a = DiscardCard(colour, card if known else None, rolls if known else ())
            if is_legal(state, a):
                return a
        return EndTurn()

    def _moves_for(
        self, state: GameState, card: Card
    ) -> tuple[list[MoveWizard | MoveTower], tuple[int, ...]]:
        if not card.dice:
            return actions_for_card(state, card), ()
        rolls: tuple[int, ...] = ()
        while True:
            rolls = rolls + (self.rng.randint(1, 6),)
            if len(rolls) >= card.dice or self.keep_roll(state, card, rolls):
                return actions_for_card(state, card, rolls), rolls


class RandomBot(Bot):
    """Plays a uniformly random legal move of a randomly chosen card."""

    name = "random"


class GreedyBot(Bot):
    """Picks the move whose resulting position scores best for its own side (wizards in the
    castle, filled potions, wizards close to the castle, opponents trapped), ties at random."""

    name = "greedy"

    def __init__(self, seed: int = 0, spell_rate: float = 0.3) -> None:
        super().__init__(seed, spell_rate)

    # Feathers (R-MOD-RAVEN-6) are spent the way a player who means to use them spends them:
    # the 3rd card's feather once two cards are played and the turn goes on, the free spell's
    # feathers only when a spell can then be cast, and that spell is cast at once. Paid-for
    # but unused, a feather leaves no trace on the board (nothing a camera or a tracker could
    # tell), and a player wanting the most of a turn does not do it.

    def owes_a_spell(self, state: GameState, seat: int) -> bool:
        m = state.modules
        return m is not None and (seat, "feather") in m.free_casts

    def spell_options(self, state: GameState, options: list[Action], owed: bool) -> list[Action]:
        if owed:
            return [a for a in options if isinstance(a, Cast) and a.free]
        t = state.turn
        out: list[Action] = []
        for a in options:
            if isinstance(a, Feather) and a.use == "extra_card":
                if t.cards_used < state.table.actions_per_turn:
                    continue
            elif isinstance(a, Feather) and a.use == "free_spell":
                after, _ = apply(state, a)
                if not any(isinstance(c, Cast) and c.free for c in legal_actions(after)):
                    continue
            out.append(a)
        return out

    def keep_roll(self, state: GameState, card: Card, rolls: tuple[int, ...]) -> bool:
        moves = actions_for_card(state, card, rolls)
        if not moves:
            return False
        return self._best_gain(state, moves) > 0.5

    def pick(self, state: GameState, options: list[Action]) -> Action:
        base = score(state, state.turn.player)
        best: list[Action] = []
        best_v = float("-inf")
        for a in options:
            try:
                nxt, _ = apply(state, a)
            except ValueError:
                continue
            v = score(nxt, state.turn.player) - base
            if isinstance(a, Cast):
                v -= 0.2  # keep potions unless the spell really helps
            if v > best_v + 1e-9:
                best, best_v = [a], v
            elif abs(v - best_v) <= 1e-9:
                best.append(a)
        return self.rng.choice(best or options)

    def _best_gain(self, state: GameState, moves: list[MoveWizard | MoveTower]) -> float:
        base = score(state, state.turn.player)
        return max(score(apply(state, m)[0], state.turn.player) - base for m in moves)


def score(state: GameState, seat: int) -> float:
    """Heuristic value of ``state`` for ``seat`` (team: for the team): higher is better."""
    tb = state.table
    mine = set(tb.team_of(seat))
    length = tb.length
    castle = state.castle
    total = 0.0
    for i, p in enumerate(state.wizards):
        own = tb.wizard_owner[i] in mine
        if p == 0:
            v = 12.0
        else:
            s, t = space_of(p), tier_of(p)
            dist = (castle - s) % length
            v = 6.0 - dist * 0.3
            if t < len(state.stacks[s - 1]):
                v -= 3.0
        total += v if own else -v / max(1, tb.n - len(mine))
    for s in mine:
        f, e, sp = state.potions[s]
        total += 4.0 * (f + sp) + 0.5 * f
    if state.game.over and state.game.result is not None:
        total += 100.0 if seat in state.game.result.winners else -100.0
    return total


BOTS: dict[str, Callable[[int], Bot]] = {"random": RandomBot, "greedy": GreedyBot}


@dataclass(frozen=True, slots=True)
class Step:
    """One applied action of a driven game: the action, its events, the state after it."""

    action: Action
    events: list[Event]
    state: GameState


def play(
    config: Config,
    seed: int,
    bots: str | list[Bot] = "random",
    max_actions: int = 20000,
    pages: frozenset[str] | None = None,
    guess_right: float = 0.8,
) -> Iterator[Step]:
    """Drive a whole seeded game; yields every applied action.

    :param bots: a bot kind name for every seat, or one :class:`Bot` per seat.
    :param max_actions: safety limit (a game stops early after so many actions).
    :param pages: with the witch module, the card codes that show the page symbol (OPEN-12
        stand-in); None = :func:`~companion.rules.expansion.page_cards` ``(seed)``, a seeded
        sixth of the deck.
    :param guess_right: chance that a player releasing the sealed witch lifts the right tower
        (R-MOD-WITCH-9); otherwise a random tower.
    """
    state = setup(config, seed)
    if isinstance(bots, str):
        players = [BOTS[bots](seed * 7 + i + 1) for i in range(config.player_count)]
    else:
        players = bots
    witch = "witch" in config.modules
    if witch and pages is None:
        from companion.rules.expansion import page_cards

        pages = page_cards(seed)
    table_rng = random.Random(f"table/{seed}")
    for _ in range(max_actions):
        if state.game.over:
            return
        action = players[state.turn.player].choose(state)
        if witch and pages:
            action = _mark_page(state, action, pages, table_rng, guess_right)
        state, events = apply(state, action)
        yield Step(action, events, state)


def _mark_page(
    state: GameState, action: Action, pages: frozenset[str], rng: random.Random, right: float
) -> Action:
    """Mark a played page card (R-MOD-WITCH-2) and, with the witch sealed, name the tower the
    player lifts to release her (R-MOD-WITCH-9)."""
    if not isinstance(action, MoveWizard | MoveTower | DiscardCard):
        return action
    card = action.card
    if card is None or card.code not in pages:
        return action
    m = state.modules
    assert m is not None and m.witch is not None
    space, tier = space_of(m.witch), tier_of(m.witch)
    guess = None
    if tier < len(state.stacks[space - 1]):
        guess = (space, tier + 1)
        if rng.random() >= right:
            towers = [
                (s0 + 1, k) for s0, stk in enumerate(state.stacks) for k in range(1, len(stk) + 1)
            ]
            guess = rng.choice(towers)
    return replace(action, page=True, witch_guess=guess)
