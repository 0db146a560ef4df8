"""The one error of the game packs: a value a rule forbids.

Every helper in :mod:`companion.packs` is pure: values are frozen, an operation returns a new
value, and an illegal input raises :class:`PackError` before anything is built, so the old
value is still valid.
"""

from __future__ import annotations


class PackError(ValueError):
    """An input a pack's rules forbid.

    The message names the field (``field``) and the rule id (``rule``, e.g. ``G2-TOK-1``), then
    says what was wrong: ``"hp: G4-HP-1: must be in 0..15, got -1"``.
    """

    def __init__(self, field: str, rule: str, detail: str) -> None:
        super().__init__(f"{field}: {rule}: {detail}")
        self.field = field
        self.rule = rule
        self.detail = detail
