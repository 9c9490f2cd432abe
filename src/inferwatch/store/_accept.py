"""Which samples of a batch the SQLite store accepts, against each series' last stored sample.

Out-of-order and duplicate samples (same time, another value) are counted in the
store's ``AppendStats`` and left out; a repeat of the last sample is a no-op.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from itertools import repeat

import numpy as np

from inferwatch._exceptions import InputError
from inferwatch.model import FreshLabels
from inferwatch.store._head import ACCEPTED, BLOCK, DUPLICATE, OUT_OF_ORDER, classify
from inferwatch.store._protocol import AppendStats

__all__ = ["SeenIds", "accept_in_order", "accept_unique", "as_column", "each_once", "known_ids"]


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


def each_once(sids: np.ndarray, ids: int) -> bool:
    """Whether no series id repeats in ``sids`` (all below ``ids``): a count per id for a wide batch (a
    scrape of 200,000 series: ~1 ms, where ``np.unique`` took 0.1-0.5 s under the store's lock), a
    sort for a narrow one (a count would be O(every series)); neighbours compared, not ``np.unique``
    (2,000 ids: 32 against 140 us, and its first call in a process took 26 ms)."""
    if sids.shape[0] * 16 >= ids:
        return bool(sids.shape[0] == 0 or np.bincount(sids, minlength=1).max() <= 1)
    ordered = np.sort(sids)
    return not bool((ordered[1:] == ordered[:-1]).any())


def known_ids(by_object: Mapping[int, int], labels: Sequence[object]) -> np.ndarray:
    """The series id ``by_object`` holds for each label object (keyed by ``id()``), else -1; a block of
    :data:`BLOCK` at a time (one C-level loop over a 200,000-series scrape held the interpreter lock).
    A :class:`SeenIds` answers a wide batch it has seen whole before with one identity pass."""
    if isinstance(by_object, SeenIds) and (repeated := by_object.repeated(labels)) is not None:
        return repeated
    if isinstance(labels, FreshLabels):  # new objects: no id() here is theirs
        return np.full(len(labels), -1, dtype=np.int64)
    get = by_object.get
    sids = np.concatenate([np.empty(0, dtype=np.int64), *(
        np.fromiter(map(get, map(id, labels[a:a + BLOCK]), repeat(-1)), dtype=np.int64)
        for a in range(0, len(labels), BLOCK))])
    if isinstance(by_object, SeenIds) and len(labels) >= SeenIds.WIDE and not (sids < 0).any():
        by_object.remember(labels, sids)
    return sids


class SeenIds(dict[int, int]):
    """Series ids by label object (``id()``), and the ids of recent wide batches of known series.

    A target scraped again with the same series hands the same label objects in the same order (the
    scrape loop's warm layout, ``formats._warm``): one identity pass over the batch then finds its
    ids, where a look-up a series took ten times as long. Only batches whose every object was known
    are kept; :meth:`clear` (retention dropping series, or the bound) forgets them with the rest.
    """

    WIDE = 1024
    """Batches narrower than this are looked up object by object (a rule round's, a small target's)."""

    def __init__(self) -> None:
        super().__init__()
        self._batches: dict[tuple[int, int, int], tuple[list[object], np.ndarray]] = {}
        self._held = 0

    def repeated(self, labels: Sequence[object]) -> np.ndarray | None:
        """The ids of ``labels`` if the very same objects came in this order before, else ``None``."""
        if len(labels) < self.WIDE:
            return None
        got = self._batches.get((len(labels), id(labels[0]), id(labels[-1])))
        if got is None or not all(map(operator.is_, labels, got[0])):
            return None
        return got[1].copy()

    def remember(self, labels: Sequence[object], sids: np.ndarray) -> None:
        """Keep the ids of a batch of known series (in all, about twice as many as this maps)."""
        if self._held + len(labels) > 2 * len(self) + 4 * self.WIDE:
            self._batches.clear()
            self._held = 0
        # the key's ids stay valid: the entry holds the objects, so their ids cannot be reused
        key = (len(labels), id(labels[0]), id(labels[-1]))
        old = self._batches.pop(key, None)
        self._held += len(labels) - (len(old[0]) if old is not None else 0)
        self._batches[key] = (list(labels), sids.copy())

    def clear(self) -> None:
        """Forget every object and batch (series were removed, or the map passed its bound)."""
        super().clear()
        self._batches.clear()
        self._held = 0
