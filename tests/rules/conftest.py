"""Helpers that build rule positions the way a rulebook example describes them."""

from __future__ import annotations

from typing import Any

from companion.rules import Card, Config, GameState, dump_state, load_state, setup

W = {v: Card("wizard", wizard=v) for v in range(1, 6)}
"""Wizard-only value cards W1..W5."""
T = {v: Card("tower", tower=v) for v in range(1, 6)}
"""Tower-only value cards T1..T5."""
E_DIE = Card("either", dice=1)
W_DIE2 = Card("wizard", dice=2)
W_DIE3 = Card("wizard", dice=3)
T_DIE2 = Card("tower", dice=2)
T_DIE3 = Card("tower", dice=3)

BASE_STACKS = {
    2: ["R1"],
    3: ["P1"],
    4: ["R2"],
    5: ["P2"],
    6: ["R3"],
    7: ["P3"],
    8: ["R4"],
    9: ["P4"],
    10: ["R5"],
}


def position(
    players: int = 2,
    *,
    stacks: dict[int, list[str]] | None = None,
    wizards: dict[str, Any] | None = None,
    castle: int = 1,
    potions: dict[str, tuple[int, int, int]] | None = None,
    turn: dict[str, Any] | None = None,
    game: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    seed: int | None = None,
    hands: dict[str, list[Card]] | None = None,
) -> GameState:
    """A state built through the JSON loader.

    ``wizards``: id -> (space, tier) or "castle"; wizards not named stay where setup put them
    when ``stacks`` is None, else they are in the castle. ``hands``: known hands (the rest of
    the deck becomes the draw pile).
    """
    cfg = Config(player_count=players, **(config or {}))
    data = dump_state(setup(cfg, seed))
    if stacks is not None:
        data["stacks"] = {str(s): list(t) for s, t in stacks.items() if t}
        data["wizards"] = {w: "castle" for w in data["wizards"]}
    for w, p in (wizards or {}).items():
        data["wizards"][w] = p if p == "castle" else {"space": p[0], "tier": p[1]}
    data["castle"] = {"space": castle, "tier": len(data["stacks"].get(str(castle), []))}
    for c, (f, e, s) in (potions or {}).items():
        data["potions"][c] = {"full": f, "empty": e, "spent": s}
    data["turn"].update(turn or {})
    data["game"].update(game or {})
    if hands is not None:
        from companion.rules import DECK

        pool = [c.to_json() for c, n in DECK for _ in range(n)]
        for cards in hands.values():
            for c in cards:
                pool.remove(c.to_json())
        data["cards"] = {
            "hands": {c: [x.to_json() for x in hands.get(c, [])] for c in data["potions"]},
            "draw": pool,
            "discard": [],
            "seed": 1,
            "reshuffles": 0,
        }
    return load_state(data)


STACKS18 = {
    2: ["R1"],
    3: ["P1"],
    4: ["R2"],
    5: ["P2"],
    6: ["R3"],
    7: ["P3"],
    8: ["R4"],
    10: ["P4"],
    11: ["R5"],
}
"""The base towers on their base spaces of the 18-space expansion track (R-MOD-FOUNTAIN-1)."""


def mposition(
    modules: set[str] | tuple[str, ...],
    *,
    witch: tuple[int, int] | None = None,
    raven: tuple[int, int] | None = None,
    feathers: dict[str, int] | None = None,
    vials: dict[str, tuple[int, int, int]] | None = None,
    supply: int | None = None,
    config: dict[str, Any] | None = None,
    **kw: Any,
) -> GameState:
    """:func:`position` with expansion modules and their pieces (witch/raven ``(space, tier)``,
    feathers and witch vials per colour)."""
    cfg = dict(config or {})
    cfg["modules"] = frozenset(modules)
    data = dump_state(position(config=cfg, **kw))
    if witch is not None:
        data["witch"] = {"space": witch[0], "tier": witch[1]}
    if raven is not None:
        data["raven"] = {"space": raven[0], "tier": raven[1]}
    for c, n in (feathers or {}).items():
        data["feathers"][c] = n
    for c, (f, e, s) in (vials or {}).items():
        data["witch_vials"][c] = {"full": f, "empty": e, "spent": s}
    if supply is not None:
        data["witch_vial_supply"] = supply
    return load_state(data)


def kinds(events: Any) -> list[str]:
    """The event kinds in order."""
    return [e.kind for e in events]
