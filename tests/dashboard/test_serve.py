"""``inferwatch serve`` serves the dashboard: a real server process, its page, files and views."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server._proc import serve

from dashboard.conftest import Watched

pytestmark = pytest.mark.slow
TOKEN = "dashboard-test-token"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    with serve(f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {TOKEN}}}\n", tmp_path) as s:
        assert "(dashboard at /)" in s.lines[-1], s.lines
        yield s.url
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


def test_serve_answers_the_page_its_files_and_views(served: str) -> None:
    page = httpx.get(served + "/", timeout=10)
    app_js = re.search(r'src="(dashboard/v[0-9a-f]{12}/js/app\.js)"', page.text)
    assert page.status_code == 200 and app_js, page.text[:2000]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    js = httpx.get(f"{served}/{app_js.group(1)}", timeout=10)
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
