"""The series index: label sets by id, and postings lists for matching."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from inferwatch.model import METRIC_NAME_LABEL, Labels, Matcher, MatchOp

__all__ = ["SeriesIndex"]


class SeriesIndex:
    """Series ids by label set, with inverted postings (label pair -> ids).

    Postings are keyed by the ``(name, value)`` pair itself (one lookup per
    label when a series is added: the pairs are the label set's own tuples),
    with the values of each name kept aside for regular expressions and
    ``label_values``. Matching starts from the postings of the matchers that
    cannot match an empty value (``a="x"``, ``a=~"x.+"``), intersects them, and
    filters the rest label by label, as Prometheus's index does.
    """

    def __init__(self) -> None:
        self._ids: dict[Labels, int] = {}
        self._labels: dict[int, Labels] = {}
        self._postings: dict[tuple[str, str], set[int]] = {}
        self._values: dict[str, set[str]] = {}
        self.lookup = self._ids.get  # ``get`` without a method call of its own (the append path)

    def __len__(self) -> int:
        return len(self._ids)

    def metric_series(self, metric: str) -> int:
        """How many series the metric ``metric`` has (the postings of its name)."""
        return len(self._postings.get((METRIC_NAME_LABEL, metric), ()))

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

    def remove(self, sid: int) -> None:
        """Forget series ``sid``."""
        labels = self._labels.pop(sid)
        del self._ids[labels]
        for pair in labels.items_tuple:
            ids = self._postings[pair]
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
            return set(self._postings.get((m.name, m.value), ()))
        out: set[int] = set()
        for value in self._values.get(m.name, ()):
            if m.matches(value):
                out |= self._postings[(m.name, value)]
        return out
