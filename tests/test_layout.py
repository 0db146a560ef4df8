"""The package layout, checked on the import graph of ``companion`` (see ``docs/architecture.md``).

Every ``import`` / ``from … import`` in ``companion/**`` is read with :mod:`ast` — at module
level, under ``if TYPE_CHECKING:`` and inside functions alike — and resolved to the module it
loads (``from companion.rules import engine`` is an edge to ``companion.rules.engine``,
``from companion.rules import GameState`` one to ``companion.rules``). Module names given as
strings to :func:`importlib.import_module` (or kept in a file that imports :mod:`importlib`,
such as a table of parts loaded by name) are edges too: a lazy import is still an import.

The rules of the layout:

* no cycle among companion modules;
* ``companion.rules`` imports nothing of companion but itself; ``companion.tracking`` only
  itself and ``companion.rules``; ``companion.packs`` (the other games' rules) only itself and
  the standard library;
* the run-time packages (rules, tracking, packs, vision, hardware, web, service) and the modules
  ``companion.journal`` and ``companion.config`` never import ``companion.sim``,
  ``companion.bench`` or the tests; ``companion.web`` never imports ``companion.service``;
* nothing in companion imports the tests, and no test imports ``companion.bench`` (benches
  import anything and are imported by nothing);
* the pure packages (rules, tracking, packs) use no camera, GPIO, web, serial, database, socket,
  thread or clock module, and no global random generator (``random.random()``,
  ``random.shuffle(…)``, ``np.random.rand(…)``): randomness comes in as a seeded
  ``random.Random``;
* no file in ``companion/`` is longer than 800 lines, except the generated data listed in
  :data:`GENERATED`;
* ``python3 dev.py test`` type-checks the whole package with ``mypy --strict companion``;
* every rule id cited in ``companion/`` (``R-…``, ``OPEN-nn``, and ``G2-…``/``G3-…``/``G4-…``
  of the other games) is explained in ``docs/rules.md``.

Each failure names the offending edge as ``importer -> imported (file:line, how)``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "companion"
TESTS = REPO / "tests"

MAX_LINES = 800
"""Longest file allowed in ``companion/`` (lines)."""

GENERATED: dict[str, str] = {
    "companion/vision/detect_height.json": (
        "weights of the tower-height network, written by its training run, not edited by hand"
    ),
}
"""Generated data exempt from :data:`MAX_LINES` (repository path -> why it is exempt)."""

TEXT_SUFFIXES = {".py", ".html", ".js", ".css", ".svg", ".toml", ".json", ".md", ".txt"}
"""The files in ``companion/`` whose length is checked (source, templates, assets, data)."""

RUN_TIME_PACKAGES = ("rules", "tracking", "packs", "vision", "hardware", "web", "service")
RUN_TIME_MODULES = ("journal", "config")
PURE_PACKAGES = ("rules", "tracking", "packs")
STAND_INS = ("companion.sim", "companion.bench", "tests")
"""What run-time code never imports: the simulated world, the benches, the tests."""

IMPURE_MODULES = {
    "cv2": "camera images",
    "gpiozero": "GPIO",
    "flask": "web",
    "serial": "serial port",
    "sqlite3": "database",
    "socket": "network",
    "threading": "threads",
    "time": "clock",
}
"""Modules the pure packages never import (top-level name -> what it brings in)."""

SEEDED_RANDOM = {"Random"}
"""What the pure packages may take from :mod:`random`: the seeded generator class only."""

SEEDED_NUMPY_RANDOM = {"default_rng", "Generator", "PCG64", "SeedSequence", "RandomState"}
"""What of :mod:`numpy.random` makes a seeded generator (anything else uses the global one)."""

MODULE_NAME = re.compile(r"companion(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")
RULE_ID = re.compile(r"\b(?:R-[A-Z]+(?:-[A-Z]+)*-[0-9]+|OPEN-[0-9]+|G[0-9]-[A-Z]+-[0-9]+)\b")


@dataclass(frozen=True, order=True)
class Edge:
    """One import: ``source`` loads ``target`` at ``path:line``.

    ``target`` is a companion module name when the import is of companion, otherwise the name
    as written (``cv2``, ``numpy.random``, ``tests.rules.conftest``). ``how`` is ``"module
    level"``, ``"TYPE_CHECKING"``, ``"in a function"`` or ``"by name"`` (a string given to
    :mod:`importlib`).
    """

    source: str
    target: str
    path: str
    line: int
    how: str

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} ({self.path}:{self.line}, {self.how})"


@dataclass(frozen=True)
class Call:
    """A call of a global random function: ``random.shuffle`` at ``path:line``."""

    module: str
    name: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.module} calls the global {self.name}() ({self.path}:{self.line})"


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def module_name(path: Path) -> str:
    """``companion/rules/engine.py`` -> ``companion.rules.engine``; a package is its folder."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


COMPANION_FILES = _sources(PACKAGE)
COMPANION_MODULES = {module_name(p) for p in COMPANION_FILES}


def resolve(name: str) -> str:
    """The companion module that importing ``name`` loads (longest known prefix).

    Names outside companion are returned as written; so is a companion name that no file
    provides (the import would fail, which the tests of that area report).
    """
    if name != "companion" and not name.startswith("companion."):
        return name
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in COMPANION_MODULES:
            return candidate
        parts.pop()
    return name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_module_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in {"import_module", "__import__"}


class _Imports(ast.NodeVisitor):
    """Collects the import edges of one file, and its calls of global random functions."""

    def __init__(self, path: Path, *, strings: bool = True, source: str | None = None) -> None:
        self.path = path
        self.strings = strings
        self.source = path.read_text(encoding="utf-8") if source is None else source
        self.rel = _rel(path)
        self.module = module_name(path)
        self.is_package = path.name == "__init__.py"
        self.edges: set[Edge] = set()
        self.random_calls: list[Call] = []
        self._how = ["module level"]
        self._random_names: set[str] = set()  # local names bound to the random module
        self._numpy_names: set[str] = set()  # local names bound to numpy
        self._by_name = False  # the file imports importlib: module-name strings are imports

    def run(self) -> _Imports:
        tree = ast.parse(self.source, filename=self.rel)
        self._by_name = self.strings and any(
            (isinstance(n, ast.Import) and any(a.name.startswith("importlib") for a in n.names))
            or (isinstance(n, ast.ImportFrom) and (n.module or "").startswith("importlib"))
            for n in ast.walk(tree)
        )
        self.visit(tree)
        return self

    def _add(self, target: str, node: ast.AST, how: str | None = None) -> None:
        line = getattr(node, "lineno", 0)
        self.edges.add(Edge(self.module, target, self.rel, line, how or self._how[-1]))

    def _nested(self, how: str, nodes: Iterable[ast.AST]) -> None:
        self._how.append(how)
        for node in nodes:
            self.visit(node)
        self._how.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # decorators and defaults run where the function is defined, the body when called
        for outer in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if outer is not None:
                self.visit(outer)
        self._nested("in a function", node.body)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._nested("in a function", [node.body])

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._nested("TYPE_CHECKING", node.body)
            self._nested(self._how[-1], node.orelse)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(resolve(alias.name), node)
            bound = alias.asname or alias.name.split(".")[0]
            if alias.name == "random":
                self._random_names.add(bound)
            elif alias.name == "numpy":
                self._numpy_names.add(bound)

    def _base(self, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        package = self.module.split(".")
        if not self.is_package:
            package.pop()
        package = package[: len(package) - (node.level - 1)]
        return ".".join([*package, *([node.module] if node.module else [])])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._base(node)
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if alias.name != "*" and submodule in COMPANION_MODULES:
                self._add(submodule, node)
            else:
                self._add(resolve(base), node)
            if base == "random" and alias.name not in SEEDED_RANDOM:
                self.random_calls.append(
                    Call(self.module, f"random.{alias.name}", self.rel, node.lineno)
                )
            if base == "numpy.random" and alias.name not in SEEDED_NUMPY_RANDOM:
                self.random_calls.append(
                    Call(self.module, f"numpy.random.{alias.name}", self.rel, node.lineno)
                )

    def visit_Call(self, node: ast.Call) -> None:
        if (
            _import_module_call(node)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            self._add(resolve(node.args[0].value.split(":")[0]), node, "by name")
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = func.value
            if (
                isinstance(owner, ast.Name)
                and owner.id in self._random_names
                and func.attr not in SEEDED_RANDOM
            ):
                self.random_calls.append(
                    Call(self.module, f"random.{func.attr}", self.rel, node.lineno)
                )
            if (
                isinstance(owner, ast.Attribute)
                and owner.attr == "random"
                and isinstance(owner.value, ast.Name)
                and owner.value.id in self._numpy_names
                and func.attr not in SEEDED_NUMPY_RANDOM
            ):
                self.random_calls.append(
                    Call(self.module, f"numpy.random.{func.attr}", self.rel, node.lineno)
                )
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if self._by_name and isinstance(node.value, str) and MODULE_NAME.fullmatch(node.value):
            self._add(resolve(node.value.split(":")[0]), node, "by name")


def _scan(files: Iterable[Path], *, strings: bool = True) -> list[_Imports]:
    """The imports of ``files``; ``strings``: count module names in strings of files that
    import :mod:`importlib` (off for the tests, which name modules in their messages)."""
    return [_Imports(path, strings=strings).run() for path in files]


COMPANION = _scan(COMPANION_FILES)
EDGES = sorted(edge for scanned in COMPANION for edge in scanned.edges)


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _edges_from(package: str) -> Iterator[Edge]:
    return (edge for edge in EDGES if _inside(edge.source, package))


def _fail(title: str, offending: Iterable[object]) -> None:
    lines = sorted({str(item) for item in offending})
    if lines:
        pytest.fail(f"{title} ({len(lines)}):\n  " + "\n  ".join(lines), pytrace=False)


def _cycles() -> list[list[str]]:
    """The strongly connected groups of two or more companion modules (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for edge in EDGES:
        if edge.target in COMPANION_MODULES and edge.target != edge.source:
            graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:  # recursion depth is bounded by the module count
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(COMPANION_MODULES):
        if node not in index:
            connect(node)
    return sorted(groups)


def _shortest_cycle(group: list[str]) -> list[Edge]:
    """One shortest cycle through the group's first module, as its edges."""
    members = set(group)
    by_pair: dict[tuple[str, str], Edge] = {}
    for edge in EDGES:
        if edge.source in members and edge.target in members and edge.source != edge.target:
            by_pair.setdefault((edge.source, edge.target), edge)
    start = group[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for source, target in sorted(by_pair):
            if source != node:
                continue
            if target == start:
                path = [by_pair[(node, start)]]
                while node != start:
                    prev = came_from[node]
                    path.append(by_pair[(prev, node)])
                    node = prev
                return path[::-1]
            if target not in came_from:
                came_from[target] = node
                queue.append(target)
    return []


def test_no_import_cycles() -> None:
    groups = _cycles()
    report = []
    for group in groups:
        cycle = "\n      ".join(str(edge) for edge in _shortest_cycle(group))
        report.append(f"{len(group)} modules: {', '.join(group)}\n    e.g.\n      {cycle}")
    _fail("import cycles among companion modules", report)


def test_rules_imports_nothing_of_companion_but_rules() -> None:
    _fail(
        "companion.rules imports other companion modules",
        (
            edge
            for edge in _edges_from("companion.rules")
            if _inside(edge.target, "companion") and not _inside(edge.target, "companion.rules")
        ),
    )


def test_tracking_imports_only_rules_and_itself() -> None:
    allowed = ("companion.rules", "companion.tracking")
    _fail(
        "companion.tracking imports companion modules other than rules and tracking",
        (
            edge
            for edge in _edges_from("companion.tracking")
            if _inside(edge.target, "companion")
            and not any(_inside(edge.target, ok) for ok in allowed)
        ),
    )


def test_packs_import_only_themselves_and_the_standard_library() -> None:
    _fail(
        "companion.packs imports other companion modules or third-party code",
        (
            edge
            for edge in _edges_from("companion.packs")
            if not _inside(edge.target, "companion.packs")
            and edge.target.split(".")[0] not in sys.stdlib_module_names
        ),
    )


def test_run_time_code_never_imports_sim_bench_or_tests() -> None:
    run_time = [f"companion.{name}" for name in (*RUN_TIME_PACKAGES, *RUN_TIME_MODULES)]
    _fail(
        "run-time code imports what stands in for the world, a bench or the tests",
        (
            edge
            for edge in EDGES
            if any(_inside(edge.source, package) for package in run_time)
            and any(_inside(edge.target, stand_in) for stand_in in STAND_INS)
        ),
    )


def test_web_never_imports_service() -> None:
    _fail(
        "companion.web imports companion.service (the service wires the web, not back)",
        (
            edge
            for edge in _edges_from("companion.web")
            if _inside(edge.target, "companion.service")
        ),
    )


def test_nothing_in_companion_imports_the_tests() -> None:
    _fail(
        "companion imports the tests",
        (
            edge
            for edge in EDGES
            if _inside(edge.target, "tests") or _inside(edge.target, "conftest")
        ),
    )


def test_no_test_imports_a_bench() -> None:
    tests = _scan(_sources(TESTS), strings=False)
    _fail(
        "tests import companion.bench (move what they need to companion.sim)",
        (
            edge
            for scanned in tests
            for edge in scanned.edges
            if _inside(edge.target, "companion.bench")
        ),
    )


def test_pure_packages_use_no_io_clock_threads_or_global_random() -> None:
    impure = [
        f"{edge} brings in {IMPURE_MODULES[edge.target.split('.')[0]]}"
        for package in PURE_PACKAGES
        for edge in _edges_from(f"companion.{package}")
        if edge.target.split(".")[0] in IMPURE_MODULES
    ]
    global_random = [
        call
        for scanned in COMPANION
        if any(_inside(scanned.module, f"companion.{package}") for package in PURE_PACKAGES)
        for call in scanned.random_calls
    ]
    _fail("the pure packages (rules, tracking, packs) do I/O, keep time or use threads", impure)
    _fail(
        "the pure packages use the global random generator (take a seeded random.Random)",
        global_random,
    )


def test_no_file_in_companion_over_800_lines() -> None:
    too_long = []
    for path in sorted(PACKAGE.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES or "__pycache__" in path.parts:
            continue
        rel = _rel(path)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and rel not in GENERATED:
            too_long.append(f"{rel}: {lines} lines")
    _fail(f"files in companion/ over {MAX_LINES} lines (split them)", too_long)


def test_generated_exceptions_exist() -> None:
    missing = [rel for rel in GENERATED if not (REPO / rel).is_file()]
    assert not missing, f"GENERATED lists files that are gone: {missing}"


def _dev() -> ModuleType:
    """The repository's ``dev.py``, loaded as a module."""
    spec = importlib.util.spec_from_file_location("dev", REPO / "dev.py")
    assert spec is not None and spec.loader is not None
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    return dev


def test_dev_py_type_checks_the_whole_package() -> None:
    targets = _dev().mypy_targets()
    if targets != ["companion"]:
        pytest.fail(
            f"dev.py test runs `mypy --strict {' '.join(targets)}`, not `mypy --strict companion`; "
            "the whole package must stay strict-clean (MYPY_TARGETS in dev.py)",
            pytrace=False,
        )


def test_every_test_dev_py_leaves_out_is_run_by_ci() -> None:
    """``python3 dev.py test`` leaves out the markers of long tests to stay within six
    minutes; each of them is run by ``.ci/run`` all the same."""
    dev = _dev()
    args = dev.pytest_args([])
    chosen = args[args.index("-m") + 1]
    left_out = re.findall(r"not (\w+)", chosen)
    assert set(left_out) == {"e2e", "long"}, chosen
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    missing = [m for m in left_out if not re.search(rf"^python3 dev.py test -m {m}\b", ci, re.M)]
    assert not missing, f".ci/run never runs the tests marked {missing}"
    assert dev.pytest_args(["-m", "long"])[-2:] == ["-m", "long"]


def cited_rule_ids() -> dict[str, list[str]]:
    """Rule id -> the companion files (``path:line``) that cite it."""
    cited: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES or "__pycache__" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for rule_id in RULE_ID.findall(line):
                cited[rule_id].append(f"{_rel(path)}:{number}")
    return cited


def test_every_cited_rule_id_is_in_docs_rules() -> None:
    documented = set(RULE_ID.findall((REPO / "docs" / "rules.md").read_text(encoding="utf-8")))
    _fail(
        "rule ids cited in companion/ but not explained in docs/rules.md",
        (
            f"{rule_id} (cited at {', '.join(places[:3])}{' …' if len(places) > 3 else ''})"
            for rule_id, places in cited_rule_ids().items()
            if rule_id not in documented
        ),
    )


PROBE = """
from __future__ import annotations

import importlib
import random
from typing import TYPE_CHECKING

import numpy as np

from . import engine
from .model import Config

if TYPE_CHECKING:
    from companion.vision.detector import Detector

PARTS = {"bots": "companion.sim.bots:main"}


def lazy() -> None:
    import time
    from companion.bench import vision

    importlib.import_module("companion.service.app")
    random.shuffle([1, 2])
    random.Random(3).shuffle([1, 2])
    np.random.rand(2)
    np.random.default_rng(3)
"""


def test_the_scanner_sees_every_kind_of_import() -> None:
    """The graph is only as good as the scanner: lazy, type-only, relative and by-name imports
    and global random calls of a probe module are all found, with the right line and kind."""
    probe = _Imports(PACKAGE / "rules" / "probe.py", source=PROBE).run()
    found = {(edge.target, edge.line, edge.how) for edge in probe.edges}
    assert {
        ("companion.rules.engine", 10, "module level"),
        ("companion.rules.model", 11, "module level"),
        ("companion.vision.detector", 14, "TYPE_CHECKING"),
        ("companion.sim.bots", 16, "by name"),
        ("time", 20, "in a function"),
        ("companion.bench.vision", 21, "in a function"),
        ("companion.service.app", 23, "by name"),
    } <= found
    assert [(call.name, call.line) for call in probe.random_calls] == [
        ("random.shuffle", 24),
        ("numpy.random.rand", 26),
    ]
