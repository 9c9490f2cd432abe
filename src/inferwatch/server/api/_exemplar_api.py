"""``/api/v1/query_exemplars``: the exemplars of the series a PromQL expression selects, as Prometheus 2.42.

Prometheus extracts the expression's vector selectors (``ExtractSelectors``)
and returns, per matching series that has exemplars in ``[start, end]``, its
labels and the exemplars (labels, value as a string, time in seconds), series
sorted by labels. An expression without selectors (``1 + 1``) answers
``null``; ``start`` and ``end`` default to the beginning and end of time.
"""

from __future__ import annotations

import math
from typing import Any

from inferwatch.model import Matcher
from inferwatch.promql import Aggregate, Binary, Call, Expr, Paren, Selector, Subquery, Unary, parse_promql
from inferwatch.server.api._prom_params import ApiError, Params, format_api_float, format_api_time
from inferwatch.store import ExemplarSeries, ExemplarStore

__all__ = ["query_exemplars", "selectors"]


def selectors(expr: Expr) -> list[tuple[Matcher, ...]]:
    """The matchers of every vector selector in ``expr``, in the order written."""
    if isinstance(expr, Selector):
        return [expr.matchers]
    if isinstance(expr, Call):
        return [m for arg in expr.args for m in selectors(arg)]
    if isinstance(expr, Aggregate):
        return [*(selectors(expr.param) if expr.param is not None else []), *selectors(expr.expr)]
    if isinstance(expr, Binary):
        return [*selectors(expr.lhs), *selectors(expr.rhs)]
    if isinstance(expr, Subquery | Unary | Paren):
        return selectors(expr.expr)
    return []


def _time(params: Params, name: str, default: float) -> float:
    try:
        return params.time(name, default)
    except ApiError:
        raw = params.get(name)
        raise ApiError(f"invalid parameter \"{name}\": Invalid time value for '{name}': "
                       f'cannot parse "{raw}" to a valid timestamp') from None


def query_exemplars(params: Params, store: ExemplarStore) -> Any:
    """The response data of ``query_exemplars`` (errors raise ``ApiError`` or ``PromQLError``)."""
    start, end = _time(params, "start", -math.inf), _time(params, "end", math.inf)
    if end < start:
        raise ApiError("end timestamp must not be before start timestamp")
    found = selectors(parse_promql(params.get("query") or ""))
    if not found:
        return None
    return [_series_json(r) for r in store.select(found, start, end)]


def _series_json(r: ExemplarSeries) -> dict[str, Any]:
    return {"seriesLabels": r.series.to_dict(), "exemplars": [
        {"labels": dict(sorted(e.labels.items())), "value": format_api_float(e.value),
         "timestamp": format_api_time(e.t)} for e in r.exemplars]}
