"""Numbers from stored series over a time segment: gauge means, counter rates, growth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inferwatch.store import Series, stale_mask

__all__ = ["MIN_POINTS", "Segment", "counter_increase", "counter_rate", "gauge_last", "gauge_mean"]

MIN_POINTS = 3  # fewer samples than this in a segment is "not enough data"


@dataclass(frozen=True)
class Segment:
    """A closed time range ``[start, end]`` in Unix seconds."""

    start: float
    end: float

    @property
    def seconds(self) -> float:
        """Its length."""
        return self.end - self.start


def _points(s: Series, seg: Segment) -> tuple[np.ndarray, np.ndarray]:
    keep = (s.t >= seg.start) & (s.t <= seg.end) & ~stale_mask(s.v) & np.isfinite(s.v)
    return s.t[keep], s.v[keep]


def gauge_mean(series: Sequence[Series], seg: Segment) -> float | None:
    """Mean of every sample of every series in ``seg`` (None with fewer than MIN_POINTS)."""
    values = [_points(s, seg)[1] for s in series]
    flat = np.concatenate(values) if values else np.empty(0)
    return float(flat.mean()) if flat.shape[0] >= MIN_POINTS else None


def gauge_last(series: Sequence[Series], seg: Segment) -> float | None:
    """The latest value in ``seg`` across the series (the minimum if several share it)."""
    best: tuple[float, float] | None = None
    for s in series:
        t, v = _points(s, seg)
        if t.shape[0]:
            cand = (float(t[-1]), -float(v[-1]))
            best = cand if best is None or cand > best else best
    return None if best is None else -best[1]


def counter_increase(series: Sequence[Series], seg: Segment) -> tuple[float, float] | None:
    """Summed increase of counters in ``seg`` (resets handled as Prometheus does) and the seconds it spans."""
    total, span, found = 0.0, 0.0, False
    for s in series:
        t, v = _points(s, seg)
        if t.shape[0] < 2:
            continue
        d = np.diff(v)
        # a drop is a counter reset: the new value is the increase since the reset
        total += float(np.where(d >= 0, d, v[1:]).sum())
        span = max(span, float(t[-1] - t[0]))
        found = True
    return (total, span) if found and span > 0 else None


def counter_rate(series: Sequence[Series], seg: Segment) -> float | None:
    """Per-second rate of the summed counters over ``seg`` (None with fewer than MIN_POINTS samples)."""
    if not any(_points(s, seg)[0].shape[0] >= MIN_POINTS for s in series):
        return None
    inc = counter_increase(series, seg)
    return None if inc is None else inc[0] / inc[1]
