"""Histograms on the deadband, measured as a reader sees them: quantiles over 5-minute windows.

``edge simulate`` reconstructs each bucket of a histogram as the server does (the
line between its sent points) and compares ``histogram_quantile(q,
increase(..._bucket[5m]))`` for q = 0.5, 0.9 and 0.99 with the one of the true
buckets, at every collection instant whose window holds no reset and at least
``floor`` observations above the quantile (``(1 - q) * count >= floor``: the
0.99 quantile of 20 requests is their largest, a bucket's width away with one
request more or less -- not a figure any band holds). The error is relative to
the true quantile. Pure Python: the agent's package imports
no numpy (``promql`` has the same rule, vectorised).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence

from inferwatch.model import Labels, Sample

__all__ = ["QUANTILES", "histogram_units", "quantile", "rank_of", "worst_quantile_error"]

QUANTILES = (0.5, 0.9, 0.99)


def quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float:
    """The ``q`` quantile of ``(le, cumulative count)`` buckets sorted by ``le``, as Prometheus does it."""
    if len(buckets) < 2 or not math.isinf(buckets[-1][0]):
        return math.nan
    top, fixed = -math.inf, []
    for le, c in buckets:  # cumulative counts never fall (a line per bucket may cross its neighbour's)
        top = max(top, c)
        fixed.append((le, top))
    buckets = fixed
    if buckets[-1][1] <= 0:
        return math.nan
    rank = q * buckets[-1][1]
    i = next(k for k, (_, c) in enumerate(buckets) if c >= rank)
    if i == len(buckets) - 1:
        return buckets[-2][0]
    if i == 0 and buckets[0][0] <= 0:
        return buckets[0][0]
    lo, below = (buckets[i - 1][0], buckets[i - 1][1]) if i else (0.0, 0.0)
    inside = buckets[i][1] - below
    return lo + (buckets[i][0] - lo) * ((rank - below) / inside if inside > 0 else 0.0)


def rank_of(x: float, buckets: Sequence[tuple[float, float]]) -> float:
    """The fraction of observations at or below ``x`` (the inverse of :func:`quantile`, same buckets)."""
    total = buckets[-1][1]
    below, lo = 0.0, 0.0
    for le, c in buckets:
        if x <= le:
            inside = (x - lo) / (le - lo) if le > lo and math.isfinite(le) else 1.0
            return (below + (c - below) * max(inside, 0.0)) / total
        below, lo = c, le
    return 1.0


def histogram_units(labels: Sequence[Labels]) -> dict[Labels, list[tuple[float, Labels]]]:
    """``_bucket`` series grouped by histogram (labels without ``le``), each unit's buckets by ``le``."""
    units: dict[Labels, list[tuple[float, Labels]]] = {}
    for ls in labels:
        le = ls.get("le")
        if not ls.name.endswith("_bucket") or le is None:
            continue
        try:
            bound = float(le)
        except ValueError:
            continue
        key = ls.without("le")
        units.setdefault(key, []).append((bound, ls))
    return {k: sorted(v, key=lambda b: b[0]) for k, v in units.items()}


def counter_rebuilt(raw: Sequence[Sample], sent: Sequence[Sample]) -> list[tuple[float, float, float]]:
    """``(t, true value, the server's line between sent points)`` at each raw instant inside the sent span.

    The server's line holds the last value over a drop (a reset), as ``increase`` reads it; the
    first raw sample of an instant counts.
    """
    ts, vs = [s.t for s in sent], [s.v for s in sent]
    out: list[tuple[float, float, float]] = []
    for s in raw:
        if not ts or not ts[0] <= s.t <= ts[-1] or not math.isfinite(s.v):
            continue
        if out and out[-1][0] == s.t:
            continue
        k = bisect.bisect_left(ts, s.t)
        if ts[k] == s.t:
            rec = vs[k]
        else:
            (t0, v0), (t1, v1) = (ts[k - 1], vs[k - 1]), (ts[k], vs[k])
            rec = v0 + (v1 - v0) * (s.t - t0) / (t1 - t0) if v1 >= v0 else v0
        out.append((s.t, s.v, rec))
    return out


def _rebuilt(raw: Sequence[Sample], sent: Sequence[Sample]) -> dict[float, tuple[float, float]]:
    out: dict[float, tuple[float, float]] = {}
    for t, true, rec in counter_rebuilt(raw, sent):
        out.setdefault(t, (true, rec))
    return out


def worst_quantile_error(buckets: Sequence[tuple[float, Labels]], raw: Mapping[Labels, Sequence[Sample]],
                         sent: Mapping[Labels, Sequence[Sample]], window: float, floor: float
                         ) -> tuple[float, float]:
    """A histogram's worst quantile error over every ``window``: (relative to the value, in rank).

    The rank error is ``|F(reconstructed quantile) - F(true quantile)|``, ``F`` the true
    buckets' distribution: the share of observations the reconstruction's quantile is
    off by (``F(true quantile)`` is ``q`` but in the ``+Inf`` bucket, where the quantile
    is the highest finite bound).
    """
    series = [_rebuilt(raw.get(ls, ()), sent.get(ls, ())) for _, ls in buckets]
    if not series or not all(series):
        return 0.0, 0.0
    times = sorted(set.intersection(*(set(s) for s in series)))
    bounds = [b for b, _ in buckets]
    worst = rank = 0.0
    j, reset_at = 0, -1
    for i, t in enumerate(times):
        if i and any(s[t][0] < s[times[i - 1]][0] for s in series):
            reset_at = i
        while t - times[j] > window + 1e-6:
            j += 1
        if j < reset_at or t - times[j] < window * 0.9:
            continue
        true = [(b, s[t][0] - s[times[j]][0]) for b, s in zip(bounds, series, strict=True)]
        got = [(b, s[t][1] - s[times[j]][1]) for b, s in zip(bounds, series, strict=True)]
        for q in QUANTILES:
            if (1.0 - q) * true[-1][1] < floor:  # fewer than `floor` observations above it: noise
                continue
            want, have = quantile(q, true), quantile(q, got)
            if want > 0 and math.isfinite(want) and not math.isnan(have):
                worst = max(worst, abs(have - want) / want)
                rank = max(rank, abs(rank_of(have, true) - rank_of(want, true)))
    return worst, rank
