"""Labels, samples, series identity, metric kinds, tiers and the ``Clock``.

The bottom of the package table: depends on nothing else in inferwatch.
"""

from inferwatch.model import _catalog as metrics
from inferwatch.model._catalog import CATALOG, MetricSpec
from inferwatch.model._clock import Clock, ClockStepDetector, ScaledClock, SimulatedClock, SystemClock
from inferwatch.model._deadline import check as check_deadline
from inferwatch.model._deadline import checked as deadline_checked
from inferwatch.model._deadline import watching as watching_deadline
from inferwatch.model._durations import format_duration, parse_duration
from inferwatch.model._fingerprint import alertmanager_fingerprint, alertmanager_fingerprints
from inferwatch.model._gunzip import GunzipError, gunzip_bounded
from inferwatch.model._labels import (
    METRIC_NAME_LABEL,
    FreshLabels,
    Labels,
    is_valid_label_name,
    is_valid_metric_name,
)
from inferwatch.model._matchers import Matcher, MatchOp, matches_all, parse_matcher, parse_matchers
from inferwatch.model._priority import Priority, ShortTicket, pinned
from inferwatch.model._relabel import (
    RelabelAction,
    RelabelConfigError,
    RelabelRule,
    parse_relabel_configs,
    relabel,
)
from inferwatch.model._samples import STALE_NAN, MetricKind, Sample, is_stale_nan
from inferwatch.model._signals import STOP_SIGNALS, StopRequest, stop_signals, wait_for_stop
from inferwatch.model._sqlite import open_sqlite
from inferwatch.model._text import check_text, loads_json, readable, shown
from inferwatch.model._tiers import DEFAULT_INTERVAL_S, Dimension, Tier

__all__ = [
    "CATALOG",
    "DEFAULT_INTERVAL_S",
    "METRIC_NAME_LABEL",
    "STALE_NAN",
    "STOP_SIGNALS",
    "Clock",
    "ClockStepDetector",
    "Dimension",
    "FreshLabels",
    "GunzipError",
    "Labels",
    "MatchOp",
    "Matcher",
    "MetricKind",
    "MetricSpec",
    "Priority",
    "RelabelAction",
    "RelabelConfigError",
    "RelabelRule",
    "Sample",
    "ScaledClock",
    "ShortTicket",
    "SimulatedClock",
    "StopRequest",
    "SystemClock",
    "Tier",
    "alertmanager_fingerprint",
    "alertmanager_fingerprints",
    "check_deadline",
    "check_text",
    "deadline_checked",
    "format_duration",
    "gunzip_bounded",
    "is_stale_nan",
    "is_valid_label_name",
    "is_valid_metric_name",
    "loads_json",
    "matches_all",
    "metrics",
    "open_sqlite",
    "parse_duration",
    "parse_matcher",
    "parse_matchers",
    "parse_relabel_configs",
    "pinned",
    "readable",
    "relabel",
    "shown",
    "stop_signals",
    "wait_for_stop",
    "watching_deadline",
]
