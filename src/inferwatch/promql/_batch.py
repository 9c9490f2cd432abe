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

__all__ = ["LoadedBatch", "SharedBatch", "StreamedBatch", "batch_of", "batch_of_columns", "load_batch",
           "stream_batch"]


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
    got = batch_of_columns(cols, span)
    check_deadline()
    return got


class SharedBatch(LoadedBatch):
    """A :class:`LoadedBatch` whose series all have the same times (a target's series, read together):
    those times once (``row``, ms) and the store's :class:`~inferwatch.store.SharedColumns`, which decode a
    value only where :meth:`take` asks (the step picks of
    :func:`~inferwatch.promql._range_windows.instant_rows`). The per-sample columns of
    :class:`LoadedBatch` are built only for a reader that asks for them.
    """

    def __init__(self, labels: list[Labels], row: np.ndarray, cols: Any, at: np.ndarray | None) -> None:
        # no super().__init__: t, v, stale and off are built when asked for (see __getattr__)
        self.labels, self.row, self._cols, self._at = labels, row, cols, at
        self.lens = np.full(len(labels), len(row), dtype=np.int64)
        self.samples = len(labels) * len(row)
        self._loaded = None

    def take(self, cols: np.ndarray) -> np.ndarray:
        """The values at positions ``cols`` of ``row``, a ``(series, len(cols))`` matrix."""
        got: np.ndarray = self._cols.take(cols if self._at is None else self._at[cols])
        return got

    def __getattr__(self, name: str) -> Any:
        if name == "t":
            self.t = np.tile(self.row, len(self.labels))
        elif name == "v":
            self.v = self.take(np.arange(len(self.row))).reshape(-1)
        elif name == "stale":
            self.stale = stale_mask(self.v)
        elif name == "off":
            self.off = np.arange(len(self.labels) + 1, dtype=np.int64) * len(self.row)
        else:
            raise AttributeError(name)
        return self.__dict__[name]

    def plain(self) -> LoadedBatch:
        """The same samples as a :class:`LoadedBatch`."""
        return LoadedBatch(self.labels, self.t, self.v, self.lens)


def batch_of_columns(cols: Any, span: Span) -> LoadedBatch:
    """:func:`batch_of` of the store's columns; series sharing one row of times (the store's
    ``SharedColumns``) as a :class:`SharedBatch`: the conversion and the cut done to the one row."""
    if getattr(cols, "take", None) is None or not len(cols.labels):
        return batch_of(cols.labels, cols.t, cols.v, cols.lens, span)
    ms = cols.row * 1000.0
    np.rint(ms, out=ms)
    row = ms.astype(np.int64)
    keep = (row >= span[0]) & (row <= span[1])
    at = None if keep.all() else np.flatnonzero(keep)
    if at is not None and not len(at):
        return LoadedBatch([], np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64))
    return SharedBatch(cols.labels, row if at is None else row[at], cols, at)


def batch_of(labels: list[Labels], t_s: np.ndarray, v: np.ndarray, lens: np.ndarray,
             span: Span) -> LoadedBatch:
    """The store's columns (times in seconds, read a millisecond wider than ``span`` on each side) as a
    batch over ``span``: times in integer ms, series left without samples dropped."""
    ms = t_s * 1000.0
    np.rint(ms, out=ms)
    t = ms.astype(np.int64)
    del ms
    keep = (t >= span[0]) & (t <= span[1])  # the read is a millisecond wider on each side
    if not keep.all():
        owner = np.repeat(np.arange(len(lens)), lens)
        t, v = t[keep], v[keep]
        lens = np.bincount(owner[keep], minlength=len(lens))
        if not lens.all():
            rows = np.flatnonzero(lens)
            labels, lens = [labels[i] for i in rows.tolist()], lens[rows]
    return LoadedBatch(labels, t, v, lens)


class StreamedBatch(LoadedBatch):
    """A selector of a range query read a batch of series at a time, for its step picks only
    (:func:`~inferwatch.promql._range_windows.instant_rows`): a heavy query over 50,000 series held
    every raw sample of its span at once (~140 MiB for 15 minutes at 5 s, five such queries at a time
    under five dashboard clients), so the server's resident memory rose with the span until the data
    covered it. Its picks are ``series x steps``; the samples behind them live one batch at a time.

    Anything else (iterating, a range function, the attributes of :class:`LoadedBatch`) reads the
    whole span once, as :func:`load_batch` does, and keeps it.
    """

    def __init__(self, store: object, matchers: tuple[Matcher, ...], span: Span, kept: list[Labels],
                 chunks: Iterator[Any]) -> None:  # no super().__init__: the columns come when asked for
        self._store, self._matchers, self._span = store, matchers, span
        self.kept, self._chunks = kept, chunks
        self.bound = len(kept)  # at most this many series
        self.streamed = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_store", "_matchers", "_span", "_chunks"):
            raise AttributeError(name)
        full = load_batch(self._store, self._matchers, self._span)  # the whole span, read once and kept
        if full is None:
            full = LoadedBatch([], np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64))
        elif isinstance(full, SharedBatch):
            full = full.plain()
        self.__dict__.update(full.__dict__)
        return getattr(self, name)

    @property
    def whole(self) -> bool:
        """Whether the whole span has been read (then it is a :class:`LoadedBatch` like any other)."""
        return "t" in self.__dict__

    def batches(self) -> Iterator[LoadedBatch]:
        """The span a batch of series at a time, in the selection's order (once: a second reader reads
        the whole span)."""
        if self.streamed:
            yield self
            return
        self.streamed = True
        for cols in self._chunks:
            check_deadline()
            if cols.samples:
                yield batch_of_columns(cols, self._span)


def stream_batch(store: object, matchers: tuple[Matcher, ...], span: Span) -> StreamedBatch | None:
    """A :class:`StreamedBatch` of ``span`` (ms) where the store reads columns a batch of series at a
    time; else ``None``."""
    reader = getattr(store, "select_column_chunks", None)
    if reader is None:
        return None
    check_deadline()
    got = reader(matchers, span[0] / 1000 - 0.001, span[1] / 1000 + 0.001)
    return None if got is None else StreamedBatch(store, matchers, span, got[0], got[1])
