"""One HTTP exchange as blackbox_exporter's http prober measures it: phases, redirects, TLS, a capped body.

The phases are blackbox's: ``resolve`` (DNS), ``connect`` (TCP), ``tls`` (the
handshake), ``processing`` (request sent until the response's headers came)
and ``transfer`` (the body), each summed over the redirects followed. A fresh
connection each run, as blackbox makes, so ``connect`` and ``tls`` are
measured every time. Network time is real time (``time.perf_counter``), as
httpx's timeouts are; the whole exchange stops at ``deadline``.
"""

from __future__ import annotations

import functools
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from inferwatch.server.ingest.probe._cert import cert_not_after

__all__ = ["PHASES", "Exchange", "HttpRequest", "exchange"]

PHASES = ("resolve", "connect", "tls", "processing", "transfer")
_EVENTS = {  # httpcore trace event -> (phase, starts?)
    "connection.connect_tcp.started": ("connect", True),
    "connection.connect_tcp.complete": ("connect", False),
    "connection.start_tls.started": ("tls", True), "connection.start_tls.complete": ("tls", False),
    "http11.send_request_headers.started": ("processing", True),
    "http11.receive_response_headers.complete": ("processing", False),
}
OnChunk = Callable[[bytes, float], None]


@dataclass(frozen=True)
class HttpRequest:
    """What one probe sends, and how it may be answered."""

    url: str
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    follow_redirects: bool = True
    max_redirects: int = 10
    max_body_bytes: int = 1 << 20
    verify: bool | str = True
    """True (system CAs), False (insecure_skip_verify), or a CA file."""


@dataclass
class Exchange:
    """What came back (``error`` says why the exchange itself failed, "" when an answer came)."""

    status: int = 0
    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    content_length: int = -1
    body: bytes = b""
    redirects: int = 0
    ssl: bool = False
    cert_expiry: float | None = None
    duration: float = 0.0
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)


class _Phases:
    """The httpcore trace callback: adds each phase's time to the exchange."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into = into
        self.started: dict[str, float] = {}
        self.headers_done = 0.0

    def __call__(self, event: str, info: Mapping[str, Any]) -> None:
        hit = _EVENTS.get(event)
        if hit is None:
            return
        now = time.perf_counter()
        phase, starts = hit
        if starts:
            self.started[phase] = now
        elif phase in self.started:
            self.into[phase] += now - self.started.pop(phase)
            if phase == "processing":
                self.headers_done = now


@functools.lru_cache(maxsize=64)
def _verify(verify: bool | str) -> ssl.SSLContext | bool:
    """The TLS context, built once per setting (building one costs ~0.1 s of CPU: not per run)."""
    if isinstance(verify, str):
        return ssl.create_default_context(cafile=verify)
    return ssl.create_default_context() if verify else False


def _resolve(url: str, into: dict[str, float], deadline: float) -> None:
    parts = urlsplit(url)
    host = parts.hostname or ""
    start = time.perf_counter()
    try:  # timed apart, as blackbox does; the connect that follows finds the answer cached or numeric
        port = parts.port or (443 if parts.scheme == "https" else 80)
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise httpx.ConnectError(f"cannot resolve {host!r}: {exc}") from exc
    into["resolve"] += time.perf_counter() - start
    if time.perf_counter() > deadline:
        raise httpx.TimeoutException("timed out resolving the host")


def _tls_expiry(response: httpx.Response) -> float | None:
    stream = response.extensions.get("network_stream")
    obj = stream.get_extra_info("ssl_object") if stream is not None else None
    if obj is None:
        return None
    der = obj.getpeercert(True)
    return cert_not_after(der) if der else None


def _read_body(response: httpx.Response, out: Exchange, cap: int, deadline: float,
               on_chunk: OnChunk | None) -> None:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        now = time.perf_counter()
        if on_chunk is not None:
            on_chunk(chunk, now)
        size += len(chunk)
        if size > cap:
            raise _Refused(f"body larger than max_body_bytes ({cap} bytes): read no further")
        chunks.append(chunk)
        if now > deadline:
            raise httpx.ReadTimeout("timed out reading the body")
    out.body = b"".join(chunks)


class _Refused(Exception):
    """An answer the probe will not take (a body over the cap, too many redirects)."""


def exchange(request: HttpRequest, *, timeout: float, on_chunk: OnChunk | None = None) -> Exchange:
    """Send ``request`` and read its answer within ``timeout`` seconds (never raises: ``error`` says)."""
    out = Exchange()
    tracer = _Phases(out.phases)
    url, method, body = request.url, request.method, request.body
    start = time.perf_counter()
    try:
        with httpx.Client(verify=_verify(request.verify), trust_env=False, follow_redirects=False) as client:
            start = time.perf_counter()  # the probe's time is the network's, not the client's set-up
            deadline = start + timeout
            while True:
                _resolve(url, out.phases, deadline)
                left = max(deadline - time.perf_counter(), 0.001)
                req = client.build_request(method, url, headers=dict(request.headers), content=body,
                                           timeout=httpx.Timeout(left), extensions={"trace": tracer})
                response = client.send(req, stream=True)
                try:
                    out.status, out.ssl = response.status_code, url.startswith("https://")
                    out.headers = {k.lower(): v for k, v in response.headers.items()}
                    out.cert_expiry = _tls_expiry(response) if out.ssl else None
                    nxt = response.next_request if request.follow_redirects else None
                    if nxt is None:
                        # a redirect not followed still counts, as blackbox_exporter counts it
                        out.redirects += int(response.is_redirect and not request.follow_redirects)
                        out.content_length = int(response.headers.get("content-length", -1))
                        _read_body(response, out, request.max_body_bytes, deadline, on_chunk)
                        out.phases["transfer"] += time.perf_counter() - (tracer.headers_done or start)
                        break
                finally:
                    response.close()
                out.redirects += 1
                if out.redirects > request.max_redirects:
                    raise _Refused(f"more than {request.max_redirects} redirects")
                url, method = str(nxt.url), nxt.method
                body = None if method in ("GET", "HEAD") else body
    except httpx.TimeoutException as exc:
        out.error = f"timed out after {timeout:g}s ({exc or type(exc).__name__})"
    except (httpx.HTTPError, _Refused, ssl.SSLError, OSError, ValueError) as exc:
        out.error = str(exc) or type(exc).__name__
    out.duration = time.perf_counter() - start
    return out
