"""A small HTTP/1.1 client on the standard library, for the agent's uploads and local scrapes.

httpx with its TLS context costs ~17 MiB of resident memory at import; the agent's
budget is 30 MiB, so it speaks HTTP through ``http.client`` and imports ``ssl``
only for an ``https://`` URL. One kept-alive connection per host; any failure
closes it and raises :class:`TransportError` (the uploader retries).
"""

from __future__ import annotations

import http.client
from typing import Protocol
from urllib.parse import urlsplit

__all__ = ["HttpClient", "Transport", "TransportError"]


class TransportError(Exception):
    """The request did not get an answer (refused, reset, timed out)."""


class Transport(Protocol):
    """What the agent needs of HTTP: one request, the status and the body."""

    def request(self, method: str, url: str, body: bytes | None,
                headers: dict[str, str]) -> tuple[int, bytes]:
        """Send; raise :class:`TransportError` when no answer came."""
        ...


class HttpClient:
    """The default :class:`Transport`: ``http.client`` with keep-alive, ``timeout`` seconds per request."""

    def __init__(self, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self._conns: dict[tuple[str, str], http.client.HTTPConnection] = {}

    def _conn(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        conn = self._conns.get((scheme, netloc))
        if conn is None:
            if scheme == "https":
                conn = http.client.HTTPSConnection(netloc, timeout=self.timeout)
            else:
                conn = http.client.HTTPConnection(netloc, timeout=self.timeout)
            self._conns[(scheme, netloc)] = conn
        return conn

    def request(self, method: str, url: str, body: bytes | None,
                headers: dict[str, str]) -> tuple[int, bytes]:
        """Send one request on the kept-alive connection of the URL's host.

        A kept-alive connection the server closed meanwhile (it restarted) is
        retried once on a new one, as browsers do; requests here are idempotent.
        """
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        reused = (parts.scheme, parts.netloc) in self._conns
        try:
            return self._once(parts.scheme, parts.netloc, method, path, body, headers)
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected) as exc:
            if not reused:
                raise TransportError(f"{type(exc).__name__}: {exc}") from None
        except (OSError, http.client.HTTPException) as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from None
        try:
            return self._once(parts.scheme, parts.netloc, method, path, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from None

    def _once(self, scheme: str, netloc: str, method: str, path: str, body: bytes | None,
              headers: dict[str, str]) -> tuple[int, bytes]:
        conn = self._conn(scheme, netloc)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        except BaseException:
            conn.close()
            self._conns.pop((scheme, netloc), None)
            raise

    def close(self) -> None:
        """Close every connection."""
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
