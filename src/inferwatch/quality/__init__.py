"""Model quality: drift statistics, reference profiles, streaming drift, confidence and anomalies.

>>> import numpy as np
>>> from inferwatch.quality import DriftDetector
>>> rng = np.random.default_rng(0)
>>> fitted = DriftDetector().fit({"age": rng.normal(40, 10, 10_000)})
>>> fitted.score({"age": rng.normal(40, 10, 10_000)}).features[0].verdict.value
'stable'
"""

from inferwatch.quality._anomaly import FittedAnomaly, FittedSupport, SupportDetector
from inferwatch.quality._binning import bin_counts, equal_width_cuts, quantile_cuts
from inferwatch.quality._calibration import Identity, Isotonic, fit_calibrator
from inferwatch.quality._cbpe import CBPE, FittedCBPE, PerformanceEstimate
from inferwatch.quality._confidence import CONFIDENCE_BUCKETS, ConfidenceAggregator
from inferwatch.quality._data_quality import DataQualityAggregator
from inferwatch.quality._detector import STATISTICS, DriftDetector, FittedDrift
from inferwatch.quality._distances import TestResult, chi2_homogeneity, js_distance, ks_2samp, wasserstein
from inferwatch.quality._dle import DLE, FittedDLE
from inferwatch.quality._dle_features import numeric_column
from inferwatch.quality._dle_model import HGBParams
from inferwatch.quality._dle_table import default_features, estimate_regression_chunks
from inferwatch.quality._dle_tune import TuneReport
from inferwatch.quality._embedding import (
    DEFAULT_AUC_THRESHOLD,
    EmbeddingDrift,
    classifier_auc,
    embedding_drift,
    mmd2,
    mmd2_permutation,
)
from inferwatch.quality._embedding_stream import MIN_EMBEDDING_SAMPLES, EmbeddingDriftAggregator, Reservoir
from inferwatch.quality._estimated import EstimatedPerformance, fit_from_profile, labelled_reference
from inferwatch.quality._html import render_html
from inferwatch.quality._io import read_table
from inferwatch.quality._perf_table import ChunkPerformance, ColumnSpec, estimate_chunks, join_targets
from inferwatch.quality._profile import (
    CategoricalProfile,
    NumericProfile,
    Profile,
    build_profile,
)
from inferwatch.quality._profile_json import dump_profile, load_profile, profile_from_json, profile_to_json
from inferwatch.quality._psi import (
    DEFAULT_EPSILON,
    UNSEEN,
    psi,
    psi_categorical,
    psi_critical,
    psi_from_counts,
)
from inferwatch.quality._realized import RealizedPerformance
from inferwatch.quality._report import DriftReport, FeatureDrift
from inferwatch.quality._stream import MIN_WINDOW_SAMPLES, DriftAggregator, WindowDrift
from inferwatch.quality._verdict import Thresholds, Verdict

__all__ = [
    "CBPE",
    "CONFIDENCE_BUCKETS",
    "DEFAULT_AUC_THRESHOLD",
    "DEFAULT_EPSILON",
    "DLE",
    "MIN_EMBEDDING_SAMPLES",
    "MIN_WINDOW_SAMPLES",
    "STATISTICS",
    "UNSEEN",
    "CategoricalProfile",
    "ChunkPerformance",
    "ColumnSpec",
    "ConfidenceAggregator",
    "DataQualityAggregator",
    "DriftAggregator",
    "DriftDetector",
    "DriftReport",
    "EmbeddingDrift",
    "EmbeddingDriftAggregator",
    "EstimatedPerformance",
    "FeatureDrift",
    "FittedAnomaly",
    "FittedCBPE",
    "FittedDLE",
    "FittedDrift",
    "FittedSupport",
    "HGBParams",
    "Identity",
    "Isotonic",
    "NumericProfile",
    "PerformanceEstimate",
    "Profile",
    "RealizedPerformance",
    "Reservoir",
    "SupportDetector",
    "TestResult",
    "Thresholds",
    "TuneReport",
    "Verdict",
    "WindowDrift",
    "bin_counts",
    "build_profile",
    "chi2_homogeneity",
    "classifier_auc",
    "default_features",
    "dump_profile",
    "embedding_drift",
    "equal_width_cuts",
    "estimate_chunks",
    "estimate_regression_chunks",
    "fit_calibrator",
    "fit_from_profile",
    "join_targets",
    "js_distance",
    "ks_2samp",
    "labelled_reference",
    "load_profile",
    "mmd2",
    "mmd2_permutation",
    "numeric_column",
    "profile_from_json",
    "profile_to_json",
    "psi",
    "psi_categorical",
    "psi_critical",
    "psi_from_counts",
    "quantile_cuts",
    "read_table",
    "render_html",
    "wasserstein",
]
