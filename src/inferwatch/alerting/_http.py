"""The HTTP client receivers and actions share: injectable transport, errors translated, secrets kept out.

Every value that authenticates a request (a ``Secret`` URL, query parameters,
the ``Authorization`` header, basic-auth credentials, userinfo in the URL and
any ``secrets`` the caller names) is collected per request, so an answer that
echoes the request never carries one into an error, a log line or a record.
"""

from __future__ import annotations

import base64
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any

import httpx

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._classify import http_error, transport_error
from inferwatch.model import Clock, SystemClock
from inferwatch.settings import Secret, install_log_redaction

__all__ = ["AccessToken", "HttpClient", "request_secrets"]


def _url_secrets(url: str) -> list[str]:
    parts = urllib.parse.urlsplit(url)
    found = [v for _, v in urllib.parse.parse_qsl(parts.query)]
    found += [x for x in (parts.username, parts.password) if x]
    return found


def request_secrets(url: str | Secret, kwargs: Mapping[str, Any], extra: Iterable[Secret] = ()) -> list[str]:
    """The strings of a request that must never be shown (see the module docstring)."""
    found = [s.reveal() for s in extra]
    raw = url.reveal() if isinstance(url, Secret) else url
    if isinstance(url, Secret):
        path = urllib.parse.urlsplit(raw).path
        found += [raw, path] + [seg for seg in path.split("/") if len(seg) >= 9]  # not "services"
    found += _url_secrets(raw)
    params = kwargs.get("params") or {}
    found += [str(v) for v in (params.values() if isinstance(params, Mapping) else ())]
    for name, value in (kwargs.get("headers") or {}).items():
        if name.lower() in ("authorization", "proxy-authorization", "x-api-key"):
            found += [value, value.partition(" ")[2]]
    auth = kwargs.get("auth")
    if isinstance(auth, tuple) and len(auth) == 2:
        found += [str(auth[1]), base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()]
    return [s for s in found if s]


class HttpClient:
    """A small wrapper over ``httpx.Client``; ``transport`` lets tests swap the network."""

    def __init__(self, timeout: float = 10.0, transport: httpx.BaseTransport | None = None,
                 verify: bool | ssl.SSLContext = True, clock: Clock | None = None) -> None:
        install_log_redaction()
        self._client = httpx.Client(timeout=timeout, transport=transport, verify=verify,
                                    headers={"User-Agent": "inferwatch"})
        self._clock = clock or SystemClock()

    def request(self, method: str, url: str | Secret, *, secrets: Iterable[Secret] = (),
                accept: Container[int] = (), **kwargs: Any) -> httpx.Response:
        """Send; raise ``NotifyError`` (no secret in it) for transport failures and non-2xx answers.

        ``url`` may be a ``Secret`` (a Slack webhook URL); ``secrets`` names values sent in
        the body (PagerDuty's routing key) so that an echo of them is redacted too. A status
        in ``accept`` is returned instead (a service whose error body says more than its status).
        """
        target = url.reveal() if isinstance(url, Secret) else url
        try:
            resp = self._client.request(method, target, **kwargs)
        except httpx.HTTPError as exc:
            raise transport_error(exc) from None
        except (httpx.InvalidURL, ValueError):  # their messages quote the URL
            raise NotifyError("invalid URL or request", retryable=False) from None
        if not 200 <= resp.status_code < 300 and resp.status_code not in accept:
            raise http_error(resp, secrets=request_secrets(url, kwargs, secrets), now=self._clock.now())
        return resp

    def close(self) -> None:
        """Close connections."""
        self._client.close()


class AccessToken:
    """A chat application's access token, cached until shortly before it expires.

    ``fetch`` asks the service for a new one: ``(token, seconds it stays valid)``. The token is
    refreshed ``early_s`` before its stated expiry (at most half its life early: clock skew,
    a slow request), when missing, or on ``get(refresh=True)`` (the service called it stale).
    Attempts of several groups run at once: one fetch at a time.

    >>> from inferwatch.model import SimulatedClock
    >>> clock, fetched = SimulatedClock(0.0), []
    >>> tok = AccessToken(lambda: (fetched.append(1) or f"t{len(fetched)}", 7200.0), clock)
    >>> tok.get(), tok.get(), len(fetched)
    ('t1', 't1', 1)
    >>> clock.advance(6900.0); tok.get(), tok.get(refresh=True)
    ('t2', 't3')
    """

    def __init__(self, fetch: Callable[[], tuple[str, float]], clock: Clock, early_s: float = 300.0) -> None:
        self._fetch, self._clock, self.early_s = fetch, clock, early_s
        self._lock = threading.Lock()
        self._token: tuple[str, float] | None = None  # (token, refresh at)

    def get(self, *, refresh: bool = False) -> str:
        """The cached token, fetched when missing, near expiry or ``refresh``."""
        with self._lock:
            now = self._clock.now()
            if self._token is not None and not refresh and now < self._token[1]:
                return self._token[0]
            token, ttl = self._fetch()
            self._token = (token, now + max(ttl - self.early_s, ttl / 2))
            return token
