"""The series one append creates, prepared once for every use: the checks, the series log, the index.

A first scrape of 100,000 series brings 800,000 label pairs but only a thousand different ones (a
job, a route, a code, a model). :class:`NewSeries` reads every pair once, in C-level passes, and
numbers the distinct ones: the name checks and the label length limits then look at the distinct
pairs only, the series log writes the distinct pairs' text once and a number per pair (a few bytes
a series where each label set's text was 150), and the index takes the ids of each pair as one
array (:meth:`~inferwatch.store._index.SeriesIndex.add_batch`).

The series log (``wal_series``) holds three forms, newest first:

* *numbered* (``codes`` set): the distinct pairs' names and values joined by NUL in ``labels``, each
  set's pair count in ``sizes`` and each pair's number in the distinct pairs in ``codes`` (int32);
* *packed* (``sizes`` set, schema 3): every set's names and values joined by NUL;
* *JSON* (schema 2, or a label holding a NUL): the sets and their metric names as JSON lists.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import chain, count
from operator import attrgetter

import numpy as np

from inferwatch.model import METRIC_NAME_LABEL, FreshLabels, Labels

__all__ = ["BLOCK", "LoggedRow", "NewSeries", "distinct", "logged_sets", "to_json"]

BLOCK = 8192
"""Label sets per C-level pass (a pass over a million pairs would hold the interpreter lock 50 ms)."""
_I4, _I8 = np.dtype("<i4"), np.dtype("<i8")
_items = attrgetter("items_tuple")
# json.dumps(x, separators=...) builds a new encoder per call; one built once encodes the same text
to_json = json.JSONEncoder(separators=(",", ":")).encode
_SetList = list[tuple[tuple[str, str], ...]]
LoggedRow = tuple[str, str, str, "bytes | None", "bytes | None"]
"""A ``wal_series`` row's ``labels, names, sizes, codes`` columns with its ``ids`` first (as bytes)."""


class NewSeries:
    """The label sets ``labels`` about to be created with the ids ``first``, ``first + 1``, ...

    >>> new = NewSeries([Labels.of("up", job="a"), Labels.of("up", job="b")], 7)
    >>> new.pairs, new.codes.tolist(), new.sizes.tolist(), new.ids().tolist()
    ([('__name__', 'up'), ('job', 'a'), ('job', 'b')], [0, 1, 0, 2], [2, 2], [7, 8])
    """

    __slots__ = ("codes", "first", "labels", "pairs", "sizes")

    def __init__(self, labels: Sequence[Labels], first: int) -> None:
        self.labels = labels
        self.first = first
        number: dict[tuple[str, str], int] = {}
        sizes, sparse = [], []
        at = count()
        for a in range(0, len(labels), BLOCK):
            items = list(map(_items, labels[a:a + BLOCK]))
            sizes.append(np.fromiter(map(len, items), _I8, len(items)))
            flat = chain.from_iterable(items)
            sparse.append(np.fromiter(map(number.setdefault, flat, at), _I8, int(sizes[-1].sum())))
        self.sizes: np.ndarray = np.concatenate([np.empty(0, _I8), *sizes])
        """Each set's pair count."""
        self.pairs: list[tuple[str, str]] = list(number)
        """The distinct pairs, in order of first sight."""
        # setdefault kept the count at each pair's first sight: those counts, ranked, are the numbers
        firsts = np.fromiter(number.values(), _I8, len(number))
        rank = np.zeros(int(firsts[-1]) + 1 if len(firsts) else 0, _I4)
        rank[firsts] = np.arange(len(firsts), dtype=_I4)
        both = np.concatenate([np.empty(0, _I8), *sparse])
        self.codes: np.ndarray = rank[both] if both.shape[0] else np.empty(0, _I4)
        """Each pair of each set, in order, as its place in :attr:`pairs`."""

    @classmethod
    def of(cls, labels: Sequence[Labels], first: int, batch: Sequence[Labels]) -> NewSeries:
        """``NewSeries(labels, first)``, the pairs' numbering taken from ``batch`` when it is a
        :class:`~inferwatch.model.FreshLabels` and ``labels`` is all of it (the same sets in order).

        >>> fresh = FreshLabels([Labels.of("up", job="a")], [("__name__", "up"), ("job", "a")],
        ...                     np.array([0, 1]), np.array([2]))
        >>> new = NewSeries.of(list(fresh), 7, fresh)
        >>> new.pairs, new.codes.tolist(), new.sizes.tolist(), new.ids().tolist()
        ([('__name__', 'up'), ('job', 'a')], [0, 1], [2], [7])
        """
        if type(batch) is not FreshLabels or len(labels) != len(batch):
            return cls(labels, first)
        self = object.__new__(cls)
        self.labels, self.first = labels, first
        self.pairs, self.codes, self.sizes = batch.pairs, batch.codes, batch.sizes
        return self

    def __len__(self) -> int:
        return len(self.labels)

    def ids(self) -> np.ndarray:
        """The new series' ids, in the order of :attr:`labels`."""
        return np.arange(self.first, self.first + len(self.labels), dtype=_I8)

    def first_pairs(self) -> list[tuple[str, str]] | None:
        """The distinct pairs that come first in a set (the metric name, mostly); ``None`` when a set
        is empty.

        >>> NewSeries([Labels.of("up", job="a"), Labels.of("up", job="b")], 7).first_pairs()
        [('__name__', 'up')]
        """
        if not self.sizes.shape[0] or not self.sizes.min():
            return None if self.sizes.shape[0] else []
        firsts = self.codes[np.cumsum(self.sizes) - self.sizes]
        return list(map(self.pairs.__getitem__, np.unique(firsts).tolist()))

    def metric_counts(self) -> dict[str, int]:
        """How many of the sets hold each metric name (``""``: sets without one)."""
        uses = np.bincount(self.codes, minlength=len(self.pairs)).tolist()
        out = {v: n for (k, v), n in zip(self.pairs, uses, strict=True) if k == METRIC_NAME_LABEL}
        missing = len(self.labels) - sum(out.values())
        if missing:
            out[""] = out.get("", 0) + missing
        return out

    def logged(self) -> tuple[bytes, str, str, bytes | None, bytes | None]:
        """The ``wal_series`` row (``ids, labels, names, sizes, codes``): numbered, or JSON when a
        label holds a NUL."""
        ids = self.ids().tobytes()
        words = list(chain.from_iterable(self.pairs))
        text = "\0".join(words)
        if words and text.count("\0") == len(words) - 1:
            return ids, text, "", self.sizes.tobytes(), self.codes.astype(_I4).tobytes()
        sets = list(map(_items, self.labels))
        return ids, to_json(sets), to_json([ls.name for ls in self.labels]), None, None


def distinct(unseen: list[Labels], batch: Sequence[Labels]) -> list[Labels]:
    """``unseen`` (label sets of ``batch``) with each set once, in order of first sight (as it is when
    ``batch`` is :class:`~inferwatch.model.FreshLabels`: no two of those are equal)."""
    if isinstance(batch, FreshLabels) or len(set(unseen)) == len(unseen):
        return unseen
    return list(dict.fromkeys(unseen))


def logged_sets(id_bytes: bytes, text: str, names_text: str, sizes: bytes | None, codes: bytes | None = None,
                ) -> tuple[list[int], _SetList, list[str]]:
    """Ids, label sets and metric names of one ``wal_series`` row, in any of its forms."""
    ids = np.frombuffer(id_bytes, _I8).tolist()
    if sizes is None:  # JSON (schema 2, or a label holding a NUL)
        return ids, [tuple(map(tuple, items)) for items in json.loads(text)], json.loads(names_text)
    words = iter(text.split("\0"))
    pairs = list(zip(words, words, strict=True))
    if codes is not None:
        pairs = list(map(pairs.__getitem__, np.frombuffer(codes, _I4).tolist()))
    sets = _cut(pairs, sizes)
    return ids, sets, [dict(items).get(METRIC_NAME_LABEL, "") for items in sets]


def _cut(pairs: list[tuple[str, str]], sizes: bytes) -> _SetList:
    """``pairs`` cut into consecutive sets of ``sizes`` pairs each."""
    out: _SetList = []
    at = 0
    for n in np.frombuffer(sizes, _I8).tolist():
        out.append(tuple(pairs[at:at + n]))
        at += n
    return out


def pack_sets(sets: _SetList) -> tuple[bytes, str] | None:
    """Label sets in the packed form (schema 3): the pair count of each and one text of every name and
    value joined by NUL; ``None`` when a label holds a NUL.

    >>> sizes, text = pack_sets([(("__name__", "up"), ("job", "a")), (("__name__", "x"),)])
    >>> text.split(chr(0)), logged_sets(bytes(16), text, "", sizes)[1][1]
    (['__name__', 'up', 'job', 'a', '__name__', 'x'], (('__name__', 'x'),))
    >>> pack_sets([(("__name__", "a" + chr(0)),)]) is None
    True
    """
    flat = list(chain.from_iterable(chain.from_iterable(sets)))
    text = "\0".join(flat)
    if not flat or text.count("\0") != len(flat) - 1:
        return None
    return np.fromiter(map(len, sets), dtype=_I8, count=len(sets)).tobytes(), text
