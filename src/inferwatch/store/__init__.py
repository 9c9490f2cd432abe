"""The time-series store: a protocol, SQLite (default) and in-memory implementations, retention.

>>> from inferwatch.model import Labels, Sample, parse_matchers
>>> store = MemoryStore()
>>> store.append([Sample(Labels.of("up", job="api"), 100.0, 1.0)])
>>> [str(s.labels) for s in store.select(parse_matchers('{__name__="up"}'), 0, 200)]
['up{job="api"}']
"""

from inferwatch.store._exemplars import Exemplar, ExemplarSeries, ExemplarStore
from inferwatch.store._memory import MemoryStore, append_columns
from inferwatch.store._open import TSDB_FILE, open_store
from inferwatch.store._protocol import AppendStats, Series, Store
from inferwatch.store._selector import parse_selector
from inferwatch.store._sqlite import SQLiteStore
from inferwatch.store._util import stale_mask

__all__ = [
    "TSDB_FILE",
    "AppendStats",
    "Exemplar",
    "ExemplarSeries",
    "ExemplarStore",
    "MemoryStore",
    "SQLiteStore",
    "Series",
    "Store",
    "append_columns",
    "open_store",
    "parse_selector",
    "stale_mask",
]
