"""Damaged SQLite files: found by SQLite's own check, copied aside, the readable rows salvaged.

``check_file`` runs ``PRAGMA quick_check`` (``integrity_check`` with ``full``): the
pages, their B-trees and their free list, in one read of the file. ``repair_file``
copies the damaged file aside (never deletes it), then copies every row it can
read, table by table, into a fresh file that takes the original's place. Rows are
read in key order; where a page cannot be read, the scan skips ahead to the next
key it can reach (doubling the step, then narrowing it), so one damaged page costs
the rows on that page, not the rest of the table. Each table's skipped key ranges
are reported, so the caller can say what was lost (the store: which series).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from inferwatch._exceptions import StoreError

__all__ = ["Salvage", "check_file", "lost_series", "repair_file"]

_BATCH = 256
_I8 = np.dtype("<i8")  # series ids in the store's wal and wal_series rows (store/_disk.py)
_MAX_KEY = 2**62
Key = tuple[object, ...]


@dataclass
class Salvage:
    """What ``repair_file`` did: where the damaged file went, rows kept and key ranges lost per table."""

    path: Path
    copy: Path
    rows: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, list[tuple[Key | None, Key | None]]] = field(default_factory=dict)
    """Per table, the (last key read, next key read) around each unreadable stretch (None: the end)."""
    schema_lost: bool = False
    """The file's schema itself was unreadable: nothing could be salvaged."""

    @property
    def damaged_tables(self) -> list[str]:
        """Tables with rows that could not be read."""
        return sorted(t for t, gaps in self.skipped.items() if gaps)


def _ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)


def check_file(path: Path, *, full: bool = False) -> list[str]:
    """SQLite's findings about ``path`` (``[]`` when it is sound); ``full``: ``integrity_check``."""
    try:
        conn = _ro(path)
    except sqlite3.Error as exc:
        return [str(exc)]
    try:
        rows = conn.execute(f"PRAGMA {'integrity_check' if full else 'quick_check'}(20)").fetchall()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    finally:
        conn.close()
    found = [str(r[0]) for r in rows]
    return [] if found == ["ok"] else found


def repair_file(path: Path, *, now: datetime | None = None) -> Salvage:
    """Copy ``path`` aside as ``NAME.damaged-STAMP`` and replace it with what could be read of it."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    copy = path.with_name(f"{path.name}.damaged-{stamp}")
    fresh = path.with_name(f"{path.name}.recovering")
    try:
        for suffix in ("", "-wal"):
            side = Path(f"{path}{suffix}")
            if side.exists() and (not suffix or side.stat().st_size):  # an empty WAL holds nothing
                shutil.copy2(side, f"{copy}{suffix}")
        had_wal = Path(f"{copy}-wal").exists()  # before reading the copy, which may make an empty one
        fresh.unlink(missing_ok=True)
        out = Salvage(path, copy)
        src, dst = _ro(copy), sqlite3.connect(fresh, isolation_level=None)
        try:
            _salvage(src, dst, out)
        finally:
            src.close()
            dst.close()
        for side in ("-shm", *(() if had_wal else ("-wal",))):  # what reading the copy left beside it
            Path(f"{copy}{side}").unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):  # they belong to the damaged file (copied aside with it)
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        os.replace(fresh, path)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot repair {path}: {exc} (the damaged file is kept as {copy})") from exc
    return out


def _salvage(src: sqlite3.Connection, dst: sqlite3.Connection, out: Salvage) -> None:
    try:
        schema = src.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    except sqlite3.DatabaseError:
        out.schema_lost = True
        return
    tables = [(n, s) for t, n, s in schema if t == "table" and not n.startswith("sqlite_")]
    dst.execute("BEGIN")
    for _, sql in tables:
        dst.execute(sql)
    for name, sql in tables:
        out.rows[name], out.skipped[name] = _copy_table(src, dst, name, "WITHOUT ROWID" in sql.upper())
    for t, _, sql in schema:
        if t in ("index", "trigger", "view"):
            with contextlib.suppress(sqlite3.Error):  # a unique index the salvaged rows break: left out
                dst.execute(sql)
    with contextlib.suppress(sqlite3.Error):
        dst.execute(f"PRAGMA user_version={int(src.execute('PRAGMA user_version').fetchone()[0])}")
    dst.execute("COMMIT")


def _copy_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str,
                without_rowid: bool) -> tuple[int, list[tuple[Key | None, Key | None]]]:
    info = src.execute(f'PRAGMA table_info("{table}")').fetchall()
    cols = [f'"{r[1]}"' for r in info]
    keys = [f'"{r[1]}"' for r in sorted((r for r in info if r[5]), key=lambda r: r[5])] if without_rowid \
        else ["rowid"]
    select = ", ".join(keys + cols)
    order = ", ".join(keys)
    after = f"({order}) > ({', '.join('?' * len(keys))})"
    insert = f'INSERT OR IGNORE INTO "{table}" ({", ".join(cols if without_rowid else ["rowid", *cols])}) ' \
        f"VALUES ({', '.join('?' * (len(cols) + (0 if without_rowid else 1)))})"
    width = len(keys)
    last: Key | None = None
    resumed: int | None = None  # where the scan last resumed past damage
    copied, skipped = 0, list[tuple[Key | None, Key | None]]()
    while True:
        sql = f'SELECT {select} FROM "{table}"' + (f" WHERE {after}" if last is not None else "") + \
            f" ORDER BY {order} LIMIT {_BATCH}"
        rows, broken = [], False
        try:
            for row in src.execute(sql, last or ()):
                rows.append(row)
        except sqlite3.DatabaseError:
            broken = True
        if rows:
            dst.executemany(insert, [r[width:] if without_rowid else (r[0], *r[width:]) for r in rows])
            copied += len(rows)
            last = tuple(rows[-1][:width])
        if broken:  # skip to the next key that reads (from past the point of the last resume: progress)
            base = last[0] if last is not None and (rows or resumed is None) else resumed
            nxt = _reach(src, table, keys[0], base)
            skipped.append((last, (nxt,) if nxt is not None else None))
            if nxt is None:
                break
            resumed = nxt
            last = (nxt - 1, *([_MAX_KEY] * (width - 1)))  # every key of ``nxt`` sorts after this
        elif len(rows) < _BATCH:
            break
    return copied, skipped


def _reach(src: sqlite3.Connection, table: str, key: str, after: object) -> int | None:
    """The first value of the leading integer ``key`` readable past ``after``; None at the end (or
    when the key is not an integer)."""
    start = after if isinstance(after, int) else -_MAX_KEY if after is None else None
    if start is None:
        return None

    def probe(x: int) -> bool | int | None:
        try:
            row = src.execute(f'SELECT {key} FROM "{table}" WHERE {key} > ? ORDER BY {key} LIMIT 1',
                              (x,)).fetchone()
        except sqlite3.DatabaseError:
            return False
        return row[0] if row is not None and isinstance(row[0], int) else None

    step, lo, hi, found = 1, start, None, None
    while start + step < _MAX_KEY:
        got = probe(start + step)
        if got is not False:
            hi, found = start + step, got
            break
        lo, step = start + step, step * 2
    if hi is None:
        return None
    while hi - lo > 1:  # narrow: the smallest probe point that reads, so little that is readable is skipped
        mid = (lo + hi) // 2
        got = probe(mid)
        if got is False:
            lo = mid
        else:
            hi, found = mid, got
    return found if isinstance(found, int) else None


def lost_series(path: Path, salvage: Salvage) -> tuple[int, list[str]]:
    """After a repair of a store file: how many series lost samples, and the label sets known of them.

    A series whose ``series`` row was unreadable keeps its samples without a name (counted,
    not named); one whose chunks sat on an unreadable page is named. Uncompacted WAL records
    that were lost are not attributed to series.
    """
    conn = sqlite3.connect(path)
    try:
        names = {sid: text for sid, text in conn.execute("SELECT id, labels FROM series")}
        for ids, in conn.execute("SELECT ids FROM wal_series"):
            names.update((int(i), "") for i in np.frombuffer(ids, _I8) if int(i) not in names)
        data = {int(s) for (s,) in conn.execute("SELECT DISTINCT series_id FROM chunks")}
        for sids, in conn.execute("SELECT sids FROM wal"):
            data.update(np.frombuffer(sids, _I8).tolist())
    finally:
        conn.close()
    hit = set(data - names.keys())  # samples whose series' labels were lost
    for before, after in salvage.skipped.get("chunks", []):
        lo = int(before[0]) if before else min(names, default=0)  # type: ignore[call-overload]
        hi = int(after[0]) if after else max(names, default=0)  # type: ignore[call-overload]
        hit.update(sid for sid in names if lo <= sid <= hi)
    shown = sorted(_label_text(json.loads(names[s])) for s in hit if names.get(s))
    return len(hit), shown


def _label_text(pairs: list[list[str]]) -> str:
    labels = dict(pairs)
    name = labels.pop("__name__", "")
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
