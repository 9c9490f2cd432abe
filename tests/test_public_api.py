"""The public surface is small and deliberate: each package's ``__all__`` is checked."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import inferwatch

PACKAGES = [
    "inferwatch", "inferwatch.model", "inferwatch.config", "inferwatch.sdk", "inferwatch.quality",
    "inferwatch.business", "inferwatch.collect", "inferwatch.store", "inferwatch.promql",
    "inferwatch.rules",
    "inferwatch.baseline", "inferwatch.slo", "inferwatch.alerting", "inferwatch.tracing", "inferwatch.edge",
    "inferwatch.diagnose", "inferwatch.export", "inferwatch.server", "inferwatch.cli", "inferwatch.demo",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_resolve_and_are_public(name: str) -> None:
    mod = importlib.import_module(name)
    for attr in mod.__all__:
        assert not attr.startswith("_") or attr == "__version__", f"{name}.{attr} is private"
        assert getattr(mod, attr) is not None


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
