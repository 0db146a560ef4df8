"""The vision package's layout: what runs on the Pi stands alone.

Run-time vision code never imports what stands in for the world (``companion.sim``), the
benchmarks (``companion.bench``) or the tests, not even inside a function; the colour fitting
does not import the detector; no module grows past about 800 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import companion.vision

VISION = Path(companion.vision.__file__).parent
MODULES = sorted(VISION.rglob("*.py"))


def _imports(path: Path) -> set[str]:
    """Every module named by an import statement anywhere in the file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_vision_never_imports_sim_bench_or_tests() -> None:
    assert MODULES
    for path in MODULES:
        bad = [
            n
            for n in _imports(path)
            if n.split(".")[:2] in (["companion", "sim"], ["companion", "bench"])
            or n.split(".")[0] == "tests"
        ]
        assert not bad, f"{path.relative_to(VISION)} imports {bad}"


def test_the_colour_fitting_does_not_import_the_detector() -> None:
    for name in ("profile.py", "profile_fit.py"):
        got = _imports(VISION / name)
        assert not [n for n in got if n.startswith("companion.vision.detector")], name


def test_no_vision_module_is_over_800_lines() -> None:
    for path in MODULES:
        n = len(path.read_text(encoding="utf-8").splitlines())
        assert n <= 800, f"{path.relative_to(VISION)}: {n} lines"
