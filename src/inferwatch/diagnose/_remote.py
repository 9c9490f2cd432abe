"""Reading series from a running server's (or Prometheus's) ``/api/v1/query_range``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from inferwatch._exceptions import InputError, StoreError
from inferwatch.model import Labels, Matcher
from inferwatch.store import Series

__all__ = ["QueryRangeSource"]


class QueryRangeSource:
    """The ``select`` part of a store, answered by a Prometheus-compatible query_range API.

    Each selector is sent as the PromQL query; ``step`` is the resolution
    (the server evaluates the selector at each step, as Prometheus does).
    """

    def __init__(self, url: str, *, step: float = 15.0, transport: httpx.BaseTransport | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise InputError(f"--url {url}: not an http(s) URL")
        self.url = url.rstrip("/")
        self.step = step
        self._client = httpx.Client(transport=transport, timeout=30.0)

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """Series matching ``matchers`` in ``[start, end]`` at ``step`` resolution."""
        query = "{" + ",".join(str(m) for m in matchers) + "}"
        params = {"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{self.step:g}"}
        try:
            r = self._client.get(f"{self.url}/api/v1/query_range", params=params)
        except httpx.HTTPError as exc:
            raise StoreError(f"{self.url}: cannot query: {exc}") from exc
        if r.status_code != 200:
            raise StoreError(f"{self.url}/api/v1/query_range: HTTP {r.status_code}: {r.text[:200]}")
        try:
            return _series(r.json())
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{self.url}: not a Prometheus query_range answer: {exc}") from exc

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()


def _series(body: Any) -> list[Series]:
    if body.get("status") != "success" or body["data"]["resultType"] != "matrix":
        raise ValueError(f"status {body.get('status')!r}, error {body.get('error')!r}")
    out = []
    for item in body["data"]["result"]:
        pairs = item["values"]
        t = np.array([float(p[0]) for p in pairs], dtype=np.float64)
        v = np.array([float(p[1]) for p in pairs], dtype=np.float64)
        keep = np.isfinite(t) & ~np.array([math.isnan(x) for x in v], dtype=bool)
        out.append(Series(Labels(item["metric"]), t[keep], v[keep]))
    out.sort(key=lambda s: s.labels.items_tuple)
    return out
