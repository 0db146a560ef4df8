"""`companion bench fuzz` (companion.sim.fuzzing), a few cases of every input kind: no traceback,
no invalid input taken, nothing changed by a refused one (the full run is a benchmark)."""

from __future__ import annotations

import pytest

from companion.sim.fuzzing import KINDS, run


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_few_cases_of_every_input_kind(kind: str) -> None:
    tally = run(cases=25, seed=5, kinds=[kind])[kind]
    assert tally.cases == 25
    assert tally.refused > 0  # the cases are mostly bad inputs: some must have been refused
    assert (tally.tracebacks, tally.accepted_invalid, tally.changed_after_reject) == (0, 0, 0), (
        tally.examples
    )
