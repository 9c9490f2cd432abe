"""The fleet page (issue #52) in a real headless Chromium against ``inferwatch serve``: 150 devices
reporting their site, version and backlog; the page gets 50 rows a page, sorted and filtered by
the server, and pages on."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from tests.server._proc import serve

from dashboard.conftest import Watched
from inferwatch.edge import AgentStats, Batch, encode_batch
from inferwatch.model import Labels, Sample

pytestmark = [pytest.mark.tools, pytest.mark.slow]
TIMEOUT_MS = 30_000
N = 150


def test_the_fleet_page_sorts_filters_and_pages_on_the_server(tmp_path: Path, page: Watched) -> None:
    names = [f"cam-{i:03d}" for i in range(N)]
    tokens = ", ".join(f"{n}: tok-{n}" for n in names)
    config = f"server: {{data_dir: '{tmp_path / 'data'}', api_token: t}}\nedge: {{devices: {{{tokens}}}}}\n"
    with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as client:
        for i, name in enumerate(names):
            t = time.time()
            stats = AgentStats(backlog=i, version="0.1.0", labels={"site": "berlin" if i % 3 else "paris"},
                               sent_at=t - 1.5, config_hash=f"{i:064x}")
            batch = Batch(name, "s:1", (Sample(Labels.of("temp"), t, 40.0),), 60.0, stats)
            r = client.post("/api/v1/edge/ingest", content=encode_batch(batch),
                            headers={"Content-Encoding": "gzip", "Authorization": f"Bearer tok-{name}"})
            assert r.status_code == 200, r.text
        t0 = time.monotonic()
        page.page.goto(f"{s.url}/#/fleet?filter=site%3Dberlin&sort=backlog&order=desc")
        page.page.wait_for_selector("body[data-rendered='fleet'] #fleet tbody tr", timeout=TIMEOUT_MS)
        print(f"fleet page drawn {1000 * (time.monotonic() - t0):.0f} ms after the navigation")
        rows = page.page.locator("#fleet tbody tr[data-device]")
        assert rows.count() == 50
        assert rows.first.get_attribute("data-device") == "cam-149"  # the largest backlog of berlin
        assert "100 of 150 devices · page 1 of 2" in page.page.inner_text("#fleet-count")
        first = rows.first.locator("td").all_inner_texts()
        assert first[1] == "berlin" and first[3] == "149" and first[5] == "0.1.0"
        page.page.click("button[data-page='2']")
        page.page.wait_for_selector("#fleet-count:has-text('page 2 of 2')", timeout=TIMEOUT_MS)
        assert page.page.locator("#fleet tbody tr[data-device]").count() == 50
        page.page.click("th[data-sort='device']")  # sorted by name now, back to page 1
        page.page.wait_for_selector("#fleet-count:has-text('page 1 of 2')", timeout=TIMEOUT_MS)
        page.page.wait_for_selector("#fleet tbody tr[data-device='cam-001']", timeout=TIMEOUT_MS)
        first_row = page.page.locator("#fleet tbody tr[data-device]").first
        assert first_row.get_attribute("data-device") == "cam-001"
        assert page.page.locator("#nav a.active").inner_text() == "Fleet"
        bad = client.get("/api/v1/edge/fleet", params={"sort": "token"})
        assert bad.status_code == 400 and bad.json()["error"].startswith("sort: ")
        page.shot("fleet")
        assert page.take() == []
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
