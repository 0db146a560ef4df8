"""Pure rules helpers of the other games a table companion can serve ("packs").

One subpackage per game, each with the counters, tables and orders the companion keeps for it:

* :mod:`companion.packs.siege`: 攻城奇策, a siege race on a grid (rules ``G2-…``);
* :mod:`companion.packs.princess`: *The Princess and Magic Tile* (rules ``G3-…``);
* :mod:`companion.packs.wizwar`: *Wiz-War* (rules ``G4-…``).

The rule ids are explained in ``docs/rules.md``. Like :mod:`companion.rules`, this package does
no I/O, keeps no clock and uses no global random generator: a shuffle or a roll takes a
``random.Random`` (seeded in tests) as an argument. Only the standard library is used, and
nothing of ``companion`` outside this package. Every value is a frozen dataclass; illegal input
raises :class:`PackError` and leaves the old value valid.
"""

from __future__ import annotations

from companion.packs.errors import PackError

__all__ = ["PackError"]
