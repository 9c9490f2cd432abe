"""Each selected series' newest sample as columns, for instant reads over many series (rule rounds).

A rule such as ``avg by (shard) (load_gauge)`` over 50,000 series reads every series'
newest sample every round. Built as one :class:`~inferwatch.store.Series` per series,
then sorted by labels, that read cost ~0.3 s of CPU a round; as columns it costs a
few milliseconds. The selection's sorted order and its label list are kept between
reads while the same series match, so the label list is the *same object* round after
round and the query engine can key what it derives from the labels (group numbers) on it.

>>> import numpy as np
>>> from inferwatch.model import Labels
>>> cols = LatestColumns([Labels.of("a", k="1")], np.array([10.0]), np.array([0.5]))
>>> cols.t.tolist(), cols.v.tolist()
([10.0], [0.5])
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from inferwatch.model import Labels, Matcher, pinned
from inferwatch.store._head import READ_CHUNK, Head
from inferwatch.store._index import SeriesIndex
from inferwatch.store._shared import SeriesColumns, SharedColumns

__all__ = ["COLUMN_CHUNK", "LatestColumns", "LatestOrder", "LatestReads", "SeriesColumns"]

COLUMN_CHUNK = READ_CHUNK
"""Series per batch of ``select_column_chunks``: 15 minutes at 5 s of 2,048 series is ~6 MiB of times
and values, where the whole selection of 50,000 was ~140 MiB held by each heavy query at once. One
hold of the store's lock a batch, so series read together come as one matrix, never copied again."""


@dataclass(frozen=True)
class LatestColumns:
    """``labels[i]``'s newest sample is ``(t[i], v[i])`` (seconds); labels sorted as ``select`` sorts."""

    labels: list[Labels]
    t: np.ndarray
    v: np.ndarray


class LatestOrder:
    """The sorted order of recent selections, kept while the same series match (the least recently
    used goes first: a round of the default pack reads ~60 selectors, and a first-in-first-out
    cache smaller than that dropped every one before its next round, the wide ones included:
    0.45 s of a 0.5 s round over 200,000 series went to sorting and grouping them again)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._kept: dict[tuple[Matcher, ...], tuple[np.ndarray, np.ndarray, list[Labels]]] = {}

    def columns(self, matchers: Sequence[Matcher], ids: list[int], labels: Callable[[int], Labels],
                last_t: np.ndarray, last_v: np.ndarray, end: float,
                head: Head | None = None) -> LatestColumns | None:
        """The newest sample at or before ``end`` of series ``ids``. Where one has a sample after
        ``end`` (a scrape appended during the rule round), the one before it comes from ``head``;
        ``None`` without a head (the caller reads the slow way). Series without samples have
        ``t`` = -inf."""
        sids = np.sort(np.fromiter(ids, dtype=np.int64, count=len(ids)))
        _, ordered, names = self.order(matchers, sids, labels)
        t, v = last_t[ordered], last_v[ordered]
        after = np.flatnonzero(t > end)
        if len(after):
            if head is None:
                return None
            t, v = t.copy(), v.copy()
            for k, sid in zip(after.tolist(), ordered[after].tolist(), strict=True):
                t[k], v[k] = head.before(sid, end)
        return LatestColumns(names, t, v)

    def order(self, matchers: Sequence[Matcher], sids: np.ndarray, labels: Callable[[int], Labels],
              ) -> tuple[np.ndarray, np.ndarray, list[Labels]]:
        """``(sids, sids sorted by labels, their labels)`` for the ascending ids ``sids``."""
        key = tuple(matchers)
        kept = self._kept.pop(key, None)
        if kept is not None and np.array_equal(kept[0], sids):
            self._kept[key] = kept  # the most recently used now
        else:
            got = [labels(sid) for sid in sids.tolist()]
            order = sorted(range(len(got)), key=lambda i: got[i].items_tuple)
            if len(self._kept) >= self.size:
                self._kept.pop(next(iter(self._kept)))
            kept = self._kept[key] = (sids, sids[order], [got[i] for i in order])
        return kept


class LatestReads:
    """``select_latest_columns`` and ``select_columns`` for :class:`~inferwatch.store.SQLiteStore` (its
    index, newest-sample columns and head, read under its lock)."""

    _lock: threading.RLock
    _conn: sqlite3.Connection | None
    _head_from: float
    _index: SeriesIndex
    _head: Head
    _last_t: np.ndarray
    _last_v: np.ndarray
    _latest_order: LatestOrder | None = None
    column_chunk: int = COLUMN_CHUNK  # series per batch of select_column_chunks

    def select_latest_columns(self, matchers: Sequence[Matcher], start: float, end: float,
                              ) -> LatestColumns | None:
        """Each matching series' newest sample as columns when ``start`` lies in the head and none is
        after ``end``; else ``None`` (then ``select_latest`` reads it). A sample before ``start`` is the
        caller's to drop."""
        with self._lock, pinned():
            if start < self._head_from or self._conn is None:
                return None
            if self._latest_order is None:
                self._latest_order = LatestOrder()
            return self._latest_order.columns(matchers, self._index.match(matchers), self._index.labels,
                                              self._last_t, self._last_v, end, self._head)

    def select_columns(self, matchers: Sequence[Matcher], start: float, end: float,
                       ) -> SeriesColumns | SharedColumns | None:
        """``select`` as columns when ``start`` lies in the head (else ``None``: ``select`` reads the
        disk); the head is read a chunk of series at a time, as ``select`` reads it."""
        got = self._ordered(matchers, start)
        if got is None:
            return None
        ordered, kept = got
        cols = self._head.read_span(ordered.tolist(), start, end, self._index.labels, self._lock)
        if len(cols.labels) == len(kept):  # every series has samples: the kept list, handed as that object
            cols.labels = kept
        return cols

    def select_column_chunks(self, matchers: Sequence[Matcher], start: float, end: float,
                             ) -> tuple[list[Labels], Iterator[SeriesColumns | SharedColumns]] | None:
        """``select_columns`` a batch of ``column_chunk`` series at a time, for a reader that keeps
        less than the samples (a range query's step picks): the selection's sorted labels (the same
        list object while the same series match) and the batches in that order, each read when
        asked for. ``None`` when ``start`` is before the head."""
        got = self._ordered(matchers, start)
        return None if got is None else (got[1], self._column_chunks(got[0], start, end))

    def _ordered(self, matchers: Sequence[Matcher], start: float) -> tuple[np.ndarray, list[Labels]] | None:
        """The matching ids sorted by labels and their labels (kept), or ``None`` when ``start`` is before
        the head."""
        with self._lock, pinned():
            if start < self._head_from or self._conn is None:
                return None
            if self._latest_order is None:
                self._latest_order = LatestOrder()
            ids = self._index.match(matchers)
            sids = np.sort(np.fromiter(ids, dtype=np.int64, count=len(ids)))
            _, ordered, kept = self._latest_order.order(matchers, sids, self._index.labels)
        return ordered, kept

    def _column_chunks(self, ordered: np.ndarray, start: float, end: float,
                       ) -> Iterator[SeriesColumns | SharedColumns]:
        per = self.column_chunk
        for a in range(0, len(ordered), per):
            yield self._head.read_span(ordered[a:a + per].tolist(), start, end, self._index.labels,
                                       self._lock)
