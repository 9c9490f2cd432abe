"""Issue 56: a storm's writes commit once per batch or tick, and nothing external starts before the commit.

The speed is for benchmarks/bench_storm.py; these check what the batching must keep: a
transaction inside another joins it (one commit, one rollback), work queued with
``after_commit`` runs only once the writes that owe it are on disk (never after a
rollback), and the shortcuts give the same bytes as the slow paths they replace.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from inferwatch._exceptions import InputError
from inferwatch.alerting import StateDB
from inferwatch.alerting._alertstore import alert_text, alert_to_json, labels_json
from inferwatch.alerting._delivery import CommittedExecutor, InlineExecutor
from inferwatch.model import Labels, alertmanager_fingerprint, alertmanager_fingerprints, loads_json
from inferwatch.rules import Alert
from inferwatch.server._guard import json_depth


def _rows(db: StateDB) -> list[tuple[object, ...]]:
    return db.query("SELECT key, value FROM meta ORDER BY key")


def test_a_transaction_inside_another_commits_with_it_and_rolls_back_with_it(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "a.sqlite")
    with db.transaction() as c:
        c.execute("INSERT INTO meta VALUES ('outer', '1')")
        with db.transaction() as inner:
            inner.execute("INSERT INTO meta VALUES ('inner', '2')")
        with closing(sqlite3.connect(tmp_path / "a.sqlite")) as other:  # not on disk yet
            assert other.execute("SELECT count(*) FROM meta").fetchall() == [(0,)]
    assert _rows(db) == [("inner", "2"), ("outer", "1")]
    with pytest.raises(RuntimeError), db.transaction() as c:
        with db.transaction() as inner:
            inner.execute("INSERT INTO meta VALUES ('lost', '3')")
        raise RuntimeError("the outer one fails")
    assert _rows(db) == [("inner", "2"), ("outer", "1")]  # the inner write went with the outer one


def test_after_commit_waits_for_the_outermost_commit_and_never_runs_after_a_rollback() -> None:
    db, ran = StateDB(), list[object]()
    db.after_commit(lambda: ran.append("none open"))
    with db.transaction() as c:
        with db.transaction():
            db.after_commit(lambda: ran.append(("committed", db.query("SELECT count(*) FROM meta")[0][0])))
            c.execute("INSERT INTO meta VALUES ('k', 'v')")
        assert ran == ["none open"]
    with pytest.raises(RuntimeError), db.transaction():
        db.after_commit(lambda: ran.append("rolled back"))
        raise RuntimeError("boom")
    assert ran == ["none open", ("committed", 1)]


def test_a_committed_executor_starts_a_job_only_after_the_commit() -> None:
    db, started = StateDB(), threading.Event()

    class Job:
        thread_name = "job"

        def run(self) -> None:
            started.set()

    ex = CommittedExecutor(InlineExecutor(), db)
    with db.transaction():
        ex.start(Job())
        assert not started.is_set()
    assert started.is_set()


def test_the_batched_fingerprints_equal_alertmanagers_one_by_one() -> None:
    rng = random.Random(56)
    sets = [Labels({f"k{j}": "".join(rng.choice("ab\xe9\u2713\x00:") for _ in range(rng.randrange(1, 30)))
                    for j in range(rng.randrange(1, 8))}).items_tuple for _ in range(300)]
    assert alertmanager_fingerprints(sets) == [alertmanager_fingerprint(s) for s in sets]
    assert alertmanager_fingerprints([(), *sets[:9]])[0] == "cbf29ce484222325"  # Alertmanager's empty set


def test_the_cached_alert_and_label_text_reads_back_as_the_json_it_replaces() -> None:
    labels = Labels({"b": 'quote " and \\', "a": "\u2713"})
    assert labels_json(labels) == json.dumps(dict(labels), sort_keys=True)
    for a in (Alert(labels, {"s": "x"}, 1.5, None), Alert(labels, {}, 2.0, 3.25, float("nan"), "http://g/?a=\"1\"")):
        assert json.loads(alert_text(a)) == json.loads(json.dumps(alert_to_json(a)))


@pytest.mark.parametrize(("body", "depth"), [
    (b'{"a": "[[[\\\\"}', 1),  # an escaped backslash ends the string: the brackets in it do not count
    (b'[["\\"[", "]"], [[]]]', 3),
    (b'"[["', 0),
    (b'[' * 40 + b']' * 40, 40),
])
def test_json_depth_skips_strings_with_escapes(body: bytes, depth: int) -> None:
    assert json_depth(body) == depth


@pytest.mark.parametrize("raw", [b'{"a": "\\u0000"}', b'["\\ud800"]',
                                 '["\\ud800"]'.encode("utf-8", "surrogatepass")])
def test_a_body_with_a_nul_or_a_lone_surrogate_is_still_refused(raw: bytes) -> None:
    with pytest.raises(InputError, match="not valid text"):
        loads_json(raw)
