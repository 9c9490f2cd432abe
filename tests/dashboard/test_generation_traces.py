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

import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

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

from dashboard.conftest import Watched
from inferwatch.sdk import Monitor
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
        with monitor.track_generation(route="/v1/chat/completions") as g:
            for i in range(8):
                clock.advance(0.03)
                g.tokens(1)
                yield f"data: tok{i}\n\n".encode()

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
    client = TestClient(chat(monitor, clock))
    stop = threading.Event()

    def load() -> None:  # bounded: at most 600 requests, 0.1 s apart
        for _ in range(600):
            if stop.wait(0.1):
                return
            assert client.post("/v1/chat/completions").status_code == 200

    th = threading.Thread(target=load, daemon=True)
    th.start()
    with monitor.serve_metrics() as target:
        yield monitor, target, set()
    stop.set()
    th.join(30)
    tracing.force_flush()
    monitor.close()
    tracing.shutdown()


def wait_for(what: str, check: Any, timeout: float = 90.0) -> Any:
    end = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)
    return got


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

            alert = wait_for("the generation alert with example traces", card_alert)
            messages = wait_for("the WeCom message naming traces", lambda: [
                r.json()["markdown"]["content"] for r in robot.requests
                if "example traces:" in r.json().get("markdown", {}).get("content", "")])
            ctx = browser.new_context()
            try:
                page = Watched(ctx.new_page())
                page.page.goto(f"{s.url}/#/alerts")
                card = page.page.locator("article.alert[data-alertname='GenerationSlowFirstToken']")
                card.locator("p.traces a.trace").first.wait_for(timeout=20_000)
                links = card.locator("p.traces a.trace").all_inner_texts()
                href = card.locator("p.traces a.trace").first.get_attribute("href")
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
    (text, *_) = messages
    assert f"example traces: {first} (3" in text
    assert f"slowest trace: [{s.url}/api/v1/traces/{first}]({s.url}/api/v1/traces/{first})" in text
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
