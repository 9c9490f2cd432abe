"""Estimated (and, with targets, realized) regression performance of a file's consecutive chunks.

The regressor's inputs are the ``features`` columns (by default every column of
the reference other than the truth, the prediction and the id), numeric or
categorical; the loss model (``DLE``) is fitted on the labelled reference and
scores chunks of ``chunk_size`` analysis rows in file order, a last partial
chunk dropped (as NannyML's chunkers do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.performance._dle import DLE, FittedDLE
from inferwatch.quality.performance._dle_features import FeatureEncoder, numeric_column
from inferwatch.quality.performance._perf_metrics import regression_metrics
from inferwatch.quality.performance._perf_table import ChunkPerformance, full_chunks
from inferwatch.quality.profile import Column

__all__ = ["default_features", "estimate_regression_chunks"]

Table = Mapping[str, Column]
Array = npt.NDArray[np.float64]


def default_features(reference: Table, analysis: Table, exclude: Sequence[str]) -> tuple[str, ...]:
    """Columns of both files, in the reference's order, except ``exclude`` (truth, prediction, id)."""
    return tuple(c for c in reference if c in analysis and c not in exclude)


def estimate_regression_chunks(
    reference: Table,
    analysis: Table,
    *,
    features: Sequence[str],
    y_pred: str,
    y_true: str,
    chunk_size: int,
    settings: DLE | None = None,
    truth: Array | None = None,
    names: tuple[str, str] = ("reference", "analysis"),
) -> tuple[list[ChunkPerformance], FittedDLE]:
    """Fit DLE on ``reference``, estimate each full chunk of ``analysis``; ``truth`` adds realized."""
    if chunk_size < 1:
        raise InputError(f"--chunk-size must be a positive number of rows, not {chunk_size}")
    ref, ana = names
    dle = settings or DLE()
    enc = FeatureEncoder.fit(reference, features, where=ref)
    r_true, r_pred = numeric_column(reference, y_true, ref), numeric_column(reference, y_pred, ref)
    _no_missing(r_true, ref, y_true)
    _no_missing(r_pred, ref, y_pred)
    pred = numeric_column(analysis, y_pred, ana)
    _no_missing(pred, ana, y_pred)
    full_chunks(pred.size, chunk_size, ana)  # before the fit, the slow part
    fitted = dle.fit(enc.transform(reference, where=ref), r_true, r_pred, enc.categorical)
    x = enc.transform(analysis, where=ana)
    unseen = enc.unseen(analysis, x)
    out = []
    for k in range(pred.size // chunk_size):
        sl = slice(k * chunk_size, (k + 1) * chunk_size)
        est = fitted.score(x[sl], pred[sl])
        share = float(unseen[sl].mean())
        if share > dle.support_warn_share:
            note = f"{share:.1%} of the window's rows have a category the reference never had"
            est = type(est)(**{**est.__dict__, "warnings": (*est.warnings, note)})
        real = None if truth is None else _realized(truth[sl], pred[sl], dle.metrics)
        out.append(ChunkPerformance(k, sl.start, sl.stop - 1, est, real))
    return out, fitted


def _realized(truth: Array, pred: Array, metrics: tuple[str, ...]) -> dict[str, float]:
    known = ~np.isnan(truth)
    if not known.any():
        return dict.fromkeys(metrics, float("nan"))
    values = regression_metrics(truth[known], pred[known])
    return {m: values[m] for m in metrics}


def _no_missing(values: Array, where: str, column: str) -> None:
    rows = np.flatnonzero(np.isnan(values))
    if rows.size:
        first = int(rows[0])
        raise InputError(f"{where}: column {column!r}: {rows.size} missing values (first at row {first})")
