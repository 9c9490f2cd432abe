"""A selector's samples over a query's span as one columnar batch (a dashboard's range query over
50,000 series), rather than one :class:`~inferwatch.promql._data.Loaded` per series.

The store's head already reads a chunk of series into one array; building a ``Series`` and
then a ``Loaded`` per series, then concatenating them again to pick every step's sample,
was ~0.5 s of the ~0.7 s of CPU a wide range query cost. The batch keeps the store's arrays
(times in integer ms, values, staleness) with each series' offset; the step pick
(:func:`~inferwatch.promql._range_windows.instant_rows`) reads them as they are. A consumer
that wants series gets :class:`Loaded` ones by iterating (built once, on first use).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from inferwatch.model import Labels, Matcher, check_deadline
from inferwatch.promql._data import Loaded, Span
from inferwatch.store import stale_mask

__all__ = ["LoadedBatch", "load_batch"]


class LoadedBatch(Sequence[Loaded]):
    """Series ``i`` is ``labels[i]`` with samples ``t[off[i]:off[i + 1]]`` (ms, ascending), ``v``,
    ``stale`` alike; every series has at least one sample."""

    def __init__(self, labels: list[Labels], t: np.ndarray, v: np.ndarray, lens: np.ndarray) -> None:
        self.labels, self.t, self.v = labels, t, v
        self.stale = stale_mask(v)
        self.lens = lens
        self.off = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=self.off[1:])
        self.samples = len(t)
        self._loaded: list[Loaded] | None = None

    def _series(self) -> list[Loaded]:
        if self._loaded is None:
            out = []
            bounds = self.off.tolist()
            for ls, a, b in zip(self.labels, bounds[:-1], bounds[1:], strict=True):
                t, v, stale = self.t[a:b], self.v[a:b], self.stale[a:b]
                out.append(Loaded(ls, t, v, stale, t[~stale], v[~stale]) if stale.any()
                           else Loaded(ls, t, v, stale, t, v))
            self._loaded = out
        return self._loaded

    def __iter__(self) -> Iterator[Loaded]:
        return iter(self._series())

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: Any) -> Any:  # Sequence's int and slice forms
        return self._series()[i]


def load_batch(store: object, matchers: tuple[Matcher, ...], span: Span) -> LoadedBatch | None:
    """The samples of ``span`` (ms, inclusive) as a batch when the store reads columns; else ``None``."""
    reader = getattr(store, "select_columns", None)
    if reader is None:
        return None
    check_deadline()
    cols = reader(matchers, span[0] / 1000 - 0.001, span[1] / 1000 + 0.001)
    if cols is None:
        return None
    ms = cols.t * 1000.0
    np.rint(ms, out=ms)
    t = ms.astype(np.int64)
    del ms
    v, lens, labels = cols.v, cols.lens, cols.labels
    keep = (t >= span[0]) & (t <= span[1])  # the read is a millisecond wider on each side
    if not keep.all():
        owner = np.repeat(np.arange(len(lens)), lens)
        t, v = t[keep], v[keep]
        lens = np.bincount(owner[keep], minlength=len(lens))
        if not lens.all():
            rows = np.flatnonzero(lens)
            labels, lens = [labels[i] for i in rows.tolist()], lens[rows]
    check_deadline()
    return LoadedBatch(labels, t, v, lens)
