"""What the middleware, stages and streaming use of a ``Monitor``: its public hooks, as a Protocol.

They depend on this, not on ``_monitor`` (which imports them): no module of the SDK
imports another that imports it back, and none reaches into ``Monitor``'s privates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from inferwatch.sdk._tracing import Tracing

__all__ = ["AsgiApp", "MonitorHooks", "Receive", "RouteOf", "Scope", "Send", "WsgiApp"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]
RouteOf = Callable[[Scope], str]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class MonitorHooks(Protocol):
    """The part of ``Monitor`` its integrations call (all public, all safe on the hot path)."""

    service: str
    model: str
    version: str
    tracing: Tracing | None

    def monotonic(self) -> float:
        """The monitor's clock, for durations."""
        ...

    def add_inflight(self, delta: int) -> None:
        """Move the in-flight requests gauge by ``delta``."""
        ...

    def enable_generations(self) -> None:
        """Attach the generation aggregates (once) before the first generation is recorded."""
        ...

    def record_request(self, route: str, status: int, duration_s: float) -> None:
        """Record one handled request."""
        ...

    def count_request(self, route: str, status: int) -> None:
        """Count a request by code without a latency (a generation's)."""
        ...

    def record_exemplar(self, route: str, duration_s: float, trace_id: str) -> None:
        """Mark a recorded request as its latency bucket's exemplar."""
        ...

    def observe(self, kind: str, payload: Any) -> None:
        """Enqueue ``payload`` for the aggregators of ``kind``."""
        ...
