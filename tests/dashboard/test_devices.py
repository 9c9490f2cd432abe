"""Issue 40 #6: the dashboard lists edge devices (last seen, samples, buffer, drops), kept on restart."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server._proc import serve

from dashboard.conftest import Watched
from inferwatch.edge import AgentStats, Batch, encode_batch
from inferwatch.model import Labels, Sample

pytestmark = pytest.mark.slow
CONFIG = "server: {{data_dir: '{data}', api_token: t}}\nedge: {{devices: {{cam-1: tok1, cam-2: tok2}}}}\n"


def upload(url: str, n: int) -> None:
    t = time.time()
    batch = Batch("cam-1", f"s:{n}", (Sample(Labels.of("temp"), t, 40.0), Sample(Labels.of("fps"), t, 25.0)),
                  60.0, AgentStats(backlog=7, dropped={"bytes": 2}))
    r = httpx.post(f"{url}/api/v1/edge/ingest", content=encode_batch(batch),
                   headers={"Content-Encoding": "gzip", "Authorization": "Bearer tok1"}, timeout=10)
    assert r.status_code == 200, r.text


@pytest.mark.tools
def test_device_list_on_the_overview_and_after_a_restart(tmp_path: Path, browser: Any) -> None:
    cfg = CONFIG.format(data=tmp_path / "data")
    with serve(cfg, tmp_path) as s:
        for n in range(3):
            upload(s.url, n)
        before = httpx.get(f"{s.url}/api/v1/dashboard/devices", timeout=10).json()["data"]
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            page = Watched(ctx.new_page())
            page.page.goto(f"{s.url}/#/overview?refresh=0")
            row_sel = "body[data-rendered] #devices tr[data-device='cam-1']"
            page.page.wait_for_selector(row_sel, timeout=20_000)
            row = page.page.locator("#devices tr[data-device='cam-1'] td").all_inner_texts()
            assert page.take() == []
        finally:
            ctx.close()
    with serve(cfg, tmp_path) as s:  # the same data directory: a restart
        after = httpx.get(f"{s.url}/api/v1/dashboard/devices", timeout=10).json()["data"]
    cam1 = next(d for d in before if d["device"] == "cam-1")
    assert (cam1["samples"], cam1["batches"], cam1["backlog"], cam1["dropped"]) == (6, 3, 7, {"bytes": 2})
    assert row[0] == "cam-1" and row[1].endswith("s ago") and row[2:6] == ["6", "3", "7", "2"]
    assert next(d for d in after if d["device"] == "cam-1")["samples"] == 6  # kept across the restart
    # a configured device never heard from is listed, never seen
    assert [d["last_contact"] for d in before if d["device"] == "cam-2"] == [0.0]
