"""Streaming responses under the ASGI middleware: the first body chunk is the first token.

The middleware records a generation of its own for a response that is a
token stream, unless the application tracked it (``track_generation`` or
``record_generation`` inside the request): the application's count is the
truth, the middleware's only a stand-in. A response is a token stream when

* its ``content-type`` is ``text/event-stream`` (Server-Sent Events: what the
  OpenAI-compatible APIs of vLLM, TGI and others stream), or
* its route is one of the ``generative`` routes given to ``monitor.asgi``.

Other chunked responses (file downloads, large JSON) are not generations.
Then: time to first token is the first non-empty body chunk's time since
arrival, every non-empty chunk counts as one output token, input tokens are
unknown (0), and the model label is the monitor's.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from inferwatch.sdk._generation import RequestMark, record

if TYPE_CHECKING:
    from inferwatch.sdk._hooks import MonitorHooks as Monitor  # the hooks it uses: no import cycle
    from inferwatch.sdk._hooks import RouteOf, Scope

__all__ = ["EVENT_STREAM", "StreamWatch"]

EVENT_STREAM = b"text/event-stream"


class StreamWatch(RequestMark):
    """One request's view of its response messages: is it a stream, when was its first chunk."""

    __slots__ = ("_chunks", "_first", "_generative", "_monitor", "_route", "_scope", "_stream")

    def __init__(self, monitor: Monitor, scope: Scope, route: RouteOf, generative: frozenset[str],
                 t0: float) -> None:
        super().__init__(t0)
        self._monitor, self._scope, self._route, self._generative = monitor, scope, route, generative
        self._stream = False
        self._first = -1.0
        self._chunks = 0

    def message(self, message: MutableMapping[str, Any]) -> None:
        """See one message the app sends (called for each, before it goes out)."""
        kind = message["type"]
        if kind == "http.response.body":
            if self._stream and message.get("body"):
                self._chunks += 1
                if self._first < 0.0:
                    self._first = self._monitor.monotonic()
        elif kind == "http.response.start":
            self._stream = _is_event_stream(message.get("headers", ())) or (
                bool(self._generative) and self._route(self._scope) in self._generative)

    @property
    def generative(self) -> bool:
        """Whether this request is a generation (a token stream, or one the application recorded)."""
        return self._stream or self.explicit

    def done(self, route: str, status: int, duration_s: float) -> None:
        """Record the stream as a generation, unless it was not one or the app recorded it."""
        if not self._stream or self.explicit:
            return
        ttft = self._first - self.t0 if self._first >= 0.0 else None
        self._monitor.enable_generations()
        record(self._monitor, route, self._monitor.model, status, ttft, duration_s, 0, self._chunks, None,
               self)


def _is_event_stream(headers: Any) -> bool:
    for name, value in headers:
        if name.lower() == b"content-type":
            return bytes(value).lower().startswith(EVENT_STREAM)
    return False
