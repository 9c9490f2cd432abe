"""The series index: label sets by id, and postings lists for matching."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from inferwatch.model import Labels, Matcher, MatchOp

__all__ = ["SeriesIndex"]


class SeriesIndex:
    """Series ids by label set, with inverted postings (label name -> value -> ids).

    Matching starts from the postings of the matchers that cannot match an
    empty value (``a="x"``, ``a=~"x.+"``), intersects them, and filters the
    rest label by label, as Prometheus's index does.
    """

    def __init__(self) -> None:
        self._ids: dict[Labels, int] = {}
        self._labels: dict[int, Labels] = {}
        self._postings: dict[str, dict[str, set[int]]] = {}

    def __len__(self) -> int:
        return len(self._ids)

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
        self._ids[labels] = sid
        self._labels[sid] = labels
        for name, value in labels.items_tuple:
            self._postings.setdefault(name, {}).setdefault(value, set()).add(sid)

    def add_many(self, new: Mapping[Labels, int]) -> None:
        """Register each label set of ``new`` under its new id (``add`` for a batch)."""
        self._ids.update(new)
        self._labels.update(zip(new.values(), new, strict=True))
        postings = self._postings
        for labels, sid in new.items():
            for name, value in labels.items_tuple:
                values = postings.get(name)
                if values is None:
                    values = postings[name] = {}
                ids = values.get(value)
                if ids is None:
                    values[value] = {sid}
                else:
                    ids.add(sid)

    def remove(self, sid: int) -> None:
        """Forget series ``sid``."""
        labels = self._labels.pop(sid)
        del self._ids[labels]
        for name, value in labels.items_tuple:
            values = self._postings[name]
            ids = values[value]
            ids.discard(sid)
            if not ids:
                del values[value]
                if not values:
                    del self._postings[name]

    def label_values(self, name: str) -> list[str]:
        """Sorted distinct values of label ``name``."""
        return sorted(self._postings.get(name, {}))

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
        values = self._postings.get(m.name, {})
        if m.op is MatchOp.EQ:
            return set(values.get(m.value, ()))
        out: set[int] = set()
        for value, ids in values.items():
            if m.matches(value):
                out |= ids
        return out
