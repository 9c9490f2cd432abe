"""Damage contained, never silent: every SQLite file of the data directory checked at start.

Each file (the store, the alert state, the alerting state, edge, traces, outcomes, the
remote-write queue) is checked with SQLite's ``quick_check`` before anything opens it.
A damaged one is copied aside (``NAME.damaged-STAMP``, never deleted) and replaced by
the rows that could still be read (:func:`~inferwatch.store.repair_file`), so the
server starts and serves what is readable; one file's damage never keeps another
part down. Each repair is said on stderr, counted
(``inferwatch_store_corruptions_total{file}``, ``inferwatch_store_lost_series{file}``)
and recorded every round so the default rule ``DataFileDamaged`` (P1) names the file.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inferwatch._exceptions import StoreError
from inferwatch.store import TSDB_FILE, check_file, lost_series, repair_file

__all__ = ["CHECK_EVERY_S", "Damage", "IntegrityWatch", "check_data_dir"]

log = logging.getLogger(__name__)
SHOWN = 5  # label sets of lost series named on stderr
CHECK_EVERY_S = 86400.0  # while running: one quick_check of each file a day (one read of each file)


@dataclass(frozen=True)
class Damage:
    """One damaged file found at start: where its copy went and what was lost."""

    file: str
    copy: str
    tables: tuple[str, ...]
    lost_series: int
    named: tuple[str, ...] = ()


def check_data_dir(data_dir: Path, announce: Callable[[str], None]) -> list[Damage]:
    """Check every ``*.sqlite`` of ``data_dir``; repair the damaged ones; return what was found."""
    found = []
    for path in sorted(data_dir.glob("*.sqlite")) if data_dir.is_dir() else []:
        problems = check_file(path)
        if not problems:
            continue
        announce(f"{path.name} is damaged ({problems[0]}): copying it aside and recovering what can be read")
        try:
            salvage = repair_file(path)
        except StoreError as exc:
            announce(f"{exc}; the server goes on without it where it can")
            continue
        lost, named = lost_series(path, salvage) if path.name == TSDB_FILE and not salvage.schema_lost \
            else (0, [])
        tables = tuple(salvage.damaged_tables) or (("the schema",) if salvage.schema_lost else ())
        kept = sum(salvage.rows.values())
        lost_text = f", {lost} series lost samples" if path.name == TSDB_FILE else ""
        announce(f"{path.name}: {kept} rows recovered into a fresh file; unreadable: "
                 f"{', '.join(tables) or 'nothing'}{lost_text}"
                 + (f" ({', '.join(named[:SHOWN])}{', ...' if len(named) > SHOWN else ''})" if named else "")
                 + f"; the damaged file is kept as {salvage.copy.name}")
        found.append(Damage(path.name, salvage.copy.name, tables, lost, tuple(named)))
    return found



class IntegrityWatch:
    """While the server runs: every ``every`` seconds, each file's ``quick_check`` on a thread of its own.

    A file found damaged is logged once and added to ``damage`` (``DataFileDamaged`` fires);
    it is repaired at the next start, where nothing has it open.
    """

    def __init__(self, data_dir: Path, damage: list[Damage], *, start: float,
                 every: float = CHECK_EVERY_S) -> None:
        self.data_dir, self.damage, self.every = data_dir, damage, every
        self._last = start
        self._thread: threading.Thread | None = None

    def tick(self, now: float) -> None:
        """Start a check when one is due and none is running (never blocks the round)."""
        if now - self._last < self.every or (self._thread is not None and self._thread.is_alive()):
            return
        self._last = now
        self._thread = threading.Thread(target=self._check, name="integrity-check", daemon=True)
        self._thread.start()

    def wait(self, timeout: float) -> None:
        """Wait for a check in progress (tests, shutdown)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _check(self) -> None:
        known = {d.file for d in self.damage}
        for path in sorted(self.data_dir.glob("*.sqlite")):
            if path.name in known:
                continue
            try:
                problems = check_file(path)
            except Exception:  # a background check logs and goes on
                log.exception("checking %s failed", path)
                continue
            if problems:
                log.error("%s fails SQLite's check while the server runs (%s): restart the server to "
                          "repair it (the damaged file is copied aside then), or restore a backup",
                          path.name, problems[0])
                self.damage.append(Damage(path.name, "", ("found while running",), 0))
