"""What can be seen of a state: the camera's :class:`Observation` and one player's view.

A camera sees per space the number of towers, the top surface, the visible wizards and the
castle (docs/state-model.md §3); a player additionally knows the public content of the castle, the
potions, his own hand and - depending on the memory aid - where hidden wizards are.
"""

from __future__ import annotations

from typing import Any

from companion.rules.model import MAX_ON_TOP, GameState, position, space_of, tier_of
from companion.rules.observation import Observation, SpaceObservation
from companion.rules.serialize import dump_state

MEMORY_AIDS = ("off", "own", "all")
"""``off``: no hidden wizards shown; ``own``: the player's own only (never a partner's);
``all``: every hidden wizard (a table that agreed to play with full memory aid)."""


def observe(state: GameState, time: float = 0.0, frame: int = 0) -> Observation:
    """What a camera above the table sees of ``state`` (no hidden wizards, no hands).

    :param time: capture time in s since the epoch (passed through; never read from a clock).
    :param frame: frame counter (passed through).
    """
    tb = state.table
    colours = tb.colours
    owner = tb.wizard_owner
    wiz = state.wizards
    spaces: dict[int, SpaceObservation] = {}
    m = state.modules
    for s0, stack in enumerate(state.stacks):
        s = s0 + 1
        h = len(stack)
        if h:
            top = tb.towers[stack[-1]].kind
        else:
            top = tb.special[s] or ("crest-space" if s in tb.track.raven_crest else "plain-space")
        code = position(s, h)
        counts: dict[str, int] = {}
        if code in wiz:
            for i, p in enumerate(wiz):
                if p == code:
                    c = colours[owner[i]]
                    counts[c] = counts.get(c, 0) + 1
        assert sum(counts.values()) <= MAX_ON_TOP
        witch = m is not None and m.witch == code
        raven = m is not None and m.raven == code
        spaces[s] = SpaceObservation(
            towers=h, top=top, wizards=counts, castle=state.castle == s, witch=witch, raven=raven
        )
    return Observation(spaces=spaces, time=time, frame=frame, unstable=False)


def view(state: GameState, player: str, memory_aid: str = "own") -> dict[str, Any]:
    """The state JSON as ``player`` may be shown it: what he could see at the table, plus what
    the memory aid remembers for him (docs/state-model.md §2.5).

    Trapped wizards of other players are left out unless ``memory_aid == "all"``; with
    ``"off"`` the player's own trapped wizards are left out too. Nothing tells where a left-out
    wizard is, nor which one it is: there is no count per space, and the wizards of a colour
    whose trapped ones are left out carry reading-order labels (``yellow-a``, ``yellow-b`` …
    by space, tier, the castle last) instead of their ids, as wizards of one colour look alike
    on the table. ``"trapped"`` counts the left-out wizards per colour (what anyone can count:
    a colour's wizards minus those in view and in the castle). A sealed witch (expansion)
    belongs to nobody: her place is shown only with ``"all"``, otherwise ``"witch"`` is the
    string ``"sealed"``. Other players' hands and the pile order are replaced by counts.

    :raises ValueError: unknown player or memory aid.
    """
    if memory_aid not in MEMORY_AIDS:
        raise ValueError(f"memory_aid: expected one of {MEMORY_AIDS}")
    tb = state.table
    if player not in tb.seat_of:
        raise ValueError(f"player: {player!r} is not a player of this game")
    seat = tb.seat_of[player]
    if memory_aid == "all":
        remembered = set(range(len(tb.colours)))
    else:
        remembered = {seat} if memory_aid == "own" else set()
    out = dump_state(state)
    out["wizards"], out["trapped"] = _wizards_seen(state, remembered, out["wizards"])
    m = state.modules
    if m is not None and m.witch is not None and memory_aid != "all":
        ws, wt = space_of(m.witch), tier_of(m.witch)
        if wt < len(state.stacks[ws - 1]):
            out["witch"] = "sealed"  # R-MOD-WITCH-7: under some tower, like a trapped wizard
    cards = out["cards"]
    if cards is not None:
        out["cards"] = {
            "hand": cards["hands"][player],
            "hand_sizes": {c: len(h) for c, h in cards["hands"].items()},
            "draw_size": len(cards["draw"]),
            "discard_top": cards["discard"][-1] if cards["discard"] else None,
            "discard_size": len(cards["discard"]),
        }
    out["viewer"] = {"player": player, "memory_aid": memory_aid}
    return out


def _wizards_seen(
    state: GameState, remembered: set[int], dumped: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, int]]:
    """The ``wizards`` of a view and the left-out count per colour.

    Seats in ``remembered`` keep their ids and trapped wizards; the other seats' wizards in view
    or in the castle get reading-order labels, their trapped ones are left out."""
    tb = state.table
    wizards: dict[str, Any] = {}
    others: dict[int, list[tuple[int, int, int]]] = {}
    left_out: dict[str, int] = {}
    for i, (wid, p) in enumerate(zip(tb.wizard_ids, state.wizards, strict=True)):
        owner = tb.wizard_owner[i]
        if owner in remembered:
            wizards[wid] = dumped[wid]
        elif not p:  # in the raven castle: everybody saw it go in (R-TURN-6)
            others.setdefault(owner, []).append((1, 0, 0))
        elif tier_of(p) < len(state.stacks[space_of(p) - 1]):
            colour = tb.colours[owner]
            left_out[colour] = left_out.get(colour, 0) + 1
        else:
            others.setdefault(owner, []).append((0, space_of(p), tier_of(p)))
    for owner, places in sorted(others.items()):
        colour = tb.colours[owner]
        for n, (castle, s, t) in enumerate(sorted(places)):
            wizards[f"{colour}-{_label(n)}"] = "castle" if castle else {"space": s, "tier": t}
    ordered = dict(sorted(wizards.items()))
    return ordered, {c: left_out[c] for c in tb.colours if c in left_out}


def _label(n: int) -> str:
    """``a`` … ``z`` (a colour has at most a handful of wizards, R-SETUP-2)."""
    return chr(ord("a") + n)


def table_view(state: GameState, memory_aid: str = "own") -> dict[str, Any]:
    """The state JSON for a page without a seat (the public table page, the host's page).

    Nobody's hand; trapped wizards only when the whole table plays with ``memory_aid == "all"``
    (otherwise as :func:`view` with ``"off"``: labels, no count per space); ``"viewer"`` is
    ``{"player": None, …}``.

    :raises ValueError: unknown memory aid.
    """
    if memory_aid not in MEMORY_AIDS:
        raise ValueError(f"memory_aid: expected one of {MEMORY_AIDS}")
    first = state.table.colours[0]
    out = view(state, first, "all" if memory_aid == "all" else "off")
    cards = out["cards"]
    if cards is not None:
        out["cards"] = {k: v for k, v in cards.items() if k != "hand"}
    out["viewer"] = {"player": None, "memory_aid": memory_aid}
    return out


def audience_view(state: GameState, player: str | None, memory_aid: str = "own") -> dict[str, Any]:
    """:func:`view` for ``player`` when he plays this game, else :func:`table_view` (the table
    page, the host, a phone whose colour is not at this table).

    :raises ValueError: unknown memory aid.
    """
    if player is not None and player in state.table.seat_of:
        return view(state, player, memory_aid)
    return table_view(state, memory_aid)
