"""The 2025 expansion (rules §16-§23): Magic Fountain, Spider Web, Witch, Raven, Magic Tower
and the eight expansion spells, in any combination.

A state whose ``modules`` is not None is played by this module: :func:`companion.rules.apply`
and :func:`companion.rules.legal_actions` hand it over here, so the base game's hot path pays
nothing for the modules. The movement rules of the base game (§7, §8) are reused and extended
through one movement path: :mod:`companion.rules.board` moves the pieces and calls the hooks
of this module's working copy (:class:`_W`, a :class:`~companion.rules.board.Pieces`):

* **web continuation** (R-MOD-WEB-2): a wizard, token or tower that ends on a web moves again
  by the same number of spaces in the same direction, again if it ends on a web again
  (OPEN-19); only the final space counts for landing, capacity, trapping and effects;
* **illegal tower destinations** (R-TOWER-5, R-MOD-FOUNTAIN-4, R-MOD-MAGICTOWER-3,
  R-MOD-WEB-4): the castle's space, a fountain, a web, the magic tower's roof. A tower that
  was ``physically_lifted`` at the table costs the turn instead (lift penalty R-MOD-GEN-3,
  OPEN-23);
* **tokens** (witch, raven) take the top surface, ride on moved roofs without effect
  (OPEN-16), skip the castle (R-MOD-WITCH-3, R-MOD-RAVEN-2, R-MOD-WEB-5) and make a top
  surface occupied for the castle (OPEN-17);
* **effects** when a wizard ends its move resolve witch -> fountain -> raven -> magic tower
  (R-ORDER-1); a tower landing lands, traps/seals, rewards one potion, then pops the raven up
  (R-ORDER-3).

Action fields used by the modules (see :class:`~companion.rules.actions.MoveWizard`): ``page``,
``raven_timing``, ``witch_guess``, ``witch_protect``, ``web_steps``, ``physically_lifted``;
the :class:`~companion.rules.actions.Feather` action spends feathers.

Where the rules are silent this engine decides (each a plain reading of S1, not an OPEN):

* *Fountain Abundance* and *Precise Landing* are cast before the move; they arm the effect for
  the caster's next wizard landing on a fountain / web this turn (``state.modules.armed``);
  Precise Landing is used when the move names ``web_steps``;
* the magic tower's free spell does not count towards the spell limit and may be cast by the
  owner even outside his turn; a feather's free spell is the player's spell of the turn;
  unused free spells end with the turn;
* a discarded page card still moves the witch; a discarded die card does not move the raven
  (no value is used); ``raven_timing`` defaults to ``after``;
* a witch effect takes a full potion first, then a full witch vial; spells are paid with full
  potions first, then full witch vials; a feather against the witch is spent only when the
  effect would change something;
* *Witch Control* needs the witch unsealed; a freed wizard (*Free a Wizard*) is put on the
  top, not moved, so it triggers no arrival effect.
"""

from __future__ import annotations

import dataclasses
import operator
import random
from collections.abc import Iterator
from typing import Any

from companion.rules import board
from companion.rules import engine as _e
from companion.rules.actions import (
    Action,
    Cast,
    DiscardCard,
    EndTurn,
    Event,
    ExchangeCards,
    Feather,
    GivePotion,
    IllegalAction,
    MoveTower,
    MoveWizard,
    Redraw,
    fast_move_tower,
    fast_move_wizard,
)
from companion.rules.model import (
    BASE_SPELLS,
    BASE_TOWERS,
    BASE_TRACK,
    CARD_KINDS,
    EXPANSION_SPELLS,
    KIND_INDEX,
    MAGIC_TOWER,
    MAX_ON_TOP,
    MODULES,
    CardState,
    Config,
    GameState,
    ModuleState,
    Progress,
    Result,
    Table,
    Track,
    Turn,
    make_state,
)

Potion = tuple[int, int, int]
_ev = board.event
_tuple_new = tuple.__new__
_module_pieces = operator.attrgetter(*ModuleState._fields)
"""The module pieces of a :class:`_W` as a plain tuple in :class:`ModuleState` order."""

FEATHER_USES = ("extra_card", "free_spell", "move_wizard")
"""R-MOD-RAVEN-6: what feathers buy (costs :data:`~companion.rules.DEFAULT_FEATHER_COSTS`)."""

FIRST_GAME_SPELLS = (
    "wizard_control",
    "free_wizard",
    "tower_sprint",
    "headwind_tower",
    "fly_to_magic_tower",
)
"""R-MOD-MAGICTOWER-1: S1's recommended five spells for a first game with the magic tower."""

_MAX_BOUNCES = 8


# --------------------------------------------------------------------------------------------
# Track and setup (R-TRACK-5, R-MOD-*-1)


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
    wiz = _e.place_wizards(tb, free_spaces)
    potions = _e.start_potions(tb, config)
    token = token_space << 4
    modules = ModuleState(
        witch=token if "witch" in mods else None,
        raven=token if "raven" in mods else None,
        witch_vials=tuple((0, 0, 0) for _ in range(tb.n)) if "witch" in mods else None,
        witch_vial_supply=int(config.options["witch_vials"]) if "witch" in mods else None,
        feathers=tuple(0 for _ in range(tb.n)) if "raven" in mods else None,
    )
    cards = _e.deal(tb, seed, rng)
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


# --------------------------------------------------------------------------------------------
# Working copy of one apply


class _W(board.Pieces):
    """The board parts and module pieces of a state while one action is applied (mutable,
    never shared): :class:`~companion.rules.board.Pieces` with the module hooks of the
    movement path (webs, tokens, fountain, magic tower, sealing, the raven)."""

    __slots__ = ModuleState._fields + ("protect", "mover", "m", "lifted_witch")
    """The module pieces under the names of :class:`ModuleState`, then the action's context."""

    mods = True

    def __init__(self, st: GameState, protect: tuple[str, ...] = ()) -> None:
        m = st.modules
        assert m is not None
        self.m = m
        tb = st.table
        self.tb = tb
        self.stacks = st.stacks
        self.wiz = st.wizards
        self.castle = st.castle
        self.potions = st.potions
        (
            self.witch,
            self.raven,
            self.witch_vials,
            self.witch_vial_supply,
            self.feathers,
            self.armed,
            self.free_casts,
        ) = m
        self.ev = []
        self.mover = st.turn.player
        self.lifted_witch: int | None = None
        if not protect:
            self.protect: tuple[int, ...] = ()
            return
        seats: list[int] = []
        for c in protect:
            s = tb.seat_of.get(c) if isinstance(c, str) else None
            if s is None:
                raise IllegalAction(f"witch_protect: {c!r} is not a player", "R-MOD-WITCH-10")
            seats.append(s)
        if seats and self.feathers is None:
            raise IllegalAction("feathers need the raven module", "R-MOD-WITCH-10")
        if seats and self.witch is None:
            raise IllegalAction("there is no witch to block", "R-MOD-WITCH-10")
        self.protect = tuple(seats)

    def copy(self) -> _W:
        """An independent copy (its own event list) to try something on."""
        c: _W = object.__new__(_W)
        c.tb = self.tb
        c.stacks = self.stacks
        c.wiz = self.wiz
        c.castle = self.castle
        c.potions = self.potions
        c.ev = list(self.ev)
        c.witch = self.witch
        c.raven = self.raven
        c.witch_vials = self.witch_vials
        c.witch_vial_supply = self.witch_vial_supply
        c.feathers = self.feathers
        c.armed = self.armed
        c.free_casts = self.free_casts
        c.protect = self.protect
        c.mover = self.mover
        c.m = self.m
        c.lifted_witch = self.lifted_witch
        return c

    def changed_goals(self, st: GameState) -> bool:
        """Potions or witch vials changed (the end condition may have become true)."""
        return self.potions is not st.potions or self.witch_vials is not self.m.witch_vials

    def state(
        self, st: GameState, turn: Turn, game: Progress, cards: CardState | None
    ) -> GameState:
        """The new state: the board parts, ``turn``, ``game``, ``cards`` and the module pieces
        (the state's own :class:`ModuleState` when they are unchanged)."""
        m = self.m
        pieces = _module_pieces(self)
        return make_state(
            self.tb,
            self.stacks,
            self.wiz,
            self.castle,
            self.potions,
            turn,
            game,
            cards,
            m if pieces == m else _tuple_new(ModuleState, pieces),
        )

    # -- players' things ---------------------------------------------------------------------

    def set_potion(self, seat: int, value: Potion) -> None:
        p = self.potions
        self.potions = p[:seat] + (value,) + p[seat + 1 :]

    def set_vial(self, seat: int, value: Potion) -> None:
        v = self.witch_vials
        assert v is not None
        self.witch_vials = v[:seat] + (value,) + v[seat + 1 :]

    def add_feather(self, seat: int, why: str) -> None:
        f = self.feathers
        assert f is not None
        colour = self.tb.colours[seat]
        if f[seat] >= int(self.tb.config.options["max_feathers"]):
            self.ev.append(_ev("feather_cap_reached", {"player": colour, "reason": why}))
            return
        self.feathers = f[:seat] + (f[seat] + 1,) + f[seat + 1 :]
        self.ev.append(_ev("feather_gained", {"player": colour, "reason": why}))

    def spend_feathers(self, seat: int, n: int, why: str) -> None:
        f = self.feathers
        assert f is not None
        if f[seat] < n:
            raise IllegalAction(
                f"{self.tb.colours[seat]} has {f[seat]} feather(s), {why} needs {n}",
                "R-MOD-RAVEN-6",
            )
        self.feathers = f[:seat] + (f[seat] - n,) + f[seat + 1 :]
        self.ev.append(
            _ev("feather_spent", {"player": self.tb.colours[seat], "count": n, "use": why})
        )

    # -- geometry ------------------------------------------------------------------------------

    def top(self, space: int) -> int:
        return space << 4 | len(self.stacks[space - 1])

    def owners_on(self, code: int) -> list[int]:
        """Seats owning a visible wizard on top surface ``code``, in seat order (with
        ``token_effects_visible_only`` off, OPEN-21: any wizard of that space)."""
        owner = self.tb.wizard_owner
        if self.tb.config.options["token_effects_visible_only"]:
            if code not in self.wiz:
                return []
            return sorted({owner[i] for i in board.wizards_on(self.wiz, code, code + 1)})
        space = code >> 4
        return sorted({owner[i] for i, p in enumerate(self.wiz) if p and p >> 4 == space})

    # -- movement hooks (board.wizard_move / tower_move / relocate_castle / castle_nudge) ------

    def occupied(self, code: int) -> bool:
        """A top surface the castle may not take (R-RAVEN-3, OPEN-17)."""
        if code in self.wiz:
            return True
        if self.tb.config.options["tokens_occupy_for_castle"]:
            return code == self.witch or code == self.raven
        return False

    def wizard_dest(self, wi: int, s: int, steps: int, web_steps: object) -> int:
        """Web continuation (R-MOD-WEB-2, OPEN-19) and *Precise Landing* (R-SPELLX-6)."""
        tb = self.tb
        seg = None
        if web_steps is not None:
            owner = tb.wizard_owner[wi]
            precise = (owner, "precise_landing")
            if precise not in self.armed:
                raise IllegalAction(
                    f"{tb.colours[owner]} has not cast Precise Landing this turn", "R-SPELLX-6"
                )
            if type(web_steps) is not int or not 1 <= web_steps <= 3:
                raise IllegalAction("Precise Landing continues 1 to 3 spaces", "R-SPELLX-6")
            seg = web_steps
        dest = (s - 1 + steps) % tb.length + 1
        if tb.special[dest] == "web":
            if seg is not None:
                armed = list(self.armed)
                armed.remove(precise)
                self.armed = tuple(armed)
            dest = _web_path(self, s, steps, tb.wizard_ids[wi], seg)
        if dest == s:
            raise IllegalAction("the move would end where it started", "R-MOD-WEB-2")
        return dest

    def arrive(self, movers: tuple[int, ...], code: int) -> None:
        """Arrival effects (R-ORDER-1) when anything of a module is on the top ``code``."""
        tb = self.tb
        dest = code >> 4
        st = self.stacks[dest - 1]
        if (
            self.witch == code
            or self.raven == code
            or tb.special[dest] is not None
            or (st and tb.tower_magic[st[-1]])
        ):
            for m in movers:
                _arrive(self, m, code)

    def tower_dest(self, s: int, steps: int, dest: int) -> int:
        """Illegal tower destinations (R-TOWER-5, R-MOD-FOUNTAIN-4, R-MOD-WEB-3,
        R-MOD-MAGICTOWER-3) raise :class:`_BadDestination`; webs continue the move."""
        tb = self.tb
        if tb.special[dest] is not None or dest == self.castle or dest == s:
            dest = _tower_dest_check(self, s, steps)
        dst = self.stacks[dest - 1]
        if dst and tb.tower_magic[dst[-1]]:
            raise _BadDestination(
                f"no tower may be placed on the magic tower (space {dest})", "R-MOD-MAGICTOWER-3"
            )
        return dest

    def lift_tokens(self, s: int, k: int, h: int, delta: int) -> list[str]:
        """Tokens on the lifted roofs ride along (OPEN-16; switched off: they stay on the
        space, on the tower below)."""
        witch = self.witch
        self.lifted_witch = witch
        raven = self.raven
        lo = s << 4 | k
        hi = s << 4 | 15
        carried: list[str] = []
        if witch is not None and lo <= witch <= hi:
            if self.tb.config.options["tokens_ride_towers"] or witch != s << 4 | h:
                self.witch = witch + delta
                carried.append("witch")
            else:
                self.witch = lo - 1
        if raven is not None and lo <= raven <= hi:
            if self.tb.config.options["tokens_ride_towers"]:
                self.raven = raven + delta
                carried.append("raven")
            else:
                self.raven = lo - 1
        return carried

    def reveal(self, s: int, tier: int) -> None:
        if self.lifted_witch == s << 4 | tier:
            self.ev.append(_ev("witch_revealed", {"space": s, "tier": tier}))

    def seal(self, dest: int, hd: int) -> bool:
        if self.witch == dest << 4 | hd:
            self.ev.append(_ev("witch_sealed", {"space": dest, "tier": hd}))
            return True
        return False

    def reward(self, seat: int, trapped: bool, sealed: bool) -> bool:
        """One potion for trapping wizards and/or sealing the witch (R-TOWER-9, R-TEAM-7,
        R-MOD-WITCH-7: a normal empty potion first, an empty witch vial only for sealing)."""
        tb = self.tb
        ev = self.ev
        if tb.solo and not tb.config.options["solo_fill_potions"]:
            ev.append(_ev("no_empty_potion", {"player": tb.colours[seat]}))
            return False
        f, e, sp = self.potions[seat]
        reason = "sealing" if sealed and not trapped else "trapping"
        if e:
            self.set_potion(seat, (f + 1, e - 1, sp))
            ev.append(_ev("potion_filled", {"player": tb.colours[seat], "reason": reason}))
            return True
        partner = tb.partner[seat]
        if trapped and partner >= 0 and self.potions[partner][1] > 0:
            pf, pe, psp = self.potions[partner]
            self.set_potion(partner, (pf + 1, pe - 1, psp))
            ev.append(
                _ev(
                    "potion_filled",
                    {"player": tb.colours[partner], "reason": "trapping_for_partner"},
                )
            )
            return True
        if sealed and self.witch_vials is not None and self.witch_vials[seat][1] > 0:
            vf, ve, vs = self.witch_vials[seat]
            self.set_vial(seat, (vf + 1, ve - 1, vs))
            ev.append(_ev("witch_vial_filled", {"player": tb.colours[seat], "reason": "sealing"}))
            return True
        ev.append(_ev("no_empty_potion", {"player": tb.colours[seat]}))
        return False

    def landed(self, dest: int, hd: int, moved: int) -> None:
        """R-MOD-RAVEN-7: a covered raven pops up to the new top and gives feathers."""
        if self.raven == dest << 4 | hd:
            new = dest << 4 | (hd + moved)
            self.raven = new
            self.ev.append(_ev("raven_popped_up", {"space": dest, "tier": hd + moved}))
            _raven_arrives(self, new, "raven_popped_up")


# --------------------------------------------------------------------------------------------
# Witch and raven tokens (R-MOD-WITCH, R-MOD-RAVEN, R-MOD-WEB-5)


def _token_dest(w: _W, name: str, space: int, steps: int) -> int:
    """Where a token moving ``steps`` clockwise from ``space`` stops: it skips the castle's
    space (one more step) and bounces off webs by the distance actually travelled."""
    tb = w.tb
    length = tb.length
    seg = steps
    dest = (space - 1 + seg) % length + 1
    for _ in range(_MAX_BOUNCES * 2):
        if dest == w.castle:
            w.ev.append(_ev(f"{name}_skips_castle", {"at": dest}))
            dest = dest % length + 1
            seg += 1
            continue
        if tb.special[dest] == "web":
            w.ev.append(_ev("web_bounce", {"piece": name, "at": dest, "extra_steps": seg}))
            dest = (dest - 1 + seg) % length + 1
            continue
        return dest
    raise IllegalAction(f"the {name} finds no space to stop", "R-MOD-WEB-2")


def _witch_hit(w: _W, seat: int, why: str) -> None:
    """One witch effect on ``seat`` (R-MOD-WITCH-4/5/6/10, OPEN-18)."""
    tb = w.tb
    colour = tb.colours[seat]
    f, e, sp = w.potions[seat]
    vials = w.witch_vials
    assert vials is not None
    vf, ve, vs = vials[seat]
    if f == 0 and vf == 0:
        if e or ve:
            w.ev.append(_ev("witch_no_effect", {"player": colour, "reason": why}))
            return
        if not w.witch_vial_supply and tb.config.options["witch_vial_exhausted_no_effect"]:
            w.ev.append(_ev("witch_no_effect", {"player": colour, "reason": "no_vial_left"}))
            return
    if seat in w.protect:
        fe = w.feathers
        if fe is not None and fe[seat] > 0:
            w.spend_feathers(seat, 1, "witch_protect")
            w.ev.append(_ev("witch_blocked", {"player": colour, "reason": why}))
            return
        raise IllegalAction(f"{colour} has no feather to block the witch", "R-MOD-WITCH-10")
    if f:
        w.set_potion(seat, (f - 1, e + 1, sp))
        w.ev.append(_ev("potion_emptied", {"player": colour, "reason": why}))
    elif vf:
        w.set_vial(seat, (vf - 1, ve + 1, vs))
        w.ev.append(_ev("witch_vial_emptied", {"player": colour, "reason": why}))
    else:
        assert w.witch_vial_supply is not None
        w.witch_vial_supply = max(0, w.witch_vial_supply - 1)
        w.set_vial(seat, (vf, ve + 1, vs))
        w.ev.append(_ev("witch_vial_taken", {"player": colour, "reason": why}))


def _witch_arrives(w: _W, code: int) -> None:
    """The witch stops on top surface ``code``: effect A (R-MOD-WITCH-4, OPEN-21)."""
    if code not in w.wiz and w.tb.config.options["token_effects_visible_only"]:
        return
    seats = w.owners_on(code)
    if seats:
        w.ev.append(
            _ev("witch_effect", {"space": code >> 4, "players": [w.tb.colours[s] for s in seats]})
        )
    for s in seats:
        _witch_hit(w, s, "witch_arrived")


def _raven_arrives(w: _W, code: int, why: str = "raven_arrived") -> None:
    """Effect A of the raven, also after popping up (R-MOD-RAVEN-3/7)."""
    if code not in w.wiz and w.tb.config.options["token_effects_visible_only"]:
        return
    seats = w.owners_on(code)
    if seats:
        w.ev.append(
            _ev("raven_effect", {"space": code >> 4, "players": [w.tb.colours[s] for s in seats]})
        )
    for s in seats:
        w.add_feather(s, why)


def _move_witch(w: _W, steps: int = 1) -> None:
    """R-MOD-WITCH-2/3: the witch moves clockwise (1 space) from her space, effect A."""
    assert w.witch is not None
    frm = w.witch >> 4
    tb = w.tb
    dest = (frm - 1 + steps) % tb.length + 1
    if dest == w.castle or tb.special[dest] == "web":
        dest = _token_dest(w, "witch", frm, steps)
    code = dest << 4 | len(w.stacks[dest - 1])
    w.witch = code
    w.ev.append(_ev("witch_moved", {"from": frm, "to": dest, "tier": code & 15}))
    _witch_arrives(w, code)


def _move_raven(w: _W, steps: int) -> None:
    """R-MOD-RAVEN-2: the raven moves clockwise by the die value used, effect A."""
    assert w.raven is not None
    frm = w.raven >> 4
    tb = w.tb
    dest = (frm - 1 + steps) % tb.length + 1
    if dest == w.castle or tb.special[dest] == "web":
        dest = _token_dest(w, "raven", frm, steps)
    code = dest << 4 | len(w.stacks[dest - 1])
    w.raven = code
    w.ev.append(_ev("raven_moved", {"from": frm, "to": dest, "tier": code & 15}))
    _raven_arrives(w, code)


def _witch_page(w: _W, page: bool, guess: Any) -> bool:
    """A page card resolves the witch before the move (R-MOD-WITCH-2/9).

    :returns: False when the release guess was wrong (the turn ends; nothing else happens).
    """
    if not page and guess is None:
        return True
    if not page or w.witch is None:
        if guess is not None:
            raise IllegalAction("a witch guess belongs to a page card", "R-MOD-WITCH-9")
        return True
    code = w.witch
    space, tier = code >> 4, code & 15
    sealed = tier < len(w.stacks[space - 1])
    if not sealed:
        if guess is not None:
            raise IllegalAction("the witch is not sealed; nothing to release", "R-MOD-WITCH-9")
        _move_witch(w)
        return True
    if not isinstance(guess, tuple) or len(guess) != 2:
        raise IllegalAction(
            "the witch is sealed: name the tower (space, tier) you lift to release her",
            "R-MOD-WITCH-9",
        )
    gs, gt = guess
    board.check_lift(w.tb, w.stacks, gs, gt)
    if code != (gs << 4 | (gt - 1)):
        w.ev.append(_ev("witch_guess_wrong", {"space": gs, "tier": gt}))
        return False
    w.ev.append(_ev("witch_released", {"space": gs, "tier": gt}))
    _move_witch(w)
    return True


# --------------------------------------------------------------------------------------------
# Movement with module rules


def _web_path(w: _W, start: int, steps: int, piece: str, seg: int | None = None) -> int:
    """Final space of a move of ``steps`` from ``start`` with web continuation (R-MOD-WEB-2,
    OPEN-19); ``seg`` replaces the continuation length (*Precise Landing*)."""
    tb = w.tb
    length = tb.length
    special = tb.special
    dest = (start - 1 + steps) % length + 1
    if special[dest] != "web":
        return dest
    cont = steps if seg is None else (seg if steps > 0 else -seg)
    bounces = 0
    while special[dest] == "web":
        if bounces and not tb.config.options["web_continues_again"]:
            raise IllegalAction(f"the move would end on the web at {dest}", "R-MOD-WEB-3")
        bounces += 1
        if bounces > _MAX_BOUNCES:
            raise IllegalAction("the move never leaves the webs", "R-MOD-WEB-2")
        w.ev.append(_ev("web_bounce", {"piece": piece, "at": dest, "extra_steps": abs(cont)}))
        dest = (dest - 1 + cont) % length + 1
    return dest


def _beneficiary(w: _W, wi: int) -> int:
    """Who gets a fountain / magic tower benefit for wizard ``wi`` (OPEN-20), -1 = nobody."""
    owner = w.tb.wizard_owner[wi]
    if owner == w.mover or w.tb.config.options["owner_benefits_when_moved"]:
        return owner
    return -1


def _arrive(w: _W, wi: int, code: int) -> None:
    """A wizard ended its move on top surface ``code``: witch, fountain, raven, magic tower
    (R-ORDER-1; R-MOD-WITCH-5, R-MOD-FOUNTAIN-2, R-MOD-RAVEN-4, R-MOD-MAGICTOWER-5)."""
    tb = w.tb
    owner = tb.wizard_owner[wi]
    space = code >> 4
    if w.witch == code:
        _witch_hit(w, owner, "wizard_met_witch")
    if tb.special[space] == "fountain":
        who = _beneficiary(w, wi)
        if who >= 0:
            _fountain(w, who)
    if w.raven == code:
        w.add_feather(owner, "wizard_met_raven")
    st = w.stacks[space - 1]
    if st and tb.tower_magic[st[-1]]:
        who = _beneficiary(w, wi)
        if who >= 0:
            w.free_casts = w.free_casts + ((who, "magic_tower"),)
            w.ev.append(_ev("magic_tower_free_spell", {"player": tb.colours[who]}))


def _fountain(w: _W, seat: int) -> None:
    """R-MOD-FOUNTAIN-2 (twice with an armed *Fountain Abundance*, R-SPELLX-5)."""
    times = 1
    key = (seat, "fountain_abundance")
    if key in w.armed:
        armed = list(w.armed)
        armed.remove(key)
        w.armed = tuple(armed)
        times = 2
    colour = w.tb.colours[seat]
    for _ in range(times):
        f, e, sp = w.potions[seat]
        if e:
            w.set_potion(seat, (f + 1, e - 1, sp))
            w.ev.append(_ev("potion_filled", {"player": colour, "reason": "fountain"}))
        elif sp:
            w.set_potion(seat, (f + 1, e, sp - 1))
            w.ev.append(_ev("potion_restored", {"player": colour, "reason": "fountain"}))
        else:
            w.ev.append(_ev("fountain_no_effect", {"player": colour}))


class _BadDestination(IllegalAction):
    """An illegal tower destination (the lift penalty applies to these, R-MOD-GEN-3)."""


def _tower_dest_check(w: _W, s: int, steps: int) -> int:
    """Final space of a tower move from ``s`` by ``steps`` after web continuation; raises
    :class:`_BadDestination` for the castle's space, a fountain, a web or the start."""
    tb = w.tb
    dest = _web_path(w, s, steps, "tower")
    castle = w.castle
    if dest == s:
        raise _BadDestination("the tower would end where it started", "R-MOD-WEB-2")
    if dest == castle and castle != s:
        raise _BadDestination(
            f"a tower may not end on the raven castle's space {dest}", "R-TOWER-5"
        )
    kind = tb.special[dest]
    if kind == "fountain":
        raise _BadDestination(f"a tower may not end on the fountain {dest}", "R-MOD-FOUNTAIN-4")
    if kind == "web":
        raise _BadDestination(f"a tower may not stay on the web {dest}", "R-MOD-WEB-3")
    return dest


# --------------------------------------------------------------------------------------------
# Game end with witch vials (R-END-1, R-MOD-WITCH-6)


def _qualifies(
    tb: Table, wiz: tuple[int, ...], potions: tuple[Potion, ...], vials: Any, seat: int
) -> bool:
    for s in tb.team_of(seat):
        lo, hi = tb.wiz_range[s]
        if any(wiz[lo:hi]) or potions[s][1]:
            return False
        if vials is not None and vials[s][1]:
            return False
    return True


def _end_check(w: _W, game: Progress, turn: Turn) -> Progress:
    """R-END-1/2 with empty witch vials blocking the trigger; deadlock R-END-5."""
    return _end_check_parts(w.tb, w.wiz, w.potions, w.witch_vials, game, turn, w.ev)


def _end_check_parts(
    tb: Table,
    wiz: tuple[int, ...],
    potions: tuple[Potion, ...],
    vials: Any,
    game: Progress,
    turn: Turn,
    ev: list[Event],
) -> Progress:
    if game.end_triggered_by is not None or game.over:
        return game
    lo, hi = tb.wiz_range[0]
    if wiz.count(0) < hi - lo:  # nobody has all his wizards in the castle (R-END-1, R-END-5)
        return game
    cur = turn.player
    for i in range(tb.n):
        seat = (cur + i) % tb.n
        if _qualifies(tb, wiz, potions, vials, seat):
            if tb.solo:
                result = _result(tb, wiz, potions, vials, "solo_won")
                ev.append(_e._game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            remaining = tb.n - 1 - cur
            data: dict[str, Any] = {"player": tb.colours[seat], "remaining_turns": remaining}
            if tb.config.teams:
                data["team"] = [tb.colours[s] for s in tb.team_of(seat)]
            ev.append(_ev("game_end_triggered", data))
            if tb.config.teams and not tb.config.options["team_round_completion"]:
                result = _result(tb, wiz, potions, vials, "team_goal")
                ev.append(_e._game_over_event(tb, result))
                return Progress(seat, 0, True, result, game.cards_played)
            return Progress(seat, remaining, False, None, game.cards_played)
    if not any(wiz) and tb.config.options["deadlock_end"]:
        result = _result(tb, wiz, potions, vials, "deadlock")
        ev.append(_e._game_over_event(tb, result))
        return Progress(None, 0, True, result, game.cards_played)
    return game


def _result(
    tb: Table, wiz: tuple[int, ...], potions: tuple[Potion, ...], vials: Any, reason: str
) -> Result:
    base = _e._result(tb, wiz, potions, reason)
    if vials is None:
        return base
    qualified = tuple(s for s in range(tb.n) if _qualifies(tb, wiz, potions, vials, s))
    if qualified == base.qualified:
        return base
    if reason == "solo_lost":
        return Result(reason, qualified, (), base.unused_full)

    def full_of(seat: int) -> int:
        return sum(base.unused_full[s] for s in tb.team_of(seat))

    if qualified:
        best = max(full_of(s) for s in qualified)
        winners = tuple(s for s in qualified if full_of(s) == best)
        return Result(reason, qualified, winners, base.unused_full)
    return Result(reason, qualified, base.winners, base.unused_full)


# --------------------------------------------------------------------------------------------
# Card actions


def _raven_timing(w: _W, a: MoveWizard | MoveTower) -> str | None:
    """``before``/``after`` for a die card with the raven module, else None."""
    t = a.raven_timing
    if t is None and not a.card.dice:
        return None
    if t is not None and t not in ("before", "after"):
        raise IllegalAction("raven_timing is 'before' or 'after'", "R-MOD-RAVEN-2")
    if w.raven is None or not a.card.dice:
        if t is not None:
            raise IllegalAction("only a die card moves the raven", "R-MOD-RAVEN-2")
        return None
    return t or "after"


def _lost_turn(
    st: GameState, w: _W, seat: int, kidx: int, reason: str
) -> tuple[GameState, list[Event]]:
    """Wrong witch guess or lift penalty: the card is discarded, the turn ends
    (R-MOD-WITCH-9, R-MOD-GEN-3); pieces moved before (witch) stay moved."""
    ev = w.ev
    turn, cards, game = _e._play_card(st, seat, kidx, ev, False)
    turn = turn._replace(ended=True)
    ev.append(_ev("turn_ended", {"player": w.tb.colours[seat], "reason": reason}))
    game = _end_check(w, game, turn)
    return w.state(st, turn, game, cards), ev


def _card_move(
    st: GameState,
    a: MoveWizard | MoveTower,
    seat: int,
    kidx: int,
    wi: int,
) -> tuple[GameState, list[Event]]:
    """A card's move with module rules: the die roll, the witch's page card (R-MOD-WITCH-2/9),
    the raven before or after (R-MOD-RAVEN-2), the move (wizard ``wi`` of a
    :class:`MoveWizard`) on the one movement path, then the played card; a committed card
    whose move became impossible is lost (R-MASTER-9), a physically lifted tower with an
    illegal destination costs the turn (R-MOD-GEN-3)."""
    tb = st.table
    w = _W(st, a.witch_protect)
    timing = None
    if a.card.dice or a.raven_timing is not None:
        timing = _raven_timing(w, a)
        _e._dice_event(a.card, a.rolls, w.ev)
    if (a.page or a.witch_guess is not None) and not _witch_page(w, a.page, a.witch_guess):
        return _lost_turn(st, w, seat, kidx, "witch_guess_wrong")
    if timing == "before":
        _move_raven(w, a.steps)
    entered = False
    try:
        if isinstance(a, MoveWizard):
            entered = board.wizard_move(w, wi, a.steps, web_steps=a.web_steps)
        else:
            board.tower_move(w, a.space, a.tier, a.steps, seat)
    except IllegalAction as exc:
        if (
            isinstance(exc, _BadDestination)
            and isinstance(a, MoveTower)
            and a.physically_lifted
            and tb.config.options["expansion_lift_penalty"]
        ):
            w.ev.append(
                _ev(
                    "illegal_tower_lift",
                    {"player": a.player, "space": a.space, "tier": a.tier, "reason": exc.reason},
                )
            )
            return _lost_turn(st, w, seat, kidx, "lift_penalty")
        if not (a.card_committed and tb.master):
            raise
        w.ev.append(
            _ev(
                "announced_move_impossible",
                {"player": a.player, "card": a.card.to_json(), "reason": exc.reason},
            )
        )
    if timing == "after":
        _move_raven(w, a.steps)
    turn, cards, game = _e._play_card(st, seat, kidx, w.ev, entered)
    if entered or w.changed_goals(st):
        game = _end_check(w, game, turn)
    return w.state(st, turn, game, cards), w.ev


def _plain_move(
    st: GameState, a: MoveWizard | MoveTower, seat: int, kidx: int, wi: int
) -> tuple[GameState, list[Event]]:
    """:func:`_card_move` when no module piece or tile takes part in it (the hooks would do
    nothing, the events are the same): the base game's movement on plain
    :class:`~companion.rules.board.Pieces`. A refused move goes the full way, which raises it
    or loses a committed card."""
    tb = st.table
    ev: list[Event] = []
    if a.card.dice:
        _e._dice_event(a.card, a.rolls, ev)
    p = board.Pieces(tb, st.stacks, st.wizards, st.castle, st.potions, ev)
    try:
        if isinstance(a, MoveWizard):
            board.wizard_move(p, wi, a.steps)
            filled = False
        else:
            filled = board.tower_move(p, a.space, a.tier, a.steps, seat)[2]
    except IllegalAction:
        return _card_move(st, a, seat, kidx, wi)
    m = st.modules
    assert m is not None
    turn, cards, game = _e._play_card(st, seat, kidx, ev, False)
    if filled:
        game = _end_check_parts(tb, p.wiz, p.potions, m.witch_vials, game, turn, ev)
    return make_state(tb, p.stacks, p.wiz, p.castle, p.potions, turn, game, cards, m), ev


def _apply_move_wizard(st: GameState, a: MoveWizard) -> tuple[GameState, list[Event]]:
    seat, kidx, wi = _e.wizard_card(st, a)
    m = st.modules
    assert m is not None
    witch, raven = m.witch, m.raven
    if not (
        a.page
        or a.raven_timing is not None
        or a.witch_guess is not None
        or a.witch_protect
        or a.web_steps is not None
        or (a.card.dice and raven is not None)
    ):
        # plain when the wizard is visible and lands on a plain space that is not the
        # castle's, on a top without a token or the magic tower
        tb = st.table
        stacks = st.stacks
        p = st.wizards[wi]
        s = p >> 4
        if p and p & 15 == len(stacks[s - 1]):
            dest = (s - 1 + a.steps) % tb.length + 1
            if dest != st.castle and tb.special[dest] is None:
                dst = stacks[dest - 1]
                code = dest << 4 | len(dst)
                if code != witch and code != raven and not (dst and tb.tower_magic[dst[-1]]):
                    return _plain_move(st, a, seat, kidx, wi)
    return _card_move(st, a, seat, kidx, wi)


def _apply_move_tower(st: GameState, a: MoveTower) -> tuple[GameState, list[Event]]:
    seat = _e._card_turn(st, a.player)
    kidx = _e._card_kind(st, seat, a.card, "tower", a.steps, a.rolls)
    m = st.modules
    assert m is not None
    witch, raven = m.witch, m.raven
    s = a.space
    if not (
        a.page
        or a.raven_timing is not None
        or a.witch_guess is not None
        or a.witch_protect
        or (a.card.dice and raven is not None)
    ) and (type(s) is int and 1 <= s <= st.table.length):
        # plain when the tower lands on a plain space that is neither the castle's nor its
        # own, not on the magic tower, and no token stands on either space
        tb = st.table
        dest = (s - 1 + a.steps) % tb.length + 1
        if dest != st.castle and dest != s and tb.special[dest] is None:
            dst = st.stacks[dest - 1]
            if (
                not (dst and tb.tower_magic[dst[-1]])
                and (witch is None or (witch >> 4 != s and witch >> 4 != dest))
                and (raven is None or (raven >> 4 != s and raven >> 4 != dest))
            ):
                return _plain_move(st, a, seat, kidx, -1)
    return _card_move(st, a, seat, kidx, -1)


def _apply_discard(st: GameState, a: DiscardCard) -> tuple[GameState, list[Event]]:
    seat = _e._card_turn(st, a.player)
    tb = st.table
    card = a.card
    kidx = -1
    if card is None:
        if st.cards is not None:
            raise IllegalAction("name the discarded card: the hands are known", "R-TURN-3")
        if a.rolls:
            raise IllegalAction("name the die card whose rolls are given", "R-TURN-3")
    else:
        found = KIND_INDEX.get(card) if isinstance(card, type(CARD_KINDS[0])) else None
        if found is None:
            raise IllegalAction(f"{card!r} is not a card of the move deck", "R-DECK-1")
        kidx = found
        if a.rolls:
            _e._check_rolls(card, a.rolls)
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
    w = _W(st, a.witch_protect)
    if not _witch_page(w, a.page, a.witch_guess):
        if kidx < 0:
            t = st.turn
            turn = t._replace(cards_used=t.cards_used + 1, ended=True)
            w.ev.append(_ev("turn_ended", {"player": a.player, "reason": "witch_guess_wrong"}))
            return w.state(st, turn, _end_check(w, st.game, turn), None), w.ev
        return _lost_turn(st, w, seat, kidx, "witch_guess_wrong")
    w.ev.append(
        _ev(
            "card_discarded_without_effect",
            {"player": a.player, "card": None if card is None else card.to_json()},
        )
    )
    if kidx < 0:
        t = st.turn
        turn = t._replace(cards_used=t.cards_used + 1)
        game = st.game
        if tb.solo:
            game = game._replace(cards_played=game.cards_played + 1)
        cards = None
    else:
        turn, cards, game = _e._play_card(st, seat, kidx, w.ev, False)
    game = _end_check(w, game, turn)
    return w.state(st, turn, game, cards), w.ev


def _apply_redraw(st: GameState, a: Redraw) -> tuple[GameState, list[Event]]:
    seat = _e._card_turn(st, a.player)
    tb = st.table
    if tb.solo:
        raise IllegalAction("the redraw alternative is not available in solo play", "R-SOLO-2")
    if st.turn.cards_used:
        raise IllegalAction(
            "the hand may be redrawn only before any card is played this turn", "R-TURN-5"
        )
    w = _W(st)
    w.ev.append(_ev("hand_discarded_and_redrawn", {"player": a.player}))
    cards = st.cards
    if cards is not None:
        hand = cards.hands[seat]
        hands = cards.hands[:seat] + ((),) + cards.hands[seat + 1 :]
        cards = CardState(hands, cards.draw, cards.discard + hand, cards.seed, cards.reshuffles)
        cards, _ = _e._draw(cards, seat, _e.HAND_SIZE, tb.solo)
    turn = st.turn._replace(redrawn=True)
    push = a.push
    if push is None:
        if not tb.config.options["redraw_push_optional"]:
            raise IllegalAction("the redraw push is mandatory with this option", "R-TURN-5")
    else:
        if not isinstance(push, tuple) or len(push) != 2:
            raise IllegalAction("the push names a (space, tier)", "R-TURN-5")
        board.tower_move(w, push[0], push[1], 1, seat)
    game = _end_check(w, st.game, turn)
    return w.state(st, turn, game, cards), w.ev


def end_turn(st: GameState, a: EndTurn) -> tuple[GameState, list[Event]]:
    """End Turn with modules when armed spells or free casts end with the turn or the game may
    end (witch vials count for the result); the engine's End Turn hands these over."""
    new, ev = _e._apply_end_turn(st, a, True)
    m = new.modules
    assert m is not None
    if not (m.armed or m.free_casts or new.game.over):
        return new, ev
    if m.armed or m.free_casts:
        m = m._replace(armed=(), free_casts=())
    g = new.game
    if g.over and g.result is not None and m.witch_vials is not None:
        result = _result(new.table, new.wizards, new.potions, m.witch_vials, g.result.reason)
        if result != g.result:
            g = g._replace(result=result)
            ev = [
                _e._game_over_event(new.table, result) if e.kind == "game_over" else e for e in ev
            ]
    return (
        make_state(
            new.table, new.stacks, new.wizards, new.castle, new.potions, new.turn, g, new.cards, m
        ),
        ev,
    )


# --------------------------------------------------------------------------------------------
# Feathers (R-MOD-RAVEN-6)


def _apply_feather(st: GameState, a: Feather) -> tuple[GameState, list[Event]]:
    tb = st.table
    seat = _e._seat(tb, a.player)
    if st.modules is None or st.modules.feathers is None:
        raise IllegalAction("feathers need the raven module", "R-MOD-RAVEN-6")
    t = st.turn
    if seat != t.player:
        raise IllegalAction("feathers are spent on one's own turn", "R-MOD-RAVEN-6")
    if t.feather_used:
        raise IllegalAction("feathers may be used once per turn", "R-MOD-RAVEN-6")
    use = a.use
    if use not in FEATHER_USES:
        raise IllegalAction(f"a feather use is one of {', '.join(FEATHER_USES)}", "R-MOD-RAVEN-6")
    if t.ended:
        raise IllegalAction("the turn has ended: a wizard entered the castle", "R-TURN-6")
    w = _W(st, a.witch_protect)
    w.spend_feathers(seat, int(tb.config.feather_costs[use]), use)
    turn = t._replace(feather_used=True)
    game = st.game
    if use == "extra_card":
        if t.extra_card or t.redrawn:
            raise IllegalAction("a 3rd card needs a turn of played cards", "R-MOD-RAVEN-6")
        turn = turn._replace(extra_card=True)
        w.ev.append(_ev("extra_card_allowed", {"player": a.player}))
    elif use == "free_spell":
        w.free_casts = w.free_casts + ((seat, "feather"),)
    else:
        wi = tb.wizard_index.get(a.wizard) if isinstance(a.wizard, str) else None
        if wi is None:
            raise IllegalAction(f"there is no wizard {a.wizard!r} in this game", "R-MOD-RAVEN-6")
        if type(a.steps) is not int or not 1 <= a.steps <= 6:
            raise IllegalAction("the feather moves a wizard 1 to 6 spaces", "R-MOD-RAVEN-6")
        relocate = tb.wizard_owner[wi] == seat or tb.config.options["others_entry_moves_castle"]
        entered = board.wizard_move(w, wi, a.steps, relocate=relocate, web_steps=a.web_steps)
        if entered and tb.wizard_owner[wi] == _e._controlled(tb, st.wizards, seat):
            turn = turn._replace(ended=True)
            w.ev.append(_ev("turn_ended", {"player": a.player, "reason": "castle_entry"}))
        game = _end_check(w, game, turn)
    return w.state(st, turn, game, st.cards), w.ev


# --------------------------------------------------------------------------------------------
# Spells (R-SPELL with module rules, R-SPELLX)


def _pay(w: _W, seat: int, cost: int, spell: str, times: int) -> None:
    """Full potions first, then full witch vials (R-MOD-WITCH-6)."""
    if not cost:
        return
    f, e, sp = w.potions[seat]
    vf = w.witch_vials[seat][0] if w.witch_vials is not None else 0
    if f + vf < cost:
        raise IllegalAction(
            f"{spell} x{times} costs {cost} full potion(s); {w.tb.colours[seat]} has {f + vf}",
            "R-SPELL-1",
        )
    use = min(f, cost)
    w.set_potion(seat, (f - use, e, sp + use))
    rest = cost - use
    if rest:
        assert w.witch_vials is not None
        a, b, c = w.witch_vials[seat]
        w.set_vial(seat, (a - rest, b, c + rest))
    w.ev.append(_ev("potions_spent", {"player": w.tb.colours[seat], "count": cost}))


def _magic_tower_space(w: _W) -> int:
    for i, stk in enumerate(w.stacks):
        if stk and w.tb.tower_magic[stk[-1]]:
            return i + 1
    raise IllegalAction("there is no magic tower in this game", "R-SPELLX-9")


def _apply_cast(st: GameState, a: Cast) -> tuple[GameState, list[Event]]:
    w, seat, turn = _cast_begin(st, a)
    if a.spell == "piggyback":
        return _piggyback(st, a, seat, w, turn)
    entered_by = _cast_effect(w, a, seat)
    tb = st.table
    cur = turn.player
    if (
        entered_by >= 0
        and tb.wizard_owner[entered_by] == _e._controlled(tb, st.wizards, cur)
        and not turn.ended
    ):
        turn = turn._replace(ended=True)
        w.ev.append(_ev("turn_ended", {"player": tb.colours[cur], "reason": "castle_entry"}))
    game = _end_check(w, st.game, turn)
    return w.state(st, turn, game, st.cards), w.ev


def _cast_begin(st: GameState, a: Cast) -> tuple[_W, int, Turn]:
    """The checks and payment of a cast that do not depend on its target (display, repeats,
    free source, timing, potions; R-SPELL-1/2, R-MASTER-*, R-MOD-MAGICTOWER-5, R-SPELLX-9).

    :returns: the working copy after paying, the caster's seat and the turn with the cast."""
    tb = st.table
    seat = _e._seat(tb, a.player)
    spell = a.spell
    if spell not in tb.spells:
        raise IllegalAction(f"the spell {spell!r} is not on display in this game", "R-SETUP-4")
    times = a.times
    if type(times) is not int or times < 1:
        raise IllegalAction("a spell is cast at least once", "R-MASTER-8")
    if times != 1 and spell not in (
        "advance_wizard",
        "headwind_wizard",
        "advance_tower",
        "headwind_tower",
        "move_castle",
    ):
        raise IllegalAction(f"{spell} is repeated by casting it again", "R-MASTER-8")
    w = _W(st, a.witch_protect)
    t = st.turn
    free_source = None
    if a.free:
        if times != 1:
            raise IllegalAction("a free spell is cast once", "R-MOD-MAGICTOWER-5")
        for src in ("magic_tower", "feather"):
            if (seat, src) in w.free_casts:
                free_source = src
                break
        if free_source is None:
            raise IllegalAction(
                f"{a.player} has no free spell (magic tower or feathers)", "R-MOD-MAGICTOWER-5"
            )
        fc = list(w.free_casts)
        fc.remove((seat, free_source))
        w.free_casts = tuple(fc)
    if free_source != "magic_tower":
        problem = _e.cast_timing_problem(st, seat, spell, times)
        if problem is not None:
            raise problem
    elif t.ended and spell != "free_wizard":
        raise IllegalAction("the turn has ended: a wizard entered the castle", "R-TURN-6")
    if spell == "fly_to_magic_tower" and t.fly_used:
        raise IllegalAction("Fly to the Magic Tower once per turn, in any way", "R-SPELLX-9")
    w.ev.append(
        _ev(
            "spell_cast",
            {"player": a.player, "spell": spell, "times": times, "free": free_source},
        )
    )
    if free_source is None:
        _pay(w, seat, tb.config.spell_costs[spell] * times, spell, times)
    casts = t.casts
    if free_source != "magic_tower":
        casts = casts + ((seat, spell, _e.spell_window(st), times),)
    turn = t._replace(casts=casts)
    if spell == "fly_to_magic_tower":
        turn = turn._replace(fly_used=True)
    return w, seat, turn


def _cast_effect(w: _W, a: Cast, seat: int) -> int:
    """What the spell ``a`` (not piggyback) does to the pieces after :func:`_cast_begin`.

    :returns: the index of a wizard that entered the castle, else -1.
    :raises IllegalAction: the target breaks a rule."""
    tb = w.tb
    spell = a.spell
    times = a.times
    entered_by = -1
    if spell in ("advance_wizard", "headwind_wizard", "wizard_control", "wizard_sprint"):
        wi = tb.wizard_index.get(a.wizard) if isinstance(a.wizard, str) else None
        if wi is None:
            raise IllegalAction(f"there is no wizard {a.wizard!r} in this game", "R-SPELL-5")
        if spell == "wizard_control":
            if type(a.steps) is not int or not 1 <= a.steps <= 3:
                raise IllegalAction("Wizard Control moves 1 to 3 spaces", "R-SPELLX-2")
            step = a.steps
        else:
            step = {"advance_wizard": 1, "headwind_wizard": -1, "wizard_sprint": 6}[spell]
        entered_by = _e.move_wizard_spell(w, seat, a.wizard, step, times, a.web_steps)
    elif spell in ("advance_tower", "headwind_tower", "tower_sprint"):
        step = {"advance_tower": 2, "headwind_tower": -2, "tower_sprint": 6}[spell]
        _e.move_tower_spell(w, seat, a.space, a.tier, step, times)
    elif spell == "swap_tower":
        _swap(w, a)
    elif spell == "move_castle":
        _e.castle_spell(w, a.direction, times)
    elif spell == "free_wizard":
        entered_by = _e.free_wizard(w, seat, a)
    elif spell in ("fountain_abundance", "precise_landing"):
        w.armed = w.armed + ((seat, spell),)
        w.ev.append(_ev("spell_armed", {"player": a.player, "spell": spell}))
    elif spell == "witch_control":
        _witch_control(w, a)
    elif spell == "summon_raven":
        _summon_raven(w, seat, a)
    elif spell == "fly_to_magic_tower":
        wi = tb.wizard_index.get(a.wizard) if isinstance(a.wizard, str) else None
        if wi is None or tb.wizard_owner[wi] != seat:
            raise IllegalAction("fly one of your own visible wizards", "R-SPELLX-9")
        if _fly(w, wi):
            entered_by = wi
    else:  # pragma: no cover - Config refuses unknown spells
        raise IllegalAction(f"the spell {spell!r} is unknown", "R-SPELLX-1")
    return entered_by


def _swap(w: _W, a: Cast) -> None:
    """R-SPELL-7; tokens on the swapped roofs travel like wizards."""
    tb = w.tb
    stacks, wiz = _e._swap(tb, w.stacks, w.wiz, w.castle, a, w.ev)
    sa, sb = a.a, a.b
    assert isinstance(sa, int) and isinstance(sb, int)
    ca = sa << 4 | len(w.stacks[sa - 1])
    cb = sb << 4 | len(w.stacks[sb - 1])

    def swap_code(c: int | None) -> int | None:
        return cb if c == ca else ca if c == cb else c

    w.witch = swap_code(w.witch)
    w.raven = swap_code(w.raven)
    w.stacks, w.wiz = stacks, wiz


def _witch_control(w: _W, a: Cast) -> None:
    """R-SPELLX-7: the (unsealed) witch to any space but the castle's or a web; effect A."""
    tb = w.tb
    if w.witch is None:  # pragma: no cover - module spell needs the module
        raise IllegalAction("there is no witch", "R-SPELLX-7")
    code = w.witch
    if code & 15 < len(w.stacks[(code >> 4) - 1]):
        raise IllegalAction("the witch is sealed; a page card releases her", "R-SPELLX-7")
    s = a.space
    if type(s) is not int or not 1 <= s <= tb.length:
        raise IllegalAction(f"there is no space {s!r} on the track", "R-SPELLX-7")
    if s == w.castle:
        raise IllegalAction("the witch cannot enter the raven castle", "R-MOD-WITCH-3")
    if tb.special[s] == "web":
        raise IllegalAction("nothing stays on a web", "R-MOD-WEB-3")
    if s == code >> 4:
        raise IllegalAction("the witch must move to another space", "R-SPELLX-7")
    new = w.top(s)
    w.ev.append(_ev("witch_moved", {"from": code >> 4, "to": s, "tier": new & 15}))
    w.witch = new
    _witch_arrives(w, new)


def _summon_raven(w: _W, seat: int, a: Cast) -> None:
    """R-SPELLX-8: the raven to a space with one of the caster's visible wizards; effect A."""
    tb = w.tb
    s = a.space
    if type(s) is not int or not 1 <= s <= tb.length:
        raise IllegalAction(f"there is no space {s!r} on the track", "R-SPELLX-8")
    code = w.top(s)
    lo, hi = tb.wiz_range[seat]
    if code not in w.wiz[lo:hi]:
        raise IllegalAction(f"{tb.colours[seat]} has no visible wizard on space {s}", "R-SPELLX-8")
    assert w.raven is not None
    if code == w.raven:
        raise IllegalAction("the raven is already there", "R-SPELLX-8")
    w.ev.append(_ev("raven_moved", {"from": w.raven >> 4, "to": s, "tier": code & 15}))
    w.raven = code
    _raven_arrives(w, code)


def _fly(w: _W, wi: int) -> bool:
    """R-SPELLX-9: the caster's visible wizard onto the magic tower's roof; returns True when
    the castle stands there and the wizard enters it."""
    tb = w.tb
    ids = tb.wizard_ids
    p = w.wiz[wi]
    if p == 0 or p & 15 != len(w.stacks[(p >> 4) - 1]):
        raise IllegalAction(f"{ids[wi]} is not a visible wizard on the board", "R-SPELLX-9")
    s = p >> 4
    dest = _magic_tower_space(w)
    if dest == s:
        raise IllegalAction(f"{ids[wi]} already stands on the magic tower", "R-SPELLX-9")
    if dest == w.castle:
        w.wiz = w.wiz[:wi] + (0,) + w.wiz[wi + 1 :]
        w.ev.append(
            _ev("wizard_moved", {"wizard": ids[wi], "from": s, "to": dest, "into_castle": True})
        )
        w.ev.append(_ev("castle_entered", {"wizard": ids[wi]}))
        board.relocate_castle(w)
        return True
    code = w.top(dest)
    if w.wiz.count(code) >= MAX_ON_TOP:
        raise IllegalAction(f"the magic tower's roof already holds {MAX_ON_TOP}", "R-WIZ-4")
    w.wiz = w.wiz[:wi] + (code,) + w.wiz[wi + 1 :]
    w.ev.append(_ev("wizard_moved", {"wizard": ids[wi], "from": s, "to": dest, "tier": code & 15}))
    _arrive(w, wi, code)
    return False


def _piggyback(
    st: GameState, a: Cast, seat: int, w: _W, turn0: Turn
) -> tuple[GameState, list[Event]]:
    """R-SPELL-11 with module rules: the rider lands with the current player's wizard."""
    tb = st.table
    m = a.then
    if not isinstance(m, MoveWizard):
        raise IllegalAction("piggyback rides on the current player's wizard move", "R-SPELL-11")
    cur = _e._card_turn(st, m.player)
    kidx = _e._card_kind(st, cur, m.card, "wizard", m.steps, m.rolls)
    wi = tb.wizard_index.get(m.wizard)
    if wi is None:
        raise IllegalAction(f"there is no wizard {m.wizard!r} in this game", "R-SETUP-2")
    ctrl = _e._controlled(tb, st.wizards, cur)
    if tb.wizard_owner[wi] != ctrl:
        raise IllegalAction(f"a wizard card moves only {tb.colours[ctrl]}'s wizards", "R-CARD-1")
    ri = tb.wizard_index.get(a.rider) if isinstance(a.rider, str) else None
    if ri is None or tb.wizard_owner[ri] != seat:
        raise IllegalAction(f"the rider must be one of {a.player}'s wizards", "R-SPELL-11")
    if ri == wi:
        raise IllegalAction("the rider must be another wizard", "R-SPELL-11")
    if w.wiz[ri] != w.wiz[wi] or w.wiz[ri] == 0:
        raise IllegalAction(f"{a.rider} is not on the same top surface as {m.wizard}", "R-SPELL-11")
    timing = _raven_timing(w, m)
    _e._dice_event(m.card, m.rolls, w.ev)
    st2 = make_state(
        tb, st.stacks, st.wizards, st.castle, st.potions, turn0, st.game, st.cards, st.modules
    )
    if not _witch_page(w, m.page, m.witch_guess):
        return _lost_turn(st2, w, cur, kidx, "witch_guess_wrong")
    if timing == "before":
        _move_raven(w, m.steps)
    entered = board.wizard_move(w, wi, m.steps, ri, web_steps=m.web_steps)
    if timing == "after":
        _move_raven(w, m.steps)
    turn, cards, game = _e._play_card(st2, cur, kidx, w.ev, entered)
    game = _end_check(w, game, turn)
    return w.state(st, turn, game, cards), w.ev


HANDLERS: dict[type, Any] = {
    MoveWizard: _apply_move_wizard,
    MoveTower: _apply_move_tower,
    DiscardCard: _apply_discard,
    Redraw: _apply_redraw,
    Cast: _apply_cast,
    EndTurn: _e._apply_end_turn,
    GivePotion: _e._apply_give_potion,
    ExchangeCards: _e._apply_exchange,
    Feather: _apply_feather,
}


def apply(state: GameState, action: Action) -> tuple[GameState, list[Event]]:
    """:func:`companion.rules.apply` for a state with modules (same contract)."""
    handler = HANDLERS.get(type(action))
    if handler is None:
        raise TypeError(f"not an action: {action!r}")
    if state.game.over:
        raise IllegalAction("the game is over", "R-END-2")
    result: tuple[GameState, list[Event]] = handler(state, action)
    return result


def _ok(state: GameState, action: Action) -> bool:
    try:
        apply(state, action)
    except IllegalAction:
        return False
    return True


# --------------------------------------------------------------------------------------------
# Legal actions with modules: candidates over the argument domain, kept when apply accepts them


_Memo = dict[tuple[int, str, int, str | None], list[tuple[int, int]]]
"""Legal card moves of one state: (seat, side, steps, raven timing) -> the wizards
``(index, 0)`` or towers ``(space, tier)`` that can make them."""


def _move_legal(
    st: GameState, seat: int, wi: int, space: int, tier: int, steps: int, timing: str | None
) -> bool:
    """Whether the current player's card move of wizard ``wi`` (or, with ``wi`` -1, of tower
    ``tier`` on ``space``) by ``steps`` is legal, the raven moving ``timing`` (die cards): the
    part of :func:`_card_move` that can refuse it, on the one movement path (the turn and the
    card are checked by the caller; the bookkeeping after the move never refuses)."""
    if wi >= 0:
        p = st.wizards[wi]
        if not p or p & 15 != len(st.stacks[(p >> 4) - 1]):
            return False  # absent or hidden: refused before anything moves (R-WIZ-1/5)
    else:
        return _tower_legal(st, space, tier, steps, timing)
    w = _W(st)
    try:
        if timing == "before":
            _move_raven(w, steps)
        if wi >= 0:
            board.wizard_move(w, wi, steps)
        else:
            board.tower_move(w, space, tier, steps, seat)
        if timing == "after":
            _move_raven(w, steps)
    except IllegalAction:
        return False
    return True


def _tower_legal(st: GameState, s: int, k: int, steps: int, timing: str | None) -> bool:
    """:func:`_move_legal` for an existing tower ``k`` on ``s``: after the lift only the
    destination can refuse the move (:meth:`_W.tower_dest`; landing, trapping, sealing, the
    reward and the raven's pop-up never refuse), and the raven's own move only when it finds
    no space to stop, which depends on its space and the castle's (before: as they are;
    after: the castle and a raven on the lifted part ride to the destination, OPEN-16)."""
    w = _W(st)
    try:
        dest = w.tower_dest(s, steps, (s - 1 + steps) % st.table.length + 1)
    except IllegalAction:
        return False
    if timing is None:
        return True
    raven = w.raven
    assert raven is not None
    rs = raven >> 4
    if timing == "after":
        if w.castle == s:
            w.castle = dest
        if rs == s and raven & 15 >= k and st.table.config.options["tokens_ride_towers"]:
            rs = dest
    try:
        _token_dest(w, "raven", rs, steps)
    except IllegalAction:
        return False
    return True


def _card_moves(
    st: GameState,
    seat: int,
    card: Any,
    rolls: tuple[int, ...] | None,
    memo: _Memo | None = None,
) -> Iterator[MoveWizard | MoveTower]:
    """Legal moves of ``card`` for ``seat`` (die cards: every final roll 1-6, or ``rolls``).

    A move's legality does not depend on the card face that makes it (only on the piece,
    the steps and the raven's timing), so each is checked once per ``memo`` (one state)
    and every face with that side and number of steps reuses the result."""
    tb = st.table
    colour = tb.colours[seat]
    if st.game.over:
        return
    try:
        _e._card_turn(st, colour)
    except IllegalAction:
        return
    if memo is None:
        memo = {}
    ctrl = _e._controlled(tb, st.wizards, seat)
    lo, hi = tb.wiz_range[ctrl]
    raven = st.modules is not None and st.modules.raven is not None
    ids = tb.wizard_ids
    for side in ("wizard", "tower"):
        if not card.has_side(side):
            continue
        values: list[tuple[int, tuple[int, ...]]]
        if card.dice:
            values = [(v, (v,)) for v in range(1, 7)] if rolls is None else [(rolls[-1], rolls)]
        else:
            values = [(card.wizard if side == "wizard" else card.tower, ())]
        timings: tuple[str | None, ...] = ("after", "before") if raven and card.dice else (None,)
        for steps, rl in values:
            try:
                _e._card_kind(st, seat, card, side, steps, rl)
            except IllegalAction:
                continue
            for timing in timings:
                key = (seat, side, steps, timing)
                targets = memo.get(key)
                if targets is None:
                    if side == "wizard":
                        targets = [
                            (i, 0)
                            for i in range(lo, hi)
                            if _move_legal(st, seat, i, 0, 0, steps, timing)
                        ]
                    else:
                        targets = [
                            (s0 + 1, k)
                            for s0, stack in enumerate(st.stacks)
                            for k in range(1, len(stack) + 1)
                            if _move_legal(st, seat, -1, s0 + 1, k, steps, timing)
                        ]
                    memo[key] = targets
                if side == "wizard":
                    for i, _ in targets:
                        mw = fast_move_wizard(colour, ids[i], steps, card, rl)
                        if timing is not None:
                            mw.__dict__["raven_timing"] = timing
                        yield mw
                else:
                    for sp, k in targets:
                        mt = fast_move_tower(colour, sp, k, steps, card, rl)
                        if timing is not None:
                            mt.__dict__["raven_timing"] = timing
                        yield mt


def card_playable(
    st: GameState, seat: int, card: Any, steps: int | None = None, memo: _Memo | None = None
) -> bool:
    """R-TURN-3 with module rules (a die card with any roll, or the final roll ``steps``)."""
    rolls = None if steps is None or not card.dice else (steps,)
    return any(True for _ in _card_moves(st, seat, card, rolls, memo))


def actions_for_card(
    state: GameState, card: Any, rolls: tuple[int, ...] = ()
) -> list[MoveWizard | MoveTower]:
    """Legal moves of the current player with ``card`` (die card: the given rolls)."""
    return list(_card_moves(state, state.turn.player, card, rolls if card.dice else None))


def _spell_candidates(
    st: GameState, seat: int, spell: str, free: bool, memo: _Memo | None = None
) -> Iterator[Cast]:
    tb = st.table
    colour = tb.colours[seat]
    ids = tb.wizard_ids
    wiz = st.wizards
    stacks = st.stacks
    towers = [(s0 + 1, k) for s0, stk in enumerate(stacks) for k in range(1, len(stk) + 1)]
    if spell in ("advance_wizard", "headwind_wizard", "wizard_sprint"):
        for i, p in enumerate(wiz):
            if p:
                yield Cast(colour, spell, wizard=ids[i], free=free)
    elif spell == "wizard_control":
        for i, p in enumerate(wiz):
            if p:
                for n in (1, 2, 3):
                    yield Cast(colour, spell, wizard=ids[i], steps=n, free=free)
    elif spell == "fly_to_magic_tower":
        lo, hi = tb.wiz_range[seat]
        for i in range(lo, hi):
            if wiz[i]:
                yield Cast(colour, spell, wizard=ids[i], free=free)
    elif spell in ("advance_tower", "headwind_tower", "tower_sprint"):
        for s, k in towers:
            yield Cast(colour, spell, space=s, tier=k, free=free)
    elif spell == "swap_tower":
        spaces = [s0 + 1 for s0, stk in enumerate(stacks) if stk]
        for x in spaces:
            for y in spaces:
                if x < y:
                    yield Cast(colour, spell, a=x, b=y, free=free)
    elif spell == "move_castle":
        yield Cast(colour, spell, direction="cw", free=free)
        yield Cast(colour, spell, direction="ccw", free=free)
    elif spell == "free_wizard":
        allowed = tb.team_of(seat)
        for s, k in towers:
            under = s << 4 | (k - 1)
            found = [i for i, p in enumerate(wiz) if p == under and tb.wizard_owner[i] in allowed]
            if found:
                for i in found:
                    yield Cast(colour, spell, space=s, tier=k, wizard=ids[i], free=free)
            else:
                yield Cast(colour, spell, space=s, tier=k, free=free)
    elif spell in ("fountain_abundance", "precise_landing"):
        yield Cast(colour, spell, free=free)
    elif spell in ("witch_control", "summon_raven"):
        for s in range(1, tb.length + 1):
            yield Cast(colour, spell, space=s, free=free)
    elif spell == "piggyback":
        t = st.turn
        cur = t.player
        if st.cards is not None:
            kinds = sorted(set(st.cards.hands[cur]))
            cards = [CARD_KINDS[k] for k in kinds]
        else:
            cards = [c for c in CARD_KINDS if not c.dice or c.dice == 1]
        lo, hi = tb.wiz_range[seat]
        for card in cards:
            if not card.has_side("wizard"):
                continue
            for m in _card_moves(st, cur, card, None, memo):
                if not isinstance(m, MoveWizard):
                    continue
                p = wiz[tb.wizard_index[m.wizard]]
                for ri in range(lo, hi):
                    if wiz[ri] == p and ids[ri] != m.wizard:
                        yield Cast(colour, spell, rider=ids[ri], then=m, free=free)


def _legal_casts(st: GameState, seat: int, spell: str, free: bool, memo: _Memo) -> Iterator[Cast]:
    """The legal casts of ``spell`` by ``seat``: the target-independent checks and the payment
    once (:func:`_cast_begin`), then each candidate's effect on a copy (:func:`_cast_effect`;
    what follows the effect never refuses). Piggyback is checked whole."""
    colour = st.table.colours[seat]
    try:
        w, _, _ = _cast_begin(st, Cast(colour, spell, free=free))
    except IllegalAction:
        return
    for c in _spell_candidates(st, seat, spell, free, memo):
        if spell == "piggyback":
            if _ok(st, c):
                yield c
            continue
        try:
            _cast_effect(w.copy(), c, seat)
        except IllegalAction:
            continue
        yield c


def generate(st: GameState, every_card: bool) -> Iterator[Action]:
    """The legal actions of a state with modules (see :class:`~companion.rules.LegalActions`);
    witch page cards are not guessed (``page=False``), die cards with the raven are listed
    with ``raven_timing`` ``after`` and ``before``."""
    if st.game.over:
        return
    memo: _Memo = {}
    tb = st.table
    t = st.turn
    seat = t.player
    colour = tb.colours[seat]
    can_play = not t.ended and not t.redrawn and t.cards_used < tb.actions_per_turn + t.extra_card
    if can_play:
        cards = st.cards
        if cards is not None:
            for k in sorted(set(cards.hands[seat])):
                yield from _card_moves(st, seat, CARD_KINDS[k], None, memo)
            second = t.cards_used >= 1 and tb.config.options["discard_playable_second_card"]
            for k in sorted(set(cards.hands[seat])):
                if second or not card_playable(st, seat, CARD_KINDS[k], None, memo):
                    yield DiscardCard(colour, CARD_KINDS[k])
        else:
            if every_card:
                faces = list(CARD_KINDS)
            else:
                faces = [c for c in CARD_KINDS if (c.type != "either" and not c.dice)]
                faces.append(_e._DIE1)
            for card in faces:
                for m in _card_moves(st, seat, card, None, memo):
                    if every_card or not card.dice or m.steps == 6:
                        yield m
            yield DiscardCard(colour, None)
        if t.cards_used == 0 and not tb.solo:
            if tb.config.options["redraw_push_optional"]:
                yield Redraw(colour, None)
            for s0, stk in enumerate(st.stacks):
                for k in range(1, len(stk) + 1):
                    r = Redraw(colour, (s0 + 1, k))
                    if _ok(st, r):
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
                if not free and _e.cast_timing_problem(st, s, spell) is not None:
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
                        if _ok(st, f):
                            yield f
    yield from _e.closing_actions(st, can_play)


__all__ = [
    "FEATHER_USES",
    "FIRST_GAME_SPELLS",
    "MODULES",
    "actions_for_card",
    "apply",
    "available_spells",
    "card_playable",
    "expansion_track",
    "generate",
    "page_cards",
    "resolve_spells",
    "setup",
]
