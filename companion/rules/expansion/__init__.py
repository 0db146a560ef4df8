"""The 2025 expansion (rules §16-§23): Magic Fountain, Spider Web, Witch, Raven, Magic Tower
and the eight expansion spells, in any combination.

A state whose ``modules`` is not None is played by this package: :func:`companion.rules.apply`
and :func:`companion.rules.legal_actions` hand it over here, so the base game's hot path pays
nothing for the modules. The movement rules of the base game (§7, §8) are reused and extended
through one movement path: :mod:`companion.rules.board` moves the pieces and calls the hooks
of the working copy (:class:`~companion.rules.expansion.pieces.MovingPieces`, a
:class:`~companion.rules.board.Pieces`):

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

Files: :mod:`~.start` (track, spells on display, setup), :mod:`~.common` and :mod:`~.pieces`
(the working copy), one file per module (:mod:`~.fountain`, :mod:`~.web`, :mod:`~.witch`,
:mod:`~.raven`, :mod:`~.magic_tower`), :mod:`~.arrival`, :mod:`~.ending`, :mod:`~.moves`,
:mod:`~.feathers`, :mod:`~.spells`, :mod:`~.play` (``apply``), :mod:`~.reach` and
:mod:`~.legal` (the legal actions).
"""

from companion.rules.expansion.feathers import FEATHER_USES
from companion.rules.expansion.legal import generate
from companion.rules.expansion.play import HANDLERS, apply
from companion.rules.expansion.reach import actions_for_card, card_playable, spell_candidates
from companion.rules.expansion.start import (
    FIRST_GAME_SPELLS,
    available_spells,
    expansion_track,
    page_cards,
    resolve_spells,
    setup,
)
from companion.rules.model import MODULES

__all__ = [
    "FEATHER_USES",
    "FIRST_GAME_SPELLS",
    "HANDLERS",
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
    "spell_candidates",
]
