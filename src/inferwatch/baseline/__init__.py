"""Dynamic thresholds for rules: seasonal forecast bands, scored and learned point by point.

>>> from inferwatch.baseline import SeasonalBaseline
>>> b = SeasonalBaseline()
>>> b.predict(0.0) is None  # no history yet: the rule's static fallback applies
True
"""

from inferwatch.baseline._band import Band, Baseline, Direction, is_anomalous
from inferwatch.baseline._csv import CsvSeries, parse_timestamp, read_csv_series
from inferwatch.baseline._detect import AlertWindow, ScoredSeries, alert_windows, runs, score_series
from inferwatch.baseline._promql import promql_rules
from inferwatch.baseline._prophet import ProphetBaseline, prophet_available
from inferwatch.baseline._provider import SeriesBands, band_provider_factory, rule_seasonal_config
from inferwatch.baseline._recurrence import RecurrenceGate, recurrence_gate
from inferwatch.baseline._seasonal import SeasonalBaseline
from inferwatch.config._baseline import BaselineConfig, ProphetConfig, SeasonalConfig

__all__ = [
    "AlertWindow",
    "Band",
    "Baseline",
    "BaselineConfig",
    "CsvSeries",
    "Direction",
    "ProphetBaseline",
    "ProphetConfig",
    "RecurrenceGate",
    "ScoredSeries",
    "SeasonalBaseline",
    "SeasonalConfig",
    "SeriesBands",
    "alert_windows",
    "band_provider_factory",
    "is_anomalous",
    "parse_timestamp",
    "promql_rules",
    "prophet_available",
    "read_csv_series",
    "recurrence_gate",
    "rule_seasonal_config",
    "runs",
    "score_series",
]
