"""Issue 59 #2 and #4 on a real ``inferwatch serve``: damage contained and said; a backup restored.

A damaged page in the store's chunks and one in the alerting state's history (written by
the test over the files of a stopped server): ``serve`` starts, serves the readable series,
keeps the silences, fires DataFileDamaged naming each file, and keeps the damaged files.
A backup taken while the server runs, restored into a new data directory, brings back the
series and the silence.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.store import SQLiteStore

from ._proc import serve, wait_query

pytestmark = pytest.mark.slow
TOKEN = "damage-t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOUND_S = 60.0
SERIES = 300


def _config(data: Path) -> str:
    return f"server: {{data_dir: '{data}', api_token: {TOKEN}, evaluation_interval: 1s}}\n"


def _seed_store(data: Path) -> None:
    """300 series of 40 samples each, compacted into chunks (now-ish, inside the retention)."""
    now = time.time()
    st = SQLiteStore(data / "tsdb.sqlite", clock=SimulatedClock(now))
    for t in range(40):
        st.append([Sample(Labels.of("seeded", i=str(k), pad="x" * 60), now - 600 + t, float(t))
                   for k in range(SERIES)])
    st.close()


def _silence(client: httpx.Client) -> str:
    now = datetime.now(UTC)
    body = {"matchers": [{"name": "alertname", "value": "Quiet", "isRegex": False, "isEqual": True}],
            "startsAt": now.isoformat(), "endsAt": (now + timedelta(days=1)).isoformat(),
            "createdBy": "ops", "comment": "kept across damage and restore"}
    r = client.post("/api/v2/silences", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    return str(r.json()["silenceID"])


def _history(client: httpx.Client) -> None:
    """Alerts in and out, so the alerting state's history table spans several pages."""
    alerts = [{"status": "firing", "labels": {"alertname": f"Noise{k}", "instance": "i", "pad": "y" * 200}}
              for k in range(200)]
    r = client.post("/api/v1/alertmanager", json={"version": "4", "alerts": alerts}, headers=AUTH)
    assert r.status_code == 200, r.text


def _damage(path: Path, table: str) -> None:
    with sqlite3.connect(path) as db:
        pages = [p for (p,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,))]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    assert pages, table
    with path.open("r+b") as f:
        f.seek((pages[len(pages) // 2] - 1) * size)
        f.write(bytes([0x5A]) * size)


def _firing(client: httpx.Client, name: str) -> list[dict[str, object]]:
    end = time.monotonic() + BOUND_S
    while time.monotonic() < end:
        alerts = client.get("/api/v1/alerts").json()["data"]["alerts"]
        got = [a for a in alerts if a["labels"]["alertname"] == name and a["state"] == "firing"]
        if got:
            return got
        time.sleep(0.2)  # polling a real server's state, bounded by BOUND_S
    raise AssertionError(f"{name} not firing within {BOUND_S:g} s")


def _store_cli(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    return subprocess.run([sys.executable, "-m", "inferwatch", "store", *args, "--config", str(config)],
                          capture_output=True, text=True, env=env, timeout=BOUND_S, check=False)


def test_damaged_store_and_alerting_state_are_contained_and_said(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _seed_store(data)
    with serve(_config(data), tmp_path) as first, httpx.Client(base_url=first.url, timeout=BOUND_S) as c:
        silence = _silence(c)
        _history(c)
        wait_query(c, "count(last_over_time(seeded[1h]))")
    _damage(data / "tsdb.sqlite", "chunks")
    _damage(data / "alerting.sqlite", "history")
    checked = _store_cli("check", config=tmp_path / "inferwatch.yml")
    assert checked.returncode == 1, checked.stdout
    assert "tsdb.sqlite: damaged" in checked.stdout and "alerting.sqlite: damaged" in checked.stdout

    with serve(_config(data), tmp_path) as second, httpx.Client(base_url=second.url, timeout=BOUND_S) as c:
        (count,) = wait_query(c, "count(last_over_time(seeded[1h]))")
        readable = int(count["value"][1])  # type: ignore[index]
        assert SERIES // 2 <= readable <= SERIES  # what is readable is served
        silences = c.get("/api/v2/silences").json()
        assert [s["id"] for s in silences] == [silence]  # the alerting state kept its silences
        damaged = {str(a["labels"]["file"]): a for a in _firing(c, "DataFileDamaged")}  # type: ignore[index]
        assert set(damaged) == {"tsdb.sqlite", "alerting.sqlite"}, damaged
        assert damaged["tsdb.sqlite"]["labels"]["tier"] == "P1"  # type: ignore[index]
    err = "".join(second.lines)
    print(f"{readable} of {SERIES} series readable after one damaged page of chunks")
    assert "tsdb.sqlite is damaged" in err and "alerting.sqlite is damaged" in err, err
    assert "series lost samples" in err and 'seeded{i="' in err, err  # the lost series, named
    copies = sorted(p.name.split(".damaged-")[0] for p in data.glob("*.damaged-*")
                    if not p.name.endswith(("-wal", "-shm")))
    assert copies == ["alerting.sqlite", "tsdb.sqlite"]  # never deleted
    assert _store_cli("check", config=tmp_path / "inferwatch.yml").returncode == 0


def test_a_backup_taken_while_serving_restores_into_a_new_server(tmp_path: Path) -> None:
    data, copy = tmp_path / "data", tmp_path / "backup"
    data.mkdir()
    _seed_store(data)
    with serve(_config(data), tmp_path) as running, httpx.Client(base_url=running.url, timeout=BOUND_S) as c:
        silence = _silence(c)
        wait_query(c, "count(last_over_time(seeded[1h]))")
        done = _store_cli("backup", str(copy), config=tmp_path / "inferwatch.yml")  # while it runs
        assert done.returncode == 0, done.stderr
        assert "tsdb.sqlite:" in done.stdout and "alerting.sqlite:" in done.stdout, done.stdout
    assert not [p for p in copy.iterdir() if p.name.endswith(("-wal", "-shm")) or p.name == "LOCK"]
    again = _store_cli("backup", str(copy), config=tmp_path / "inferwatch.yml")
    assert again.returncode == 2 and "must be new or empty" in again.stderr  # nothing overwritten

    restored = tmp_path / "restored"
    restored.mkdir()
    with serve(_config(copy), restored) as new, httpx.Client(base_url=new.url, timeout=BOUND_S) as c:
        (count,) = wait_query(c, "count(last_over_time(seeded[1h]))")
        assert count["value"][1] == str(SERIES)  # type: ignore[index]
        assert [s["id"] for s in c.get("/api/v2/silences").json()] == [silence]


def test_store_repair_for_an_operator_and_never_under_a_running_server(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _seed_store(data)
    cfg = tmp_path / "inferwatch.yml"
    _damage(data / "tsdb.sqlite", "chunks")
    (tmp_path / "run").mkdir()
    with serve(_config(data), tmp_path / "run") as running:
        assert running.url
        refused = _store_cli("repair", config=tmp_path / "run" / "inferwatch.yml")
        assert refused.returncode == 1 and "in use by another inferwatch server" in refused.stderr, refused
    cfg.write_text(_config(data))
    (data / "tsdb.sqlite").unlink()  # the server above repaired it at start: damage it again, stopped
    _seed_store(data)
    _damage(data / "tsdb.sqlite", "chunks")
    done = _store_cli("repair", config=cfg)
    assert done.returncode == 0, done.stderr
    assert "tsdb.sqlite is damaged" in done.stdout and "series lost samples" in done.stdout, done.stdout
    assert _store_cli("check", config=cfg).returncode == 0
