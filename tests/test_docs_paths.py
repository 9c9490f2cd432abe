"""Issue 38: the module paths the docs name exist (modules move: the server's rooms, issue 30)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
SRC = ROOT / "src" / "inferwatch"
PACKAGES = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
# `server/_ingest.py`, `inferwatch/edge/_snappy.py`, `src/inferwatch/sdk/_multiproc.py`
PATH = re.compile(r"(?<![\w/.])(?:src/)?(?:inferwatch/)?((?:[a-z_]+/)+[A-Za-z_0-9]+\.py)\b")


def test_every_module_path_in_the_docs_exists() -> None:
    missing, named = [], 0
    docs = [ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if "benchmarks" not in p.parts)]
    for doc in docs:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for rel in PATH.findall(line):
                if rel.split("/")[0] in PACKAGES:
                    named += 1
                    if not (SRC / rel).is_file():
                        missing.append(f"{doc.relative_to(ROOT)}:{n}: {rel}")
    assert named >= 5, "the path pattern found (almost) none: is it still right?"
    assert not missing, "the docs name modules that are not there: " + "; ".join(missing)
