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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inferwatch._exceptions import StoreError
from inferwatch.store import TSDB_FILE, check_file, lost_series, repair_file

__all__ = ["Damage", "check_data_dir"]

log = logging.getLogger(__name__)
SHOWN = 5  # label sets of lost series named on stderr


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
