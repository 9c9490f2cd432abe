"""Aggregation operators (promql/engine.go: aggregation) over one step's vector."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import Decimal

from inferwatch.model import METRIC_NAME_LABEL, Labels, deadline_checked
from inferwatch.promql._ast import Aggregate
from inferwatch.promql._gosort import go_sort, heap_pop, heap_push
from inferwatch.promql._kernels import go_mean, quantile, variance
from inferwatch.promql._values import EvalError, Vector, keep_labels, without_labels

__all__ = ["aggregate", "format_value_label", "group_key"]


def format_value_label(v: float) -> str:
    """Go's ``strconv.FormatFloat(v, 'f', -1, 64)``: shortest digits, never an exponent."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return format(Decimal(repr(v)).normalize(), "f")


def group_key(e: Aggregate) -> Callable[[Labels], Labels]:
    """The label set of the group a member of ``e`` falls in (``by``: those labels; ``without``: the
    rest, less the metric name)."""
    names = frozenset(e.grouping)
    if e.without:
        drop = names | {METRIC_NAME_LABEL}
        return lambda ls: without_labels(ls, drop)
    return lambda ls: keep_labels(ls, names)


def _minmax(vs: Sequence[float], bigger: bool) -> float:
    out = vs[0]
    for x in vs[1:]:
        if (x > out if bigger else x < out) or math.isnan(out):
            out = x
    return out


_SIMPLE: dict[str, Callable[[list[float]], float]] = {
    "sum": lambda vs: sum(vs[1:], vs[0]),
    "avg": go_mean,
    "count": lambda vs: float(len(vs)),
    "group": lambda vs: 1.0,
    "max": lambda vs: _minmax(vs, True),
    "min": lambda vs: _minmax(vs, False),
    "stdvar": variance,
    "stddev": lambda vs: math.sqrt(variance(vs)),
}


def aggregate(e: Aggregate, vec: Vector, param: float | str | None) -> Vector:
    """The aggregation ``e`` of ``vec`` (``param``: k, q or count_values' label, already evaluated)."""
    key = group_key(e)
    if e.op == "count_values":
        return _count_values(e, vec, str(param))
    groups: dict[Labels, list[tuple[Labels, float]]] = {}
    for ls, v in deadline_checked(vec):
        groups.setdefault(key(ls), []).append((ls, v))
    if e.op in ("topk", "bottomk"):
        assert isinstance(param, float)
        return _top(e.op == "topk", groups, param)
    if e.op == "quantile":
        assert isinstance(param, float)
        return [(k, quantile(param, [v for _, v in g])) for k, g in groups.items()]
    fn = _SIMPLE[e.op]
    return [(k, fn([v for _, v in g])) for k, g in deadline_checked(groups.items())]


def _top(top: bool, groups: dict[Labels, list[tuple[Labels, float]]], param: float) -> Vector:
    """Prometheus's heap: which of equal values it keeps, and in which order, is what its swaps leave."""
    if not -9.223372036854775808e18 <= param <= 9.223372036854775807e18:
        raise EvalError(f"Scalar value {format_value_label(param)} overflows int64")
    k = int(param)
    if k < 1:
        return []
    less = _top_less if top else _bottom_less
    out: Vector = []
    for g in groups.values():
        heap = [g[0]]
        for s in g[1:]:
            root = heap[0][1]
            if len(heap) < k or (root < s[1] if top else root > s[1]) or math.isnan(root):
                if len(heap) == k:
                    if k == 1:  # replaced in place, as Prometheus does
                        heap[0] = s
                        continue
                    heap_pop(heap, less)
                heap_push(heap, s, less)
        go_sort(heap, lambda a, b: less(b, a))  # sort.Reverse: the heap keeps the worst on top
        out.extend(heap)
    return out


def _top_less(a: tuple[Labels, float], b: tuple[Labels, float]) -> bool:
    return math.isnan(a[1]) or a[1] < b[1]


def _bottom_less(a: tuple[Labels, float], b: tuple[Labels, float]) -> bool:
    return math.isnan(a[1]) or a[1] > b[1]


def _count_values(e: Aggregate, vec: Vector, label: str) -> Vector:
    if not label.isidentifier() or not label.isascii():
        raise EvalError(f'invalid label name "{label}"')
    grouping = e.grouping if e.without else (*e.grouping, label)
    key = group_key(Aggregate(e.op, e.expr, grouping, e.without))
    counts: dict[Labels, float] = {}
    for ls, v in vec:
        k = key(ls.with_(**{label: format_value_label(v)}))
        counts[k] = counts.get(k, 0.0) + 1.0
    return list(counts.items())
