"""``companion bench fuzz``: every input kind with random and broken inputs
(the cases are :mod:`companion.sim.fuzzing`; this is its command line).
"""

from __future__ import annotations

import argparse
import json

from companion.sim.fuzzing import KINDS, run
from companion.sim.fuzzing import __doc__ as DOC


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="companion bench fuzz", description=(DOC or "").split("\n")[0]
    )
    ap.add_argument("--cases", type=int, default=500, help="inputs per kind (default 500)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kind", action="append", choices=sorted(KINDS), help="only these kinds")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    result = run(a.cases, a.seed, a.kind)
    bad = 0
    if a.json:
        print(json.dumps({k: v.__dict__ for k, v in result.items()}, indent=1))
    for name, tl in result.items():
        bad += tl.tracebacks + tl.accepted_invalid + tl.changed_after_reject
        if not a.json:
            print(
                f"{name:12s} cases {tl.cases:5d} (invalid by construction {tl.invalid}, refused "
                f"{tl.refused})  tracebacks {tl.tracebacks}  accepted invalid "
                f"{tl.accepted_invalid}  changed after a refusal {tl.changed_after_reject}"
            )
            for e in tl.examples:
                print(f"    {e}")
    return 0 if bad == 0 else 1
