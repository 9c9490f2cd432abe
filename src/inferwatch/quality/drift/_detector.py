"""The drift detector: ``DriftDetector().fit(reference) -> FittedDrift``, ``.score(window) -> DriftReport``.

Fitting cuts the bins and counts the reference (a :class:`Profile`); fitted on
raw columns it also keeps each numeric reference sorted, which KS and
Wasserstein need. Fitted on a stored profile, only the binned statistics (PSI,
JS, chi-square) are available and KS / Wasserstein are reported as ``None``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from inferwatch._exceptions import InputError
from inferwatch.quality.drift._distances import chi2_homogeneity, ecdf_distances, js_distance, ks_p_value
from inferwatch.quality.drift._psi import DEFAULT_EPSILON, psi_critical, psi_from_counts
from inferwatch.quality.drift._report import DriftReport, FeatureDrift
from inferwatch.quality.drift._verdict import Thresholds
from inferwatch.quality.profile import (
    CategoricalProfile,
    FeatureProfile,
    FloatArray,
    IntArray,
    NumericProfile,
    Profile,
    Table,
    as_categorical,
    bin_counts_sorted,
    build_profile,
    drop_nan,
)

__all__ = ["STATISTICS", "DriftDetector", "FittedDrift"]

STATISTICS = frozenset({"psi", "js", "ks", "wasserstein"})
"""The statistics a detector can compute (PSI always; chi-square comes with PSI on categoricals)."""


@dataclass(frozen=True, slots=True)
class DriftDetector:
    """Settings of drift detection; :meth:`fit` returns the fitted detector.

    >>> rng = np.random.default_rng(1)
    >>> fitted = DriftDetector(bins=10).fit({"x": rng.normal(size=5000)})
    >>> fitted.score({"x": rng.normal(1.0, size=5000)}).features[0].verdict.value
    'rollback'
    """

    bins: int = 10
    epsilon: float = DEFAULT_EPSILON
    alpha: float = 0.05
    thresholds: Thresholds = field(default_factory=Thresholds)
    statistics: frozenset[str] = STATISTICS

    def __post_init__(self) -> None:
        unknown = set(self.statistics) - STATISTICS
        if unknown or "psi" not in self.statistics:
            raise InputError(f"statistics must include psi and be among {sorted(STATISTICS)}, got "
                             f"{sorted(self.statistics)}")

    def fit(self, reference: Table | Profile, *, confidence: str | None = None) -> FittedDrift:
        """Fit on raw columns (all statistics) or on a stored profile (binned statistics only)."""
        if isinstance(reference, Profile):
            return FittedDrift(self, reference, {})
        sorted_ref: dict[str, FloatArray] = {}
        profile = build_profile(reference, bins=self.bins, confidence=confidence, keep_sorted=sorted_ref)
        if not self.statistics & {"ks", "wasserstein"}:
            sorted_ref.clear()
        return FittedDrift(self, profile, sorted_ref)


@dataclass(frozen=True, eq=False)
class FittedDrift:
    """A detector fitted on a reference; scores windows against it."""

    detector: DriftDetector
    profile: Profile
    sorted_reference: Mapping[str, FloatArray]

    def score(self, window: Table, *, jobs: int = 1,
              progress: Callable[[int, int], None] | None = None) -> DriftReport:
        """Every reference feature scored on ``window`` (``jobs`` threads; numpy releases the GIL)."""
        missing = [n for n in self.profile.names if n not in window]
        if missing:
            raise InputError(f"current data lacks reference columns: {', '.join(missing)}")
        rows = len(next(iter(window.values()))) if window else 0
        if rows == 0:
            raise InputError("current data is empty (no rows)")
        feats = self.profile.features
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            results = _ordered(pool.map(lambda f: self._score_one(f, window[f.name]), feats),
                               len(feats), progress)
        return DriftReport(tuple(results), self.profile.rows, rows,
                           ignored=tuple(n for n in window if n not in self.profile.names))

    def _score_one(self, f: FeatureProfile, column: np.ndarray) -> FeatureDrift:
        if isinstance(f, CategoricalProfile):
            column = as_categorical(column)
            present = int(sum(v is not None for v in column))
            return self.score_counts(f, f.bin(column), missing=column.size - present)
        if column.dtype == np.object_:
            raise InputError(f"feature {f.name!r}: numeric in the reference but not in the current data")
        values, nan = drop_nan(column, what=f"feature {f.name!r}")
        if values.size == 0:
            raise InputError(f"feature {f.name!r}: no non-missing values in the current data")
        cur = np.sort(values)
        result = self.score_counts(f, bin_counts_sorted(cur, f.cuts), missing=nan)
        ref = self.sorted_reference.get(f.name)
        if ref is None:
            return result
        d, w = ecdf_distances(ref, cur)
        want = self.detector.statistics
        return result.with_ecdf(
            ks=d if "ks" in want else None,
            ks_p_value=ks_p_value(d, ref.size, cur.size, ref, cur) if "ks" in want else None,
            wasserstein=w if "wasserstein" in want else None,
        )

    def score_counts(self, f: FeatureProfile, counts: IntArray, *, missing: int = 0) -> FeatureDrift:
        """Binned statistics of one feature from current counts in its profile's bins."""
        det = self.detector
        ref_counts = f.counts if isinstance(f, NumericProfile) else np.append(f.counts, 0)
        n, m = int(ref_counts.sum()), int(counts.sum())
        if m == 0:
            raise InputError(f"feature {f.name!r}: no non-missing values in the current data")
        value = psi_from_counts(ref_counts, counts, epsilon=det.epsilon)
        occupied = int(np.count_nonzero((ref_counts > 0) | (counts > 0)))
        critical = psi_critical(n, m, occupied, alpha=det.alpha)
        chi = chi2_homogeneity(ref_counts, counts) if isinstance(f, CategoricalProfile) else None
        labels = f.buckets if isinstance(f, CategoricalProfile) else _bin_labels(f.cuts)
        return FeatureDrift(
            name=f.name, type=f.type, psi=value, psi_critical=critical, significant=value > critical,
            verdict=det.thresholds.verdict(value, significant=value > critical),
            js=js_distance(ref_counts, counts) if "js" in det.statistics else None,
            chi2=chi.statistic if chi else None, chi2_p_value=chi.p_value if chi else None,
            n_reference=n, n_current=m, missing_current=missing,
            buckets=labels, reference_proportions=tuple((ref_counts / n).tolist()),
            current_proportions=tuple((counts / m).tolist()),
        )


def _bin_labels(cuts: FloatArray) -> tuple[str, ...]:
    c = [f"{v:.4g}" for v in cuts.tolist()]
    return (f"< {c[0]}", *(f"{a} – {b}" for a, b in itertools.pairwise(c)), f"≥ {c[-1]}")


def _ordered(it: Iterable[FeatureDrift], total: int,
             progress: Callable[[int, int], None] | None) -> list[FeatureDrift]:
    out: list[FeatureDrift] = []
    for r in it:
        out.append(r)
        if progress is not None:
            progress(len(out), total)
    return out
