"""The checks every push way in (remote write, OTLP metrics, edge ingest) makes before it appends.

A request is refused whole, before anything is stored, when it carries more
samples than ``server.limits.sample_limit`` or a sample stamped out of bounds:
more than ``MAX_AHEAD_S`` (10 minutes) ahead of the server's clock (it would
make every later real sample of its series out of order, as Prometheus's
appender says), before 2000-01-01 (a clock at 0, a timestamp in the wrong
unit) or before the retention's start (it would be deleted at once). Label and
series limits are the store's own check on new series (``inferwatch.store.SeriesLimits``).
Every refusal raises :class:`~inferwatch.store.LimitExceeded` naming the limit and is counted in
``inferwatch_discarded_samples_total{reason}``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from inferwatch.model import Labels
from inferwatch.server.ingest._scrape_limits import MAX_AHEAD_S
from inferwatch.store import LimitExceeded, check_sample_limit, count_discarded

__all__ = ["MIN_TIME", "check_batch"]

MIN_TIME = 946_684_800.0
"""2000-01-01T00:00:00Z: a sample stamped before it is out of bounds."""


def check_batch(
    store: object, labels: Sequence[Labels], t: np.ndarray | Sequence[float], now: float, *,
    sample_limit: int, what: str, retention: float | None = None,
) -> None:
    """Raise :class:`LimitExceeded` (counted as discarded) if the batch breaks a limit or a time bound."""
    try:
        check_sample_limit(len(labels), sample_limit, what)
        _check_times(labels, np.asarray(t, dtype=np.float64), now, retention)
    except LimitExceeded as exc:
        count_discarded(store, exc.reason, len(labels))
        raise


def _check_times(labels: Sequence[Labels], t: np.ndarray, now: float, retention: float | None) -> None:
    if not t.shape[0]:
        return
    ahead = np.flatnonzero(t > now + MAX_AHEAD_S)
    if ahead.shape[0]:
        k = int(ahead[0])
        raise LimitExceeded("too_far_in_future", (
            f"out of bounds: {ahead.shape[0]} samples stamped more than {MAX_AHEAD_S:g}s ahead of the "
            f"server's clock (first: {_short(labels[k])} at {t[k]:.3f}, the server's clock {now:.3f}); "
            "nothing of this request was stored"))
    old = np.flatnonzero(t < MIN_TIME)
    if old.shape[0]:
        k = int(old[0])
        raise LimitExceeded("too_old", (
            f"out of bounds: {old.shape[0]} samples stamped before 2000-01-01 (first: {_short(labels[k])} "
            f"at {t[k]:.3f}; timestamps are seconds since 1970 here); nothing of this request was stored"))
    if retention is not None:
        gone = np.flatnonzero(t < now - retention)
        if gone.shape[0]:
            k = int(gone[0])
            raise LimitExceeded("too_old", (
                f"out of bounds: {gone.shape[0]} samples stamped before the retention's start "
                f"({now - retention:.3f}, storage.retention {retention:g}s; first: {_short(labels[k])} at "
                f"{t[k]:.3f}); nothing of this request was stored"))


def _short(labels: Labels) -> str:
    text = str(labels)
    return text if len(text) <= 200 else text[:200] + "..."
