"""The store protocol: what the scrape loop writes and the evaluator and API read.

Append rules (the same in every implementation, as in Prometheus's TSDB):

* timestamps are Unix seconds; a sample must be finite in time, and its
  labels must carry a valid metric name and valid label names, otherwise the
  whole batch is refused with :class:`~inferwatch.InputError` before anything
  is written;
* per series, time must not go back: a sample older than the series' newest
  is dropped as *out of order*; one at the same time with the same value
  (bit for bit, so a repeated staleness marker too) is an accepted no-op;
  one at the same time with a different value is dropped as a *duplicate*.
  Dropped samples are counted in :class:`AppendStats`, never raised, so one
  bad target cannot stop a scrape of the others;
* values may be any float, including ``NaN``, ``±Inf`` and the staleness
  marker :data:`~inferwatch.model.STALE_NAN` (kept distinct from other NaNs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from inferwatch.model import Labels, Matcher, Sample

__all__ = ["AppendStats", "Series", "Store"]


@dataclass(frozen=True, eq=False)
class Series:
    """One series' samples in a time range: ``t`` ascending float64 seconds, ``v`` float64.

    ``v`` may hold :data:`~inferwatch.model.STALE_NAN` markers; test them with
    :func:`inferwatch.store.stale_mask`. (Arrays do not compare with ``==``,
    so neither does a ``Series``; compare ``labels``, ``t`` and ``v``.)
    """

    labels: Labels
    t: np.ndarray
    v: np.ndarray

    def __len__(self) -> int:
        return int(self.t.shape[0])


@dataclass
class AppendStats:
    """Counters of what ``append`` accepted and dropped since the store opened."""

    appended: int = 0
    out_of_order: int = 0
    duplicate: int = 0
    series_created: int = 0
    discarded: dict[str, int] = field(default_factory=dict)
    """Samples of batches refused whole for breaking a limit, by the limit's name (``_limits``)."""
    write_failed: dict[str, int] = field(default_factory=dict)
    """Samples a failed write kept out of the store, by reason (``disk_full``, ``read_only``, ``io_error``,
    ``corrupt``, ``other``)."""
    write_error: str = ""
    """The last write's error, ``""`` while writes succeed (else: ``StorageWriteFailing``)."""

    def wrote(self, error: str = "", reason: str = "", samples: int = 0) -> None:
        """Note a write's outcome: ``error`` (and ``samples`` lost, by ``reason``) when it failed."""
        self.write_error = error
        if error:
            self.write_failed[reason] = self.write_failed.get(reason, 0) + samples


@runtime_checkable
class Store(Protocol):
    """A time-series store (see the module docstring for the append rules)."""

    def append(self, samples: Iterable[Sample]) -> None:
        """Add a batch of samples."""
        ...

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """Series matching every matcher with at least one sample in ``[start, end]``, sorted by labels."""
        ...

    def series(self, matchers: Sequence[Matcher]) -> list[Labels]:
        """Label sets of the stored series matching every matcher, sorted."""
        ...

    def label_values(self, name: str) -> list[str]:
        """The sorted distinct values of label ``name`` (``__name__`` for metric names)."""
        ...

    def delete_before(self, t: float) -> int:
        """Delete samples older than ``t`` (and series left empty); return how many samples went."""
        ...

    def flush(self) -> None:
        """Make every appended sample durable."""
        ...

    def close(self) -> None:
        """Flush and release resources; the store is unusable afterwards."""
        ...
