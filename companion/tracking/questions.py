"""Questions for the players, when the camera cannot tell hidden things apart and the difference
is about to matter: which tower was lifted, how many potions, whose turn. :func:`pick_question`
finds the question the belief needs (if any: most differences are held until a later frame
settles them), worded for players with at most :data:`CHOICES` options, one per group of
hypotheses; :func:`answer_key` tells what an answer says about the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from companion.rules.actions import Action, Cast, DiscardCard, EndTurn, MoveTower
from companion.rules.model import GameState
from companion.tracking.belief import (
    Hypothesis,
    Key,
    board_key,
    near_stories,
    same_seen,
    seen_key,
    trapped_places,
)
from companion.tracking.options import TrackerOptions
from companion.tracking.words import count_of, describe, ordinal

Groups = tuple[tuple[Hypothesis, ...], ...]
"""The hypotheses each option of a question stands for, option by option."""

QUESTION_KINDS = (
    "held-board",
    "held-potions",
    "held-turn",
    "potions-end",
    "potions-many",
    "hidden",
)
"""Why a question is asked (:func:`pick_question`): held stories that disagree on the board
(hidden pieces), on one player's potions or on whose turn, at the belief's limit or the end of
the game (:func:`lag_question`); potions at the end of the game or grown past their limit
(:func:`potions_question`); rivals about as likely that differ in hidden pieces at the end."""


@dataclass(frozen=True, slots=True)
class Question:
    """A question for the players (phones, LED) when the camera cannot tell hidden things apart.

    :param id: ``q1``, ``q2`` … (answer with this id).
    :param text: worded for players, e.g. "From space 7, did you move the top tower or the top
        two?".
    :param options: one answer text per option; answer with the option's index.
    :param kind: why it is asked (:data:`QUESTION_KINDS`); not part of the JSON the pages get.
    """

    id: str
    text: str
    options: tuple[str, ...]
    kind: str = "hidden"

    def to_json(self) -> dict[str, Any]:
        """``{"id": "q1", "text": …, "options": […]}``."""
        return {"id": self.id, "text": self.text, "options": list(self.options)}


def _potions_of(seat: int) -> Callable[[GameState], object]:
    """A state's full and empty potions of ``seat`` (what the players can count, R-POTION-1)."""
    return lambda st: st.potions[seat][:2]


Picked = tuple[str, tuple[str, ...], Groups, str]
"""A question to put: its text, options, the hypotheses of each option and its kind
(:data:`QUESTION_KINDS`)."""


def lag_question(near: Sequence[Hypothesis], root: GameState) -> Picked | None:
    """The question that splits ``near`` (held hypotheses) by what the players can see on the
    table now: the hidden pieces (asked like :func:`board_question`), else one player's
    potions (full and empty tokens, R-POTION-1), else whose turn it is. None when they agree
    on all but the potions: those are committed as alternatives and asked only when they
    matter (:func:`potions_question`)."""
    if len(near) < 2 or same_seen(near):
        return None

    def split(key: Callable[[GameState], object]) -> list[list[Hypothesis]]:
        groups: dict[object, list[Hypothesis]] = {}
        for h in near:
            groups.setdefault(key(h.state), []).append(h)
        return sorted(groups.values(), key=lambda g: min(x.cost for x in g))

    by_board = split(board_key)
    if len(by_board) > 1:
        text, options = board_question(by_board, root)
        offered = _offered(by_board, options)
        if offered is not None:
            return text, *offered, "held-board"
    tb = near[0].state.table
    for seat, colour in enumerate(tb.colours):
        by_pot = split(_potions_of(seat))
        if len(by_pot) > 1:
            options = tuple(
                f"{count_of(g[0].state.potions[seat][0], 'full potion')} and "
                f"{g[0].state.potions[seat][1]} empty"
                for g in by_pot
            )
            capped, grouped = _capped(by_pot, options)
            return (
                f"How many full potions does {colour} have now?",
                capped,
                grouped,
                "held-potions",
            )
    by_turn = split(lambda st: st.turn.player)
    if len(by_turn) > 1:
        seats = tuple(tb.colours[g[0].state.turn.player] for g in by_turn)
        capped, grouped = _capped(by_turn, seats)
        return "Whose turn is it now?", capped, grouped, "held-turn"
    return None


def answer_key(
    groups: Sequence[Sequence[Hypothesis]],
) -> Callable[[GameState], object] | None:
    """What a question's options differ in (the first of the board, one player's potions, all
    potions, whose turn that no two options share), or None."""
    if not groups or not groups[0]:
        return None

    seats = range(len(groups[0][0].state.table.colours))
    keys: list[Callable[[GameState], object]] = [board_key]
    keys += [_potions_of(seat) for seat in seats]
    keys += [lambda st: st.potions, lambda st: st.turn.player]
    for key in keys:
        sets = [{key(h.state) for h in g} for g in groups]
        if all(not (a & b) for i, a in enumerate(sets) for b in sets[i + 1 :]):
            return key
    return None


def _first_difference(groups: Sequence[Sequence[Hypothesis]]) -> int:
    """The first step at which the groups' first hypotheses disagree about the board (their
    last common step when they never do)."""
    reps = [g[0] for g in groups]
    n = min(len(h.trail) for h in reps)
    for i in range(n):
        k = {board_key(h.trail[i].state) for h in reps}
        if len(k) > 1:
            return i
    return max(0, n - 1)


def board_question(
    groups: Sequence[Sequence[Hypothesis]], root: GameState
) -> tuple[str, tuple[str, ...]]:
    """The question (text, one option per group) that asks which of the groups' moves happened,
    from the first step where their boards differ (``root``: the state before their trails).
    Which tower of a stack was moved, or lifted to free a wizard (R-SPELL-12), gets the classic
    wording; other moves are told in players' words (:func:`describe`)."""
    i = _first_difference(groups)
    reps = [g[0] for g in groups]
    options: list[str] = []
    firsts: list[Action | None] = []
    for h in reps:
        before = h.trail[i - 1].state if i > 0 else root
        acts = h.trail[i].actions if h.trail else ()
        shown = [a for a in acts if not isinstance(a, (EndTurn, DiscardCard))]
        states = [before] + list(h.trail[i].states[:-1]) if h.trail else [before]
        vis_states = [
            s
            for a, s in zip(acts, states, strict=False)
            if not isinstance(a, (EndTurn, DiscardCard))
        ]
        if shown:
            options.append(
                "; then ".join(describe(a, s) for a, s in zip(shown, vis_states, strict=False))
            )
            firsts.append(shown[0])
        else:
            options.append("nothing moved")
            firsts.append(None)
    # the classic cases get the classic wording
    if all(isinstance(a, MoveTower) for a in firsts):
        towers = [a for a in firsts if isinstance(a, MoveTower)]
        if len({a.space for a in towers}) == 1 and len({a.tier for a in towers}) == len(towers):
            s = towers[0].space
            before = reps[0].trail[i - 1].state if i > 0 else root
            height = before.height(s)
            parts = []
            for a in towers:
                n = height - a.tier + 1
                parts.append("the top tower" if n == 1 else f"the top {_word(n)}")
            text = f"From space {s}, did you move " + " or ".join(parts) + "?"
            return text, tuple(options)
    if all(isinstance(a, Cast) and a.spell == "free_wizard" for a in firsts):
        casts = [a for a in firsts if isinstance(a, Cast)]
        text = (
            f"Which tower did {casts[0].player} lift on space {casts[0].space} to free the wizard?"
        )
        return text, tuple(f"the {ordinal(a.tier or 0)} tower from the bottom" for a in casts)
    if len(set(options)) < len(options):
        # the same moves to boards that differ in hidden pieces only (a belief re-anchored on
        # the camera's board, companion.tracking.anchor; a spell's path the frames did not
        # show): asked as what is under the towers
        return _hidden_words(reps)
    return "The camera can't tell which of these happened. Which one was it?", tuple(options)


def _hidden_words(reps: Sequence[Hypothesis]) -> tuple[str, tuple[str, ...]]:
    """The question about hidden pieces only and one option per hypothesis: what lies under the
    tops where ``reps`` disagree. The trapped wizards of the colours they place differently
    ("blue: space 8 tier 1", "blue: none trapped"), the kinds of the towers under the top of a
    stack they stack differently (a magic tower lower down, R-MOD-MAGICTOWER-1), a sealed
    witch (R-MOD-WITCH-7) and the raven (R-MOD-RAVEN-1)."""
    tb = reps[0].state.table
    seats = [
        seat
        for seat in range(len(tb.colours))
        if len({trapped_places(h.state, seat) for h in reps}) > 1
    ]
    spaces = [
        i + 1
        for i in range(len(reps[0].state.stacks))
        if len({_kinds(h.state, i) for h in reps}) > 1
    ]
    mods = [h.state.modules for h in reps]
    witch = len({m.witch if m is not None else None for m in mods}) > 1
    raven = len({m.raven if m is not None else None for m in mods}) > 1
    out: list[str] = []
    for h in reps:
        parts = []
        for seat in seats:
            where = trapped_places(h.state, seat)
            spots = ", ".join(f"space {s} tier {t}" for s, t in where) or "none trapped"
            parts.append(f"{tb.colours[seat]}: {spots}")
        for s in spaces:
            parts.append(f"space {s} from the bottom: " + ", ".join(_kinds(h.state, s - 1)))
        m = h.state.modules
        if witch:
            parts.append("witch: " + _place(m.witch if m is not None else None))
        if raven:
            parts.append("raven: " + _place(m.raven if m is not None else None))
        out.append("; ".join(parts) or "as shown")
    text = "Where are the trapped wizards now?"
    if spaces or witch or raven:
        text = "What is under the towers now?"
    return text, tuple(out)


def _kinds(st: GameState, index: int) -> tuple[str, ...]:
    """The roof kinds of the towers of the stack at ``index`` (space - 1), bottom to top."""
    towers = st.table.towers
    return tuple(towers[t].kind for t in st.stacks[index])


def _place(pos: int | None) -> str:
    """A piece's position (``space << 4 | tier``) in players' words."""
    if pos is None:
        return "off the board"
    return f"space {pos >> 4} tier {pos & 15}"


def distinct(
    groups: Sequence[Sequence[Hypothesis]], options: Sequence[str]
) -> tuple[list[list[Hypothesis]], list[str]]:
    """The groups whose options read alike merged into the first of them (in order): players
    cannot choose between two options worded the same, so such a question offers one. Fewer
    than two groups back: there is nothing the players could tell apart."""
    merged: dict[str, list[Hypothesis]] = {}
    for g, o in zip(groups, options, strict=True):
        merged.setdefault(o, []).extend(g)
    return list(merged.values()), list(merged)


def _word(n: int) -> str:
    """``two``, ``three``, ``four``; other numbers in digits."""
    return {2: "two", 3: "three", 4: "four"}.get(n, str(n))


def _offered(
    groups: Sequence[Sequence[Hypothesis]], options: Sequence[str]
) -> tuple[tuple[str, ...], Groups] | None:
    """The options to offer for ``groups`` (best first, one option each): those worded alike
    merged (:func:`distinct`), at most :data:`CHOICES` (:func:`_capped`); None when fewer than
    two are left (nothing the players could tell apart: no question)."""
    alike, words = distinct(groups, options)
    return _capped(alike, words) if len(alike) > 1 else None


def _capped(
    groups: Sequence[Sequence[Hypothesis]], options: Sequence[str]
) -> tuple[tuple[str, ...], Groups]:
    """At most :data:`CHOICES` options: the least likely groups (``groups`` best
    first) share the last option, so the true story is never left out of a question."""
    if len(groups) <= CHOICES:
        return tuple(options), tuple(tuple(g) for g in groups)
    cut = CHOICES - 1
    rest = tuple(h for g in groups[cut:] for h in g)
    return (
        tuple(options[:cut]) + ("something else: " + " or ".join(options[cut:]),),
        tuple(tuple(g) for g in groups[:cut]) + (rest,),
    )


CHOICES = 3
"""A question offers at most this many options (docs/architecture.md, "The tracker")."""


def held_boards(hyps: Sequence[Hypothesis], margin: float) -> int:
    """How many boards (:func:`board_key`: hidden pieces included) the stories within ``margin``
    of the best (``hyps`` best first) hold."""
    return len({board_key(h.state) for h in hyps if h.cost - hyps[0].cost <= margin})


def pick_question(
    hyps: Sequence[Hypothesis], root: GameState, opts: TrackerOptions
) -> Picked | None:
    """The question to ask now (text, options, the hypotheses of each option, kind), or None.

    Stories that explain the frames about equally well and differ in what the camera cannot
    see (hidden pieces, a card or a spell) are kept together, not asked about: a lifted tower,
    a later move only one story allows, a spell's cost or the DONE button decides most of
    them. The players are asked only when the difference is about to matter:

    * the game is over (who won, R-END-3): what the stories within ``commit_margin`` still
      disagree on (:func:`lag_question`), the potions (:func:`potions_question`), hidden
      pieces of rivals within ``ask_margin``;
    * the belief would grow past its limit: stories held for more than ``max_hold`` steps
      (:func:`lag_question`), more than ``hold_boards`` boards within ``commit_margin``, a
      player's potion counts past their limit (:func:`potions_question`).

    At most :data:`CHOICES` options. ``hyps`` any order. Without ``opts.defer`` the
    players are asked as soon as the stories differ (:func:`_ask_soon`).
    """
    if not opts.defer:
        return _ask_soon(hyps, root, opts)
    hyps = sorted(hyps, key=lambda h: h.cost)
    over = hyps[0].state.game.over
    held = min(len(h.trail) for h in hyps)
    near = near_stories(hyps, opts.commit_margin)
    full = held > opts.max_hold or held_boards(near, opts.commit_margin) > opts.hold_boards
    if opts.lag_questions and (over or full) and held > 0:
        # what the camera cannot tell, asked about the table as it is now (never taken from
        # the best's cost, :func:`~companion.tracking.commit.commit`)
        lag = lag_question(near, root)
        if lag is not None:
            return lag
    pots = potions_question(hyps, combos=True, winners=True, stories=opts.potion_stories)
    if pots is not None:
        return (*pots, "potions-end" if over else "potions-many")
    if not over:
        return None
    close = [h for h in hyps if h.cost - hyps[0].cost <= opts.ask_margin]
    ordered = _by_board(close)
    if ordered is None:
        return None
    text, options = board_question(ordered, root)
    offered = _offered(ordered, options)
    return None if offered is None else (text, *offered, "hidden")


def _by_board(close: Sequence[Hypothesis]) -> list[list[Hypothesis]] | None:
    """``close`` grouped by the board with its hidden pieces (:func:`board_key`), the likeliest
    group first; None when they all show one board (nothing to ask)."""
    groups: dict[Key, list[Hypothesis]] = {}
    for h in close:
        groups.setdefault(board_key(h.state), []).append(h)
    if len(groups) < 2:
        return None
    return sorted(groups.values(), key=lambda g: min(x.cost for x in g))


def _ask_soon(hyps: Sequence[Hypothesis], root: GameState, opts: TrackerOptions) -> Picked | None:
    """The question to ask now when the tracker does not defer (``TrackerOptions.defer``
    false): after ``max_lag`` held steps, what the stories within ``commit_margin`` disagree
    on about the table now but the potions (:func:`lag_question`). Else the potions when they
    matter (:func:`potions_question`). Else when hypotheses within ``ask_margin`` of the best,
    on the same player's turn, differ in hidden pieces (only about moves a later frame
    confirmed)."""
    hyps = sorted(hyps, key=lambda h: h.cost)
    if opts.lag_questions and min(len(h.trail) for h in hyps) > opts.max_lag:
        # held too long: what the camera cannot tell (a card or a spell, hidden pieces) is
        # asked about the table as it is now, never taken from the best's cost (commit)
        near = [h for h in hyps if h.cost - hyps[0].cost <= opts.commit_margin]
        lag = lag_question(near, root)
        if lag is not None:
            return lag
    pots = potions_question(hyps)
    if pots is not None:
        return (*pots, "potions-end" if hyps[0].state.game.over else "potions-many")
    # rivals that disagree on whose turn it is (a move of the next player already, or not)
    # are decided by the next turns and the DONE button, not by the players
    p0 = hyps[0].state.turn.player
    close = [
        h for h in hyps if h.cost - hyps[0].cost <= opts.ask_margin and h.state.turn.player == p0
    ]
    if len(close) < 2:
        return None
    # only about moves a later frame has confirmed
    if any(len(h.trail) < 2 for h in close):
        over = hyps[0].state.game.over
        if not over:
            return None
    ordered = _by_board(close)
    if ordered is None:
        return None
    text, options = board_question(ordered, root)
    offered = _offered(ordered, options)
    return None if offered is None else (text, *offered, "hidden")


POTION_CHOICES = 3
"""A potions question offers at most this many options."""
POTION_COUNTS = 4
"""A player's potions are shown as at most this many counts ("2 or 3 full"); more are asked
about (:func:`potions_question`)."""
POTION_STORIES = 8
"""At most this many potion alternatives (every player's counts together) are kept for the
table the best story shows; more are asked about (:func:`potions_question`): each player's
doubt multiplies the others', and the belief's ``keep`` hypotheses must still hold the
table's other stories."""


def _winners(st: GameState) -> tuple[int, ...] | None:
    """The seats that won a finished game (R-END-3/4), None while it goes on."""
    res = st.game.result
    return None if res is None else res.winners


def potions_question(
    hyps: Sequence[Hypothesis], combos: bool = False, winners: bool = False, stories: int = 0
) -> tuple[str, tuple[str, ...], Groups] | None:
    """The question about one player's potions, when the stories that show the best's table
    (:func:`~companion.tracking.belief.seen_key`) disagree on them and it matters: the game is
    over (who won, R-END-3), a player's counts grew past :data:`POTION_COUNTS`, all the
    players' together past :data:`POTION_STORIES`, or (``combos``: the tracker defers) the
    stories no longer hold every combination of the players' counts the pages show (one of
    them may be the truth); then all the players' counts together are asked about past half of
    ``stories`` (the belief's limit, ``TrackerOptions.potion_stories``) rather than
    :data:`POTION_STORIES`. Asked
    as what the player sees (full and empty tokens, R-POTION-1), one option per count, at
    most :data:`POTION_CHOICES` (the least likely counts then share the last option), about
    the player with the most counts. ``winners`` (the tracker defers): at the end only when
    the counts change who won (the most unspent full potions among the qualified, R-END-3);
    else they stay "one of these" in the history.
    During the game a spell that one count cannot pay decides them without a question (that
    story cannot explain the frame). ``hyps`` best first."""
    best = hyps[0]
    key = seen_key(best.state)
    same = [h for h in hyps if seen_key(h.state) == key and h.pending == best.pending]
    over = best.state.game.over
    if over and winners:
        over = len({_winners(h.state) for h in same}) > 1
    joint = {h.state.potions for h in same}
    tb = best.state.table
    shown = math.prod(len({p[seat] for p in joint}) for seat in range(len(tb.colours)))
    # every player's counts are shown ("blue 0 or 1, red 0 or 1"), so the belief must hold
    # every combination of them: when it holds fewer (the costliest, several spells at once,
    # fell out of ``keep``) the truth may be one it lost, and the players are asked
    # a deferring belief holds the players' doubts together (one ``keep`` slot for a table's
    # potion stories, companion.tracking.belief): a table's combinations are asked about when
    # they grow past half of all the stories it may hold, or when one fell out
    limit = max(POTION_STORIES, stories // 2) if combos else POTION_STORIES
    many = len(joint) > limit or (combos and shown > len(joint))
    pick: tuple[int, list[list[Hypothesis]]] | None = None
    for seat in range(len(tb.colours)):
        groups: dict[object, list[Hypothesis]] = {}
        for h in same:
            groups.setdefault(h.state.potions[seat][:2], []).append(h)
        if len(groups) < 2 or (not over and not many and len(groups) <= POTION_COUNTS):
            continue
        if pick is None or len(groups) > len(pick[1]):
            pick = (seat, sorted(groups.values(), key=lambda g: min(x.cost for x in g)))
    if pick is None:
        return None
    seat, ordered = pick
    words = [
        f"{count_of(g[0].state.potions[seat][0], 'full potion')} and "
        f"{g[0].state.potions[seat][1]} empty"
        for g in ordered
    ]
    if len(ordered) > POTION_CHOICES:
        # the least likely counts are one option together: an option for each would ask too
        # much, and leaving them out would lose the true count when it is one of them
        cut = POTION_CHOICES - 1
        rest = [h for g in ordered[cut:] for h in g]
        words = words[:cut] + ["another count: " + " or ".join(words[cut:])]
        ordered = ordered[:cut] + [rest]
    return (
        f"How many full potions does {tb.colours[seat]} have now?",
        tuple(words),
        tuple(tuple(g) for g in ordered),
    )
