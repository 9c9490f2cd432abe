"""Binary operators (promql/engine.go: VectorBinop, VectorscalarBinop, set operators).

Matching signatures ignore ``__name__`` unless ``on(…)`` names it; arithmetic
drops the metric name, filters keep it; ``bool`` turns a filter into 0/1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from inferwatch.model import METRIC_NAME_LABEL, Labels, deadline_checked
from inferwatch.promql._ast import COMPARISONS, Binary, Matching
from inferwatch.promql._kernels import go_div, go_mod, go_pow
from inferwatch.promql._values import EvalError, Value, Vector, drop_name

__all__ = ["apply_binary", "scalar_op"]

_ARITH: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": go_div,
    "%": go_mod, "^": go_pow, "atan2": math.atan2,
}
_CMP: dict[str, Callable[[float, float], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, ">": lambda a, b: a > b,
    "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
}
_DROPS_NAME = frozenset({"+", "-", "*", "/", "%", "^"})


def _elem(op: str, a: float, b: float) -> tuple[float, bool]:
    cmp = _CMP.get(op)
    if cmp is None:
        return _ARITH[op](a, b), True
    return a, cmp(a, b)


def scalar_op(op: str, a: float, b: float) -> float:
    """Scalar ``a op b`` (comparisons only with ``bool``: 1 or 0)."""
    if op in _CMP:
        return 1.0 if _CMP[op](a, b) else 0.0
    return _ARITH[op](a, b)


def apply_binary(b: Binary, lhs: Value, rhs: Value) -> Value:
    """Apply ``b`` to evaluated operands (scalars are floats, vectors lists)."""
    if isinstance(lhs, float) and isinstance(rhs, float):
        return scalar_op(b.op, lhs, rhs)
    if isinstance(lhs, list) and isinstance(rhs, list):
        m = b.matching or Matching()
        if b.op == "and":
            return _and_unless(lhs, rhs, m, keep=True)
        if b.op == "unless":
            return _and_unless(lhs, rhs, m, keep=False)
        if b.op == "or":
            return _or(lhs, rhs, m)
        return _vector_op(b, lhs, rhs, m)
    if isinstance(lhs, list) and isinstance(rhs, float):
        return _vector_scalar(b, lhs, rhs, swap=False)
    if isinstance(rhs, list) and isinstance(lhs, float):
        return _vector_scalar(b, rhs, lhs, swap=True)
    raise EvalError(f"unsupported operand types for {b.op}")


def _sig_fn(m: Matching) -> Callable[[Labels], tuple[tuple[str, str], ...]]:
    names = frozenset(m.labels)
    if m.on:
        return lambda ls: tuple((k, v) for k, v in ls.items_tuple if k in names)
    drop = names | {METRIC_NAME_LABEL}
    return lambda ls: tuple((k, v) for k, v in ls.items_tuple if k not in drop)


def _and_unless(lhs: Vector, rhs: Vector, m: Matching, *, keep: bool) -> Vector:
    sig = _sig_fn(m)
    right = {sig(ls) for ls, _ in rhs}
    return [(ls, v) for ls, v in lhs if (sig(ls) in right) == keep]


def _or(lhs: Vector, rhs: Vector, m: Matching) -> Vector:
    sig = _sig_fn(m)
    left = {sig(ls) for ls, _ in lhs}
    return lhs + [(ls, v) for ls, v in rhs if sig(ls) not in left]


def _vector_scalar(b: Binary, vec: Vector, scalar: float, *, swap: bool) -> Vector:
    out: Vector = []
    is_cmp = b.op in COMPARISONS
    drop = b.op in _DROPS_NAME or b.bool_
    for ls, v in vec:
        lv, rv = (scalar, v) if swap else (v, scalar)
        value, keep = _elem(b.op, lv, rv)
        if is_cmp and swap:
            value = rv
        if b.bool_:
            value, keep = (1.0 if keep else 0.0), True
        if keep:
            out.append((drop_name(ls) if drop else ls, value))
    return out


def _result_labels(ls: Labels, rs: Labels, b: Binary, m: Matching) -> Labels:
    items = dict(ls.items_tuple)
    if b.op in _DROPS_NAME or b.bool_:
        items.pop(METRIC_NAME_LABEL, None)
    if m.card == "one-to-one":
        if m.on:
            items = {k: v for k, v in items.items() if k in m.labels}
        else:
            for k in m.labels:
                items.pop(k, None)
    for k in m.include:
        if rs.get(k, ""):
            items[k] = rs[k]
        else:
            items.pop(k, None)
    return Labels(items)


def go_labels(ls: Labels) -> str:
    """Labels as Go's ``labels.Labels.String()`` prints them (name inside the braces)."""
    return "{" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in ls.items_tuple) + "}"


def _vector_op(b: Binary, lhs: Vector, rhs: Vector, m: Matching) -> Vector:
    if not lhs or not rhs:
        return []
    swapped = m.card == "one-to-many"
    if swapped:
        lhs, rhs = rhs, lhs
    sig = _sig_fn(m)
    right: dict[tuple[tuple[str, str], ...], tuple[Labels, float]] = {}
    for rs, rv in deadline_checked(rhs):
        key = sig(rs)
        if key in right:
            side = "left" if swapped else "right"
            group = "{" + ", ".join(f'{k}="{v}"' for k, v in key) + "}"
            raise EvalError(f"found duplicate series for the match group {group} on the {side} hand-side of "
                            f"the operation: [{go_labels(rs)}, {go_labels(right[key][0])}];many-to-many "
                            "matching not allowed: matching labels must be unique on one side")
        right[key] = (rs, rv)
    matched: dict[tuple[tuple[str, str], ...], set[Labels]] = {}
    out: Vector = []
    for ls, lv in deadline_checked(lhs):
        key = sig(ls)
        hit = right.get(key)
        if hit is None:
            continue
        rs, rv = hit
        a, c = (rv, lv) if swapped else (lv, rv)
        value, keep = _elem(b.op, a, c)
        if b.bool_:
            value = 1.0 if keep else 0.0
        elif not keep:
            continue
        metric = _result_labels(ls, rs, b, m)
        seen = matched.get(key)
        if m.card == "one-to-one":
            if seen is not None:
                raise EvalError("multiple matches for labels: many-to-one matching must be explicit "
                                "(group_left/group_right)")
            matched[key] = set()
        else:
            if seen is None:
                seen = matched[key] = set()
            elif metric in seen:
                raise EvalError("multiple matches for labels: grouping labels must ensure unique matches")
            seen.add(metric)
        out.append((metric, value))
    return out
