"""Shared fixtures: environment isolation, external tools, shared data."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from tests import _require

from inferwatch.settings._env import ENV_REQUIRE_TOOLS

ROOT = Path(__file__).resolve().parents[1]
# ../shared/data beside the project root; SHARED_DATA_DIR points elsewhere (a git worktree
# whose parent has no shared/)
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR") or ROOT.parent / "shared" / "data")

# CI gates a change on the same examples every run (a property's random search belongs to the
# developer's runs, where a new counterexample is news, not a red build on an unrelated change).
# No per-example deadline nor "too slow" health check there either: both time the example on the
# wall clock, and a 2-core runner shared by the whole suite's processes makes a 200 ms example
# take 1 s (what a property proves is its assertion, not its speed).
settings.register_profile("ci", derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test sees the developer's INFERWATCH_* settings (except the tools switch)."""
    for key in list(os.environ):
        if key.startswith("INFERWATCH_") and key != ENV_REQUIRE_TOOLS:
            monkeypatch.delenv(key)
    yield


@pytest.fixture
def require_tool() -> Callable[..., str]:
    """Return the path of an external binary; skip without it, fail under CI's switch."""
    return _require.require_tool


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the project root (NAB and friends)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


# Tests sharing one expensive fixture above module scope run on one xdist worker (`make test` runs
# `pytest -n 2`): the dashboard's package-scoped demo and browser, the HA tests' session PostgreSQL.
# Everything else is grouped by module, so a module-scoped server or binary starts once.
_ONE_WORKER = ("tests/dashboard/", "tests/alerting/ha/")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's scope scheduler, with a scope of a module or one of ``_ONE_WORKER``."""
    from xdist.scheduler import LoadScopeScheduling

    class _ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return next((p for p in _ONE_WORKER if path.startswith(p)), path)

    return _ByModule(config, log)
