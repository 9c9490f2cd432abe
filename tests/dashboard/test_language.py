"""The dashboard in 简体中文: the header's switch, tier names, labels and alert texts (headless Chromium)."""

from __future__ import annotations

import pytest

from dashboard.conftest import DemoServer, Watched
from dashboard.test_browser import P0_CARD, TIMEOUT_MS, open_page

pytestmark = [pytest.mark.tools, pytest.mark.slow]


def test_switch_to_chinese_and_back(page: Watched, demo: DemoServer) -> None:
    p = page.page
    open_page(page, demo, "alerts")
    p.wait_for_selector(P0_CARD, timeout=TIMEOUT_MS)
    nav = "#nav a[data-page='alerts']"
    assert p.inner_text("#lang") == "简体中文" and p.inner_text(nav).startswith("Alerts")
    p.click("#lang")
    p.wait_for_selector("html[lang='zh-CN'] body[data-ready='alerts']", timeout=TIMEOUT_MS)
    p.wait_for_selector(P0_CARD, timeout=TIMEOUT_MS)
    card = p.locator(P0_CARD).first
    assert card.locator(".badge.tier").inner_text() == "P0 紧急"
    assert card.locator(".state").inner_text() == "告警中"
    assert card.locator("header").inner_text().count("开始于") == 1
    assert "对一半及以上的请求返回 HTTP 503" in card.inner_text()  # the rule's summary, translated
    assert p.inner_text("#nav a[data-page='alerts']").startswith("告警")
    assert p.inner_text("#theme") in ("深色", "浅色") and p.inner_text("#lang") == "English"
    headings = p.locator("main h2").all_inner_texts()
    assert headings[0].startswith("告警（") and "最近 24 小时" in headings
    page.shot("alerts-zh-CN")
    # the overview's section and panel titles, and a redraw on the page's timer stays Chinese
    open_page(page, demo, "overview")
    p.wait_for_selector("body[data-rendered]", timeout=TIMEOUT_MS)
    assert {"服务", "基础设施", "模型质量"} <= set(p.locator("main h2").all_inner_texts())
    assert p.locator("section.panel[data-title='Latency P50 / P99'] h3").inner_text() == "延迟 P50 / P99"
    page.shot("overview-zh-CN")
    p.click("#lang")
    p.wait_for_selector("html[lang='en'] body[data-ready='overview']", timeout=TIMEOUT_MS)
    assert p.inner_text(nav).startswith("Alerts") and p.inner_text("#lang") == "简体中文"
    assert page.take() == []
