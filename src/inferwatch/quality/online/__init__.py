"""Online monitors: tumbling windows, mergeable sketches, streaming drift, confidence, anomalies, quality."""

from inferwatch.quality.online._anomaly import FittedAnomaly, FittedSupport, SupportDetector
from inferwatch.quality.online._confidence import CONFIDENCE_BUCKETS, ConfidenceAggregator
from inferwatch.quality.online._data_quality import DataQualityAggregator
from inferwatch.quality.online._stream import MIN_WINDOW_SAMPLES, DriftAggregator, WindowDrift
from inferwatch.quality.online._window import TumblingWindow

__all__ = [
    "CONFIDENCE_BUCKETS",
    "MIN_WINDOW_SAMPLES",
    "ConfidenceAggregator",
    "DataQualityAggregator",
    "DriftAggregator",
    "FittedAnomaly",
    "FittedSupport",
    "SupportDetector",
    "TumblingWindow",
    "WindowDrift",
]
