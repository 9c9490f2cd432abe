"""One tap from the page: a P0 notification's link opens the incident page on a phone-sized Chromium.

`inferwatch serve --speed 20` with a two-step escalation (the second step 5 min after the first,
15 s of real time) and three P0 groups fired together: Delta is acknowledged by tapping the page's
button (no token anywhere; the channel that carried the page hears of it), Bravo is escalated and
silenced from its page, Alpha is the control that nobody touches. Alpha's step 2 arriving proves
the step was due; Delta's never arrives. Once Delta resolves, its link is refused.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server._proc import start_serve

from alerting.test_serve_oncall import BOUND_S, TOKEN, Hooks, _stop
from dashboard.conftest import Watched, wait_until

pytestmark = [pytest.mark.tools, pytest.mark.slow]
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 30_000


def _config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}, external_url: 'https://iw.example.com'}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  resolve_timeout: 1d  # 5m is 15 s at 20x: Alpha's resolution raced its step 2 and reached 'second'
  receivers:
    - {{name: first, type: webhook, url: '{url}/first'}}
    - {{name: second, type: webhook, url: '{url}/second'}}
  escalations: [{{name: p0, steps: [{{after: 0s, notify: [first]}}, {{after: 5m, notify: [second]}}]}}]
  route: {{receiver: first, group_by: [alertname], group_wait: 0s, group_interval: 10s, escalation: p0}}
""")
    return cfg


def _alert(name: str, status: str = "firing") -> dict[str, Any]:
    out: dict[str, Any] = {
        "status": status, "labels": {"alertname": name, "service": "ranker", "tier": "P0"},
        "annotations": {"summary": f"{name}: ranker answers 503", "runbook": f"restart ranker ({name})"}}
    if status == "resolved":
        out["endsAt"] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    return out


def _link(hooks: Hooks, name: str, url: str) -> str:
    """The group's link as delivered, pointed at this server (its external URL is a placeholder)."""
    body = next(b for p, b in list(hooks.got) if p == "/first" and b["groupLabels"]["alertname"] == name)
    (link,) = [n.split(": ", 1)[1] for n in body["notes"] if n.startswith("Acknowledge: ")]
    assert link.startswith("https://iw.example.com/api/v1/alerts/ack/link?") and TOKEN not in str(body)
    return url + link.removeprefix("https://iw.example.com")


def _fits(page: Any) -> None:
    """No horizontal scrolling, and the Acknowledge button within the first screen."""
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width
    box = page.locator("#ack").bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"], box


@pytest.fixture
def hooks() -> Any:
    h = Hooks()
    yield h
    h.service.stop()


def test_a_p0_link_opens_the_incident_page_and_one_tap_stops_the_escalation(
        tmp_path: Path, hooks: Hooks, browser: Any) -> None:
    ctx = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page = Watched(ctx.new_page())
    proc, url = start_serve(_config(tmp_path, hooks.url), "--speed", "20", timeout=BOUND_S)
    try:
        with httpx.Client(timeout=BOUND_S) as c:
            alerts = [_alert(n) for n in ("Alpha", "Bravo", "Delta")]
            assert c.post(f"{url}/api/v1/alertmanager", headers=AUTH,
                          json={"version": "4", "alerts": alerts}).status_code == 200
            assert hooks.wait(lambda got: len([p for p, _ in got if p == "/first"]) >= 3)
            delta, bravo = _link(hooks, "Delta", url), _link(hooks, "Bravo", url)

            p = page.page
            def told() -> str | None:  # the fake has the request before the server records its answer
                p.goto(delta)  # the incident page: what fires, since when, the runbook, who was told
                return p.inner_text("#told") if p.locator("#told").count() else None

            told_text = wait_until("the incident page naming who was told", told, timeout=BOUND_S)
            assert p.inner_text("h1").startswith("P0") and "Delta" in p.inner_text("h1")
            assert p.inner_text("#since").startswith("firing since")
            assert "restart ranker (Delta)" in p.inner_text("#runbook")
            assert "first (sent, step 1)" in told_text
            _fits(p)
            p.tap("#ack")  # one tap, no token typed
            p.wait_for_selector("#msg", timeout=TIMEOUT_MS)
            p.wait_for_selector("#acked", timeout=TIMEOUT_MS)
            assert p.inner_text("#msg").startswith("Acknowledged")
            assert "acknowledged by link" in p.inner_text("#acked")
            page.shot("incident-phone", full=False)
            # the acknowledgement on the channel that carried the page: a follow-up message
            assert hooks.wait(lambda got: any(
                q == "/first" and b["groupLabels"]["alertname"] == "Delta"
                and "Acknowledged by link: one-click link" in b.get("notes", []) for q, b in got))

            p.goto(bravo)  # Escalate now, then Resolve by silence
            p.tap("#escalate")
            p.wait_for_selector("#msg", timeout=TIMEOUT_MS)
            assert p.inner_text("#msg") == "Escalated: step 2 sent.", p.inner_text("#msg")
            assert hooks.wait(lambda got: any(b["groupLabels"]["alertname"] == "Bravo"
                                              for q, b in got if q == "/second"))
            p.tap("#silence-1h")
            p.wait_for_selector("text=Silenced for 1h", timeout=TIMEOUT_MS)
            silences = c.get(f"{url}/api/v2/silences", headers=AUTH).json()
            assert [s["createdBy"] for s in silences] == ["incident link"]
            assert {"name": "alertname", "value": "Bravo", "isRegex": False, "isEqual": True} in \
                silences[0]["matchers"]

            # Alpha (untouched) gets step 2 when it is due; Delta, acknowledged, never does
            assert hooks.wait(lambda got: any(b["groupLabels"]["alertname"] == "Alpha"
                                              for q, b in got if q == "/second"))
            # escalation steps only: once step 2 has reached 'second', a repeat of Alpha's group
            # (group_interval 10s: 0.5 s real at 20x) may follow it there without a step (seen once)
            second = hooks.steps("/second")
            assert sorted({s for s in second if s[1]}) == [("Alpha", 2), ("Bravo", 2)], second
            assert {name for name, _ in second} == {"Alpha", "Bravo"}, second  # Delta never

            assert c.post(f"{url}/api/v1/alertmanager", headers=AUTH, json={
                "version": "4", "alerts": [_alert("Delta", "resolved")]}).status_code == 200
            assert hooks.wait(lambda got: any(b["status"] == "resolved" for _, b in got))  # the episode ended
            gone = p.goto(delta)  # the same link after its episode ended
            assert gone is not None and gone.status == 403
            assert "episode is over" in p.inner_text("#msg")
            forged = c.post(delta.replace("sig=", "sig=0"), headers={"Origin": "https://evil.example"})
            assert forged.status_code == 403 and "another site" in forged.text
        assert [x for x in page.take() if "403" not in x] == []
    finally:
        ctx.close()
        err = _stop(proc)
    assert "Traceback" not in err, err
