"""The working copy of one state while an action is applied with modules (:class:`ModulePieces`)
and the small values the module files share."""

from __future__ import annotations

import operator
from typing import Self

from companion.rules import board
from companion.rules.actions import IllegalAction
from companion.rules.board import event as _ev
from companion.rules.model import (
    CardState,
    GameState,
    ModuleState,
    Progress,
    Turn,
    make_state,
    position,
    space_of,
)

_tuple_new = tuple.__new__


Potion = tuple[int, int, int]


_module_pieces = operator.attrgetter(*ModuleState._fields)
"""The module pieces of a :class:`ModulePieces` as a plain tuple in :class:`ModuleState` order."""


class ModulePieces(board.Pieces):
    """The board parts and module pieces of a state while one action is applied (mutable,
    never shared): :class:`~companion.rules.board.Pieces` with the witch, raven, witch vials,
    feathers, armed spells and free casts, and the module steps that need no other module
    (tokens riding lifted roofs, sealing, rewards). :class:`MovingPieces` adds the movement
    hooks."""

    __slots__ = ModuleState._fields + ("protect", "mover", "m", "lifted_witch")
    """The module pieces under the names of :class:`ModuleState`, then the action's context."""

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

    def copy(self) -> Self:
        """An independent copy (its own event list) to try something on."""
        c = object.__new__(type(self))
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

    def top(self, space: int) -> int:
        return position(space, len(self.stacks[space - 1]))

    def owners_on(self, code: int) -> list[int]:
        """Seats owning a visible wizard on top surface ``code``, in seat order (with
        ``token_effects_visible_only`` off, OPEN-21: any wizard of that space)."""
        owner = self.tb.wizard_owner
        if self.tb.config.options["token_effects_visible_only"]:
            if code not in self.wiz:
                return []
            return sorted({owner[i] for i in board.wizards_on(self.wiz, code, code + 1)})
        space = space_of(code)
        return sorted({owner[i] for i, p in enumerate(self.wiz) if p and space_of(p) == space})

    def token_effect(self, code: int, token: str) -> list[int]:
        """Effect A of the witch or the raven (``token``) stopping on top surface ``code``: the
        seats it hits (:meth:`owners_on`), with a ``<token>_effect`` event naming them
        (R-MOD-WITCH-4, R-MOD-RAVEN-3, OPEN-21)."""
        seats = self.owners_on(code)
        if seats:
            self.ev.append(
                _ev(
                    f"{token}_effect",
                    {"space": space_of(code), "players": [self.tb.colours[s] for s in seats]},
                )
            )
        return seats

    def occupied(self, code: int) -> bool:
        """A top surface the castle may not take (R-RAVEN-3, OPEN-17)."""
        if code in self.wiz:
            return True
        if self.tb.config.options["tokens_occupy_for_castle"]:
            return code == self.witch or code == self.raven
        return False

    def lift_tokens(self, s: int, k: int, h: int, delta: int) -> list[str]:
        """Tokens on the lifted roofs ride along (OPEN-16; switched off: they stay on the
        space, on the tower below)."""
        witch = self.witch
        self.lifted_witch = witch
        raven = self.raven
        # inlined model.position, space_of, tier_of (IN_CASTLE = 0), a hot path:
        # this runs for every tower move with modules
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
        if self.lifted_witch == s << 4 | tier:  # inlined model.position: every tower move
            self.ev.append(_ev("witch_revealed", {"space": s, "tier": tier}))

    def seal(self, dest: int, hd: int) -> bool:
        if self.witch == dest << 4 | hd:  # inlined model.position: every tower move
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


class BadDestination(IllegalAction):
    """An illegal tower destination (the lift penalty applies to these, R-MOD-GEN-3)."""


MAX_BOUNCES = 8
