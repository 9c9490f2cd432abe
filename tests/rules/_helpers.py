"""Loading promtool-notation series into a store, for the rules tests."""

from __future__ import annotations

from collections.abc import Mapping

from inferwatch.model import Sample
from inferwatch.rules._notation import expand_values, parse_series
from inferwatch.store import MemoryStore


def load(series: Mapping[str, str], interval: float, store: MemoryStore | None = None) -> MemoryStore:
    """A store holding ``{series: values}`` at ``i * interval`` (promtool's ``load``)."""
    store = store or MemoryStore()
    samples = [
        Sample(parse_series(s), i * interval, v)
        for s, values in series.items() for i, v in enumerate(expand_values(values)) if v is not None
    ]
    store.append(sorted(samples, key=lambda x: x.t))
    return store
