"""Estimated (and, with targets, realized) performance of a file's consecutive chunks.

A ``ColumnSpec`` names the columns: one score column for a binary classifier
(labels 0/1), or ``label=column`` pairs for a multiclass one (labels are the
class names, in the order given). ``estimate_chunks`` fits CBPE on the
labelled reference and scores chunks of ``chunk_size`` analysis rows in file
order; a last partial chunk is dropped, as NannyML does for its chunkers.

>>> spec = ColumnSpec.parse("y_pred_proba", "y_pred", "y_true")
>>> spec.classes
()
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.performance._cbpe import CBPE, PerformanceEstimate
from inferwatch.quality.performance._perf_metrics import binary_metrics, multiclass_metrics
from inferwatch.quality.profile import Column

__all__ = ["ChunkPerformance", "ColumnSpec", "estimate_chunks", "full_chunks", "join_targets"]

Table = Mapping[str, Column]


@dataclass(frozen=True)
class ColumnSpec:
    """Which columns hold the scores, the predicted class and the true class."""

    score_columns: tuple[str, ...]
    classes: tuple[str, ...]
    y_pred: str
    y_true: str

    @classmethod
    def parse(cls, proba: str, y_pred: str, y_true: str) -> ColumnSpec:
        """``COL`` (binary) or ``LABEL=COL,LABEL=COL,...`` (multiclass)."""
        if "=" not in proba:
            return cls((proba,), (), y_pred, y_true)
        pairs = [p.split("=", 1) for p in proba.split(",") if p.strip()]
        if len(pairs) < 2 or any(len(p) != 2 or not p[0] or not p[1] for p in pairs):
            raise InputError(f"--y-pred-proba {proba!r}: use COL, or LABEL=COL,LABEL=COL for multiclass")
        return cls(tuple(p[1] for p in pairs), tuple(p[0] for p in pairs), y_pred, y_true)

    def scores(self, table: Table, where: str) -> npt.NDArray[np.float64]:
        """The score column (binary) or the n × k score matrix (multiclass) of ``table``."""
        cols = [_numeric(table, c, where) for c in self.score_columns]
        return cols[0] if len(cols) == 1 else np.column_stack(cols)

    def labels(self, table: Table, column: str, where: str) -> npt.NDArray[np.float64]:
        """Class indices of a label column (0/1 for binary; positions in ``classes`` for multiclass)."""
        col = _column(table, column, where)
        if not self.classes:
            values = _numeric(table, column, where)
            bad = ~np.isnan(values) & (values != 0) & (values != 1)
            if bad.any():
                raise InputError(
                    f"{where}: column {column!r} must hold 0/1 labels, found {float(values[bad][0])!r}"
                )
            return values
        return _encode(col, self.classes, f"{where}: column {column!r}")


@dataclass(frozen=True)
class ChunkPerformance:
    """One chunk: its rows (first and last, inclusive), the estimate and the realized metrics."""

    index: int
    start: int
    end: int
    estimate: PerformanceEstimate
    realized: dict[str, float] | None = None

    def to_json(self) -> dict[str, object]:
        """The CLI's JSON object for this chunk (NaN written as null)."""
        out: dict[str, object] = {
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "rows": self.estimate.rows,
            "estimated": _nulls(self.estimate.estimated),
            "lower": _nulls(self.estimate.lower),
            "upper": _nulls(self.estimate.upper),
        }
        if self.realized is not None:
            out["realized"] = _nulls(self.realized)
        return out


def full_chunks(rows: int, chunk_size: int, where: str) -> int:
    """The number of full chunks (``InputError`` when the file holds none: an empty table hides it)."""
    if rows < chunk_size:
        raise InputError(
            f"{where} has {rows} rows, fewer than --chunk-size {chunk_size}: no full chunk to estimate"
        )
    return rows // chunk_size


def estimate_chunks(
    reference: Table,
    analysis: Table,
    spec: ColumnSpec,
    *,
    chunk_size: int,
    metrics: Sequence[str],
    truth: npt.NDArray[np.float64] | None = None,
    names: tuple[str, str] = ("reference", "analysis"),
) -> list[ChunkPerformance]:
    """Fit on ``reference``, estimate each full chunk of ``analysis``; ``truth`` (NaN: none) adds realized."""
    if chunk_size < 1:
        raise InputError(f"--chunk-size must be a positive number of rows, not {chunk_size}")
    ref, ana = names
    cbpe = CBPE(metrics=tuple(metrics))
    r_true, r_pred = spec.labels(reference, spec.y_true, ref), spec.labels(reference, spec.y_pred, ref)
    r_scores = spec.scores(reference, ref)
    _no_missing(r_true, f"{ref}: column {spec.y_true!r}")
    _no_missing(r_pred, f"{ref}: column {spec.y_pred!r}")
    _no_missing(r_scores, f"{ref}: score columns {', '.join(spec.score_columns)}")
    fitted = cbpe.fit(r_true, r_pred, r_scores)
    scores = spec.scores(analysis, ana)
    pred = spec.labels(analysis, spec.y_pred, ana)
    _no_missing(pred, f"{ana}: column {spec.y_pred!r}")
    _no_missing(scores, f"{ana}: score columns {', '.join(spec.score_columns)}")
    full_chunks(scores.shape[0], chunk_size, ana)
    out = []
    for k in range(scores.shape[0] // chunk_size):
        sl = slice(k * chunk_size, (k + 1) * chunk_size)
        est = fitted.score(pred[sl], scores[sl])
        real = None if truth is None else _realized(truth[sl], pred[sl], scores[sl], tuple(metrics))
        out.append(ChunkPerformance(k, sl.start, sl.stop - 1, est, real))
    return out


def _realized(
    truth: npt.NDArray[np.float64],
    pred: npt.NDArray[np.float64],
    scores: npt.NDArray[np.float64],
    metrics: tuple[str, ...],
) -> dict[str, float]:
    known = ~np.isnan(truth)
    if not known.any():
        return dict.fromkeys(metrics, math.nan)
    t, p, s = truth[known], pred[known], scores[known]
    if s.ndim == 1:
        return binary_metrics(t, p, s, metrics)
    return multiclass_metrics(t.astype(np.int64), p.astype(np.int64), s, metrics)


def _no_missing(values: npt.NDArray[np.float64], where: str) -> None:
    rows = np.flatnonzero(np.isnan(values).reshape(values.shape[0], -1).any(axis=1))
    if rows.size:
        raise InputError(f"{where}: {rows.size} missing values (first at row {int(rows[0])})")


def _column(table: Table, name: str, where: str) -> Column:
    if name not in table:
        raise InputError(f"{where}: no column named {name!r} (columns: {', '.join(list(table)[:20])})")
    return table[name]


def _numeric(table: Table, name: str, where: str) -> npt.NDArray[np.float64]:
    col = _column(table, name, where)
    if col.dtype != np.float64:
        raise InputError(f"{where}: column {name!r} must be numeric")
    return col.astype(np.float64)


def _encode(col: Column, classes: tuple[str, ...], where: str) -> npt.NDArray[np.float64]:
    """Positions of each value in ``classes`` (numbers compared as numbers); NaN for missing."""
    if col.dtype == np.float64:
        try:
            index: dict[object, float] = {float(c): float(i) for i, c in enumerate(classes)}
        except ValueError as exc:
            names = ", ".join(classes)
            raise InputError(f"{where} is numeric but the class labels are not: {names}") from exc
    else:
        index = {c: float(i) for i, c in enumerate(classes)}
    # A dict lookup per row: sorting string labels (np.unique) costs ten times more.
    values = col.tolist()
    out = np.array([index.get(v, -1.0) for v in values], dtype=np.float64)
    missing = np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in values], dtype=bool)
    bad = (out < 0) & ~missing
    if bad.any():
        first = values[int(np.flatnonzero(bad)[0])]
        raise InputError(f"{where}: value {first!r} is not one of the classes {', '.join(classes)}")
    out[missing] = math.nan
    return out


def _nulls(d: Mapping[str, float]) -> dict[str, float | None]:
    return {k: (v if math.isfinite(v) else None) for k, v in d.items()}


def join_targets(
    ids: Column, target_ids: Column, targets: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Each analysis row's target by id (NaN where the targets file has none)."""
    lookup = dict(zip(target_ids.tolist(), targets.tolist(), strict=True))
    return np.array([lookup.get(i, math.nan) for i in ids.tolist()], dtype=np.float64)
