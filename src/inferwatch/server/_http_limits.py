"""Connection bounds for uvicorn: how many at once, how long for a request head, idle keep-alive;
and a response's head and body sent together.

uvicorn alone keeps a connection that never sends a request open forever,
and one that dribbles header bytes too (every byte resets its keep-alive
timer). The protocol here closes a connection that has not sent a whole
request head within ``header_timeout`` seconds of connecting (or of its
previous response), and answers 503 and closes a connection beyond
``max_connections`` at once, so slow or idle clients cannot exhaust the
process's file descriptors.

uvicorn writes a response's head and its body to the socket one after the other: two sends, two
packets, and the client woken twice (on two loaded cores each wake-up can mean a switch). The
protocol's writes within one turn of the event loop go out as one (:class:`_Corked`).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import ssl
from typing import Any, cast

from uvicorn.protocols.http.h11_impl import H11Protocol

from inferwatch.config import HttpLimits
from inferwatch.server._log_limit import install_repeat_filter

__all__ = ["bounded_protocol", "raise_fd_limit", "uvicorn_config"]

log = logging.getLogger(__name__)
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
         b"content-length: 32\r\nconnection: close\r\n\r\ntoo many connections, try later\n")
MAX_HEAD_BYTES = 64 * 1024  # a request line and headers larger than this are refused (431 by h11)


_CORK_MAX = 64 * 1024  # a write at least this big goes out at once (after what waits): no copy of it


class _Corked:
    """A transport whose small writes within one turn of the event loop go out as one ``write``."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport, self._loop = transport, loop
        self._out: list[bytes] = []

    def write(self, data: bytes) -> None:
        """Keep ``data`` until the end of this turn of the loop (a big one: send what waits, then it)."""
        if len(data) >= _CORK_MAX:
            self._flush()
            self._transport.write(data)
            return
        if not self._out:
            self._loop.call_soon(self._flush)
        self._out.append(data)

    def _flush(self) -> None:
        out, self._out = self._out, []
        if out and not self._transport.is_closing():
            self._transport.write(b"".join(out))

    def close(self) -> None:
        """Send what waits, then close."""
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:  # the rest as the transport's
        return getattr(self._transport, name)


def bounded_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with ``limits.max_connections`` and ``limits.header_timeout``, its writes
    within one turn of the event loop sent together."""

    class Bounded(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _armed_cycle: object = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(cast(asyncio.Transport, _Corked(transport, self.loop)))
            if len(self.connections) > limits.max_connections:
                transport.write(_BUSY)
                transport.close()
                return
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._armed_cycle = self.cycle
            self._head_timer = self.loop.call_later(limits.header_timeout, self._head_expired)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_expired(self) -> None:
            self._head_timer = None
            if self.cycle is self._armed_cycle and not self.transport.is_closing():
                self.transport.close()  # no whole request head in time: a slow or idle client

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not self._armed_cycle:
                self._disarm()  # a request head arrived

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Bounded


def raise_fd_limit() -> int:
    """Raise the soft open-files limit to the hard one (as Go programs do); return the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft >= hard:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        return soft
    return hard


def uvicorn_config(app: Any, host: str, port: int, limits: HttpLimits, *,
                   tls: ssl.SSLContext | None = None) -> Any:
    """The ``uvicorn.Config`` of the server, with the connection bounds and rate-limited log lines;
    ``tls``: serve HTTPS with this context (the web config file's, reloaded in place)."""
    import uvicorn

    cfg = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="off",
        http=bounded_protocol(limits), timeout_keep_alive=max(1, round(limits.keep_alive_timeout)),
        h11_max_incomplete_event_size=MAX_HEAD_BYTES, timeout_graceful_shutdown=5,
    )
    if tls is not None:  # ours (versions, client CAs, reloaded in place), not one built from file names
        cfg.load()
        cfg.ssl = tls
    install_repeat_filter("uvicorn", "uvicorn.error", "uvicorn.access")  # uvicorn's own handlers too
    soft = raise_fd_limit()
    if soft < limits.max_connections + 64:
        log.warning("open-files limit %d is below server.http.max_connections %d plus the server's "
                    "own files; lower max_connections or raise the limit (ulimit -n)",
                    soft, limits.max_connections)
    return cfg
