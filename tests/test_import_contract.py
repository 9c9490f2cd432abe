"""The package table is the architecture: imports point down it, modules never import each other,
and a package (or a room inside one) is reached only through its door.

The table is read from ``docs/development.md`` (its ``depends on`` column): that page is the one
copy. Every module under ``src/`` is parsed (``ast``): imports at the top, inside functions and
under ``TYPE_CHECKING`` all count. A room is a subpackage; its ``__init__`` is its door. The lists
below are what is left of older habits; they may only shrink: an entry that is fixed must be
removed (the test says so), and a new violation fails. The checks are functions of a source tree,
so a test runs them on a small synthetic tree to show what they catch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TABLE_PAGE = ROOT / "docs" / "development.md"


def read_table(text: str) -> dict[str, tuple[str, ...]]:
    """``{package: depends on}`` from the layout table (rows ``| `pkg` | owns | `a`, `b` |``).

    ``all above`` stands for every package in an earlier row.
    """
    table: dict[str, tuple[str, ...]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.fullmatch(r"`[a-z_]+`", cells[0]):
            continue
        deps = re.findall(r"`([a-z_]+)`", cells[2])
        table[cells[0].strip("`")] = (*(tuple(table) if "all above" in cells[2] else ()), *deps)
    return table


# The layout table: each package and what it depends on (arrows point down the table only).
DEPENDS_ON: dict[str, tuple[str, ...]] = read_table(TABLE_PAGE.read_text("utf-8"))
# The top: ``inferwatch/__init__`` (exceptions, ``Monitor`` lazily), ``_exceptions``, ``_env``
# (every environment variable) are below every package; ``__main__`` runs the cli.
TOP_MAY_IMPORT = {"inferwatch": {"sdk"}, "inferwatch.__main__": {"cli"}}

# Upward imports still in the tree (importer module, imported module). May only shrink.
ALLOWED_UPWARD: set[tuple[str, str]] = set()

# Imports of a private module from outside the package or room that holds it (importer,
# imported). May only shrink: export the names from the room's door and import them from there.
ALLOWED_PRIVATE: set[tuple[str, str]] = set()

# ``from module import _name`` across modules (importer, module, name). May only shrink: a name
# another module needs is public in its module (and private to the package by the module's ``_``).
ALLOWED_PRIVATE_NAMES: set[tuple[str, str, str]] = {
    *{(f"inferwatch.model._catalog_{c}", "inferwatch.model._metric_spec", n)
      for c, ns in {"app": "_C _G _H _SVC", "infra": "_C _G _U", "ops": "_C _G", "probe": "_C _G",
                    "runtime": "_C _G _H _SVC"}.items() for n in ns.split()},
    *{("inferwatch.promql._range_eval", "inferwatch.promql._binops", n)
      for n in ("_ARITH", "_CMP", "_DROPS_NAME", "_result_labels", "_sig_fn")},
    ("inferwatch.promql._range_eval", "inferwatch.promql._functions", "_NP"),
}

# Directories holding more than MAX_ROOM_MODULES modules directly. May only shrink (into rooms).
ALLOWED_CROWDED: set[str] = set()
MAX_ROOM_MODULES = 25


@dataclass
class Tree:
    """A source tree (``src``-style: ``root/inferwatch/...``) and its import graph."""

    root: Path
    _graph: dict[str, frozenset[tuple[str, int]]] = field(default_factory=dict, repr=False)

    def name(self, path: Path) -> str:
        parts = list(path.relative_to(self.root).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    @property
    def modules(self) -> dict[str, Path]:
        """Every module under the root, by dotted name."""
        return {self.name(p): p for p in sorted((self.root / "inferwatch").rglob("*.py"))}

    def froms(self, name: str) -> Iterator[tuple[str, str]]:
        """``(module, imported name)`` for every ``from module import name`` in module ``name``."""
        path = self.modules[name]
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    yield node.module, alias.name

    def imports(self, name: str, path: Path) -> Iterator[tuple[str, int]]:
        """``(imported module, line)`` for every import in the file, wherever it is written."""
        mods = self.modules
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield alias.name, node.lineno
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolved against this module's package
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                for alias in node.names:  # ``from pkg import submodule`` imports the submodule
                    sub = f"{base}.{alias.name}"
                    yield (sub if sub in mods else base), node.lineno

    def graph(self) -> dict[str, frozenset[tuple[str, int]]]:
        """Each module's imports of inferwatch modules."""
        if not self._graph:
            ours = {name: [(m, n) for m, n in self.imports(name, path) if m.split(".")[0] == "inferwatch"]
                    for name, path in self.modules.items()}
            self._graph = {name: frozenset(found) for name, found in ours.items()}
        return self._graph

    def package_of(self, module: str) -> str:
        """The package (or room) a module is in: itself for a package's ``__init__``."""
        return module if self.modules[module].name == "__init__.py" else module.rpartition(".")[0]


@cache
def tree() -> Tree:
    return Tree(SRC)


def modules() -> dict[str, Path]:
    return tree().modules


def graph() -> dict[str, frozenset[tuple[str, int]]]:
    return tree().graph()


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and not parts[1].startswith("_") else None


def _allowed(package: str, table: dict[str, tuple[str, ...]]) -> set[str]:
    seen: set[str] = set()
    todo = list(table[package])
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(table[p])
    return seen


def upward(t: Tree, table: dict[str, tuple[str, ...]]) -> set[tuple[str, str]]:
    """Imports of a package not below the importer's in the table."""
    found = set()
    for importer, imports in t.graph().items():
        src = _package(importer)
        for imported, _ in imports:
            dst = _package(imported)
            if dst is None or dst == src:
                continue
            allowed = TOP_MAY_IMPORT.get(importer, set()) if src is None else _allowed(src, table)
            if dst not in allowed:
                found.add((importer, imported))
    return found


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private(t: Tree) -> set[tuple[str, str]]:
    """Imports of a private module from outside the package or room holding it (its door is the way in)."""
    found = set()
    for importer, imports in t.graph().items():
        home = t.package_of(importer)
        for imported, _ in imports:
            parts = imported.split(".")
            for k, part in enumerate(parts):
                if _is_private(part):
                    holder = ".".join(parts[:k])
                    if home != holder and not home.startswith(holder + "."):
                        found.add((importer, imported))
                    break
    return found


def private_names(t: Tree) -> set[tuple[str, str, str]]:
    """``from m import _name`` where ``m`` is another module and ``_name`` is not a module."""
    mods = t.modules
    return {(importer, module, name) for importer in mods for module, name in t.froms(importer)
            if module.startswith("inferwatch") and _is_private(name) and f"{module}.{name}" not in mods}


def crowded(t: Tree) -> dict[str, int]:
    """Directories holding more than MAX_ROOM_MODULES modules directly."""
    counts = {str(d.relative_to(t.root)): len(list(d.glob("*.py")))
              for d in (t.root / "inferwatch").rglob("*") if (d / "__init__.py").is_file()}
    return {d: n for d, n in counts.items() if n > MAX_ROOM_MODULES}


def rooms_without_doors(t: Tree) -> list[str]:
    """Subpackages whose ``__init__`` declares no ``__all__``."""
    return sorted(t.name(p) for p in (t.root / "inferwatch").rglob("__init__.py")
                  if "__all__" not in p.read_text("utf-8"))


def cycles(t: Tree) -> list[list[str]]:
    """Strongly connected sets of more than one module (Tarjan), and modules importing themselves."""
    g = t.graph()
    edges = {m: {i for i, _ in imps if i in g and i != m} for m, imps in g.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_parser_sees_imports_in_functions_and_under_type_checking() -> None:
    # rule: the checker itself: lazy and type-only imports count as imports
    got = {m for m, _ in graph()["inferwatch"]}
    assert "inferwatch.sdk" in got  # inferwatch/__init__ imports Monitor lazily and for TYPE_CHECKING
    assert ("inferwatch.sdk._monitor", "inferwatch.sdk._tracing") in {
        (k, m) for k, v in graph().items() for m, _ in v}  # inside _tracing(): a function-level import


def test_every_package_is_in_the_table() -> None:
    packages = {p for m in modules() if (p := _package(m)) is not None}
    assert packages <= set(DEPENDS_ON), f"add to docs/development.md's table: {packages - set(DEPENDS_ON)}"


def test_no_upward_imports() -> None:
    found = upward(tree(), DEPENDS_ON)
    new = sorted(found - ALLOWED_UPWARD)
    assert not new, "imports up the table (docs/development.md): " + "; ".join(f"{a} -> {b}" for a, b in new)
    fixed = sorted(ALLOWED_UPWARD - found)
    assert not fixed, "fixed, remove from ALLOWED_UPWARD: " + "; ".join(f"{a} -> {b}" for a, b in fixed)


def test_no_two_modules_import_each_other() -> None:
    assert cycles(tree()) == []


def test_private_modules_of_other_packages_only_shrink() -> None:
    found = private(tree())
    new = sorted(found - ALLOWED_PRIVATE)
    assert not new, ("a private module imported from outside its package or room (import its door): "
                     + "; ".join(f"{a} -> {b}" for a, b in new))
    fixed = sorted(ALLOWED_PRIVATE - found)
    assert not fixed, "fixed, remove from ALLOWED_PRIVATE: " + "; ".join(f"{a} -> {b}" for a, b in fixed)


MAX_MODULE_LINES = 400  # issue 30: a module holds one concept; past this it holds two


def test_no_module_is_over_400_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"split these modules (lines): {long}"


MAX_HANDLER_LINES = 40  # issue 45: an API is a class whose methods are its handlers, not one long builder
HANDLER_ROOMS = ("server/api", "server/web")


def long_functions(root: Path, rooms: tuple[str, ...], most: int) -> dict[str, int]:
    """``{"path:function": lines}`` for every function (nested ones too) longer than ``most`` lines."""
    found = {}
    for room in rooms:
        for path in sorted((root / "inferwatch" / room).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    n = (node.end_lineno or node.lineno) - node.lineno + 1
                    if n > most:
                        found[f"{path.relative_to(root)}:{node.name}"] = n
    return found


def test_no_handler_function_is_over_40_lines() -> None:
    long = long_functions(SRC, HANDLER_ROOMS, MAX_HANDLER_LINES)
    assert not long, f"make the API a class whose methods are the handlers (lines): {long}"


def test_the_length_check_catches_a_route_builder(tmp_path: Path) -> None:
    # rule: a builder holding its handlers as closures grows with every endpoint; the check sees it
    handlers = "".join(f"    def h{i}(request):\n        return {i}\n" for i in range(20))
    _write(tmp_path, {"server/api/_x.py": f"def routes(server):\n{handlers}    return []\n"})
    assert long_functions(tmp_path, HANDLER_ROOMS, MAX_HANDLER_LINES) == {
        "inferwatch/server/api/_x.py:routes": 42}


def test_private_names_are_not_imported_across_modules() -> None:
    found = private_names(tree())
    new = sorted(found - ALLOWED_PRIVATE_NAMES)
    assert not new, "a private name imported from another module (make it public there): " + "; ".join(
        f"{a}: from {m} import {n}" for a, m, n in new)
    fixed = sorted(ALLOWED_PRIVATE_NAMES - found)
    assert not fixed, "fixed, remove from ALLOWED_PRIVATE_NAMES: " + "; ".join(
        f"{a}: {m}.{n}" for a, m, n in fixed)


def test_no_directory_holds_more_than_25_modules() -> None:
    found = crowded(tree())
    new = sorted(set(found) - ALLOWED_CROWDED)
    assert not new, f"split into rooms: {[(d, found[d]) for d in new]}"
    fixed = sorted(ALLOWED_CROWDED - set(found))
    assert not fixed, f"fixed, remove from ALLOWED_CROWDED: {fixed}"


def test_every_room_has_a_door() -> None:
    assert rooms_without_doors(tree()) == [], "give the room an __init__ with __all__"


def test_the_table_is_read_from_the_docs() -> None:
    # rule: one copy of the table, the docs page's; "all above" expands to the earlier rows
    assert DEPENDS_ON["alerting"] == ("rules", "settings")
    assert DEPENDS_ON["config"] == ("settings", "alerting")  # the root is assembled above alerting
    assert DEPENDS_ON["model"] == ()
    assert set(DEPENDS_ON["server"]) == set(DEPENDS_ON) - {"server", "demo", "cli"}
    assert {"server", "demo"} <= set(DEPENDS_ON["cli"])


def _write(root: Path, files: dict[str, str]) -> Tree:
    for rel, text in files.items():
        path = root / "inferwatch" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return Tree(root)


def test_the_checks_catch_a_private_import_across_rooms(tmp_path: Path) -> None:
    # rule: a module outside a room goes through its door; a room may use its package's core
    t = _write(tmp_path, {
        "__init__.py": "",
        "pkg/__init__.py": '__all__ = ["Pipeline"]\nfrom inferwatch.pkg._pipeline import Pipeline\n',
        "pkg/_core.py": "class Core: ...\n",
        "pkg/_pipeline.py": ("from inferwatch.pkg.room._impl import Impl\n"
                             "from inferwatch.pkg.room import Door\n"
                             "from inferwatch.pkg.room._impl import _helper\nclass Pipeline: ...\n"),
        "pkg/room/__init__.py": '__all__ = ["Door"]\nfrom inferwatch.pkg.room._impl import Impl as Door\n',
        "pkg/room/_impl.py": ("from inferwatch.pkg._core import Core\n"
                              "class Impl(Core): ...\ndef _helper(): ...\n"),
        "pkg/other/__init__.py": "",
    })
    assert private(t) == {("inferwatch.pkg._pipeline", "inferwatch.pkg.room._impl")}
    assert private_names(t) == {("inferwatch.pkg._pipeline", "inferwatch.pkg.room._impl", "_helper")}
    assert rooms_without_doors(t) == ["inferwatch", "inferwatch.pkg.other"]
    assert cycles(t) == []


def test_the_checks_catch_a_circle_through_a_door(tmp_path: Path) -> None:
    # rule: a door imports its room, so a room importing back through the door closes a circle
    t = _write(tmp_path, {
        "__init__.py": "",
        "pkg/__init__.py": "",
        "pkg/_base.py": "from inferwatch.pkg.room import Door\n",
        "pkg/room/__init__.py": "from inferwatch.pkg.room._impl import Door\n",
        "pkg/room/_impl.py": "from inferwatch.pkg._base import x\n",
    })
    assert cycles(t) == [["inferwatch.pkg._base", "inferwatch.pkg.room", "inferwatch.pkg.room._impl"]]
