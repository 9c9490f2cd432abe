"""What a scrape may cost and hold: a deadline on the whole fetch, Prometheus's per-target limits,
and the sample checks of its appender (too far in the future, duplicates).

The messages are Prometheus's (``body size limit exceeded``, ``sample limit
exceeded``, ``label_limit exceeded (...)``, ...), so they read the same in
``/api/v1/targets`` as in Prometheus's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from inferwatch.config import ScrapeTarget
from inferwatch.model import METRIC_NAME_LABEL, Labels

__all__ = [
    "MAX_AHEAD_S", "Fetched", "ScrapeFailed", "check_limits", "drop_future", "duplicate_error", "fetch",
]

MAX_AHEAD_S = 600.0  # Prometheus's maxAheadTime: samples stamped further ahead are out of bounds


class ScrapeFailed(Exception):
    """The scrape failed; the message is the target's ``lastError``."""


@dataclass(frozen=True)
class Fetched:
    """A scraped body as it came, its content type and its character set."""

    raw: bytes
    content_type: str
    encoding: str = "utf-8"

    @property
    def text(self) -> str:
        """The body decoded (a bad byte becomes U+FFFD)."""
        return self.raw.decode(self.encoding, errors="replace")


def fetch(client: httpx.Client, target: ScrapeTarget, *,
          monotonic: Callable[[], float] = time.monotonic) -> Fetched:
    """GET the target within its timeout in total (headers and body) and its ``body_size_limit``.

    A target that dribbles its body is cut off at the deadline (checked at each
    chunk; a single read waits at most the timeout), and a body past the
    limit is dropped as soon as it passes it, never held whole.
    """
    timeout, limit = target.effective_timeout, target.body_size_limit
    deadline = monotonic() + timeout
    try:
        auth = target.auth_header()  # files are read at each scrape: a rotated secret is used at once
    except OSError as exc:
        raise ScrapeFailed(str(exc)) from None
    try:
        name = target.tls_config.server_name if target.tls_config is not None else None
        with client.stream("GET", target.url, timeout=timeout,
                           headers={"Authorization": auth} if auth else None,
                           extensions={"sni_hostname": name} if name else None) as resp:
            if resp.status_code != 200:
                raise ScrapeFailed(f"server returned HTTP status {resp.status_code} {resp.reason_phrase}")
            declared = resp.headers.get("content-length", "")
            if limit and declared.isdigit() and int(declared) > limit:
                raise ScrapeFailed(f"body size limit exceeded (limit {limit} bytes)")
            chunks: list[bytes] = []
            size = 0
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if limit and size > limit:
                    raise ScrapeFailed(f"body size limit exceeded (limit {limit} bytes)")
                if monotonic() > deadline:
                    raise ScrapeFailed(f"context deadline exceeded (timeout {timeout:g}s)")
                chunks.append(chunk)
            body = b"".join(chunks)
            return Fetched(body, resp.headers.get("content-type", ""), resp.encoding or "utf-8")
    except httpx.TimeoutException:
        raise ScrapeFailed(f"context deadline exceeded (timeout {timeout:g}s)") from None
    except httpx.HTTPError as exc:
        raise ScrapeFailed(str(exc) or type(exc).__name__) from None


def check_limits(target: ScrapeTarget, labels: Sequence[Labels], default_sample_limit: int = 0) -> None:
    """Raise :class:`ScrapeFailed` if the scrape breaks the target's sample or label limits.

    ``default_sample_limit`` (``server.limits.sample_limit``) applies when the target sets none;
    the server's label and series limits are the store's (``inferwatch.store.SeriesLimits``).
    """
    sample_limit = target.sample_limit or default_sample_limit
    if sample_limit and len(labels) > sample_limit:
        raise ScrapeFailed(f"sample limit exceeded (samples: {len(labels)}, limit: {sample_limit})")
    if not (target.label_limit or target.label_name_length_limit or target.label_value_length_limit):
        return
    for ls in set(labels):
        _check_series(target, ls)


def _check_series(target: ScrapeTarget, ls: Labels) -> None:
    metric = ls.get(METRIC_NAME_LABEL, "")[:50]
    if target.label_limit and len(ls) > target.label_limit:
        raise ScrapeFailed(f"label_limit exceeded (metric: {metric}, number of labels: {len(ls)}, "
                           f"limit: {target.label_limit})")
    for name, value in ls.items_tuple:
        if target.label_name_length_limit and len(name) > target.label_name_length_limit:
            raise ScrapeFailed(
                f"label_name_length_limit exceeded (metric: {metric}, label name: {name[:50]}, "
                f"length: {len(name)}, limit: {target.label_name_length_limit})")
        if target.label_value_length_limit and len(value) > target.label_value_length_limit:
            raise ScrapeFailed(
                f"label_value_length_limit exceeded (metric: {metric}, label name: {name[:50]}, "
                f"value: {value[:50]!r}, length: {len(value)}, limit: {target.label_value_length_limit})")


def _type_lines(text: str) -> list[str]:
    """The ``# TYPE`` lines, found with ``str.find`` (a body of 100,000 samples has a few families)."""
    found, pos = [], (0 if text.startswith("# TYPE ") else text.find("\n# TYPE "))
    while pos >= 0:
        start = pos + (text[pos] == "\n")
        end = text.find("\n", start)
        found.append(text[start:] if end < 0 else text[start:end])
        pos = -1 if end < 0 else text.find("\n# TYPE ", end)
    return [line.rstrip("\r") for line in found]


def duplicate_error(text: str, labels: Sequence[Labels], *, distinct: bool | None = None) -> str:
    """Why the exposition repeats itself (a series twice, a ``# TYPE`` twice), or ``""``.

    A repeated series used to keep its first value silently; Prometheus counts it
    as a duplicate sample and client libraries refuse a second ``TYPE`` line.
    ``distinct=True`` (the parser knows every line is a different series) skips hashing
    the label sets.
    """
    if distinct is not True and len(set(labels)) != len(labels):
        seen: set[Labels] = set()
        for ls in labels:
            if ls in seen:
                return f"duplicate sample for timestamp: series {ls} exposed more than once"
            seen.add(ls)
    types: set[str] = set()
    for line in _type_lines(text):
        parts = line.split()
        name = parts[2] if len(parts) > 2 else ""
        if name in types:
            return f"second TYPE line for metric name {name!r}"
        types.add(name)
    return ""


def drop_future(labels: list[Labels], t: list[float], v: list[float], now: float) -> int:
    """Remove, in place, samples stamped more than :data:`MAX_AHEAD_S` after ``now``; return how many.

    As Prometheus's scrape appender: such a sample would make every later sample
    of its series out of order, so it is refused (out of bounds) and counted.
    """
    bound = now + MAX_AHEAD_S
    if not t or max(t) <= bound:
        return 0
    bad = [i for i, ts in enumerate(t) if ts > bound]
    for i in reversed(bad):
        del labels[i], t[i], v[i]
    return len(bad)
