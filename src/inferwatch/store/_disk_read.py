"""A read that reaches before the head: the file's chunks up to the head, the head's buffers after it."""

from __future__ import annotations

from collections.abc import Callable
from sqlite3 import Connection

import numpy as np

from inferwatch.model import Labels, deadline_checked
from inferwatch.store import _disk
from inferwatch.store._head import Head
from inferwatch.store._protocol import Series

__all__ = ["disk_then_head"]


def disk_then_head(conn: Connection, head: Head, labels: Callable[[int], Labels], ids: list[int],
                   start: float, end: float, head_from: float) -> list[Series]:
    """Series ``ids`` in ``[start, end]``: chunks before ``head_from`` (all of it compacted), the head after.

    The caller holds the store's file and memory locks; SQLite's errors are the caller's to translate.
    """
    chunks = _disk.read_chunks(conn, ids, start, min(end, head_from))
    old = {sid: (t, v) for sid, t, v in deadline_checked(chunks)}
    out = []
    recent = head.windows(ids, head_from, end) if end >= head_from else {}
    for sid in deadline_checked(ids):
        t0, v0 = old.get(sid, (None, None))
        t1, v1 = recent.get(sid, (None, None))
        if t0 is not None and v0 is not None:
            keep = t0 < head_from
            t0, v0 = t0[keep], v0[keep]
        parts_t = [a for a in (t0, t1) if a is not None and a.shape[0]]
        parts_v = [a for a in (v0, v1) if a is not None and a.shape[0]]
        if parts_t:
            t = parts_t[0] if len(parts_t) == 1 else np.concatenate(parts_t)
            v = parts_v[0] if len(parts_v) == 1 else np.concatenate(parts_v)
            out.append(Series(labels(sid), t, v))
    return out
