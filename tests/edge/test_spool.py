"""The durable spool: order, resume under the same batch id, bounds by age and bytes, a full disk,
compressed segments (a batch ending inside one, a damaged one set aside, an older agent's spool)."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from inferwatch.edge import Spool
from inferwatch.model import Labels, Sample

X = Labels.of("x")


def _fill(sp: Spool, n: int, t0: float = 1000.0, now: float | None = None) -> None:
    for i in range(n):
        sp.append([Sample(X, t0 + i, float(i))], now=now if now is not None else t0 + i)


def test_batches_in_order_and_acked(tmp_path: Path) -> None:
    sp = Spool(tmp_path / "s.sqlite")
    _fill(sp, 25)
    got: list[float] = []
    while (b := sp.next_batch(10)) is not None:
        got += [s.v for s in b.samples]
        sp.ack(b)
    assert got == [float(i) for i in range(25)]
    assert sp.backlog() == 0


def test_a_batch_in_flight_is_resent_with_the_same_id_after_a_restart(tmp_path: Path) -> None:
    # rule: the in-flight range is written down before sending; a new process sends exactly it again
    sp = Spool(tmp_path / "s.sqlite")
    _fill(sp, 5)
    first = sp.next_batch(10)
    assert first is not None
    _fill(sp, 5, t0=2000.0)  # more arrives while the batch is in flight
    sp.close()
    again = Spool(tmp_path / "s.sqlite")
    b = again.next_batch(10)
    assert b is not None and (b.batch_id, len(b.samples)) == (first.batch_id, 5)
    again.ack(b)
    nxt = again.next_batch(10)
    assert nxt is not None and len(nxt.samples) == 5 and nxt.batch_id != first.batch_id


def test_age_bound_drops_exactly_the_old_and_counts_them(tmp_path: Path) -> None:
    sp = Spool(tmp_path / "s.sqlite", max_age=100.0)
    _fill(sp, 50, now=1000.0)  # t = 1000..1049
    sp.enforce(1120.0)  # cutoff 1020: t 1000..1019 go
    assert (sp.backlog(), sp.dropped()["age"]) == (30, 20)
    b = sp.next_batch(100)
    assert b is not None and b.samples[0].t == 1020.0


def _segment_sizes(tmp_path: Path, n: int) -> list[int]:
    """What each of ``_fill``'s appends adds to the byte count (a spool without a cap)."""
    sp, sizes = Spool(tmp_path / "sizes.sqlite"), []
    for i in range(n):
        before = sp.stored_bytes()
        sp.append([Sample(X, 1000.0 + i, float(i))], now=1000.0 + i)  # as _fill appends them
        sizes.append(sp.stored_bytes() - before)
    sp.close()
    return sizes


def test_byte_bound_drops_the_oldest_first(tmp_path: Path) -> None:
    sp = Spool(tmp_path / "s.sqlite", max_bytes=sum(_segment_sizes(tmp_path, 25)[15:]))
    _fill(sp, 25)
    assert (sp.backlog(), sp.dropped()) == (10, {"age": 0, "bytes": 15, "disk_full": 0, "damaged": 0})
    b = sp.next_batch(100)
    assert b is not None and [s.v for s in b.samples] == [float(i) for i in range(15, 25)]


def test_a_full_disk_drops_and_counts_and_the_spool_stays_sound(tmp_path: Path) -> None:
    # SQLite's own page cap stands in for a full disk: the write fails with SQLITE_FULL
    path = tmp_path / "s.sqlite"
    sp = Spool(path)
    _fill(sp, 3)
    sp._db.execute("PRAGMA max_page_count = 2")  # smaller than the file: every growth fails
    big = [Sample(Labels.of("x", n=str(i)), 5000.0, 1.0) for i in range(500)]
    assert sp.append(big, now=5000.0) == 0
    assert sp.dropped()["disk_full"] == 500
    assert sp.backlog() == 3
    sp.close()
    again = Spool(path)
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    b = again.next_batch(10)
    assert b is not None and [s.v for s in b.samples] == [0.0, 1.0, 2.0]
    again.close()


def test_segments_are_compressed(tmp_path: Path) -> None:
    # one round of 200 series, 20 rounds: a row a sample took 40 bytes before segments
    sp = Spool(tmp_path / "s.sqlite")
    for k in range(20):
        t = 1000.0 + 15 * k
        sp.append([Sample(Labels.of("m", n=str(i)), t, float(i * 1000 + k)) for i in range(200)], now=t)
    assert sp.backlog() == 4000 and sp.stored_bytes() / 4000 < 8
    b = sp.next_batch(10_000)
    assert b is not None and [s.v for s in b.samples[:3]] == [0.0, 1000.0, 2000.0] and len(b.samples) == 4000


def test_a_batch_ending_inside_a_segment_keeps_the_segments_tail(tmp_path: Path) -> None:
    sp = Spool(tmp_path / "s.sqlite")
    sp.append([Sample(X, 1000.0 + i, float(i)) for i in range(10)], now=1000.0)
    b = sp.next_batch(4)
    assert b is not None and (b.first, b.last) == (1, 4)
    sp.ack(b)
    assert sp.backlog() == 6
    sp.close()
    again = Spool(tmp_path / "s.sqlite")  # the tail is durable, numbered as before
    nxt = again.next_batch(100)
    assert nxt is not None and (nxt.first, nxt.last) == (5, 10) and [s.v for s in nxt.samples] == [
        float(i) for i in range(4, 10)]


def test_a_damaged_segment_is_set_aside_and_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "s.sqlite"
    sp = Spool(path)
    for k in range(3):
        sp.append([Sample(X, 1000.0 + 10 * k + i, float(10 * k + i)) for i in range(10)], now=1000.0)
    sp.close()
    with sqlite3.connect(path) as db:  # the middle segment's bytes flipped: its checksum fails
        body = db.execute("SELECT body FROM segments WHERE first = 11").fetchone()[0]
        db.execute("UPDATE segments SET body = ? WHERE first = 11", (body[:-6] + bytes(6),))
    again = Spool(path)
    with caplog.at_level(logging.WARNING):
        got = []
        while (b := again.next_batch(100)) is not None:
            got += [s.v for s in b.samples]
            again.ack(b)
    assert got == [float(i) for i in (*range(10), *range(20, 30))]
    assert again.dropped()["damaged"] == 10 and again.backlog() == 0
    assert len(list(tmp_path.glob("s.sqlite.damaged-*-11.seg"))) == 1
    assert sum("segment 11 is damaged" in r.getMessage() for r in caplog.records) == 1


def test_an_older_agents_spool_is_converted_and_its_batch_in_flight_resent(tmp_path: Path) -> None:
    # an agent before segments: a row a sample, a batch of rows 3..5 in flight
    path = tmp_path / "s.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE series (id INTEGER PRIMARY KEY, labels TEXT NOT NULL UNIQUE);
            CREATE TABLE samples (seq INTEGER PRIMARY KEY AUTOINCREMENT,
                series INTEGER NOT NULL, t REAL NOT NULL, v REAL NOT NULL);
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);""")
        db.execute("INSERT INTO series VALUES (1, ?)", (json.dumps(X.items_tuple),))
        db.executemany("INSERT INTO samples (seq, series, t, v) VALUES (?, 1, ?, ?)",
                       [(i, 1000.0 + i, float(i)) for i in range(3, 2600)])
        db.execute("INSERT INTO meta VALUES ('spool_id', 'abcdef012345')")
        db.execute("INSERT INTO meta VALUES ('inflight', '3-5|abcdef012345:00000000.3-5')")
    sp = Spool(path)
    assert sp.backlog() == 2597
    b = sp.next_batch(1000)
    assert b is not None and b.batch_id == "abcdef012345:00000000.3-5"
    assert [s.v for s in b.samples] == [3.0, 4.0, 5.0]
    sp.ack(b)
    got = []
    while (b := sp.next_batch(1000)) is not None:
        got += [s.v for s in b.samples]
        sp.ack(b)
    assert got == [float(i) for i in range(6, 2600)]
    sp.append([Sample(X, 9000.0, 1.0)], now=9000.0)
    b = sp.next_batch(10)
    assert b is not None and b.first == 2600  # numbered after the older rows
