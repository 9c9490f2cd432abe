"""The public surface is small and deliberate: each package's ``__all__`` is checked."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import types

import pytest

import inferwatch

# Every package under src/inferwatch, found on disk: a new package is checked without a list to update.
PACKAGES = ["inferwatch", *sorted(
    f"inferwatch.{m.name}" for m in pkgutil.iter_modules(inferwatch.__path__) if m.ispkg)]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_resolve_and_are_public(name: str) -> None:
    mod = importlib.import_module(name)
    for attr in mod.__all__:
        assert not attr.startswith("_") or attr == "__version__", f"{name}.{attr} is private"
        assert getattr(mod, attr) is not None


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_exactly_the_public_names(name: str) -> None:
    # rule (httpx's habit): what a package's namespace offers publicly is what __all__ lists, so
    # a name re-exported for another package is declared, and nothing is public by accident
    mod = importlib.import_module(name)
    public = {n for n, v in vars(mod).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)
              and getattr(v, "__module__", None) != "typing" and n not in ("TYPE_CHECKING", "annotations")}
    assert public - set(mod.__all__) == set(), f"{name}: public but not in __all__"
    assert len(mod.__all__) == len(set(mod.__all__)), f"{name}: a name twice in __all__"


def test_top_level_surface() -> None:
    assert set(inferwatch.__all__) == {
        "ActionError", "ConfigError", "InferwatchError", "InputError", "Monitor",
        "NotifyError", "StoreError", "ToolMissingError", "__version__",
    }
    assert issubclass(inferwatch.ConfigError, inferwatch.InferwatchError)


def test_importing_inferwatch_has_no_heavy_side_effects() -> None:
    # The edge agent and `--help` rely on a light top-level import.
    code = (
        "import sys, inferwatch, inferwatch.model, inferwatch.cli; "
        "heavy = [m for m in ('numpy', 'prometheus_client', 'starlette', 'scipy') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
