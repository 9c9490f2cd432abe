"""The ASGI guard in front of every route: body size (413), JSON nesting (400), unexpected errors (500).

* A request body larger than its endpoint's limit is refused with 413
  before the handler sees it (a declared ``Content-Length`` at once, a
  streamed body as soon as it passes the limit), so a 100 MB alert is
  neither stored nor forwarded.
* A JSON body nested deeper than ``max_json_depth`` is refused with 400 and
  the reason, so no handler's parser or walker can hit ``RecursionError``.
* A request whose ``Host`` is not this server's is refused with 421 when
  ``app.state.allowed_hosts`` is set (``serve`` on loopback; see ``_hosts``).
* An exception a handler did not expect is answered 500 with a JSON body
  that holds no traceback, and written to the log as one line (exception
  type, message and where it was raised).
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Mapping
from typing import Any

import numpy as np

from inferwatch.config import HttpLimits
from inferwatch.server._hosts import host_allowed

__all__ = ["BODY_LIMITS", "Guard", "json_depth"]

DRAIN_MAX = 64 << 20  # read and dropped before a 413, so the client reads the answer (no reset)

log = logging.getLogger(__name__)

# Endpoints whose bodies are legitimately larger than the default (batches of samples or alerts).
BODY_LIMITS: Mapping[str, int] = {
    "/api/v1/write": 32 << 20, "/api/v1/otlp": 32 << 20,
    "/v1/metrics": 32 << 20, "/v1/traces": 32 << 20, "/api/v1/alertmanager": 8 << 20,
    "/api/v2/alerts": 8 << 20,  # batches from a Prometheus that treats the server as its Alertmanager
}
_BRACKETS = b"[]{}"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKETS)


def json_depth(body: bytes) -> int:
    r"""The deepest nesting of ``[``/``{`` in a JSON text (strings skipped); linear time.

    >>> json_depth(b'{"a": [1, {"b": "[[["}]}')
    3
    >>> json_depth(b'[["a\\\\", "[\\"["], {}]')
    2
    """
    # Escapes gone (an escaped backslash first, then an escaped quote), every second piece between
    # quotes is outside a string; of that only the brackets are kept: all in C, a storm's 1 MB in ms.
    plain = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(plain.split(b'"')[0::2]).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    skeleton = np.frombuffer(brackets, dtype=np.uint8)
    steps = (skeleton == ord("[")).astype(np.int64) + (skeleton == ord("{")) - (skeleton == ord("]")) \
        - (skeleton == ord("}"))
    return int(np.cumsum(steps).max(initial=0))


def _limit_for(path: str, default: int, paths: Mapping[str, int]) -> int:
    if path in paths:
        return paths[path]
    for prefix, limit in BODY_LIMITS.items():
        if path == prefix or path.startswith(prefix + "/"):
            return max(limit, default)
    return default


async def _answer(send: Any, status: int, error_type: str, message: str) -> None:
    body = json.dumps({"status": "error", "errorType": error_type, "error": message}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    return f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""


class Guard:
    """ASGI middleware applying :class:`HttpLimits` to bodies, and turning crashes into a clean 500."""

    def __init__(self, app: Any, limits: HttpLimits, paths: Mapping[str, int] | None = None) -> None:
        self.app, self.limits = app, limits
        self.paths: Mapping[str, int] = dict(paths or {})
        """Exact paths with a limit of their own (edge ingest: ``edge.max_body_bytes``)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        app = scope.get("app")
        allowed = getattr(app.state, "allowed_hosts", None) if app is not None else None
        host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), "")
        if not host_allowed(host, allowed):
            await _answer(send, 421, "bad_data", f"Host {host[:100]!r} is not this server's (DNS rebinding?)")
            return
        limit = _limit_for(scope["path"], self.limits.max_body_bytes, self.paths)
        problem, body = await self._read(scope, receive, limit)
        if problem is not None:
            await _answer(send, *problem)
            return
        started = False
        delivered = False

        async def replay() -> Any:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def tracking(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, replay, tracking)
        except Exception as exc:  # a bug: one log line, a clean 500, never the traceback
            log.error("%s %s failed: %s: %s%s", scope.get("method", ""), scope["path"],
                      type(exc).__name__, exc, _where(exc))
            if not started:
                await _answer(send, 500, "internal", "internal error (logged by the server)")

    async def _read(self, scope: Any, receive: Any, limit: int) -> tuple[tuple[int, str, str] | None, bytes]:
        too_big = (413, "bad_data", f"request body larger than {limit} bytes for {scope['path']}")
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                await _drain(receive, 0)
                return too_big, b""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                if message.get("more_body", False):
                    await _drain(receive, size)
                return too_big, b""
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        head = body.lstrip()[:1]
        if head in (b"{", b"[") and json_depth(body) > self.limits.max_json_depth:
            return (400, "bad_data",
                    f"request body nested deeper than {self.limits.max_json_depth} levels"), b""
        return None, body


async def _drain(receive: Any, seen: int) -> None:
    """Read and drop the rest of a refused body (up to ``DRAIN_MAX``): closing a connection with
    unread data makes the kernel reset it, and the client sees the reset instead of the 413."""
    while seen <= DRAIN_MAX:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return
