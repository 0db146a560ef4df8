"""``companion bench AREA …``: benchmarks that print figures (never timed tests).

Each area is a module ``companion.bench.<area>`` with ``main(argv) -> int``.
"""

from __future__ import annotations

import importlib
import sys

AREAS = (
    "rules",
    "tracking",
    "vision",
    "render",
    "hardware",
    "web",
    "phones",
    "fuzz",
    "e2e",
    "restart",
    "views",
    "packs",
)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in AREAS:
        print(f"usage: companion bench {{{'|'.join(AREAS)}}} [options]", file=sys.stderr)
        return 2
    module = importlib.import_module(f"companion.bench.{argv[0]}")
    rc: int = module.main(argv[1:])
    return rc
