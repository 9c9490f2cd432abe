"""When the store cannot write: why (the reason label), and samples held in memory meanwhile.

A full disk, a read-only mount or an I/O error refuses every write. The server still
has to say so: a target whose scrape could not be stored is down (``up`` 0, held in
the head, in memory only, so ``TargetDown`` can fire), and its own storage series
(``inferwatch_storage_write_failing``) are held the same way, so ``StorageWriteFailing``
fires from a store that cannot store. Held samples are never written to disk: they
leave the head with it, and a restart does not see them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from inferwatch.model import Labels, Sample

__all__ = ["failure", "hold_samples"]

_REASONS = {sqlite3.SQLITE_FULL: "disk_full", sqlite3.SQLITE_READONLY: "read_only",
            sqlite3.SQLITE_IOERR: "io_error", sqlite3.SQLITE_CORRUPT: "corrupt",
            sqlite3.SQLITE_NOTADB: "corrupt"}


def failure(exc: Exception) -> str:
    """Why a write failed, as the ``reason`` of ``inferwatch_storage_failed_samples_total``.

    >>> failure(sqlite3.OperationalError("database or disk is full"))
    'disk_full'
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "disk_full" if "disk is full" in str(exc) else "other"
    return _REASONS.get(code & 0xFF, "other")  # an extended code (SQLITE_IOERR_WRITE): its primary's byte


def hold_samples(store: object, labels: Sequence[Labels], t: Sequence[float], v: Sequence[float]) -> int:
    """Keep samples of series the store already knows in memory only; return how many were kept.

    For the SQLite store (or one behind the remote-write tee) they go into the head and
    are never written; a series the store does not know, or a sample not newer than its
    series' newest, is skipped. A memory store simply appends them.
    """
    target: Any = getattr(store, "store", store)  # the SQLite store's own parts, from its package
    if not hasattr(target, "_last_t"):  # not the SQLite store: nothing refuses its writes
        append = getattr(target, "append", None)
        if append is None:
            return 0
        append([Sample(ls, ti, vi) for ls, ti, vi in zip(labels, t, v, strict=True)])
        return len(labels)
    kept = 0
    with target._file, target._lock:  # no append between its check and its commit (they hold the file)
        for ls, ti, vi in zip(labels, t, v, strict=True):
            sid = target._index.lookup(ls)
            if sid is None or ti <= target._last_t[sid] or ti < target._head_from:
                continue
            one = np.array([float(ti)]), np.array([float(vi)])
            target._head.push_columns(np.array([sid]), *one, target._head_from)
            target._last_t[sid], target._last_v[sid] = ti, vi
            kept += 1
    return kept
