"""Alert state in SQLite, so a restart neither restarts a ``for`` timer nor fires twice.

One row per alert instance (rule name, fingerprint, the instance as JSON) and
one per dynamic-threshold rule (its band provider's exported state). Each
evaluation round is written in one transaction, in WAL mode, so a kill -9
leaves the last complete round.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Mapping
from typing import Any

from inferwatch._exceptions import StoreError
from inferwatch.model import Labels, open_sqlite
from inferwatch.rules._alert import AlertState
from inferwatch.rules._lifecycle import AlertInstance

__all__ = ["AlertStateStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS alert_instances (
  rule TEXT NOT NULL, fingerprint TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (rule, fingerprint));
CREATE TABLE IF NOT EXISTS band_state (rule TEXT PRIMARY KEY, data TEXT NOT NULL);
"""


def _dump(a: AlertInstance) -> str:
    return json.dumps({
        "labels": a.labels.to_dict(), "annotations": dict(a.annotations), "state": a.state.value,
        "value": a.value, "active_at": a.active_at, "fired_at": a.fired_at,
        "resolved_at": a.resolved_at, "keep_firing_since": a.keep_firing_since,
        "last_sent_at": a.last_sent_at, "held": a.held,
    })


def _load(text: str) -> AlertInstance:
    d = json.loads(text)
    return AlertInstance(
        labels=Labels(d["labels"]), annotations=d["annotations"], state=AlertState(d["state"]),
        value=float(d["value"]), active_at=d["active_at"], fired_at=d["fired_at"],
        resolved_at=d["resolved_at"], keep_firing_since=d["keep_firing_since"],
        last_sent_at=float(d["last_sent_at"]), held=bool(d.get("held", False)),
    )


class AlertStateStore:
    """The evaluator's persistent alert state (one SQLite file, e.g. ``<data_dir>/alerts.db``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        try:
            self._db = open_sqlite(self.path, schema=_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"alert state {self.path}: {exc}") from exc

    def load(self) -> tuple[dict[str, dict[str, AlertInstance]], dict[str, Any]]:
        """Every rule's instances by fingerprint, and every rule's band state."""
        alerts: dict[str, dict[str, AlertInstance]] = {}
        with self._lock:
            try:
                rows = self._db.execute("SELECT rule, fingerprint, data FROM alert_instances").fetchall()
                bands = self._db.execute("SELECT rule, data FROM band_state").fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"alert state {self.path}: {exc}") from exc
        for rule, fp, data in rows:
            alerts.setdefault(rule, {})[fp] = _load(data)
        return alerts, {rule: json.loads(data) for rule, data in bands}

    def save(self, alerts: Mapping[str, Mapping[str, AlertInstance]], bands: Mapping[str, Any]) -> None:
        """Replace the stored state of the given rules, in one transaction."""
        with self._lock:
            try:
                self._db.execute("BEGIN")
                for rule, instances in alerts.items():
                    self._db.execute("DELETE FROM alert_instances WHERE rule = ?", (rule,))
                    self._db.executemany(
                        "INSERT INTO alert_instances VALUES (?, ?, ?)",
                        [(rule, fp, _dump(a)) for fp, a in instances.items()],
                    )
                for rule, state in bands.items():
                    self._db.execute("INSERT OR REPLACE INTO band_state VALUES (?, ?)",
                                     (rule, json.dumps(state)))
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                full = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
                raise StoreError(f"alert state {self.path}: {'disk full: ' if full else ''}{exc}") from exc

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
