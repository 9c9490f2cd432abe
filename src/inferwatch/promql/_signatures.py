"""The functions of PromQL 2.42 and their argument types (promql/parser/functions.go)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["AGGREGATIONS", "FUNCTIONS", "Signature", "ValueType"]


class ValueType(StrEnum):
    """The four PromQL value types (as the API names them)."""

    SCALAR = "scalar"
    VECTOR = "vector"
    MATRIX = "matrix"
    STRING = "string"


S, V, M, STR = ValueType.SCALAR, ValueType.VECTOR, ValueType.MATRIX, ValueType.STRING


@dataclass(frozen=True, slots=True)
class Signature:
    """Argument types; ``variadic`` > 0: that many optional last args, -1: the last repeats."""

    args: tuple[ValueType, ...]
    returns: ValueType
    variadic: int = 0


_MATH = ("abs ceil floor exp sqrt ln log2 log10 sgn deg rad acos acosh asin asinh atan atanh "
         "cos cosh sin sinh tan tanh sort sort_desc absent timestamp histogram_count histogram_sum")
_OVER_TIME = ["avg", "count", "sum", "min", "max", "last", "present", "stddev", "stdvar", "absent"]
_DATES = "day_of_month day_of_week day_of_year days_in_month hour minute month year"

FUNCTIONS: dict[str, Signature] = {
    **{f: Signature((V,), V) for f in _MATH.split()},
    **{f"{f}_over_time": Signature((M,), V) for f in _OVER_TIME},
    **{f: Signature((M,), V) for f in ("rate", "irate", "increase", "delta", "idelta", "deriv", "changes",
                                       "resets")},
    **{f: Signature((V,), V, variadic=1) for f in _DATES.split()},
    "quantile_over_time": Signature((S, M), V),
    "clamp": Signature((V, S, S), V),
    "clamp_max": Signature((V, S), V),
    "clamp_min": Signature((V, S), V),
    "round": Signature((V, S), V, variadic=1),
    "holt_winters": Signature((M, S, S), V),
    "predict_linear": Signature((M, S), V),
    "histogram_quantile": Signature((S, V), V),
    "histogram_fraction": Signature((S, S, V), V),
    "label_replace": Signature((V, STR, STR, STR, STR), V),
    "label_join": Signature((V, STR, STR, STR), V, variadic=-1),
    "scalar": Signature((V,), S),
    "vector": Signature((S,), V),
    "time": Signature((), S),
    "pi": Signature((), S),
}

# Aggregation operators and the type of their parameter (None: no parameter).
AGGREGATIONS: dict[str, ValueType | None] = {
    "sum": None, "avg": None, "min": None, "max": None, "count": None, "group": None,
    "stddev": None, "stdvar": None, "topk": S, "bottomk": S, "quantile": S, "count_values": STR,
}

DOCUMENTED = {S: "scalar", V: "instant vector", M: "range vector", STR: "string"}
