"""Issue 56 row 3: series created as one batch per append (one log row, ids in order of first sight)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.store import LimitExceeded, SeriesLimits, SQLiteStore, parse_selector

T0 = 1_700_000_000.0


def _log_rows(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM wal_series").fetchone()[0])
    finally:
        conn.close()


def test_a_batch_of_known_new_and_repeated_series_creates_each_new_one_once(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    st = SQLiteStore(path, clock=SimulatedClock(T0))
    a, b = Labels.of("m", k="a"), Labels.of("m", k="b")
    st.append([Sample(a, T0, 1.0), Sample(b, T0, 1.0)])
    c, d = Labels.of("m", k="c"), Labels.of("m", k="d")
    # a known series in a new object, a new one twice (two objects, two times), another new one
    st.append([Sample(c, T0, 1.0), Sample(Labels.of("m", k="a"), T0 + 1, 2.0),
               Sample(Labels.of("m", k="c"), T0 + 1, 3.0), Sample(d, T0, 4.0), Sample(b, T0 + 1, 5.0)])
    assert st.stats.series_created == 4 and st.stats.appended == 7
    assert _log_rows(path) == 2  # one row per append that created series, however many
    got = {s.labels["k"]: s.v.tolist() for s in st.select(parse_selector("m"), T0, T0 + 1)}
    assert got == {"a": [1.0, 2.0], "b": [1.0, 5.0], "c": [1.0, 3.0], "d": [4.0]}
    st.close()


def test_a_batch_over_a_series_limit_writes_nothing_and_names_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    st = SQLiteStore(path, clock=SimulatedClock(T0))
    st.limits = SeriesLimits(max_series=10, max_series_per_metric=2)
    st.append([Sample(Labels.of("m", i="0"), T0, 1.0), Sample(Labels.of("m", i="1"), T0, 1.0)])
    # "A" sorts before "__name__": the metric name is not the first pair, the check must still find it
    late = [Sample(Labels.of("ok"), T0, 1.0), Sample(Labels.of("m", A="1"), T0, 1.0)]
    with pytest.raises(LimitExceeded) as exc:
        st.append(late)
    assert str(exc.value) == ("max_series_per_metric limit exceeded (metric: m, 2 series stored, "
                              "1 new in this batch, limit 2)")
    assert st.stats.discarded == {"max_series_per_metric": 2} and st.series_count() == 2
    assert _log_rows(path) == 1
    st.append([Sample(Labels.of("m", i="0"), T0 + 1, 2.0)])  # a known series is never refused
    with pytest.raises(LimitExceeded, match=r"^max_series limit exceeded: 2 series stored, 9 new"):
        st.append([Sample(Labels.of(f"x{i}"), T0, 1.0) for i in range(9)])
    st.close()


def test_a_restart_finds_every_series_created_in_batches(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    crashed = SQLiteStore(path, clock=SimulatedClock(T0))  # never closed: nothing compacted
    first = [Labels.of("m", k=str(i), job="j") for i in range(300)]
    crashed.append([Sample(ls, T0, float(i)) for i, ls in enumerate(first)])
    second = [*first[:50], *(Labels.of("n", k=str(i)) for i in range(200)), Labels.of("n", k="0")]
    crashed.append([Sample(ls, T0 + 15 + (i == len(second) - 1), 1.0) for i, ls in enumerate(second)])
    again = SQLiteStore(path, clock=SimulatedClock(T0 + 30))
    assert again.series([]) == sorted({*first, *second}, key=lambda ls: ls.items_tuple)
    assert again.series_count() == 500
    n0 = again.select(parse_selector('n{k="0"}'), T0, T0 + 30)[0]
    assert n0.t.tolist() == [T0 + 15, T0 + 16]
    again.append([Sample(Labels.of("o"), T0 + 30, 1.0)])  # a new id after the restart's last one
    assert again.series_count() == 501 and again.stats.series_created == 1
    again.close()
    crashed.close()
    last = SQLiteStore(path)
    assert last.series_count() == 501
    last.close()
