"""A multiclass model's labelled sample for the profile: class probabilities and class indices.

``inferwatch profile build --labels COL --score LABEL=COL,LABEL=COL,...`` keeps, per
reference row, the k class probabilities (in the order given, which is the order of
the model's ``probabilities``) and the index of the true class; ``fit_from_profile``
fits one calibrator per class on it, as ``performance estimate`` does on a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.performance._perf_table import ColumnSpec

__all__ = ["multiclass_sample"]

FloatArray = npt.NDArray[np.float64]


def multiclass_sample(
    table: Mapping[str, Any], score: str, label: str, *, max_rows: int = 20_000, seed: int = 0,
) -> tuple[FloatArray, FloatArray]:
    """Rows × k probabilities and class indices, rows missing any of them left out, at most ``max_rows``."""
    try:
        spec = ColumnSpec.parse(score, label, label)  # the LABEL=COL grammar of `performance estimate`
    except InputError as exc:
        raise InputError(str(exc).replace("--y-pred-proba", "--score")) from exc
    if len(spec.classes) < 3:
        raise InputError(f"--score {score!r}: two classes are a binary model: give the one column of "
                         "P(class 1) and 0/1 labels")
    s = spec.scores(table, "the reference")
    y = spec.labels(table, label, "the reference")
    keep = np.isfinite(s).all(axis=1) & np.isfinite(y)
    s, y = s[keep], y[keep]
    if y.size < 10:
        raise InputError(f"the reference has {y.size} rows with every score column and {label!r}: "
                         "10 at least")
    if np.any((s < 0) | (s > 1)):
        raise InputError(f"--score {score!r}: the class probabilities must lie in [0, 1]")
    if y.size > max_rows:
        pick = np.sort(np.random.default_rng(seed).choice(y.size, max_rows, replace=False))
        s, y = s[pick], y[pick]
    return s, y
