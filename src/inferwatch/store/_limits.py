"""Limits on what a store takes in: labels per series, label lengths, series in all and per metric.

One check, in the store's new-series path, so every way in (scrape, remote
write, OTLP, edge ingest, rule output) meets the same limits and only a new
series pays for them (a known series passed them when it was created). A
batch breaking a limit raises :class:`LimitExceeded` before anything of it is
written (the whole batch is refused, as Prometheus rolls back a scrape or a
remote-write request) and its samples are counted in
``AppendStats.discarded[reason]``. The names are Prometheus's and Mimir's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter, eq, itemgetter
from typing import Protocol

from inferwatch._exceptions import LimitExceeded
from inferwatch.model import METRIC_NAME_LABEL, Labels
from inferwatch.store._new_series import NewSeries

__all__ = [
    "DEFAULT_LIMITS", "LimitExceeded", "SeriesCounts", "SeriesLimits",
    "check_sample_limit", "count_discarded",
]

_items = attrgetter("items_tuple")
_first, _second = itemgetter(0), itemgetter(1)


class SeriesCounts(Protocol):
    """What the check needs of a store's index: series in all, and per metric name."""

    def __len__(self) -> int: ...

    def metric_series(self, metric: str) -> int: ...


@dataclass(frozen=True)
class SeriesLimits:
    """The limits a new series must pass (0 = no limit), with Prometheus's and Mimir's names."""

    label_limit: int = 30
    label_name_length_limit: int = 1024
    label_value_length_limit: int = 2048
    max_series: int = 1_000_000
    max_series_per_metric: int = 200_000

    def check_new(self, new: Sequence[Labels], counts: SeriesCounts, batch: NewSeries | None = None) -> None:
        """Raise :class:`LimitExceeded` if creating the series ``new`` breaks a limit (``batch``: the
        same series prepared once, whose distinct pairs stand for all of theirs)."""
        if not new:
            return
        if self.max_series and len(counts) + len(new) > self.max_series:
            raise LimitExceeded("max_series", (
                f"max_series limit exceeded: {len(counts)} series stored, {len(new)} new in this batch, "
                f"limit {self.max_series} (server.limits.max_series)"))
        items = list(map(_items, new)) if batch is None else []
        sizes = map(len, items) if batch is None else batch.sizes.tolist()
        if self.label_limit and max(sizes) > self.label_limit:
            ls = next(ls for ls in new if len(ls) > self.label_limit)
            raise LimitExceeded("label_limit", (
                f"label_limit exceeded (metric: {_metric(ls)}, number of labels: {len(ls)}, "
                f"limit: {self.label_limit})"))
        shortest = min(x for x in (self.label_name_length_limit, self.label_value_length_limit) if x) \
            if (self.label_name_length_limit or self.label_value_length_limit) else 0
        # one pass in C over every name and value; only a batch holding a long one is looked at closely
        pairs = chain.from_iterable(items) if batch is None else batch.pairs
        if shortest and max(map(len, chain.from_iterable(pairs)), default=0) > shortest:
            for ls in new:
                self._check_lengths(ls)
        if self.max_series_per_metric:
            per_metric = Counter(_metric_names(items)) if batch is None else batch.metric_counts()
            self._check_per_metric(per_metric, counts)

    def check_labels(self, ls: Labels, where: str = "") -> None:
        """The label count and lengths of one label set (an alert's): ``LimitExceeded`` naming the limit."""
        try:
            if self.label_limit and len(ls) > self.label_limit:
                raise LimitExceeded("label_limit", (
                    f"label_limit exceeded (number of labels: {len(ls)}, limit: {self.label_limit})"))
            self._check_lengths(ls)
        except LimitExceeded as exc:
            if where:
                raise LimitExceeded(exc.reason, f"{where}: {exc}") from None
            raise

    def _check_lengths(self, ls: Labels) -> None:
        names_at, values_at = self.label_name_length_limit, self.label_value_length_limit
        if not ls.items_tuple:
            return
        names, values = zip(*ls.items_tuple, strict=True)
        if (not names_at or max(map(len, names)) <= names_at) and (
                not values_at or max(map(len, values)) <= values_at):
            return  # the common case, measured in C; the loop below names the first label over
        for name, value in ls.items_tuple:
            if self.label_name_length_limit and len(name) > self.label_name_length_limit:
                raise LimitExceeded("label_name_length_limit", (
                    f"label_name_length_limit exceeded (metric: {_metric(ls)}, label name: {name[:50]}..., "
                    f"length: {len(name)}, limit: {self.label_name_length_limit})"))
            if self.label_value_length_limit and len(value) > self.label_value_length_limit:
                raise LimitExceeded("label_value_length_limit", (
                    f"label_value_length_limit exceeded (metric: {_metric(ls)}, label name: {name[:50]}, "
                    f"value: {value[:50]!r}..., length: {len(value)}, "
                    f"limit: {self.label_value_length_limit})"))

    def _check_per_metric(self, metrics: Mapping[str, int], counts: SeriesCounts) -> None:
        limit = self.max_series_per_metric
        for metric, n in metrics.items():
            have = counts.metric_series(metric)
            if have + n > limit:
                raise LimitExceeded("max_series_per_metric", (
                    f"max_series_per_metric limit exceeded (metric: {metric[:100]}, {have} series stored, "
                    f"{n} new in this batch, limit {limit})"))


DEFAULT_LIMITS = SeriesLimits()
"""``server.limits``' defaults."""


def _metric(ls: Labels) -> str:
    return ls.name[:100]


def _metric_names(items: list[tuple[tuple[str, str], ...]]) -> list[str]:
    """The metric name of each label set given by its pairs (``items_tuple``), read in C when it comes
    first in each (as it does unless a label name sorts before ``__name__``): ``Labels.name`` would
    build and keep a dict in every new series.

    >>> ls = [Labels.of("up", job="a"), Labels.of("x", A="1")]
    >>> _metric_names([x.items_tuple for x in ls])
    ['up', 'x']
    """
    if all(items):
        firsts = list(map(_first, items))
        if all(map(eq, map(_first, firsts), repeat(METRIC_NAME_LABEL))):
            return list(map(_second, firsts))
    return [dict(it).get(METRIC_NAME_LABEL, "") for it in items]


def check_sample_limit(n: int, limit: int, what: str) -> None:
    """Raise :class:`LimitExceeded` (``sample_limit``) if ``what`` carries more than ``limit`` samples."""
    if limit and n > limit:
        raise LimitExceeded("sample_limit", (
            f"sample_limit exceeded: {n} samples in {what}, limit {limit} (server.limits.sample_limit)"))


def count_discarded(store: object, reason: str, n: int) -> None:
    """Count ``n`` samples refused for ``reason`` in ``store``'s ``stats.discarded`` (a tee's store's)."""
    stats = getattr(getattr(store, "store", store), "stats", None)
    discarded = getattr(stats, "discarded", None)
    if isinstance(discarded, dict):
        discarded[reason] = discarded.get(reason, 0) + n
