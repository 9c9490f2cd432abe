"""Samples, metric kinds and the staleness marker."""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass

from inferwatch.model._labels import Labels

__all__ = ["STALE_NAN", "MetricKind", "Sample", "is_stale_nan"]

# Prometheus marks a series stale with this exact NaN bit pattern
# (value.StaleNaN = 0x7ff0000000000002); an ordinary NaN is a real sample.
_STALE_BITS = 0x7FF0000000000002
STALE_NAN: float = struct.unpack("<d", struct.pack("<Q", _STALE_BITS))[0]


def is_stale_nan(v: float) -> bool:
    """Whether ``v`` is Prometheus's staleness marker (not any NaN)."""
    return math.isnan(v) and struct.unpack("<Q", struct.pack("<d", v))[0] == _STALE_BITS


class MetricKind(enum.StrEnum):
    """The kinds of metric, as in the Prometheus/OpenMetrics data model."""

    COUNTER = "counter"
    GAUGE = "gauge"
    HISTOGRAM = "histogram"
    SUMMARY = "summary"
    UNTYPED = "untyped"


@dataclass(frozen=True, slots=True)
class Sample:
    """One value of one series at one time (Unix seconds)."""

    labels: Labels
    t: float
    v: float
