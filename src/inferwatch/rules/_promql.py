"""PromQL for rules: the syntax tree and parser of :mod:`inferwatch.promql` (re-exported here)."""

from __future__ import annotations

from inferwatch.promql import (
    AGGREGATIONS,
    Aggregate,
    Binary,
    Call,
    Expr,
    Number,
    PromQLError,
    Selector,
    parse_promql,
)

__all__ = ["AGGREGATIONS", "Aggregate", "Binary", "Call", "Expr", "Number", "PromQLError", "Selector",
           "parse_promql"]
