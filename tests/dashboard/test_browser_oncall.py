"""The dashboard's On call page in a real headless Chromium against the demo (its P0 fires and stays)."""

from __future__ import annotations

from typing import Any

import pytest
from tests._require import require_module

from dashboard.conftest import DemoServer, Watched, wait_until

pytestmark = [pytest.mark.tools, pytest.mark.slow]
TIMEOUT_MS = 20_000
PlaywrightTimeout = require_module("playwright.sync_api").TimeoutError
GROUP = "article.oncall-group[data-alertname='ServiceUnavailable']"


def _click_until_posted(p: Any, button: Any, path: str) -> None:
    """Click ``button`` until the page POSTs ``path`` (at most 3 tries): the list redraws every few
    seconds, and a click that lands while its card is replaced posts nothing."""
    for attempt in range(3):
        try:
            with p.expect_response(lambda r: r.request.method == "POST" and r.url.endswith(path),
                                   timeout=TIMEOUT_MS / 2) as posted:
                button.click(timeout=TIMEOUT_MS)
            assert posted.value.status == 200, f"POST {path}: {posted.value.status}"
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def test_acknowledge_from_the_dashboard_and_read_the_group_timeline(page: Watched, demo: DemoServer) -> None:
    # rules: the page lists the groups with an Acknowledge button (the token as for silences); the
    # acknowledgement shows on the group; its timeline says who was told when and who acknowledged
    p = page.page
    p.goto(f"{demo.url}#/oncall")
    p.wait_for_selector("body[data-ready='oncall']", timeout=TIMEOUT_MS)
    assert p.inner_text("#no-schedules").startswith("no schedules")  # the demo configures none
    card = p.locator(f"{GROUP}[data-acked='false']").first
    card.wait_for(timeout=TIMEOUT_MS)
    gid = card.get_attribute("data-group")
    wait_until("the P0 group's first notification", lambda: bool(demo.api(
        f"api/v1/alerts/history?group={gid}&kind=notified")))
    p.fill("#token", demo.token)
    p.click("#save-token")
    _click_until_posted(p, card.locator("button.ack"), "/api/v1/alerts/ack")
    p.wait_for_selector(f"article[data-group='{gid}'][data-acked='true']", timeout=TIMEOUT_MS)
    acked = p.locator(f"article[data-group='{gid}']")
    assert "acknowledged by" in acked.inner_text()
    acked.locator("button.show-timeline").click()
    p.wait_for_selector(f"article[data-group='{gid}'] li[data-kind='acknowledged']", timeout=TIMEOUT_MS)
    timeline = acked.locator(".group-timeline").inner_text()
    assert "notified" in timeline and "phone" in timeline  # who was told
    assert "firing" in timeline  # the group's alert, from its fingerprint
    assert "time to acknowledge: " in timeline and "time to acknowledge: -" not in timeline
    page.shot("oncall")
    # the alerts page shows it on the alert's card too
    p.goto(f"{demo.url}#/alerts")
    p.wait_for_selector("body[data-ready='alerts']", timeout=TIMEOUT_MS)
    p0 = p.locator("article.alert[data-alertname='ServiceUnavailable']").first
    assert "acknowledged by dashboard" in p0.inner_text()
    p.goto(f"{demo.url}#/oncall")
    p.wait_for_selector("body[data-ready='oncall']", timeout=TIMEOUT_MS)
    # and back: unacknowledged, the button is there again
    _click_until_posted(p, acked.locator("button.unack"), "/api/v1/alerts/unack")
    p.wait_for_selector(f"article[data-group='{gid}'][data-acked='false'] button.ack", timeout=TIMEOUT_MS)
    assert page.take() == []
