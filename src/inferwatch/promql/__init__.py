"""The PromQL language of Prometheus 2.42: parser, evaluator over a store, functions.

>>> from inferwatch.model import Labels, Sample
>>> from inferwatch.store import MemoryStore
>>> store = MemoryStore()
>>> store.append([Sample(Labels.of("up", job="api"), 100.0, 1.0)])
>>> Engine(store).instant('count(up{job=~"a.*"})', 110.0).value
[(Labels({}), 1.0)]
"""

from inferwatch.promql._ast import (
    Aggregate,
    AtMod,
    Binary,
    Call,
    Expr,
    Matching,
    Number,
    Paren,
    Selector,
    String,
    Subquery,
    Unary,
    ValueType,
    format_number,
    value_type,
)
from inferwatch.promql._data import needed_spans
from inferwatch.promql._engine import DEFAULT_LOOKBACK_MS, DEFAULT_MAX_SAMPLES, Evaluator, LoadCache
from inferwatch.promql._kernels import (
    bucket_quantile,
    extrapolated_rate,
    go_div,
    go_mean,
    over_time,
    quantile,
)
from inferwatch.promql._lexer import PromQLError
from inferwatch.promql._parser import parse_promql, parse_typed
from inferwatch.promql._query import MAX_RANGE_POINTS, Engine, InstantResult, QueryTimeout, RangeResult
from inferwatch.promql._shared import SharedPlan, SharedResults, plan_shared
from inferwatch.promql._signatures import AGGREGATIONS, FUNCTIONS
from inferwatch.promql._values import EvalError, Matrix, Vector

__all__ = [
    "AGGREGATIONS",
    "DEFAULT_LOOKBACK_MS",
    "DEFAULT_MAX_SAMPLES",
    "FUNCTIONS",
    "MAX_RANGE_POINTS",
    "Aggregate",
    "AtMod",
    "Binary",
    "Call",
    "Engine",
    "EvalError",
    "Evaluator",
    "Expr",
    "InstantResult",
    "LoadCache",
    "Matching",
    "Matrix",
    "Number",
    "Paren",
    "PromQLError",
    "QueryTimeout",
    "RangeResult",
    "Selector",
    "SharedPlan",
    "SharedResults",
    "String",
    "Subquery",
    "Unary",
    "ValueType",
    "Vector",
    "bucket_quantile",
    "extrapolated_rate",
    "format_number",
    "go_div",
    "go_mean",
    "needed_spans",
    "over_time",
    "parse_promql",
    "parse_typed",
    "plan_shared",
    "quantile",
    "value_type",
]
