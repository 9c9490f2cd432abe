"""Label sets and series identity, with Prometheus's naming rules."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, KeysView, Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

__all__ = ["METRIC_NAME_LABEL", "FreshLabels", "Labels", "is_valid_label_name", "is_valid_metric_name"]

METRIC_NAME_LABEL = "__name__"
_T = TypeVar("_T")
_METRIC_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def is_valid_metric_name(name: str) -> bool:
    """Whether ``name`` is a valid Prometheus metric name."""
    return bool(_METRIC_NAME_RE.match(name))


def is_valid_label_name(name: str) -> bool:
    """Whether ``name`` is a valid Prometheus label name."""
    return bool(_LABEL_NAME_RE.match(name))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Labels(Mapping[str, str]):
    """An immutable, sorted, hashable label set; the identity of a series.

    The metric name is the label ``__name__``, as in Prometheus.

    >>> ls = Labels({"__name__": "up", "job": "ranker"})
    >>> ls.name, ls["job"], str(ls)
    ('up', 'ranker', 'up{job="ranker"}')
    >>> ls == Labels.of("up", job="ranker")
    True
    """

    __slots__ = ("_hash", "_items", "_map")

    def __init__(self, labels: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        pairs = labels.items() if isinstance(labels, Mapping) else labels
        items = tuple(sorted((str(k), str(v)) for k, v in pairs if v != ""))
        self._items: tuple[tuple[str, str], ...] = items
        self._map: dict[str, str] | None = dict(items)
        if len(self._map) != len(items):
            raise ValueError(f"duplicate label name in {items!r}")
        self._hash = hash(items)

    @classmethod
    def from_sorted(cls, items: tuple[tuple[str, str], ...]) -> Labels:
        """Build from pairs the caller has already checked: ``str`` names strictly ascending, no
        empty value (a decoder that reads labels sorted, as remote-write sends them).

        Nothing is checked here: it skips the copy, the sort and the checks of the constructor.

        >>> Labels.from_sorted((("__name__", "up"), ("job", "a"))) == Labels.of("up", job="a")
        True
        """
        self = object.__new__(cls)
        self._items = items
        self._map = None  # built on the first lookup by name: most stored series never need it
        self._hash = hash(items)
        return self

    def _lookup(self) -> dict[str, str]:
        """The label set as a dict, built once."""
        m = self._map
        if m is None:
            m = self._map = dict(self._items)
        return m

    @classmethod
    def of(cls, name: str | None = None, /, **labels: str) -> Labels:
        """Build from a metric name and keyword labels."""
        if name is not None:
            labels[METRIC_NAME_LABEL] = name
        return cls(labels)

    @property
    def name(self) -> str:
        """The metric name (``__name__``), or ``""``."""
        return (self._map or self._lookup()).get(METRIC_NAME_LABEL, "")

    if TYPE_CHECKING:
        @property
        def items_tuple(self) -> tuple[tuple[str, str], ...]:
            """The sorted ``(name, value)`` pairs."""
    else:  # the same, read in C (no Python frame): the store reads it for every new series
        items_tuple = property(attrgetter("_items"), doc="The sorted ``(name, value)`` pairs.")

    def without(self, *names: str) -> Labels:
        """A copy without the given label names."""
        return Labels((k, v) for k, v in self._items if k not in names)

    def without_name(self) -> Labels:
        """A copy without ``__name__`` (what an operation on the metric returns)."""
        return self.without(METRIC_NAME_LABEL)

    def keep(self, names: Iterable[str]) -> Labels:
        """A copy with only the given label names."""
        wanted = set(names)
        return Labels((k, v) for k, v in self._items if k in wanted)

    def with_(self, **labels: str) -> Labels:
        """A copy with labels added or replaced (an empty value removes)."""
        merged = dict(self._items)
        merged.update(labels)
        return Labels(merged)

    def fingerprint(self) -> str:
        """A stable 16-hex-digit fingerprint, the same in every process and version."""
        import hashlib  # here: at module level it loads OpenSSL's libcrypto (~3.6 MiB) into the edge agent

        h = hashlib.blake2b(digest_size=8)
        for k, v in self._items:
            h.update(k.encode())
            h.update(b"\xff")
            h.update(v.encode())
            h.update(b"\xff")
        return h.hexdigest()

    def __getitem__(self, key: str) -> str:
        return (self._map or self._lookup())[key]

    # Mapping's own get/keys/contains go through __getitem__ and __iter__ in Python; the dict's are C.
    @overload
    def get(self, key: str, /) -> str | None: ...
    @overload
    def get(self, key: str, default: str | _T, /) -> str | _T: ...
    def get(self, key: str, default: Any = None, /) -> Any:
        return (self._map or self._lookup()).get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in (self._map or self._lookup())

    def keys(self) -> KeysView[str]:
        return (self._map or self._lookup()).keys()

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Labels):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __lt__(self, other: Labels) -> bool:
        return self._items < other._items

    def __str__(self) -> str:
        inner = ",".join(f'{k}="{_escape(v)}"' for k, v in self._items if k != METRIC_NAME_LABEL)
        return f"{self.name}{{{inner}}}" if inner or not self.name else self.name

    def __repr__(self) -> str:
        return f"Labels({dict(self._items)!r})"

    def to_dict(self) -> dict[str, Any]:
        """A plain ``dict`` copy."""
        return dict(self._items)


class FreshLabels(list[Labels]):
    """Label sets a decoder has just made, with their pairs numbered: what a store creating them as
    new series would otherwise work out again.

    The decoder promises: each object is new (no other live object is one of them, so no map keyed
    by ``id()`` holds it) and no two are equal; ``pairs`` are their distinct ``(name, value)`` pairs,
    ``codes`` each set's pairs in turn as places in ``pairs`` and ``sizes`` each set's pair count
    (integer arrays). A store that ignores the numbering reads it as a plain list.

    >>> batch = FreshLabels([Labels.of("up", job="a")], [("__name__", "up"), ("job", "a")], [0, 1], [2])
    >>> list(batch) == [Labels.of("up", job="a")], batch.pairs[batch.codes[1]]
    (True, ('job', 'a'))
    """

    __slots__ = ("codes", "pairs", "sizes")

    def __init__(self, labels: Iterable[Labels], pairs: list[tuple[str, str]], codes: Any,
                 sizes: Any) -> None:
        super().__init__(labels)
        self.pairs = pairs
        self.codes = codes
        self.sizes = sizes
