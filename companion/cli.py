"""Command line: ``companion run | demo | rules | calibrate | record | replay | bench``.

Each sub-command lives in its own module and is imported only when used, so that
``companion rules …`` never loads OpenCV and ``companion bench hardware`` never loads Flask.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

# sub-command -> "module:function"; the function takes the remaining argv and returns an exit code.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": (
        "companion.service.cli:run_main",
        "run the companion (simulated table without camera/GPIO)",
    ),
    "demo": ("companion.service.cli:demo_main", "run the embedded simulated table explicitly"),
    "rules": ("companion.rules_cli:main", "rules core: apply, legal, play"),
    "calibrate": (
        "companion.vision.calibrate_cli:main",
        "camera intrinsics, marker sheet, board check, colour profile",
    ),
    "record": ("companion.service.cli:record_main", "run and record a session to a folder"),
    "replay": ("companion.service.cli:replay_main", "replay a recorded session and compare"),
    "bench": ("companion.bench:main", "benchmarks: rules, tracking, vision, render, …"),
}


def _load(target: str) -> Callable[[list[str]], int]:
    module_name, func_name = target.split(":")
    module = importlib.import_module(module_name)
    func: Callable[[list[str]], int] = getattr(module, func_name)
    return func


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
    return _load(COMMANDS[name][0])(rest)
