"""Which samples of a batch the SQLite store accepts, against each series' last stored sample.

Out-of-order and duplicate samples (same time, another value) are counted in the
store's ``AppendStats`` and left out; a repeat of the last sample is a no-op.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from inferwatch._exceptions import InputError
from inferwatch.store._head import ACCEPTED, DUPLICATE, OUT_OF_ORDER, classify
from inferwatch.store._protocol import AppendStats

__all__ = ["accept_in_order", "accept_unique", "as_column"]


def as_column(x: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    """``x`` as a float64 column; ``InputError`` naming ``what`` when it holds something else."""
    try:
        return np.array(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be numbers: {exc}") from None


def accept_unique(last_t: np.ndarray, last_v: np.ndarray, sids: np.ndarray, t: np.ndarray, v: np.ndarray,
                  stats: AppendStats) -> np.ndarray:
    """Accepted-sample mask when every series occurs once (a scrape): vectorised."""
    prev_t = last_t[sids]
    keep: np.ndarray = t > prev_t
    stats.out_of_order += int((t < prev_t).sum())
    for k in np.flatnonzero(t == prev_t).tolist():
        sid = int(sids[k])
        verdict = classify((float(prev_t[k]), float(last_v[sid])), float(t[k]), float(v[k]))
        stats.duplicate += verdict == DUPLICATE
    return keep


def accept_in_order(last_t: np.ndarray, last_v: np.ndarray, sids: np.ndarray, t: np.ndarray, v: np.ndarray,
                    stats: AppendStats) -> np.ndarray:
    """Accepted-sample mask in arrival order (several samples of one series in the batch)."""
    keep = np.zeros(sids.shape[0], dtype=bool)
    overlay: dict[int, tuple[float, float]] = {}
    for k, (sid, tt, vv) in enumerate(zip(sids.tolist(), t.tolist(), v.tolist(), strict=True)):
        prev = overlay.get(sid)
        if prev is None and last_t[sid] > -math.inf:
            prev = (float(last_t[sid]), float(last_v[sid]))
        verdict = classify(prev, tt, vv)
        if verdict == ACCEPTED:
            overlay[sid] = (tt, vv)
            keep[k] = True
        elif verdict == OUT_OF_ORDER:
            stats.out_of_order += 1
        elif verdict == DUPLICATE:
            stats.duplicate += 1
    return keep
