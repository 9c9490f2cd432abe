"""Issue 38: the module paths the docs name exist (modules move: the server's rooms, issue 30)."""

from __future__ import annotations

import ast
import importlib
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SRC = ROOT / "src" / "inferwatch"
READMES = [ROOT / "README.md", ROOT / "README.zh-CN.md"]
PACKAGES = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
# `server/_ingest.py`, `inferwatch/formats/_snappy_pure.py`, `src/inferwatch/sdk/multiproc/_multiproc.py`
PATH = re.compile(r"(?<![\w/.])(?:src/)?(?:inferwatch/)?((?:[a-z_]+/)+[A-Za-z_0-9]+\.py)\b")


def test_every_module_path_in_the_docs_exists() -> None:
    missing, named = [], 0
    docs = [*READMES, *(p for p in (ROOT / "docs").rglob("*.md") if "benchmarks" not in p.parts)]
    for doc in docs:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for rel in PATH.findall(line):
                if rel.split("/")[0] in PACKAGES:
                    named += 1
                    if not (SRC / rel).is_file():
                        missing.append(f"{doc.relative_to(ROOT)}:{n}: {rel}")
    assert named >= 5, "the path pattern found (almost) none: is it still right?"
    assert not missing, "the docs name modules that are not there: " + "; ".join(missing)


def _python_blocks() -> list[tuple[str, str]]:
    out = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            out.append((f"{doc.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}",
                        textwrap.dedent(m.group(1))))
    return out


def _exists(module: str, name: str | None) -> bool:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return False
    if name is None or hasattr(mod, name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


def test_every_python_block_in_the_docs_parses_and_its_inferwatch_imports_exist() -> None:
    wrong, imports = [], 0
    for where, code in _python_blocks():
        try:
            tree = ast.parse(code)
        except SyntaxError as exc:
            wrong.append(f"{where}: {exc}")
            continue
        for node in ast.walk(tree):
            names: list[tuple[str, str | None]] = []
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("inferwatch"):
                names = [(str(node.module), a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                names = [(a.name, None) for a in node.names if a.name.startswith("inferwatch")]
            imports += len(names)
            wrong += [f"{where}: {m}{'.' + n if n else ''}" for m, n in names if not _exists(m, n)]
    assert imports >= 20, "the docs' examples import (almost) nothing from inferwatch: is the scan right?"
    assert not wrong, "the docs' Python examples do not parse or import what is gone: " + "; ".join(wrong)


@pytest.mark.parametrize("readme", ["README.md", "README.zh-CN.md"])
def test_every_relative_link_in_the_readme_reaches_a_file(readme: str) -> None:
    # the site's pages are checked by `mkdocs build --strict`; the READMEs are outside the site
    links = re.findall(r"\]\((?!https?:|#)([^)#\s]+)", (ROOT / readme).read_text(encoding="utf-8"))
    assert len(links) >= 10
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_the_docs_name_no_file_outside_the_repository() -> None:
    # a fresh clone has no ../shared/DESIGN.md and no /work/ of the machine the docs were written on
    # (../shared/data/ is the data sets' directory beside the clone, $SHARED_DATA_DIR)
    outside = re.compile(r"\.\./shared/(?!data/)|\bDESIGN\.md\b|\bSTYLE\.md\b|(?<![\w.])/work/")
    docs = [*READMES, *(p for p in (ROOT / "docs").rglob("*.md") if "benchmarks" not in p.parts)]
    found = [f"{doc.relative_to(ROOT)}:{n}: {line.strip()[:80]}" for doc in docs
             for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
             if outside.search(line)]
    assert found == []
