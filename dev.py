#!/usr/bin/env python3
"""Bootstrap and run the companion with nothing but Python 3.11+.

    python3 dev.py run [companion args]   start the companion (simulated table without camera/GPIO)
    python3 dev.py test [pytest args]     lint, type-check the rules core, run the whole test suite

On first use (and whenever pyproject.toml changes) it creates ``.venv`` beside this file and
installs the project with its dev dependencies into it.
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
# What `mypy --strict` checks; the goal is the whole `companion` package.
STRICT = ["companion/rules", "companion/tracking", "companion/sim/bots.py", "companion/sim/simulate.py"]


def _sh(*cmd: str | Path) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    proc = subprocess.Popen([str(c) for c in cmd], cwd=ROOT)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reaches the child too; let it stop cleanly
        return proc.wait()


def ensure_venv() -> None:
    """Create ``.venv`` and install ``.[dev]`` unless pyproject.toml is unchanged since."""
    if sys.version_info < (3, 11):
        sys.exit("Python 3.11 or newer is needed (found %s)" % sys.version.split()[0])
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if PY.exists() and STAMP.exists() and STAMP.read_text().strip() == digest:
        return
    if not PY.exists():
        print(f"creating {VENV.name}/ ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if _sh(PY, "-m", "pip", "install", "--upgrade", "pip") != 0:
        sys.exit("pip upgrade failed")
    if _sh(PY, "-m", "pip", "install", "-e", ".[dev]") != 0:
        sys.exit("installing the project into .venv failed")
    STAMP.write_text(digest)


def run(args: list[str]) -> int:
    return _sh(PY, "-m", "companion", "run", *args)


def test(args: list[str]) -> int:
    steps: list[tuple[str, list[str | Path]]] = [
        ("ruff", [PY, "-m", "ruff", "check", "companion", "tests"]),
        ("mypy --strict", [PY, "-m", "mypy", "--strict", *STRICT]),
        ("pytest", [PY, "-m", "pytest", *args]),
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
    ensure_venv()
    return run(argv[1:]) if argv[0] == "run" else test(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
