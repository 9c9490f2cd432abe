"""The peers page (issue 55) in a real headless Chromium: an outlier rule's group, members side by
side, the slow replica marked, against ``inferwatch serve`` scraping five real replica processes."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from tests.server._fleet import fleet, fleet_config  # noqa: F401 - the fixture
from tests.server._proc import serve, wait_query

from dashboard.conftest import Watched

pytestmark = [pytest.mark.tools, pytest.mark.slow]
TIMEOUT_MS = 30_000


def test_the_peers_page_shows_the_group_side_by_side_with_the_outlier_marked(
        tmp_path: Path, fleet: list[tuple[str, Path]], page: Watched) -> None:  # noqa: F811
    config = fleet_config(fleet, "http://127.0.0.1:1", tmp_path / "data")  # no receiver listens: not needed
    slow, control = fleet[3]
    with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as client:
        wait_query(client, "count(app_p99_seconds) == 5")
        control.write_text("0.9")
        end = time.monotonic() + 60  # until the rule's judgement names the slow replica (no sleeps)
        while time.monotonic() < end:
            rules = client.get("/api/v1/rules").json()["data"]["groups"][0]["rules"]
            groups = rules[0]["outlier"]["groups"]
            if groups and any(m["outlier"] for m in groups[0]["members"]):
                break
        page.page.goto(f"{s.url}/#/peers?rule=ReplicaSlow")
        page.page.wait_for_selector("body[data-rendered='peers']", timeout=TIMEOUT_MS)
        rows = page.page.locator("section.peers tr[data-member]")
        assert rows.count() == 5
        marked = page.page.locator("section.peers tr[data-outlier='true']")
        assert marked.count() == 1 and marked.get_attribute("data-member") == slow
        assert "outlier" in marked.inner_text()
        assert "median 0.200" in page.page.inner_text("section.peers header")  # 0.19 0.2 0.2 0.21 0.9
        assert page.page.locator("#nav a.active").inner_text() == "Peers"
        page.shot("peers")
        assert page.take() == []
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
