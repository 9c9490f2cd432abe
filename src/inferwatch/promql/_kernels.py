"""PromQL's numeric kernels, written from Prometheus 2.42's definitions.

* :func:`extrapolated_rate` is ``extrapolatedRate`` (promql/functions.go):
  counter resets add the value before the reset; the result is extrapolated
  to the window edges when the first/last sample lies within 1.1 average
  sample intervals of the edge (else by half an interval), and never below
  the counter's zero point.
* :func:`bucket_quantile` is ``bucketQuantile`` (promql/quantile.go): sorted
  buckets, ``+Inf`` required, equal bounds coalesced, counts forced
  monotonic, linear interpolation inside the bucket, the lowest bucket
  starting at 0 (or returning its bound when that is <= 0), the ``+Inf``
  bucket answering the second-highest bound.
* :func:`go_div` and friends keep IEEE semantics (Go never raises on x/0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "bucket_quantile", "extrapolated_rate", "go_div", "go_mean", "go_mod", "go_pow", "holt_winters",
    "linear_regression", "over_time", "quantile", "variance",
]


def go_div(a: float, b: float) -> float:
    """``a / b`` with IEEE results for a zero divisor (Go semantics)."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * (math.copysign(1.0, b))
    return a / b


def go_pow(a: float, b: float) -> float:
    """Go's ``math.Pow``: IEEE results where Python raises."""
    try:
        return math.pow(a, b)
    except OverflowError:
        odd = float(b).is_integer() and int(b) % 2 == 1
        return -math.inf if a < 0 and odd else math.inf
    except ValueError:
        if a == 0 and b < 0:
            odd = float(b).is_integer() and int(b) % 2 == 1
            return -math.inf if odd and math.copysign(1.0, a) < 0 else math.inf
        return math.nan


def go_mod(a: float, b: float) -> float:
    """Go's ``math.Mod`` (the sign of ``a``; NaN for a zero or infinite divisor)."""
    if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return math.nan
    return math.fmod(a, b)


def quantile(q: float, values: Sequence[float]) -> float:
    """Prometheus's ``quantile`` (rank ``q·(n-1)``, linear interpolation; ±Inf outside [0, 1])."""
    if not values or math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    vs = sorted(values, key=lambda x: (not math.isnan(x), x))
    n = len(vs)
    rank = q * (n - 1)
    lo = max(0, math.floor(rank))
    hi = min(n - 1, lo + 1)
    weight = rank - math.floor(rank)
    return vs[lo] * (1 - weight) + vs[hi] * weight


def variance(values: Sequence[float]) -> float:
    """Population variance by Welford's method, as ``stdvar`` computes it."""
    count, mean, aux = 0, 0.0, 0.0
    for x in values:
        count += 1
        delta = x - mean
        mean += delta / count
        aux += delta * (x - mean)
    return aux / count


def linear_regression(t_ms: np.ndarray, v: np.ndarray, intercept_ms: int) -> tuple[float, float]:
    """Least-squares ``(slope, intercept)`` with x in seconds from ``intercept_ms`` (Prometheus's)."""
    ys = v.tolist()
    if all(y == ys[0] for y in ys):
        return (math.nan, math.nan) if math.isinf(ys[0]) else (0.0, ys[0])
    xs = ((t_ms - intercept_ms) / 1e3).tolist()
    n = float(len(ys))
    sum_x = math.fsum(xs)
    sum_y = sum(ys)
    sum_xy = sum(x * y for x, y in zip(xs, ys, strict=True))
    sum_x2 = math.fsum(x * x for x in xs)
    cov_xy = sum_xy - sum_x * sum_y / n
    var_x = sum_x2 - sum_x * sum_x / n
    slope = go_div(cov_xy, var_x)
    return slope, sum_y / n - slope * sum_x / n


def holt_winters(v: np.ndarray, sf: float, tf: float) -> float:
    """Double exponential smoothing of the points (``holt_winters``)."""
    vals = v.tolist()
    s0, s1, b = 0.0, vals[0], vals[1] - vals[0]
    for i in range(1, len(vals)):
        x = sf * vals[i]
        if i > 1:
            b = tf * (s1 - s0) + (1 - tf) * b
        y = (1 - sf) * (s1 + b)
        s0, s1 = s1, x + y
    return float(s1)


def extrapolated_rate(
    t_ms: np.ndarray, v: np.ndarray, range_start_ms: int, range_end_ms: int, range_s: float,
    *, is_counter: bool = True, is_rate: bool = True,
) -> float | None:
    """``rate``/``increase``/``delta`` of the points in the window; ``None`` under two points."""
    n = len(v)
    if n < 2:
        return None
    first_v, last_v = float(v[0]), float(v[-1])
    result = last_v - first_v
    if is_counter:
        prev = v[:-1]
        drops = v[1:] < prev
        if drops.any():
            # Sequential sum, as Go adds each reset in turn.
            for x in prev[drops].tolist():
                result += x
    first_t, last_t = int(t_ms[0]), int(t_ms[-1])
    duration_to_start = (first_t - range_start_ms) / 1000
    duration_to_end = (range_end_ms - last_t) / 1000
    sampled = (last_t - first_t) / 1000
    avg_between = sampled / (n - 1)
    if is_counter and result > 0 and first_v >= 0:
        duration_to_zero = sampled * (first_v / result)
        if duration_to_zero < duration_to_start:
            duration_to_start = duration_to_zero
    threshold = avg_between * 1.1
    interval = sampled
    interval += duration_to_start if duration_to_start < threshold else avg_between / 2
    interval += duration_to_end if duration_to_end < threshold else avg_between / 2
    factor = interval / sampled
    if is_rate:
        factor /= range_s
    return result * factor


def over_time(func: str, v: np.ndarray) -> float | None:
    """``avg_over_time``, ``min_over_time``, ``max_over_time`` of the points (``None`` if empty)."""
    if len(v) == 0:
        return None
    vals = v.tolist()
    if func == "avg_over_time":
        return go_mean(vals)
    out = vals[0]
    for x in vals[1:]:
        bigger = func == "max_over_time" and (x > out or math.isnan(out))
        if bigger or (func == "min_over_time" and (x < out or math.isnan(out))):
            out = x
    return float(out)


def bucket_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float:
    """The ``q`` quantile from ``(upper_bound, cumulative_count)`` buckets, as Prometheus computes it."""
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    bs = sorted(buckets, key=lambda b: b[0])
    if not bs or not (math.isinf(bs[-1][0]) and bs[-1][0] > 0):
        return math.nan
    merged: list[list[float]] = []
    for ub, c in bs:
        if merged and merged[-1][0] == ub:
            merged[-1][1] += c
        else:
            merged.append([ub, c])
    top = merged[0][1]
    for b in merged[1:]:
        if b[1] > top:
            top = b[1]
        elif b[1] < top:
            b[1] = top
    if len(merged) < 2:
        return math.nan
    observations = merged[-1][1]
    if observations == 0:
        return math.nan
    rank = q * observations
    idx = next((i for i in range(len(merged) - 1) if merged[i][1] >= rank), len(merged) - 1)
    if idx == len(merged) - 1:
        return merged[-2][0]
    if idx == 0 and merged[0][0] <= 0:
        return merged[0][0]
    start, end, count = 0.0, merged[idx][0], merged[idx][1]
    if idx > 0:
        start = merged[idx - 1][0]
        count -= merged[idx - 1][1]
        rank -= merged[idx - 1][1]
    return start + (end - start) * go_div(rank, count)


def go_mean(vs: Sequence[float]) -> float:
    """Prometheus's incremental mean (engine.go), so results agree to the last bit."""
    mean, count = vs[0], 1
    for x in vs[1:]:
        count += 1
        if math.isinf(mean):
            if math.isinf(x) and (mean > 0) == (x > 0):
                continue
            if not math.isinf(x) and not math.isnan(x):
                continue
        mean += x / count - mean / count
    return mean
