"""The time-series store: a protocol, SQLite (default) and in-memory implementations, retention.

>>> from inferwatch.model import Labels, Sample, parse_matchers
>>> store = MemoryStore()
>>> store.append([Sample(Labels.of("up", job="api"), 100.0, 1.0)])
>>> [str(s.labels) for s in store.select(parse_matchers('{__name__="up"}'), 0, 200)]
['up{job="api"}']
"""

from inferwatch.store._backup import BackedUp, backup_data_dir, backup_file
from inferwatch.store._exemplars import Exemplar, ExemplarSeries, ExemplarStore
from inferwatch.store._held import failure as write_failure
from inferwatch.store._held import hold_samples
from inferwatch.store._limits import (
    DEFAULT_LIMITS,
    LimitExceeded,
    SeriesLimits,
    check_sample_limit,
    count_discarded,
)
from inferwatch.store._memory import MemoryStore, append_columns
from inferwatch.store._open import TSDB_FILE, open_store
from inferwatch.store._protocol import AppendStats, Series, Store
from inferwatch.store._repair import Salvage, check_file, lost_series, repair_file
from inferwatch.store._selector import parse_selector
from inferwatch.store._sqlite import SQLiteStore
from inferwatch.store._util import stale_mask


def set_limits(store: object, limits: SeriesLimits | None) -> None:
    """Give ``store`` (or the store behind a tee) the limits its new series must pass."""
    target = getattr(store, "store", store)  # the remote-write tee wraps the store
    if hasattr(target, "limits"):
        target.limits = limits

__all__ = [
    "DEFAULT_LIMITS",
    "TSDB_FILE",
    "AppendStats",
    "BackedUp",
    "Exemplar",
    "ExemplarSeries",
    "ExemplarStore",
    "LimitExceeded",
    "MemoryStore",
    "SQLiteStore",
    "Salvage",
    "Series",
    "SeriesLimits",
    "Store",
    "append_columns",
    "backup_data_dir",
    "backup_file",
    "check_file",
    "check_sample_limit",
    "count_discarded",
    "hold_samples",
    "lost_series",
    "open_store",
    "parse_selector",
    "repair_file",
    "set_limits",
    "stale_mask",
    "write_failure",
]
