"""Functions over range vectors (promql/functions.go): rate and friends, ``*_over_time``, deriv.

Each takes the step's :class:`Matrix` (and scalar arguments) and returns a
vector; all but ``last_over_time`` drop the metric name.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from inferwatch.promql._kernels import (
    extrapolated_rate,
    go_mean,
    holt_winters,
    linear_regression,
    quantile,
    variance,
)
from inferwatch.promql._values import EvalError, Matrix, Vector, drop_name

__all__ = ["RANGE_FUNCTIONS", "RangeFn"]

Points = Callable[[np.ndarray, np.ndarray, Matrix], float | None]
RangeFn = Callable[[Matrix, list[float]], Vector]


def _per_series(fn: Points, *, keep_name: bool = False) -> RangeFn:
    def run(m: Matrix, _: list[float]) -> Vector:
        out: Vector = []
        for ls, t, v in m.series:
            if len(v) == 0:
                continue
            r = fn(t, v, m)
            if r is not None:
                out.append((ls if keep_name else drop_name(ls), r))
        return out

    return run


def _extrapolated(is_counter: bool, is_rate: bool) -> Points:
    return lambda t, v, m: extrapolated_rate(t, v, m.lo, m.hi, m.range_s, is_counter=is_counter,
                                             is_rate=is_rate)


def _instant_delta(is_rate: bool) -> Points:
    def run(t: np.ndarray, v: np.ndarray, _: Matrix) -> float | None:
        if len(v) < 2:
            return None
        last, prev = float(v[-1]), float(v[-2])
        result = last if is_rate and last < prev else last - prev
        dt = int(t[-1]) - int(t[-2])
        if dt == 0:
            return None
        return result / (dt / 1000) if is_rate else result

    return run


def _minmax(bigger: bool) -> Points:
    def run(_: np.ndarray, v: np.ndarray, __: Matrix) -> float:
        vals = v.tolist()
        out = vals[0]
        for x in vals[1:]:
            if (x > out if bigger else x < out) or math.isnan(out):
                out = x
        return float(out)

    return run


def _changes(_: np.ndarray, v: np.ndarray, __: Matrix) -> float:
    vals = v.tolist()
    return float(sum(1 for a, b in itertools.pairwise(vals)
                     if not (a == b or (math.isnan(a) and math.isnan(b)))))


def _resets(_: np.ndarray, v: np.ndarray, __: Matrix) -> float:
    vals = v.tolist()
    return float(sum(1 for a, b in itertools.pairwise(vals) if b < a))


def _deriv(t: np.ndarray, v: np.ndarray, _: Matrix) -> float | None:
    if len(v) < 2:
        return None
    return linear_regression(t, v, int(t[0]))[0]


def _quantile_over_time(m: Matrix, args: list[float]) -> Vector:
    q = args[0]
    return _per_series(lambda _, v, __: quantile(q, v.tolist()))(m, args)


def _predict_linear(m: Matrix, args: list[float]) -> Vector:
    def run(t: np.ndarray, v: np.ndarray, mm: Matrix) -> float | None:
        if len(v) < 2:
            return None
        slope, intercept = linear_regression(t, v, mm.ts)
        return intercept + slope * args[0]

    return _per_series(run)(m, args)


def _holt_winters(m: Matrix, args: list[float]) -> Vector:
    sf, tf = args
    if not 0 < sf < 1:
        raise EvalError(f"invalid smoothing factor. Expected: 0 < sf < 1, got: {sf:f}")
    if not 0 < tf < 1:
        raise EvalError(f"invalid trend factor. Expected: 0 < tf < 1, got: {tf:f}")
    return _per_series(lambda _, v, __: holt_winters(v, sf, tf) if len(v) >= 2 else None)(m, args)


RANGE_FUNCTIONS: dict[str, RangeFn] = {
    "rate": _per_series(_extrapolated(True, True)),
    "increase": _per_series(_extrapolated(True, False)),
    "delta": _per_series(_extrapolated(False, False)),
    "irate": _per_series(_instant_delta(True)),
    "idelta": _per_series(_instant_delta(False)),
    "avg_over_time": _per_series(lambda _, v, __: go_mean(v.tolist())),
    "sum_over_time": _per_series(lambda _, v, __: float(sum(v.tolist()))),
    "count_over_time": _per_series(lambda _, v, __: float(len(v))),
    "min_over_time": _per_series(_minmax(False)),
    "max_over_time": _per_series(_minmax(True)),
    "last_over_time": _per_series(lambda _, v, __: float(v[-1]), keep_name=True),
    "present_over_time": _per_series(lambda _, v, __: 1.0),
    "stdvar_over_time": _per_series(lambda _, v, __: variance(v.tolist())),
    "stddev_over_time": _per_series(lambda _, v, __: math.sqrt(variance(v.tolist()))),
    "changes": _per_series(_changes),
    "resets": _per_series(_resets),
    "deriv": _per_series(_deriv),
    "quantile_over_time": _quantile_over_time,
    "predict_linear": _predict_linear,
    "holt_winters": _holt_winters,
}

