"""Drift statistics (pure functions), the drift detector, its report, verdicts and the HTML page."""

from inferwatch.quality.drift._detector import STATISTICS, DriftDetector, FittedDrift
from inferwatch.quality.drift._distances import (
    TestResult,
    chi2_homogeneity,
    js_distance,
    ks_2samp,
    wasserstein,
)
from inferwatch.quality.drift._html import render_html
from inferwatch.quality.drift._psi import DEFAULT_EPSILON, psi, psi_categorical, psi_critical, psi_from_counts
from inferwatch.quality.drift._report import DriftReport, FeatureDrift
from inferwatch.quality.drift._verdict import Thresholds, Verdict

__all__ = [
    "DEFAULT_EPSILON",
    "STATISTICS",
    "DriftDetector",
    "DriftReport",
    "FeatureDrift",
    "FittedDrift",
    "TestResult",
    "Thresholds",
    "Verdict",
    "chi2_homogeneity",
    "js_distance",
    "ks_2samp",
    "psi",
    "psi_categorical",
    "psi_critical",
    "psi_from_counts",
    "render_html",
    "wasserstein",
]
