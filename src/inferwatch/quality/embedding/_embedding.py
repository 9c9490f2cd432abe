"""Embedding drift: MMD² with a permutation test, and a domain classifier's ROC AUC.

Two views of "do these vectors come from the reference's distribution", the two
Evidently users know:

* **MMD²** (maximum mean discrepancy, unbiased estimator) with the RBF kernel
  ``k(x, y) = exp(-‖x − y‖² / h)``, ``h`` the median of the pooled pairwise
  squared distances (the median heuristic). Its critical value is the
  ``1 − alpha`` quantile of MMD² over random relabellings of the pooled sample
  (a permutation test), so it holds at any window size: under no drift a window
  crosses it with probability ``alpha``.
* **Domain classifier**: an L2 logistic regression learns to tell reference
  from current; its cross-validated ROC AUC is 0.5 when it cannot. Drift when
  the AUC exceeds ``max(auc_threshold, the AUC noise reaches at 1 − alpha)``,
  the latter the Mann-Whitney null (normal approximation), so a small window
  whose AUC is noisy does not read as drift.

Both work on samples: the reference's (fitted once) and a window's reservoir
(``_embedding_stream``), each at most ``sample_size`` vectors, so the cost is
fixed: ``(n + m)²·d`` for the kernel, ``(n + m)²·P`` for ``P`` permutations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from inferwatch._exceptions import InputError

__all__ = [
    "DEFAULT_AUC_THRESHOLD",
    "EmbeddingDrift",
    "classifier_auc",
    "embedding_drift",
    "median_heuristic",
    "mmd2",
    "mmd2_permutation",
    "roc_auc",
]

FloatArray = npt.NDArray[np.float64]

DEFAULT_AUC_THRESHOLD = 0.55
"""Evidently's default: a domain classifier above this ROC AUC means drift."""
_BANDWIDTH_POINTS = 1000  # the median heuristic on a subsample: O(n²) pairs, the median barely moves


@dataclass(frozen=True, slots=True)
class EmbeddingDrift:
    """One window's embedding drift against the reference."""

    mmd2: float
    mmd2_critical: float
    p_value: float
    auc: float
    auc_critical: float
    reference: int
    current: int

    @property
    def mmd_drift(self) -> bool:
        """MMD² beyond its permutation critical value."""
        return self.mmd2 > self.mmd2_critical

    @property
    def classifier_drift(self) -> bool:
        """The domain classifier tells the two apart beyond chance and the AUC threshold."""
        return self.auc > self.auc_critical


def as_matrix(x: object, what: str) -> FloatArray:
    """``x`` as a 2-D float64 array of finite values, or an InputError naming ``what``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what}: embeddings must be numeric vectors ({exc})") from None
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise InputError(f"{what}: need an (n >= 2, dim >= 1) array of embeddings, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{what}: embeddings contain NaN or infinite values")
    return arr


def _sq_dists(x: FloatArray, y: FloatArray) -> FloatArray:
    d = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2.0 * (x @ y.T)
    out: FloatArray = np.maximum(d, 0.0)  # rounding makes tiny negatives
    return out


def median_heuristic(x: FloatArray, y: FloatArray, seed: int = 0) -> float:
    """Median pairwise squared distance of the pooled sample (off the diagonal): the RBF's ``h``."""
    z = np.vstack([x, y])
    if z.shape[0] > _BANDWIDTH_POINTS:
        z = z[np.random.default_rng(seed).choice(z.shape[0], _BANDWIDTH_POINTS, replace=False)]
    d = _sq_dists(z, z)[np.triu_indices(z.shape[0], k=1)]
    h = float(np.median(d))
    return h if h > 0 else 1.0  # all points equal: any bandwidth gives MMD² 0


def _gram(z: FloatArray, h: float) -> FloatArray:
    return np.exp(-_sq_dists(z, z) / h)


def _mmd2_from_sums(sxx: FloatArray, syy: FloatArray, sxy: FloatArray, n: int, m: int) -> FloatArray:
    # unbiased: the diagonals (k(x, x) = 1) are left out of the within-sample means
    return (sxx - n) / (n * (n - 1)) + (syy - m) / (m * (m - 1)) - 2.0 * sxy / (n * m)


def mmd2(x: object, y: object, bandwidth: float | None = None) -> float:
    """Unbiased MMD² between samples ``x`` and ``y`` (rows are vectors), RBF kernel, median heuristic."""
    a, b = as_matrix(x, "reference"), as_matrix(y, "current")
    h = median_heuristic(a, b) if bandwidth is None else bandwidth
    n = a.shape[0]
    k = _gram(np.vstack([a, b]), h)
    sxx, syy, sxy = k[:n, :n].sum(), k[n:, n:].sum(), k[:n, n:].sum()
    return float(_mmd2_from_sums(np.array(sxx), np.array(syy), np.array(sxy), n, b.shape[0]))


def mmd2_permutation(
    x: object, y: object, *, permutations: int = 200, alpha: float = 0.05, seed: int = 0,
    bandwidth: float | None = None,
) -> tuple[float, float, float]:
    """``(MMD², critical value at 1 − alpha, p-value)`` by relabelling the pooled sample."""
    if permutations < 10 or not 0 < alpha < 1:
        raise InputError(f"need permutations >= 10 and 0 < alpha < 1, got {permutations}, {alpha}")
    a, b = as_matrix(x, "reference"), as_matrix(y, "current")
    n, m = a.shape[0], b.shape[0]
    h = median_heuristic(a, b, seed) if bandwidth is None else bandwidth
    k = _gram(np.vstack([a, b]), h)
    rng = np.random.default_rng(seed)
    # Row p of `mask` marks which pooled points play "reference" in permutation p (row 0: the truth).
    mask = np.zeros((permutations + 1, n + m))
    mask[0, :n] = 1.0
    for p in range(1, permutations + 1):
        mask[p, rng.permutation(n + m)[:n]] = 1.0
    ka = k @ mask.T  # (n + m, P + 1): one matrix product gives every permutation's block sums
    total, rows = k.sum(), k.sum(1)
    sxx = np.einsum("ip,pi->p", ka, mask)
    sxy = mask @ rows - sxx
    syy = total - sxx - 2.0 * sxy
    values = _mmd2_from_sums(sxx, syy, sxy, n, m)
    null = values[1:]
    critical = float(np.quantile(null, 1.0 - alpha))
    p_value = float((1 + np.count_nonzero(null >= values[0])) / (1 + permutations))
    return float(values[0]), critical, p_value


def roc_auc(scores: FloatArray, positive: npt.NDArray[np.bool_]) -> float:
    """ROC AUC of ``scores`` for the ``positive`` class (Mann-Whitney, ties count half)."""
    ranks = stats.rankdata(scores)
    n1 = int(positive.sum())
    n0 = positive.size - n1
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _fit_logistic(x: FloatArray, y: FloatArray, l2: float) -> FloatArray:
    """Weights (intercept last) of an L2-penalised logistic regression, L-BFGS."""
    xb = np.hstack([x, np.ones((x.shape[0], 1))])

    def loss(w: FloatArray) -> tuple[float, FloatArray]:
        z = xb @ w
        p = 1.0 / (1.0 + np.exp(-z))
        value = float(np.logaddexp(0.0, z).sum() - y @ z + 0.5 * l2 * (w[:-1] @ w[:-1]))
        grad = xb.T @ (p - y)
        grad[:-1] += l2 * w[:-1]
        return value, grad

    res = optimize.minimize(loss, np.zeros(xb.shape[1]), jac=True, method="L-BFGS-B",
                            options={"maxiter": 50})  # early stopping regularises too; the AUC is held out
    return np.asarray(res.x, dtype=np.float64)


def classifier_auc(x: object, y: object, *, folds: int = 2, l2: float = 1.0, seed: int = 0) -> float:
    """Cross-validated ROC AUC of a logistic regression telling ``y`` (current) from ``x`` (reference)."""
    a, b = as_matrix(x, "reference"), as_matrix(y, "current")
    z = np.vstack([a, b])
    # scale by the reference so the penalty weighs every dimension alike
    mu, sd = a.mean(0), a.std(0)
    z = (z - mu) / np.where(sd > 0, sd, 1.0)
    label = np.r_[np.zeros(a.shape[0]), np.ones(b.shape[0])]
    rng = np.random.default_rng(seed)
    fold = np.empty(label.size, dtype=np.int64)
    for cls in (0.0, 1.0):  # stratified: every fold holds both classes in proportion
        idx = np.flatnonzero(label == cls)
        fold[rng.permutation(idx)] = np.arange(idx.size) % folds
    scores = np.empty(label.size)
    for f in range(folds):
        test = fold == f
        w = _fit_logistic(z[~test], label[~test], l2)
        scores[test] = z[test] @ w[:-1] + w[-1]
    return roc_auc(scores, label == 1.0)


def auc_null_critical(n: int, m: int, alpha: float) -> float:
    """The AUC a no-drift classifier reaches with probability ``alpha`` (Mann-Whitney null, normal)."""
    return float(0.5 + stats.norm.ppf(1.0 - alpha) * np.sqrt((n + m + 1) / (12.0 * n * m)))


def _subsample(x: FloatArray, size: int, seed: int) -> FloatArray:
    if x.shape[0] <= size:
        return x
    return x[np.random.default_rng(seed).choice(x.shape[0], size, replace=False)]


def embedding_drift(
    reference: object, current: object, *, permutations: int = 200, alpha: float = 0.05,
    auc_threshold: float = DEFAULT_AUC_THRESHOLD, folds: int = 2, seed: int = 0,
    mmd_samples: int = 1000,
) -> EmbeddingDrift:
    """MMD² with its permutation critical value, and the domain classifier's AUC, of two samples.

    >>> rng = np.random.default_rng(1)
    >>> ref = rng.normal(size=(300, 32))
    >>> embedding_drift(ref, rng.normal(size=(300, 32))).mmd_drift
    False
    >>> d = embedding_drift(ref, rng.normal(0.3, 1.0, size=(300, 32)))
    >>> d.mmd_drift, d.classifier_drift
    (True, True)
    """
    a, b = as_matrix(reference, "reference"), as_matrix(current, "current")
    if a.shape[1] != b.shape[1]:
        raise InputError(f"embedding dimensions differ: reference {a.shape[1]}, current {b.shape[1]}")
    # the kernel is (n + m)² floats: past mmd_samples per side, a seeded subsample (the classifier sees all)
    sa, sb = _subsample(a, mmd_samples, seed), _subsample(b, mmd_samples, seed + 1)
    value, critical, p = mmd2_permutation(sa, sb, permutations=permutations, alpha=alpha, seed=seed)
    auc = classifier_auc(a, b, folds=folds, seed=seed)
    auc_crit = max(auc_threshold, auc_null_critical(a.shape[0], b.shape[0], alpha))
    return EmbeddingDrift(value, critical, p, auc, auc_crit, a.shape[0], b.shape[0])
