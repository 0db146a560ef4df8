"""The working copy with the module hooks of the movement path (:class:`MovingPieces`), which
:mod:`companion.rules.board` calls while pieces move."""

from __future__ import annotations

from companion.rules.actions import IllegalAction
from companion.rules.board import event as _ev
from companion.rules.expansion.arrival import wizard_arrives
from companion.rules.expansion.common import BadDestination, ModulePieces
from companion.rules.expansion.raven import raven_arrives
from companion.rules.expansion.web import tower_dest_check, web_path
from companion.rules.model import position


class MovingPieces(ModulePieces):
    """:class:`ModulePieces` with the module hooks of the movement path
    (:mod:`companion.rules.board` calls them when ``mods`` is set): webs continue a move
    (R-MOD-WEB-2), arrival effects (R-ORDER-1), illegal tower destinations (R-TOWER-5,
    R-MOD-FOUNTAIN-4, R-MOD-WEB-3, R-MOD-MAGICTOWER-3), the covered raven popping up
    (R-MOD-RAVEN-7)."""

    __slots__ = ()

    mods = True

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
            dest = web_path(self, s, steps, tb.wizard_ids[wi], seg)
        if dest == s:
            raise IllegalAction("the move would end where it started", "R-MOD-WEB-2")
        return dest

    def arrive(self, movers: tuple[int, ...], code: int) -> None:
        """Arrival effects (R-ORDER-1) when anything of a module is on the top ``code``."""
        tb = self.tb
        dest = code >> 4  # inlined model.space_of: this runs for every wizard move
        st = self.stacks[dest - 1]
        if (
            self.witch == code
            or self.raven == code
            or tb.special[dest] is not None
            or (st and tb.tower_magic[st[-1]])
        ):
            for m in movers:
                wizard_arrives(self, m, code)

    def tower_dest(self, s: int, steps: int, dest: int) -> int:
        """Illegal tower destinations (R-TOWER-5, R-MOD-FOUNTAIN-4, R-MOD-WEB-3,
        R-MOD-MAGICTOWER-3) raise :class:`_BadDestination`; webs continue the move."""
        tb = self.tb
        if tb.special[dest] is not None or dest == self.castle or dest == s:
            dest = tower_dest_check(self, s, steps)
        dst = self.stacks[dest - 1]
        if dst and tb.tower_magic[dst[-1]]:
            raise BadDestination(
                f"no tower may be placed on the magic tower (space {dest})", "R-MOD-MAGICTOWER-3"
            )
        return dest

    def landed(self, dest: int, hd: int, moved: int) -> None:
        """R-MOD-RAVEN-7: a covered raven pops up to the new top and gives feathers."""
        if self.raven == dest << 4 | hd:  # inlined model.position: every tower move
            new = position(dest, hd + moved)
            self.raven = new
            self.ev.append(_ev("raven_popped_up", {"space": dest, "tier": hd + moved}))
            raven_arrives(self, new, "raven_popped_up")
