"""Live service statistics from the monitor's own counters: QPS, P99, error and 503 ratios.

A ``Snapshot`` reads the cumulative counters of one route; the difference of
two snapshots gives the rates over the time between them (as Prometheus's
``rate`` and ``histogram_quantile`` would).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["LiveStats", "Snapshot", "bucket_quantile"]


@dataclass(frozen=True)
class Snapshot:
    """Cumulative request counts by code and latency buckets of one route at real time ``t``."""

    t: float
    codes: dict[str, float]
    buckets: tuple[tuple[float, float], ...]  # (upper bound, cumulative count), +Inf last

    @classmethod
    def parse(cls, text: str, route: str, t: float) -> Snapshot:
        """Read the SDK exposition ``text``."""
        codes: dict[str, float] = {}
        buckets: dict[float, float] = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.labels.get("route") != route:
                    continue
                if s.name == "inferwatch_requests_total":
                    codes[s.labels["code"]] = codes.get(s.labels["code"], 0.0) + s.value
                elif s.name == "inferwatch_request_duration_seconds_bucket":
                    le = float(s.labels["le"])
                    buckets[le] = buckets.get(le, 0.0) + s.value
        return cls(t, codes, tuple(sorted(buckets.items())))


@dataclass(frozen=True)
class LiveStats:
    """Rates between two snapshots; NaN where there were no requests."""

    seconds: float
    requests: float
    qps: float
    p50_s: float
    p99_s: float
    error_ratio: float
    unavailable_ratio: float

    @classmethod
    def between(cls, old: Snapshot, new: Snapshot) -> LiveStats:
        """The statistics of the requests recorded after ``old`` and up to ``new``."""
        dt = max(new.t - old.t, 1e-9)
        delta = {c: n - old.codes.get(c, 0.0) for c, n in new.codes.items()}
        total = sum(delta.values())
        errors = sum(n for c, n in delta.items() if c.startswith("5"))
        before = dict(old.buckets)
        window = [(le, n - before.get(le, 0.0)) for le, n in new.buckets]
        nan = math.nan
        return cls(
            seconds=dt, requests=total, qps=total / dt,
            p50_s=bucket_quantile(0.5, window) if total else nan,
            p99_s=bucket_quantile(0.99, window) if total else nan,
            error_ratio=errors / total if total else nan,
            unavailable_ratio=delta.get("503", 0.0) / total if total else nan,
        )


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Prometheus's ``histogram_quantile``: linear inside the bucket, lower edge 0.

    >>> round(bucket_quantile(0.5, [(0.1, 0.0), (0.2, 10.0), (math.inf, 10.0)]), 6)
    0.15
    """
    if not buckets or buckets[-1][1] <= 0:
        return math.nan
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for le, cum in buckets:
        if cum >= rank:
            if math.isinf(le):
                return lower  # as Prometheus: the highest finite bound
            return lower + (le - lower) * (rank - below) / max(cum - below, 1e-12)
        lower, below = le, cum
    return lower
