"""PromQL's numeric kernels, now in :mod:`inferwatch.promql` (re-exported for existing callers)."""

from inferwatch.promql import bucket_quantile, extrapolated_rate, go_div, go_mean, over_time

__all__ = ["bucket_quantile", "extrapolated_rate", "go_div", "go_mean", "over_time"]
