"""Instant selectors over many series kept as columns, and their aggregation without a per-member loop.

A rule such as ``avg by (shard) (load_gauge) > 0.8`` over 50,000 series ran ~0.55 s of CPU
a round through per-series objects (one ``Series`` and one ``Loaded`` per series, a label
set cut per member, a Python fold per group): a rule round of seconds on a busy machine.
Here the store hands each series' newest sample as columns (``select_latest_columns``),
and ``sum``/``avg``/``count``/``group``/``min``/``max``/``stddev``/``stdvar`` of
such a selector fold the columns (no ``(labels, value)`` pair per member) with the range
evaluator's vectorised fold
(:func:`~inferwatch.promql._range_agg.aggregate_rows`), which adds members in the same
order as the instant fold: the results agree to the last bit. Group numbers are kept
per label list: the store hands the same list round after round while the same series
match, so the label sets are cut once, not every round.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from inferwatch.model import Labels, Matcher, check_deadline
from inferwatch.promql._ast import Aggregate
from inferwatch.promql._data import Loaded, Span
from inferwatch.promql._range_agg import aggregate_rows, groups_of
from inferwatch.promql._rows import Rows
from inferwatch.promql._values import Vector
from inferwatch.store import stale_mask

__all__ = ["COLUMN_OPS", "LatestBatch", "aggregate_columns", "load_latest_columns"]

COLUMN_OPS = frozenset({"sum", "avg", "count", "group", "min", "max", "stddev", "stdvar"})


class LatestBatch(Sequence[Loaded]):
    """Each series' last sample in a span, as columns: ``labels[i]`` at ``t[i]`` (ms), ``v[i]``;
    ``present[i]`` false where the series has no sample in the span. Iterating it yields
    :class:`Loaded` series (a consumer that does not know the columns still gets the answer)."""

    def __init__(self, labels: list[Labels], t: np.ndarray, v: np.ndarray, present: np.ndarray) -> None:
        self.labels, self.t, self.v, self.present = labels, t, v, present
        self.stale = stale_mask(v)
        self.samples = int(present.sum())
        self._loaded: list[Loaded] | None = None

    def pick(self, ref: int, lookback: int) -> tuple[np.ndarray, np.ndarray]:
        """The instant selector at ``ref``: the rows whose sample lies in ``[ref - lookback, ref]`` and
        is not a staleness marker (the span ends at ``ref``: nothing is later), and their values."""
        ok = self.present & (self.t >= ref - lookback) & (self.t <= ref) & ~self.stale
        rows = np.flatnonzero(ok)
        return rows, self.v[rows]

    def vector(self, ref: int, lookback: int) -> Vector:
        """The instant selector's vector at ``ref`` (see :meth:`pick`)."""
        rows, vals = self.pick(ref, lookback)
        return list(zip(map(self.labels.__getitem__, rows.tolist()), vals.tolist(), strict=True))

    def _series(self) -> list[Loaded]:
        if self._loaded is None:
            keep = np.flatnonzero(self.present).tolist()
            out = []
            for i in keep:
                t, v, stale = self.t[i:i + 1], self.v[i:i + 1], self.stale[i:i + 1]
                out.append(Loaded(self.labels[i], t, v, stale, t[~stale], v[~stale]))
            self._loaded = out
        return self._loaded

    def __iter__(self) -> Iterator[Loaded]:
        return iter(self._series())

    def __len__(self) -> int:
        return self.samples

    def __getitem__(self, i: Any) -> Any:  # Sequence's int and slice forms
        return self._series()[i]


def load_latest_columns(store: object, matchers: tuple[Matcher, ...], span: Span) -> LatestBatch | None:
    """The store's newest samples as columns when it has them and they answer ``span``; else ``None``."""
    reader = getattr(store, "select_latest_columns", None)
    if reader is None:
        return None
    check_deadline()
    cols = reader(matchers, span[0] / 1000 - 0.001, span[1] / 1000 + 0.001)
    if cols is None:
        return None
    with np.errstate(invalid="ignore"):  # -inf: a series without samples
        ms = np.rint(np.where(np.isfinite(cols.t), cols.t * 1000.0, -1.0e18)).astype(np.int64)
    if len(ms) and int(ms.max()) > span[1]:
        return None  # a sample within 1 ms after the span: its predecessor is the one (the slow read)
    return LatestBatch(cols.labels, ms, cols.v, ms >= span[0])


def aggregate_columns(e: Aggregate, batch: LatestBatch, ref: int, lookback: int) -> Vector:
    """``e`` (an op of :data:`COLUMN_OPS`, no parameter) over the instant selector ``batch.pick``s,
    groups in order of their first member, as the instant fold lists them."""
    gid_all, glabels = groups_of(e, batch.labels)
    rows, vals = batch.pick(ref, lookback)
    gid = gid_all[rows]
    if not len(gid):
        return []
    firsts = np.unique(gid, return_index=True)  # groups present, and each one's first member
    order = firsts[0][np.argsort(firsts[1], kind="stable")]
    local = np.full(len(glabels), -1, dtype=np.int64)
    local[order] = np.arange(len(order))
    # the member labels are not read when the groups are given (ops of COLUMN_OPS)
    members = Rows(batch.labels, vals[:, None], np.ones((len(gid), 1), dtype=bool))
    out = aggregate_rows(e, members, None, check_deadline,
                         groups=(local[gid], [glabels[g] for g in order.tolist()]))
    return [(ls, x) for ls, x, ok in zip(out.labels, out.vals[:, 0].tolist(), out.mask[:, 0].tolist(),
                                         strict=True) if ok]
