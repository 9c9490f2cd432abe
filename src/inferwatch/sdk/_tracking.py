"""``monitor.track(route)``: times a block as one request."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inferwatch.sdk._hooks import MonitorHooks

__all__ = ["Tracking"]


class Tracking:
    """Times a block as one request; set ``.status`` to record a code other than 200."""

    __slots__ = ("_monitor", "_route", "_t0", "status")

    def __init__(self, monitor: MonitorHooks, route: str) -> None:
        self._monitor, self._route, self.status = monitor, route, 200
        self._t0 = 0.0

    def __enter__(self) -> Tracking:
        self._monitor.add_inflight(1)
        self._t0 = self._monitor.monotonic()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None,
    ) -> None:
        m = self._monitor
        m.record_request(self._route, 500 if exc_type is not None else self.status, m.monotonic() - self._t0)
        m.add_inflight(-1)
