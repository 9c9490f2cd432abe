"""The durable spool: order, resume under the same batch id, bounds by age and bytes, a full disk."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from inferwatch.edge import Spool
from inferwatch.edge._spool import ROW_BYTES
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


def test_byte_bound_drops_the_oldest_first(tmp_path: Path) -> None:
    sp = Spool(tmp_path / "s.sqlite", max_bytes=10 * ROW_BYTES)
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
