"""The HTTP client receivers and actions share: injectable transport, errors translated."""

from __future__ import annotations

import ssl
from typing import Any

import httpx

from inferwatch.alerting._classify import http_error, transport_error

__all__ = ["HttpClient"]


class HttpClient:
    """A small wrapper over ``httpx.Client``; ``transport`` lets tests swap the network."""

    def __init__(self, timeout: float = 10.0, transport: httpx.BaseTransport | None = None,
                 verify: bool | ssl.SSLContext = True) -> None:
        self._client = httpx.Client(timeout=timeout, transport=transport, verify=verify,
                                    headers={"User-Agent": "inferwatch"})

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send; raise ``NotifyError`` for transport failures and non-2xx answers."""
        try:
            resp = self._client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise transport_error(exc) from None
        if not 200 <= resp.status_code < 300:
            raise http_error(resp)
        return resp

    def close(self) -> None:
        """Close connections."""
        self._client.close()
