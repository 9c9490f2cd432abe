"""The series index: label sets by id, and postings lists for matching."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import filterfalse, repeat, starmap

import numpy as np

from inferwatch.model import METRIC_NAME_LABEL, Labels, Matcher, MatchOp
from inferwatch.store._new_series import NewSeries

_PAIR = tuple[str, str]
_WIDE = 64
"""New series from which a batch's postings wait as arrays (below it: straight into the sets)."""
_CHUNKS = 16
"""Waiting arrays a pair keeps before they are joined into one."""

__all__ = ["SeriesIndex"]


class SeriesIndex:
    """Series ids by label set, with inverted postings (label pair -> ids).

    Postings are keyed by the ``(name, value)`` pair itself (one lookup per
    label when a series is added: the pairs are the label set's own tuples),
    with the values of each name kept aside for regular expressions and
    ``label_values``. Matching starts from the postings of the matchers that
    cannot match an empty value (``a="x"``, ``a=~"x.+"``), intersects them, and
    filters the rest label by label, as Prometheus's index does.

    A wide batch of new series (:meth:`add_batch`: a first scrape) leaves each pair's new ids as one
    sorted array; they join the pair's set when a read first needs it (most pairs of a big target are
    never matched on alone), so creating 100,000 series costs a sort of their pair numbers, not
    800,000 set insertions. The caller holds the store's lock for every call, reads included.
    """

    def __init__(self) -> None:
        self._ids: dict[Labels, int] = {}
        self._labels: dict[int, Labels] = {}
        self._postings: dict[_PAIR, set[int]] = {}
        self._waiting: dict[_PAIR, list[np.ndarray]] = {}  # ids not yet in the pair's set
        self._values: dict[str, set[str]] = {}
        self.lookup = self._ids.get  # ``get`` without a method call of its own (the append path)

    def __len__(self) -> int:
        return len(self._ids)

    def metric_series(self, metric: str) -> int:
        """How many series the metric ``metric`` has (the postings of its name)."""
        pair = (METRIC_NAME_LABEL, metric)
        return len(self._postings.get(pair, ())) + sum(map(len, self._waiting.get(pair, ())))

    def _settled(self, pair: _PAIR) -> set[int] | None:
        """The postings of ``pair`` with its waiting ids joined in."""
        ids = self._postings.get(pair)
        waiting = self._waiting.pop(pair, None)
        if waiting is not None and ids is not None:
            for chunk in waiting:
                ids.update(chunk.tolist())
        return ids

    def get(self, labels: Labels) -> int | None:
        """The id of ``labels``, or ``None``."""
        return self._ids.get(labels)

    def labels(self, sid: int) -> Labels:
        """The label set of series ``sid``."""
        return self._labels[sid]

    def ids(self) -> Iterable[int]:
        """Every series id."""
        return self._labels.keys()

    def add(self, sid: int, labels: Labels) -> None:
        """Register ``labels`` under the new id ``sid``."""
        self.add_many({labels: sid})

    def add_many(self, new: Mapping[Labels, int]) -> None:
        """Register each label set of ``new`` under its new id (``add`` for a batch)."""
        self._ids.update(new)
        self._labels.update(zip(new.values(), new, strict=True))
        postings = self._postings
        known = postings.get
        for labels, sid in new.items():
            for pair in labels.items_tuple:
                ids = known(pair)
                if ids is None:
                    postings[pair] = {sid}
                    self._values.setdefault(pair[0], set()).add(pair[1])
                else:
                    ids.add(sid)

    def add_batch(self, new: NewSeries) -> None:
        """Register the series ``new`` under its ids: ``add_many`` for a batch prepared once."""
        ids = range(new.first, new.first + len(new))
        if len(new) < _WIDE:
            self.add_many(dict(zip(new.labels, ids, strict=True)))
            return
        self._ids.update(zip(new.labels, ids, strict=True))
        self._labels.update(zip(ids, new.labels, strict=True))
        # each pair's ids together: a stable sort of the pair numbers (a radix sort while they fit 16 bits)
        codes = new.codes.astype(np.uint16) if len(new.pairs) <= 1 << 16 else new.codes
        grouped = np.repeat(new.ids(), new.sizes)[np.argsort(codes, kind="stable")]
        ends = np.cumsum(np.bincount(new.codes, minlength=len(new.pairs))).tolist()
        # views of the one array (cut in C): together they hold no more than the batch's copies would
        chunks = map(grouped.__getitem__, map(slice, [0, *ends], ends))
        postings, waiting, values = self._postings, self._waiting, self._values
        unseen = list(filterfalse(postings.__contains__, new.pairs))
        if unseen:
            postings.update(zip(unseen, starmap(set, repeat((), len(unseen))), strict=True))
            for name, value in unseen:
                values.setdefault(name, set()).add(value)
        get = waiting.get
        for pair, chunk in zip(new.pairs, chunks, strict=False):
            held = get(pair)
            if held is None:
                waiting[pair] = [chunk]
            elif len(held) < _CHUNKS:
                held.append(chunk)
            else:
                waiting[pair] = [np.concatenate([*held, chunk])]

    def remove(self, sid: int) -> None:
        """Forget series ``sid``."""
        labels = self._labels.pop(sid)
        del self._ids[labels]
        for pair in labels.items_tuple:
            ids = self._settled(pair)
            assert ids is not None
            ids.discard(sid)
            if not ids:
                del self._postings[pair]
                name, value = pair
                values = self._values[name]
                values.discard(value)
                if not values:
                    del self._values[name]

    def label_values(self, name: str) -> list[str]:
        """Sorted distinct values of label ``name``."""
        return sorted(self._values.get(name, ()))

    def match(self, matchers: Sequence[Matcher]) -> list[int]:
        """Ids of the series that satisfy every matcher (all series for none)."""
        candidates: set[int] | None = None
        rest: list[Matcher] = []
        for m in matchers:
            ids = self._postings_for(m)
            if ids is None:
                rest.append(m)
                continue
            candidates = ids if candidates is None else candidates & ids
            if not candidates:
                return []
        pool: Iterable[int] = self._labels.keys() if candidates is None else candidates
        if not rest:
            return list(pool)
        return [sid for sid in pool if all(m.matches_labels(self._labels[sid]) for m in rest)]

    def _postings_for(self, m: Matcher) -> set[int] | None:
        """The ids a matcher selects when it cannot match the empty value, else ``None``."""
        if m.matches(""):
            return None
        if m.op is MatchOp.EQ:
            return set(self._settled((m.name, m.value)) or ())
        out: set[int] = set()
        for value in self._values.get(m.name, ()):
            if m.matches(value):
                out |= self._settled((m.name, value)) or set()
        return out
