"""The package table is the architecture: imports point down it, modules never import each other,
and a package reaches another only through its public names.

Every module under ``src/`` is parsed (``ast``): imports at the top, inside functions and under
``TYPE_CHECKING`` all count. The two lists below are what is left of older habits; they may only
shrink: an entry that is fixed must be removed (the test says so), and a new violation fails.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# DESIGN.md's table: each package and what it depends on (arrows point down the table only).
DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "model": (),
    "config": ("model",),
    "sdk": ("model",),
    "quality": ("model",),
    "business": ("model",),
    "collect": ("model",),
    "store": ("model",),
    "promql": ("store",),
    "rules": ("promql", "store", "config"),
    "baseline": ("model",),
    "slo": ("rules", "config"),
    "alerting": ("rules", "config"),
    "tracing": ("sdk", "store"),
    "edge": ("model", "collect"),
    "diagnose": ("collect", "store"),
    "export": ("rules", "alerting"),
}
_ABOVE_SERVER = tuple(DEPENDS_ON)
DEPENDS_ON["server"] = _ABOVE_SERVER  # all above
DEPENDS_ON["demo"] = (*_ABOVE_SERVER, "server")
DEPENDS_ON["cli"] = (*_ABOVE_SERVER, "server", "demo")
# The top: ``inferwatch/__init__`` (exceptions, ``Monitor`` lazily), ``_exceptions``, ``_env``
# (every environment variable) are below every package; ``__main__`` runs the cli.
TOP_MAY_IMPORT = {"inferwatch": {"sdk"}, "inferwatch.__main__": {"cli"}}

# Upward imports still in the tree (importer module, imported module). May only shrink.
ALLOWED_UPWARD: set[tuple[str, str]] = set()

# Imports of another package's private module (importer, imported). May only shrink: re-export
# the names from the package's ``__init__`` (and its ``__all__``) and import them from there.
ALLOWED_PRIVATE: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    """Every module under src/, by dotted name."""
    return {_module_name(p): p for p in sorted((SRC / "inferwatch").rglob("*.py"))}


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for every import in the file, wherever it is written."""
    mods = modules()
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


@cache
def graph() -> dict[str, frozenset[tuple[str, int]]]:
    """Each module's imports of inferwatch modules."""
    return {name: frozenset((m, line) for m, line in _imports(name, path) if m.split(".")[0] == "inferwatch")
            for name, path in modules().items()}


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and not parts[1].startswith("_") else None


def _allowed(package: str) -> set[str]:
    seen: set[str] = set()
    todo = list(DEPENDS_ON[package])
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(DEPENDS_ON[p])
    return seen


def _upward() -> set[tuple[str, str]]:
    found = set()
    for importer, imports in graph().items():
        src = _package(importer)
        for imported, _ in imports:
            dst = _package(imported)
            if dst is None or dst == src:
                continue
            allowed = TOP_MAY_IMPORT.get(importer, set()) if src is None else _allowed(src)
            if dst not in allowed:
                found.add((importer, imported))
    return found


def _private() -> set[tuple[str, str]]:
    found = set()
    for importer, imports in graph().items():
        for imported, _ in imports:
            src, dst = _package(importer), _package(imported)
            if src is not None and dst is not None and src != dst and any(
                    part.startswith("_") for part in imported.split(".")[2:]):
                found.add((importer, imported))
    return found


def _cycles() -> list[list[str]]:
    """Strongly connected sets of more than one module (Tarjan), and modules importing themselves."""
    edges = {m: {i for i, _ in imps if i in graph() and i != m} for m, imps in graph().items()}
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
    assert packages <= set(DEPENDS_ON), f"add to DESIGN.md's table, then here: {packages - set(DEPENDS_ON)}"


def test_no_upward_imports() -> None:
    found = _upward()
    new = sorted(found - ALLOWED_UPWARD)
    assert not new, "imports up the package table (DESIGN.md): " + "; ".join(f"{a} -> {b}" for a, b in new)
    fixed = sorted(ALLOWED_UPWARD - found)
    assert not fixed, "fixed, remove from ALLOWED_UPWARD: " + "; ".join(f"{a} -> {b}" for a, b in fixed)


def test_no_two_modules_import_each_other() -> None:
    assert _cycles() == []


def test_private_modules_of_other_packages_only_shrink() -> None:
    found = _private()
    new = sorted(found - ALLOWED_PRIVATE)
    assert not new, ("another package's private module imported (export the name from its package): "
                     + "; ".join(f"{a} -> {b}" for a, b in new))
    fixed = sorted(ALLOWED_PRIVATE - found)
    assert not fixed, "fixed, remove from ALLOWED_PRIVATE: " + "; ".join(f"{a} -> {b}" for a, b in fixed)


MAX_MODULE_LINES = 400  # issue 30: a module holds one concept; past this it holds two


def test_no_module_is_over_400_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"split these modules (lines): {long}"
