"""The dashboard's routes through Starlette's TestClient: the page, its files, the JSON views."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from inferwatch.alerting import AlertsHandle, Pipeline, RecordingNotifier, Silence
from inferwatch.config import parse_config
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import Server, build_components, create_app
from inferwatch.server.web._dashboard import STATIC_DIR, dashboard_routes
from inferwatch.store import MemoryStore

CONFIG = """
storage: {type: memory}
rules:
  default_pack: false
  rules:
    - {name: Down, dimension: service, tier: P0, signal: {type: metric, metric: up}, comparison: "==",
       threshold: 0}
alerting: {route: {receiver: terminal, group_wait: 0s}}
"""


@pytest.fixture
def app() -> Iterator[tuple[TestClient, Server, Pipeline]]:
    clock = SimulatedClock(10_000.0)
    store = MemoryStore()
    store.append([Sample(Labels.of("up", job="demo", instance="h:1"), t, 0.0) for t in (9_940.0, 9_970.0)])
    cfg = parse_config(CONFIG)
    rec = RecordingNotifier("terminal")
    pipeline = Pipeline(cfg.alerting, clock=clock, notifiers={"terminal": rec}, actions=[])
    server = Server(build_components(cfg, clock=clock, store=store, sink=pipeline), clock=clock)
    server.tick(clock.now())
    with TestClient(create_app(server, extra_routes=dashboard_routes(server, AlertsHandle(pipeline)))) as c:
        yield c, server, pipeline
    server.stop()


def _data(c: TestClient, path: str, **params: str) -> Any:
    res = c.get(path, params=params)
    assert res.status_code == 200, res.text
    return res.json()["data"]


def test_the_page_is_served_with_a_strict_content_security_policy(app: Any) -> None:
    c, _, _ = app
    res = c.get("/")
    assert res.status_code == 200 and "<title>inferwatch</title>" in res.text
    csp = res.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert res.headers["x-frame-options"] == "DENY"


def test_every_file_the_page_names_is_served(app: Any) -> None:
    # every script, style and module import resolves (no CDN: all from the package)
    c, _, _ = app
    html = c.get("/").text
    names = re.findall(r'(?:src|href)="(dashboard/[^"]+)"', html)
    for js in (STATIC_DIR / "js").glob("*.js"):
        found = re.findall(r'from "\./([\w.]+)"|import\("\./([\w.]+)"\)', js.read_text())
        names += [f"dashboard/js/{name}" for pair in found for name in pair if name]
    assert len(set(names)) >= 10
    for name in set(names):
        assert c.get("/" + name).status_code == 200, name
    assert (STATIC_DIR / "vendor" / "uPlot.LICENSE").read_text().startswith("The MIT License")


def test_page_weight_before_data_is_under_300_kb() -> None:
    total = sum(p.stat().st_size for p in STATIC_DIR.rglob("*")
                if p.suffix in (".html", ".js", ".css", ".json"))
    assert total < 300_000, total


def _blocks(html: str) -> dict[str, str]:
    """Every <script> of the page: id (or src, or "inline") -> its text."""
    out = {}
    for attrs, text in re.findall(r"<script([^>]*)>(.*?)</script>", html, flags=re.S):
        key = re.search(r'id="([^"]+)"', attrs) or re.search(r'src="([^"]+)"', attrs)
        out[key.group(1) if key else "inline"] = text
    return out


def test_the_page_carries_what_the_overview_asks_first_and_only_its_own_inline_script(app: Any) -> None:
    c, server, _ = app
    server.components.store.append([Sample(Labels.of("inferwatch_requests_total", service=s), 9_990.0, 1.0)
                                    for s in ("ranker", "search")])
    res = c.get("/")
    assert res.headers["cache-control"] == "no-store"  # the server's time is in it
    blocks = _blocks(res.text)
    boot = json.loads(blocks["boot"])
    assert boot["now"] == server.clock.now() and boot["services"] == ["ranker", "search"]
    assert boot["rules"] == [{"name": "Down", "query": "up == 0", "labels": boot["rules"][0]["labels"]}]
    assert boot["rules"][0]["labels"]["tier"] == "P0"
    assert boot["packs"] == []  # no engine pack selected: the overview shows no engine section
    spec = json.loads(blocks["overview-spec"])
    assert spec == json.loads((STATIC_DIR / "overview.json").read_text())
    # the one inline script is early.js, allowed by its hash and nothing else: no 'unsafe-inline'
    assert blocks["inline"] == (STATIC_DIR / "js" / "early.js").read_text()
    digest = base64.b64encode(hashlib.sha256(blocks["inline"].encode()).digest()).decode()
    csp = res.headers["content-security-policy"]
    assert f"script-src 'self' 'sha256-{digest}';" in csp and "unsafe" not in csp.split("style-src")[0]
    # the styles are in the page: nothing to fetch before the first paint
    assert "<style>" in res.text and "rel=\"stylesheet\"" not in res.text


def test_a_label_value_cannot_close_the_boot_block(app: Any) -> None:
    c, server, _ = app
    evil = "x</script><script>alert(1)</script>"
    server.components.store.append([Sample(Labels.of("inferwatch_requests_total", service=evil),
                                           9_990.0, 1.0)])
    html = c.get("/").text
    assert "alert(1)</script>" not in html
    assert json.loads(_blocks(html)["boot"])["services"] == [evil]


def test_versioned_files_are_cached_for_good_and_the_plain_ones_revalidated(app: Any) -> None:
    c, _, _ = app
    html = c.get("/").text
    [app_js] = re.findall(r'src="(dashboard/v[0-9a-f]{12}/js/app\.js)"', html)
    res = c.get("/" + app_js)
    assert res.status_code == 200 and "immutable" in res.headers["cache-control"]
    plain = c.get("/dashboard/js/app.js")
    assert plain.text == res.text and plain.headers["cache-control"] == "no-cache"
    again = c.get("/dashboard/js/app.js", headers={"if-none-match": plain.headers["etag"]})
    assert again.status_code == 304
    # another version is not this one: not found, never cached for good under a wrong name
    assert c.get("/dashboard/v000000000000/js/app.js").status_code == 404


def test_alerts_view_says_which_silence_mutes_an_alert(app: Any) -> None:
    c, server, pipeline = app
    [alert] = _data(c, "/api/v1/dashboard/alerts")
    # rule: Down fires at once (no `for`), tier P0, with its PromQL and no mute
    assert alert["labels"]["tier"] == "P0" and alert["state"] == "firing"
    assert alert["query"] == "up == 0" and alert["silencedBy"] == [] and alert["inhibited"] is False
    now = server.clock.now()
    s = pipeline.silences.add(Silence.new(['alertname="Down"'], now, now + 3600, "ops", "test"), now)
    assert _data(c, "/api/v1/dashboard/alerts")[0]["silencedBy"] == [s.id]
    pipeline.silences.expire(s.id, now)
    assert _data(c, "/api/v1/dashboard/alerts")[0]["silencedBy"] == []


def test_timeline_lists_the_firing_alert_and_rejects_a_bad_window(app: Any) -> None:
    c, _, _ = app
    events = _data(c, "/api/v1/dashboard/timeline", since="1h")
    assert (events[0]["kind"], events[0]["alertname"]) == ("firing", "Down")
    # group_wait 0s: the terminal receiver was told at once, recorded as a notification with its own kind
    told = [(e["kind"], e["type"], e["receiver"]) for e in events[1:]]
    assert told == [("notification", "alerts", "terminal")]
    for bad in ("soon", "30d", "0s"):
        res = c.get("/api/v1/dashboard/timeline", params={"since": bad})
        assert res.status_code == 400 and "since" in res.json()["error"]


def test_diagnose_runs_the_gpu_playbook_on_the_store(app: Any) -> None:
    c, _, _ = app
    d = _data(c, "/api/v1/dashboard/diagnose/gpu", since="30m")
    assert d["status"] == "not_enough_data" and any("DCGM_FI_DEV_GPU_UTIL" in m for m in d["missing"])


def test_without_a_pipeline_the_views_are_empty() -> None:
    clock = SimulatedClock(0.0)
    server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock), clock=clock)
    with TestClient(Starlette(routes=dashboard_routes(server, None))) as c:
        assert _data(c, "/api/v1/dashboard/timeline") == []
        assert _data(c, "/api/v1/dashboard/digests") == []
        assert _data(c, "/api/v1/dashboard/drift") == []
    server.stop()


def test_diagnose_ranks_the_recorded_cause_first() -> None:
    from diagnose import scenario as sc

    end = 1_800_000.0
    store, _ = sc.record(sc.cpu_fallback, end=end)
    clock = SimulatedClock(end)
    server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock, store=store),
                    clock=clock)
    with TestClient(Starlette(routes=dashboard_routes(server, None))) as c:
        d = _data(c, "/api/v1/dashboard/diagnose/gpu", service="ranker", since="30m")
    server.stop()
    assert d["status"] == "diagnosed" and "90% → 30%" in d["summary"]
    top = d["causes"][0]
    assert top["cause"] == "cpu_fallback" and top["evidence"] and top["next_steps"]
