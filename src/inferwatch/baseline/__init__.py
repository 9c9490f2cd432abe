"""Dynamic thresholds for rules: seasonal forecast bands, scored and learned point by point.

>>> from inferwatch.baseline import SeasonalBaseline
>>> b = SeasonalBaseline()
>>> b.predict(0.0) is None  # no history yet: the rule's static fallback applies
True
"""

from inferwatch.baseline._band import Band, Baseline, Direction, is_anomalous
from inferwatch.baseline._csv import CsvSeries, parse_timestamp, read_csv_series
from inferwatch.baseline._detect import AlertWindow, ScoredSeries, alert_windows, runs, score_series
from inferwatch.baseline._likelihood import AnomalyLikelihood, NoveltyScorer
from inferwatch.baseline._nab import (
    PROFILES,
    NabFile,
    NabProfile,
    NabTally,
    probationary_length,
    row_of,
    scaled_sigmoid,
)
from inferwatch.baseline._novelty import FuzzyArt
from inferwatch.baseline._promql import promql_rules
from inferwatch.baseline._prophet import ProphetBaseline, prophet_available
from inferwatch.baseline._provider import RuleBand, SeriesBands, band_provider_factory, rule_seasonal_config
from inferwatch.baseline._recurrence import RecurrenceGate, recurrence_gate
from inferwatch.baseline._seasonal import SeasonalBaseline
from inferwatch.baseline._settings import (
    BaselineSettings,
    NoveltySettings,
    ProphetSettings,
    SeasonalSettings,
)

__all__ = [
    "PROFILES",
    "AlertWindow",
    "AnomalyLikelihood",
    "Band",
    "Baseline",
    "BaselineSettings",
    "CsvSeries",
    "Direction",
    "FuzzyArt",
    "NabFile",
    "NabProfile",
    "NabTally",
    "NoveltyScorer",
    "NoveltySettings",
    "ProphetBaseline",
    "ProphetSettings",
    "RecurrenceGate",
    "RuleBand",
    "ScoredSeries",
    "SeasonalBaseline",
    "SeasonalSettings",
    "SeriesBands",
    "alert_windows",
    "band_provider_factory",
    "is_anomalous",
    "parse_timestamp",
    "probationary_length",
    "promql_rules",
    "prophet_available",
    "read_csv_series",
    "recurrence_gate",
    "row_of",
    "rule_seasonal_config",
    "runs",
    "scaled_sigmoid",
    "score_series",
]
