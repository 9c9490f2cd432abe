"""Array helpers for readers of the store."""

from __future__ import annotations

import numpy as np

from inferwatch.model import STALE_NAN, Labels

__all__ = ["STALE_BITS", "labels_key", "stale_mask"]

STALE_BITS = np.array([STALE_NAN], dtype=np.float64).view(np.uint64)[0]


def stale_mask(v: np.ndarray) -> np.ndarray:
    """Boolean mask of the staleness markers in a float64 array (other NaNs are not stale).

    >>> import numpy as np
    >>> from inferwatch.model import STALE_NAN, Labels
    >>> stale_mask(np.array([1.0, float("nan"), STALE_NAN])).tolist()
    [False, False, True]
    """
    mask: np.ndarray = np.ascontiguousarray(v, dtype=np.float64).view(np.uint64) == STALE_BITS
    return mask


def labels_key(labels: Labels) -> tuple[tuple[str, str], ...]:
    """Sort key of a label set (the same order as ``Labels.__lt__``, compared in C)."""
    return labels.items_tuple
