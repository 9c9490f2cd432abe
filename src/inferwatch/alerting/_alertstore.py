"""The pipeline's alerts in SQLite: what was received survives a restart (typed, no SQL elsewhere)."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from inferwatch.alerting._notification import fingerprint
from inferwatch.alerting._state import StateStore
from inferwatch.model import Labels, readable
from inferwatch.rules import Alert

__all__ = ["AlertStore", "alert_from_json", "alert_text", "alert_to_json", "carry_peak", "labels_json"]


def alert_to_json(a: Alert) -> dict[str, Any]:
    """An alert as a JSON-able dict (``value`` as a string so NaN survives)."""
    return {"labels": a.labels.to_dict(), "annotations": dict(a.annotations), "starts_at": a.starts_at,
            "ends_at": a.ends_at, "value": str(a.value), "generator_url": a.generator_url,
            "peak": str(a.peak)}


@functools.lru_cache(maxsize=1 << 16)
def labels_json(labels: Labels) -> str:
    """``json.dumps(labels, sort_keys=True)``, once per label set (a storm writes each several times).

    >>> labels_json(Labels({"b": "2", "a": "1"}))
    '{"a": "1", "b": "2"}'
    """
    return json.dumps(labels.to_dict())  # already sorted by name


@functools.lru_cache(maxsize=4096)
def _annotations_json(items: tuple[tuple[str, str], ...]) -> str:
    return json.dumps(dict(items))  # a storm's alerts of one rule share them


def _number(x: float | None) -> str:
    return float.__repr__(x) if type(x) is float and math.isfinite(x) else json.dumps(x)


def alert_text(a: Alert) -> str:
    """``json.dumps(alert_to_json(a))``, built from the cached parts (the storm's hot path).

    >>> up = Alert(Labels({"alertname": "Up"}), {"summary": "s"}, 1.5, None)
    >>> json.loads(alert_text(up)) == json.loads(json.dumps(alert_to_json(up)))
    True
    """
    hit = _TEXTS.get(id(a))
    if hit is not None and hit[0] is a:  # the alert store wrote it; the outbox writes the same alert
        return hit[1]
    annotations = _annotations_json(tuple(a.annotations.items()))
    text = (f'{{"labels": {labels_json(a.labels)}, "annotations": {annotations}, '
            f'"starts_at": {_number(a.starts_at)}, "ends_at": {_number(a.ends_at)}, "value": "{a.value!r}", '
            f'"generator_url": {json.dumps(a.generator_url)}, "peak": "{a.peak!r}"}}')
    if len(_TEXTS) >= _TEXTS_MAX:
        _TEXTS.clear()
    _TEXTS[id(a)] = (a, text)  # the entry holds ``a``, so its id names no other alert meanwhile
    return text


_TEXTS_MAX = 1 << 14  # a storm's alerts, from the alert store's write to the outbox's
_TEXTS: dict[int, tuple[Alert, str]] = {}


def alert_from_json(b: dict[str, Any]) -> Alert:
    """The inverse of :func:`alert_to_json`."""
    return Alert(Labels(b["labels"]), b["annotations"], b["starts_at"], b["ends_at"],
                 float(b["value"]), b["generator_url"], float(b.get("peak", "nan")))


def carry_peak(previous: Alert | None, a: Alert, now: float) -> Alert:
    """``a`` with the highest value seen while it fired in this episode (same ``starts_at``).

    A resolved alert's own value is not counted: the recovery message's peak is the worst
    the alert saw while it fired.

    >>> hot = Labels({"alertname": "Hot"})
    >>> up = carry_peak(None, Alert(hot, starts_at=0.0, ends_at=120.0, value=0.9), 0.0)
    >>> later = carry_peak(up, Alert(up.labels, starts_at=0.0, ends_at=180.0, value=0.85), 60.0)
    >>> later.peak, carry_peak(later, Alert(up.labels, starts_at=0.0, ends_at=90.0, value=0.1), 100.0).peak
    (0.9, 0.9)
    """
    seen = [x for x in (a.peak, a.value if not a.resolved(now) else math.nan) if not math.isnan(x)]
    if previous is not None and previous.starts_at == a.starts_at:
        seen += [] if math.isnan(previous.peak) else [previous.peak]
    peak = max(seen, default=math.nan)
    return a if peak == a.peak or (math.isnan(peak) and math.isnan(a.peak)) else replace(a, peak=peak)


class AlertStore:
    """The ``alerts`` table: the latest version of every alert the pipeline holds, by fingerprint.

    >>> from inferwatch.alerting import StateDB
    >>> s = AlertStore(StateDB(":memory:"))
    >>> s.put([Alert(Labels({"alertname": "Up"}), starts_at=0.0)], now=0.0)
    >>> [a.name for a in s.load().values()]
    ['Up']
    """

    def __init__(self, db: StateStore) -> None:
        self._db = db

    def load(self) -> dict[str, Alert]:
        """Every stored alert by fingerprint."""
        return {str(fp): alert_from_json(readable(json.loads(str(body))))
                for fp, body in self._db.query("SELECT fingerprint, body FROM alerts")}

    def put(self, alerts: Iterable[Alert], now: float) -> None:
        """Insert or replace."""
        rows = [(fingerprint(a), alert_text(a), now) for a in alerts]
        with self._db.transaction() as c:
            c.executemany("INSERT OR REPLACE INTO alerts VALUES (?,?,?)", rows)

    def delete(self, fingerprints: Iterable[str]) -> None:
        """Forget alerts."""
        with self._db.transaction() as c:
            c.executemany("DELETE FROM alerts WHERE fingerprint=?", [(fp,) for fp in fingerprints])
