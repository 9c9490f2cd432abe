"""The Probes page in a real headless Chromium against ``inferwatch serve`` probing local targets."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from tests.probe._targets import LABELS, targets
from tests.server._proc import serve, wait_query

from dashboard.conftest import Watched

pytestmark = [pytest.mark.tools, pytest.mark.slow]
TIMEOUT_MS = 30_000


def test_the_probes_page_shows_success_phases_failures_and_canary_answers(tmp_path: Path,
                                                                         page: Watched) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"id": f"x{i}", "body": {"x": i},
                                          "expect": {"json_path": "$.label", "equals": LABELS[i]}}) + "\n"
                              for i in range(4)))
    with targets() as t:
        t.broken = {2}
        config = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: t}}\n"
                  "probes:\n"
                  f"  - {{name: ok, url: '{t.url}/ok', interval: 1s, timeout: 1s, "
                  "labels: {service: ranker}}\n"
                  f"  - {{name: broken, url: '{t.url}/500', interval: 1s, timeout: 1s}}\n"
                  f"  - {{name: golden, url: '{t.url}/predict', timeout: 1s, "
                  f"golden: {{file: '{golden}', every: 1s, window: 1}}}}\n")
        with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, timeout=10) as client:
            wait_query(client, 'inferwatch_probe_canary_wrong_ratio{probe="golden"}')
            page.page.goto(f"{s.url}/#/probes")
            page.page.wait_for_selector("body[data-rendered='probes']", timeout=TIMEOUT_MS)
            ok = page.page.locator("section.probe[data-probe='ok']")
            assert ok.get_attribute("data-state") == "up"
            assert ok.locator("b.status").inner_text() == "200"
            assert ok.locator("tr[data-phase]").count() == 5
            broken = page.page.locator("section.probe[data-probe='broken']")
            assert broken.get_attribute("data-state") == "down"
            assert "status 500, expected 2xx" in broken.locator("p.last-failure").inner_text()
            gold = page.page.locator("section.probe[data-probe='golden']")
            assert gold.locator("[data-case='x2']").get_attribute("class") == "badge firing"
            assert gold.locator("[data-case='x0']").get_attribute("class") == "badge ok"
            assert "25 %" in gold.locator(".canary").inner_text()
            assert page.page.locator("#nav a.active").inner_text() == "Probes"
            assert page.page.locator("main .msg.error").count() == 0
            page.shot("probes")
            assert page.take() == []
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
