"""`kill -9` of a real agent process mid-upload, 20 times: 0 lost, 0 duplicated on a real `inferwatch serve`.

20 kills take about 90 s on a loaded 2-core machine; ``EDGE_KILL9_COUNT=5`` runs fewer
locally (CI runs the 20 the issue asks for).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
from pathlib import Path

import httpx
import pytest

from .helpers import agent_file, read_store, serve, start_agent

pytestmark = pytest.mark.slow
KILLS = int(os.environ.get("EDGE_KILL9_COUNT", "20"))


def _spooled(spool: Path) -> set[float]:
    """The app_seq values waiting in the spool file (read between runs)."""
    db = sqlite3.connect(spool)
    try:
        ids = [i for i, labels in db.execute("SELECT id, labels FROM series") if '"app_seq"' in labels]
        rows = db.execute(f"SELECT v FROM samples WHERE series IN ({','.join(map(str, ids))})") if ids else []
        return {v for (v,) in rows}
    finally:
        db.close()


def test_kill_9_mid_upload_loses_and_duplicates_nothing(tmp_path: Path, app: str) -> None:
    # rule: whatever the spool committed reaches the server exactly once, whenever the agent dies
    rng = random.Random(18)
    with serve(tmp_path) as (url, _):
        cfg = agent_file(tmp_path, url, app)
        waiting: set[float] = set()
        for _ in range(KILLS + 1):
            proc, lines = start_agent(cfg)
            try:
                assert "inferwatch edge: device cam-1" in lines.next()
                for _ in range(rng.randint(1, 6)):  # a random moment: after the k-th upload event
                    assert lines.next().startswith("inferwatch edge: ok "), lines.seen
            finally:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)
                lines.close()
            waiting |= _spooled(tmp_path / "spool.sqlite")
        # a last run drains the spool: wait until the server has everything the spool held
        proc, lines = start_agent(cfg)
        try:
            lines.next()
            while _spooled(tmp_path / "spool.sqlite") & waiting:
                assert lines.next(), "the agent stopped reporting"
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            lines.close()
        devices = httpx.get(f"{url}/api/v1/edge/devices", timeout=5).json()["data"]
    (seq,) = read_store(tmp_path / "data", "app_seq").values()
    values = [v for _, v in seq]
    assert waiting <= set(values)  # 0 lost: every sample ever waiting in the spool was stored
    assert len(values) == len(set(values))  # 0 duplicated in the store
    assert [abs(v) for v in values] == sorted(abs(v) for v in values)  # in order
    own = ("inferwatch_edge_last_contact_timestamp_seconds|inferwatch_edge_ingested_samples_total|"
           "inferwatch_edge_duplicate_batches_total|inferwatch_edge_device_.*")
    stored = read_store(tmp_path / "data", f'{{device="cam-1",__name__!~"{own}"}}')
    # 0 duplicated at ingest: the server accepted exactly as many samples as it holds
    assert devices[0]["samples"] == sum(len(v) for v in stored.values())
