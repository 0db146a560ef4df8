"""The shape of the rules package: pure (imports nothing but the standard library and itself),
no import cycles between its modules, no module reaching into another's underscore names, and
no file over 800 lines."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import companion.rules

ROOT = Path(companion.rules.__file__).parent
PACKAGE = "companion.rules"
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join((PACKAGE, *parts))] = path
    return found


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, imported name or None) of every import in the file, lazy ones included."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [(node.module, a.name) for a in node.names]
    return out


def test_rules_import_only_the_standard_library_and_themselves() -> None:
    for name, path in _modules().items():
        for module, _ in _imports(path):
            top = module.split(".")[0]
            if module.startswith(PACKAGE + ".") or module == PACKAGE:
                continue
            assert top in sys.stdlib_module_names or top == "__future__", (name, module)


def test_no_import_cycles_between_rules_modules() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for module, imported in _imports(path):
            target = f"{module}.{imported}" if f"{module}.{imported}" in modules else module
            # the package __init__ only re-exports; a module's own package is not an edge
            if target in modules and target != PACKAGE and not name.startswith(target + "."):
                graph[name].add(target)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            assert state.get(nxt) != 1, " -> ".join([*trail, node, nxt])
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def test_no_module_uses_another_modules_underscore_names() -> None:
    modules = _modules()
    for name, path in modules.items():
        for module, imported in _imports(path):
            if module.startswith(PACKAGE) and imported is not None:
                assert not imported.startswith("_"), (name, module, imported)
        aliases = {
            a.asname or a.name
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and node.module == PACKAGE
            for a in node.names
        }
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                assert not node.attr.startswith("_"), (name, node.value.id, node.attr)


def test_no_rules_file_is_over_800_lines() -> None:
    for name, path in _modules().items():
        lines = len(path.read_text().splitlines())
        assert lines <= MAX_LINES, (name, lines)
