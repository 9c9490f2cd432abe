"""``make test`` (``pytest``) runs the docstring examples of every module in ``src/inferwatch``.

Only here, not under ``tests/`` (whose helper scripts are not importable everywhere); a failing
example fails the run like any test. Outside the package: not installed with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

PACKAGE = Path(__file__).resolve().parent / "inferwatch"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Each module of the package (but ``__main__``, which runs the CLI) as a doctest module."""
    if file_path.suffix == ".py" and file_path.is_relative_to(PACKAGE) and file_path.name != "__main__.py":
        return DoctestModule.from_parent(parent, path=file_path)
    return None
