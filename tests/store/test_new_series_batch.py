"""Issue 56 row 3: series created as one batch per append (one log row, ids in order of first sight)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from inferwatch._exceptions import InputError
from inferwatch.model import Labels, Matcher, MatchOp, Sample, SimulatedClock
from inferwatch.store import LimitExceeded, SeriesLimits, SQLiteStore, parse_selector
from inferwatch.store._accept import each_once
from inferwatch.store._index import SeriesIndex
from inferwatch.store._new_series import NewSeries

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


def _brute(sets: dict[int, Labels], matchers: list[Matcher]) -> list[int]:
    return sorted(sid for sid, ls in sets.items() if all(m.matches_labels(ls) for m in matchers))


def test_postings_of_a_wide_batch_match_as_a_set_would_before_and_after_removals() -> None:
    # a wide batch's ids wait as arrays until a read needs them: every read must see them all
    index = SeriesIndex()
    sets: dict[int, Labels] = {}
    first = [Labels.of("m", code=str(200 + i % 3), route=f"/r{i % 7}", i=str(i), job="j") for i in range(300)]
    index.add_batch(NewSeries(first, 1))
    sets.update(enumerate(first, 1))
    index.add_many({Labels.of("m", code="200", route="/x"): 301})  # one series: straight into the sets
    sets[301] = Labels.of("m", code="200", route="/x")
    second = [Labels.of("m", code="200", route=f"/s{i}", job="j") for i in range(100)]
    index.add_batch(NewSeries(second, 302))
    sets.update(enumerate(second, 302))
    queries = [[Matcher("code", MatchOp.EQ, "200")], [Matcher("route", MatchOp.RE, "/r[12]|/s1.")],
               [Matcher("__name__", MatchOp.EQ, "m"), Matcher("code", MatchOp.NE, "201")],
               [Matcher("job", MatchOp.EQ, "j"), Matcher("route", MatchOp.EQ, "/x")], []]
    assert index.metric_series("m") == 401 and index.label_values("code") == ["200", "201", "202"]
    for q in queries:
        assert sorted(index.match(q)) == _brute(sets, q)
    for sid in [*range(1, 300, 3), 301, 305]:  # every code="200" of the first batch, and two more
        index.remove(sid)
        del sets[sid]
    assert index.metric_series("m") == len(sets) and index.get(first[0]) is None
    for q in queries:
        assert sorted(index.match(q)) == _brute(sets, q)
    assert index.label_values("route")[:2] == ["/r0", "/r1"] and "/x" not in index.label_values("route")


def test_a_pair_in_more_wide_batches_than_it_keeps_apart_matches_every_id() -> None:
    # each batch leaves a pair's ids as a view of the batch's array; past 16 they are joined into one
    index = SeriesIndex()
    sets: dict[int, Labels] = {}
    for b in range(40):
        batch = [Labels.of("m", b=str(b), i=str(i), job="j" if i % 2 else "k") for i in range(70)]
        index.add_batch(NewSeries(batch, 1 + 70 * b))
        sets.update(enumerate(batch, 1 + 70 * b))
    for q in ([Matcher("job", MatchOp.EQ, "j")], [Matcher("b", MatchOp.EQ, "39")],
              [Matcher("i", MatchOp.EQ, "3")]):
        assert sorted(index.match(q)) == _brute(sets, q)
    assert index.metric_series("m") == 2800 and index.label_values("job") == ["j", "k"]


@pytest.mark.parametrize(("sids", "below", "once"), [
    ([5, 900, 3], 10**6, True),  # narrow (a sort): no repeat
    ([5, 900, 5], 10**6, False),  # narrow: a repeat
    ([900, 5, 7, 900], 10**6, False),  # narrow: a repeat far apart
    ([], 10**6, True), ([7], 10**6, True),
    ([1, 2, 3], 4, True), ([1, 2, 1], 4, False),  # wide (a count per id)
])
def test_each_once_finds_a_repeated_id_in_narrow_and_wide_batches(sids: list[int], below: int,
                                                                  once: bool) -> None:
    assert each_once(np.array(sids, dtype=np.int64), below) is once


def test_a_wide_batch_with_a_label_over_a_length_limit_is_refused_naming_it(tmp_path: Path) -> None:
    st = SQLiteStore(tmp_path / "t.db", clock=SimulatedClock(T0))
    st.limits = SeriesLimits(label_value_length_limit=10)
    batch = [Labels.of("m", k=str(i)) for i in range(200)] + [Labels.of("m", k="x" * 11)]
    with pytest.raises(LimitExceeded, match=r"^label_value_length_limit exceeded \(metric: m, label name: k, "
                                            r"value: 'xxxxxxxxxxx'\.\.\., length: 11, limit: 10\)"):
        st.append_columns(batch, [T0] * len(batch), [1.0] * len(batch))
    assert st.series_count() == 0 and st.stats.discarded == {"label_value_length_limit": 201}
    st.close()


def test_names_first_seen_in_a_wide_batch_are_checked_and_a_bad_one_named(tmp_path: Path) -> None:
    st = SQLiteStore(tmp_path / "t.db", clock=SimulatedClock(T0))
    fresh = [Labels({"__name__": "first_seen_metric_56", "first_seen_label_56": str(i)}) for i in range(100)]
    st.append_columns(fresh, [T0] * 100, [1.0] * 100)
    bad = [Labels({"__name__": "m56", "ok": str(i)}) for i in range(100)]
    bad.insert(70, Labels({"__name__": "m56", "bad-name": "1"}))
    with pytest.raises(InputError, match=r"invalid label name 'bad-name' in series m56\{bad-name=\"1\"\}"):
        st.append_columns(bad, [T0] * 101, [1.0] * 101)
    assert st.series_count() == 100
    st.close()


def test_fresh_labels_from_a_decoder_create_what_a_plain_list_creates(tmp_path: Path) -> None:
    # the decoder's numbering (FreshLabels) and the store's own give the same series, log and postings;
    # a set the store already knows (a new object of it) keeps its id, the rest are created
    from inferwatch.edge import encode_write_request, snappy_decompress
    from inferwatch.formats.columnar import WriteRequestReader
    from inferwatch.formats.columnar._wire import Columns
    from inferwatch.model import FreshLabels

    def body(first: int, n: int) -> bytes:
        return snappy_decompress(encode_write_request(
            Sample(Labels.of("m", code="200", instance=f"h{k % 7}", route=f"/r{k // 7}"), T0, float(k))
            for k in range(first, first + n)))

    stores = {kind: SQLiteStore(tmp_path / f"{kind}.db", clock=SimulatedClock(T0))
              for kind in ("fresh", "plain")}
    for first, n in ((0, 3), (0, 1500), (1500, 700)):
        cols: Columns = WriteRequestReader().read(body(first, n))
        assert isinstance(cols.labels, FreshLabels)
        stores["fresh"].append_columns(cols.labels, cols.t, cols.v)
        stores["plain"].append_columns(list(cols.labels), cols.t, cols.v)
    for path in (tmp_path / "fresh.db", tmp_path / "plain.db"):
        assert _log_rows(path) == 3
    for st in stores.values():
        assert st.stats.series_created == 2200
        st.close()
    reopened = {kind: SQLiteStore(tmp_path / f"{kind}.db", clock=SimulatedClock(T0)) for kind in stores}
    for sel in ("m", 'm{instance="h3"}', 'm{route="/r5"}', 'm{route=~"/r1.*", instance!="h0"}'):
        got = [{str(s.labels): s.v.tolist() for s in st.select(parse_selector(sel), T0, T0)}
               for st in reopened.values()]
        assert got[0] == got[1] and got[0]
    for st in reopened.values():
        st.close()


@pytest.mark.parametrize("odd", [
    Labels.of("1bad_metric", k="x"),  # an invalid metric name among valid ones
    Labels({"k": "no metric name"}),  # no metric name: a set whose first pair is another label
    Labels.of("m", **{"bad-name": "x"}),  # an invalid label name
    Labels.of("m", k="fine"),  # nothing wrong
])
def test_new_labels_checked_from_the_first_pairs_answer_as_one_check_per_set(odd: Labels) -> None:
    from inferwatch.store._validate import check_labels, check_new_labels

    sets = [Labels.of(f"m{k % 3}", k=str(k)) for k in range(2000)] + [odd]
    new = NewSeries(sets, 1)

    def outcome(check: object, *args: object) -> str:
        try:
            check(*args)  # type: ignore[operator]
        except InputError as exc:
            return str(exc)
        return "ok"

    alone = next((e for e in (outcome(check_labels, ls) for ls in sets) if e != "ok"), "ok")
    assert outcome(check_new_labels, sets, new.pairs, new.first_pairs()) == alone
    assert outcome(check_new_labels, sets) == alone
