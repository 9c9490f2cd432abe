"""Outgoing calls carry the trace: an httpx event hook injecting the current context (W3C ``traceparent``).

``monitor.instrument_httpx(client)`` adds the hook to a ``Client`` or an
``AsyncClient``; the downstream service's middleware continues the trace, so
one trace crosses real HTTP hops. The hook only writes headers: it never
raises into the call (a failing propagator is logged and skipped).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

__all__ = ["instrument_httpx"]

log = logging.getLogger("inferwatch.tracing")


def _inject(request: httpx.Request) -> None:
    try:
        from opentelemetry import propagate

        propagate.inject(request.headers)
    except Exception:
        log.warning("inferwatch tracing: could not inject the trace context into %s", request.url,
                    exc_info=True)


async def _inject_async(request: httpx.Request) -> None:
    _inject(request)


def instrument_httpx(client: httpx.Client | httpx.AsyncClient) -> Any:
    """Add the injecting request hook to ``client`` (idempotent); returns the client."""
    try:
        import opentelemetry.propagate  # noqa: F401  (fail here, with the hint, not in a request)
    except ImportError as exc:
        from inferwatch._exceptions import ConfigError
        from inferwatch.sdk._tracing import INSTALL_HINT

        raise ConfigError(INSTALL_HINT) from exc
    import httpx  # the caller's client is one: loaded already, not by ``import inferwatch.sdk``

    hook: Any = _inject_async if isinstance(client, httpx.AsyncClient) else _inject
    hooks = client.event_hooks
    if hook not in hooks["request"]:
        client.event_hooks = {**hooks, "request": [*hooks["request"], hook]}
    return client
