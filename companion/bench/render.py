"""``companion bench render [--frames N] [--seed S] [--session]``: time per rendered frame.

A thin entry to ``python -m companion.sim.render time`` so every benchmark sits under
``companion bench``.
"""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from companion.sim.render.cli import main as render_main

    rc: int = render_main(["time", *argv])
    return rc
