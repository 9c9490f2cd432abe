"""Issue 54 #5: the overview's generation-quality section shows the numbers a generative app recorded.

An app (a round of four generations per traced request) records generations of one model under two
prompt versions, joined by
generation id to a judge's scores (prompt-a 0.85, prompt-b 0.6) and to user
feedback (prompt-a all positive, prompt-b half negative); a quarter of the
generations are refused and an eighth hit a guardrail; two tenants spend, acme
over a tiny daily budget, globex well within its own. A real ``inferwatch serve``
scrapes it; Chromium opens the overview and reads each chart's last values and
the tenant table, then the same section in Chinese; the config selects the vLLM engine pack, whose
section (and no other engine's) shows, empty.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from tests.server._proc import serve

from dashboard.conftest import Watched, wait_until
from dashboard.test_phone_axe import TEXTS, _english
from inferwatch.sdk import Monitor, Price
from inferwatch.tracing import setup

pytestmark = [pytest.mark.slow, pytest.mark.tools]
SCORE, FEEDBACK, FLAGS, SPEND = ("Judge scores by model and prompt version (mean)",
                                 "Negative feedback by model and prompt version",
                                 "Refusals, guardrail hits and schema failures (share of generations)",
                                 "Spend pace by tenant against daily budget (currency per day)")
# (prompt version, tenant, judge score, thumbs up, flag) of each round's four generations
ROUND = [("prompt-a", "acme", 0.85, True, ""), ("prompt-a", "globex", 0.85, True, ""),
         ("prompt-b", "acme", 0.6, False, "refused"), ("prompt-b", "globex", 0.6, True, "guardrail")]


def _round(monitor: Monitor, i: int) -> None:
    for k, (prompt, tenant, score, up, flag) in enumerate(ROUND):
        gid = f"g{i}-{k}"
        with monitor.track_generation("/v1/chat/completions", input_tokens=40, tenant=tenant,
                                      prompt_version=prompt, generation_id=gid) as g:
            g.tokens(8)
            g.finish_reason = "stop"
            if flag == "refused" or (flag == "guardrail" and i % 2 == 0):
                g.flag(flag, "pii" if flag == "guardrail" else "")
        monitor.record_score("judge", score, generation_id=gid)
        monitor.record_feedback(positive=up, generation_id=gid)


@pytest.fixture
def target() -> Iterator[Any]:
    """The app's /metrics, serving a round per request under the SDK's middleware with every trace kept
    (so each generation's exemplar carries its trace id), until the test ends (bounded: 4,000 rounds,
    0.05 s apart)."""
    tracing = setup("chat", sample_ratio=1.0, exporter=InMemorySpanExporter(), install_global=False)
    monitor = Monitor("chat", "llama-3-8b", "v1", tracing=tracing)
    monitor.set_prices({"llama-3-8b": Price(input_per_million=0.2, output_per_million=0.6)})
    monitor.set_tenant_budgets({"acme": 0.0001, "globex": 100.0})
    stop = threading.Event()

    async def chat(req: Request) -> PlainTextResponse:
        _round(monitor, int(req.query_params["i"]))
        return PlainTextResponse("ok")

    client = TestClient(monitor.asgi(Starlette(routes=[Route("/chat", chat, methods=["POST"])])))

    def load() -> None:
        for i in range(4000):
            assert client.post("/chat", params={"i": i}).status_code == 200
            if stop.wait(0.05):
                return

    th = threading.Thread(target=load, daemon=True)
    th.start()
    with monitor.serve_metrics() as served:
        yield served
    stop.set()
    th.join(30)
    monitor.close()
    tracing.shutdown()


def _last(p: Any, title: str) -> dict[str, str]:
    rows = p.locator(f"section.panel[data-title='{title}'] table.last tr").all()
    return dict(tuple(r.locator("td").all_inner_texts()) for r in rows)  # type: ignore[misc]


def _number(text: str) -> float:
    m = re.match(r"(-?[\d.]+)", text)
    assert m, text
    return float(m[1])


def test_the_quality_section_shows_scores_feedback_flags_and_spend(
        tmp_path: Path, target: Any, browser: Any) -> None:
    cfg = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: quality-view}}\n"
           f"scrape: {{targets: [{{job: chat, url: '{target.url}', interval: 2s}}]}}\n"
           "rules: {packs: [vllm]}\n")
    with serve(cfg, tmp_path, "--speed", "4") as s, httpx.Client(base_url=s.url, timeout=30) as c:
        def points() -> bool:  # two scrapes of the flags inside a rate window of the 15-minute range
            q = "sum(rate(inferwatch_generation_flags_total[8s]))"
            return bool(c.get("/api/v1/query", params={"query": q}).json()["data"]["result"])

        wait_until("two scrapes of the quality series", points, 90)
        ctx = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            page = Watched(ctx.new_page())
            got: dict[str, dict[str, str]] = {}
            loads = [0]

            def drawn() -> bool:  # a fresh page until each chart has its series (new query string: a reload)
                loads[0] += 1
                page.page.goto(f"{s.url}/?load={loads[0]}#/overview?service=chat&range=15m&refresh=0")
                page.page.wait_for_selector("body[data-rendered]", timeout=30_000)
                got.update({t: _last(page.page, t) for t in (SCORE, FEEDBACK, FLAGS, SPEND)})
                # and the worst-scored generations, harvested from the score buckets' exemplars
                listed = page.page.locator("#worst-generations").count() > 0
                return all(len(v) >= 2 for v in got.values()) and listed

            wait_until("the quality panels drawn", drawn, 60)
            assert page.page.locator("h2[data-section='Generation quality']").is_visible()
            spend = {r.get_attribute("data-tenant"): r.locator("td").all_inner_texts()
                     for r in page.page.locator("#tenant-spend tbody tr").all()}
            worst = [r.locator("td").all_inner_texts()
                     for r in page.page.locator("#worst-generations tbody tr").all()]
            trace = page.page.locator("#worst-generations a.trace").first
            link = (trace.inner_text(), trace.get_attribute("href"))
            # the selected engine pack's section, empty (no vLLM scraped): it says what to scrape; no other
            vllm = page.page.locator("section.panel[data-title='vLLM KV cache usage']").inner_text()
            engines = page.page.locator("h2[data-section^='Engine: ']").all_inner_texts()
            page.shot("overview-generation-quality")
            assert page.take() == []
        finally:
            ctx.close()
        zh = browser.new_context(viewport={"width": 1400, "height": 900}, locale="zh-CN")
        try:
            p = zh.new_page()
            p.goto(f"{s.url}/#/overview?service=chat&range=15m&refresh=0")
            p.wait_for_selector("body[data-rendered]", timeout=30_000)
            p.wait_for_selector("#tenant-spend", timeout=30_000)
            heading = p.locator("h2[data-section='Generation quality']").inner_text()
            texts = [t for sel in ("section[data-table='spend']", "section[data-table='worst']")
                     for t in p.evaluate(TEXTS, sel)]
            texts += [p.locator(f"section.panel[data-title='{t}'] h3").inner_text()
                      for t in (SCORE, FEEDBACK, FLAGS, SPEND)]
        finally:
            zh.close()
    scores = got[SCORE]
    assert scores["judge · llama-3-8b v1 · prompt-a"] == "0.85", scores
    assert scores["judge · llama-3-8b v1 · prompt-b"] == "0.6", scores
    feedback = got[FEEDBACK]
    assert _number(feedback["llama-3-8b v1 · prompt-a"]) == 0, feedback
    assert abs(_number(feedback["llama-3-8b v1 · prompt-b"]) - 50) < 5, feedback
    flags = got[FLAGS]
    assert abs(_number(flags["refused"]) - 25) < 3 and abs(_number(flags["guardrail"]) - 12.5) < 3, flags
    assert {"acme USD/d budget", "globex USD/d budget"} <= set(got[SPEND]), got[SPEND]
    assert got[SPEND]["acme USD/d budget"] == "1.00e-4" and got[SPEND]["globex USD/d budget"] == "100"
    # tenant, spent, budget, share, last hour x 24, state
    assert spend["acme"][2] == "0.0001 USD" and spend["acme"][5] == "over budget", spend
    assert spend["globex"][2] == "100 USD" and spend["globex"][5] == "within budget", spend
    assert _number(spend["acme"][3]) > 100 and _number(spend["globex"][3]) < 1, spend
    # score, evaluation, model, prompt version, tenant, generation, trace (each round is a traced request)
    assert worst and all(r[:4] == ["0.6", "judge", "llama-3-8b v1", "prompt-b"] for r in worst), worst
    assert {r[4] for r in worst} <= {"acme", "globex"}
    assert all(re.fullmatch(r"g\d+-[23]", r[5]) for r in worst), worst
    assert all(re.fullmatch(r"[0-9a-f]{32}", r[6]) for r in worst), worst
    assert link == (link[0], f"api/v1/traces/{link[0]}") and link[0] in {r[6] for r in worst}
    assert engines == ["Engine: vLLM"], engines
    assert "no vLLM metrics: scrape the vLLM server's /metrics" in vllm
    assert heading == "生成质量"
    assert texts and not _english(texts), _english(texts)
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
