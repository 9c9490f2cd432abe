"""Performance: realized from delayed labels, estimated without them (CBPE, direct loss estimation)."""

from inferwatch.quality.performance._calibration import Identity, Isotonic, fit_calibrator
from inferwatch.quality.performance._cbpe import CBPE, FittedCBPE, PerformanceEstimate
from inferwatch.quality.performance._dle import DLE, FittedDLE
from inferwatch.quality.performance._dle_features import numeric_column
from inferwatch.quality.performance._dle_model import HGBParams
from inferwatch.quality.performance._dle_table import default_features, estimate_regression_chunks
from inferwatch.quality.performance._dle_tune import TuneReport
from inferwatch.quality.performance._estimated import (
    EstimatedPerformance,
    fit_from_profile,
    labelled_reference,
)
from inferwatch.quality.performance._perf_table import (
    ChunkPerformance,
    ColumnSpec,
    estimate_chunks,
    join_targets,
)
from inferwatch.quality.performance._realized import RealizedPerformance

__all__ = [
    "CBPE",
    "DLE",
    "ChunkPerformance",
    "ColumnSpec",
    "EstimatedPerformance",
    "FittedCBPE",
    "FittedDLE",
    "HGBParams",
    "Identity",
    "Isotonic",
    "PerformanceEstimate",
    "RealizedPerformance",
    "TuneReport",
    "default_features",
    "estimate_chunks",
    "estimate_regression_chunks",
    "fit_calibrator",
    "fit_from_profile",
    "join_targets",
    "labelled_reference",
    "numeric_column",
]
