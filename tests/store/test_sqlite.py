"""SQLite store: persistence across restarts and kill -9, the head, retention, bad files."""

from __future__ import annotations

import ctypes
import math
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from inferwatch import StoreError
from inferwatch.config import StorageConfig
from inferwatch.model import STALE_NAN, Labels, Sample, SimulatedClock
from inferwatch.store import MemoryStore, SQLiteStore, open_store, parse_selector, stale_mask

UP = Labels.of("up", job="a")


def _samples(n: int, t0: float = 0.0, step: float = 15.0) -> list[Sample]:
    return [Sample(UP, t0 + i * step, float(i)) for i in range(n)]


def test_data_survives_reopen_with_nan_kinds(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    st = SQLiteStore(path, clock=SimulatedClock(100.0))
    st.append([Sample(UP, 1.0, 1.5), Sample(UP, 2.0, math.nan), Sample(UP, 3.0, STALE_NAN)])
    st.close()
    again = SQLiteStore(path, clock=SimulatedClock(100.0))
    (s,) = again.select(parse_selector("up"), 0, 10)
    assert s.t.tolist() == [1.0, 2.0, 3.0]
    assert s.v[0] == 1.5 and math.isnan(s.v[1]) and stale_mask(s.v).tolist() == [False, False, True]
    # the order rule survives the restart: an older sample is still refused
    again.append([Sample(UP, 2.5, 9.0)])
    assert again.stats.out_of_order == 1
    again.close()


def test_old_ranges_come_from_disk_recent_from_the_head(tmp_path: Path) -> None:
    clock = SimulatedClock(10_000.0)
    st = SQLiteStore(tmp_path / "db.sqlite", clock=clock, head_window=600.0)
    st.append(_samples(400, t0=4_000.0))  # 4000 .. 9985
    clock.set(10_000.0)
    st.append([Sample(UP, 10_000.0, 1.0)])
    recent = st.select(parse_selector("up"), 9_500.0, 10_000.0)[0]
    old = st.select(parse_selector("up"), 4_000.0, 4_100.0)[0]
    full = st.select(parse_selector("up"), 0.0, 20_000.0)[0]
    assert recent.t[0] == 9_505.0 and recent.t[-1] == 10_000.0
    assert old.t.tolist() == [4_000.0 + 15 * i for i in range(7)]
    assert len(full) == 401
    st.close()


def test_reopen_reloads_the_head(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    clock = SimulatedClock(1_000.0)
    st = SQLiteStore(path, clock=clock)
    st.append(_samples(60, t0=100.0))
    st.close()
    again = SQLiteStore(path, clock=clock)
    got = again.select(parse_selector("up"), 500.0, 1_000.0)[0]
    assert got.t[0] == 505.0 and got.t[-1] == 100.0 + 59 * 15
    again.close()


def test_retention_by_age_on_the_clock(tmp_path: Path) -> None:
    clock = SimulatedClock(0.0)
    st = SQLiteStore(tmp_path / "db.sqlite", clock=clock, retention=300.0)
    st.append(_samples(40))  # 0 .. 585
    st.append([Sample(Labels.of("gone"), 10.0, 1.0)])
    clock.set(600.0)
    assert st.apply_retention() == 20 + 1
    assert st.select(parse_selector("up"), 0, 1e9)[0].t[0] == 300.0
    assert st.series(parse_selector('{__name__="gone"}')) == []
    st.close()
    reopened = SQLiteStore(tmp_path / "db.sqlite", clock=clock)
    assert [str(x) for x in reopened.series([])] == [str(UP)]
    reopened.close()


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "db.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"db\.sqlite"):
        SQLiteStore(bad)


def test_closed_store_raises_store_error(tmp_path: Path) -> None:
    st = SQLiteStore(tmp_path / "db.sqlite")
    st.close()
    st.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        st.select([], 0, 1)


def test_open_store_by_config(tmp_path: Path) -> None:
    mem = open_store(StorageConfig(type="memory"), tmp_path)
    assert isinstance(mem, MemoryStore)
    disk = open_store(StorageConfig(), tmp_path / "sub")
    assert isinstance(disk, SQLiteStore) and disk.path == tmp_path / "sub" / "tsdb.sqlite"
    assert disk.head_window == 3600.0  # Prometheus-like: the last hour in memory
    disk.close()
    short = open_store(StorageConfig.model_validate({"head_window": "10m"}), tmp_path / "short")
    assert isinstance(short, SQLiteStore) and short.head_window == 600.0
    short.close()


def test_file_is_wal_and_schema_keyed_by_series_and_time(tmp_path: Path) -> None:
    st = SQLiteStore(tmp_path / "db.sqlite")
    st.close()
    conn = sqlite3.connect(tmp_path / "db.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    plan = conn.execute(
        "EXPLAIN QUERY PLAN SELECT t FROM chunks WHERE series_id = 1 AND t_max >= 0 AND t_min <= 10"
    ).fetchall()
    assert "PRIMARY KEY" in str(plan) or "INDEX" in str(plan)
    conn.close()


_WRITER = textwrap.dedent(
    """
    import sys
    from inferwatch.model import Labels, Sample, SimulatedClock
    from inferwatch.store import SQLiteStore
    st = SQLiteStore(sys.argv[1], clock=SimulatedClock(0.0), batch_size=500)
    for i in range(100_000):
        st.append([Sample(Labels.of("m", s=str(k)), float(i), float(i)) for k in range(200)])
        print(i, flush=True)
    """
)


def test_kill_9_leaves_a_sound_file_with_committed_data(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    last = -1
    try:
        for _ in range(200):  # bounded: read committed batch numbers until a few have gone through
            ready, _, _ = select.select([proc.stdout], [], [], 30.0)
            assert ready, "writer produced nothing for 30 s"
            last = int(proc.stdout.readline())
            if last >= 20:
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
    assert last >= 20
    st = SQLiteStore(path, clock=SimulatedClock(0.0))
    assert st.integrity_check() == "ok"
    got = st.select(parse_selector('m{s="7"}'), 0, 1e9)[0]
    assert got.t[0] == 0.0 and got.t[-1] >= last  # every reported batch is there
    assert got.t.tolist() == [float(i) for i in range(len(got))]  # and nothing torn
    assert len(st.series([])) == 200
    st.close()


def test_sqlite_page_cache_stays_bounded_as_the_file_grows(tmp_path: Path) -> None:
    # The soak's RSS grew 2.2 MiB a minute while SQLite's page cache filled to its 64 MiB cap.
    import _sqlite3  # the SQLite that the store's connections use

    try:
        used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
    except (OSError, AttributeError):
        pytest.skip("this Python's SQLite does not export sqlite3_memory_used")
    used.restype = ctypes.c_int64
    clock = SimulatedClock(0.0)
    st = SQLiteStore(tmp_path / "db.sqlite", clock=clock, head_window=0.0, compact_every=1.0)
    series = [Labels.of("g", key=f"k{i}") for i in range(1000)]
    n = 100
    base = used()
    for r in range(6):  # ~30 MiB of WAL records and chunks through the file, compacted every append
        clock.advance(n)
        t = np.tile(r * n + np.arange(n, dtype=float), len(series))
        st.append_columns([ls for ls in series for _ in range(n)], t, np.ones(len(series) * n))
    grown = used() - base
    assert st.stats.appended == 6 * n * len(series)
    assert grown < 16 * 2**20, f"SQLite holds {grown / 2**20:.1f} MiB more after writing"
    st.close()


def test_a_batch_of_new_series_with_awkward_label_text_survives_reopen(tmp_path: Path) -> None:
    # the series rows of one append are serialised together: text that looks like the JSON
    # between two label sets, quotes, backslashes, newlines and non-ASCII must each stay whole
    values = ["]],[[", '"quoted"', "back\\slash", "new\nline", "é ü 中", "plain", "]]", "[["]
    sets = [Labels.of("odd_total", v=v, k=str(i)) for i, v in enumerate(values)] + [
        Labels.of("many_total", instance=f"host-{i}") for i in range(500)]
    path = tmp_path / "db.sqlite"
    st = SQLiteStore(path, clock=SimulatedClock(100.0))
    st.append([Sample(ls, 50.0, float(i)) for i, ls in enumerate(sets)])
    assert st.stats.series_created == len(sets)
    st.close()
    again = SQLiteStore(path, clock=SimulatedClock(100.0))
    assert sorted(again.series([])) == sorted(sets)
    (odd,) = again.select(parse_selector('odd_total{v="]],[["}'), 0, 100)
    assert odd.labels == sets[0] and odd.v.tolist() == [0.0]
    assert len(again.select(parse_selector("many_total"), 0, 100)) == 500
    again.append([Sample(sets[3], 60.0, 1.0)])  # a known series after the restart: no new row
    assert again.stats.series_created == 0
    again.close()


def test_new_series_are_logged_once_per_append_and_indexed_by_compaction(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    st = SQLiteStore(path, clock=SimulatedClock(100.0))
    st.append([Sample(Labels.of("m", k=str(i)), 50.0, 1.0) for i in range(300)])
    st.append([Sample(Labels.of("m", k=str(i)), 60.0, 1.0) for i in range(310)])  # 10 more series
    conn = sqlite3.connect(path)
    # before compaction: one log row per append that created series, no row per series yet
    assert conn.execute("SELECT count(*) FROM wal_series").fetchone()[0] == 2
    assert conn.execute("SELECT count(*) FROM series").fetchone()[0] == 0
    st.compact()
    assert conn.execute("SELECT count(*) FROM wal_series").fetchone()[0] == 0
    rows = dict(conn.execute("SELECT labels, name FROM series").fetchall())
    assert len(rows) == 310 and rows['[["__name__","m"],["k","7"]]'] == "m"
    conn.close()
    st.close()
    assert len(SQLiteStore(path).series([])) == 310


def test_a_schema_1_file_opens_and_takes_new_series(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    st = SQLiteStore(path, clock=SimulatedClock(100.0))
    st.append([Sample(UP, 50.0, 1.0)])
    st.close()
    conn = sqlite3.connect(path)  # what inferwatch before the series log left
    conn.executescript("DROP TABLE wal_series; PRAGMA user_version = 1;")
    conn.close()
    again = SQLiteStore(path, clock=SimulatedClock(100.0))
    again.append([Sample(UP, 60.0, 2.0), Sample(Labels.of("up", job="b"), 60.0, 1.0)])
    again.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    conn.close()
    last = SQLiteStore(path, clock=SimulatedClock(100.0))
    assert [str(x) for x in last.series([])] == ['up{job="a"}', 'up{job="b"}']
    assert last.select(parse_selector('up{job="a"}'), 0, 100)[0].t.tolist() == [50.0, 60.0]
    last.close()


def test_a_schema_2_file_with_series_still_in_its_log_opens(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    SQLiteStore(path, clock=SimulatedClock(100.0)).close()
    conn = sqlite3.connect(path)  # what a schema-2 inferwatch killed before compacting left
    conn.executescript("""
        DROP TABLE wal_series;
        CREATE TABLE wal_series (seq INTEGER PRIMARY KEY, ids BLOB NOT NULL, labels TEXT NOT NULL,
                                 names TEXT NOT NULL);
        PRAGMA user_version = 2;""")
    conn.execute("INSERT INTO wal_series (ids, labels, names) VALUES (?, ?, ?)",
                 (np.array([7], dtype="<i8").tobytes(), '[[["__name__","up"],["job","old"]]]', '["up"]'))
    conn.commit()
    conn.close()
    st = SQLiteStore(path, clock=SimulatedClock(100.0))
    st.append([Sample(Labels.of("up", job="new"), 60.0, 1.0)])
    assert [str(x) for x in st.series([])] == ['up{job="new"}', 'up{job="old"}']
    st.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT id, labels, name FROM series WHERE labels LIKE '%old%'").fetchall() == [
        (7, '[["__name__","up"],["job","old"]]', "up")]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    conn.close()


def test_a_schema_3_file_with_packed_series_in_its_log_opens(tmp_path: Path) -> None:
    from inferwatch.store._new_series import pack_sets

    path = tmp_path / "db.sqlite"
    SQLiteStore(path, clock=SimulatedClock(100.0)).close()
    conn = sqlite3.connect(path)  # what a schema-3 inferwatch killed before compacting left
    conn.executescript("""
        DROP TABLE wal_series;
        CREATE TABLE wal_series (seq INTEGER PRIMARY KEY, ids BLOB NOT NULL, labels TEXT NOT NULL,
                                 names TEXT NOT NULL, sizes BLOB);
        PRAGMA user_version = 3;""")
    old = [Labels.of("up", job="old"), Labels.of("up", job="older", x="1")]
    packed = pack_sets([ls.items_tuple for ls in old])
    assert packed is not None
    conn.execute("INSERT INTO wal_series (ids, labels, names, sizes) VALUES (?, ?, '', ?)",
                 (np.array([7, 9], dtype="<i8").tobytes(), packed[1], packed[0]))
    conn.commit()
    conn.close()
    st = SQLiteStore(path, clock=SimulatedClock(100.0))
    new = Labels.of("up", job="new")
    st.append([Sample(new, 60.0, 1.0)])
    assert st.series([]) == sorted([*old, new])
    assert st._index.get(new) == 10  # after the log's last id
    st.close()
    again = SQLiteStore(path)
    assert again.series([]) == sorted([*old, new])
    again.close()


@pytest.mark.parametrize("value", ["plain", "holds a \0 NUL", "]],[[ and \"quotes\""])
def test_new_series_survive_a_crash_before_compaction_whatever_their_values(
        tmp_path: Path, value: str) -> None:
    path = tmp_path / "db.sqlite"
    crashed = SQLiteStore(path, clock=SimulatedClock(100.0))  # never closed: its series stay in the log
    labels = [Labels.of("up", job=value, instance=f"h{i}") for i in range(3)]
    crashed.append([Sample(ls, 50.0, float(i)) for i, ls in enumerate(labels)])
    assert crashed._conn is not None
    assert crashed._conn.execute("SELECT count(*) FROM wal_series").fetchone()[0] == 1
    again = SQLiteStore(path, clock=SimulatedClock(100.0))
    assert again.series([]) == sorted(labels)
    got = again.select(parse_selector("up"), 0, 100)
    assert [(s.labels, s.v.tolist()) for s in got] == [(ls, [float(i)]) for i, ls in enumerate(labels)]
    again.close()
    crashed.close()


def test_retention_while_compaction_cannot_run_forgets_logged_series(tmp_path: Path) -> None:
    # on a full disk compaction fails and retention goes on: a series it deletes must not come back
    # from the log when compaction runs again (nor block it when its label set is created anew)
    from inferwatch.store import _disk
    from inferwatch.store._new_series import NewSeries

    conn = _disk.connect(tmp_path / "db.sqlite")
    a, b = Labels.of("m", k="a"), Labels.of("m", k="b")
    sids = np.array([1, 2], dtype=np.int64)
    _disk.write(conn, NewSeries([a, b], 1), sids, np.array([10.0, 99.0]), np.array([1.0, 2.0]), 100)
    _disk.delete_before(conn, 50.0, [1])
    _disk.write(conn, NewSeries([a], 3), np.array([3]), np.array([98.0]), np.array([3.0]), 100)
    _disk.compact(conn)
    assert dict(_disk.load_series(conn)) == {2: b, 3: a}
    conn.close()


def _fill_wal(st: SQLiteStore, rounds: int, first: int) -> None:
    labels = [Labels.of("m", i=str(i)) for i in range(1000)]
    for r in range(first, first + rounds):
        st.append_columns(labels, np.full(1000, 50.0 + r / 100), np.ones(1000))


def test_background_checkpoints_keep_the_wal_small_and_out_of_appends(tmp_path: Path) -> None:
    plain = SQLiteStore(tmp_path / "plain.sqlite", clock=SimulatedClock(100.0))
    bg = SQLiteStore(tmp_path / "bg.sqlite", clock=SimulatedClock(100.0), background_checkpoints=True)
    assert bg.checkpointer is not None and bg._conn is not None
    assert bg._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # appends never checkpoint
    bg.checkpointer.every_bytes = 200_000
    for k in range(1, 9):  # 8 x 12 appends: ~3.3 MB of WAL, under SQLite's own 4 MB checkpoint
        _fill_wal(plain, 12, 12 * k)
        _fill_wal(bg, 12, 12 * k)
        assert bg.checkpointer.wait_for(k, timeout=60), f"checkpoint {k} never ran"  # woken by appends
        # one begun after the round's last append: the WAL is then all copied back and the next
        # append restarts it (a checkpoint that ran during the appends may have missed their end)
        assert bg.checkpointer.sync(timeout=60), f"no checkpoint after round {k}"
    plain_wal = (tmp_path / "plain.sqlite-wal").stat().st_size
    bg_wal = (tmp_path / "bg.sqlite-wal").stat().st_size
    assert bg_wal < plain_wal / 2, (bg_wal, plain_wal)  # the WAL restarts after each checkpoint
    checkpointer = bg.checkpointer
    assert checkpointer.running
    bg.close()
    plain.close()
    assert not checkpointer.running
    again = SQLiteStore(tmp_path / "bg.sqlite", clock=SimulatedClock(100.0))
    assert len(again.series([])) == 1000
    assert again.select(parse_selector('m{i="7"}'), 0, 100)[0].t.shape[0] == 96
    again.close()


def test_a_wide_instant_read_takes_the_newest_samples_and_agrees_with_the_head(tmp_path: Path) -> None:
    # Over 64 series, select_latest reads each newest sample from the store's columns; series
    # with a sample after the window's end still come from the head (their predecessor), and a
    # series whose newest sample is older than the window is left out, as the head's read does.
    clock = SimulatedClock(1000.0)
    st = SQLiteStore(tmp_path / "tsdb.sqlite", clock=clock)
    labels = [Labels.of("g", key=str(k)) for k in range(100)]
    for t in (900.0, 950.0):
        st.append_columns(labels, np.full(100, t), np.arange(100) + t)
    st.append_columns(labels[:10], np.full(10, 990.0), np.full(10, STALE_NAN))  # newest: markers
    st.append_columns(labels[10:20], np.full(10, 1000.0), np.full(10, 7.0))  # after the end below
    st.append_columns([Labels.of("g", key="old")], [100.0], [1.0])
    got = st.select_latest(parse_selector("g"), 700.0, 995.0)
    want = MemoryStore()
    want.append([Sample(s.labels, float(t), float(v)) for s in st.select(parse_selector("g"), 0, 1e4)
                 for t, v in zip(s.t, s.v, strict=True)])
    expect = want.select_latest(parse_selector("g"), 700.0, 995.0)
    assert len(got) == len(expect) == 100
    for a, b in zip(got, expect, strict=True):
        assert a.labels == b.labels and a.t.tolist() == b.t.tolist()
        assert a.v.tobytes() == b.v.tobytes()  # the staleness marker's bits too
    by = {s.labels: s for s in got}
    assert stale_mask(by[labels[0]].v).all() and by[labels[15]].t.tolist() == [950.0]
    assert by[labels[50]].t.tolist() == [950.0] and by[labels[50]].v.tolist() == [1000.0]
    st.close()
