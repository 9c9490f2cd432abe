"""inferwatch: monitoring and alerting for AI inference services.

>>> from inferwatch import Monitor
>>> monitor = Monitor(service="ranker", model="ctr", version="v3")
>>> monitor.record_request(route="/predict", status=200, duration_s=0.012)
>>> 'inferwatch_requests_total{code="200"' in monitor.metrics_text()
True
>>> monitor.close()

The top level imports lazily so that light users (the edge agent, the CLI's
``--help``) do not pay for prometheus-client, numpy or starlette.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inferwatch._exceptions import (
    ActionError,
    ConfigError,
    InferwatchError,
    InputError,
    NotifyError,
    StoreError,
    ToolMissingError,
)

if TYPE_CHECKING:
    from inferwatch.sdk import Monitor

__version__ = "0.1.0"

__all__ = [
    "ActionError",
    "ConfigError",
    "InferwatchError",
    "InputError",
    "Monitor",
    "NotifyError",
    "StoreError",
    "ToolMissingError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name == "Monitor":
        from inferwatch.sdk import Monitor

        return Monitor
    raise AttributeError(f"module 'inferwatch' has no attribute {name!r}")
