"""One classifier turning HTTP statuses and service error codes into retry decisions."""

from __future__ import annotations

import email.utils
from collections.abc import Iterable

import httpx

from inferwatch._exceptions import NotifyError
from inferwatch.settings import redact_text

__all__ = ["RETRYABLE_WECOM_ERRCODES", "classify_status", "http_error", "retry_after", "service_error",
           "transport_error"]

# WeCom: 45009 "api freq out of limit", -1 "system busy"; others (bad key, bad body) are final.
RETRYABLE_WECOM_ERRCODES = frozenset({45009, -1})
_EXCERPT = 200


def classify_status(status: int) -> bool | None:
    """``None`` for success, else whether the failure is worth retrying (429 and 5xx are)."""
    if 200 <= status < 300:
        return None
    return status == 429 or status == 408 or status >= 500


def retry_after(headers: httpx.Headers, status: int, now: float) -> float | None:
    """Seconds to wait from ``Retry-After`` on a 429 or 503 (RFC 9110: delta-seconds or HTTP-date).

    An HTTP-date is read against the answer's own ``Date`` header when it has one
    (the server's clock, so skew between the clocks does not matter), else ``now``.

    >>> retry_after(httpx.Headers({"Retry-After": "120"}), 429, 0.0)
    120.0
    >>> retry_after(httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT",
    ...                            "Date": "Wed, 21 Oct 2015 07:28:00 GMT"}), 503, 0.0)
    30.0
    """
    value = headers.get("retry-after", "").strip()
    if status not in (429, 503) or not value:
        return None
    if value.isdigit():
        return float(value)
    at = _http_date(value)
    if at is None:
        return None
    base = _http_date(headers.get("date", ""))
    return max(at - (base if base is not None else now), 0.0)


def _http_date(text: str) -> float | None:
    try:
        return email.utils.parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def http_error(resp: httpx.Response, detail: str = "", *, secrets: Iterable[str] = (),
               now: float = 0.0) -> NotifyError:
    """A ``NotifyError`` for a non-2xx response; an echo of ``secrets`` in the body is redacted."""
    retryable = bool(classify_status(resp.status_code))
    excerpt = detail or resp.text[:4096].strip().replace("\n", " ")
    excerpt = redact_text(excerpt, secrets)[:_EXCERPT]
    return NotifyError(f"HTTP {resp.status_code}: {excerpt}" if excerpt else f"HTTP {resp.status_code}",
                       retryable=retryable, retry_after=retry_after(resp.headers, resp.status_code, now))


def service_error(code: int, message: str, retryable_codes: frozenset[int],
                  secrets: Iterable[str] = ()) -> NotifyError:
    """A failure a service reported in its body (e.g. WeCom's ``errcode``)."""
    return NotifyError(f"errcode {code}: {redact_text(message, secrets)}".rstrip(": "),
                       retryable=code in retryable_codes)


def transport_error(exc: httpx.HTTPError) -> NotifyError:
    """Connection refused, timeouts: always worth retrying; the URL (may hold a key) is left out."""
    return NotifyError(f"{exc.__class__.__name__}", retryable=True)
