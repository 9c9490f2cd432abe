"""``inferwatch serve`` serves the dashboard: a real server process, its page, files and views."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dashboard.conftest import Watched

pytestmark = pytest.mark.slow
TOKEN = "dashboard-test-token"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {TOKEN}}}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("INFERWATCH_CONFIG", "INFERWATCH_DATA_DIR")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        first = proc.stderr.readline() if ready else ""
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+) \(dashboard at /\)", first)
        assert m, first
        yield m.group(1)
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert "Traceback" not in err, err


def test_serve_answers_the_page_its_files_and_views(served: str) -> None:
    page = httpx.get(served + "/", timeout=10)
    assert page.status_code == 200 and "dashboard/js/app.js" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    js = httpx.get(served + "/dashboard/js/app.js", timeout=10)
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert httpx.get(served + "/dashboard/vendor/uPlot.iife.min.js", timeout=10).status_code == 200
    body = httpx.get(served + "/api/v1/dashboard/alerts", timeout=10).json()
    assert body == {"status": "success", "data": []}
    # the APIs the page calls are still there, beside it
    query = httpx.get(served + "/api/v1/query", params={"query": "1"}, timeout=10)
    assert query.json()["status"] == "success"


@pytest.mark.tools
def test_every_page_of_an_empty_server_loads_without_errors(served: str, browser: Any) -> None:
    ctx = browser.new_context()
    try:
        page = Watched(ctx.new_page())
        for name in ("overview", "alerts", "silences", "explore", "drift", "diagnose"):
            page.page.goto(f"{served}/#/{name}")
            page.page.wait_for_selector(f"body[data-ready='{name}']", timeout=20_000)
            assert page.page.locator("main .msg.error").count() == 0, name
            assert page.take() == [], name
        # nothing scraped: the panels say there is no data rather than drawing empty axes
        page.page.goto(f"{served}/#/overview")
        page.page.wait_for_selector("body[data-rendered]", timeout=20_000)
        assert page.page.locator("section.panel[data-state='empty']").count() >= 10
    finally:
        ctx.close()
