"""Functions over instant vectors and scalars (promql/functions.go), applied to evaluated arguments."""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np

from inferwatch.model import METRIC_NAME_LABEL, Labels, MatchOp, is_valid_label_name
from inferwatch.promql._ast import Selector
from inferwatch.promql._gosort import go_sort
from inferwatch.promql._kernels import bucket_quantile
from inferwatch.promql._values import EvalError, Value, Vector, check_unique, drop_name, without_labels

__all__ = ["VECTOR_FUNCTIONS", "VectorFn", "absent_labels", "go_expand"]

VectorFn = Callable[[list[Value], int], Value]


def _math(fn: Callable[[np.ndarray], np.ndarray]) -> VectorFn:
    def run(args: list[Value], _: int) -> Value:
        vec = args[0]
        assert isinstance(vec, list)
        if not vec:
            return []
        with np.errstate(all="ignore"):
            out = fn(np.array([v for _, v in vec], dtype=np.float64)).tolist()
        return [(drop_name(ls), float(x)) for (ls, _), x in zip(vec, out, strict=True)]

    return run


def _sgn(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.sign(x))


_NP: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs": np.abs, "ceil": np.ceil, "floor": np.floor, "exp": np.exp, "sqrt": np.sqrt, "ln": np.log,
    "log2": np.log2, "log10": np.log10, "sgn": _sgn, "deg": np.degrees, "rad": np.radians,
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
    "atanh": np.arctanh, "cos": np.cos, "cosh": np.cosh, "sin": np.sin, "sinh": np.sinh, "tan": np.tan,
    "tanh": np.tanh,
}


def _round(args: list[Value], _: int) -> Value:
    vec = args[0]
    assert isinstance(vec, list)
    to = args[1] if len(args) > 1 else 1.0
    assert isinstance(to, float)
    inv = 1.0 / to if to != 0 else math.inf
    return [(drop_name(ls), math.floor(v * inv + 0.5) / inv if math.isfinite(v * inv) else v * inv / inv)
            for ls, v in vec]


def _clamp(args: list[Value], _: int) -> Value:
    vec, lo, hi = args
    assert isinstance(vec, list) and isinstance(lo, float) and isinstance(hi, float)
    if hi < lo:
        return []
    return [(drop_name(ls), _go_max(lo, _go_min(hi, v))) for ls, v in vec]


def _go_max(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return max(a, b)


def _go_min(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return min(a, b)


def _clamp_max(args: list[Value], _: int) -> Value:
    vec, hi = args
    assert isinstance(vec, list) and isinstance(hi, float)
    return [(drop_name(ls), _go_min(v, hi)) for ls, v in vec]


def _clamp_min(args: list[Value], _: int) -> Value:
    vec, lo = args
    assert isinstance(vec, list) and isinstance(lo, float)
    return [(drop_name(ls), _go_max(v, lo)) for ls, v in vec]


def _date(fn: Callable[[datetime], float]) -> VectorFn:
    def run(args: list[Value], ts: int) -> Value:
        vec = args[0] if args else [(Labels(), ts / 1000)]
        assert isinstance(vec, list)
        out: Vector = []
        for ls, v in vec:
            if not math.isfinite(v):
                out.append((drop_name(ls), math.nan))
                continue
            out.append((drop_name(ls), fn(datetime.fromtimestamp(int(v), UTC))))
        return out

    return run


_DATES: dict[str, Callable[[datetime], float]] = {
    "day_of_month": lambda d: float(d.day),
    "day_of_week": lambda d: float((d.weekday() + 1) % 7),
    "day_of_year": lambda d: float(d.timetuple().tm_yday),
    "days_in_month": lambda d: float(calendar.monthrange(d.year, d.month)[1]),
    "hour": lambda d: float(d.hour),
    "minute": lambda d: float(d.minute),
    "month": lambda d: float(d.month),
    "year": lambda d: float(d.year),
}


def _scalar(args: list[Value], _: int) -> Value:
    vec = args[0]
    assert isinstance(vec, list)
    return vec[0][1] if len(vec) == 1 else math.nan


def _vector(args: list[Value], _: int) -> Value:
    assert isinstance(args[0], float)
    return [(Labels(), args[0])]


def _sort(desc: bool) -> VectorFn:
    def run(args: list[Value], _: int) -> Value:
        vec = args[0]
        assert isinstance(vec, list)
        out = list(vec)
        # Prometheus sorts with NaN "smallest" against the wanted order, then reverses: NaN last
        # both ways, and equal values where Go's sort leaves them
        go_sort(out, _after_desc if desc else _after_asc)
        return out

    return run


def _after_asc(a: tuple[Labels, float], b: tuple[Labels, float]) -> bool:
    return math.isnan(b[1]) or b[1] > a[1]  # sort.Reverse of vectorByReverseValueHeap


def _after_desc(a: tuple[Labels, float], b: tuple[Labels, float]) -> bool:
    return math.isnan(b[1]) or b[1] < a[1]  # sort.Reverse of vectorByValueHeap


_GO_TEMPLATE = re.compile(r"\$(?:\$|\{(\w+)\}|(\w+))")


def go_expand(template: str, m: re.Match[str]) -> str:
    """Go's ``Regexp.ExpandString``: ``$1``, ``${1}``, ``$name``; unknown groups expand to ``""``."""

    def sub(x: re.Match[str]) -> str:
        name = x.group(1) or x.group(2)
        if name is None:
            return "$"
        try:
            g = m.group(int(name)) if name.isdigit() else m.group(name)
        except IndexError:
            return ""
        return g or ""

    return _GO_TEMPLATE.sub(sub, template)


def _label_replace(args: list[Value], _: int) -> Value:
    vec, dst, repl, src, regex = args
    assert isinstance(vec, list) and isinstance(dst, str) and isinstance(repl, str)
    assert isinstance(src, str) and isinstance(regex, str)
    try:
        rx = re.compile(rf"^(?:{regex})$", re.DOTALL)
    except re.error as exc:
        raise EvalError(f"invalid regular expression in label_replace(): {regex}: {exc}") from None
    if not is_valid_label_name(dst):
        raise EvalError(f"invalid destination label name in label_replace(): {dst}")
    out: Vector = []
    for ls, v in vec:
        m = rx.match(ls.get(src, ""))
        if m is None:
            out.append((ls, v))
            continue
        res = go_expand(repl, m)
        out.append((ls.with_(**{dst: res}) if res or dst in ls else ls, v))
    return check_unique(out)


def _label_join(args: list[Value], _: int) -> Value:
    vec, dst, sep, *srcs = args
    assert isinstance(vec, list) and isinstance(dst, str) and isinstance(sep, str)
    if not is_valid_label_name(dst):
        raise EvalError(f"invalid destination label name in label_join(): {dst}")
    for s in srcs:
        if not isinstance(s, str) or not is_valid_label_name(s):
            raise EvalError(f"invalid source label name in label_join(): {s}")
    out: Vector = []
    for ls, v in vec:
        joined = sep.join(ls.get(str(s), "") for s in srcs)
        out.append((ls.with_(**{dst: joined}) if joined or dst in ls else ls, v))
    return check_unique(out)


_LE = frozenset({"le"})
_LE_AND_NAME = frozenset({"le", METRIC_NAME_LABEL})


def _histogram_quantile(args: list[Value], _: int) -> Value:
    q, vec = args
    assert isinstance(q, float) and isinstance(vec, list)
    # grouped by every label but le, as Prometheus does: two histograms that differ only by
    # name give the same output labels, and the result's duplicate check fails the query
    groups: dict[Labels, tuple[Labels, list[tuple[float, float]]]] = {}
    for ls, v in vec:
        try:
            ub = float(ls["le"])
        except (KeyError, ValueError):
            continue
        key = without_labels(ls, _LE)
        if key not in groups:
            groups[key] = (without_labels(ls, _LE_AND_NAME), [])
        groups[key][1].append((ub, v))
    return [(out, bucket_quantile(q, b)) for out, b in groups.values()]


def absent_labels(arg: object) -> Labels:
    """The labels ``absent(arg)`` returns: each ``=`` matcher's, unless its name has another matcher.

    A second matcher on the same name drops it, whatever its kind (Prometheus keeps this
    historic rule: ``absent(x{job="a", job=~"b"})`` has no ``job``), and an ``=`` after a
    dropped one sets it again.
    """
    if not isinstance(arg, Selector):
        return Labels()
    out: dict[str, str] = {}
    has: set[str] = set()
    for m in arg.matchers:
        if m.name == METRIC_NAME_LABEL:
            continue
        if m.op is MatchOp.EQ and m.name not in has:
            out[m.name] = m.value
            has.add(m.name)
        else:
            out.pop(m.name, None)
    return Labels(out)


def _native_only(args: list[Value], _: int) -> Value:
    return []  # histogram_count/sum/fraction read native histograms, which inferwatch does not store


VECTOR_FUNCTIONS: dict[str, VectorFn] = {
    **{name: _math(fn) for name, fn in _NP.items()},
    **{name: _date(fn) for name, fn in _DATES.items()},
    "round": _round,
    "clamp": _clamp,
    "clamp_max": _clamp_max,
    "clamp_min": _clamp_min,
    "scalar": _scalar,
    "vector": _vector,
    "sort": _sort(False),
    "sort_desc": _sort(True),
    "label_replace": _label_replace,
    "label_join": _label_join,
    "histogram_quantile": _histogram_quantile,
    "histogram_count": _native_only,
    "histogram_sum": _native_only,
    "histogram_fraction": _native_only,
    "time": lambda _, ts: ts / 1000,
    "pi": lambda _, __: math.pi,
}
