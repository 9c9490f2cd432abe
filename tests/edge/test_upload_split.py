"""A batch the server refuses for its size (413) is split and sent again, never dropped (issue 31, 5).

Against a real ``inferwatch serve`` whose ``edge.max_body_bytes`` is 2 KiB: a 400-sample batch
of noisy values does not fit; the agent halves it until it does, and every sample is stored once.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import httpx
import pytest
from tests.server._proc import serve

from inferwatch.edge import IngestTarget
from inferwatch.edge._spool import Spool
from inferwatch.edge._uploader import Uploader
from inferwatch.model import Labels, Sample, SimulatedClock

pytestmark = pytest.mark.slow
TOKEN = "cam-1-upload-token"


def test_a_batch_refused_with_413_is_split_and_every_sample_stored(tmp_path: Path) -> None:
    now = time.time()
    rng = random.Random(31)
    samples = [Sample(Labels.of("noisy", sensor=str(i % 4)), now - 400 + i // 4, rng.random())
               for i in range(400)]
    cfg = (f"server: {{data_dir: '{tmp_path}/data'}}\n"
           f"edge: {{max_body_bytes: 2048, devices: {{cam-1: {TOKEN}}}}}\n")
    with serve(cfg, tmp_path) as s:
        spool = Spool(tmp_path / "spool.sqlite")
        spool.append(samples, now=now)
        events: list[str] = []
        target = IngestTarget(s.url, "cam-1", TOKEN)
        up = Uploader(spool, target, clock=SimulatedClock(now), batch_size=400, on_event=events.append)
        for _ in range(200):  # bounded: each step sends or splits one batch
            if spool.backlog() == 0:
                break
            assert up.step() == 0.0, events[-3:]
        target.close()
        assert spool.backlog() == 0 and up.rejected == 0
        assert any(e.startswith("split ") and "HTTP 413" in e for e in events), events[:3]
        r = httpx.get(f"{s.url}/api/v1/query", params={"query": "count_over_time(noisy[30m])",
                                                         "time": str(now)}, timeout=30)
        counts = {m["metric"]["sensor"]: m["value"][1] for m in r.json()["data"]["result"]}
        assert counts == {str(k): "100" for k in range(4)}
        spool.close()
