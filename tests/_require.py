"""The one place a test asks for an external tool or an optional package.

Missing, it skips on a developer's machine and fails under CI's switch
(``INFERWATCH_REQUIRE_TOOLS=1``), so CI can never quietly skip an oracle
(promtool, a real Alertmanager, chromium, a full PromQL parser). Use it in a test, a
fixture, or at module level (a module-level skip skips the whole file).
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType
from typing import NoReturn

import pytest

from inferwatch.config import env

ENV_REQUIRE_TOOLS = env.ENV_REQUIRE_TOOLS

__all__ = ["require_module", "require_tool", "tools_required"]


def tools_required() -> bool:
    """Whether CI's switch is on: a missing tool is a failure, not a skip."""
    return os.environ.get(ENV_REQUIRE_TOOLS) == "1"


def _missing(what: str, ci_has_it: bool) -> NoReturn:
    if tools_required() and ci_has_it:
        pytest.fail(f"{what} ({ENV_REQUIRE_TOOLS}=1)")
    pytest.skip(what, allow_module_level=True)


def require_tool(*names: str, ci_has_it: bool = True) -> str:
    """The path of the first of ``names`` on the PATH.

    ``ci_has_it=False`` only for a tool no registry reachable from CI ships (it then
    skips everywhere it is missing, and the test says why).
    """
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    _missing(f"external tool not installed: {' or '.join(names)}", ci_has_it)


def require_module(name: str) -> ModuleType:
    """``import name`` for an optional or dev package (an oracle such as ``promql_parser``)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        _missing(f"Python package not installed: {name}", ci_has_it=True)
