#!/usr/bin/env python3
"""Bootstrap and run the companion with nothing but Python 3.11+.

    python3 dev.py run [companion args]   start the companion (simulated table without camera/GPIO)
    python3 dev.py test [pytest args]     ruff, mypy --strict, then the test suite on two workers
                                          without the end-to-end games (marker ``e2e``) and
                                          the long tests (marker ``long``)
    python3 dev.py test -m long           only the long tests (tracker replays of recorded games)
    python3 dev.py test -m e2e -n 0       only the end-to-end games, one at a time
                                          (CI runs all three: .ci/run)

On first use (and whenever pyproject.toml changes) it creates ``.venv`` beside this file and
installs the project into it: ``run`` installs what running needs (``pip install -e .``),
``test`` adds the dev dependencies (``pip install -e .[dev]``; ``onnx`` among them). The
``train`` extra (PyTorch, for the tower-count CNN's trainer) is not installed: the one test that
trains with it says so and skips; CI installs the extra and runs the training tests too.

``test`` passes its arguments to pytest. Unless they choose markers (``-m``) it leaves out the
``e2e`` and ``long`` tests; unless they set ``-n`` it runs on ``WORKERS`` pytest-xdist workers.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed-from"
# `test` runs `mypy --strict` on these (tests/test_layout.py checks it is the whole package).
MYPY_TARGETS = ["companion"]
# pytest-xdist workers for `test`: the suite is CPU-bound and its tests independent, so two
# workers halve its time on a 2-core machine.
WORKERS = "2"
# Markers `test` leaves out unless the arguments choose markers with -m: the end-to-end games
# and the long tests (tracker replays of recorded games, each 8-75 s), which would take the
# suite past six minutes on two cores (592 s with them, measured). CI runs both (.ci/run).
DEFAULT_MARKERS = "not e2e and not long"


def _sh(*cmd: str | Path) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    proc = subprocess.Popen([str(c) for c in cmd], cwd=ROOT)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reaches the child too; let it stop cleanly
        return proc.wait()


def mypy_targets() -> list[str]:
    """What ``test`` hands to ``mypy --strict``."""
    return list(MYPY_TARGETS)


def pytest_args(args: list[str]) -> list[str]:
    """``args`` plus the defaults of ``test``: xdist workers and no ``e2e`` or ``long`` tests
    unless chosen."""
    extra: list[str] = []
    if not any(a.startswith(("-n", "--numprocesses")) for a in args):
        # work stealing: a worker that runs out takes tests from the other's queue, so the
        # suite does not end on one worker's long tracker replays (362 s -> 316 s here)
        extra += ["-n", WORKERS, "--dist", "worksteal"]
    if not any(a.startswith("-m") for a in args):
        extra += ["-m", DEFAULT_MARKERS]
    return [*extra, *args]


def ensure_venv(dev: bool) -> None:
    """Create ``.venv`` and install the project (``.[dev]`` when ``dev``) unless already
    done.

    The stamp records the hash of pyproject.toml and whether the dev extras are in, so a
    changed pyproject.toml, or ``test`` after ``run``, installs again.
    """
    if sys.version_info < (3, 11):
        sys.exit("Python 3.11 or newer is needed (found %s)" % sys.version.split()[0])
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    done = STAMP.read_text().split() if PY.exists() and STAMP.exists() else []
    if done[:1] == [digest] and (not dev or "dev" in done[1:]):
        return
    if not PY.exists():
        print(f"creating {VENV.name}/ ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if _sh(PY, "-m", "pip", "install", "--upgrade", "pip") != 0:
        sys.exit("pip upgrade failed")
    if _sh(PY, "-m", "pip", "install", "-e", ".[dev]" if dev else ".") != 0:
        sys.exit("installing the project into .venv failed")
    STAMP.write_text(f"{digest} dev\n" if dev else f"{digest}\n")


def run(args: list[str]) -> int:
    return _sh(PY, "-m", "companion", "run", *args)


def test(args: list[str]) -> int:
    steps: list[tuple[str, list[str | Path]]] = [
        ("ruff", [PY, "-m", "ruff", "check", "companion", "tests"]),
        ("mypy --strict", [PY, "-m", "mypy", "--strict", *mypy_targets()]),
        ("pytest", [PY, "-m", "pytest", *pytest_args(args)]),
    ]
    for name, cmd in steps:
        rc = _sh(*cmd)
        if rc != 0:
            print(f"FAILED: {name} (exit {rc})", flush=True)
            return rc
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test"}:
        print(__doc__)
        return 2
    ensure_venv(dev=argv[0] == "test")
    return run(argv[1:]) if argv[0] == "run" else test(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
