"""Issue 40 #3: a generation alert names its example traces, on the dashboard's card and in the message.

A chat app streams under the SDK's middleware with tracing on (every trace kept)
and a slow prefill (3 s to the first token, over GenerationSlowFirstToken's 2.5 s):
the first-token histogram carries each request's trace id as an exemplar; a real
``inferwatch serve`` scrapes it (OpenMetrics), fires the alert (``for`` overridden to
0s: ``rules.overrides``), puts ``example_traces`` and an absolute ``trace_url`` on
it, and sends it to a fake WeCom robot; Chromium then shows the traces on the card.
The app's clock is the system's, with its monotonic reading pushed on by the
"engine" so that a 3 s prefill costs no real time.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from tests.alerting.fakes import FakeService, wecom_handler
from tests.server._proc import serve

from dashboard.conftest import Watched, wait_until
from inferwatch.sdk import Monitor, Price
from inferwatch.tracing import setup

pytestmark = pytest.mark.slow
TOKEN, KEY = "gen-traces-token", "robot-key"
PREFILL_S = 3.0


class PushedClock:
    """The system clock whose monotonic reading the fake engine pushes on (wall time stays true)."""

    def __init__(self) -> None:
        self.offset = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        with self._lock:
            return time.monotonic() + self.offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.offset += seconds

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(max(timeout, 0.0))


def chat(monitor: Monitor, clock: PushedClock) -> Any:
    async def tokens() -> AsyncIterator[bytes]:
        clock.advance(PREFILL_S)  # the slow prefill
        with monitor.track_generation(route="/v1/chat/completions", input_tokens=40, tenant="acme") as g:
            for i in range(8):
                clock.advance(0.03)
                g.tokens(1)
                yield f"data: tok{i}\n\n".encode()
            g.finish_reason = "stop"

    async def endpoint(_: Request) -> StreamingResponse:
        return StreamingResponse(tokens(), media_type="text/event-stream")

    return monitor.asgi(Starlette(routes=[Route("/v1/chat/completions", endpoint, methods=["POST"])]))


@pytest.fixture
def app() -> Iterator[tuple[Monitor, Any, set[str]]]:
    """The traced chat app, its /metrics target, and the ids of the traces it kept."""
    exporter = InMemorySpanExporter()
    tracing = setup("chat", sample_ratio=1.0, exporter=exporter, install_global=False)
    clock = PushedClock()
    monitor = Monitor("chat", "llama-3-8b", "v1", clock=clock, tracing=tracing)  # type: ignore[arg-type]
    monitor.set_prices({"llama-3-8b": Price(input_per_million=0.2, output_per_million=0.6)})
    client = TestClient(chat(monitor, clock))
    stop = threading.Event()

    def load() -> None:  # bounded: at most 600 requests, 0.1 s apart
        for i in range(600):
            if stop.wait(0.1):
                return
            assert client.post("/v1/chat/completions").status_code == 200
            monitor.record_engine(running=3 + i % 2, waiting=i % 3, kv_cache_usage=0.4, preemptions=i % 2,
                                  prefix_cache_queries=40, prefix_cache_hits=10)

    th = threading.Thread(target=load, daemon=True)
    th.start()
    with monitor.serve_metrics() as target:
        yield monitor, target, set()
    stop.set()
    th.join(30)
    tracing.force_flush()
    monitor.close()
    tracing.shutdown()


@pytest.mark.tools
def test_generation_alert_names_its_traces_on_the_card_and_in_the_message(
        tmp_path: Path, app: tuple[Monitor, Any, set[str]], browser: Any) -> None:
    _, target, _ = app
    robot = FakeService(wecom_handler(KEY)).start()
    cfg = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {TOKEN}, evaluation_interval: 1s}}\n"
           f"scrape: {{targets: [{{job: chat, url: '{target.url}', interval: 1s}}]}}\n"
           "rules: {overrides: {GenerationSlowFirstToken: {for: 0s}}}\n"
           "alerting:\n"
           "  route: {receiver: wecom, group_by: [alertname], group_wait: 0s, group_interval: 1s}\n"
           f"  receivers: [{{name: wecom, type: wecom, key: {KEY}, url: '{robot.url}'}}]\n")
    try:
        with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as c:
            def card_alert() -> dict[str, Any] | None:
                alerts = c.get("/api/v1/dashboard/alerts").json()["data"]
                return next((a for a in alerts if a["labels"]["alertname"] == "GenerationSlowFirstToken"
                             and a["state"] == "firing" and "example_traces" in a["annotations"]), None)

            alert = wait_until("the generation alert with example traces", card_alert, 90)
            messages = wait_until("the WeCom message naming traces", lambda: [
                r.json()["markdown"]["content"] for r in robot.requests
                if "example traces:" in r.json().get("markdown", {}).get("content", "")], 90)
            ctx = browser.new_context()
            try:
                page = Watched(ctx.new_page())
                page.page.goto(f"{s.url}/#/alerts")
                card = page.page.locator("article.alert[data-alertname='GenerationSlowFirstToken']")
                card.locator("p.traces a.trace").first.wait_for(timeout=20_000)
                links = card.locator("p.traces a.trace").all_inner_texts()
                href = card.locator("p.traces a.trace").first.get_attribute("href")
                card_text = card.inner_text()
                assert page.take() == []
            finally:
                ctx.close()
    finally:
        robot.stop()
    ann = alert["annotations"]
    first = ann["example_traces"].split(" ")[0]
    assert len(first) == 32 and ann["example_traces"].startswith(f"{first} (3")  # TTFT ~3 s: the trace's
    assert ann["trace_url"] == f"{s.url}/api/v1/traces/{first}"  # absolute: the address serve listens on
    assert links and links[0] == first and href == f"api/v1/traces/{first}"
    # the next step is this alert's (its route's robot), not the P1 tier's degrade action
    assert "next step: wecom message" in card_text and "degrade" not in card_text
    (text, *_) = messages
    # The message was rendered at its own evaluation: new traffic may have brought other exemplars
    # since the card was read, so the message is checked against its own first trace.
    named = re.search(r"example traces: ([0-9a-f]{32}) \((\d)", text)
    assert named and named[2] == "3", text
    sent = named[1]
    assert f"slowest trace: [{s.url}/api/v1/traces/{sent}]({s.url}/api/v1/traces/{sent})" in text
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


LLM_PANELS = ["Time to first token P50 / P99", "Time per output token P50 / P99", "Output tokens per second",
              "In flight, running and waiting", "Goodput (within TTFT and TPOT targets)", "Finish reasons",
              "Tokens per request P50 / P99", "KV cache and prefix cache", "Preemptions per second",
              "Cost per request by tenant"]


@pytest.mark.tools
def test_the_llm_section_shows_for_a_service_that_streams_and_hides_for_others(
        tmp_path: Path, app: tuple[Monitor, Any, set[str]], browser: Any) -> None:
    _, target, _ = app
    cfg = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {TOKEN}}}\n"
           f"scrape: {{targets: [{{job: chat, url: '{target.url}', interval: 2s}}]}}\n")
    # on a 4x clock: the overview's 15-minute range has points every 15 s of it, so a point with a
    # 1-minute rate of what was scraped comes within seconds of ours
    with serve(cfg, tmp_path, "--speed", "4") as s, httpx.Client(base_url=s.url, timeout=30) as c:
        def points() -> bool:
            now = float(c.get("/api/v1/query", params={"query": "time()"}).json()["data"]["result"][0])
            end = now // 15 * 15
            body = c.get("/api/v1/query_range", params={
                "query": "sum(rate(inferwatch_generation_cost_total[1m]))", "start": end - 900, "end": end,
                "step": 15}).json()
            return bool(body["data"]["result"])

        wait_until("a point of the overview's range", points, 90)
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            pages: list[Watched] = []

            def drawn() -> dict[str, str | None] | None:
                # the histogram panels need two scrapes inside their rate window, which the cost
                # rate's first point does not promise on a loaded runner: a fresh page until drawn
                if pages:
                    pages[-1].page.close()
                pages.append(Watched(ctx.new_page()))
                p = pages[-1].page
                p.goto(f"{s.url}/#/overview?service=chat&range=15m&refresh=0")
                p.wait_for_selector("body[data-rendered]", timeout=20_000)
                got = {t: p.locator(f"section.panel[data-title='{t}']").get_attribute("data-state")
                       for t in LLM_PANELS}
                return got if all(v == "ok" for v in got.values()) else None

            states = wait_until("the LLM panels drawn", drawn, 60)
            page = pages[-1]
            heading = page.page.locator("h2[data-section='Generative (LLM)']")
            assert heading.is_visible()
            page.shot("overview-llm")
            # a service that records no generation: the section stays hidden
            page.page.goto(f"{s.url}/#/overview?service=none&range=15m&refresh=0")
            page.page.wait_for_selector("body[data-rendered]", timeout=20_000)
            hidden = not page.page.locator("h2[data-section='Generative (LLM)']").is_visible()
            assert page.take() == []
        finally:
            ctx.close()
    assert states == dict.fromkeys(LLM_PANELS, "ok"), states
    assert hidden


@pytest.mark.tools
def test_llm_panels_fill_on_a_1h_range_with_a_1_minute_scrape(
        tmp_path: Path, app: tuple[Monitor, Any, set[str]], browser: Any) -> None:
    # a 1-minute scrape on a 60x clock (a scrape every real second): the 1-hour range's step is 60 s
    # and its rate window max(4 x 60 s, 60 s + 60 s) = 4 min, so every rate holds four scrapes
    # (a fixed 2-minute window held one or two, and the panels stayed empty)
    _, target, _ = app
    cfg = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {TOKEN}}}\n"
           f"scrape: {{targets: [{{job: chat, url: '{target.url}', interval: 1m}}]}}\n")
    with serve(cfg, tmp_path, "--speed", "60") as s:
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            page = Watched(ctx.new_page())
            sent: list[str] = []
            page.page.on("request",
                          lambda r: sent.append(unquote_plus(r.url)) if "query_range" in r.url else None)
            states: dict[str, str | None] = {}
            loads = 0

            def filled() -> bool:
                nonlocal loads
                loads += 1
                page.page.goto(f"{s.url}/?load={loads}#/overview?service=chat&range=1h&refresh=0")
                page.page.wait_for_selector("body[data-rendered]", timeout=30_000)
                states.update({t: page.page.locator(f"section.panel[data-title='{t}']").get_attribute(
                    "data-state") for t in LLM_PANELS})
                return all(v == "ok" for v in states.values())

            wait_until(f"every LLM panel filled (last: {states})", filled, 120)
            assert page.page.locator("h2[data-section='Generative (LLM)']").is_visible()
            cost = [u for u in sent if "inferwatch_generation_cost_total" in u]
            assert cost and all("[240s]" in u and "step=60" in u for u in cost), cost[-1:]
            assert page.take() == []
        finally:
            ctx.close()
