"""``companion bench phones``: phones that come and go against the event streams
(the simulation is :mod:`companion.sim.phones`; this is its command line).
"""

from __future__ import annotations

import argparse
import json
import sys

from companion.sim.phones import __doc__ as DOC
from companion.sim.phones import run


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="companion bench phones", description=(DOC or "").split("\n")[0]
    )
    p.add_argument("--url", default="", help="a running companion (default: a fake table)")
    p.add_argument("--phones", type=int, default=20)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--churn", type=float, default=30.0, help="mean s between churn events")
    p.add_argument("--quiet", type=float, default=40.0, help="s without churn at the end")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--period", type=float, default=1.0, help="fake table: s between changes")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    figures = run(a.url, a.phones, a.seconds, a.churn, a.quiet, a.seed, a.period)
    if a.json:
        print(json.dumps(figures, indent=1))
    else:
        for k, v in figures.items():
            print(f"{k}: {v}")
    ok = figures["stuck_on_polling"] == 0 and figures["missed_on_live_streams"] == 0
    sys.stdout.flush()
    return 0 if ok else 1
