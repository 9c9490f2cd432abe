"""Charts from the first minute: a plain classifier scraped every 2 s, watched in Chromium.

The overview's step and rate window follow the server's scrape interval as Grafana's
``$__rate_interval`` does (a step that is a multiple of the interval; a window of at least four
scrapes and at least a step plus a scrape), so every chart of the Service section has data
from the first scrapes on, instead of "no data in this range" until a fixed 1-minute window
fills; a healthy service's error ratio is 0, not "no data"; and a service that records no
generations gets no Generative (LLM) section of empty panels.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from tests.server._proc import serve

from dashboard.conftest import Watched, wait_until
from inferwatch.sdk import Monitor

pytestmark = pytest.mark.slow
SERVICE_PANELS = ["QPS by status code", "Latency P50 / P99", "Error and 503 ratios", "In-flight requests"]


@pytest.fixture
def classifier() -> Iterator[Any]:
    """A healthy classifier (every answer 200) under steady load, and its /metrics target."""
    monitor = Monitor("clf", "logreg", "v1")

    async def predict(_: Request) -> JSONResponse:
        return JSONResponse({"label": 1, "score": 0.9})

    client = TestClient(monitor.asgi(Starlette(routes=[Route("/predict", predict, methods=["POST"])])))
    stop = threading.Event()

    def load() -> None:  # bounded: at most 4,000 requests, 50 ms apart
        for _ in range(4000):
            if stop.wait(0.05):
                return
            assert client.post("/predict").status_code == 200

    th = threading.Thread(target=load, daemon=True)
    th.start()
    with monitor.serve_metrics() as target:
        yield target
    stop.set()
    th.join(30)
    monitor.close()


@pytest.mark.tools
def test_every_service_chart_has_data_from_the_first_scrapes_and_no_llm_section(
        tmp_path: Path, classifier: Any, browser: Any, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = (f"server: {{data_dir: '{tmp_path / 'data'}'}}\n"
           f"scrape: {{targets: [{{job: clf, url: '{classifier.url}', interval: 2s}}]}}\n")
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as c:
        def scraped() -> bool:
            body = c.get("/api/v1/query", params={"query": 'up{job="clf"} == 1'}).json()
            return bool(body["data"]["result"])

        wait_until("the first scrape", scraped, 60)
        first = time.monotonic()
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            page = Watched(ctx.new_page())
            sent: list[str] = []
            page.page.on("request",
                          lambda r: sent.append(unquote_plus(r.url)) if "query_range" in r.url else None)
            states: dict[str, str | None] = {}
            loads = 0

            def drawn() -> bool:
                nonlocal loads
                loads += 1  # a new document each time (the query string differs): the page's first load
                page.page.goto(f"{s.url}/?load={loads}#/overview?service=clf&range=15m&refresh=0")
                page.page.wait_for_selector("body[data-rendered]", timeout=30_000)
                states.update({t: page.page.locator(f"section.panel[data-title='{t}']").get_attribute(
                    "data-state") for t in SERVICE_PANELS})
                return all(v == "ok" for v in states.values())

            wait_until(f"every Service chart to draw (last: {states})", drawn, 90)
            took = time.monotonic() - first
            with capsys.disabled():
                print(f"\nevery Service chart had data {took:.1f} s after the first scrape ({loads} loads)")
            # the window follows the 2 s scrape: a 6 s step (15 min / 160 points, on whole scrapes)
            # and max(4 x 2 s, 6 s + 2 s) = 8 s, not a fixed 1-minute window
            qps = [u for u in sent if "sum by (code) (rate(inferwatch_requests_total" in u]
            assert qps and all("[8s]" in u and "step=6" in u for u in qps), qps[-1:]
            # a classifier records no generation: no Generative (LLM) section
            assert page.page.evaluate("document.body.dataset.generative") == "false"
            assert not page.page.locator("h2[data-section='Generative (LLM)']").is_visible()
            assert page.take() == []
        finally:
            ctx.close()

