"""One classifier turning HTTP statuses and service error codes into retry decisions."""

from __future__ import annotations

import httpx

from inferwatch._exceptions import NotifyError

__all__ = ["RETRYABLE_WECOM_ERRCODES", "classify_status", "http_error", "service_error", "transport_error"]

# WeCom: 45009 "api freq out of limit", -1 "system busy"; others (bad key, bad body) are final.
RETRYABLE_WECOM_ERRCODES = frozenset({45009, -1})


def classify_status(status: int) -> bool | None:
    """``None`` for success, else whether the failure is worth retrying (429 and 5xx are)."""
    if 200 <= status < 300:
        return None
    return status == 429 or status == 408 or status >= 500


def http_error(resp: httpx.Response, detail: str = "") -> NotifyError:
    """A ``NotifyError`` for a non-2xx response; the body excerpt never contains our secrets."""
    retryable = bool(classify_status(resp.status_code))
    excerpt = detail or resp.text[:200].strip().replace("\n", " ")
    return NotifyError(f"HTTP {resp.status_code}: {excerpt}" if excerpt else f"HTTP {resp.status_code}",
                       retryable=retryable)


def service_error(code: int, message: str, retryable_codes: frozenset[int]) -> NotifyError:
    """A failure a service reported in its body (e.g. WeCom's ``errcode``)."""
    return NotifyError(f"errcode {code}: {message}".rstrip(": "), retryable=code in retryable_codes)


def transport_error(exc: httpx.HTTPError) -> NotifyError:
    """Connection refused, timeouts: always worth retrying; the URL (may hold a key) is left out."""
    return NotifyError(f"{exc.__class__.__name__}", retryable=True)
