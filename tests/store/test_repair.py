"""Issue 59 #2: a damaged page in each table of the store: found, copied aside, the readable rows salvaged."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.store import SQLiteStore, check_file, lost_series, parse_selector, repair_file

SERIES = 300


def _store(path: Path) -> None:
    """Chunks for 300 series, then uncompacted WAL records and 300 new series still in wal_series."""
    clock = SimulatedClock(1000.0)
    st = SQLiteStore(path, clock=clock, compact_every=1e9, head_window=1e9)
    pad = "x" * 60  # longer label sets: the series table spans pages
    for t in range(40):
        st.append([Sample(Labels.of("m", i=str(k), pad=pad), 1000.0 + t, float(t)) for k in range(SERIES)])
    st.compact()
    for t in range(40, 60):
        st.append([Sample(Labels.of("m", i=str(k), pad=pad), 1000.0 + t, float(t)) for k in range(SERIES)])
        st.append([Sample(Labels.of("n", i=f"{k}-{t}", pad=pad), 1000.0 + t, 1.0) for k in range(15)])
    st._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[union-attr]  # all in the main file
    st._conn.close()  # type: ignore[union-attr]  # as a crash leaves it: the WAL records not compacted
    st._conn = None


def _damage(path: Path, table: str) -> int:
    """Overwrite one leaf page of ``table`` (one in the middle of its leaves) with garbage; its number."""
    with sqlite3.connect(path) as db:
        pages = [p for (p,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,))]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    assert len(pages) >= 3, (table, pages)
    page = pages[len(pages) // 2]
    with path.open("r+b") as f:
        f.seek((page - 1) * size)
        f.write(bytes([0xA5]) * size)
    return int(page)


@pytest.mark.parametrize("table", ["series", "chunks", "wal", "wal_series"])
def test_a_damaged_page_in_each_table_is_salvaged_around(tmp_path: Path, table: str) -> None:
    path = tmp_path / "tsdb.sqlite"
    _store(path)
    _damage(path, table)
    assert check_file(path)  # SQLite's own check finds it
    got = repair_file(path)
    assert got.copy.exists() and got.copy.name.startswith("tsdb.sqlite.damaged-")  # never deleted
    assert check_file(got.copy)  # the copy is the damaged file, as it was
    assert got.damaged_tables == [table], got.skipped
    assert all(got.rows[t] > 0 for t in ("series", "chunks", "wal", "wal_series")), got.rows
    assert check_file(path) == []  # the fresh file is sound
    lost, named = lost_series(path, got)
    if table == "series":  # their samples stay, their names are gone: counted, not named
        assert lost > 0
    if table == "chunks":  # the series whose chunks sat on the page are named
        assert lost > 0 and named and all(x.startswith('m{i="') for x in named), named
    st = SQLiteStore(path, clock=SimulatedClock(2000.0), retention=1e12)
    try:
        readable = st.select(parse_selector('{__name__=~"m|n"}'), 0, 3000)
        print(f"{table}: {len(readable)} series readable after the repair, rows kept {got.rows}")
        assert 0 < len(readable) <= SERIES + 300
        assert len(readable) >= SERIES // 2  # one page of damage costs a page's rows, not the table
    finally:
        st.close()


def test_an_unreadable_schema_leaves_an_empty_file_and_the_copy(tmp_path: Path) -> None:
    path = tmp_path / "tsdb.sqlite"
    _store(path)
    with path.open("r+b") as f:
        f.seek(100)  # page 1 after the file header: the schema's B-tree
        f.write(b"\xff" * 3996)
    got = repair_file(path)
    assert got.schema_lost and got.copy.exists()
    shutil.copy2(path, tmp_path / "check.sqlite")
    assert check_file(tmp_path / "check.sqlite") == []
    SQLiteStore(path).close()  # a fresh, empty store opens on it
