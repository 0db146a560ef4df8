"""Command line: ``companion run | demo | rules | calibrate | record | replay | bench``.

This is the composition root: the only run-time module that may reach ``companion.sim``. It
hands the service the simulated table (``companion.sim.simulation.SimulatedTable``) that
``companion run`` uses without a camera and ``companion demo`` always.

Each sub-command imports its modules only when it runs, so that ``companion rules …`` never
loads OpenCV and ``companion bench hardware`` never loads Flask.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


def _starting(argv: list[str]) -> None:
    """Say at once that the companion is starting: loading OpenCV, Flask and the tracker takes
    seconds on a Pi or a fresh clone, and the next line comes only once they are loaded."""
    if not {"-h", "--help"} & set(argv):
        print("companion: starting (loading OpenCV, Flask and the tracker) …", flush=True)


def _run(argv: list[str]) -> int:
    _starting(argv)
    # imported here: the service loads OpenCV, Flask and the tracker
    from companion.service.cli import run_main
    from companion.sim.simulation import SimulatedTable

    return run_main(argv, simulation=SimulatedTable)


def _demo(argv: list[str]) -> int:
    _starting(argv)
    from companion.service.cli import demo_main  # OpenCV, Flask, the tracker: see _run
    from companion.sim.simulation import SimulatedTable

    return demo_main(argv, simulation=SimulatedTable)


def _record(argv: list[str]) -> int:
    _starting(argv)
    from companion.service.cli import record_main  # OpenCV, Flask, the tracker: see _run
    from companion.sim.simulation import SimulatedTable

    return record_main(argv, simulation=SimulatedTable)


def _replay(argv: list[str]) -> int:
    from companion.service.cli import replay_main  # OpenCV and the tracker: see _run

    return replay_main(argv)


def _rules(argv: list[str]) -> int:
    from companion.rules_cli import main  # the rules core alone, nothing heavy

    return main(argv)


def _calibrate(argv: list[str]) -> int:
    from companion.vision.calibrate_cli import main  # OpenCV, only for calibrating

    return main(argv)


def _bench(argv: list[str]) -> int:
    from companion.bench import main  # each bench imports what it measures

    return main(argv)


COMMANDS: dict[str, tuple[Callable[[list[str]], int], str]] = {
    "run": (_run, "run the companion (simulated table without camera/GPIO)"),
    "demo": (_demo, "run the embedded simulated table explicitly"),
    "rules": (_rules, "rules core: apply, legal, play"),
    "calibrate": (_calibrate, "camera intrinsics, marker sheet, board check, colour profile"),
    "record": (_record, "run and record a session to a folder"),
    "replay": (_replay, "replay a recorded session and compare"),
    "bench": (_bench, "benchmarks: rules, tracking, vision, render, …"),
}
"""Sub-command -> (entry point taking the remaining argv and returning an exit code, help)."""


def usage() -> str:
    lines = ["usage: companion COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"companion: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    return COMMANDS[name][0](rest)
