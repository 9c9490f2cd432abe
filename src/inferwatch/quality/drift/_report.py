"""Scores: one frozen :class:`FeatureDrift` per feature, gathered in a :class:`DriftReport`."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from inferwatch.quality.drift._verdict import Verdict

__all__ = ["DriftReport", "FeatureDrift"]


@dataclass(frozen=True, slots=True)
class FeatureDrift:
    """The drift of one feature, current window against reference.

    ``psi_critical`` is the PSI reached by chance with probability ``alpha``
    under no drift; ``significant`` says the PSI is above it (the verdict is
    ``stable`` otherwise). ``ks``, ``ks_p_value`` and ``wasserstein`` are
    ``None`` for categorical features and when scoring against a stored
    profile; ``chi2`` and ``chi2_p_value`` are set for categorical features.
    """

    name: str
    type: str
    psi: float
    psi_critical: float
    significant: bool
    verdict: Verdict
    js: float | None
    n_reference: int
    n_current: int
    missing_current: int
    buckets: tuple[str, ...]
    reference_proportions: tuple[float, ...]
    current_proportions: tuple[float, ...]
    chi2: float | None = None
    chi2_p_value: float | None = None
    ks: float | None = None
    ks_p_value: float | None = None
    wasserstein: float | None = None

    def with_ecdf(self, *, ks: float | None, ks_p_value: float | None,
                  wasserstein: float | None) -> FeatureDrift:
        """A copy with the ECDF statistics filled in."""
        return dataclasses.replace(self, ks=ks, ks_p_value=ks_p_value, wasserstein=wasserstein)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``inferwatch drift --format json`` (issue's keys first, then extras)."""
        return {
            "name": self.name, "type": self.type, "psi": _num(self.psi), "ks": _num(self.ks),
            "ks_p_value": _num(self.ks_p_value), "js": _num(self.js),
            "wasserstein": _num(self.wasserstein), "verdict": self.verdict.value,
            "psi_critical": _num(self.psi_critical), "significant": self.significant,
            "chi2": _num(self.chi2), "chi2_p_value": _num(self.chi2_p_value),
            "n_reference": self.n_reference, "n_current": self.n_current,
            "missing_current": self.missing_current,
            "bins": {"labels": list(self.buckets),
                     "reference": [_num(v) for v in self.reference_proportions],
                     "current": [_num(v) for v in self.current_proportions]},
        }


def _num(v: float | None) -> float | None:
    if v is None:
        return None
    if not math.isfinite(v):  # never emitted silently: the statistics do not produce it
        raise ValueError(f"non-finite statistic {v}")
    return float(v)


_ORDER = {Verdict.ROLLBACK: 3, Verdict.REVIEW: 2, Verdict.WARNING: 1, Verdict.STABLE: 0}


@dataclass(frozen=True, slots=True)
class DriftReport:
    """Per-feature drift of one window, in reference column order."""

    features: tuple[FeatureDrift, ...]
    rows_reference: int
    rows_current: int
    ignored: tuple[str, ...] = ()

    def by_drift(self) -> tuple[FeatureDrift, ...]:
        """Features sorted most drifted first (verdict, then PSI)."""
        return tuple(sorted(self.features, key=lambda f: (-_ORDER[f.verdict], -f.psi, f.name)))

    @property
    def verdict(self) -> Verdict:
        """The worst verdict over all features."""
        return max((f.verdict for f in self.features), key=_ORDER.__getitem__, default=Verdict.STABLE)

    def to_json(self) -> dict[str, Any]:
        """``{"features": [...], "summary": {...}}`` as ``inferwatch drift --format json`` prints it."""
        counts = {v.value: sum(f.verdict is v for f in self.features) for v in Verdict}
        return {
            "features": [f.to_json() for f in self.by_drift()],
            "summary": {
                "verdict": self.verdict.value, "features": len(self.features), "verdicts": counts,
                "rows_reference": self.rows_reference, "rows_current": self.rows_current,
                "ignored_columns": list(self.ignored),
            },
        }
