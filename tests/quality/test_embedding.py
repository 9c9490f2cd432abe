"""Embedding drift: MMD² exact on small cases, the permutation test's size and power, the classifier's AUC."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from inferwatch import InputError
from inferwatch.quality import classifier_auc, embedding_drift, mmd2, mmd2_permutation
from inferwatch.quality.embedding._embedding import auc_null_critical, median_heuristic, roc_auc


def _direct_mmd2(x: np.ndarray, y: np.ndarray, h: float) -> float:
    """The unbiased MMD² written out pair by pair (the definition, no algebra)."""
    def k(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.exp(-np.sum((a - b) ** 2) / h))

    n, m = len(x), len(y)
    kxx = sum(k(x[i], x[j]) for i, j in itertools.permutations(range(n), 2)) / (n * (n - 1))
    kyy = sum(k(y[i], y[j]) for i, j in itertools.permutations(range(m), 2)) / (m * (m - 1))
    kxy = sum(k(a, b) for a in x for b in y) / (n * m)
    return kxx + kyy - 2 * kxy


def test_mmd2_matches_the_definition() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(6, 3)), rng.normal(0.5, 1.0, size=(8, 3))
    z = np.vstack([x, y])
    pairs = [np.sum((z[i] - z[j]) ** 2) for i, j in itertools.combinations(range(len(z)), 2)]
    h = float(np.median(pairs))
    assert median_heuristic(x, y) == pytest.approx(h)
    assert mmd2(x, y) == pytest.approx(_direct_mmd2(x, y, h), rel=1e-12)
    assert mmd2(x, y, bandwidth=2.0) == pytest.approx(_direct_mmd2(x, y, 2.0), rel=1e-12)


def test_permutation_test_matches_direct_relabelling() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(7, 2)), rng.normal(size=(5, 2))
    value, critical, p = mmd2_permutation(x, y, permutations=30, alpha=0.1, seed=4, bandwidth=1.5)
    z = np.vstack([x, y])
    perm_rng = np.random.default_rng(4)  # the same stream of relabellings, each scored from scratch
    null = []
    for _ in range(30):
        idx = perm_rng.permutation(12)
        null.append(_direct_mmd2(z[idx[:7]], z[np.sort(idx[7:])], 1.5))
    assert value == pytest.approx(_direct_mmd2(x, y, 1.5), rel=1e-12)
    assert critical == pytest.approx(float(np.quantile(null, 0.9)), rel=1e-9)
    assert p == pytest.approx((1 + sum(v >= value for v in null)) / 31)


def test_roc_auc_matches_sklearn_with_ties() -> None:
    rng = np.random.default_rng(2)
    scores = rng.integers(0, 5, 200).astype(float)  # many ties
    labels = rng.random(200) < 0.4
    assert roc_auc(scores, labels) == pytest.approx(roc_auc_score(labels, scores), rel=1e-12)


def test_no_drift_windows_cross_at_the_claimed_rate() -> None:
    """40 seeded no-drift windows at alpha 0.05: about 2 cross; more than 6 has probability < 0.2 %."""
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(150, 16))
    results = [embedding_drift(ref, rng.normal(size=(150, 16)), permutations=100, seed=s) for s in range(40)]
    mmd_cross = sum(d.mmd_drift for d in results)
    auc_cross = sum(d.classifier_drift for d in results)
    assert mmd_cross <= 6, mmd_cross
    assert auc_cross <= 6, auc_cross
    assert all(0.35 < d.auc < 0.65 for d in results)


def test_shifted_windows_cross() -> None:
    """A mean shift of 0.25 sd on every one of 16 dimensions: both methods see every window."""
    rng = np.random.default_rng(5)
    ref = rng.normal(size=(150, 16))
    results = [embedding_drift(ref, rng.normal(0.25, 1.0, size=(150, 16)), permutations=100, seed=s)
               for s in range(10)]
    assert sum(d.mmd_drift for d in results) == 10
    assert sum(d.classifier_drift for d in results) >= 9


def test_classifier_auc_reads_separation() -> None:
    rng = np.random.default_rng(6)
    ref = rng.normal(size=(200, 32))
    assert classifier_auc(ref, rng.normal(size=(200, 32))) == pytest.approx(0.5, abs=0.1)
    assert classifier_auc(ref, rng.normal(1.0, 1.0, size=(200, 32))) > 0.99


def test_small_windows_need_more_than_the_fixed_threshold() -> None:
    """At 30 vs 30 the AUC noise alone passes 0.55 often: the critical value rises above it."""
    assert auc_null_critical(30, 30, 0.05) > 0.6
    assert auc_null_critical(1000, 1000, 0.05) < 0.55


@pytest.mark.parametrize(("ref", "cur", "match"), [
    (np.zeros((5, 3)), np.zeros((5, 4)), "dimensions differ"),
    (np.zeros(5), np.zeros((5, 4)), "shape"),
    ([["a", "b"], ["c", "d"]], np.zeros((5, 2)), "numeric"),
    (np.full((4, 2), np.nan), np.zeros((5, 2)), "NaN"),
])
def test_bad_input_names_the_problem(ref: object, cur: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        embedding_drift(ref, cur, permutations=10)
