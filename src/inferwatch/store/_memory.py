"""The in-memory store: for tests, replay and the demo."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence

import numpy as np

from inferwatch._exceptions import StoreError
from inferwatch.model import Labels, Matcher, Sample
from inferwatch.store._fork import ForkReads
from inferwatch.store._head import ACCEPTED, DUPLICATE, OUT_OF_ORDER, Head
from inferwatch.store._index import SeriesIndex
from inferwatch.store._limits import LimitExceeded, SeriesLimits
from inferwatch.store._protocol import AppendStats, Series
from inferwatch.store._util import labels_key
from inferwatch.store._validate import check_labels, check_time, check_value

__all__ = ["MemoryStore", "append_columns", "validate_batch"]


def validate_batch(samples: Iterable[Sample], index: SeriesIndex) -> list[tuple[Labels, float, float]]:
    """Check a whole batch (names, finite times) before any of it is written."""
    out: list[tuple[Labels, float, float]] = []
    checked: set[Labels] = set()
    for s in samples:
        labels = s.labels
        if labels not in checked and index.get(labels) is None:
            check_labels(labels)
            checked.add(labels)
        t = s.t if type(s.t) is float and s.t - s.t == 0.0 else check_time(s.t, labels)
        v = s.v if type(s.v) is float else check_value(s.v, labels)
        out.append((labels, t, v))
    return out


class MemoryStore(ForkReads):
    """A :class:`~inferwatch.store.Store` held in memory; nothing survives the process.

    >>> from inferwatch.model import Labels, Sample
    >>> from inferwatch.store import parse_selector
    >>> st = MemoryStore()
    >>> up = Labels.of("up", job="a")
    >>> st.append([Sample(up, 10.0, 1.0), Sample(up, 25.0, 0.0)])
    >>> [(str(s.labels), s.v.tolist()) for s in st.select(parse_selector('up{job="a"}'), 0, 20)]
    [('up{job="a"}', [1.0])]
    """

    _head_from = -math.inf  # all of it is head

    def __init__(self) -> None:
        self._index = SeriesIndex()
        self._head = Head()
        self._next_id = 1
        self._lock = threading.RLock()
        self._closed = False
        self.stats = AppendStats()
        self.limits: SeriesLimits | None = None
        """Limits every new series must pass (``server.limits``); None: none."""

    def append(self, samples: Iterable[Sample]) -> None:
        """Add a batch (see the store's append rules)."""
        with self._lock:
            self._check_open()
            batch = validate_batch(samples, self._index)
            if self.limits is not None:
                self._check_limits(batch)
            stats, head, index = self.stats, self._head, self._index
            for labels, t, v in batch:
                sid = index.get(labels)
                if sid is None:
                    sid = self._next_id
                    self._next_id += 1
                    index.add(sid, labels)
                    stats.series_created += 1
                verdict = head.check(sid, t, v)
                if verdict == ACCEPTED:
                    head.push(sid, t, v)
                    stats.appended += 1
                elif verdict == OUT_OF_ORDER:
                    stats.out_of_order += 1
                elif verdict == DUPLICATE:
                    stats.duplicate += 1
            head.seal(self._lock)

    def _check_limits(self, batch: list[tuple[Labels, float, float]]) -> None:
        assert self.limits is not None
        new = [ls for ls in dict.fromkeys(ls for ls, _, _ in batch) if self._index.get(ls) is None]
        try:
            self.limits.check_new(new, self._index)
        except LimitExceeded as exc:  # the whole batch is refused: its samples are discarded
            self.stats.discarded[exc.reason] = self.stats.discarded.get(exc.reason, 0) + len(batch)
            raise

    def series_count(self) -> int:
        """How many series the store holds (``server.limits.max_series`` counts these)."""
        return len(self._index)

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """Series matching ``matchers`` with samples in ``[start, end]``."""
        with self._lock:
            self._check_open()
            ids = self._index.match(matchers)
        out = self._head.read(ids, start, end, self._index.labels, self._lock)  # a chunk at a time
        out.sort(key=lambda s: s.labels.items_tuple)
        return out

    def select_latest(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """As :meth:`select`, each series with only its last sample in ``[start, end]``."""
        with self._lock:
            self._check_open()
            ids = self._index.match(matchers)
        out = self._head.read(ids, start, end, self._index.labels, self._lock, latest=True)
        out.sort(key=lambda s: s.labels.items_tuple)
        return out

    def series(self, matchers: Sequence[Matcher]) -> list[Labels]:
        """Label sets of the matching series."""
        with self._lock:
            self._check_open()
            return sorted((self._index.labels(sid) for sid in self._index.match(matchers)), key=labels_key)

    def label_values(self, name: str) -> list[str]:
        """Distinct values of label ``name``."""
        with self._lock:
            self._check_open()
            return self._index.label_values(name)

    def delete_before(self, t: float) -> int:
        """Delete samples older than ``t``; series left without samples are forgotten."""
        with self._lock:
            self._check_open()
            dropped = self._head.drop_before(t)
            for sid in [s for s, (last_t, _) in self._head.last.items() if last_t < t]:
                self._head.forget(sid)
                self._index.remove(sid)
            return dropped

    def flush(self) -> None:
        """Nothing to do: memory is as durable as it gets."""

    def close(self) -> None:
        """Release the data."""
        with self._lock:
            self._closed = True
            self._head = Head()
            self._index = SeriesIndex()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the memory store is closed")


def append_columns(
    store: object, labels: Sequence[Labels], t: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray
) -> None:
    """Append columns to any store: natively where it has ``append_columns``, else as samples."""
    native = getattr(store, "append_columns", None)
    if native is not None:
        native(labels, t, v)
        return
    append = getattr(store, "append")  # noqa: B009 - any object with the Store protocol's append
    append([Sample(ls, float(tt), float(vv)) for ls, tt, vv in zip(labels, t, v, strict=True)])
