"""The service is a run-time package: it never imports what stands in for the world
(``companion.sim``), the benchmarks or the tests, not even inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "companion" / "service"
FORBIDDEN = ("companion.sim", "companion.bench", "tests")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_service_imports_no_simulation_bench_or_test_module():
    files = sorted(SERVICE.glob("*.py"))
    assert files
    bad = {f.name: sorted(m for m in imported_modules(f) if m.startswith(FORBIDDEN)) for f in files}
    assert {name: mods for name, mods in bad.items() if mods} == {}
