"""The expansion's table before the first turn (R-TRACK-5, R-MOD-*-1, R-SPELLX-1): the track
with fountain and web tiles, the spells on display, the starting position, and the page cards
(OPEN-12)."""

from __future__ import annotations

import dataclasses
import random

from companion.rules.model import (
    BASE_SPELLS,
    BASE_TOWERS,
    BASE_TRACK,
    EXPANSION_SPELLS,
    MAGIC_TOWER,
    Config,
    GameState,
    ModuleState,
    Progress,
    Table,
    Track,
    Turn,
    position,
)
from companion.rules.turn import deal, place_wizards, start_potions

FIRST_GAME_SPELLS = (
    "wizard_control",
    "free_wizard",
    "tower_sprint",
    "headwind_tower",
    "fly_to_magic_tower",
)
"""R-MOD-MAGICTOWER-1: S1's recommended five spells for a first game with the magic tower."""


def expansion_track(
    modules: frozenset[str] | set[str] | tuple[str, ...],
    after_a: int = 8,
    after_b: int = 16,
    spaces_per_tile: int = 1,
    base: Track = BASE_TRACK,
) -> Track:
    """The track with the fountain/web tiles inserted (R-TRACK-5, OPEN-10).

    Tiles go after base space ``after_a`` (position A) and ``after_b`` (position B), each
    ``spaces_per_tile`` spaces long; the base spaces are renumbered clockwise from the castle
    start space and the crest spaces move with them (default 18 spaces, crests 1, 5, 10, 14).
    Fountain only: two fountains; web only: two webs; both: web at A, fountain at B (S1's
    advanced setup). Neither: the base track unchanged.

    :raises ValueError: positions outside the base track or fewer than 1 space per tile.
    """
    mods = set(modules)
    if "fountain" not in mods and "web" not in mods:
        return base
    if not (1 <= after_a < after_b <= base.length) or spaces_per_tile < 1:
        raise ValueError("expansion_track: need 1 <= after_a < after_b <= length, tiles >= 1")
    if "web" in mods and "fountain" in mods:
        kinds = ("web", "fountain")
    elif "web" in mods:
        kinds = ("web", "web")
    else:
        kinds = ("fountain", "fountain")
    new_of: dict[int, int] = {}
    special: list[tuple[int, str]] = []
    n = 0
    for b in range(1, base.length + 1):
        n += 1
        new_of[b] = n
        for pos, kind in ((after_a, kinds[0]), (after_b, kinds[1])):
            if b == pos:
                for _ in range(spaces_per_tile):
                    n += 1
                    special.append((n, kind))
    crest = frozenset(new_of[c] for c in base.raven_crest)
    return Track(length=n, raven_crest=crest, special=tuple(special))


def available_spells(modules: frozenset[str]) -> tuple[str, ...]:
    """Base spells, the three general expansion spells and the spells of the modules in play
    (R-MOD-GEN-2, R-SPELLX-1), in catalogue order."""
    return BASE_SPELLS + tuple(s for s, m in EXPANSION_SPELLS.items() if m is None or m in modules)


def resolve_spells(config: Config, rng: random.Random) -> tuple[str, ...]:
    """Spells on display with modules: ``config.spells``; the magic tower draws
    ``magic_tower_spell_count`` (5) at random from the available ones (R-MOD-MAGICTOWER-1);
    the master variant draws ``master_spell_count`` from the available ones; otherwise the
    base game's two (R-SETUP-4).

    :raises ValueError: a module spell without its module (R-MOD-GEN-2).
    """
    pool = available_spells(config.modules)
    if config.spells is not None:
        for i, s in enumerate(config.spells):
            need = EXPANSION_SPELLS.get(s)
            if need is not None and need not in config.modules:
                raise ValueError(f"config.spells[{i}]: {s} needs the {need} module (R-MOD-GEN-2)")
        return config.spells
    if config.player_count == 1:
        count = int(config.options["solo_spell_count"])
    elif config.variant == "master":
        count = int(config.options["master_spell_count"])
    elif "magic_tower" in config.modules:
        count = int(config.options["magic_tower_spell_count"])
    else:
        return ("advance_wizard", "advance_tower")
    if count >= len(pool):
        return pool
    chosen = set(rng.sample(pool, count))
    return tuple(s for s in pool if s in chosen)


def setup(config: Config, seed: int | None = None) -> GameState:
    """The starting position with expansion modules (R-SETUP-*, R-MOD-*-1).

    The fountain/web tiles are inserted (``config.track`` when it already defines special
    spaces, else :func:`expansion_track`); towers, castle and wizards go on their base spaces
    (R-MOD-FOUNTAIN-1); the magic tower on the space after the last tower, witch and raven on
    the space after that (R-MOD-WITCH-1, R-MOD-RAVEN-1, R-MOD-MAGICTOWER-1, OPEN-26).

    :raises ValueError: a module spell without its module, or more wizards than towers take.
    """
    mods = config.modules
    rng = random.Random(seed if seed is not None else 0)
    track = config.track
    if not track.special and ("fountain" in mods or "web" in mods):
        track = expansion_track(mods, base=track)
    spells = resolve_spells(config, rng)
    config = dataclasses.replace(config, spells=spells, track=track)
    towers = BASE_TOWERS + ((MAGIC_TOWER,) if "magic_tower" in mods else ())
    tb = Table(config, spells, towers)
    length = tb.length
    free_spaces: list[int] = []
    sp = 1
    while len(free_spaces) < len(towers) + 1:
        sp = sp % length + 1
        if tb.special[sp] is None:
            free_spaces.append(sp)
    stacks_l: list[tuple[int, ...]] = [() for _ in range(length)]
    for t in range(len(towers)):
        stacks_l[free_spaces[t] - 1] = (t,)
    token_space = free_spaces[len(towers)]
    if not config.options["module_setup_on_base_spaces"]:
        # OPEN-26 switched: the very next space after the last tower, a fountain included
        token_space = free_spaces[len(towers) - 1] % length + 1
        while tb.special[token_space] == "web":
            token_space = token_space % length + 1
    wiz = place_wizards(tb, free_spaces)
    potions = start_potions(tb, config)
    token = position(token_space, 0)
    modules = ModuleState(
        witch=token if "witch" in mods else None,
        raven=token if "raven" in mods else None,
        witch_vials=tuple((0, 0, 0) for _ in range(tb.n)) if "witch" in mods else None,
        witch_vial_supply=int(config.options["witch_vials"]) if "witch" in mods else None,
        feathers=tuple(0 for _ in range(tb.n)) if "raven" in mods else None,
    )
    cards = deal(tb, seed, rng)
    return GameState(
        tb, tuple(stacks_l), tuple(wiz), 1, potions, Turn(0), Progress(), cards, modules
    )


def page_cards(seed: int, share: float = 1 / 6) -> frozenset[str]:
    """A seeded stand-in for the witch's page cards (OPEN-12): card codes (``W3``, ``E-D1`` …)
    whose copies add up to ``share`` of the 90-card deck (15 cards by default)."""
    from companion.rules.model import DECK

    target = round(90 * share)
    rng = random.Random(f"page/{seed}")
    for _ in range(1000):
        rows = list(DECK)
        rng.shuffle(rows)
        total = 0
        chosen: list[str] = []
        for card, n in rows:
            if total + n <= target:
                chosen.append(card.code)
                total += n
            if total == target:
                return frozenset(chosen)
    return frozenset(chosen)
